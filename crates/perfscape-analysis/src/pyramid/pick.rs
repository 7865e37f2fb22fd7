//! The cell holding a region's largest value (the 3-D terrain's picks: which event and thread
//! make a grid cell's height), found from the pyramid's MAX blocks instead of a scan of every
//! cell of the region.
//!
//! Given the region's maximum `m` (the MAX grid's cell value), the rows are tried in order;
//! in each row the aligned blocks covering the region's positions are tried in position order
//! (the decomposition [`Pyramid::grid`] reduces over). No block of the region holds more than
//! `m`, so the first block whose MAX equals `m` holds the first cell equal to `m` in that row,
//! and no earlier block holds one. From that block the search descends through the stored
//! levels, taking the left half whenever its MAX equals `m`, down to a block of the first
//! stored level (`2^first` positions), whose cells are read from the source. The answer is the
//! first cell in row order, then position order, whose value equals `m` — what a scan of every
//! cell keeping the first largest finds. Cost per cell of the grid: the MAX of the covered
//! rows up to the first row that holds `m` (a stored block each, or a few at the region's
//! edges), plus `O(log T + 2^first)` reads for the descent, instead of every cell of the rows.

use super::{MatrixSource, Pyramid, Reduce};
use std::ops::Range;

impl Pyramid {
    /// For every cell of a grid of `row_bins` × `col_bins` whose MAX is `maxima` (row-major, as
    /// [`Pyramid::grid`] gives it with [`Reduce::Max`] over the same bins and `src`), the row
    /// and position of the cell's largest value: the first in row order, then position order,
    /// among the cells equal to it. `None` where the maximum is `None` (no data).
    pub fn max_picks(
        &self,
        src: &dyn MatrixSource,
        row_bins: &[Range<usize>],
        col_bins: &[Range<usize>],
        maxima: &[Option<f64>],
    ) -> Vec<Option<(usize, usize)>> {
        let nc = col_bins.len();
        if nc == 0 {
            return Vec::new();
        }
        maxima
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let rows = row_bins.get(i / nc)?.clone();
                self.first_max(src, rows, col_bins[i % nc].clone(), (*m)?)
            })
            .collect()
    }

    /// The first cell (row, position) of rows `rows` × positions `cols`, rows first, whose
    /// value equals `max`, where `max` is the largest value of that region (its MAX, e.g. a
    /// cell of [`Pyramid::grid`]); `None` when no cell equals it (NaN equals nothing). `src`
    /// must be the source the pyramid was built from.
    pub fn first_max(
        &self,
        src: &dyn MatrixSource,
        rows: Range<usize>,
        cols: Range<usize>,
        max: f64,
    ) -> Option<(usize, usize)> {
        if max.is_nan() {
            return None;
        }
        let end = cols.end.min(self.cols);
        for r in rows.start..rows.end.min(self.rows) {
            let mut p = cols.start;
            while p < end {
                let k = aligned_log2(p, end);
                let b = p >> k;
                if self.block(src, r, k, b, Reduce::Max) == max {
                    if k == 0 {
                        return Some((r, p)); // a block of one position: the cell itself
                    }
                    return self.descend(src, r, k, b, max).map(|pos| (r, pos));
                }
                p += 1usize << k;
            }
        }
        None
    }

    /// The first position of row `r` in the aligned block `b` of `2^k` positions whose value
    /// equals `max`, the block's MAX.
    fn descend(&self, src: &dyn MatrixSource, r: usize, mut k: u32, mut b: usize, max: f64) -> Option<usize> {
        while k > 0 && self.level(k - 1).is_some() {
            k -= 1;
            // The left half holds `max` when its MAX is `max`; else the right half does.
            b = if self.block(src, r, k, 2 * b, Reduce::Max) == max {
                2 * b
            } else {
                2 * b + 1
            };
        }
        let start = b << k;
        let end = ((b + 1) << k).min(self.cols);
        (start..end).find(|&p| src.get(r, p) == Some(max))
    }
}

/// Log2 of the largest aligned block starting at `p` that ends at or before `end` (the blocks
/// [`Pyramid::grid`] reduces a range over, largest first).
pub(super) fn aligned_log2(p: usize, end: usize) -> u32 {
    let mut k = if p == 0 {
        usize::BITS - 1
    } else {
        p.trailing_zeros()
    };
    while k > 0 && p + (1usize << k) > end {
        k -= 1;
    }
    k
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::answers::{CellPick, MatrixInput, Region, build_pyramid, terrain};
    use crate::axis::{AxisInfo, AxisOrder, order_axis};
    use crate::params::Values;
    use crate::pyramid::tests::Unhinted;
    use crate::pyramid::{DenseMatrix, ProfileMatrix};
    use crate::views::{RowOrder, RowSet, ThreadAxis};
    use perfscape_model::{
        Combine, Metric, MetricId, Profile, ProfileBuilder, ThreadData, ThreadId, ThreadIndex, ValueKind,
    };
    use proptest::prelude::*;

    /// The picks as the terrain made them before the pyramid did (the oracle): a scan of
    /// every cell of the covered rows, each grid cell keeping its largest value's row and
    /// position, the first in (row, position) order on ties; NaN skipped.
    fn scan_picks(
        src: &dyn MatrixSource,
        row_bins: &[Range<usize>],
        col_bins: &[Range<usize>],
    ) -> Vec<Option<(usize, usize)>> {
        let (nr, nc) = (row_bins.len(), col_bins.len());
        let mut best: Vec<Option<(f64, usize, usize)>> = vec![None; nr * nc];
        let col_of = |p: usize| {
            let c = col_bins.partition_point(|b| b.end <= p);
            (c < nc && col_bins[c].start <= p).then_some(c)
        };
        for (ri, rb) in row_bins.iter().enumerate() {
            for r in rb.clone() {
                src.for_each_in_row(r, &mut |p, v| {
                    if let Some(ci) = col_of(p) {
                        let cell = &mut best[ri * nc + ci];
                        if !v.is_nan()
                            && cell.is_none_or(|(b, br, bp)| v > b || (v == b && (r, p) < (br, bp)))
                        {
                            *cell = Some((v, r, p));
                        }
                    }
                });
            }
        }
        best.into_iter().map(|c| c.map(|(_, r, p)| (r, p))).collect()
    }

    /// The pyramid's picks over the MAX grid of a region, the grid's bins and the scan's picks.
    #[allow(clippy::type_complexity)]
    fn both(
        m: &dyn MatrixSource,
        budget: usize,
        rr: Range<usize>,
        cr: Range<usize>,
        h: usize,
        w: usize,
    ) -> (
        Vec<Option<(usize, usize)>>,
        Vec<Option<(usize, usize)>>,
        Vec<Option<f64>>,
    ) {
        let p = Pyramid::build(m, budget);
        let g = p.grid(m, rr, cr, h, w, Reduce::Max);
        let fast = p.max_picks(m, &g.row_bins, &g.col_bins, &g.values);
        (fast, scan_picks(m, &g.row_bins, &g.col_bins), g.values)
    }

    const N: f64 = f64::NAN;

    /// A planted 4 × 8 matrix with ties within a row, across rows, and cells without data,
    /// picked by hand (rows first, then positions, on ties).
    #[test]
    fn planted_ties_pick_the_first_cell_in_row_then_position_order() {
        #[rustfmt::skip]
        let m = DenseMatrix { rows: 4, cols: 8, values: vec![
            1.0, 5.0, N,   5.0, 0.0, 0.0, 2.0, N,
            5.0, 1.0, 1.0, 1.0, N,   N,   N,   N,
            N,   N,   N,   N,   7.0, 3.0, 7.0, 1.0,
            9.0, 9.0, 0.0, 0.0, 7.0, 7.0, 7.0, 7.0,
        ] };
        for budget in [1, 8, 1 << 20] {
            // 2 × 2 bins: rows 0..2, 2..4; positions 0..4, 4..8.
            let (fast, slow, _) = both(&m, budget, 0..4, 0..8, 2, 2);
            let expect = vec![Some((0, 1)), Some((0, 6)), Some((3, 0)), Some((2, 4))];
            assert_eq!(fast, expect, "budget {budget}");
            assert_eq!(slow, expect, "the oracle, budget {budget}");
            // Zoomed to positions 1..7 at 2 bins (1..4, 4..7): the same cells but (3, 1).
            let (fast, slow, _) = both(&m, budget, 0..4, 1..7, 2, 2);
            let expect = vec![Some((0, 1)), Some((0, 6)), Some((3, 1)), Some((2, 4))];
            assert_eq!((&fast, &slow), (&expect, &expect), "budget {budget}");
            // Row 1 over positions 4..8 has no data: no pick.
            let (fast, slow, values) = both(&m, budget, 1..2, 4..8, 1, 1);
            assert_eq!((fast, slow, values), (vec![None], vec![None], vec![None]));
            // One cell per bin: the cell itself.
            let (fast, slow, _) = both(&m, budget, 0..4, 0..8, 4, 8);
            assert_eq!(fast, slow);
            assert_eq!(fast[2], None);
            assert_eq!(fast[8 + 3], Some((1, 3)));
        }
    }

    /// Zeros of either sign are equal: the first is picked, as the scan does.
    #[test]
    fn signed_zeros_tie() {
        let m = DenseMatrix {
            rows: 2,
            cols: 5,
            values: vec![N, -1.0, -0.0, 0.0, -0.0, 0.0, -0.0, N, N, N],
        };
        for budget in [1, 2, 1 << 20] {
            let (fast, slow, _) = both(&m, budget, 0..2, 0..5, 1, 1);
            assert_eq!(fast, vec![Some((0, 2))]);
            assert_eq!(slow, fast);
            let (fast, slow, _) = both(&m, budget, 1..2, 0..5, 1, 1);
            assert_eq!((fast, slow), (vec![Some((1, 0))], vec![Some((1, 0))]));
        }
    }

    proptest! {
        #[test]
        fn pyramid_picks_equal_the_scan(
            rows in 1usize..9, cols in 1usize..300,
            cells in proptest::collection::vec(
                prop_oneof![3 => Just(N), 2 => Just(0.0f64), 1 => Just(-0.0f64), 3 => (0u8..4).prop_map(f64::from), 1 => -1e6f64..1e9],
                9 * 300,
            ),
            blank in proptest::collection::vec(prop_oneof![3 => Just(false), 1 => Just(true)], 9),
            budget in prop_oneof![Just(1usize), Just(40), Just(1 << 20)], hinted in any::<bool>(),
            r in (0usize..9, 0usize..9), t in (0usize..300, 0usize..300), h in 1usize..6, w in 1usize..40,
        ) {
            let mut m = DenseMatrix { rows, cols, values: cells[..rows * cols].to_vec() };
            for r in (0..rows).filter(|&r| blank[r]) {
                m.values[r * cols..(r + 1) * cols].fill(N); // a row without data
            }
            let unhinted = Unhinted(&m);
            let src: &dyn MatrixSource = if hinted { &m } else { &unhinted };
            let (r0, r1) = (r.0.min(r.1), r.0.max(r.1) + 1);
            let (t0, t1) = (t.0.min(t.1), t.0.max(t.1) + 1);
            let (fast, slow, values) = both(src, budget, r0..r1, t0..t1, h, w);
            prop_assert_eq!(&fast, &slow);
            for (pick, v) in fast.iter().zip(&values) {
                prop_assert_eq!(pick.is_some(), v.is_some());
                if let (Some((r, p)), Some(v)) = (pick, v) {
                    prop_assert_eq!(m.values[r * cols + p], *v);
                }
            }
        }
    }

    /// A profile of `threads` threads: flat timers, callpaths and `[SAMPLE]` events (two on one
    /// line), values on a few levels (ties everywhere), some threads without some events, and
    /// metrics combining by every rule (for the line rows).
    fn profile(threads: u32, events: usize) -> Profile {
        let metrics = vec![
            Metric::tau("TIME"),
            Metric::tau("MAX_X").combined_by(Combine::Max),
            Metric::tau("MEAN_X").combined_by(Combine::Mean),
            Metric::tau("RATIO_X").combined_by(Combine::NotCombinable),
        ];
        let mut names: Vec<String> = (0..events).map(|e| format!("f{e}")).collect();
        names.extend((1..events.min(6)).map(|e| format!("main => f{e}")));
        names.extend([
            "[SAMPLE] a [{x.c} {10}]".to_string(),
            "[SAMPLE] b [{x.c} {10}]".to_string(),
            "[SAMPLE] c [{x.c} {12}]".to_string(),
        ]);
        let mut b = ProfileBuilder::new(metrics);
        for t in 0..threads {
            let mut d = ThreadData::new(4);
            for (e, name) in names.iter().enumerate() {
                let (t, e) = (t as usize, e);
                if (t * 7 + e * 3) % 5 == 0 {
                    continue; // no data for this event on this thread
                }
                let q = |salt: usize| ((t * 13 + e * 7 + salt) % 4) as f64;
                let ex = [q(0), q(1) * 10.0, q(2), q(3)];
                let inc = [q(1) + 4.0, q(2), q(3) * 0.5, q(0)];
                d.push_timer(name, "G", q(5), q(6), &ex, &inc).unwrap();
            }
            b.add_thread(ThreadId::new(t, 0, 0), d).unwrap();
        }
        b.finish().0
    }

    /// Axes: id order, reversed, and every third thread in a shuffled order.
    fn axes(p: &Profile) -> Vec<AxisInfo> {
        let n = p.threads().len();
        let id = order_axis(p, AxisOrder::Id);
        let custom = |order: Vec<ThreadIndex>| AxisInfo {
            axis: ThreadAxis::from_order(n, order),
            clustering: None,
            cluster_starts: Vec::new(),
            label: "test".into(),
        };
        let reversed = custom((0..n).rev().map(ThreadIndex::from).collect());
        let sparse = custom(
            (0..n)
                .map(|i| (i * 7) % n)
                .filter(|i| i % 3 == 0)
                .map(ThreadIndex::from)
                .collect(),
        );
        vec![id, reversed, sparse]
    }

    /// The terrain's picks equal the scan's over the same grid for every value kind, metric
    /// (every combining rule, for the line rows), row kind, axis, region and level budget.
    fn check_terrain(p: &Profile, regions: &[Region]) {
        let mut checked = 0;
        for axis in axes(p) {
            for metric in 0..p.metrics().len() as u32 {
                for kind in ValueKind::ALL {
                    let values = Values::new(p.metrics(), Some(metric), Some(kind)).unwrap();
                    let row_sets = [
                        RowSet::events(p, MetricId(metric), kind, false, RowOrder::Rank),
                        RowSet::events(p, MetricId(metric), kind, true, RowOrder::Name),
                        RowSet::lines(p),
                    ];
                    for rows in &row_sets {
                        for budget in [1, 64, 1 << 20] {
                            let pyramid = build_pyramid(p, values, rows, &axis, budget);
                            let m = MatrixInput {
                                profile: p,
                                values,
                                rows,
                                axis: &axis,
                                pyramid: &pyramid,
                                first_row: 0,
                            };
                            for region in regions {
                                let t = terrain(&m, region, None, None);
                                let g = &t.grid;
                                let row_bins: Vec<Range<usize>> = g
                                    .rows
                                    .iter()
                                    .map(|b| b.first as usize..b.last as usize + 1)
                                    .collect();
                                let col_bins: Vec<Range<usize>> = g
                                    .cols
                                    .iter()
                                    .map(|b| b.first as usize..b.last as usize + 1)
                                    .collect();
                                let src = ProfileMatrix {
                                    profile: p,
                                    rows,
                                    axis: &axis.axis,
                                    kind,
                                    metric: MetricId(metric),
                                };
                                let expect: Vec<Option<CellPick>> = scan_picks(&src, &row_bins, &col_bins)
                                    .into_iter()
                                    .map(|c| {
                                        let (r, pos) = c?;
                                        Some(CellPick {
                                            event: rows.rows[r].events.first()?.0,
                                            thread: p.thread(axis.axis.order[pos]).to_string(),
                                        })
                                    })
                                    .collect();
                                assert_eq!(
                                    t.picks,
                                    expect,
                                    "metric {metric}, {kind:?}, {region:?}, budget {budget}, axis of {}",
                                    axis.axis.len()
                                );
                                checked += expect.iter().flatten().count();
                            }
                        }
                    }
                }
            }
        }
        assert!(checked > 1000, "{checked} picks checked");
    }

    fn region(r: (u32, u32), t: (u32, u32), h: u32, w: u32) -> Region {
        Region {
            r0: Some(r.0),
            r1: Some(r.1),
            t0: Some(t.0),
            t1: Some(t.1),
            h: Some(h),
            w: Some(w),
        }
    }

    #[test]
    fn terrain_picks_equal_the_scan_on_a_planted_profile() {
        let p = profile(37, 9);
        check_terrain(
            &p,
            &[
                Region::default(),
                region((0, 100), (0, 100), 3, 5),
                region((2, 9), (3, 30), 4, 7),
                region((1, 2), (5, 6), 1, 1),
                region((0, 100), (0, 100), 100, 100),
            ],
        );
    }

    #[test]
    fn terrain_picks_equal_the_scan_on_a_larger_profile() {
        let p = profile(1000, 40);
        check_terrain(
            &p,
            &[
                Region::default(),
                region((3, 40), (17, 900), 9, 33),
                region((0, 60), (0, 1000), 60, 128),
            ],
        );
    }
}
