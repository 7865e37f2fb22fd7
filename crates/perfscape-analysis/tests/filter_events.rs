//! Event filters on a real callpath run: what is hidden is exactly what the rules say,
//! counted, and what is shown keeps its values and its callers.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use perfscape_analysis::{EventFilter, FilterError, event_stats, filter_events, run_total};
use perfscape_model::{EventId, MetricId, Profile, ValueKind};
use std::collections::BTreeSet;

const RUN: &str = "tau-real/mpi-stencil-np64-callpath-commmatrix";

fn names(p: &Profile) -> BTreeSet<String> {
    p.event_ids().map(|e| p.event_name(e)).collect()
}

fn has_group(p: &Profile, e: EventId, group: &str) -> bool {
    p.event(e).groups.iter().any(|g| p.group_name(*g) == group)
}

/// The names of `e` and every caller above it.
fn path(p: &Profile, e: EventId) -> Vec<EventId> {
    let mut out = vec![e];
    while let Some(x) = p.event(*out.last().unwrap()).parent() {
        out.push(x);
    }
    out
}

fn apply(p: &Profile, rules: &[&str]) -> (Profile, usize) {
    let f = EventFilter::parse(rules).unwrap();
    let (q, report) = filter_events(p.clone(), &f, MetricId(0)).unwrap();
    assert_eq!(report.events_before, p.events().len());
    assert_eq!(report.events_before - report.hidden, q.events().len());
    assert!(
        report
            .to_string()
            .contains(&format!("{} of {}", report.hidden, p.events().len()))
    );
    (q, report.hidden)
}

/// Every event shown keeps the values it had.
fn same_values(p: &Profile, q: &Profile) {
    for e in q.event_ids() {
        let name = q.event_name(e);
        let o = p.event_by_name(&name).unwrap();
        for kind in ValueKind::ALL {
            assert_eq!(
                q.interval(e).values(kind, MetricId(0)),
                p.interval(o).values(kind, MetricId(0)),
                "{name}"
            );
        }
        assert_eq!(q.interval(e).threads(), p.interval(o).threads());
        if let Some(parent) = q.event(e).parent() {
            assert_eq!(
                Some(p.event_by_name(&q.event_name(parent)).unwrap()),
                p.event(o).parent()
            );
        }
    }
}

#[test]
fn hiding_a_group_hides_its_events_and_their_subtrees() {
    let p = common::load(RUN);
    let (q, hidden) = apply(&p, &["!group=MPI"]);
    let expected: BTreeSet<String> = p
        .event_ids()
        .filter(|&e| !path(&p, e).iter().any(|&x| has_group(&p, x, "MPI")))
        .map(|e| p.event_name(e))
        .collect();
    assert!(hidden > 0 && hidden < p.events().len(), "{hidden}");
    assert_eq!(names(&q), expected);
    assert!(q.event_ids().all(|e| !q.event(e).leaf().starts_with("MPI_")));
    same_values(&p, &q);
    // The call tree is rebuilt over the events kept: each node under its caller.
    for e in q.event_ids() {
        if let Some(parent) = q.event(e).parent() {
            assert!(q.call_tree().children(parent).contains(&e), "{}", q.event_name(e));
        }
    }
}

#[test]
fn showing_names_keeps_their_callers() {
    let p = common::load(RUN);
    let (q, _) = apply(&p, &["name=MPI_Isend*", "name=MPI_Irecv*"]);
    let matching: Vec<EventId> = p
        .event_ids()
        .filter(|&e| {
            let leaf = p.event(e).leaf();
            leaf.starts_with("MPI_Isend") || leaf.starts_with("MPI_Irecv")
        })
        .collect();
    assert!(!matching.is_empty());
    let expected: BTreeSet<String> = matching
        .iter()
        .flat_map(|&e| path(&p, e))
        .map(|e| p.event_name(e))
        .collect();
    assert_eq!(names(&q), expected);
    same_values(&p, &q);
}

#[test]
fn a_threshold_hides_small_events_but_not_callers_of_large_ones() {
    let p = common::load(RUN);
    let total = run_total(&p, MetricId(0)).unwrap();
    let (q, hidden) = apply(&p, &["exclusive<2%"]);
    let large: Vec<EventId> = p
        .event_ids()
        .filter(|&e| event_stats(&p, e, MetricId(0)).exclusive.total >= 0.02 * total)
        .collect();
    let expected: BTreeSet<String> = large
        .iter()
        .flat_map(|&e| path(&p, e))
        .map(|e| p.event_name(e))
        .collect();
    assert_eq!(names(&q), expected);
    assert!(hidden > p.events().len() / 2, "{hidden}");
    same_values(&p, &q);
    // A threshold and a hiding rule together; 0% hides nothing.
    let (r, _) = apply(&p, &["inclusive<1%", "!name=MPI_*"]);
    assert!(r.event_ids().all(|e| !r.event(e).leaf().starts_with("MPI_")));
    assert_eq!(apply(&p, &["exclusive<0%"]).1, 0);
}

#[test]
fn bad_rules_are_refused_with_what_was_expected() {
    let err = |r: &str| EventFilter::parse(&[r]).unwrap_err();
    assert!(matches!(err("MPI"), FilterError::Syntax(_)));
    assert!(matches!(err("calls<3%"), FilterError::Syntax(_)));
    assert!(matches!(err("!exclusive<3%"), FilterError::Syntax(_)));
    assert!(matches!(err("exclusive<3"), FilterError::Syntax(_)));
    assert!(matches!(err("exclusive<150%"), FilterError::Percent(_)));
    assert!(matches!(err("exclusive<NaN%"), FilterError::Percent(_)));
    let e = err("name=a[b");
    assert!(matches!(e, FilterError::Pattern { position: 1, .. }), "{e:?}");
    assert!(e.to_string().contains("name=a[b"), "{e}");
    // A threshold on a metric without a run total.
    let p = common::load(RUN);
    let (d, report) = perfscape_analysis::derive_metric(p, &"ratio = TIME / TIME".parse().unwrap()).unwrap();
    let f = EventFilter::parse(&["exclusive<1%"]).unwrap();
    let e = filter_events(d, &f, report.metric).unwrap_err();
    assert!(e.to_string().contains("does not add up"), "{e}");
}

#[test]
fn a_thread_rule_keeps_the_threads_above_k_times_the_mean_with_all_their_values() {
    let p = common::load(RUN);
    // Each thread's whole value as ParaProf takes it: its largest inclusive value.
    let mut largest = vec![0.0f64; p.threads().len()];
    for e in p.event_ids() {
        let col = p.interval(e);
        for (t, v) in col.threads().iter().zip(col.inclusive(MetricId(0))) {
            largest[t.index()] = largest[t.index()].max(*v);
        }
    }
    let mean = largest.iter().sum::<f64>() / largest.len() as f64;
    let expected: Vec<_> = p
        .threads()
        .iter()
        .zip(&largest)
        .filter(|(_, v)| **v > 1.004 * mean)
        .map(|(t, _)| *t)
        .collect();
    assert!(
        !expected.is_empty() && expected.len() < p.threads().len(),
        "{}",
        expected.len()
    );
    let f = EventFilter::parse(&["threads>1.004x"]).unwrap();
    let (q, report) = filter_events(p.clone(), &f, MetricId(0)).unwrap();
    assert_eq!(q.threads(), expected.as_slice());
    assert_eq!((report.hidden, report.threads_before), (0, p.threads().len()));
    assert_eq!(report.threads_hidden, p.threads().len() - expected.len());
    assert!(
        report
            .to_string()
            .contains(&format!("{} of 64 threads hidden", report.threads_hidden)),
        "{report}"
    );
    // Every kept thread keeps every value of every event and user event.
    for e in p.event_ids() {
        let (a, b) = (p.interval(e), q.interval(e));
        let kept: Vec<usize> = (0..a.len())
            .filter(|&r| expected.contains(&p.thread(a.threads()[r])))
            .collect();
        assert_eq!(b.len(), kept.len(), "{}", p.event_name(e));
        for (i, &r) in kept.iter().enumerate() {
            assert_eq!(q.thread(b.threads()[i]), p.thread(a.threads()[r]));
            for kind in ValueKind::ALL {
                assert_eq!(b.values(kind, MetricId(0))[i], a.values(kind, MetricId(0))[r]);
            }
        }
    }
    for u in (0..p.atomic_events().len() as u32).map(perfscape_model::AtomicEventId) {
        let (a, b) = (p.atomic(u), q.atomic(u));
        let kept: Vec<_> = a
            .threads()
            .iter()
            .filter(|t| expected.contains(&p.thread(**t)))
            .collect();
        assert_eq!(b.threads().len(), kept.len());
    }
    // 0x keeps every thread with a value; a bad factor is refused.
    assert_eq!(
        filter_events(
            p.clone(),
            &EventFilter::parse(&["threads>0x"]).unwrap(),
            MetricId(0)
        )
        .unwrap()
        .1
        .threads_hidden,
        0
    );
    assert!(matches!(
        EventFilter::parse(&["threads>-1x"]).unwrap_err(),
        FilterError::Factor(_)
    ));
    assert!(matches!(
        EventFilter::parse(&["threads>2"]).unwrap_err(),
        FilterError::Syntax(_)
    ));
}
