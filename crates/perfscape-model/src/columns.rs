//! Columnar storage of measured values.
//!
//! Every (event, thread) cell of a profile's interval events lives in one arena,
//! [`IntervalColumns`]: the cells are numbered event by event (an event's cells are
//! consecutive, ascending by thread), one array holds each cell's thread and one array per
//! value kind (calls, subcalls, and per metric exclusive and inclusive) holds its values. An
//! event is the range of its cells ([`IntervalColumn`] is a view of it), so a profile costs
//! `2 + 2M` arrays whatever its number of events: a call tree of 10^6 nodes on one thread
//! costs 8 bytes per node for its range and `4 + 8 (2 + 2M)` per cell, with no heap block per
//! event, and 10^6 threads x 10^3 events no heap object per cell.

use crate::ids::{MetricId, ThreadIndex};
use serde::{Deserialize, Serialize};

pub use crate::atomic_column::AtomicColumn;

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

/// Where kind `k` starts among the value arrays: calls 0, subcalls 1, exclusive of metric m
/// `2 + 2m`, inclusive `3 + 2m`.
fn slot(kind: ValueKind, m: MetricId) -> usize {
    match kind {
        ValueKind::Calls => 0,
        ValueKind::Subcalls => 1,
        ValueKind::Exclusive => 2 + 2 * m.index(),
        ValueKind::Inclusive => 3 + 2 * m.index(),
    }
}

/// The values of every interval event of a profile on every thread that has it: the arena
/// described in the module documentation.
///
/// Shapes: E events, C cells, M metrics. `starts` has E + 1 entries (event `e` owns cells
/// `starts[e]..starts[e + 1]`, ascending by thread); `threads` has C entries; `kinds` has
/// `2 + 2M` arrays of C values each, in slot order (calls, subcalls, then per metric
/// exclusive and inclusive, in the metric's unit).
#[derive(Clone, Debug, PartialEq)]
pub struct IntervalColumns {
    pub(crate) starts: Vec<usize>,
    pub(crate) threads: Vec<ThreadIndex>,
    pub(crate) kinds: Vec<Vec<f64>>,
}

impl Default for IntervalColumns {
    fn default() -> Self {
        Self::new(0)
    }
}

impl IntervalColumns {
    /// No events, for a profile of `n_metrics` metrics.
    pub(crate) fn new(n_metrics: usize) -> Self {
        Self {
            starts: vec![0],
            threads: Vec::new(),
            kinds: vec![Vec::new(); 2 + 2 * n_metrics],
        }
    }

    /// Appends one event's column: its threads (ascending) and, for each of the `2 + 2M`
    /// kinds in slot order, one value per thread (`kind(k)` must be as long as `threads`).
    pub(crate) fn push<'k>(&mut self, threads: &[ThreadIndex], kind: impl Fn(usize) -> &'k [f64]) {
        self.threads.extend_from_slice(threads);
        for (k, values) in self.kinds.iter_mut().enumerate() {
            let v = kind(k);
            debug_assert_eq!(v.len(), threads.len());
            values.extend_from_slice(v);
        }
        self.starts.push(self.threads.len());
    }

    /// Reserves room for `events` more events and `cells` more cells.
    pub(crate) fn reserve(&mut self, events: usize, cells: usize) {
        self.starts.reserve_exact(events);
        self.threads.reserve_exact(cells);
        for k in &mut self.kinds {
            k.reserve_exact(cells);
        }
    }

    /// Number of events.
    pub fn len(&self) -> usize {
        self.starts.len() - 1
    }

    /// True when there is no event.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of (event, thread) cells.
    pub fn cell_count(&self) -> usize {
        self.threads.len()
    }

    /// Event `e`'s column; an empty column when `e` is out of range.
    pub fn column(&self, e: usize) -> IntervalColumn<'_> {
        let (start, end) = match (self.starts.get(e), self.starts.get(e + 1)) {
            (Some(&s), Some(&t)) => (s, t),
            _ => (0, 0),
        };
        IntervalColumn {
            columns: self,
            start,
            end,
        }
    }

    /// Every cell's values of `kind` in metric `m`, event by event (empty when `m` is out of
    /// range), to change in place (unit conversions).
    pub(crate) fn kind_mut(&mut self, kind: ValueKind, m: MetricId) -> &mut [f64] {
        let k = slot(kind, m);
        self.kinds.get_mut(k).map_or(&mut [], |v| v.as_mut_slice())
    }

    /// Every cell's values of `kind` in metric `m`, event by event (empty when out of range).
    pub(crate) fn kind(&self, kind: ValueKind, m: MetricId) -> &[f64] {
        self.kinds.get(slot(kind, m)).map_or(&[], |v| v.as_slice())
    }

    /// Appends one more metric: its exclusive and inclusive value of every cell (each as long
    /// as [`IntervalColumns::cell_count`]); its id is the old metric count.
    pub(crate) fn push_metric(&mut self, exclusive: Vec<f64>, inclusive: Vec<f64>) {
        debug_assert_eq!(exclusive.len(), self.threads.len());
        debug_assert_eq!(inclusive.len(), self.threads.len());
        self.kinds.push(exclusive);
        self.kinds.push(inclusive);
    }

    /// Only the events where `keep(e)` is true, in their order.
    pub(crate) fn retain_events(self, keep: impl Fn(usize) -> bool) -> Self {
        let n_metrics = (self.kinds.len() - 2) / 2;
        let mut out = Self::new(n_metrics);
        for e in 0..self.len() {
            if keep(e) {
                let c = self.column(e);
                out.push(c.threads(), |k| c.slice(k));
            }
        }
        out
    }

    /// Only the cells whose thread `map` keeps, renumbered: `map[t]` is thread `t`'s new
    /// index, `None` for a thread removed.
    pub(crate) fn with_threads(self, map: &[Option<ThreadIndex>]) -> Self {
        let keep: Vec<usize> = (0..self.threads.len())
            .filter(|&r| map.get(self.threads[r].index()).copied().flatten().is_some())
            .collect();
        let mut starts = Vec::with_capacity(self.starts.len());
        let mut kept = 0;
        starts.push(0);
        for e in 0..self.len() {
            let end = self.starts[e + 1];
            while kept < keep.len() && keep[kept] < end {
                kept += 1;
            }
            starts.push(kept);
        }
        let threads = keep
            .iter()
            .filter_map(|&r| map[self.threads[r].index()])
            .collect();
        let kinds = self
            .kinds
            .iter()
            .map(|v| keep.iter().map(|&r| v[r]).collect())
            .collect();
        Self {
            starts,
            threads,
            kinds,
        }
    }

    /// Bytes of heap memory held by the arena.
    pub fn heap_bytes(&self) -> usize {
        self.starts.capacity() * 8
            + self.threads.capacity() * 4
            + self.kinds.iter().map(|k| k.capacity() * 8).sum::<usize>()
    }
}

/// The values of one interval event on every thread that has it: a view of its range of
/// cells in the profile's [`IntervalColumns`] (cheap to copy; the slices it gives live as
/// long as the profile).
///
/// Row `r` holds thread `threads()[r]`; rows are sorted by thread index, so a thread's row is
/// found by binary search. `exclusive(m)` and `inclusive(m)` are in metric `m`'s unit.
#[derive(Clone, Copy, Debug)]
pub struct IntervalColumn<'a> {
    columns: &'a IntervalColumns,
    start: usize,
    end: usize,
}

impl PartialEq for IntervalColumn<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.threads() == other.threads()
            && self.columns.kinds.len() == other.columns.kinds.len()
            && (0..self.columns.kinds.len()).all(|k| self.slice(k) == other.slice(k))
    }
}

impl<'a> IntervalColumn<'a> {
    fn slice(&self, k: usize) -> &'a [f64] {
        self.columns
            .kinds
            .get(k)
            .and_then(|v| v.get(self.start..self.end))
            .unwrap_or(&[])
    }

    /// Number of threads that have the event.
    pub fn len(&self) -> usize {
        self.end - self.start
    }

    /// True when no thread has the event.
    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }

    /// The threads that have the event, ascending.
    pub fn threads(&self) -> &'a [ThreadIndex] {
        &self.columns.threads[self.start..self.end]
    }

    /// Calls per row.
    pub fn calls(&self) -> &'a [f64] {
        self.slice(0)
    }

    /// Subcalls (child calls) per row.
    pub fn subcalls(&self) -> &'a [f64] {
        self.slice(1)
    }

    /// Exclusive values per row for metric `m` (empty if `m` is out of range).
    pub fn exclusive(&self, m: MetricId) -> &'a [f64] {
        self.slice(slot(ValueKind::Exclusive, m))
    }

    /// Inclusive values per row for metric `m` (empty if `m` is out of range).
    pub fn inclusive(&self, m: MetricId) -> &'a [f64] {
        self.slice(slot(ValueKind::Inclusive, m))
    }

    /// Values per row of the given kind (metric ignored for calls and subcalls).
    pub fn values(&self, kind: ValueKind, m: MetricId) -> &'a [f64] {
        self.slice(slot(kind, m))
    }

    /// Row of `thread`, if it has the event.
    pub fn row_of(&self, thread: ThreadIndex) -> Option<usize> {
        self.threads().binary_search(&thread).ok()
    }

    /// The value of one cell, if `thread` has the event.
    pub fn value_at(&self, thread: ThreadIndex, kind: ValueKind, m: MetricId) -> Option<f64> {
        let row = self.row_of(thread)?;
        self.values(kind, m).get(row).copied()
    }

    /// Bytes of the arena the column's cells take.
    pub fn heap_bytes(&self) -> usize {
        self.len() * (4 + 8 * self.columns.kinds.len())
    }
}
