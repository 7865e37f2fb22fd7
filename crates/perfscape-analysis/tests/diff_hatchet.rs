//! `diff_runs` and `thread_diff` equal Hatchet's `gf_b - gf_a` on pairs of real TAU runs.
//!
//! The fixtures `tests/fixtures/hatchet-diff/<pair>.csv` were made once by
//! `scripts/ref/hatchet_diff.py` (Hatchet 2026.2.0): per node of Hatchet's unified graph and
//! per rank, each run's `time` / `time (inc)` and their difference. Hatchet names a node by
//! its routines (source locations cut off, the leaf's line kept apart) and builds its graph
//! from each file's first timer plus the callpath timers; perfscape matches events by the same
//! routine names (a routine at another line is the same event, "source location differs"),
//! so Hatchet's nodes are grouped by callpath without the line before comparing. Hatchet fills
//! a (node, rank) missing in one run with 0, as perfscape does for added and removed events.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use perfscape_analysis::compare::diff::{Change, DiffOptions, DiffSort, Normalize, diff_runs, thread_diff};
use perfscape_analysis::compare::matching::{EventPair, MatchNote, match_runs};
mod common;
use common::{fixture, load};
use perfscape_model::event::routine_name;
use perfscape_model::{EventId, MetricId, Profile, ValueKind};
use std::collections::BTreeMap;

/// Hatchet's values of one callpath (all lines), summed over ranks, and per rank.
#[derive(Default, Debug)]
struct Node {
    in_a: bool,
    in_b: bool,
    sum: [f64; 6],
    per_rank: BTreeMap<u32, [f64; 2]>,
}

fn hatchet(pair: &str) -> BTreeMap<String, Node> {
    let path = fixture(&format!("hatchet-diff/{pair}.csv"));
    let mut out: BTreeMap<String, Node> = BTreeMap::new();
    for rec in csv::Reader::from_path(&path).unwrap().records() {
        let rec = rec.unwrap();
        let n = out.entry(rec[0].to_string()).or_default();
        n.in_a |= &rec[2] == "1";
        n.in_b |= &rec[3] == "1";
        let rank: u32 = rec[4].parse().unwrap();
        let v: Vec<f64> = (5..11).map(|i| rec[i].parse().unwrap()).collect();
        for (s, x) in n.sum.iter_mut().zip(&v) {
            *s += x;
        }
        let r = n.per_rank.entry(rank).or_default();
        r[0] += v[2];
        r[1] += v[5];
    }
    out
}

fn key(p: &Profile, e: EventId) -> String {
    p.event_name(e)
        .split(" => ")
        .map(routine_name)
        .collect::<Vec<_>>()
        .join(" => ")
}

/// A call-tree node in Hatchet's sense: a callpath event, or a root with children.
fn in_tree(p: &Profile, e: EventId) -> bool {
    p.event(e).is_callpath() || p.call_tree().roots().contains(&e)
}

fn close(x: f64, y: f64) -> bool {
    (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1.0)
}

/// Checks one pair; returns the number of nodes compared.
fn check(pair: &str, run_a: &str, run_b: &str) -> usize {
    let (a, b) = (load(run_a), load(run_b));
    let m = match_runs(&a, &b).unwrap();
    let theirs = hatchet(pair);
    for (kind, col) in [(ValueKind::Exclusive, 0), (ValueKind::Inclusive, 3)] {
        let opts = DiffOptions {
            metric: MetricId(0),
            kind,
            normalize: Normalize::Total,
            include_callpaths: true,
            sort: DiffSort::AbsDelta,
        };
        let d = diff_runs(&a, &b, &m, opts).unwrap();
        let mut ours = BTreeMap::new();
        for r in &d.rows {
            let (p, e) = match (r.a, r.b) {
                (Some(e), _) if in_tree(&a, e) => (&a, e),
                (_, Some(e)) if in_tree(&b, e) => (&b, e),
                _ => continue,
            };
            assert!(
                ours.insert(key(p, e), *r).is_none(),
                "{pair}: two rows for {}",
                key(p, e)
            );
        }
        assert_eq!(
            ours.keys().collect::<Vec<_>>(),
            theirs.keys().collect::<Vec<_>>(),
            "{pair}: call-tree nodes differ from Hatchet's"
        );
        for (k, h) in &theirs {
            let r = &ours[k];
            let what = format!("{pair} {kind:?} {k}");
            assert!(
                close(r.value_a, h.sum[col]),
                "{what}: A {} vs Hatchet {}",
                r.value_a,
                h.sum[col]
            );
            assert!(
                close(r.value_b, h.sum[col + 1]),
                "{what}: B {} vs {}",
                r.value_b,
                h.sum[col + 1]
            );
            assert!(
                close(r.delta, h.sum[col + 2]),
                "{what}: B-A {} vs {}",
                r.delta,
                h.sum[col + 2]
            );
            let change = match (h.in_a, h.in_b) {
                (true, true) => Change::Matched,
                (true, false) => Change::Removed,
                _ => Change::Added,
            };
            assert_eq!(r.change, change, "{what}");
            // Per rank: which ranks got slower.
            if let (Some(ea), Some(eb)) = (r.a, r.b) {
                let pair = EventPair {
                    a: ea,
                    b: eb,
                    note: MatchNote::Exact,
                };
                let per = thread_diff(&a, &b, &m, pair, (MetricId(0), MetricId(0)), kind);
                for t in &per {
                    let want = h.per_rank.get(&t.thread.node).map_or(0.0, |v| v[col / 3]);
                    assert!(
                        close(t.delta, want),
                        "{what} rank {}: {} vs {}",
                        t.thread.node,
                        t.delta,
                        want
                    );
                }
                assert_eq!(per.len(), h.per_rank.len(), "{what}: ranks");
            }
        }
    }
    theirs.len()
}

#[test]
fn diff_equals_hatchet_subtraction_on_strong_scaling_pairs() {
    let ss = "tau/taucmdr-mm-strong-scaling-1to8rank";
    let mut nodes = 0;
    for (pair, a, b) in [
        ("mm-np2-np4", "np2", "np4"),
        ("mm-np4-np4", "np4", "np4"),
        ("mm-np3-np8", "np3", "np8"),
    ] {
        nodes += check(pair, &format!("{ss}/{a}"), &format!("{ss}/{b}"));
    }
    assert_eq!(nodes, 33);
}

/// Where Hatchet is not a reference: a one-rank GraphFrame has no `rank` index level, so
/// `gf_np8 - gf_np1` subtracts rank 0 of np1 from EVERY rank of np8 (pandas broadcasting)
/// instead of filling the missing ranks with 0. The fixture keeps Hatchet's answer; this test
/// documents it: Hatchet's per-rank difference is each np8 rank minus np1's rank 0, while
/// perfscape's total difference is np8's total minus np1's.
#[test]
fn hatchet_broadcasts_a_one_rank_run_over_every_rank() {
    let ss = "tau/taucmdr-mm-strong-scaling-1to8rank";
    let (a, b) = (load(&format!("{ss}/np1")), load(&format!("{ss}/np8")));
    let m = match_runs(&a, &b).unwrap();
    let e = a.event_by_name(".TAU application").unwrap();
    let f = b.event_by_name(".TAU application").unwrap();
    let a0 = a
        .value(
            e,
            perfscape_model::ThreadIndex(0),
            ValueKind::Exclusive,
            MetricId(0),
        )
        .unwrap();
    let h = &hatchet("mm-np1-np8")[".TAU application"];
    for t in 0..8u32 {
        let bt = b
            .value(
                f,
                perfscape_model::ThreadIndex(t),
                ValueKind::Exclusive,
                MetricId(0),
            )
            .unwrap();
        assert_eq!(h.per_rank[&t][0], bt - a0, "rank {t}");
    }
    let opts = DiffOptions {
        metric: MetricId(0),
        kind: ValueKind::Exclusive,
        normalize: Normalize::Total,
        include_callpaths: false,
        sort: DiffSort::AbsDelta,
    };
    let d = diff_runs(&a, &b, &m, opts).unwrap();
    let r = d.rows.iter().find(|r| r.a == Some(e)).unwrap();
    let total_b: f64 = (0..8u32)
        .map(|t| {
            b.value(
                f,
                perfscape_model::ThreadIndex(t),
                ValueKind::Exclusive,
                MetricId(0),
            )
            .unwrap()
        })
        .sum();
    assert_eq!(r.delta, total_b - a0);
    assert_ne!(
        r.delta, h.sum[2],
        "Hatchet's broadcast sum differs from the runs' difference"
    );
}

#[test]
fn diff_of_mismatched_trees_equals_hatchet_with_added_nodes() {
    let nodes = check(
        "stencil-np4-profile-compinst",
        "tau-real/mpi-stencil-np4-profile",
        "tau-real/mpi-stencil-np4-compinst-callpath",
    );
    // The flat profile's Hatchet graph is its root only: every other node is added.
    let theirs = hatchet("stencil-np4-profile-compinst");
    assert_eq!(theirs.values().filter(|n| n.in_a).count(), 1);
    assert_eq!(theirs.values().filter(|n| !n.in_a).count(), nodes - 1);
    assert!(nodes >= 20, "{nodes}");
}

/// The flat events of the same pair: the compiler-instrumented timers (`main [{..} {69,0}]`, ...)
/// are added in B, every timer of A is in B, exactly.
#[test]
fn flat_events_of_the_mismatched_pair_are_matched_or_added() {
    let a = load("tau-real/mpi-stencil-np4-profile");
    let b = load("tau-real/mpi-stencil-np4-compinst-callpath");
    let m = match_runs(&a, &b).unwrap();
    assert!(m.same_threads());
    assert!(m.events_only_a.is_empty());
    assert!(m.events.iter().all(|p| p.note == MatchNote::Exact));
    let added: Vec<String> = m
        .events_only_b
        .iter()
        .filter(|&&e| !b.event(e).is_callpath())
        .map(|&e| b.event_name(e))
        .collect();
    assert_eq!(
        added,
        [
            "main [{/home/user/tauprogs/ci/mpi_stencil.c} {69,0}]",
            "halo_exchange [{/home/user/tauprogs/ci/mpi_stencil.c} {17,0}]",
            "sweep [{/home/user/tauprogs/ci/mpi_stencil.c} {35,0}]",
            "checkpoint [{/home/user/tauprogs/ci/mpi_stencil.c} {59,0}]",
            "smooth [{/home/user/tauprogs/ci/mpi_stencil.c} {50,0}]",
        ]
    );
}

/// The diff heat map's cells are the threads' B − A from the profiles' own values, binned by
/// largest magnitude, and its rows the events with the largest |B − A| over the common threads.
#[test]
fn diff_matrix_cells_are_per_thread_differences() {
    use perfscape_analysis::answers::{DiffParams, DiffShow, diff_matrix};
    let a = load("tau-real/mpi-stencil-np64-callpath-commmatrix");
    let b = load("tau-real/mpi-stencil-np4-compinst-callpath");
    let m = match_runs(&a, &b).unwrap();
    assert_eq!(m.threads.len(), 4, "ranks 0-3 are in both");
    let q = DiffParams {
        metric: MetricId(0),
        kind: ValueKind::Exclusive,
        normalize: None,
        callpaths: false,
        sort: DiffSort::AbsDelta,
        n: 5,
    };
    for (w, per_bin) in [(4, 1), (2, 2)] {
        let d = diff_matrix(&a, &b, &m, q, DiffShow::Delta, w).unwrap();
        assert_eq!((d.threads, d.columns.len(), d.rows.len()), (4, w, 5));
        let mut sums = Vec::new();
        for (r, row) in d.rows.iter().enumerate() {
            let ea = EventId(row.event);
            let eb = b.event_by_name(&a.event_name(ea)).unwrap();
            let delta = |t: u32| {
                let va = a.value(
                    ea,
                    a.thread_index(perfscape_model::ThreadId::new(t, 0, 0)).unwrap(),
                    ValueKind::Exclusive,
                    MetricId(0),
                );
                let vb = b.value(
                    eb,
                    b.thread_index(perfscape_model::ThreadId::new(t, 0, 0)).unwrap(),
                    ValueKind::Exclusive,
                    MetricId(0),
                );
                vb.unwrap_or(0.0) - va.unwrap_or(0.0)
            };
            for c in 0..w {
                let ds: Vec<f64> = (0..per_bin).map(|k| delta((c * per_bin + k) as u32)).collect();
                let want = ds
                    .iter()
                    .copied()
                    .fold(0.0f64, |x, y| if y.abs() > x.abs() { y } else { x });
                assert_eq!(d.cells[r * w + c], Some(want), "{} bin {c}", row.name);
            }
            sums.push((0..4).map(delta).sum::<f64>().abs());
            assert_eq!(row.delta.abs(), sums[r]);
        }
        assert!(sums.windows(2).all(|x| x[0] >= x[1]), "rows by |B − A|: {sums:?}");
        let extent = d.cells.iter().flatten().fold(0.0f64, |x, y| x.max(y.abs()));
        assert_eq!(d.extent, extent);
    }
}

/// The two call trees as one: every calling context of either run once, under its caller,
/// with its own events' values; the regression path follows the largest increase while a callee
/// holds at least half of its caller's.
#[test]
fn diff_call_tree_is_the_union_of_both_trees_with_their_values() {
    use perfscape_analysis::answers::{DiffParams, diff_call_tree};
    let a = load("tau-real/mpi-stencil-np4-callpath-commmatrix");
    let b = load("tau-real/mpi-stencil-np4-compinst-callpath");
    let m = match_runs(&a, &b).unwrap();
    let q = DiffParams {
        metric: MetricId(0),
        kind: ValueKind::Inclusive,
        normalize: None,
        callpaths: true,
        sort: DiffSort::AbsDelta,
        n: usize::MAX,
    };
    let t = diff_call_tree(&a, &b, &m, q).unwrap();
    let tree_nodes = |p: &Profile| {
        let mut n = 0;
        let mut stack = p.call_tree().roots().to_vec();
        while let Some(e) = stack.pop() {
            n += 1;
            stack.extend_from_slice(p.call_tree().children(e));
        }
        n
    };
    let (na, nb) = (tree_nodes(&a), tree_nodes(&b));
    let both = t.nodes.iter().filter(|n| n.change == Change::Matched).count();
    assert_eq!(t.nodes.len(), na + nb - both, "union of {na} and {nb} nodes");
    assert_eq!(t.nodes_in_runs as usize, t.nodes.len());
    let total = |p: &Profile, e: Option<u32>, kind| {
        e.map_or(0.0, |e| {
            p.interval(EventId(e))
                .values(kind, MetricId(0))
                .iter()
                .sum::<f64>()
        })
    };
    for (i, n) in t.nodes.iter().enumerate() {
        let (ia, ib) = (
            total(&a, n.event_a, ValueKind::Inclusive),
            total(&b, n.event_b, ValueKind::Inclusive),
        );
        assert_eq!(n.inclusive, [ia, ib, ib - ia], "{}", n.name);
        let (xa, xb) = (
            total(&a, n.event_a, ValueKind::Exclusive),
            total(&b, n.event_b, ValueKind::Exclusive),
        );
        assert_eq!(n.exclusive, [xa, xb, xb - xa], "{}", n.name);
        // Under its caller: the caller's event is the event's parent in its run.
        if let Some(p) = n.parent {
            let caller = &t.nodes[p as usize];
            assert!(caller.children.contains(&(i as u32)));
            if let (Some(e), Some(c)) = (n.event_a, caller.event_a) {
                assert_eq!(a.event(EventId(e)).parent(), Some(EventId(c)), "{}", n.name);
            }
            if let (Some(e), Some(c)) = (n.event_b, caller.event_b) {
                assert_eq!(b.event(EventId(e)).parent(), Some(EventId(c)), "{}", n.name);
            }
        }
    }
    assert!(t.nodes.iter().any(|n| n.change == Change::Added));
    let path = &t.regression_path;
    for w in path.windows(2) {
        let (cur, next) = (&t.nodes[w[0] as usize], &t.nodes[w[1] as usize]);
        assert_eq!(next.parent, Some(w[0]));
        assert!(next.inclusive[2] > 0.0 && next.inclusive[2] >= 0.5 * cur.inclusive[2]);
        let best = cur
            .children
            .iter()
            .map(|&c| t.nodes[c as usize].inclusive[2])
            .fold(f64::MIN, f64::max);
        assert_eq!(next.inclusive[2], best);
    }
    if let Some(&first) = path.first() {
        assert!(t.nodes[first as usize].parent.is_none() && t.nodes[first as usize].inclusive[2] > 0.0);
    }
}
