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
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct IntervalColumn {
    pub(crate) threads: Vec<ThreadIndex>,
    pub(crate) calls: Vec<f64>,
    pub(crate) subcalls: Vec<f64>,
    pub(crate) exclusive: Vec<Vec<f64>>,
    pub(crate) inclusive: Vec<Vec<f64>>,
}

impl IntervalColumn {
    pub(crate) fn with_metrics(n_metrics: usize) -> Self {
        Self {
            exclusive: vec![Vec::new(); n_metrics],
            inclusive: vec![Vec::new(); n_metrics],
            ..Self::default()
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
        &self.calls
    }

    /// Subcalls (child calls) per row.
    pub fn subcalls(&self) -> &[f64] {
        &self.subcalls
    }

    /// Exclusive values per row for metric `m` (empty if `m` is out of range).
    pub fn exclusive(&self, m: MetricId) -> &[f64] {
        self.exclusive.get(m.index()).map_or(&[], Vec::as_slice)
    }

    /// Inclusive values per row for metric `m` (empty if `m` is out of range).
    pub fn inclusive(&self, m: MetricId) -> &[f64] {
        self.inclusive.get(m.index()).map_or(&[], Vec::as_slice)
    }

    /// Values per row of the given kind (metric ignored for calls and subcalls).
    pub fn values(&self, kind: ValueKind, m: MetricId) -> &[f64] {
        match kind {
            ValueKind::Exclusive => self.exclusive(m),
            ValueKind::Inclusive => self.inclusive(m),
            ValueKind::Calls => self.calls(),
            ValueKind::Subcalls => self.subcalls(),
        }
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

    pub(crate) fn shrink_to_fit(&mut self) {
        self.threads.shrink_to_fit();
        self.calls.shrink_to_fit();
        self.subcalls.shrink_to_fit();
        for v in self.exclusive.iter_mut().chain(self.inclusive.iter_mut()) {
            v.shrink_to_fit();
        }
    }

    /// Bytes of heap memory held by the column.
    pub fn heap_bytes(&self) -> usize {
        self.threads.capacity() * 4
            + (self.calls.capacity() + self.subcalls.capacity()) * 8
            + self
                .exclusive
                .iter()
                .chain(self.inclusive.iter())
                .map(|v| v.capacity() * 8 + 24)
                .sum::<usize>()
    }
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
