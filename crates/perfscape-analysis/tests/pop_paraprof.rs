//! POP's efficiency metrics and the time per category on the np64 stencil run, against a
//! computation written here from ParaProf's per-thread values (`oracle/paraprof.csv`): per
//! thread, the exclusive values of the flat `MPI_*` events are the time the default rules
//! count as not useful, every other flat event's exclusive value is useful, and the inclusive
//! value of `.TAU application` is the thread's runtime (POP Centre of Excellence, "POP
//! Standard Metrics for Parallel Performance Analysis": load balance = mean(useful) /
//! max(useful), communication efficiency = max(useful) / runtime, parallel efficiency = their
//! product).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use perfscape_analysis::categories::{OTHER, RuleSet, categorize};
use perfscape_model::{MetricId, ThreadId};
use std::collections::HashMap;

const RUN: &str = "tau-real/mpi-stencil-np64-callpath-commmatrix";

struct Oracle {
    /// Per thread: (useful, not useful, I/O group, other, runtime).
    threads: HashMap<ThreadId, [f64; 5]>,
}

fn oracle() -> Oracle {
    let text = std::fs::read_to_string(common::corpus().join(RUN).join("oracle/paraprof.csv")).unwrap();
    let intervals = text.split("Node\tContext\tThread\tUser Event").next().unwrap();
    let mut threads: HashMap<ThreadId, [f64; 5]> = HashMap::new();
    for line in intervals.lines().skip(1) {
        let c: Vec<&str> = line.split('\t').collect();
        if c.len() < 9 || c[3].is_empty() || c[3].contains("=>") {
            continue;
        }
        let id = ThreadId::new(
            c[0].parse().unwrap(),
            c[1].parse().unwrap(),
            c[2].parse().unwrap(),
        );
        let (incl, excl): (f64, f64) = (c[6].parse().unwrap(), c[7].parse().unwrap());
        let v = threads.entry(id).or_default();
        if c[3].starts_with("MPI_") {
            v[1] += excl;
        } else {
            v[0] += excl;
            if c[8].split(" | ").any(|g| g == "TAU_IO") {
                v[2] += excl;
            } else {
                v[3] += excl;
            }
        }
        if c[3] == ".TAU application" {
            v[4] = incl;
        }
    }
    Oracle { threads }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn pop_metrics_equal_a_computation_from_paraprof_csv() {
    let p = common::load(RUN);
    let o = oracle();
    assert_eq!(o.threads.len(), 64);
    let c = categorize(&p, MetricId(0), &RuleSet::defaults()).unwrap();
    let pop = c.pop();

    let useful: Vec<f64> = o.threads.values().map(|v| v[0]).collect();
    let max_useful = useful.iter().copied().fold(0.0, f64::max);
    let mean_useful = useful.iter().sum::<f64>() / useful.len() as f64;
    let runtime = o.threads.values().map(|v| v[4]).fold(0.0, f64::max);
    let lb = mean_useful / max_useful;
    let comm = max_useful / runtime;
    assert!(
        close(pop.max_useful, max_useful),
        "{} {}",
        pop.max_useful,
        max_useful
    );
    assert!(
        close(pop.mean_useful, mean_useful),
        "{} {}",
        pop.mean_useful,
        mean_useful
    );
    assert!(close(pop.runtime, runtime), "{} {}", pop.runtime, runtime);
    assert!(close(pop.load_balance, lb), "{} {lb}", pop.load_balance);
    assert!(
        close(pop.communication_efficiency, comm),
        "{} {comm}",
        pop.communication_efficiency
    );
    assert!(close(pop.parallel_efficiency, lb * comm));
    // The run is dominated by MPI (MPI_Init alone is 2.4 s of 3.6 s): far from efficient.
    assert!(pop.parallel_efficiency < 0.5, "{pop:?}");

    // Which categories were counted: every MPI category is not useful, I/O and other are.
    assert!(pop.useful_categories.contains(&"I/O".to_string()), "{pop:?}");
    assert!(pop.useful_categories.contains(&OTHER.to_string()));
    for name in &pop.not_useful_categories {
        assert!(name.starts_with("MPI"), "{name}");
    }
    for name in [
        "MPI point-to-point",
        "MPI wait",
        "MPI collective",
        "MPI synchronization",
        "MPI setup",
    ] {
        assert!(
            pop.not_useful_categories.contains(&name.to_string()),
            "{name}: {pop:?}"
        );
    }
}

#[test]
fn time_per_category_keeps_uncovered_time_and_adds_up() {
    let p = common::load(RUN);
    let o = oracle();
    let c = categorize(&p, MetricId(0), &RuleSet::defaults()).unwrap();
    let col = |name: &str| c.categories.iter().position(|d| d.name == name).unwrap();
    let (io, other) = (col("I/O"), col(OTHER));
    let useful = c.useful();
    for (id, v) in &o.threads {
        let t = p.thread_index(*id).unwrap();
        let row = c.thread(t);
        assert!(close(row[io], v[2]), "{id:?} I/O {} {}", row[io], v[2]);
        assert!(close(row[other], v[3]), "{id:?} other {} {}", row[other], v[3]);
        assert!(close(useful[t.index()], v[0]));
        // Nothing dropped: the categories add up to all flat exclusive time.
        assert!(close(row.iter().sum::<f64>(), v[0] + v[1]));
    }
    // Run and process sums.
    let run = c.run();
    let all: f64 = o.threads.values().map(|v| v[0] + v[1]).sum();
    assert!(close(run.iter().sum::<f64>(), all));
    let by_process = c.by_process(&p);
    assert_eq!(by_process.len(), 64);
    for (node, times) in &by_process {
        let v = o.threads[&ThreadId::new(*node, 0, 0)];
        assert!(close(times.iter().sum::<f64>(), v[0] + v[1]));
    }
    // Every callpath event has its routine's category.
    let waitall = p.event_by_name("MPI_Waitall()").unwrap();
    let path = p.event_by_name("main int (int, char **) => timestep_loop => halo_exchange void (double *, int, int, int) => MPI_Waitall()");
    if let Some(path) = path {
        assert_eq!(c.event_category[path.index()], c.event_category[waitall.index()]);
    }
    assert_eq!(
        c.categories[c.event_category[waitall.index()] as usize].name,
        "MPI wait"
    );
}
