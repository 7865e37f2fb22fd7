//! `perfscape categories` on the np64 stencil run: the POP metrics of its JSON against a
//! computation from ParaProf's per-thread values (`oracle/paraprof.csv`: flat `MPI_*` events'
//! exclusive time is not useful, `.TAU application`'s inclusive value is a thread's runtime),
//! the CSV's cells adding up to the run's flat exclusive time, a user's rules, and a bad rule
//! file named by line.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{corpus, perfscape, stderr, stdout};

const RUN: &str = "tau-real/mpi-stencil-np64-callpath-commmatrix";

/// Per thread (useful, not useful, runtime) from `paraprof.csv`.
fn oracle() -> Vec<(f64, f64, f64)> {
    let text = std::fs::read_to_string(corpus().join(RUN).join("oracle/paraprof.csv")).unwrap();
    let intervals = text.split("Node\tContext\tThread\tUser Event").next().unwrap();
    let mut per: std::collections::BTreeMap<String, (f64, f64, f64)> = Default::default();
    for line in intervals.lines().skip(1) {
        let c: Vec<&str> = line.split('\t').collect();
        if c.len() < 9 || c[3].is_empty() || c[3].contains("=>") {
            continue;
        }
        let v = per.entry(format!("{},{},{}", c[0], c[1], c[2])).or_default();
        let excl: f64 = c[7].parse().unwrap();
        if c[3].starts_with("MPI_") {
            v.1 += excl;
        } else {
            v.0 += excl;
        }
        if c[3] == ".TAU application" {
            v.2 = c[6].parse().unwrap();
        }
    }
    per.into_values().collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn json_pop_metrics_equal_paraprof_and_name_the_useful_categories() {
    let run = corpus().join(RUN);
    let o = perfscape(&[
        "categories",
        run.to_str().unwrap(),
        "--by",
        "process",
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let threads = oracle();
    let useful: Vec<f64> = threads.iter().map(|t| t.0).collect();
    let max = useful.iter().copied().fold(0.0, f64::max);
    let mean = useful.iter().sum::<f64>() / useful.len() as f64;
    let runtime = threads.iter().map(|t| t.2).fold(0.0, f64::max);
    let pop = &doc["pop"];
    let f = |k: &str| pop[k].as_f64().unwrap();
    assert!(close(f("load_balance"), mean / max), "{pop}");
    assert!(close(f("communication_efficiency"), max / runtime), "{pop}");
    assert!(close(f("parallel_efficiency"), mean / runtime), "{pop}");
    let useful_names: Vec<&str> = pop["useful_categories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(useful_names, ["I/O", "other"]);
    assert_eq!(doc["rows"].as_array().unwrap().len(), 64);
    assert_eq!(doc["unit"], "µs");
}

#[test]
fn csv_cells_add_up_to_all_flat_exclusive_time() {
    let run = corpus().join(RUN);
    let o = perfscape(&["categories", run.to_str().unwrap(), "--format", "csv"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let mut lines = text.lines();
    assert_eq!(lines.next().unwrap(), "of,category,class,useful,value,percent");
    let mut sum = 0.0;
    let mut percent = 0.0;
    for l in lines {
        let c: Vec<&str> = l.split(',').collect();
        assert_eq!(c[0], "run");
        sum += c[4].parse::<f64>().unwrap();
        percent += c[5].parse::<f64>().unwrap();
    }
    let all: f64 = oracle().iter().map(|t| t.0 + t.1).sum();
    assert!(close(sum, all), "{sum} {all}");
    assert!((percent - 100.0).abs() < 1e-9);
    // The table names the POP metrics and the categories counted as useful.
    let o = perfscape(&["categories", run.to_str().unwrap()]);
    let t = stdout(&o);
    assert!(
        t.contains("Load balance") && t.contains("Counted as useful: I/O, other"),
        "{t}"
    );
}

#[test]
fn user_rules_come_first_and_a_bad_file_is_named_by_line() {
    let dir = tempfile::tempdir().unwrap();
    let run = corpus().join(RUN);
    let good = dir.path().join("mine.toml");
    std::fs::write(
        &good,
        "[[category]]\nname = \"halo\"\nclass = \"communication\"\n\n[[rule]]\ncategory = \"halo\"\nname = \"halo_exchange*\"\n",
    )
    .unwrap();
    let o = perfscape(&[
        "categories",
        run.to_str().unwrap(),
        "--rules",
        good.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let not_useful = doc["pop"]["not_useful_categories"].as_array().unwrap();
    assert!(not_useful.iter().any(|v| v == "halo"), "{doc}");

    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "[[rule]]\ncategory = \"I/O\"\nnmae = \"x\"\n").unwrap();
    let o = perfscape(&[
        "categories",
        run.to_str().unwrap(),
        "--rules",
        bad.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(
        e.contains(&format!("{}:", bad.display())) && e.contains("expected"),
        "{e}"
    );
}
