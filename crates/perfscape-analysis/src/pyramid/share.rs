//! Pyramids read from another pyramid's stored blocks instead of built: the rows of any order
//! and subset of a source's rows ([`Pyramid::select_rows`]), and the first `n` thread
//! positions ([`Pyramid::first_cols`]).
//!
//! A row's blocks depend only on the row's own cells, so a pyramid over rows `rows` of a
//! source holds, row for row, the blocks of the source's pyramid: a new slot table (which
//! stored row each row reads) and the per-row figures, permuted, make it, in `O(rows)`, the
//! levels shared. Likewise the aligned blocks of positions `[0, n)` are the same whatever
//! follows position `n`, and every read of a pyramid of `n` positions stays within `[0, n)`
//! (a bin clipped at `n` is decomposed into aligned blocks within it), so a pyramid of the
//! first `n` positions of an axis is the whole axis's pyramid read up to `n`; only the per-row
//! largest cell and "has a value other than zero" are worked out again, from the blocks.
//!
//! The answers equal those of a pyramid built directly ([`Pyramid::build`]) over the same
//! rows and positions when both have the same first stored level ([`same_first_level`]): MAX
//! bit for bit always, SUM too because its blocks are then added in the same order.

use super::{MatrixSource, Pyramid, Reduce, first_level};

/// True when a pyramid of `stored_a` rows with data × `cols_a` positions and one of `stored_b`
/// × `cols_b`, both built with `max_level_cells`, have the same first stored level: the
/// condition under which a pyramid read from the other ([`Pyramid::select_rows`],
/// [`Pyramid::first_cols`]) sums its blocks as the one built directly would.
pub fn same_first_level(
    (stored_a, cols_a): (usize, usize),
    (stored_b, cols_b): (usize, usize),
    max_level_cells: usize,
) -> bool {
    let level = |stored, cols: usize| (cols > 1).then(|| first_level(stored, cols, max_level_cells));
    match (level(stored_a, cols_a), level(stored_b, cols_b)) {
        (Some(a), Some(b)) => a == b,
        // A pyramid of at most one position stores no level: nothing to share.
        _ => false,
    }
}

impl Pyramid {
    /// The pyramid of rows `rows` of this pyramid's source, in that order (a row may appear
    /// more than once, or not at all): its row `i` is this pyramid's row `rows[i]`, its levels
    /// this pyramid's (shared, not copied). Cost `O(rows.len())`. `None` when an index is not
    /// a row of this pyramid.
    ///
    /// Ask it with a source whose row `i` has the cells of this pyramid's source's row
    /// `rows[i]` (e.g. a [`super::ProfileMatrix`] of the same events in another order).
    pub fn select_rows(&self, rows: &[usize]) -> Option<Pyramid> {
        if rows.iter().any(|&r| r >= self.rows) {
            return None;
        }
        Some(Pyramid {
            rows: rows.len(),
            cols: self.cols,
            levels: self.levels.clone(),
            slots: rows.iter().map(|&r| self.slots[r]).collect(),
            row_max: rows.iter().map(|&r| self.row_max[r]).collect(),
            row_nonzero: rows.iter().map(|&r| self.row_nonzero[r]).collect(),
        })
    }

    /// The pyramid of the first `n` positions of this pyramid's source, read from its levels
    /// (shared). `src` is the source of those `n` positions alone: its row `r` has this
    /// pyramid's source's cells of row `r` at positions `[0, n)` (e.g. the first `n` threads of
    /// the axis this pyramid was built over). Cost per row: a few blocks and the cells of one
    /// block of the first stored level, for its largest cell. `None` when `n` is more than
    /// this pyramid's positions or `src` does not have `n` positions and the same rows.
    pub fn first_cols(&self, src: &dyn MatrixSource, n: usize) -> Option<Pyramid> {
        if n > self.cols || src.n_cols() != n || src.n_rows() != self.rows {
            return None;
        }
        let mut cut = Pyramid {
            rows: self.rows,
            cols: n,
            levels: self.levels.clone(),
            slots: self.slots.clone(),
            row_max: vec![None; self.rows],
            row_nonzero: vec![false; self.rows],
        };
        for r in 0..self.rows {
            let max = cut.range(src, r, 0..n, Reduce::Max);
            if max.is_nan() {
                continue; // no data in the first n positions
            }
            // The first position holding the largest value, and that cell's own value (a zero
            // of either sign, as a direct build keeps it).
            cut.row_max[r] = cut
                .first_max(src, r..r + 1, 0..n, max)
                .and_then(|(_, p)| Some((p, src.get(r, p)?)));
            // A value other than zero: the largest is not zero, or it is and some cell is
            // negative — then the sum of the cells, all at most zero, is below zero (a sum of
            // numbers at most zero is zero only when every one is).
            cut.row_nonzero[r] = max != 0.0 || cut.range(src, r, 0..n, Reduce::Sum) < 0.0;
        }
        Some(cut)
    }
}

#[cfg(test)]
mod tests;
