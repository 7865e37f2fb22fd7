//! Max/sum pyramids of a rows × threads matrix, so that any screen-sized request is answered
//! in time that does not grow with the number of threads.
//!
//! Level `k` reduces blocks of `2^k` consecutive thread positions of every row, by MAX (no hot
//! spot disappears when zoomed out: seed 000's complaint about subsampling) and by SUM. A
//! request for thread positions `[t0, t1)` at `w` columns uses column bins of `f = 2^k`
//! positions aligned to multiples of `f` (the first and last bins are clipped to the region), so
//! each interior bin is exactly one block of level `k` and the clipped edge bins decompose into
//! at most `2k` aligned blocks of finer levels. Rows are binned on the fly (`ceil(n / h)`
//! consecutive rows per bin). The answer is exactly the brute-force reduction over the same
//! bins (MAX bit-for-bit; SUM up to floating-point reassociation), at a cost of
//! `O(rows in region × (w + log T))`.
//!
//! Only levels whose size stays under a cell budget are stored; finer blocks are read from the
//! source itself (cheap, because such blocks are short).

use crate::views::{Overview, OverviewParams, Reduce, bins};
use perfscape_model::{Combine, Combiner, MetricId, Profile, ValueKind};
use rayon::prelude::*;
use std::ops::Range;
use std::sync::Arc;

use crate::views::{Row, RowSet, ThreadAxis};

mod pick;
mod share;
pub use share::same_first_level;

/// Where the matrix values come from: rows × thread positions (in display order).
pub trait MatrixSource: Sync {
    /// Number of rows.
    fn n_rows(&self) -> usize;
    /// Number of thread positions.
    fn n_cols(&self) -> usize;
    /// Calls `f(position, value)` for every cell of row `r` that has data (any order).
    fn for_each_in_row(&self, r: usize, f: &mut dyn FnMut(usize, f64));
    /// The value of one cell, if it has data.
    fn get(&self, r: usize, pos: usize) -> Option<f64>;
    /// Writes row `r` into `row` (`n_cols` long): each cell's value, NaN where it has no data.
    /// The default goes through [`MatrixSource::for_each_in_row`]; sources override it to skip
    /// a call per cell.
    fn fill_row(&self, r: usize, row: &mut [f64]) {
        fill_row_by_cells(self, r, row);
    }
    /// False when row `r` has no cell with data, known without reading it (a [`Pyramid`]
    /// then stores nothing for the row); true when it may have some. The default says true.
    fn row_may_have_data(&self, r: usize) -> bool {
        let _ = r;
        true
    }
    /// The reduction of row `r` over positions `range` (NaN when no cell has data). The
    /// default reads cell by cell; dense sources override it with a slice scan.
    fn fold_range(&self, r: usize, range: Range<usize>, reduce: Reduce) -> f64 {
        let mut acc = f64::NAN;
        for p in range {
            if let Some(v) = self.get(r, p) {
                acc = combine(acc, v, reduce);
            }
        }
        acc
    }
}

/// [`MatrixSource::fill_row`] through [`MatrixSource::for_each_in_row`], a call per cell.
fn fill_row_by_cells<S: MatrixSource + ?Sized>(src: &S, r: usize, row: &mut [f64]) {
    row.fill(f64::NAN);
    src.for_each_in_row(r, &mut |p, v| row[p] = v);
}

/// A profile seen as a matrix: rows of a [`RowSet`] × threads of a [`ThreadAxis`], one value
/// kind of one metric. A row with several events (a source line) combines them per thread
/// under the metric's rule (a sum for calls, subcalls and metrics that add up; else the
/// minimum, maximum, mean, or NaN when not combinable).
pub struct ProfileMatrix<'a> {
    /// The profile.
    pub profile: &'a Profile,
    /// Rows.
    pub rows: &'a RowSet,
    /// Thread order.
    pub axis: &'a ThreadAxis,
    /// Value kind.
    pub kind: ValueKind,
    /// Metric.
    pub metric: MetricId,
}

impl ProfileMatrix<'_> {
    /// How the events of a row combine per thread.
    fn rule(&self) -> Combine {
        if self.kind.is_metric_independent() {
            Combine::Sum
        } else {
            self.profile.metric(self.metric).combine
        }
    }
}

/// True when some event of `row` has a cell on some thread: a row of a [`ProfileMatrix`]
/// without any has no data on any axis ([`MatrixSource::row_may_have_data`]).
pub fn row_has_cells(profile: &Profile, row: &Row) -> bool {
    row.events.iter().any(|&e| !profile.interval(e).is_empty())
}

/// How many of `rows` a pyramid of a [`ProfileMatrix`] over them stores ([`row_has_cells`]):
/// the `stored` of [`Pyramid::estimated_heap_bytes`].
pub fn rows_with_cells(profile: &Profile, rows: &[Row]) -> usize {
    rows.iter().filter(|row| row_has_cells(profile, row)).count()
}

impl MatrixSource for ProfileMatrix<'_> {
    fn n_rows(&self) -> usize {
        self.rows.len()
    }
    fn row_may_have_data(&self, r: usize) -> bool {
        row_has_cells(self.profile, &self.rows.rows[r])
    }
    fn n_cols(&self) -> usize {
        self.axis.len()
    }
    fn for_each_in_row(&self, r: usize, f: &mut dyn FnMut(usize, f64)) {
        let events = &self.rows.rows[r].events;
        if events.len() == 1 {
            let col = self.profile.interval(events[0]);
            for (t, &v) in col.threads().iter().zip(col.values(self.kind, self.metric)) {
                if let Some(p) = self.axis.position(*t) {
                    f(p, v);
                }
            }
            return;
        }
        // Several events on one row (a source line): combine per thread first.
        let rule = self.rule();
        let mut acc: std::collections::BTreeMap<usize, Combiner> = std::collections::BTreeMap::new();
        for &e in events {
            let col = self.profile.interval(e);
            for (t, &v) in col.threads().iter().zip(col.values(self.kind, self.metric)) {
                if let Some(p) = self.axis.position(*t) {
                    acc.entry(p).or_insert_with(|| Combiner::new(rule)).push(v);
                }
            }
        }
        for (p, c) in acc {
            f(p, c.finish().unwrap_or(f64::NAN));
        }
    }
    fn fill_row(&self, r: usize, row: &mut [f64]) {
        let events = &self.rows.rows[r].events;
        if events.len() != 1 {
            // A source line: its events combined per thread first.
            return fill_row_by_cells(self, r, row);
        }
        row.fill(f64::NAN);
        let col = self.profile.interval(events[0]);
        for (t, &v) in col.threads().iter().zip(col.values(self.kind, self.metric)) {
            if let Some(p) = self.axis.position(*t) {
                row[p] = v;
            }
        }
    }
    fn get(&self, r: usize, pos: usize) -> Option<f64> {
        let t = *self.axis.order.get(pos)?;
        let mut c = Combiner::new(self.rule());
        for &e in &self.rows.rows[r].events {
            if let Some(v) = self.profile.value(e, t, self.kind, self.metric) {
                c.push(v);
            }
        }
        (c.count() > 0).then(|| c.finish().unwrap_or(f64::NAN))
    }
}

/// Rows `rows` of a source as a source of their own: its row `r` is the source's row
/// `rows.start + r`. A pyramid of a window answers requests about those rows alone, at the cost
/// of reading only them ([`crate::answers::build_window_pyramid`]).
pub struct RowWindow<'a> {
    /// The whole source.
    pub src: &'a dyn MatrixSource,
    /// The rows of `src` seen (clamped to its rows by the caller).
    pub rows: Range<usize>,
}

impl MatrixSource for RowWindow<'_> {
    fn n_rows(&self) -> usize {
        self.rows.len()
    }
    fn n_cols(&self) -> usize {
        self.src.n_cols()
    }
    fn for_each_in_row(&self, r: usize, f: &mut dyn FnMut(usize, f64)) {
        self.src.for_each_in_row(self.rows.start + r, f);
    }
    fn row_may_have_data(&self, r: usize) -> bool {
        self.src.row_may_have_data(self.rows.start + r)
    }
    fn get(&self, r: usize, pos: usize) -> Option<f64> {
        self.src.get(self.rows.start + r, pos)
    }
    fn fold_range(&self, r: usize, range: Range<usize>, reduce: Reduce) -> f64 {
        self.src.fold_range(self.rows.start + r, range, reduce)
    }
    fn fill_row(&self, r: usize, row: &mut [f64]) {
        self.src.fill_row(self.rows.start + r, row);
    }
}

/// A dense in-memory matrix (NaN = no data), for synthetic benchmarks and tests.
#[derive(Clone, Debug)]
pub struct DenseMatrix {
    /// Rows.
    pub rows: usize,
    /// Columns.
    pub cols: usize,
    /// Values, row-major, NaN where a cell has no data.
    pub values: Vec<f64>,
}

impl MatrixSource for DenseMatrix {
    fn n_rows(&self) -> usize {
        self.rows
    }
    fn n_cols(&self) -> usize {
        self.cols
    }
    fn row_may_have_data(&self, r: usize) -> bool {
        self.values[r * self.cols..(r + 1) * self.cols]
            .iter()
            .any(|v| !v.is_nan())
    }
    fn for_each_in_row(&self, r: usize, f: &mut dyn FnMut(usize, f64)) {
        for (p, &v) in self.values[r * self.cols..(r + 1) * self.cols].iter().enumerate() {
            if !v.is_nan() {
                f(p, v);
            }
        }
    }
    fn get(&self, r: usize, pos: usize) -> Option<f64> {
        self.values
            .get(r * self.cols + pos)
            .copied()
            .filter(|v| !v.is_nan())
    }
}

/// One stored level: blocks of `2^log2` positions; NaN = no data in the block.
#[derive(Clone, Debug)]
struct Level {
    log2: u32,
    cols: usize,
    max: Vec<f64>,
    sum: Vec<f64>,
}

/// Default budget of stored cells per level (each costs 16 bytes: max and sum): 2^24 cells,
/// 256 MiB for the first stored level, about twice that for all levels.
pub const DEFAULT_LEVEL_CELLS: usize = 1 << 24;

/// The pyramid of one matrix source (see the module documentation).
#[derive(Clone, Debug)]
pub struct Pyramid {
    rows: usize,
    cols: usize,
    /// The stored levels, shared by the pyramids of other rows of the same source
    /// ([`Pyramid::select_rows`]).
    levels: Arc<Vec<Level>>,
    /// Per row: its index among the stored rows of the levels, or [`NO_SLOT`] for a row
    /// without data (nothing stored).
    slots: Vec<u32>,
    row_max: Vec<Option<(usize, f64)>>,
    row_nonzero: Vec<bool>,
}

/// The slot of a row without stored blocks.
const NO_SLOT: u32 = u32::MAX;

/// Heap bytes per row of a pyramid: its largest cell (24), whether it has a value other than
/// zero (1) and its slot (4).
const PER_ROW_BYTES: usize = 29;

/// The first stored level for `stored` rows × `cols` positions: the smallest `k >= 1` whose
/// `stored × ceil(cols / 2^k)` cells fit `max_level_cells` (or whose block covers every
/// position).
fn first_level(stored: usize, cols: usize, max_level_cells: usize) -> u32 {
    let mut first = 1u32;
    while stored.saturating_mul(cols.div_ceil(1 << first)) > max_level_cells && (1usize << first) < cols {
        first += 1;
    }
    first
}

/// Reduces `row` (NaN = no data) into blocks of `width` positions: `mx` and `sm` get each
/// block's MAX and SUM (NaN for a block without data). True when the row has a value other
/// than zero. One branch-free pass: `f64::max` ignores a NaN operand; the sum adds 0 for a
/// cell without data and is NaN when no cell of the block has any.
fn reduce_row(row: &[f64], width: usize, mx: &mut [f64], sm: &mut [f64]) -> bool {
    let mut nz = false;
    for ((block, m_out), s_out) in row.chunks(width).zip(mx.iter_mut()).zip(sm.iter_mut()) {
        let (mut m, mut s, mut any) = (f64::NAN, 0.0, false);
        for &v in block {
            m = m.max(v);
            s += if v.is_nan() { 0.0 } else { v };
            any |= !v.is_nan();
            nz |= (v != 0.0) & !v.is_nan();
        }
        *m_out = m;
        *s_out = if any { s } else { f64::NAN };
    }
    nz
}

/// [`largest`] of `row` from its blocks' MAX `mx` (blocks of `width` positions): the largest
/// block MAX, the first block holding it, the first position of that block holding it. The
/// value returned is the cell's own (of either sign for a zero), as [`largest`] gives it.
fn largest_by_blocks(row: &[f64], width: usize, mx: &[f64]) -> Option<(usize, f64)> {
    let m = mx.iter().copied().fold(f64::NAN, f64::max);
    if m.is_nan() {
        return None;
    }
    let b = mx.iter().position(|&x| x == m)?;
    let start = b * width;
    let end = (start + width).min(row.len());
    (start..end).find(|&p| row[p] == m).map(|p| (p, row[p]))
}

/// The largest value of `row` that is not NaN and its position (the first on ties).
fn largest(row: &[f64]) -> Option<(usize, f64)> {
    let mut best: Option<(usize, f64)> = None;
    for (p, &v) in row.iter().enumerate() {
        if !v.is_nan() && best.is_none_or(|(_, bv)| v > bv) {
            best = Some((p, v));
        }
    }
    best
}

/// Combines two partial reductions; NaN stands for "no data".
pub fn combine(a: f64, b: f64, reduce: Reduce) -> f64 {
    match (a.is_nan(), b.is_nan()) {
        (true, _) => b,
        (_, true) => a,
        _ => match reduce {
            Reduce::Max => a.max(b),
            Reduce::Sum => a + b,
        },
    }
}

/// A column bin of a pyramid answer: thread positions `[start, end)`.
pub type ColBin = Range<usize>;

/// A reduced region of the matrix.
#[derive(Clone, Debug, PartialEq)]
pub struct PyramidGrid {
    /// Row bins (row positions).
    pub row_bins: Vec<Range<usize>>,
    /// Column bins (thread positions), aligned to multiples of `2^level` except at the edges.
    pub col_bins: Vec<ColBin>,
    /// The level used for interior bins (bin width `2^level`).
    pub level: u32,
    /// Values row-major, `None` = no data.
    pub values: Vec<Option<f64>>,
}

impl Pyramid {
    /// Builds the pyramid of `src`, storing levels of at most `max_level_cells` cells, for the
    /// rows that may have data ([`MatrixSource::row_may_have_data`]) only.
    ///
    /// Cost: one pass over the cells of those rows plus the stored levels.
    pub fn build(src: &dyn MatrixSource, max_level_cells: usize) -> Self {
        let rows = src.n_rows();
        let cols = src.n_cols();
        // The rows stored: those that may have data, in order.
        let with_data: Vec<usize> = (0..rows).filter(|&r| src.row_may_have_data(r)).collect();
        let mut slots = vec![NO_SLOT; rows];
        for (i, &r) in with_data.iter().enumerate() {
            slots[r] = i as u32;
        }
        let stored = with_data.len();
        // Per stored row: its largest cell and whether it has a value other than zero.
        let mut best: Vec<Option<(usize, f64)>> = vec![None; stored];
        let mut nonzero = vec![false; stored];
        let mut levels = Vec::new();
        if cols > 1 {
            let first = first_level(stored, cols, max_level_cells);
            let c = cols.div_ceil(1 << first);
            let mut max = vec![0.0; stored * c];
            let mut sum = vec![0.0; stored * c];
            // Rows are independent: one task per row, each reducing its row in position order,
            // so the result does not depend on the number of workers. A row is read whole
            // into a buffer (NaN = no data), then reduced block by block in one pass.
            let width = 1usize << first;
            max.par_chunks_mut(c)
                .zip(sum.par_chunks_mut(c))
                .zip(best.par_iter_mut().zip(nonzero.par_iter_mut()))
                .enumerate()
                .for_each_init(
                    || vec![f64::NAN; cols],
                    |row, (i, ((mx, sm), (best, nz)))| {
                        src.fill_row(with_data[i], row);
                        *nz = reduce_row(row, width, mx, sm);
                        *best = largest_by_blocks(row, width, mx);
                    },
                );
            levels.push(Level {
                log2: first,
                cols: c,
                max,
                sum,
            });
            while let Some(prev) = levels.last().filter(|l| l.cols > 1) {
                let c2 = prev.cols.div_ceil(2);
                let mut max = vec![f64::NAN; stored * c2];
                let mut sum = vec![f64::NAN; stored * c2];
                let halve = |dst: &mut [f64], row: &[f64], reduce: Reduce| {
                    for (b, d) in dst.iter_mut().enumerate() {
                        *d = match row.get(2 * b + 1) {
                            Some(&x1) => combine(row[2 * b], x1, reduce),
                            None => row[2 * b],
                        };
                    }
                };
                max.par_chunks_mut(c2)
                    .zip(prev.max.par_chunks(prev.cols))
                    .for_each(|(d, s)| halve(d, s, Reduce::Max));
                sum.par_chunks_mut(c2)
                    .zip(prev.sum.par_chunks(prev.cols))
                    .for_each(|(d, s)| halve(d, s, Reduce::Sum));
                let log2 = prev.log2 + 1;
                levels.push(Level {
                    log2,
                    cols: c2,
                    max,
                    sum,
                });
            }
        } else {
            let mut row = vec![f64::NAN; cols];
            for (i, (best, nz)) in best.iter_mut().zip(nonzero.iter_mut()).enumerate() {
                src.fill_row(with_data[i], &mut row);
                *nz = row.iter().any(|&v| v != 0.0 && !v.is_nan());
                *best = largest(&row);
            }
        }
        let mut row_max = vec![None; rows];
        let mut row_nonzero = vec![false; rows];
        for (i, &r) in with_data.iter().enumerate() {
            row_max[r] = best[i];
            row_nonzero[r] = nonzero[i];
        }
        Pyramid {
            rows,
            cols,
            levels: Arc::new(levels),
            slots,
            row_max,
            row_nonzero,
        }
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Number of thread positions.
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// The bytes [`Pyramid::heap_bytes`] will report for a pyramid of `rows` × `cols` of which
    /// `stored` rows may have data, built with `max_level_cells`, known before building it.
    pub fn estimated_heap_bytes(rows: usize, stored: usize, cols: usize, max_level_cells: usize) -> usize {
        let mut bytes = rows.saturating_mul(PER_ROW_BYTES);
        if cols > 1 {
            let mut c = cols.div_ceil(1 << first_level(stored, cols, max_level_cells));
            loop {
                bytes = bytes.saturating_add(stored.saturating_mul(c).saturating_mul(16));
                if c <= 1 {
                    break;
                }
                c = c.div_ceil(2);
            }
        }
        bytes
    }

    /// Bytes held by the stored levels and the per-row figures (the levels counted whole, also
    /// when shared with another pyramid: [`Pyramid::select_rows`]).
    pub fn heap_bytes(&self) -> usize {
        self.levels
            .iter()
            .map(|l| (l.max.capacity() + l.sum.capacity()) * 8)
            .sum::<usize>()
            + self.rows * PER_ROW_BYTES
    }

    /// The number of rows whose blocks are stored (those that may have data).
    pub fn stored_rows(&self) -> usize {
        self.slots.iter().filter(|&&s| s != NO_SLOT).count()
    }

    /// The largest value of row `r` and its position (lowest position on ties).
    pub fn row_max(&self, r: usize) -> Option<(usize, f64)> {
        self.row_max.get(r).copied().flatten()
    }

    /// True when row `r` has no value, or only zeros, on every thread.
    pub fn row_is_empty(&self, r: usize) -> bool {
        !self.row_nonzero.get(r).copied().unwrap_or(false)
    }

    /// The overview of seed 000 (see [`crate::views::overview`], which computes the same by
    /// brute force) from the pyramid: cost `O(rows × max_cols)`, independent of the threads.
    pub fn overview(&self, src: &dyn MatrixSource, p: OverviewParams) -> Overview {
        let empty: Vec<bool> = (0..self.rows).map(|r| self.row_is_empty(r)).collect();
        // The thread bins depend on the threads only: those of a grid of no rows.
        let col_bins = self
            .grid(src, 0..0, 0..self.cols, 1, p.max_cols, p.reduce)
            .col_bins;
        Overview::assemble(&empty, &p, col_bins, |first, last| {
            self.grid(src, first..last + 1, 0..self.cols, 1, p.max_cols, p.reduce)
                .values
        })
    }

    /// The index of row `r` among the stored rows; `None` for a row without data.
    fn slot(&self, r: usize) -> Option<usize> {
        self.slots
            .get(r)
            .copied()
            .filter(|&s| s != NO_SLOT)
            .map(|s| s as usize)
    }

    /// The stored level of blocks of `2^k` positions, if stored (the stored levels are
    /// consecutive from the first).
    fn level(&self, k: u32) -> Option<&Level> {
        let first = self.levels.first()?.log2;
        self.levels
            .get(k.checked_sub(first)? as usize)
            .filter(|l| l.log2 == k)
    }

    /// Reduction of row `r` over the aligned block `[b << k, (b + 1) << k)`.
    fn block(&self, src: &dyn MatrixSource, r: usize, k: u32, b: usize, reduce: Reduce) -> f64 {
        let Some(slot) = self.slot(r) else {
            return f64::NAN; // a row without data
        };
        if let Some(l) = self.level(k) {
            let arr = match reduce {
                Reduce::Max => &l.max,
                Reduce::Sum => &l.sum,
            };
            return arr.get(slot * l.cols + b).copied().unwrap_or(f64::NAN);
        }
        let start = b << k;
        let end = ((b + 1) << k).min(self.cols);
        if k == 0 || self.levels.first().is_none_or(|l| k < l.log2) {
            // Below the stored levels: read the source.
            return src.fold_range(r, start..end, reduce);
        }
        f64::NAN
    }

    /// Reduction of row `r` over any range of positions: aligned blocks, largest first.
    fn range(&self, src: &dyn MatrixSource, r: usize, range: Range<usize>, reduce: Reduce) -> f64 {
        let mut acc = f64::NAN;
        if self.slot(r).is_none() {
            return acc; // a row without data
        }
        let mut p = range.start;
        let end = range.end.min(self.cols);
        while p < end {
            // Largest aligned block starting at p that fits.
            let k = pick::aligned_log2(p, end);
            // Use stored levels only for blocks at or above the first stored level; finer ones
            // come from the source (one `get` per position, at most 2^first - 1 of them).
            acc = combine(acc, self.block(src, r, k, p >> k, reduce), reduce);
            p += 1usize << k;
        }
        acc
    }

    /// Reduces rows `row_range` × positions `col_range` to at most `max_rows` × about
    /// `max_cols` cells (see the module documentation for the bins). `src` must be the source
    /// the pyramid was built from.
    #[allow(clippy::too_many_arguments)]
    pub fn grid(
        &self,
        src: &dyn MatrixSource,
        row_range: Range<usize>,
        col_range: Range<usize>,
        max_rows: usize,
        max_cols: usize,
        reduce: Reduce,
    ) -> PyramidGrid {
        let row_range = row_range.start.min(self.rows)..row_range.end.min(self.rows);
        let col_range = col_range.start.min(self.cols)..col_range.end.min(self.cols);
        let row_bins = bins(row_range, max_rows);
        // Smallest power of two f such that the aligned bins covering the region are <= max_cols.
        let max_cols = max_cols.max(1);
        let mut level = 0u32;
        let n_bins = |k: u32| {
            if col_range.is_empty() {
                0
            } else {
                ((col_range.end - 1) >> k) - (col_range.start >> k) + 1
            }
        };
        while n_bins(level) > max_cols {
            level += 1;
        }
        let col_bins: Vec<ColBin> = if col_range.is_empty() {
            Vec::new()
        } else {
            ((col_range.start >> level)..=((col_range.end - 1) >> level))
                .map(|b| (b << level).max(col_range.start)..((b + 1) << level).min(col_range.end))
                .collect()
        };
        let nc = col_bins.len();
        let mut values = vec![None; row_bins.len() * nc];
        for (ri, rb) in row_bins.iter().enumerate() {
            for (ci, cb) in col_bins.iter().enumerate() {
                let aligned = cb.start % (1 << level) == 0 && cb.len() == (1 << level);
                let mut acc = f64::NAN;
                for r in rb.clone() {
                    let v = if aligned {
                        let direct = level == 0 || self.level(level).is_some();
                        if direct {
                            self.block(src, r, level, cb.start >> level, reduce)
                        } else {
                            self.range(src, r, cb.clone(), reduce)
                        }
                    } else {
                        self.range(src, r, cb.clone(), reduce)
                    };
                    acc = combine(acc, v, reduce);
                }
                values[ri * nc + ci] = (!acc.is_nan()).then_some(acc);
            }
        }
        PyramidGrid {
            row_bins,
            col_bins,
            level,
            values,
        }
    }
}

/// Brute-force reduction of the same bins (the reference the tests compare with).
pub fn brute_force(
    src: &dyn MatrixSource,
    row_bins: &[Range<usize>],
    col_bins: &[ColBin],
    reduce: Reduce,
) -> Vec<Option<f64>> {
    let mut out: Vec<Option<f64>> = vec![None; row_bins.len() * col_bins.len()];
    for (ri, rb) in row_bins.iter().enumerate() {
        for r in rb.clone() {
            src.for_each_in_row(r, &mut |p, v| {
                if let Some(ci) = col_bins.iter().position(|cb| cb.contains(&p)) {
                    let cell = &mut out[ri * col_bins.len() + ci];
                    *cell = Some(match (reduce, *cell) {
                        (_, None) => v,
                        (Reduce::Max, Some(a)) => a.max(v),
                        (Reduce::Sum, Some(a)) => a + v,
                    });
                }
            });
        }
    }
    out
}

#[cfg(test)]
mod tests;
