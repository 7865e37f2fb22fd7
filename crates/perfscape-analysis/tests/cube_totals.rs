//! Totals across threads of CUBE metrics that do not add up, against pycubexr.
//!
//! pycubexr's `MetricValues.value(cnode)` aggregates a metric over all locations: a sum, but the
//! minimum for `MINDOUBLE` and the maximum for `MAXDOUBLE` metrics. The tables
//! `perfscape-formats/tests/fixtures/cube/<name>.total.csv` hold it for every (metric, cnode) of
//! every corpus file (made by `make_reference.py` there). Here the analysis's own numbers — the
//! statistics' `total`, the call tree's `total` scope, the ranked table — must equal them, and
//! a metric that does not add up must have no percentage of the run and refuse `reduce=sum`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use perfscape_analysis::answers::{Scope, call_tree_table, events};
use perfscape_analysis::params::Values;
use perfscape_analysis::views::Reduce;
use perfscape_analysis::{TreeScope, ViewError, call_tree, event_stats, run_total};
use perfscape_formats::cube::{cnode_event_names, read_anchor};
use perfscape_formats::{OpenOptions, open};
use perfscape_model::{Combine, EventId, MetricId, Profile, ValueKind};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

fn corpus(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/corpus/cube")
        .join(rel)
}

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../perfscape-formats/tests/fixtures/cube")
        .join(rel)
}

/// `mine` equals pycubexr's `text` (printed with `repr`) to a few ulp.
fn close(mine: f64, text: &str) -> bool {
    let r: f64 = text.parse().unwrap();
    (mine - r).abs() <= 8.0 * f64::EPSILON * r.abs().max(mine.abs())
}

struct Run {
    profile: Profile,
    /// Event of each cnode id.
    event: HashMap<u32, EventId>,
}

fn load(file: &str) -> Run {
    let path = corpus(file);
    let profile = open(&path, &OpenOptions::default()).unwrap().profile;
    let anchor = read_anchor(&std::fs::read(&path).unwrap()).unwrap();
    let event = anchor
        .cnodes
        .iter()
        .zip(cnode_event_names(&anchor))
        .map(|(c, n)| (c.id, profile.event_by_name(&n).unwrap()))
        .collect();
    Run { profile, event }
}

/// Compares the analysis's totals over threads with `<name>.total.csv` for every metric and
/// cnode where every thread has the cnode (a location without it counts with CUBE's stored 0
/// in pycubexr's aggregate; perfscape leaves such a thread out, see `perfscape-formats`'s CUBE
/// test). Returns (totals compared, of them for minimum/maximum metrics).
fn compare(run: &Run, name: &str) -> (usize, usize) {
    let p = &run.profile;
    let text = std::fs::read_to_string(fixture(&format!("{name}.total.csv"))).unwrap();
    let (mut n, mut min_max) = (0, 0);
    let trees: HashMap<MetricId, HashMap<EventId, (f64, f64)>> = p
        .metric_ids()
        .map(|m| {
            let rows = call_tree(p, m, TreeScope::Total);
            (
                m,
                rows.into_iter()
                    .map(|r| (r.event, (r.exclusive, r.inclusive)))
                    .collect(),
            )
        })
        .collect();
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let m = p.metric_by_name(f[0]).unwrap();
        let e = run.event[&f[1].parse::<u32>().unwrap()];
        if p.interval(e).len() != p.threads().len() {
            continue;
        }
        let s = event_stats(p, e, m);
        let (tree_x, tree_i) = trees[&m][&e];
        for (kind, mine, tree, reference) in [
            (ValueKind::Exclusive, s.exclusive.total, tree_x, f[2]),
            (ValueKind::Inclusive, s.inclusive.total, tree_i, f[3]),
        ] {
            assert!(
                close(mine, reference),
                "{name} {} `{}` {kind:?} total over threads: perfscape {mine}, pycubexr {reference}",
                f[0],
                p.event_name(e)
            );
            assert_eq!(tree, mine, "{name} {} call tree total", f[0]);
            n += 1;
            min_max += usize::from(p.metric(m).combine != Combine::Sum);
        }
    }
    (n, min_max)
}

#[test]
fn totals_over_threads_equal_pycubexr_for_every_metric() {
    let mut files = vec![
        (
            "pycubexr-kripke-p8/profile.cubex".to_string(),
            "kripke-p8".to_string(),
        ),
        (
            "pycubexr-bt-mz-p2/cube4.8_with_checksum_bug.cubex".into(),
            "bt-mz-p2".into(),
        ),
        (
            "pycubexr-values-example/cube-values_example.cubex".into(),
            "values-example".into(),
        ),
        ("pycubexr-time-p4/profile.cubex".into(), "time-p4".into()),
    ];
    for x in [1, 2000] {
        files.push((
            format!("extrap-mm-single-parameter-cubeset/mm.x{x}y1z1.r1/profile.cubex"),
            format!("extrap-mm-x{x}"),
        ));
    }
    let (mut n, mut min_max) = (0, 0);
    for (file, name) in &files {
        let (a, b) = compare(&load(file), name);
        n += a;
        min_max += b;
    }
    eprintln!("{n} totals over threads compared, {min_max} of minimum/maximum metrics");
    assert!(
        n > 1000 && min_max > 300,
        "{n} totals, {min_max} of minimum/maximum metrics"
    );
}

/// The numbers of issue 18 on pycubexr-kripke-p8's `min_time`: the ranked table showed 35575.5%
/// for PARALLEL (a sum over 8 threads of per-thread minima, divided by the sum of the threads'
/// largest inclusive minima) and the call tree an inclusive value summed over threads.
#[test]
fn kripke_min_time_is_a_minimum_with_no_percentage() {
    let run = load("pycubexr-kripke-p8/profile.cubex");
    let p = &run.profile;
    let m = p.metric_by_name("min_time").unwrap();
    assert_eq!(p.metric(m).combine, Combine::Min);
    assert_eq!(p.metric(MetricId(0)).name, "time");
    assert_eq!(run_total(p, m), None);
    let values = Values::new(p.metrics(), Some(m.0), Some(ValueKind::Exclusive)).unwrap();
    let table = events(p, values, false);
    assert_eq!((table.combine, table.run_total), (Combine::Min, None));
    assert!(table.rows.iter().all(|r| r.percent.is_none()));
    // PARALLEL (cnode 0) first, its total the minimum over the 8 locations (pycubexr's value).
    let reference = std::fs::read_to_string(fixture("kripke-p8.total.csv")).unwrap();
    let want = |cnode: &str, col: usize| -> String {
        reference
            .lines()
            .find(|l| l.starts_with(&format!("min_time,{cnode},")))
            .unwrap()
            .split(',')
            .nth(col)
            .unwrap()
            .to_string()
    };
    assert_eq!(table.rows[0].name, "PARALLEL");
    assert!(close(table.rows[0].stats.total.unwrap(), &want("0", 2)));
    // The call tree: PARALLEL's inclusive minimum over threads, not 8 minima added up.
    let tree = call_tree_table(p, m, Scope::Total).unwrap();
    assert_eq!(
        (tree.nodes[0].name.as_str(), tree.combine),
        ("PARALLEL", Combine::Min)
    );
    assert!(close(tree.nodes[0].inclusive, &want("0", 3)));
    assert!(close(tree.nodes[0].exclusive, &want("0", 2)));
    // Time still adds up, with percentages.
    let time = Values::new(p.metrics(), Some(0), None).unwrap();
    let t = events(p, time, false);
    assert!(t.run_total.is_some() && t.rows.iter().all(|r| r.percent.is_some()));
    // Summing minima over a bin is refused, naming the metric and the way out.
    let e = values.check_reduce(p.metrics(), Reduce::Sum).unwrap_err();
    assert!(
        matches!(&e, ViewError::Invalid(msg) if msg.contains("`min_time`") && msg.contains("min") && msg.contains("reduce=max")),
        "{e}"
    );
    assert_eq!(values.check_reduce(p.metrics(), Reduce::Max), Ok(Reduce::Max));
    assert_eq!(time.check_reduce(p.metrics(), Reduce::Sum), Ok(Reduce::Sum));
    let calls = Values::new(p.metrics(), Some(m.0), Some(ValueKind::Calls)).unwrap();
    assert_eq!(calls.check_reduce(p.metrics(), Reduce::Sum), Ok(Reduce::Sum));
}
