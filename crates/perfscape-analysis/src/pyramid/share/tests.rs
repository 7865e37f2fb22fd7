//! A pyramid read from another's blocks answers as one built directly over the same rows and
//! positions (the oracle: [`Pyramid::build`] of a dense matrix of those rows and positions).

use super::super::tests::Unhinted;
use super::super::{DenseMatrix, MatrixSource, Pyramid, PyramidGrid, Reduce};
use super::same_first_level;
use crate::views::OverviewParams;
use proptest::prelude::*;

/// The dense matrix of rows `rows` of `m` (in that order) and its first `cols` positions.
fn cut(m: &DenseMatrix, rows: &[usize], cols: usize) -> DenseMatrix {
    let mut values = Vec::with_capacity(rows.len() * cols);
    for &r in rows {
        values.extend_from_slice(&m.values[r * m.cols..r * m.cols + cols]);
    }
    DenseMatrix {
        rows: rows.len(),
        cols,
        values,
    }
}

/// Every answer of `a` and `b` over `src` (a source of their rows and positions) is the same
/// bit for bit: grids of MAX and SUM over `regions`, the overview, the per-row figures and the
/// terrain's picks.
fn same_answers(
    a: &Pyramid,
    b: &Pyramid,
    src: &dyn MatrixSource,
    regions: &[(std::ops::Range<usize>, std::ops::Range<usize>, usize, usize)],
) -> Result<(), TestCaseError> {
    prop_assert_eq!(a.rows(), b.rows());
    prop_assert_eq!(a.cols(), b.cols());
    for r in 0..a.rows() {
        let bits = |p: &Pyramid| p.row_max(r).map(|(pos, v)| (pos, v.to_bits()));
        prop_assert_eq!(bits(a), bits(b), "row_max of row {}", r);
        prop_assert_eq!(a.row_is_empty(r), b.row_is_empty(r), "row {} empty", r);
    }
    let bits =
        |g: &PyramidGrid| -> Vec<Option<u64>> { g.values.iter().map(|v| v.map(f64::to_bits)).collect() };
    for (rr, cr, h, w) in regions {
        for reduce in [Reduce::Max, Reduce::Sum] {
            let ga = a.grid(src, rr.clone(), cr.clone(), *h, *w, reduce);
            let gb = b.grid(src, rr.clone(), cr.clone(), *h, *w, reduce);
            prop_assert_eq!(&ga.row_bins, &gb.row_bins);
            prop_assert_eq!(&ga.col_bins, &gb.col_bins);
            prop_assert_eq!(bits(&ga), bits(&gb), "{:?} over {:?} x {:?}", reduce, rr, cr);
            if reduce == Reduce::Max {
                let pa = a.max_picks(src, &ga.row_bins, &ga.col_bins, &ga.values);
                let pb = b.max_picks(src, &gb.row_bins, &gb.col_bins, &gb.values);
                prop_assert_eq!(pa, pb, "picks over {:?} x {:?}", rr, cr);
            }
        }
    }
    for (reduce, skip) in [(Reduce::Max, 1), (Reduce::Sum, 2)] {
        let params = OverviewParams {
            skip_empty_over: skip,
            bin: 2,
            reduce,
            strips: 2,
            max_cols: 5,
        };
        let (oa, ob) = (a.overview(src, params), b.overview(src, params));
        prop_assert_eq!(format!("{oa:?}"), format!("{ob:?}"));
    }
    Ok(())
}

/// Regions of a `rows` × `cols` matrix: the whole at several widths and a few windows.
fn regions(rows: usize, cols: usize) -> Vec<(std::ops::Range<usize>, std::ops::Range<usize>, usize, usize)> {
    vec![
        (0..rows, 0..cols, rows, cols),
        (0..rows, 0..cols, 3, 2),
        (0..rows, 0..cols, 1, 1),
        (rows / 3..rows, cols / 3..cols, 2, 3),
        (1..rows.max(1), 1..cols.saturating_sub(1), 4, 7),
    ]
}

/// Planted: 3 rows × 6 positions; the rows taken as [2, 0] (row 1 left out), the first 5
/// positions, and row 0 twice.
#[test]
fn planted_rows_in_another_order_and_the_first_positions() {
    let nan = f64::NAN;
    #[rustfmt::skip]
    let m = DenseMatrix {
        rows: 3,
        cols: 6,
        values: vec![
            1.0, 5.0, nan, 2.0, 0.0, 9.0, // row 0: largest 9 at position 5, else 5 at 1
            nan, nan, nan, nan, nan, nan, // row 1: no data
            0.0, -0.0, 3.0, 3.0, 7.0, 1.0, // row 2: largest 7 at 4, first 3 at 2
        ],
    };
    let base = Pyramid::build(&m, 1 << 20);
    // Rows [2, 0]: row 0 of the selection is row 2 of the base.
    let sel = base.select_rows(&[2, 0]).unwrap();
    assert_eq!(sel.rows(), 2);
    assert_eq!(sel.row_max(0), Some((4, 7.0)));
    assert_eq!(sel.row_max(1), Some((5, 9.0)));
    let src = cut(&m, &[2, 0], 6);
    // Worked out: MAX of positions [0, 4) row by row is 3 (row 2's) and 5 (row 0's); SUM 6, 8.
    let g = sel.grid(&src, 0..2, 0..4, 2, 1, Reduce::Max);
    assert_eq!(g.values, [Some(3.0), Some(5.0)]);
    let g = sel.grid(&src, 0..2, 0..4, 2, 1, Reduce::Sum);
    assert_eq!(g.values, [Some(6.0), Some(8.0)]);
    same_answers(&sel, &Pyramid::build(&src, 1 << 20), &src, &regions(2, 6)).unwrap();
    // A row twice and the empty row: the empty row stays empty.
    let sel = base.select_rows(&[0, 1, 0]).unwrap();
    assert!(sel.row_is_empty(1) && sel.row_max(1).is_none());
    let src = cut(&m, &[0, 1, 0], 6);
    same_answers(&sel, &Pyramid::build(&src, 1 << 20), &src, &regions(3, 6)).unwrap();
    assert!(base.select_rows(&[3]).is_none(), "no row 3");
    // The first 4 positions: row 0's largest is then 5 at 1, row 2's the first 3 at 2.
    let src = cut(&m, &[0, 1, 2], 4);
    let first = base.first_cols(&src, 4).unwrap();
    assert_eq!(first.row_max(0), Some((1, 5.0)));
    assert_eq!(first.row_max(2), Some((2, 3.0)));
    same_answers(&first, &Pyramid::build(&src, 1 << 20), &src, &regions(3, 4)).unwrap();
    // The first 2 positions of row 2 are zeros (of both signs): empty, largest the first zero.
    let src = cut(&m, &[0, 1, 2], 2);
    let first = base.first_cols(&src, 2).unwrap();
    assert!(first.row_is_empty(2));
    assert_eq!(
        first.row_max(2).map(|(p, v)| (p, v.to_bits())),
        Some((0, 0.0f64.to_bits()))
    );
    same_answers(&first, &Pyramid::build(&src, 1 << 20), &src, &regions(3, 2)).unwrap();
    assert!(
        base.first_cols(&src, 7).is_none(),
        "more positions than the pyramid's"
    );
}

/// A negative cell after a zero maximum makes a row not empty (the sum tells it).
#[test]
fn a_zero_maximum_with_a_negative_cell_is_not_empty() {
    let m = DenseMatrix {
        rows: 2,
        cols: 5,
        values: vec![0.0, -2.0, 0.0, 0.0, 4.0, 0.0, 0.0, -0.0, 0.0, 1.0],
    };
    let base = Pyramid::build(&m, 1 << 20);
    let src = cut(&m, &[0, 1], 4);
    let first = base.first_cols(&src, 4).unwrap();
    assert!(!first.row_is_empty(0));
    assert!(first.row_is_empty(1));
    same_answers(&first, &Pyramid::build(&src, 1 << 20), &src, &regions(2, 4)).unwrap();
}

/// Values on a few levels (ties), zeros of both signs, negative values and cells without data.
fn cell() -> impl Strategy<Value = f64> {
    prop_oneof![
        3 => (0u8..5).prop_map(f64::from),
        1 => Just(-0.0),
        1 => (1u8..4).prop_map(|v| -f64::from(v) * 0.5),
        1 => Just(f64::NAN),
        1 => 0.0f64..1e6,
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Any selection of rows (a subset, in any order, with repeats) and any first `n`
    /// positions, read from the pyramid of the whole, answer as a pyramid built over them.
    #[test]
    fn read_from_the_whole_equals_built_directly(
        rows in 1usize..9,
        cols in 1usize..40,
        cells in prop::collection::vec(cell(), 9 * 40),
        blank in prop::collection::vec(any::<bool>(), 9),
        pick in prop::collection::vec(0usize..9, 0..12),
        n in 0usize..40,
        budget in prop_oneof![Just(1usize), Just(7), Just(64), Just(1 << 20)],
        hinted in any::<bool>(),
    ) {
        let mut m = DenseMatrix { rows, cols, values: cells[..rows * cols].to_vec() };
        for r in (0..rows).filter(|&r| blank[r]) {
            m.values[r * cols..(r + 1) * cols].fill(f64::NAN);
        }
        let unhinted = Unhinted(&m);
        let whole: &dyn MatrixSource = if hinted { &m } else { &unhinted };
        let base = Pyramid::build(whole, budget);
        let stored = |d: &DenseMatrix| {
            if hinted { (0..d.rows).filter(|&r| d.row_may_have_data(r)).count() } else { d.rows }
        };
        // Rows: the picks, folded into the matrix's rows.
        let sel_rows: Vec<usize> = pick.iter().map(|&r| r % rows).collect();
        let sel = base.select_rows(&sel_rows).unwrap();
        let d = cut(&m, &sel_rows, cols);
        let (ud, dsrc): (Unhinted, &DenseMatrix) = (Unhinted(&d), &d);
        let src: &dyn MatrixSource = if hinted { dsrc } else { &ud };
        if same_first_level((stored(&m), cols), (stored(&d), cols), budget) {
            same_answers(&sel, &Pyramid::build(src, budget), src, &regions(d.rows, cols))?;
        } else {
            // MAX never depends on the first level.
            let direct = Pyramid::build(src, budget);
            for (rr, cr, h, w) in regions(d.rows, cols) {
                let a = sel.grid(src, rr.clone(), cr.clone(), h, w, Reduce::Max);
                let b = direct.grid(src, rr, cr, h, w, Reduce::Max);
                prop_assert_eq!(a, b);
            }
        }
        // Positions: the first n of every row.
        let n = n.min(cols);
        let all: Vec<usize> = (0..rows).collect();
        let d = cut(&m, &all, n);
        let ud = Unhinted(&d);
        let src: &dyn MatrixSource = if hinted { &d } else { &ud };
        let first = base.first_cols(src, n).unwrap();
        if same_first_level((stored(&m), cols), (stored(&m), n), budget) {
            same_answers(&first, &Pyramid::build(src, budget), src, &regions(rows, n))?;
        }
        // The per-row figures do not depend on the level.
        let direct = Pyramid::build(src, budget);
        for r in 0..rows {
            prop_assert_eq!(first.row_is_empty(r), direct.row_is_empty(r));
            let bits = |p: &Pyramid| p.row_max(r).map(|(pos, v)| (pos, v.to_bits()));
            prop_assert_eq!(bits(&first), bits(&direct));
        }
    }
}
