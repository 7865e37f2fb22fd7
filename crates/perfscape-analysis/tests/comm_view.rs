//! The communication matrix view against a brute-force reduction of the dense ranks × ranks
//! matrix: every region, resolution, statistic and reduction gives the same bins, values and
//! per-bin totals.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::float_cmp)]

mod common;

use perfscape_analysis::answers::{CommParams, CommStat, comm_view};
use perfscape_analysis::comm::{ALL_PATHS, CommCell, CommMatrix, CommPath, comm_matrix};
use perfscape_analysis::views::Reduce;
use proptest::prelude::*;

const STATS: [CommStat; 6] = [
    CommStat::Bytes,
    CommStat::Calls,
    CommStat::MeanBytes,
    CommStat::MaxBytes,
    CommStat::MinBytes,
    CommStat::StddevBytes,
];

/// The brute-force answer: the dense matrix, every bin reduced cell by cell over its
/// `ceil(len / bins)` ranks.
fn brute(m: &CommMatrix, p: &CommParams) -> (Vec<Option<f64>>, Vec<f64>, Vec<f64>) {
    let n = m.ranks as usize;
    let path = m.path(p.path.as_deref().unwrap_or(ALL_PATHS)).unwrap();
    let mut dense = vec![vec![None::<&CommCell>; n]; n];
    for c in &path.cells {
        dense[c.sender as usize][c.receiver as usize] = Some(c);
    }
    let range = |a: Option<u32>, b: Option<u32>| {
        let s = (a.unwrap_or(0) as usize).min(n);
        (s, b.map_or(n, |b| (b as usize).min(n)).max(s))
    };
    let (r0, r1) = range(p.r0, p.r1);
    let (c0, c1) = range(p.c0, p.c1);
    let cut = |s: usize, e: usize, k: u32| -> Vec<(usize, usize)> {
        if e == s {
            return vec![];
        }
        let per = (e - s).div_ceil(k as usize);
        (s..e).step_by(per).map(|a| (a, (a + per).min(e))).collect()
    };
    let rb = cut(r0, r1, p.h.unwrap());
    let cb = cut(c0, c1, p.w.unwrap());
    let mut values = Vec::new();
    for &(a, b) in &rb {
        for &(x, y) in &cb {
            let mut acc: Option<f64> = None;
            for row in dense.iter().take(b).skip(a) {
                for c in row.iter().take(y).skip(x).flatten() {
                    let v = p.stat.of(c);
                    acc = Some(match (p.reduce, acc) {
                        (_, None) => v,
                        (Reduce::Max, Some(q)) => q.max(v),
                        (Reduce::Sum, Some(q)) => q + v,
                    });
                }
            }
            values.push(acc);
        }
    }
    let sent = rb
        .iter()
        .map(|&(a, b)| {
            (a..b)
                .flat_map(|s| dense[s].iter().flatten().map(|c| c.volume_bytes))
                .sum()
        })
        .collect();
    let received = cb
        .iter()
        .map(|&(x, y)| {
            dense
                .iter()
                .flat_map(|row| row[x..y].iter().flatten().map(|c| c.volume_bytes))
                .sum()
        })
        .collect();
    (values, sent, received)
}

fn check(m: &CommMatrix, p: &CommParams) {
    let got = comm_view(m, p).unwrap();
    let (values, sent, received) = brute(m, p);
    assert_eq!(got.values, values, "{p:?}");
    assert_eq!(got.sent_bytes, sent, "{p:?}");
    assert_eq!(got.received_bytes, received, "{p:?}");
    assert_eq!(got.rows.len() * got.cols.len(), values.len());
    assert_eq!(got.max, values.iter().flatten().copied().reduce(f64::max));
}

/// A random sparse matrix of `ranks` ranks with `k` cells.
fn synthetic(ranks: u32, cells: &[(u32, u32, u32, u32)]) -> CommMatrix {
    let mut v: Vec<CommCell> = cells
        .iter()
        .map(|&(s, r, calls, size)| {
            let (s, r, calls, size) = (s % ranks, r % ranks, f64::from(calls + 1), f64::from(size));
            CommCell {
                sender: s,
                receiver: r,
                calls,
                max_bytes: size * 2.0,
                min_bytes: size,
                volume_bytes: calls * size * 1.5,
                sum_squares: calls * size * size * 2.5,
            }
        })
        .collect();
    v.sort_by_key(|c| (c.sender, c.receiver));
    v.dedup_by_key(|c| (c.sender, c.receiver));
    CommMatrix {
        ranks,
        paths: vec![CommPath {
            name: ALL_PATHS.into(),
            cells: v,
        }],
        skipped: Default::default(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn the_view_equals_the_brute_force_reduction(
        ranks in 1u32..300,
        cells in prop::collection::vec((0u32..300, 0u32..300, 0u32..50, 1u32..10_000), 0..400),
        r in (0u32..320, 0u32..320), c in (0u32..320, 0u32..320),
        h in 1u32..70, w in 1u32..70, stat in 0usize..6, sum in any::<bool>(),
    ) {
        let m = synthetic(ranks, &cells);
        let stat = STATS[stat];
        let reduce = if sum && stat.adds_up() { Reduce::Sum } else { Reduce::Max };
        check(&m, &CommParams {
            path: None, stat, reduce,
            r0: Some(r.0.min(r.1)), r1: Some(r.0.max(r.1)),
            c0: Some(c.0.min(c.1)), c1: Some(c.0.max(c.1)),
            h: Some(h), w: Some(w),
        });
    }
}

#[test]
fn the_np64_view_at_every_resolution_equals_the_brute_force_reduction() {
    let p = common::load("tau-real/mpi-stencil-np64-callpath-commmatrix");
    let m = comm_matrix(&p);
    assert_eq!(m.ranks, 64);
    for path in &m.paths {
        for stat in STATS {
            for (h, w) in [(64, 64), (7, 13), (1, 1), (32, 64)] {
                for reduce in [Reduce::Max, Reduce::Sum] {
                    if reduce == Reduce::Sum && !stat.adds_up() {
                        continue;
                    }
                    check(
                        &m,
                        &CommParams {
                            path: Some(path.name.clone()),
                            stat,
                            reduce,
                            h: Some(h),
                            w: Some(w),
                            ..Default::default()
                        },
                    );
                }
            }
        }
    }
    // Full resolution: one bin per rank, labelled with the rank's thread.
    let v = comm_view(&m, &CommParams::default()).unwrap();
    assert_eq!((v.rows.len(), v.cols.len(), v.path.as_str()), (64, 64, ALL_PATHS));
    assert_eq!(v.rows[5].thread.as_deref(), Some("5.0.0"));
    assert_eq!(v.paths[0].name, ALL_PATHS);
}

#[test]
fn sum_of_a_mean_an_unknown_path_and_a_run_without_messages_are_refused() {
    let p = common::load("tau-real/mpi-stencil-np64-callpath-commmatrix");
    let m = comm_matrix(&p);
    let sum_of_means = CommParams {
        stat: CommStat::MeanBytes,
        reduce: Reduce::Sum,
        ..Default::default()
    };
    assert!(
        comm_view(&m, &sum_of_means)
            .unwrap_err()
            .to_string()
            .contains("reduce")
    );
    let unknown = CommParams {
        path: Some("nowhere".into()),
        ..Default::default()
    };
    assert!(
        comm_view(&m, &unknown)
            .unwrap_err()
            .to_string()
            .contains("nowhere")
    );
    let empty = comm_matrix(&common::load("tau-real/mpi-stencil-np4-profile"));
    assert!(
        comm_view(&empty, &CommParams::default())
            .unwrap_err()
            .to_string()
            .contains("TAU_COMM_MATRIX")
    );
}
