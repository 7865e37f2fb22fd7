//! Columnar storage of measured values.
//!
//! Values are stored per event as parallel arrays over the threads that have the event
//! (sparse along the thread axis, dense along it when every thread has the event): one
//! `Vec<ThreadIndex>` plus one `Vec<f64>` per value kind and metric. There is no heap object
//! per (event, thread) cell, so a profile of 10^6 threads costs a few arrays per event.

use crate::ids::{MetricId, ThreadIndex};
use serde::{Deserialize, Serialize};

/// Which number of an (event, thread, metric) cell is meant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum ValueKind {
    /// Time (or count) spent in the event itself, children excluded.
    Exclusive,
    /// Time (or count) spent in the event including everything it called.
    Inclusive,
    /// Number of times the event was entered (metric independent).
    Calls,
    /// Number of child events entered from this event (metric independent).
    Subcalls,
}

impl ValueKind {
    /// All kinds, in the order tables show them.
    pub const ALL: [ValueKind; 4] = [
        ValueKind::Exclusive,
        ValueKind::Inclusive,
        ValueKind::Calls,
        ValueKind::Subcalls,
    ];

    /// Lower-case name used in the CLI, the CSV and the HTTP API.
    pub fn as_str(self) -> &'static str {
        match self {
            ValueKind::Exclusive => "exclusive",
            ValueKind::Inclusive => "inclusive",
            ValueKind::Calls => "calls",
            ValueKind::Subcalls => "subcalls",
        }
    }

    /// True for the kinds that do not depend on the metric.
    pub fn is_metric_independent(self) -> bool {
        matches!(self, ValueKind::Calls | ValueKind::Subcalls)
    }
}

/// The values of one interval event on every thread that has it.
///
/// Row `r` holds thread `threads()[r]`; rows are sorted by thread index, so a thread's row is
/// found by binary search. `exclusive(m)` and `inclusive(m)` are in metric `m`'s unit.
///
/// Storage: two allocations per event whatever the number of metrics: the threads, and one
/// array of `(2 + 2M) x n` values, kind-major (calls, subcalls, then per metric exclusive and
/// inclusive), so each kind is a contiguous slice. A call tree of 10^6 nodes measured on one
/// thread costs ~100 bytes per node here, not one allocation per kind and metric.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct IntervalColumn {
    threads: Box<[ThreadIndex]>,
    values: Box<[f64]>,
}

/// Where kind `k` of [`IntervalColumn`] starts, in units of rows: calls 0, subcalls 1,
/// exclusive of metric m `2 + 2m`, inclusive `3 + 2m`.
fn slot(kind: ValueKind, m: MetricId) -> usize {
    match kind {
        ValueKind::Calls => 0,
        ValueKind::Subcalls => 1,
        ValueKind::Exclusive => 2 + 2 * m.index(),
        ValueKind::Inclusive => 3 + 2 * m.index(),
    }
}

impl IntervalColumn {
    /// A column from its parts: per row calls and subcalls, per metric the exclusive and
    /// inclusive values (every array as long as `threads`).
    pub(crate) fn from_parts(
        threads: Vec<ThreadIndex>,
        calls: &[f64],
        subcalls: &[f64],
        exclusive: &[Vec<f64>],
        inclusive: &[Vec<f64>],
    ) -> Self {
        let mut values = Vec::with_capacity(threads.len() * (2 + 2 * exclusive.len()));
        values.extend_from_slice(calls);
        values.extend_from_slice(subcalls);
        for (x, i) in exclusive.iter().zip(inclusive) {
            values.extend_from_slice(x);
            values.extend_from_slice(i);
        }
        Self {
            threads: threads.into_boxed_slice(),
            values: values.into_boxed_slice(),
        }
    }

    /// A column from row-major values: per row `2 + 2M` values (calls, subcalls, then per
    /// metric exclusive and inclusive), as [`crate::ProfileBuilder`] collects them.
    pub(crate) fn from_rows(threads: Vec<ThreadIndex>, rows: &[f64], n_metrics: usize) -> Self {
        let n = threads.len();
        let width = 2 + 2 * n_metrics;
        let mut values = vec![0.0; n * width];
        for (r, row) in rows.chunks_exact(width).enumerate() {
            for (k, &v) in row.iter().enumerate() {
                values[k * n + r] = v;
            }
        }
        Self {
            threads: threads.into_boxed_slice(),
            values: values.into_boxed_slice(),
        }
    }

    fn slice(&self, k: usize) -> &[f64] {
        let n = self.threads.len();
        self.values.get(k * n..(k + 1) * n).unwrap_or(&[])
    }

    /// Mutable values of kind slot `k` (see [`slot`]); empty when out of range.
    pub(crate) fn slice_mut(&mut self, kind: ValueKind, m: MetricId) -> &mut [f64] {
        let n = self.threads.len();
        let k = slot(kind, m);
        self.values.get_mut(k * n..(k + 1) * n).unwrap_or(&mut [])
    }

    /// The same column with one more metric's values appended (its exclusive then inclusive
    /// values, one per row: the layout of [`slot`] for metric id M when the column had M
    /// metrics). `exclusive` and `inclusive` must have one value per row.
    pub(crate) fn with_metric_appended(self, exclusive: &[f64], inclusive: &[f64]) -> Self {
        debug_assert_eq!(exclusive.len(), self.threads.len());
        debug_assert_eq!(inclusive.len(), self.threads.len());
        let mut values = Vec::from(self.values);
        values.reserve_exact(exclusive.len() + inclusive.len());
        values.extend_from_slice(exclusive);
        values.extend_from_slice(inclusive);
        Self {
            threads: self.threads,
            values: values.into_boxed_slice(),
        }
    }

    /// The same column with only the rows whose thread `map` keeps, renumbered: `map[t]` is
    /// thread `t`'s new index, `None` for a thread removed.
    pub(crate) fn with_threads(self, map: &[Option<ThreadIndex>]) -> Self {
        let n = self.threads.len();
        let rows: Vec<usize> = (0..n)
            .filter(|&r| map.get(self.threads[r].index()).copied().flatten().is_some())
            .collect();
        let kinds = self.values.len().checked_div(n).unwrap_or(0);
        let mut values = Vec::with_capacity(kinds * rows.len());
        for k in 0..kinds {
            values.extend(rows.iter().map(|&r| self.values[k * n + r]));
        }
        Self {
            threads: rows
                .iter()
                .filter_map(|&r| map[self.threads[r].index()])
                .collect(),
            values: values.into_boxed_slice(),
        }
    }

    /// Number of threads that have the event.
    pub fn len(&self) -> usize {
        self.threads.len()
    }

    /// True when no thread has the event.
    pub fn is_empty(&self) -> bool {
        self.threads.is_empty()
    }

    /// The threads that have the event, ascending.
    pub fn threads(&self) -> &[ThreadIndex] {
        &self.threads
    }

    /// Calls per row.
    pub fn calls(&self) -> &[f64] {
        self.slice(0)
    }

    /// Subcalls (child calls) per row.
    pub fn subcalls(&self) -> &[f64] {
        self.slice(1)
    }

    /// Exclusive values per row for metric `m` (empty if `m` is out of range).
    pub fn exclusive(&self, m: MetricId) -> &[f64] {
        self.slice(slot(ValueKind::Exclusive, m))
    }

    /// Inclusive values per row for metric `m` (empty if `m` is out of range).
    pub fn inclusive(&self, m: MetricId) -> &[f64] {
        self.slice(slot(ValueKind::Inclusive, m))
    }

    /// Values per row of the given kind (metric ignored for calls and subcalls).
    pub fn values(&self, kind: ValueKind, m: MetricId) -> &[f64] {
        self.slice(slot(kind, m))
    }

    /// Row of `thread`, if it has the event.
    pub fn row_of(&self, thread: ThreadIndex) -> Option<usize> {
        self.threads.binary_search(&thread).ok()
    }

    /// The value of one cell, if `thread` has the event.
    pub fn value_at(&self, thread: ThreadIndex, kind: ValueKind, m: MetricId) -> Option<f64> {
        let row = self.row_of(thread)?;
        self.values(kind, m).get(row).copied()
    }

    /// Bytes of heap memory held by the column.
    pub fn heap_bytes(&self) -> usize {
        self.threads.len() * 4 + self.values.len() * 8
    }
}

/// An [`IntervalColumn`] while a profile is built: threads and row-major values (`2 + 2M`
/// per row), so adding a thread's row appends to two arrays.
#[derive(Clone, Debug, Default)]
pub(crate) struct ColumnDraft {
    pub(crate) threads: Vec<ThreadIndex>,
    pub(crate) rows: Vec<f64>,
}

/// The summary of one user (atomic) event on every thread that has it, as TAU records it:
/// number of samples, maximum, minimum, mean and sum of squares of the sampled values.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AtomicColumn {
    pub(crate) threads: Vec<ThreadIndex>,
    pub(crate) count: Vec<f64>,
    pub(crate) max: Vec<f64>,
    pub(crate) min: Vec<f64>,
    pub(crate) mean: Vec<f64>,
    pub(crate) sum_squares: Vec<f64>,
}

impl AtomicColumn {
    /// The same column with only the rows whose thread `map` keeps, renumbered (as
    /// [`IntervalColumn`]'s).
    pub(crate) fn with_threads(self, map: &[Option<ThreadIndex>]) -> Self {
        let keep: Vec<usize> = (0..self.threads.len())
            .filter(|&r| map.get(self.threads[r].index()).copied().flatten().is_some())
            .collect();
        let pick = |v: &[f64]| keep.iter().map(|&r| v[r]).collect::<Vec<f64>>();
        Self {
            threads: keep
                .iter()
                .filter_map(|&r| map[self.threads[r].index()])
                .collect(),
            count: pick(&self.count),
            max: pick(&self.max),
            min: pick(&self.min),
            mean: pick(&self.mean),
            sum_squares: pick(&self.sum_squares),
        }
    }
}

impl AtomicColumn {
    /// Number of threads that have the event.
    pub fn len(&self) -> usize {
        self.threads.len()
    }

    /// True when no thread has the event.
    pub fn is_empty(&self) -> bool {
        self.threads.is_empty()
    }

    /// The threads that have the event, ascending.
    pub fn threads(&self) -> &[ThreadIndex] {
        &self.threads
    }

    /// Number of samples per row.
    pub fn count(&self) -> &[f64] {
        &self.count
    }

    /// Largest sampled value per row.
    pub fn max(&self) -> &[f64] {
        &self.max
    }

    /// Smallest sampled value per row.
    pub fn min(&self) -> &[f64] {
        &self.min
    }

    /// Mean sampled value per row.
    pub fn mean(&self) -> &[f64] {
        &self.mean
    }

    /// Sum of the squares of the sampled values per row.
    pub fn sum_squares(&self) -> &[f64] {
        &self.sum_squares
    }

    /// Row of `thread`, if it has the event.
    pub fn row_of(&self, thread: ThreadIndex) -> Option<usize> {
        self.threads.binary_search(&thread).ok()
    }

    /// Population standard deviation of the sampled values of row `row`:
    /// `sqrt(max(0, sumsqr/n - mean^2))`, the formula of TAU's `pprof` ("Std. Dev." column of
    /// USER EVENTS). 0 when the row has no samples or does not exist.
    pub fn stddev(&self, row: usize) -> f64 {
        match (self.count.get(row), self.mean.get(row), self.sum_squares.get(row)) {
            (Some(&n), Some(&mean), Some(&ss)) if n > 0.0 => (ss / n - mean * mean).max(0.0).sqrt(),
            _ => 0.0,
        }
    }

    pub(crate) fn shrink_to_fit(&mut self) {
        for v in [
            &mut self.count,
            &mut self.max,
            &mut self.min,
            &mut self.mean,
            &mut self.sum_squares,
        ] {
            v.shrink_to_fit();
        }
        self.threads.shrink_to_fit();
    }

    /// Bytes of heap memory held by the column.
    pub fn heap_bytes(&self) -> usize {
        self.threads.capacity() * 4
            + (self.count.capacity()
                + self.max.capacity()
                + self.min.capacity()
                + self.mean.capacity()
                + self.sum_squares.capacity())
                * 8
    }
}
