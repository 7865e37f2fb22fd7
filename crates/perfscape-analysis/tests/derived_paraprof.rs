//! Derived metrics equal their expression computed from ParaProf's per-thread values.
//!
//! For the multi-metric runs of `../shared/corpus/tau-real`, each derived metric made by
//! `derive_metric` is compared, cell by cell (exclusive and inclusive of every (event, thread)),
//! with the same formula evaluated here in plain Rust on the columns of `oracle/paraprof.csv`
//! (`paraprof --text`). A cell whose denominator is 0 in ParaProf's table must have no value,
//! and the report must count exactly those. The statistics across threads of a derived metric
//! must be those of the table's values over the threads that have one.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use perfscape_analysis::{DerivedMetricSpec, derive_metric, event_stats};
use perfscape_model::{Combine, ThreadId, ValueKind};
use std::collections::HashMap;

/// A derived metric: its definition, and the same formula over a map from metric name to the
/// cell's value (None = no value).
struct Case {
    definition: &'static str,
    formula: fn(&HashMap<String, f64>) -> Option<f64>,
    combine: Combine,
}

fn ratio(a: f64, b: f64) -> Option<f64> {
    (b != 0.0).then(|| a / b)
}

fn cases(run: &str) -> Vec<Case> {
    let mut out = vec![
        Case {
            definition: "CPU share = CPU_TIME / TIME",
            formula: |v| ratio(v["CPU_TIME"], v["TIME"]),
            combine: Combine::Mean,
        },
        Case {
            definition: "Off CPU = TIME - CPU_TIME",
            formula: |v| Some(v["TIME"] - v["CPU_TIME"]),
            combine: Combine::Sum,
        },
        Case {
            definition: "Weighted s = (time + 2 * \"CPU_TIME\") / 1e6",
            formula: |v| Some((v["TIME"] + 2.0 * v["CPU_TIME"]) / 1e6),
            combine: Combine::Sum,
        },
    ];
    if run.contains("np8-multimetric") {
        out.push(Case {
            definition: "B per s = TAU_MPI_MESSAGE_SIZE / (TIME / 1e6)",
            formula: |v| ratio(v["TAU_MPI_MESSAGE_SIZE"], v["TIME"] / 1e6),
            combine: Combine::Mean,
        });
    }
    if run.contains("t4-multimetric") {
        out.push(Case {
            definition: "Clock per us = -LOGICAL_CLOCK / -TIME",
            formula: |v| ratio(-v["LOGICAL_CLOCK"], -v["TIME"]),
            combine: Combine::Mean,
        });
    }
    out
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs())
}

#[test]
fn derived_metrics_equal_the_formula_on_paraprof_csv() {
    let runs = [
        "tau-real/mpi-stencil-np8-multimetric",
        "tau-real/mpi-stencil-np128-callpath-multimetric",
        "tau-real/pthread-heat-t4-multimetric",
    ];
    let mut compared = 0;
    let mut without_value = 0;
    for run in runs {
        let measured = common::load(run);
        let text = std::fs::read_to_string(common::corpus().join(run).join("oracle/paraprof.csv")).unwrap();
        let intervals = text.split("Node\tContext\tThread\tUser Event").next().unwrap();
        let mut lines = intervals.lines();
        let header: Vec<&str> = lines.next().unwrap().split('\t').collect();
        let rows: Vec<Vec<&str>> = lines
            .filter(|l| !l.trim().is_empty())
            .map(|l| l.split('\t').collect())
            .collect();
        let cell = |row: &[&str], prefix: &str| -> HashMap<String, f64> {
            header
                .iter()
                .zip(row)
                .filter_map(|(h, v)| Some((h.strip_prefix(prefix)?.to_string(), v.parse().unwrap())))
                .collect()
        };
        for case in cases(run) {
            let spec: DerivedMetricSpec = case.definition.parse().unwrap();
            let (p, report) = derive_metric(measured.clone(), &spec).unwrap();
            let m = report.metric;
            assert_eq!(p.metric(m).combine, case.combine, "{run}: {spec}");
            let mut expected_no_value = 0;
            // Per event: the table's values of the threads that have one.
            let mut per_event: HashMap<&str, Vec<f64>> = HashMap::new();
            for row in &rows {
                let thread = ThreadId::new(
                    row[0].parse().unwrap(),
                    row[1].parse().unwrap(),
                    row[2].parse().unwrap(),
                );
                let t = p.thread_index(thread).unwrap();
                let e = p.event_by_name(row[3]).unwrap();
                for (kind, prefix) in [
                    (ValueKind::Exclusive, "Exclusive "),
                    (ValueKind::Inclusive, "Inclusive "),
                ] {
                    let theirs = (case.formula)(&cell(row, prefix));
                    let ours = p.value(e, t, kind, m).unwrap();
                    match theirs {
                        Some(v) => assert!(
                            close(ours, v),
                            "{run} {spec} {thread} `{}` {kind:?}: {ours} vs {v}",
                            row[3]
                        ),
                        None => {
                            assert!(
                                ours.is_nan(),
                                "{run} {spec} {thread} `{}` {kind:?}: {ours}, no value expected",
                                row[3]
                            );
                            expected_no_value += 1;
                        }
                    }
                    if kind == ValueKind::Exclusive
                        && let Some(v) = theirs
                    {
                        per_event.entry(row[3]).or_default().push(v);
                    }
                    compared += 1;
                }
            }
            assert_eq!(report.values, 2 * rows.len(), "{run}: {spec}");
            assert_eq!(report.no_value, expected_no_value, "{run}: {spec}");
            without_value += expected_no_value;
            for (name, values) in per_event {
                let s = event_stats(&p, p.event_by_name(name).unwrap(), m).exclusive;
                let sum: f64 = values.iter().sum();
                let mean = sum / values.len() as f64;
                let total = if case.combine == Combine::Sum { sum } else { mean };
                assert_eq!(s.threads, values.len(), "{run} {spec} `{name}`");
                assert!(
                    close(s.mean, mean) && close(s.total, total),
                    "{run} {spec} `{name}`: {s:?}"
                );
                let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                assert!(close(s.max, max), "{run} {spec} `{name}`");
            }
        }
    }
    // 27,896 values in all; cells without a value occur (timers of 0 µs).
    assert!(compared > 20_000, "only {compared} values compared");
    assert!(without_value > 0, "no division by zero was exercised");
}
