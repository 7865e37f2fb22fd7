//! Properties of matching and differences on random runs (callpath trees over a small set of
//! routine names, some with source locations, [SAMPLE] lines and throttled timers; random
//! threads and values): a run matches itself wholly and exactly with zero differences; the
//! difference of B and A is minus that of A and B; every event of either run is in a pair or in
//! a run's "only" list, once; per thread, the differences add up to the per-event difference.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use perfscape_analysis::compare::diff::{Change, DiffOptions, DiffSort, Normalize, diff_runs, thread_diff};
use perfscape_analysis::compare::matching::{MatchNote, match_runs};
use perfscape_model::{EventId, Metric, MetricId, Profile, ProfileBuilder, ThreadData, ThreadId, ValueKind};
use proptest::prelude::*;
use std::collections::BTreeSet;

const FRAMES: [&str; 8] = [
    "main",
    "main [{m.c} {3,1}]",
    "solve",
    "solve [THROTTLED]",
    "MPI_Send()",
    "[SAMPLE] k [{k.c} {10}]",
    "[SAMPLE] k [{k.c} {11}]",
    "io",
];

/// Per thread (its node), callpaths as indices into FRAMES (depth 1-3), each with a value.
type Threads = Vec<(u32, Vec<(Vec<usize>, u32)>)>;

/// A run of `threads` (every prefix of a callpath is an event too).
fn run(threads: &Threads) -> Profile {
    let mut b = ProfileBuilder::new(vec![Metric::tau("TIME")]);
    for (node, events) in threads {
        let mut d = ThreadData::new(1);
        let mut seen = BTreeSet::new();
        for (path, v) in events {
            // Every prefix of a callpath is an event too (its parent node).
            for len in 1..=path.len() {
                let name: Vec<&str> = path[..len].iter().map(|&i| FRAMES[i]).collect();
                let name = name.join(" => ");
                if seen.insert(name.clone()) {
                    let v = f64::from(*v) * len as f64;
                    d.push_timer(&name, "TAU_DEFAULT", 1.0, 0.0, &[v], &[v]).unwrap();
                }
            }
        }
        b.add_thread(ThreadId::new(*node, 0, 0), d).unwrap();
    }
    b.finish().0
}

fn threads() -> impl Strategy<Value = Threads> {
    let event = (proptest::collection::vec(0..FRAMES.len(), 1..=3), 1u32..1000);
    proptest::collection::btree_map(0u32..6, proptest::collection::vec(event, 1..8), 1..4)
        .prop_map(|m| m.into_iter().collect())
}

fn opts(normalize: Normalize) -> DiffOptions {
    DiffOptions {
        metric: MetricId(0),
        kind: ValueKind::Exclusive,
        normalize,
        include_callpaths: true,
        sort: DiffSort::AbsDelta,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn a_run_matches_itself_exactly_with_zero_differences(t in threads()) {
        let a = run(&t);
        let m = match_runs(&a, &a).unwrap();
        prop_assert_eq!(m.events.len(), a.events().len());
        prop_assert!(m.events.iter().all(|p| p.a == p.b && p.note == MatchNote::Exact));
        prop_assert!(m.events_only_a.is_empty() && m.events_only_b.is_empty() && m.same_threads());
        let d = diff_runs(&a, &a, &m, opts(Normalize::Total)).unwrap();
        prop_assert!(d.rows.iter().all(|r| r.delta == 0.0 && r.change == Change::Matched));
    }

    #[test]
    fn nothing_is_dropped_and_b_minus_a_is_minus_a_minus_b(ta in threads(), tb in threads()) {
        let (a, b) = (run(&ta), run(&tb));
        let Ok(ab) = match_runs(&a, &b) else {
            // Only refused when no event is shared.
            let shared = a.event_ids().any(|e| {
                let n = a.event_name(e);
                b.event_ids().any(|f| b.event_name(f) == n)
            });
            prop_assert!(!shared, "refused although an event is in both runs");
            return Ok(());
        };
        let ba = match_runs(&b, &a).unwrap();
        // Every event once, in a pair or in its run's "only" list.
        let mut in_a: Vec<EventId> = ab.events.iter().map(|p| p.a).chain(ab.events_only_a.iter().copied()).collect();
        let mut in_b: Vec<EventId> = ab.events.iter().map(|p| p.b).chain(ab.events_only_b.iter().copied()).collect();
        in_a.sort();
        in_b.sort();
        prop_assert_eq!(in_a, a.event_ids().collect::<Vec<_>>());
        prop_assert_eq!(in_b, b.event_ids().collect::<Vec<_>>());
        // The same pairs both ways.
        let pairs = |m: &perfscape_analysis::compare::matching::RunMatch, flip: bool| {
            m.events.iter().map(|p| if flip { (p.b, p.a) } else { (p.a, p.b) }).collect::<BTreeSet<_>>()
        };
        prop_assert_eq!(pairs(&ab, false), pairs(&ba, true));
        for normalize in [Normalize::Total, Normalize::PerThread] {
            let d1 = diff_runs(&a, &b, &ab, opts(normalize)).unwrap();
            let d2 = diff_runs(&b, &a, &ba, opts(normalize)).unwrap();
            prop_assert_eq!(d1.rows.len(), d2.rows.len());
            for r in &d1.rows {
                let back = d2.rows.iter().find(|x| x.a == r.b && x.b == r.a).unwrap();
                prop_assert_eq!(r.delta, -back.delta);
                prop_assert_eq!((r.value_a, r.value_b), (back.value_b, back.value_a));
            }
        }
        // Per thread: the differences add up to the event's total difference.
        let d = diff_runs(&a, &b, &ab, opts(Normalize::Total)).unwrap();
        for p in &ab.events {
            let per = thread_diff(&a, &b, &ab, *p, (MetricId(0), MetricId(0)), ValueKind::Exclusive);
            let sum: f64 = per.iter().map(|t| t.delta).sum();
            let row = d.rows.iter().find(|r| r.a == Some(p.a)).unwrap();
            prop_assert!((sum - row.delta).abs() <= 1e-9 * row.value_a.abs().max(row.value_b.abs()).max(1.0));
        }
    }
}
