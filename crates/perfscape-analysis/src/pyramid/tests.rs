use super::*;
use crate::views::{OverviewRow, kept_segments};
use proptest::prelude::*;

fn dense(rows: usize, cols: usize, cells: &[f64]) -> DenseMatrix {
    DenseMatrix {
        rows,
        cols,
        values: cells[..rows * cols].to_vec(),
    }
}

/// `rows` × `cols` of `cells`, the rows where `blank` is true without data.
fn dense_blank(rows: usize, cols: usize, cells: &[f64], blank: &[bool]) -> DenseMatrix {
    let mut m = dense(rows, cols, cells);
    for (r, _) in blank.iter().enumerate().take(rows).filter(|(_, b)| **b) {
        m.values[r * cols..(r + 1) * cols].fill(f64::NAN);
    }
    m
}

/// A dense matrix that does not say which rows have no data (a pyramid stores every row).
pub(super) struct Unhinted<'a>(pub &'a DenseMatrix);

impl MatrixSource for Unhinted<'_> {
    fn n_rows(&self) -> usize {
        self.0.rows
    }
    fn n_cols(&self) -> usize {
        self.0.cols
    }
    fn for_each_in_row(&self, r: usize, f: &mut dyn FnMut(usize, f64)) {
        self.0.for_each_in_row(r, f);
    }
    fn get(&self, r: usize, pos: usize) -> Option<f64> {
        self.0.get(r, pos)
    }
}

#[allow(clippy::too_many_arguments)]
fn check(
    m: &DenseMatrix,
    hinted: bool,
    budget: usize,
    rr: Range<usize>,
    cr: Range<usize>,
    h: usize,
    w: usize,
    reduce: Reduce,
) -> Result<(), TestCaseError> {
    let unhinted = Unhinted(m);
    let src: &dyn MatrixSource = if hinted { m } else { &unhinted };
    let p = Pyramid::build(src, budget);
    let stored = (0..m.rows).filter(|&r| src.row_may_have_data(r)).count();
    prop_assert_eq!(p.stored_rows(), stored);
    prop_assert_eq!(
        p.heap_bytes(),
        Pyramid::estimated_heap_bytes(m.rows, stored, m.cols, budget)
    );
    let g = p.grid(src, rr, cr.clone(), h, w, reduce);
    prop_assert!(g.col_bins.len() <= w.max(1), "{} bins > {w}", g.col_bins.len());
    if !cr.is_empty() && cr.start < m.cols {
        prop_assert_eq!(g.col_bins.first().map(|b| b.start), Some(cr.start.min(m.cols)));
        prop_assert_eq!(g.col_bins.last().map(|b| b.end), Some(cr.end.min(m.cols)));
    }
    let expect = brute_force(m, &g.row_bins, &g.col_bins, reduce);
    for (i, (a, b)) in expect.iter().zip(&g.values).enumerate() {
        match (a, b) {
            (None, None) => {}
            (Some(a), Some(b)) => match reduce {
                Reduce::Max => prop_assert_eq!(a, b, "cell {}", i),
                Reduce::Sum => prop_assert!(
                    (a - b).abs() <= 1e-9 * a.abs().max(1.0),
                    "cell {}: {} vs {}",
                    i,
                    a,
                    b
                ),
            },
            _ => prop_assert!(false, "cell {}: {:?} vs {:?}", i, a, b),
        }
    }
    Ok(())
}

proptest! {
    #[test]
    fn pyramid_equals_brute_force(
        rows in 1usize..6, cols in 1usize..300,
        cells in proptest::collection::vec(prop_oneof![4 => -1e6f64..1e9, 1 => Just(f64::NAN)], 6 * 300),
        blank in proptest::collection::vec(prop_oneof![3 => Just(false), 1 => Just(true)], 6),
        budget in prop_oneof![Just(1usize), Just(40), Just(1 << 20)],
        a in 0usize..300, b in 0usize..300, h in 1usize..8, w in 1usize..50, sum in any::<bool>(), hinted in any::<bool>(),
    ) {
        let m = dense_blank(rows, cols, &cells, &blank);
        let (t0, t1) = (a.min(b), a.max(b) + 1);
        check(&m, hinted, budget, 0..rows, t0..t1, h, w, if sum { Reduce::Sum } else { Reduce::Max })?;
    }
}

proptest! {
    #[test]
    fn overview_from_the_pyramid_equals_brute_force(
        rows in 1usize..30, cols in 1usize..70, skip in 0usize..5, bin in 1usize..4, strips in 1usize..4, w in 1usize..20,
        cells in proptest::collection::vec(prop_oneof![2 => Just(0.0f64), 2 => 0.0f64..1e6, 1 => Just(f64::NAN)], 30 * 70),
        blank in proptest::collection::vec(any::<bool>(), 30),
        sum in any::<bool>(),
    ) {
        let m = dense_blank(rows, cols, &cells, &blank);
        let pyr = Pyramid::build(&m, 64);
        let reduce = if sum { Reduce::Sum } else { Reduce::Max };
        let ov = pyr.overview(&m, OverviewParams { skip_empty_over: skip, bin, reduce, strips, max_cols: w });
        let all: Vec<&OverviewRow> = ov.strips.iter().flatten().collect();
        // Rows kept and skipped as the brute-force rule says.
        let empty: Vec<bool> = (0..rows).map(|r| m.values[r * cols..(r + 1) * cols].iter().all(|v| v.is_nan() || *v == 0.0)).collect();
        let (segments, skipped) = kept_segments(&empty, skip);
        prop_assert_eq!(ov.skipped_rows, skipped);
        prop_assert_eq!(all.len(), segments.iter().map(|(_, s)| s.len().div_ceil(bin)).sum::<usize>());
        for row in &all {
            let expect = brute_force(&m, std::slice::from_ref(&(row.first..row.last + 1)), &ov.col_bins, reduce);
            for (a, b) in expect.iter().zip(&row.values) {
                match (a, b) {
                    (None, None) => {}
                    (Some(a), Some(b)) => prop_assert!((a - b).abs() <= 1e-9 * a.abs().max(1.0)),
                    _ => prop_assert!(false, "{:?} vs {:?}", a, b),
                }
            }
        }
    }
}

#[test]
fn row_max_is_the_largest_cell() {
    let m = dense(
        2,
        5,
        &[
            1.0,
            9.0,
            3.0,
            9.0,
            f64::NAN,
            f64::NAN,
            f64::NAN,
            f64::NAN,
            f64::NAN,
            f64::NAN,
        ],
    );
    let p = Pyramid::build(&m, 1 << 20);
    assert_eq!(p.row_max(0), Some((1, 9.0)));
    assert_eq!(p.row_max(1), None);
}

#[test]
fn a_screen_request_touches_few_blocks() {
    // 2^20 columns: the answer for 256 columns comes from level 12 directly.
    let cols = 1 << 20;
    let m = DenseMatrix {
        rows: 2,
        cols,
        values: (0..2 * cols).map(|i| (i % 977) as f64).collect(),
    };
    let p = Pyramid::build(&m, 1 << 22);
    let g = p.grid(&m, 0..2, 0..cols, 2, 256, Reduce::Max);
    assert_eq!((g.level, g.col_bins.len()), (12, 256));
    assert_eq!(g.values[0], Some(976.0));
}

proptest! {
    /// Each row's largest cell (first position on ties, the cell's own zero sign) and whether it
    /// has a value other than zero, as a scan of the row finds them, for every level budget.
    #[test]
    fn row_figures_equal_a_scan_of_the_row(
        rows in 1usize..6, cols in 1usize..200,
        cells in proptest::collection::vec(
            prop_oneof![2 => Just(f64::NAN), 2 => Just(0.0f64), 1 => Just(-0.0f64), 2 => (0u8..3).prop_map(f64::from), 1 => -1e3f64..1e3],
            6 * 200,
        ),
        blank in proptest::collection::vec(any::<bool>(), 6),
        budget in prop_oneof![Just(1usize), Just(7), Just(1 << 20)], hinted in any::<bool>(),
    ) {
        let m = dense_blank(rows, cols, &cells, &blank);
        let unhinted = Unhinted(&m);
        let src: &dyn MatrixSource = if hinted { &m } else { &unhinted };
        let p = Pyramid::build(src, budget);
        for r in 0..rows {
            let row = &m.values[r * cols..(r + 1) * cols];
            let mut best: Option<(usize, f64)> = None;
            for (pos, &v) in row.iter().enumerate() {
                if !v.is_nan() && best.is_none_or(|(_, b)| v > b) {
                    best = Some((pos, v));
                }
            }
            let got = p.row_max(r);
            prop_assert_eq!(got.map(|(pos, v)| (pos, v.to_bits())), best.map(|(pos, v)| (pos, v.to_bits())), "row {}", r);
            prop_assert_eq!(p.row_is_empty(r), row.iter().all(|v| v.is_nan() || *v == 0.0), "row {}", r);
        }
    }
}
