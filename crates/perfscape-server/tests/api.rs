//! The API's numbers equal the analysis crate's (and brute force over the raw cells): each
//! endpoint asked through its typed request.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{cache, corpus, example, view};
use perfscape_analysis::axis::{Subset, ThreadOrder};
use perfscape_analysis::views::{Reduce, RowKind};
use perfscape_analysis::{TopOptions, event_stats, run_total, thread_values_sorted, top_events};
use perfscape_formats::{OpenOptions, open};
use perfscape_model::{EventId, MetricId, Profile, ThreadIndex, ValueKind};
use perfscape_server::endpoints::{calltree, event, events, matrix};
use perfscape_server::request::{
    CallTreeRequest, EventRequest, EventsRequest, MatrixRequest, OverviewRequest, RowsRequest,
    TerrainRequest, ThreadsRequest,
};

/// All (row event, thread position) cells of flat events, as a dense matrix in the API's row
/// order (NaN = thread lacks the event).
fn dense(p: &Profile, rows: &[u32], kind: ValueKind) -> Vec<Vec<f64>> {
    rows.iter()
        .map(|&e| {
            let mut v = vec![f64::NAN; p.threads().len()];
            let col = p.interval(EventId(e));
            for (t, x) in col.threads().iter().zip(col.values(kind, MetricId(0))) {
                v[t.index()] = *x;
            }
            v
        })
        .collect()
}

#[test]
fn events_equal_the_analysis() {
    let l = example();
    let p = &l.profile;
    let c = cache();
    let r = events::get(view(p, &c), &EventsRequest::default()).unwrap();
    let top = top_events(
        p,
        MetricId(0),
        TopOptions {
            n: 0,
            ..TopOptions::default()
        },
    );
    assert_eq!(r.rows.len(), top.len());
    assert_eq!(r.run_total, run_total(p, MetricId(0)));
    for (row, t) in r.rows.iter().zip(&top) {
        assert_eq!(row.id, t.event.0);
        let s = event_stats(p, t.event, MetricId(0)).exclusive;
        assert_eq!(
            (row.stats.total, row.stats.mean, row.stats.max, row.stats.stddev),
            (Some(s.total), s.mean, s.max, s.stddev)
        );
        assert_eq!(
            row.stats.max_thread.as_deref(),
            s.max_thread.map(|t| p.thread(t).to_string()).as_deref()
        );
        assert!((row.percent.unwrap() - t.percent.unwrap()).abs() < 1e-12);
    }
    // Inclusive ranking puts the root first at 100%.
    let inc = events::get(
        view(p, &c),
        &EventsRequest {
            kind: Some(ValueKind::Inclusive),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(inc.rows[0].name, ".TAU application");
    assert_eq!(inc.rows[0].percent, Some(100.0));
    // A metric the run does not have is a 400 with a reason.
    assert_eq!(
        events::get(
            view(p, &c),
            &EventsRequest {
                metric: Some(7),
                ..Default::default()
            }
        )
        .unwrap_err()
        .status,
        400
    );
}

#[test]
fn matrix_at_full_and_reduced_resolution_equals_brute_force() {
    let l = example();
    let p = &l.profile;
    let rows = matrix::rows(view(p, &cache()), &RowsRequest::default()).unwrap();
    let ids: Vec<u32> = rows.rows.iter().map(|r| r.events[0]).collect();
    let m = dense(p, &ids, ValueKind::Exclusive);
    let n_threads = p.threads().len();
    // Full resolution: every cell as stored.
    let full = matrix::matrix(
        view(p, &cache()),
        &MatrixRequest {
            h: Some(4096),
            w: Some(4096),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!((full.rows.len(), full.cols.len()), (ids.len(), n_threads));
    for (r, row) in m.iter().enumerate() {
        for (c, &v) in row.iter().enumerate() {
            let got = full.values[r * n_threads + c];
            if v.is_nan() {
                assert_eq!(got, None)
            } else {
                assert_eq!(got, Some(v))
            }
        }
    }
    // Reduced: 5 x 7 bins over a sub-region, MAX and SUM.
    for reduce in [Reduce::Max, Reduce::Sum] {
        let g = matrix::matrix(
            view(p, &cache()),
            &MatrixRequest {
                h: Some(5),
                w: Some(7),
                r0: Some(2),
                r1: Some(17),
                t0: Some(3),
                t1: Some(60),
                reduce: Some(reduce),
                ..Default::default()
            },
        )
        .unwrap();
        for (ri, rb) in g.rows.iter().enumerate() {
            for (ci, cb) in g.cols.iter().enumerate() {
                let mut acc: Option<f64> = None;
                for row in &m[rb.first as usize..=rb.last as usize] {
                    for &v in &row[cb.first as usize..=cb.last as usize] {
                        if !v.is_nan() {
                            acc = Some(match (reduce, acc) {
                                (_, None) => v,
                                (Reduce::Max, Some(a)) => a.max(v),
                                (_, Some(a)) => a + v,
                            });
                        }
                    }
                }
                let got = g.values[ri * g.cols.len() + ci];
                match (acc, got) {
                    (None, None) => {}
                    (Some(a), Some(b)) => {
                        assert!(
                            (a - b).abs() <= 1e-9 * a.abs(),
                            "{reduce:?} {ri},{ci}: {a} vs {b}"
                        )
                    }
                    other => panic!("{reduce:?} {ri},{ci}: {other:?}"),
                }
            }
        }
        assert_eq!(g.rows.first().unwrap().first, 2);
        assert_eq!(g.rows.last().unwrap().last, 16);
        assert_eq!(g.cols.first().unwrap().first, 3);
        assert_eq!(g.cols.last().unwrap().last, 59);
    }
}

/// The reduction of the dense matrix's cells `rows` × `cols` (inclusive bounds) that have data.
fn brute(m: &[Vec<f64>], rows: (u32, u32), cols: (u32, u32), reduce: Reduce) -> Option<f64> {
    let mut acc: Option<f64> = None;
    for row in &m[rows.0 as usize..=rows.1 as usize] {
        for &v in &row[cols.0 as usize..=cols.1 as usize] {
            if !v.is_nan() {
                acc = Some(match (reduce, acc) {
                    (_, None) => v,
                    (Reduce::Max, Some(a)) => a.max(v),
                    (_, Some(a)) => a + v,
                });
            }
        }
    }
    acc
}

#[test]
fn the_whole_run_colour_range_equals_the_unzoomed_matrix_and_brute_force() {
    let l = example();
    let p = &l.profile;
    let rows = matrix::rows(view(p, &cache()), &RowsRequest::default()).unwrap();
    let ids: Vec<u32> = rows.rows.iter().map(|r| r.events[0]).collect();
    let m = dense(p, &ids, ValueKind::Exclusive);
    let close = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) => (a - b).abs() <= 1e-9 * a.abs().max(b.abs()),
        (a, b) => a == b,
    };
    // Without `wh`/`ww` there is no range.
    assert!(
        matrix::matrix(view(p, &cache()), &MatrixRequest::default())
            .unwrap()
            .run
            .is_none()
    );
    for reduce in [Reduce::Max, Reduce::Sum] {
        for (wh, ww) in [(4096, 4096), (5, 7), (200, 21)] {
            let zoom = matrix::matrix(
                view(p, &cache()),
                &MatrixRequest {
                    r0: Some(3),
                    r1: Some(9),
                    t0: Some(10),
                    t1: Some(22),
                    h: Some(4),
                    w: Some(5),
                    wh: Some(wh),
                    ww: Some(ww),
                    reduce: Some(reduce),
                    ..Default::default()
                },
            )
            .unwrap();
            let run = zoom.run.clone().unwrap();
            // The un-zoomed answer at that resolution: its bins, reduced by brute force.
            let whole = matrix::matrix(
                view(p, &cache()),
                &MatrixRequest {
                    h: Some(wh),
                    w: Some(ww),
                    reduce: Some(reduce),
                    ..Default::default()
                },
            )
            .unwrap();
            let mut cells = Vec::new();
            for rb in &whole.rows {
                for cb in &whole.cols {
                    cells.extend(brute(&m, (rb.first, rb.last), (cb.first, cb.last), reduce));
                }
            }
            let lo = cells.iter().copied().reduce(f64::min);
            let hi = cells.iter().copied().reduce(f64::max);
            assert!(
                close(run.min, lo),
                "{reduce:?} {wh}x{ww}: {:?} vs {lo:?}",
                run.min
            );
            assert!(
                close(run.max, hi),
                "{reduce:?} {wh}x{ww}: {:?} vs {hi:?}",
                run.max
            );
            assert_eq!((run.min, run.max), (whole.min, whole.max));
            // The zoomed window's own range is narrower here.
            assert!(zoom.max < run.max, "{reduce:?} {wh}x{ww}");
            // Each zoomed row bin's largest cell over all threads (bins of the un-zoomed columns).
            assert_eq!(run.row_max.len(), zoom.rows.len());
            for (rb, &got) in zoom.rows.iter().zip(&run.row_max) {
                let want = whole
                    .cols
                    .iter()
                    .filter_map(|cb| brute(&m, (rb.first, rb.last), (cb.first, cb.last), reduce))
                    .reduce(f64::max);
                assert!(
                    close(got, want),
                    "{reduce:?} rows {}-{}: {got:?} vs {want:?}",
                    rb.first,
                    rb.last
                );
            }
        }
    }
    // At full resolution the range is every stored cell's.
    let all: Vec<f64> = m.iter().flatten().copied().filter(|v| !v.is_nan()).collect();
    let full = matrix::matrix(
        view(p, &cache()),
        &MatrixRequest {
            r0: Some(0),
            r1: Some(2),
            wh: Some(4096),
            ww: Some(4096),
            ..Default::default()
        },
    )
    .unwrap()
    .run
    .unwrap();
    assert_eq!(full.min, all.iter().copied().reduce(f64::min));
    assert_eq!(full.max, all.iter().copied().reduce(f64::max));
}

#[test]
fn event_detail_matches_sorted_values_and_downsamples_by_max() {
    let l = example();
    let p = &l.profile;
    let c = cache();
    let e = p.event_by_name("MPI_Allreduce()").unwrap();
    let d = event::get(view(p, &c), e.0, &EventRequest::default()).unwrap();
    let sorted = thread_values_sorted(p, e, ValueKind::Exclusive, MetricId(0));
    assert!(!d.downsampled);
    assert_eq!(d.values.len(), 64);
    for (v, (t, x)) in d.values.iter().zip(&sorted) {
        assert_eq!(
            (v.thread.as_str(), v.value),
            (p.thread(*t).to_string().as_str(), *x)
        );
    }
    assert_eq!(d.histogram.counts.iter().sum::<u32>(), 64);
    let s = event_stats(p, e, MetricId(0)).exclusive;
    assert_eq!((d.stats.min, d.stats.max, d.stats.mean), (s.min, s.max, s.mean));
    // With fewer points than threads each point is its rank bucket's maximum.
    let small = event::get(
        view(p, &c),
        e.0,
        &EventRequest {
            points: Some(16),
            ..Default::default()
        },
    )
    .unwrap();
    assert!(small.downsampled);
    assert_eq!(small.values.len(), 16);
    for (i, v) in small.values.iter().enumerate() {
        let bucket = &sorted[i * 4..(i + 1) * 4];
        assert_eq!(v.value, bucket.iter().map(|x| x.1).fold(f64::MIN, f64::max));
    }
    assert_eq!(
        event::get(view(p, &c), 9999, &EventRequest::default())
            .unwrap_err()
            .status,
        404
    );
}

#[test]
fn call_tree_scopes() {
    let l = example();
    let p = &l.profile;
    let c = cache();
    let tree = |scope: &str| {
        calltree::get(
            view(p, &c),
            &CallTreeRequest {
                scope: Some(scope.parse().unwrap()),
                ..Default::default()
            },
        )
    };
    let total = calltree::get(view(p, &c), &CallTreeRequest::default()).unwrap();
    assert_eq!(total.scope, "total");
    assert!(total.has_callpaths);
    let root = &total.nodes[0];
    assert_eq!(root.name, ".TAU application");
    let root_id = p.event_by_name(".TAU application").unwrap();
    let s = event_stats(p, root_id, MetricId(0));
    assert_eq!(root.inclusive, s.inclusive.total);
    // Children of a node follow it, largest inclusive first.
    let kids: Vec<&perfscape_server::api::TreeNodeJson> =
        total.nodes.iter().filter(|n| n.parent == Some(root.id)).collect();
    assert!(kids.windows(2).all(|w| w[0].inclusive >= w[1].inclusive));
    let mean = tree("mean").unwrap();
    assert_eq!(mean.nodes[0].inclusive, s.inclusive.mean);
    let t = tree("5.0.0").unwrap();
    assert_eq!(t.scope, "5.0.0");
    let t5 = p.thread_index("5.0.0".parse().unwrap()).unwrap();
    assert_eq!(
        t.nodes[0].inclusive,
        p.value(root_id, t5, ValueKind::Inclusive, MetricId(0)).unwrap()
    );
    assert_eq!(tree("99.0.0").unwrap_err().status, 404);
}

#[test]
fn terrain_peaks_are_the_largest_cells_of_distinct_events() {
    let l = example();
    let p = &l.profile;
    let t = matrix::terrain(
        view(p, &cache()),
        &TerrainRequest {
            peaks: Some(3),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(t.peaks.len(), 3);
    let mut best: Vec<(f64, u32)> = p
        .event_ids()
        .filter(|&e| !p.event(e).is_callpath() && !p.interval(e).is_empty())
        .map(|e| {
            (
                p.interval(e)
                    .exclusive(MetricId(0))
                    .iter()
                    .copied()
                    .fold(f64::MIN, f64::max),
                e.0,
            )
        })
        .collect();
    best.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (pk, (v, e)) in t.peaks.iter().zip(&best) {
        assert_eq!((pk.value, pk.event), (*v, *e));
    }
    assert_eq!(t.grid.reduce, "max");
}

#[test]
fn overview_of_source_lines_skips_unsampled_runs() {
    let run = corpus().join("tau/taucmdr-mm-ebs-sampling");
    let l = open(&run, &OpenOptions::default()).unwrap();
    let p = &l.profile;
    let c = cache();
    let rows = matrix::rows(
        view(p, &c),
        &RowsRequest {
            rows: Some(RowKind::Lines),
            ..Default::default()
        },
    )
    .unwrap();
    // matmult.c sampled at lines 59..=122: 64 rows, 7 of them sampled.
    assert_eq!(rows.rows.len(), 122 - 59 + 1);
    assert_eq!(rows.rows.iter().filter(|r| !r.events.is_empty()).count(), 7);
    let ov = matrix::overview(
        view(p, &c),
        &OverviewRequest {
            rows: Some(RowKind::Lines),
            skip: Some(5),
            ..Default::default()
        },
    )
    .unwrap();
    let kept: Vec<u32> = ov.strips.iter().flatten().map(|r| r.first).collect();
    // Sampled lines 59 60 61 | 99 101 | 120 122: gaps of 37, 18 are skipped; 1-line gaps kept.
    assert_eq!(ov.skipped_rows, 37 + 18);
    assert!(kept.contains(&0) && kept.contains(&(99 - 59)) && kept.contains(&(122 - 59)));
    let sampled_max = p
        .event_ids()
        .filter(|&e| p.event(e).kind == perfscape_model::EventKind::Sample && !p.event(e).is_callpath())
        .map(|e| p.interval(e).exclusive(MetricId(0))[0])
        .fold(f64::MIN, f64::max);
    assert_eq!(ov.max, Some(sampled_max));
}

#[test]
fn thread_positions_follow_id_order() {
    let l = example();
    let p = &l.profile;
    let full = matrix::matrix(
        view(p, &cache()),
        &MatrixRequest {
            h: Some(1),
            w: Some(4096),
            ..Default::default()
        },
    )
    .unwrap();
    let labels: Vec<&str> = full.cols.iter().map(|c| c.label.as_str()).collect();
    let expect: Vec<String> = (0..p.threads().len())
        .map(|t| p.thread(ThreadIndex::from(t)).to_string())
        .collect();
    assert_eq!(labels, expect.iter().map(String::as_str).collect::<Vec<_>>());
}

#[test]
fn thread_axis_orders_and_subsets() {
    let l = example();
    let p = &l.profile;
    let c = cache();
    let wait = p.event_by_name("MPI_Waitall()").unwrap();
    // By value: the full-resolution row of MPI_Waitall() descends.
    let by = MatrixRequest {
        threads: Some(ThreadOrder::Value),
        by_event: Some(wait.0),
        h: Some(4096),
        w: Some(4096),
        thread: Some("7.0.0".parse().unwrap()),
        ..Default::default()
    };
    let m = matrix::matrix(view(p, &c), &by).unwrap();
    let row = m.rows.iter().position(|b| b.event == Some(wait.0)).unwrap();
    let vals: Vec<f64> = m.values[row * m.cols.len()..(row + 1) * m.cols.len()]
        .iter()
        .map(|v| v.unwrap())
        .collect();
    assert!(vals.windows(2).all(|w| w[0] >= w[1]), "{vals:?}");
    let sorted = thread_values_sorted(p, wait, ValueKind::Exclusive, MetricId(0));
    assert_eq!(
        m.cols[0].thread.as_deref(),
        Some(p.thread(sorted[0].0).to_string().as_str())
    );
    let pos7 = sorted
        .iter()
        .position(|(t, _)| p.thread(*t).to_string() == "7.0.0")
        .unwrap();
    assert_eq!(m.thread_position, Some(pos7 as u32));
    // The first 8 threads of that order.
    let top = matrix::matrix(
        view(p, &c),
        &MatrixRequest {
            subset: Some(Subset::Top),
            top: Some(8),
            ..by.clone()
        },
    )
    .unwrap();
    assert_eq!(top.thread_count, 8);
    assert_eq!(top.cols.len(), 8);
    // Clusters: sizes add up, the order groups them, and the answer is deterministic.
    let cl = ThreadsRequest {
        threads: Some(ThreadOrder::Cluster),
        clusters: Some(4),
        ..Default::default()
    };
    let t = matrix::threads(view(p, &c), &cl).unwrap();
    assert_eq!(t.clusters.iter().map(|c| c.size).sum::<u32>(), 64);
    assert!(t.clusters.windows(2).all(|w| w[0].size >= w[1].size));
    assert!(!t.features.is_empty());
    let again = matrix::threads(view(p, &cache()), &cl).unwrap();
    assert_eq!(t.threads, again.threads);
    let m = matrix::matrix(
        view(p, &c),
        &MatrixRequest {
            h: Some(4096),
            w: Some(4096),
            threads: Some(ThreadOrder::Cluster),
            clusters: Some(4),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(m.cluster_starts.len(), t.clusters.len());
    assert_eq!(m.cluster_starts[0], 0);
    let mut expect = vec![0u32];
    for c in &t.clusters[..t.clusters.len() - 1] {
        expect.push(expect.last().unwrap() + c.size);
    }
    assert_eq!(m.cluster_starts, expect);
    // Representatives: at most 3 per cluster, the min/median/max of each.
    let reps = matrix::threads(
        view(p, &c),
        &ThreadsRequest {
            subset: Some(Subset::Reps),
            ..cl.clone()
        },
    )
    .unwrap();
    assert!(reps.count as usize <= 3 * t.clusters.len() && reps.count as usize >= t.clusters.len());
    // Bad combinations are 400s.
    let status = |q: MatrixRequest| matrix::matrix(view(p, &c), &q).unwrap_err().status;
    assert_eq!(
        status(MatrixRequest {
            threads: Some(ThreadOrder::Value),
            ..Default::default()
        }),
        400
    );
    assert_eq!(
        status(MatrixRequest {
            subset: Some(Subset::Reps),
            ..Default::default()
        }),
        400
    );
    assert_eq!(
        status(MatrixRequest {
            threads: Some(ThreadOrder::Value),
            by_event: Some(99_999),
            ..Default::default()
        }),
        404
    );
}

#[test]
fn overview_and_terrain_follow_the_thread_axis() {
    let l = example();
    let p = &l.profile;
    let c = cache();
    let ov = matrix::overview(
        view(p, &c),
        &OverviewRequest {
            threads: Some(ThreadOrder::Cluster),
            clusters: Some(3),
            w: Some(64),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(ov.thread_count, 64);
    assert!(!ov.cluster_starts.is_empty());
    let t = matrix::terrain(
        view(p, &c),
        &TerrainRequest {
            subset: Some(Subset::Top),
            top: Some(16),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(t.grid.thread_count, 16);
}

/// A terrain cell covering many events and threads names the event and thread of its largest
/// value: the profile's value there is the cell's height, and no value of the bins' events and
/// threads is larger.
#[test]
fn terrain_cells_name_the_event_and_thread_of_their_height() {
    let l = example();
    let p = &l.profile;
    let c = cache();
    let q = TerrainRequest {
        h: Some(8),
        w: Some(8),
        threads: Some(ThreadOrder::Cluster),
        clusters: Some(3),
        ..Default::default()
    };
    let t = matrix::terrain(view(p, &c), &q).unwrap();
    let g = &t.grid;
    let nc = g.cols.len();
    assert!(
        g.cols.iter().any(|b| b.last > b.first),
        "some column bins cover many threads"
    );
    assert_eq!(t.picks.len(), g.values.len());
    let (kind, m) = (ValueKind::Exclusive, MetricId(0));
    let mut checked = 0;
    for (i, (pick, v)) in t.picks.iter().zip(&g.values).enumerate() {
        let (Some(pick), Some(v)) = (pick, v) else {
            assert_eq!(pick.is_none(), v.is_none());
            continue;
        };
        let th = p.thread_index(pick.thread.parse().unwrap()).unwrap();
        let got = p.value(EventId(pick.event), th, kind, m).unwrap();
        assert_eq!(got, *v, "cell {i}: the pick's value is the cell's height");
        let col = &g.cols[i % nc];
        if let Some(single) = &col.thread {
            assert_eq!(&pick.thread, single);
        }
        checked += 1;
    }
    assert!(checked > 20, "{checked} cells");
}

/// A zoomed matrix over a few rows is answered from a pyramid of those rows alone while the
/// whole pyramid is not cached: its answers equal those of the whole pyramid, for every thread
/// order, reduction and region, and nothing of the size of the whole pyramid is kept.
#[test]
fn a_matrix_from_a_window_of_rows_equals_the_whole_pyramid_answer() {
    let l = example();
    let p = &l.profile;
    let base = MatrixRequest {
        callpaths: Some(true),
        ..Default::default()
    };
    let n_rows = matrix::rows(
        view(p, &cache()),
        &RowsRequest {
            callpaths: Some(true),
            ..Default::default()
        },
    )
    .unwrap()
    .rows
    .len() as u32;
    assert!(n_rows >= 32, "{n_rows} rows: too few for windows of a quarter");
    let orders = [
        (ThreadOrder::Id, None, None),
        (ThreadOrder::Cluster, Some(4), None),
        (ThreadOrder::Value, None, Some(Subset::Top)),
    ];
    let mut checked = 0;
    for (threads, clusters, subset) in orders {
        for reduce in [Reduce::Max, Reduce::Sum] {
            for (r0, r1, t0, t1, h, w) in [
                (0, 3, 0, 64, 3, 64),
                (5, 12, 3, 50, 2, 7),
                (n_rows - 4, n_rows + 9, 10, 11, 9, 9),
            ] {
                let q = MatrixRequest {
                    threads: Some(threads),
                    clusters,
                    subset,
                    top: subset.map(|_| 20),
                    by_event: (threads == ThreadOrder::Value).then_some(3),
                    reduce: Some(reduce),
                    r0: Some(r0),
                    r1: Some(r1),
                    t0: Some(t0),
                    t1: Some(t1),
                    h: Some(h),
                    w: Some(w),
                    ..base.clone()
                };
                // A fresh cache: the window's own pyramid.
                let fresh = cache();
                let windowed = matrix::matrix(view(p, &fresh), &q).unwrap();
                // A cache holding the whole pyramid (built by a request over every row).
                let warm = cache();
                let all_rows = MatrixRequest {
                    r0: None,
                    r1: None,
                    ..q.clone()
                };
                matrix::matrix(view(p, &warm), &all_rows).unwrap();
                let whole = matrix::matrix(view(p, &warm), &q).unwrap();
                assert_eq!(
                    serde_json::to_value(&windowed).unwrap(),
                    serde_json::to_value(&whole).unwrap(),
                    "{q:?}"
                );
                assert!(!windowed.rows.is_empty());
                assert!(
                    fresh.stats().bytes < warm.stats().bytes,
                    "the window's pyramid is not kept: {} vs {} bytes",
                    fresh.stats().bytes,
                    warm.stats().bytes
                );
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 18);
}
