//! [`CellRows`]: the (event, thread) cells of a profile while it is built, turned into the
//! event-by-event [`IntervalColumns`] arena once at the end.
//!
//! The cells of the first thread are kept in arrival order, in one array per kind: a call tree
//! of 10^6 nodes on one thread comes node by node, so its arrays become the arena as they are.
//! When a second thread arrives the cells move to one draft per event (its threads and
//! row-major values), where each further thread's row is appended: runs of many threads
//! then need no reordering at the end, only one copy of each draft into the arena.
//!
//! When the reader announced its thread count T (TAU runs: 10^3–10^6 threads x 10^2–10^3
//! events, each thread listing nearly the same timers), the second thread instead moves the
//! cells to their place in the final arrays ([`Dense`]: T slots per event, room for twice the
//! first thread's events), where every further cell is written once; `finish` closes the gaps
//! in place. A run that outgrows that room moves to the drafts once.

use crate::columns::IntervalColumns;
use crate::ids::{EventId, ThreadIndex};

/// Cells in arrival order: threads come in ascending order, each thread's cells in its own
/// row order. Shapes: C cells; `event` and `thread` C entries each; `kinds` `2 + 2M` arrays of
/// C values (calls, subcalls, per metric exclusive and inclusive, the order of
/// [`IntervalColumns`]); `last` one entry per event: its newest cell, to merge a thread listing
/// the same event twice.
#[derive(Debug, Default)]
pub(crate) struct CellRows {
    event: Vec<u32>,
    thread: Vec<ThreadIndex>,
    kinds: Vec<Vec<f64>>,
    last: Vec<u32>,
    /// Once a second thread arrived: one draft per event (the arrays above are then empty).
    drafts: Option<Vec<Draft>>,
    /// Once a second thread arrived, when the reader announced its thread count
    /// ([`CellRows::expect_threads`]) and the run is small enough: every cell in its place.
    dense: Option<Dense>,
    /// The thread count the reader announced (0: none).
    expected_threads: usize,
}

/// The cells once a second thread arrived, when the thread count T is known: event `e` owns
/// the slots `e * T .. (e + 1) * T` of each array and its cells fill them in arrival
/// (ascending thread) order, `count[e]` of them. The arrays are allocated zeroed for
/// `capacity` events at once (pages never written stay unmapped: an event on few threads
/// costs a page per array, not T slots), so no cell is copied while threads arrive;
/// [`CellRows::finish`] moves each event's cells down to close the gaps, in place.
#[derive(Debug)]
struct Dense {
    /// Slots per event: the announced thread count.
    stride: usize,
    /// Events the arrays have room for.
    capacity: usize,
    count: Vec<u32>,
    threads: Vec<u32>,
    kinds: Vec<Vec<f64>>,
}

/// At most this many slots per array in the [`Dense`] layout (2 GiB of address space per
/// value array); a larger run keeps the drafts.
const DENSE_MAX_SLOTS: usize = 1 << 28;

/// The cells of one event once a second thread arrived: its threads, ascending, and per
/// thread `2 + 2M` values (the kinds in [`IntervalColumns`] order).
#[derive(Debug, Default)]
struct Draft {
    threads: Vec<ThreadIndex>,
    rows: Vec<f64>,
}

/// No cell yet in [`CellRows::last`].
const NONE: u32 = u32::MAX;

impl CellRows {
    /// Empty, for `n_metrics` metrics.
    pub(crate) fn new(n_metrics: usize) -> Self {
        Self {
            kinds: vec![Vec::new(); 2 + 2 * n_metrics],
            ..Self::default()
        }
    }

    /// Announces that the run has `n` threads (a hint: more threads still work, more slowly).
    /// From the second thread on, cells are then written in their place ([`Dense`]) instead
    /// of into per-event drafts.
    pub(crate) fn expect_threads(&mut self, n: usize) {
        self.expected_threads = n;
    }

    /// Makes room for one more event (ids are dense: call once per new event, in id order).
    pub(crate) fn push_event(&mut self) {
        if let Some(d) = &mut self.dense {
            if d.count.len() < d.capacity {
                d.count.push(0);
                return;
            }
            self.dense_to_drafts();
        }
        match &mut self.drafts {
            Some(drafts) => drafts.push(Draft::default()),
            None => self.last.push(NONE),
        }
    }

    /// Moves the cells in arrival order (the first thread's) into the [`Dense`] layout, when
    /// a thread count was announced and the arrays fit; false otherwise.
    fn move_to_dense(&mut self) -> bool {
        let stride = self.expected_threads;
        let events = self.last.len();
        // Room for twice the first thread's events: TAU's threads list nearly the same
        // timers. Untouched room costs address space only, unless the allocator hands back
        // memory it must zero; then it costs as much as the drafts' doubling would.
        let capacity = (2 * events + 64).min(DENSE_MAX_SLOTS / stride.max(1));
        if stride < 2 || capacity < events || capacity == 0 {
            return false;
        }
        let slots = capacity * stride;
        let mut d = Dense {
            stride,
            capacity,
            count: vec![0; events],
            // Zeroed allocations: the pages are mapped when first written.
            threads: vec![0; slots],
            kinds: (0..self.kinds.len()).map(|_| vec![0.0; slots]).collect(),
        };
        d.count.reserve(capacity - events);
        for (r, (&e, &t)) in self.event.iter().zip(&self.thread).enumerate() {
            let e = e as usize;
            let at = e * stride + d.count[e] as usize;
            d.threads[at] = t.0;
            for (k, values) in d.kinds.iter_mut().enumerate() {
                values[at] = self.kinds[k][r];
            }
            d.count[e] += 1;
        }
        self.event = Vec::new();
        self.thread = Vec::new();
        self.last = Vec::new();
        for k in &mut self.kinds {
            *k = Vec::new();
        }
        self.dense = Some(d);
        true
    }

    /// Leaves the [`Dense`] layout for one draft per event (more events or threads came than
    /// it has room for).
    fn dense_to_drafts(&mut self) {
        let Some(d) = self.dense.take() else { return };
        let width = d.kinds.len();
        let drafts = d
            .count
            .iter()
            .enumerate()
            .map(|(e, &n)| {
                let base = e * d.stride;
                let n = n as usize;
                let mut rows = Vec::with_capacity(n * width);
                for i in base..base + n {
                    rows.extend(d.kinds.iter().map(|k| k[i]));
                }
                Draft {
                    threads: d.threads[base..base + n]
                        .iter()
                        .map(|&t| ThreadIndex(t))
                        .collect(),
                    rows,
                }
            })
            .collect();
        self.drafts = Some(drafts);
    }

    /// Moves the cells in arrival order into one draft per event.
    fn move_to_drafts(&mut self) -> &mut Vec<Draft> {
        let width = self.kinds.len();
        let mut drafts: Vec<Draft> = (0..self.last.len()).map(|_| Draft::default()).collect();
        for (r, (&e, &t)) in self.event.iter().zip(&self.thread).enumerate() {
            let d = &mut drafts[e as usize];
            d.threads.push(t);
            d.rows.extend(self.kinds.iter().map(|k| k[r]));
        }
        debug_assert!(drafts.iter().all(|d| d.rows.len() == d.threads.len() * width));
        self.event = Vec::new();
        self.thread = Vec::new();
        self.last = Vec::new();
        for k in &mut self.kinds {
            *k = Vec::new();
        }
        self.drafts.insert(drafts)
    }

    /// Reserves room for `additional` more events.
    pub(crate) fn reserve_events(&mut self, additional: usize) {
        if self.drafts.is_none() && self.dense.is_none() {
            self.last.reserve(additional);
        }
    }

    /// Reserves room for `cells` more cells (amortized, as [`Vec::reserve`]).
    pub(crate) fn reserve(&mut self, cells: usize) {
        if self.drafts.is_some() || self.dense.is_some() {
            return;
        }
        self.event.reserve(cells);
        self.thread.reserve(cells);
        for k in &mut self.kinds {
            k.reserve(cells);
        }
    }

    /// Adds the cell (e, t) with values `calls`, `subcalls` and per metric `exclusive[m]`,
    /// `inclusive[m]`. When `t` already has a cell of `e` (a thread listing an event twice)
    /// the values are added to it and `false` is returned.
    pub(crate) fn add(
        &mut self,
        e: EventId,
        t: ThreadIndex,
        calls: f64,
        subcalls: f64,
        exclusive: &[f64],
        inclusive: &[f64],
    ) -> bool {
        let width = self.kinds.len();
        if self.dense.is_none() && self.drafts.is_none() && t.index() > 0 && self.expected_threads > 1 {
            self.move_to_dense();
        }
        if let Some(d) = &mut self.dense {
            if t.index() < d.stride {
                let n = d.count[e.index()] as usize;
                let base = e.index() * d.stride;
                if n > 0 && d.threads[base + n - 1] == t.0 {
                    add_at(
                        &mut d.kinds,
                        base + n - 1,
                        [calls, subcalls],
                        exclusive,
                        inclusive,
                    );
                    return false;
                }
                let at = base + n;
                d.threads[at] = t.0;
                d.kinds[0][at] = calls;
                d.kinds[1][at] = subcalls;
                for (m, (x, i)) in exclusive.iter().zip(inclusive).enumerate() {
                    d.kinds[2 + 2 * m][at] = *x;
                    d.kinds[3 + 2 * m][at] = *i;
                }
                d.count[e.index()] += 1;
                return true;
            }
            self.dense_to_drafts();
        }
        if self.drafts.is_some() || t.index() > 0 {
            let drafts = match self.drafts {
                Some(ref mut d) => d,
                None => self.move_to_drafts(),
            };
            let d = &mut drafts[e.index()];
            if d.threads.last() == Some(&t) {
                let start = d.rows.len() - width;
                let row = &mut d.rows[start..];
                row[0] += calls;
                row[1] += subcalls;
                for (m, (x, i)) in exclusive.iter().zip(inclusive).enumerate() {
                    row[2 + 2 * m] += x;
                    row[3 + 2 * m] += i;
                }
                return false;
            }
            if d.threads.is_empty() {
                // Most call-tree nodes are on few threads: no doubling slack for them.
                d.threads.reserve_exact(1);
                d.rows.reserve_exact(width);
            }
            d.threads.push(t);
            d.rows.push(calls);
            d.rows.push(subcalls);
            for (x, i) in exclusive.iter().zip(inclusive) {
                d.rows.push(*x);
                d.rows.push(*i);
            }
            return true;
        }
        let last = self.last[e.index()];
        if last != NONE && self.thread[last as usize] == t {
            add_at(
                &mut self.kinds,
                last as usize,
                [calls, subcalls],
                exclusive,
                inclusive,
            );
            return false;
        }
        // Cells beyond u32::MAX keep working; only the duplicate check is lost for them.
        self.last[e.index()] = u32::try_from(self.event.len()).unwrap_or(NONE);
        self.event.push(e.0);
        self.thread.push(t);
        self.kinds[0].push(calls);
        self.kinds[1].push(subcalls);
        for (m, (x, i)) in exclusive.iter().zip(inclusive).enumerate() {
            self.kinds[2 + 2 * m].push(*x);
            self.kinds[3 + 2 * m].push(*i);
        }
        true
    }

    /// The arena of `n_events` events: cells grouped by event, each event's cells in thread
    /// order (a counting sort, stable). When the cells already come event by event (a call
    /// tree on one thread listed in node order) the arrays are moved, not copied; otherwise
    /// each value array is rearranged and freed in turn, so the peak is the cells plus one
    /// array.
    pub(crate) fn finish(self, n_events: usize) -> IntervalColumns {
        if let Some(dense) = self.dense {
            return from_dense(dense);
        }
        if let Some(drafts) = self.drafts {
            return from_drafts(drafts, self.kinds.len());
        }
        let CellRows {
            event,
            thread,
            kinds,
            last,
            ..
        } = self;
        drop(last);
        let mut starts = vec![0usize; n_events + 1];
        for &e in &event {
            starts[e as usize + 1] += 1;
        }
        for e in 0..n_events {
            starts[e + 1] += starts[e];
        }
        let grouped = event.windows(2).all(|w| w[0] <= w[1]);
        let (threads, kinds) = if grouped {
            let mut kinds = kinds;
            for k in &mut kinds {
                k.shrink_to_fit();
            }
            let mut thread = thread;
            thread.shrink_to_fit();
            (thread, kinds)
        } else {
            let scatter = |values: &[ThreadIndex]| -> Vec<ThreadIndex> {
                let mut cursor = starts.clone();
                let mut out = vec![ThreadIndex(0); values.len()];
                for (&e, &v) in event.iter().zip(values) {
                    let at = &mut cursor[e as usize];
                    out[*at] = v;
                    *at += 1;
                }
                out
            };
            let threads = scatter(&thread);
            drop(thread);
            let mut out_kinds = Vec::with_capacity(kinds.len());
            for values in kinds {
                let mut cursor = starts.clone();
                let mut out = vec![0.0; values.len()];
                for (&e, &v) in event.iter().zip(&values) {
                    let at = &mut cursor[e as usize];
                    out[*at] = v;
                    *at += 1;
                }
                drop(values);
                out_kinds.push(out);
            }
            (threads, out_kinds)
        };
        IntervalColumns {
            starts,
            threads,
            kinds,
        }
    }
}

/// The arena from one draft per event: each draft's threads and its row-major values, one kind
/// at a time, freed as it is copied.
fn from_drafts(drafts: Vec<Draft>, width: usize) -> IntervalColumns {
    let cells: usize = drafts.iter().map(|d| d.threads.len()).sum();
    let mut out = IntervalColumns {
        starts: Vec::with_capacity(drafts.len() + 1),
        threads: Vec::with_capacity(cells),
        kinds: (0..width).map(|_| Vec::with_capacity(cells)).collect(),
    };
    out.starts.push(0);
    for d in drafts {
        out.threads.extend_from_slice(&d.threads);
        for (k, values) in out.kinds.iter_mut().enumerate() {
            values.extend(d.rows.iter().skip(k).step_by(width));
        }
        out.starts.push(out.threads.len());
    }
    out
}

/// Adds one row's values to the cell at `at` of the one-array-per-kind `kinds` (calls,
/// subcalls, then per metric exclusive and inclusive): a thread listing an event twice, whose
/// rows ParaProf sums.
fn add_at(
    kinds: &mut [Vec<f64>],
    at: usize,
    [calls, subcalls]: [f64; 2],
    exclusive: &[f64],
    inclusive: &[f64],
) {
    kinds[0][at] += calls;
    kinds[1][at] += subcalls;
    for (m, (x, i)) in exclusive.iter().zip(inclusive).enumerate() {
        kinds[2 + 2 * m][at] += x;
        kinds[3 + 2 * m][at] += i;
    }
}

/// The arena from the [`Dense`] layout: each event's cells moved down to close the gaps, in
/// place, then the unused tail freed.
fn from_dense(d: Dense) -> IntervalColumns {
    let Dense {
        stride,
        count,
        mut threads,
        mut kinds,
        ..
    } = d;
    let mut starts = Vec::with_capacity(count.len() + 1);
    starts.push(0);
    let mut end = 0;
    for (e, &n) in count.iter().enumerate() {
        let (from, n) = (e * stride, n as usize);
        if from != end {
            threads.copy_within(from..from + n, end);
            for k in &mut kinds {
                k.copy_within(from..from + n, end);
            }
        }
        end += n;
        starts.push(end);
    }
    threads.truncate(end);
    threads.shrink_to_fit();
    for k in &mut kinds {
        k.truncate(end);
        k.shrink_to_fit();
    }
    IntervalColumns {
        starts,
        // The same allocation, each u32 read as its ThreadIndex.
        threads: threads.into_iter().map(ThreadIndex).collect(),
        kinds,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Adds `cells` (event, thread, value) in order (threads ascending) and returns the arena;
    /// `expect` is the thread count announced (0: none).
    fn arena(expect: usize, events: usize, cells: &[(u32, u32, f64)]) -> (IntervalColumns, Vec<bool>) {
        let mut rows = CellRows::new(1);
        rows.expect_threads(expect);
        let mut made = 0;
        let mut fresh = Vec::new();
        for &(e, t, v) in cells {
            while made <= e as usize {
                rows.push_event();
                made += 1;
            }
            fresh.push(rows.add(EventId(e), ThreadIndex(t), 1.0, 2.0, &[v], &[v * 10.0]));
        }
        while made < events {
            rows.push_event();
            made += 1;
        }
        (rows.finish(events), fresh)
    }

    /// The cells worked out by hand: each event's threads ascending, a duplicate summed.
    fn check(a: &IntervalColumns) {
        assert_eq!(a.len(), 4);
        let threads = |e| a.column(e).threads().iter().map(|t| t.0).collect::<Vec<_>>();
        assert_eq!(threads(0), [0, 1, 2]);
        assert_eq!(threads(1), [0, 2]);
        assert_eq!(threads(2), [1, 2]);
        assert_eq!(threads(3), Vec::<u32>::new());
        let c = a.column(1);
        assert_eq!(c.exclusive(crate::MetricId(0)), &[2.0, 9.0]);
        assert_eq!(c.inclusive(crate::MetricId(0)), &[20.0, 90.0]);
        assert_eq!(c.calls(), &[1.0, 2.0]); // thread 2 lists event 1 twice
        assert_eq!(a.column(2).exclusive(crate::MetricId(0)), &[5.0, 6.0]);
    }

    const CELLS: [(u32, u32, f64); 8] = [
        (0, 0, 1.0),
        (1, 0, 2.0),
        (0, 1, 3.0),
        (2, 1, 5.0),
        (1, 2, 4.0),
        (0, 2, 7.0),
        (2, 2, 6.0),
        (1, 2, 5.0),
    ];

    #[test]
    fn cells_in_place_equal_cells_in_drafts() {
        let (drafts, fresh_d) = arena(0, 4, &CELLS);
        check(&drafts);
        for expect in [3, 2, 1] {
            // 3: every cell in place; 2: thread 2 comes beyond the announced count and the
            // cells move to drafts; 1: no in-place layout at all.
            let (dense, fresh) = arena(expect, 4, &CELLS);
            check(&dense);
            assert_eq!(dense, drafts, "announced {expect} threads");
            assert_eq!(fresh, fresh_d);
        }
        assert_eq!(fresh_d, [true, true, true, true, true, true, true, false]);
    }

    #[test]
    fn events_beyond_the_in_place_room_move_the_cells_to_drafts() {
        // The first thread has one event, so the in-place room is 66 events: 1,500 events on
        // thread 1 go past it.
        let mut cells = vec![(0, 0, 1.0)];
        cells.extend((0..1500).map(|e| (e, 1, f64::from(e))));
        cells.extend((0..1500).step_by(7).map(|e| (e, 2, 2.0 * f64::from(e))));
        let (drafts, _) = arena(0, 1500, &cells);
        let (dense, _) = arena(3, 1500, &cells);
        assert_eq!(dense, drafts);
        let c = dense.column(1400);
        assert_eq!(c.threads(), &[ThreadIndex(1), ThreadIndex(2)]);
        assert_eq!(c.exclusive(crate::MetricId(0)), &[1400.0, 2800.0]);
    }
}
