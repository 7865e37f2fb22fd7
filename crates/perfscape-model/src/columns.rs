//! Columnar storage of measured values.
//!
//! Every (event, thread) cell of a profile's interval events lives in one arena,
//! [`IntervalColumns`]: the cells are numbered event by event (an event's cells are
//! consecutive, ascending by thread), one array holds each cell's thread and one array per
//! value kind (calls, subcalls, and per metric exclusive and inclusive) holds its values. An
//! event is the range of its cells ([`IntervalColumn`] is a view of it), so a profile costs
//! `2 + 2M` arrays whatever its number of events: a call tree of 10^6 nodes on one thread
//! costs `8 (2 + 2M)` bytes per node, with no heap block per event, and 10^6 threads x 10^3
//! events no heap object per cell. When every event has a cell on each thread `0..T` (a
//! one-thread call tree, T = 1) neither the ranges nor the cells' threads are stored
//! (`CellIndex::Full`); otherwise an event's range costs 8 bytes and a cell's thread 4.

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
/// Shapes: E events, C cells, M metrics. Which cells are an event's, and their threads, are
/// held by `CellIndex`; `kinds` has `2 + 2M` arrays of C values each, in slot order (calls,
/// subcalls, then per metric exclusive and inclusive, in the metric's unit).
#[derive(Clone, Debug)]
pub struct IntervalColumns {
    pub(crate) cells: CellIndex,
    pub(crate) kinds: Vec<Vec<f64>>,
}

/// Which cells of an [`IntervalColumns`] arena belong to which event, and their threads.
#[derive(Clone, Debug)]
pub(crate) enum CellIndex {
    /// Any layout: `starts` has E + 1 entries (event `e` owns cells `starts[e]..starts[e +
    /// 1]`, ascending by thread); `threads` has C entries.
    Listed {
        starts: Vec<usize>,
        threads: Vec<ThreadIndex>,
    },
    /// Every one of the `events` events has a cell on each of the T threads `0..T`, so event
    /// `e` owns cells `e * T..(e + 1) * T` and `threads` is `0..T` (T entries, whatever the
    /// number of events). A call tree on one thread (T = 1) and a TAU run whose threads all
    /// list every timer need no per-cell thread and no per-event range: 12 bytes a cell less.
    Full {
        events: usize,
        threads: Vec<ThreadIndex>,
    },
}

impl CellIndex {
    /// The [`CellIndex::Full`] layout of `events` events on threads `0..n_threads`.
    pub(crate) fn full(events: usize, n_threads: usize) -> Self {
        CellIndex::Full {
            events,
            threads: (0..n_threads).map(ThreadIndex::from).collect(),
        }
    }
}

/// Equal when they hold the same events with the same threads and values, whatever their
/// `CellIndex` layout.
impl PartialEq for IntervalColumns {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len()
            && self.kinds == other.kinds
            && (0..self.len()).all(|e| self.column(e).threads() == other.column(e).threads())
    }
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
            cells: CellIndex::Listed {
                starts: vec![0],
                threads: Vec::new(),
            },
            kinds: vec![Vec::new(); 2 + 2 * n_metrics],
        }
    }

    /// The per-event ranges and per-cell threads, written out ([`CellIndex::Full`] turned
    /// into [`CellIndex::Listed`]), to change.
    fn listed_mut(&mut self) -> (&mut Vec<usize>, &mut Vec<ThreadIndex>) {
        if let CellIndex::Full { events, threads } = &self.cells {
            let n = threads.len();
            let starts = (0..=*events).map(|e| e * n).collect();
            let threads = (0..*events).flat_map(|_| threads.iter().copied()).collect();
            self.cells = CellIndex::Listed { starts, threads };
        }
        match &mut self.cells {
            CellIndex::Listed { starts, threads } => (starts, threads),
            CellIndex::Full { .. } => unreachable!("written out above"),
        }
    }

    /// Turns a [`CellIndex::Listed`] layout in which every event has a cell on each of the
    /// threads `0..T` (T > 0) into [`CellIndex::Full`], freeing the per-cell threads and the
    /// per-event ranges; any other arena is left as it is.
    pub(crate) fn compact(&mut self) {
        let CellIndex::Listed { starts, threads } = &self.cells else {
            return;
        };
        let events = starts.len() - 1;
        let n = starts.get(1).copied().unwrap_or(0);
        let full = n > 0
            && starts.iter().enumerate().all(|(e, &s)| s == e * n)
            && threads
                .chunks_exact(n)
                .all(|ts| ts.iter().enumerate().all(|(i, t)| t.index() == i));
        if full {
            self.cells = CellIndex::full(events, n);
        }
    }

    /// Appends one event's column: its threads (ascending) and, for each of the `2 + 2M`
    /// kinds in slot order, one value per thread (`kind(k)` must be as long as `threads`).
    pub(crate) fn push<'k>(&mut self, threads: &[ThreadIndex], kind: impl Fn(usize) -> &'k [f64]) {
        let (starts, all) = self.listed_mut();
        all.extend_from_slice(threads);
        starts.push(all.len());
        for (k, values) in self.kinds.iter_mut().enumerate() {
            let v = kind(k);
            debug_assert_eq!(v.len(), threads.len());
            values.extend_from_slice(v);
        }
    }

    /// Reserves room for `events` more events and `cells` more cells.
    pub(crate) fn reserve(&mut self, events: usize, cells: usize) {
        let (starts, threads) = self.listed_mut();
        starts.reserve_exact(events);
        threads.reserve_exact(cells);
        for k in &mut self.kinds {
            k.reserve_exact(cells);
        }
    }

    /// Number of events.
    pub fn len(&self) -> usize {
        match &self.cells {
            CellIndex::Listed { starts, .. } => starts.len() - 1,
            CellIndex::Full { events, .. } => *events,
        }
    }

    /// True when there is no event.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of (event, thread) cells.
    pub fn cell_count(&self) -> usize {
        match &self.cells {
            CellIndex::Listed { threads, .. } => threads.len(),
            CellIndex::Full { events, threads } => events * threads.len(),
        }
    }

    /// Event `e`'s column; an empty column when `e` is out of range.
    pub fn column(&self, e: usize) -> IntervalColumn<'_> {
        let (start, end, threads) = match &self.cells {
            CellIndex::Listed { starts, threads } => match (starts.get(e), starts.get(e + 1)) {
                (Some(&s), Some(&t)) => (s, t, &threads[s..t]),
                _ => (0, 0, &threads[..0]),
            },
            CellIndex::Full { events, threads } if e < *events => {
                let n = threads.len();
                (e * n, (e + 1) * n, threads.as_slice())
            }
            CellIndex::Full { threads, .. } => (0, 0, &threads[..0]),
        };
        IntervalColumn {
            columns: self,
            start,
            end,
            threads,
        }
    }

    /// When every event has a cell on each of the threads `0..T` (a one-thread call tree, a
    /// TAU run whose threads all list every timer): T and every cell's value of `kind` in
    /// metric `m`, event by event, so that event `e` on thread `t` is at `e * T + t` (a slice
    /// of `len() * T` values; empty when `m` is out of range). `None` in any other layout,
    /// where [`IntervalColumns::column`] gives each event's threads. For passes over every
    /// cell that need no per-event view.
    pub fn full_grid(&self, kind: ValueKind, m: MetricId) -> Option<(usize, &[f64])> {
        match &self.cells {
            CellIndex::Full { threads, .. } => Some((threads.len(), self.kind(kind, m))),
            CellIndex::Listed { .. } => None,
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
        debug_assert_eq!(exclusive.len(), self.cell_count());
        debug_assert_eq!(inclusive.len(), self.cell_count());
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
    pub(crate) fn with_threads(mut self, map: &[Option<ThreadIndex>]) -> Self {
        let n_events = self.len();
        let (old_starts, old_threads) = self.listed_mut();
        let (old_starts, old_threads) = (std::mem::take(old_starts), std::mem::take(old_threads));
        let keep: Vec<usize> = (0..old_threads.len())
            .filter(|&r| map.get(old_threads[r].index()).copied().flatten().is_some())
            .collect();
        let mut starts = Vec::with_capacity(old_starts.len());
        let mut kept = 0;
        starts.push(0);
        for e in 0..n_events {
            let end = old_starts[e + 1];
            while kept < keep.len() && keep[kept] < end {
                kept += 1;
            }
            starts.push(kept);
        }
        let threads = keep.iter().filter_map(|&r| map[old_threads[r].index()]).collect();
        let kinds = self
            .kinds
            .iter()
            .map(|v| keep.iter().map(|&r| v[r]).collect())
            .collect();
        Self {
            cells: CellIndex::Listed { starts, threads },
            kinds,
        }
    }

    /// Bytes of heap memory held by the arena.
    pub fn heap_bytes(&self) -> usize {
        let index = match &self.cells {
            CellIndex::Listed { starts, threads } => starts.capacity() * 8 + threads.capacity() * 4,
            CellIndex::Full { threads, .. } => threads.capacity() * 4,
        };
        index + self.kinds.iter().map(|k| k.capacity() * 8).sum::<usize>()
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
    /// The threads of cells `start..end`.
    threads: &'a [ThreadIndex],
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
        self.threads
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

    /// Bytes of the arena the column's cells take (a cell's thread counts only when the
    /// arena lists it, `CellIndex::Listed`).
    pub fn heap_bytes(&self) -> usize {
        let thread = match self.columns.cells {
            CellIndex::Listed { .. } => 4,
            CellIndex::Full { .. } => 0,
        };
        self.len() * (thread + 8 * self.columns.kinds.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell_rows::CellRows;
    use crate::ids::EventId;

    /// The arena of `events` events from `cells` (event, thread, value), threads ascending,
    /// added one by one; `expect` is the thread count announced (0: none). Calls 1, subcalls
    /// 2, exclusive `v`, inclusive `10 v`.
    fn arena(expect: usize, events: usize, cells: &[(u32, u32, f64)]) -> IntervalColumns {
        let mut rows = CellRows::new(1);
        rows.expect_threads(expect);
        for _ in 0..events {
            rows.push_event();
        }
        for &(e, t, v) in cells {
            rows.add(EventId(e), ThreadIndex(t), 1.0, 2.0, &[v], &[v * 10.0]);
        }
        rows.finish(events)
    }

    /// The same cells written out event by event ([`CellIndex::Listed`]): the reference.
    fn listed(events: usize, cells: &[(u32, u32, f64)]) -> IntervalColumns {
        let mut out = IntervalColumns::new(1);
        for e in 0..events as u32 {
            let mine: Vec<_> = cells.iter().filter(|c| c.0 == e).collect();
            let threads: Vec<ThreadIndex> = mine.iter().map(|c| ThreadIndex(c.1)).collect();
            let kinds: Vec<Vec<f64>> = vec![
                vec![1.0; mine.len()],
                vec![2.0; mine.len()],
                mine.iter().map(|c| c.2).collect(),
                mine.iter().map(|c| c.2 * 10.0).collect(),
            ];
            out.push(&threads, |k| &kinds[k]);
        }
        assert!(matches!(out.cells, CellIndex::Listed { .. }));
        out
    }

    fn is_full(a: &IntervalColumns) -> bool {
        matches!(a.cells, CellIndex::Full { .. })
    }

    #[test]
    fn a_one_thread_call_tree_stores_no_thread_and_no_range() {
        let cells: Vec<(u32, u32, f64)> = (0..5).map(|e| (e, 0, f64::from(e) + 0.5)).collect();
        let a = arena(0, 5, &cells);
        assert!(is_full(&a));
        assert_eq!(a, listed(5, &cells));
        assert_eq!((a.len(), a.cell_count()), (5, 5));
        let c = a.column(3);
        assert_eq!(c.threads(), &[ThreadIndex(0)]);
        assert_eq!(c.exclusive(MetricId(0)), &[3.5]);
        assert_eq!(c.inclusive(MetricId(0)), &[35.0]);
        assert_eq!((c.calls(), c.subcalls()), (&[1.0][..], &[2.0][..]));
        assert_eq!(
            c.value_at(ThreadIndex(0), ValueKind::Exclusive, MetricId(0)),
            Some(3.5)
        );
        assert_eq!(
            c.value_at(ThreadIndex(1), ValueKind::Exclusive, MetricId(0)),
            None
        );
        assert!(a.column(5).is_empty() && a.column(5).threads().is_empty());
        // 4 value arrays of 5 cells and one thread: no per-cell thread, no range per event.
        assert_eq!(a.heap_bytes(), 4 * 5 * 8 + 4);
        assert_eq!(c.heap_bytes(), 4 * 8);
        // An event without a cell, or cells out of order: the ranges are listed.
        let gap = arena(0, 6, &cells);
        assert!(!is_full(&gap));
        assert_eq!(gap, listed(6, &cells));
        let mut shuffled = cells.clone();
        shuffled.swap(1, 3);
        let out_of_order = arena(0, 5, &shuffled);
        assert!(!is_full(&out_of_order));
        assert_eq!(out_of_order, a);
    }

    #[test]
    fn every_thread_on_every_event_stores_no_thread_and_no_range() {
        // Threads in arrival order (ascending), each listing every event.
        let cells: Vec<(u32, u32, f64)> = (0..3)
            .flat_map(|t| (0..4).map(move |e| (e, t, f64::from(10 * t + e))))
            .collect();
        let reference = listed(4, &cells);
        let dense = arena(3, 4, &cells);
        assert!(is_full(&dense));
        assert_eq!(dense, reference);
        assert_eq!(
            dense.column(2).threads(),
            &[ThreadIndex(0), ThreadIndex(1), ThreadIndex(2)]
        );
        assert_eq!(dense.column(2).exclusive(MetricId(0)), &[2.0, 12.0, 22.0]);
        assert_eq!(dense.cell_count(), 12);
        // Drafts (no thread count announced) keep the listed layout, with the same cells.
        let mut drafts = arena(0, 4, &cells);
        assert!(!is_full(&drafts));
        assert_eq!(drafts, dense);
        // ... until compacted (as a profile read from the cache is).
        drafts.compact();
        assert!(is_full(&drafts));
        assert_eq!(drafts, reference);
        // One cell missing: listed.
        let holed = arena(3, 4, &cells[..11]);
        assert!(!is_full(&holed));
        assert_eq!(holed, listed(4, &cells[..11]));
        let mut holed = holed;
        holed.compact();
        assert!(!is_full(&holed));
        let mut empty = IntervalColumns::new(1);
        empty.compact();
        assert!(!is_full(&empty) && empty.is_empty());
    }

    #[test]
    fn a_full_arena_changes_like_a_listed_one() {
        let cells: Vec<(u32, u32, f64)> = (0..3)
            .flat_map(|t| (0..4).map(move |e| (e, t, f64::from(10 * t + e))))
            .collect();
        let (full, reference) = (arena(3, 4, &cells), listed(4, &cells));
        assert!(is_full(&full));
        let map = [Some(ThreadIndex(0)), None, Some(ThreadIndex(1))];
        let kept = full.clone().with_threads(&map);
        assert_eq!(kept, reference.clone().with_threads(&map));
        assert_eq!(kept.column(1).threads(), &[ThreadIndex(0), ThreadIndex(1)]);
        assert_eq!(kept.column(1).exclusive(MetricId(0)), &[1.0, 21.0]);
        let odd = |e: usize| e % 2 == 1;
        assert_eq!(
            full.clone().retain_events(odd),
            reference.clone().retain_events(odd)
        );
        let (mut grown, mut grown_ref) = (full, reference);
        for a in [&mut grown, &mut grown_ref] {
            a.push(&[ThreadIndex(1)], |k| if k < 2 { &[7.0] } else { &[8.0] });
            let n = a.cell_count();
            a.push_metric(vec![1.5; n], vec![2.5; n]);
        }
        assert_eq!(grown, grown_ref);
        assert_eq!(grown.column(4).threads(), &[ThreadIndex(1)]);
        assert_eq!(grown.column(4).exclusive(MetricId(1)), &[1.5]);
        assert_eq!(grown.cell_count(), 13);
    }
}
