//! [`CellRows`]: the (event, thread) cells of a profile while it is built, turned into the
//! event-by-event [`IntervalColumns`] arena once at the end.
//!
//! The cells of the first thread are kept in arrival order, in one array per kind: a call tree
//! of 10^6 nodes on one thread comes node by node (or as whole columns,
//! [`CellRows::add_columns`]), so its arrays become the arena as they are. While the first
//! thread's events come in ascending order, a cell's event is not stored: runs of consecutive
//! events say it (a call tree is one run), and no cell stores its thread (it is the first).
//! When a second thread arrives the cells move to one draft per event (its threads and
//! row-major values), where each further thread's row is appended: runs of many threads
//! then need no reordering at the end, only one copy of each draft into the arena.
//!
//! When the reader announced its thread count T (TAU runs: 10^3–10^6 threads x 10^2–10^3
//! events, each thread listing nearly the same timers), the second thread instead moves the
//! cells to their place in the final arrays ([`Dense`]: T slots per event, room for twice the
//! first thread's events), where every further cell is written once; `finish` closes the gaps
//! in place. A run that outgrows that room moves to the drafts once.

use crate::columns::{CellIndex, IntervalColumns};
use crate::ids::{EventId, ThreadIndex};

/// Cells in arrival order: threads come in ascending order, each thread's cells in its own
/// row order. Until a second thread arrives, shapes: C cells of thread 0; `kinds` `2 + 2M`
/// arrays of C values (calls, subcalls, per metric exclusive and inclusive, the order of
/// [`IntervalColumns`]); the event of each cell in `runs` while the events came in ascending
/// order, else in `unordered`.
#[derive(Debug, Default)]
pub(crate) struct CellRows {
    kinds: Vec<Vec<f64>>,
    /// Events made so far ([`CellRows::push_event`]), before a second thread arrived.
    n_events: usize,
    /// While the first thread's events come in ascending order: runs of cells whose events
    /// are consecutive, as (first cell, its event); cell `c` of the run starting at cell `c0`
    /// with event `e0` is event `e0 + (c - c0)`. The run ends where the next begins (the last
    /// at the cell count).
    runs: Vec<(usize, u32)>,
    /// Once the first thread's events came out of order: each cell's event, and per event its
    /// newest cell (to merge a thread listing the same event twice).
    unordered: Option<Unordered>,
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

impl Dense {
    /// Writes the cell (e, t) in event `e`'s next slot (`t < stride`; threads arrive in
    /// ascending order). When `t` has `e`'s last cell already (an event listed twice), the
    /// values are added to it and `false` is returned.
    #[inline]
    fn add(
        &mut self,
        e: usize,
        t: u32,
        [calls, subcalls]: [f64; 2],
        exclusive: &[f64],
        inclusive: &[f64],
    ) -> bool {
        let n = self.count[e] as usize;
        let base = e * self.stride;
        if n > 0 && self.threads[base + n - 1] == t {
            add_at(
                &mut self.kinds,
                base + n - 1,
                [calls, subcalls],
                exclusive,
                inclusive,
            );
            return false;
        }
        let at = base + n;
        self.threads[at] = t;
        self.kinds[0][at] = calls;
        self.kinds[1][at] = subcalls;
        for (m, (x, i)) in exclusive.iter().zip(inclusive).enumerate() {
            self.kinds[2 + 2 * m][at] = *x;
            self.kinds[3 + 2 * m][at] = *i;
        }
        self.count[e] += 1;
        true
    }
}

/// Rows of each thread written per pass over the threads of a block
/// ([`CellRows::add_block`]).
const BLOCK_TILE_ROWS: usize = 8;

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

/// No cell yet in [`Unordered::last`].
const NONE: u32 = u32::MAX;

/// The first thread's cells once their events came out of ascending order: `event` C entries,
/// `last` one entry per event (its cell, [`NONE`] without).
#[derive(Debug, Default)]
struct Unordered {
    event: Vec<u32>,
    last: Vec<u32>,
}

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
            None => {
                self.n_events += 1;
                if let Some(u) = &mut self.unordered {
                    u.last.push(NONE);
                }
            }
        }
    }

    /// Number of cells of the first thread (before a second thread arrived).
    fn first_cells(&self) -> usize {
        self.kinds.first().map_or(0, Vec::len)
    }

    /// The event of each cell of the first thread, in cell order.
    fn first_events(&self) -> Vec<u32> {
        if let Some(u) = &self.unordered {
            return u.event.clone();
        }
        let cells = self.first_cells();
        let mut out = Vec::with_capacity(cells);
        for (i, &(c0, e0)) in self.runs.iter().enumerate() {
            let end = self.runs.get(i + 1).map_or(cells, |r| r.0);
            out.extend((0..end - c0).map(|k| e0 + k as u32));
        }
        out
    }

    /// The first thread's cell of event `e`, if it has one.
    fn first_cell_of(&self, e: u32) -> Option<usize> {
        if let Some(u) = &self.unordered {
            return u
                .last
                .get(e as usize)
                .filter(|&&c| c != NONE)
                .map(|&c| c as usize);
        }
        let i = self.runs.partition_point(|r| r.1 <= e).checked_sub(1)?;
        let (c0, e0) = self.runs[i];
        let end = self.runs.get(i + 1).map_or(self.first_cells(), |r| r.0);
        let c = c0 + (e - e0) as usize;
        (c < end).then_some(c)
    }

    /// The event of the first thread's newest cell, if any (events ascending).
    fn last_run_event(&self) -> Option<u32> {
        let &(c0, e0) = self.runs.last()?;
        Some(e0 + (self.first_cells() - 1 - c0) as u32)
    }

    /// Records that the first thread's next cell (not yet appended) is event `e`, which is
    /// new: extends the runs while events ascend, else keeps every cell's event from now on.
    fn note_first_event(&mut self, e: u32) {
        let cell = self.first_cells();
        if let Some(u) = &mut self.unordered {
            if let Some(l) = u.last.get_mut(e as usize) {
                // Cells beyond u32::MAX keep working; only the duplicate check is lost.
                *l = u32::try_from(cell).unwrap_or(NONE);
            }
            u.event.push(e);
            return;
        }
        match self.last_run_event() {
            Some(l) if e == l.wrapping_add(1) => {}
            Some(l) if e < l => {
                let event = self.first_events();
                let mut last = vec![NONE; self.n_events];
                for (c, &x) in event.iter().enumerate() {
                    last[x as usize] = u32::try_from(c).unwrap_or(NONE);
                }
                self.runs = Vec::new();
                self.unordered = Some(Unordered { event, last });
                self.note_first_event(e);
            }
            _ => self.runs.push((cell, e)),
        }
    }

    /// Frees the first thread's event bookkeeping (the cells moved elsewhere).
    fn clear_first(&mut self) {
        self.runs = Vec::new();
        self.unordered = None;
        for k in &mut self.kinds {
            *k = Vec::new();
        }
    }

    /// Adds thread `t`'s cells of `events` (strictly ascending, each after every event the
    /// thread has a cell of), given as whole columns in [`IntervalColumns`] order (each as
    /// long as `events`), when `t` is the first thread: its columns are adopted (moved, when
    /// the thread has no cell yet) or appended. Otherwise nothing is added and the columns
    /// come back, for the caller to add cell by cell.
    pub(crate) fn add_columns(
        &mut self,
        events: &[EventId],
        t: ThreadIndex,
        columns: Vec<Vec<f64>>,
    ) -> Result<(), Vec<Vec<f64>>> {
        let ascending = events.windows(2).all(|w| w[0] < w[1]);
        let after = match (self.last_run_event(), events.first()) {
            (Some(l), Some(f)) => f.0 > l,
            _ => true,
        };
        if t.index() > 0
            || self.drafts.is_some()
            || self.dense.is_some()
            || self.unordered.is_some()
            || !ascending
            || !after
            || columns.len() != self.kinds.len()
            || columns.iter().any(|c| c.len() != events.len())
        {
            return Err(columns);
        }
        let base = self.first_cells();
        let mut previous = self.last_run_event();
        for (i, &e) in events.iter().enumerate() {
            if previous.is_none_or(|p| e.0 != p.wrapping_add(1)) {
                self.runs.push((base + i, e.0));
            }
            previous = Some(e.0);
        }
        for (k, column) in self.kinds.iter_mut().zip(columns) {
            if k.is_empty() {
                *k = column;
            } else {
                k.extend_from_slice(&column);
            }
        }
        Ok(())
    }

    /// Adds the cells of the threads `t0, t0 + 1, …, t0 + k - 1` (`k = events.len()`),
    /// none of which has a cell yet: thread `t0 + j` has a cell of each of `events[j]` (no
    /// event twice), and its cell of `events[j][r]` has the values `row(j, r)` = (calls,
    /// subcalls, exclusive per metric, inclusive per metric).
    ///
    /// The same cells as [`CellRows::add`] on each in turn, in the [`Dense`] layout, with the
    /// layout and the room checked once for all of them, not per cell, and no cell compared
    /// with its thread's last cell of the event (the caller found no event twice). The
    /// values are written [`BLOCK_TILE_ROWS`] rows at a time across the threads (about a
    /// fifth less time in the merge of a 4,096-rank TAU run than thread by thread).
    ///
    /// Only in the [`Dense`] layout (moved to it first when `t0` is the second thread or
    /// later, as [`CellRows::add`] does) with room for the threads; otherwise nothing is
    /// added and `false` is returned, for the caller to add the cells one by one.
    pub(crate) fn add_block<'a>(
        &mut self,
        t0: ThreadIndex,
        events: &[Vec<EventId>],
        row: impl Fn(usize, usize) -> (f64, f64, &'a [f64], &'a [f64]),
    ) -> bool {
        const TILE: usize = BLOCK_TILE_ROWS;
        self.leave_first_thread(t0);
        let Some(d) = &mut self.dense else { return false };
        let Ok(t0) = u32::try_from(t0.index()) else {
            return false;
        };
        if t0 as usize + events.len() > d.stride
            || events.iter().flatten().any(|e| e.index() >= d.count.len())
        {
            return false;
        }
        // Every slot first (a pass over a count per event), then the values a few rows at a
        // time across all the threads: the files of one run list their timers in nearly one
        // order, so those rows are nearly the same events and their slots lie together.
        let mut slots: Vec<usize> = Vec::with_capacity(events.iter().map(Vec::len).sum());
        for list in events {
            for e in list {
                let n = &mut d.count[e.index()];
                slots.push(e.index() * d.stride + *n as usize);
                *n += 1;
            }
        }
        let (calls_of, rest) = d.kinds.split_at_mut(1);
        let (subcalls_of, metrics) = rest.split_at_mut(1);
        let (calls_of, subcalls_of) = (&mut calls_of[0], &mut subcalls_of[0]);
        let longest = events.iter().map(Vec::len).max().unwrap_or(0);
        for tile in (0..longest).step_by(TILE) {
            let mut first = 0;
            for (j, (list, t)) in events.iter().zip(t0..).enumerate() {
                let (start, end) = (first, first + list.len());
                first = end;
                for (r, &at) in slots[start..end].iter().enumerate().skip(tile).take(TILE) {
                    let (calls, subcalls, exclusive, inclusive) = row(j, r);
                    d.threads[at] = t;
                    calls_of[at] = calls;
                    subcalls_of[at] = subcalls;
                    for (m, (x, i)) in exclusive.iter().zip(inclusive).enumerate() {
                        metrics[2 * m][at] = *x;
                        metrics[2 * m + 1][at] = *i;
                    }
                }
            }
        }
        true
    }

    /// When thread `t` is a later thread than the first and the cells are still the first
    /// thread's, moves them to the [`Dense`] layout if the reader announced its thread count
    /// (otherwise they move to the drafts when `t`'s first cell comes).
    fn leave_first_thread(&mut self, t: ThreadIndex) {
        if self.dense.is_none() && self.drafts.is_none() && t.index() > 0 && self.expected_threads > 1 {
            self.move_to_dense();
        }
    }

    /// Moves the cells in arrival order (the first thread's) into the [`Dense`] layout, when
    /// a thread count was announced and the arrays fit; false otherwise.
    fn move_to_dense(&mut self) -> bool {
        let stride = self.expected_threads;
        let events = self.n_events;
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
        // Every cell so far is the first thread's (index 0: the zeroed `threads` hold it).
        for (r, &e) in self.first_events().iter().enumerate() {
            let e = e as usize;
            let at = e * stride + d.count[e] as usize;
            for (k, values) in d.kinds.iter_mut().enumerate() {
                values[at] = self.kinds[k][r];
            }
            d.count[e] += 1;
        }
        self.clear_first();
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
        let mut drafts: Vec<Draft> = (0..self.n_events).map(|_| Draft::default()).collect();
        for (r, &e) in self.first_events().iter().enumerate() {
            let d = &mut drafts[e as usize];
            d.threads.push(ThreadIndex(0));
            d.rows.extend(self.kinds.iter().map(|k| k[r]));
        }
        debug_assert!(drafts.iter().all(|d| d.rows.len() == d.threads.len() * width));
        self.clear_first();
        self.drafts.insert(drafts)
    }

    /// Reserves room for `additional` more events.
    pub(crate) fn reserve_events(&mut self, additional: usize) {
        if self.drafts.is_none()
            && self.dense.is_none()
            && let Some(u) = &mut self.unordered
        {
            u.last.reserve(additional);
        }
    }

    /// Reserves room for `cells` more cells (amortized, as [`Vec::reserve`]).
    pub(crate) fn reserve(&mut self, cells: usize) {
        if self.drafts.is_some() || self.dense.is_some() {
            return;
        }
        if let Some(u) = &mut self.unordered {
            u.event.reserve(cells);
        }
        for k in &mut self.kinds {
            k.reserve(cells);
        }
    }

    /// Adds the cell (e, t) with values `calls`, `subcalls` and per metric `exclusive[m]`,
    /// `inclusive[m]`. When `t` already has a cell of `e` (a thread listing an event twice)
    /// the values are added to it and `false` is returned.
    ///
    /// Inlined into the builder's loop over a thread's rows: a cell in its [`Dense`] slot
    /// (every thread of a TAU run after the first) is written here; the other layouts are in
    /// [`CellRows::add_elsewhere`].
    #[inline]
    pub(crate) fn add(
        &mut self,
        e: EventId,
        t: ThreadIndex,
        calls: f64,
        subcalls: f64,
        exclusive: &[f64],
        inclusive: &[f64],
    ) -> bool {
        if let Some(d) = &mut self.dense
            && t.index() < d.stride
        {
            return d.add(e.index(), t.0, [calls, subcalls], exclusive, inclusive);
        }
        self.add_elsewhere(e, t, calls, subcalls, exclusive, inclusive)
    }

    /// [`CellRows::add`] outside a [`Dense`] slot: moves the cells to the dense layout (the
    /// second thread of a run whose thread count was announced) or to the drafts (a run
    /// without one, or grown past the dense room), or adds a cell of the first thread.
    #[inline(never)]
    fn add_elsewhere(
        &mut self,
        e: EventId,
        t: ThreadIndex,
        calls: f64,
        subcalls: f64,
        exclusive: &[f64],
        inclusive: &[f64],
    ) -> bool {
        let width = self.kinds.len();
        self.leave_first_thread(t);
        if let Some(d) = &mut self.dense {
            if t.index() < d.stride {
                return d.add(e.index(), t.0, [calls, subcalls], exclusive, inclusive);
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
        // The first thread (index 0): every cell so far is its own.
        if let Some(c) = self.first_cell_of(e.0) {
            add_at(&mut self.kinds, c, [calls, subcalls], exclusive, inclusive);
            return false;
        }
        self.note_first_event(e.0);
        self.kinds[0].push(calls);
        self.kinds[1].push(subcalls);
        for (m, (x, i)) in exclusive.iter().zip(inclusive).enumerate() {
            self.kinds[2 + 2 * m].push(*x);
            self.kinds[3 + 2 * m].push(*i);
        }
        true
    }

    /// The arena of `n_events` events: cells grouped by event, each event's cells in thread
    /// order. When only the first thread came and its cells came event by event (a call tree
    /// listed in node order) the arrays are moved, not copied; otherwise each value array is
    /// rearranged (each event has one cell: its place is its event's start) and freed in
    /// turn, so the peak is the cells plus one array.
    pub(crate) fn finish(self, n_events: usize) -> IntervalColumns {
        if let Some(dense) = self.dense {
            return from_dense(dense);
        }
        if let Some(drafts) = self.drafts {
            return from_drafts(drafts, self.kinds.len());
        }
        let cells = self.first_cells();
        let CellRows {
            kinds,
            runs,
            unordered,
            ..
        } = self;
        // Every cell is the first thread's (index 0), each event's at most one.
        let kinds = match unordered {
            // Cell `c` is event `c`, every event has one (a call tree listed node by node):
            // no per-cell thread and no per-event range is stored.
            None if cells == n_events && runs.iter().all(|&(c0, e0)| c0 == e0 as usize) => {
                let mut kinds = kinds;
                for k in &mut kinds {
                    k.shrink_to_fit();
                }
                return IntervalColumns {
                    cells: CellIndex::full(n_events, 1),
                    kinds,
                };
            }
            None => {
                let mut kinds = kinds;
                for k in &mut kinds {
                    k.shrink_to_fit();
                }
                kinds
            }
            Some(u) => {
                drop(u.last);
                // Each value array is rearranged and freed in turn: the peak is the cells
                // plus one array.
                let starts = first_thread_starts(n_events, u.event.iter().map(|&e| e as usize));
                let mut out_kinds = Vec::with_capacity(kinds.len());
                for values in kinds {
                    let mut out = vec![0.0; values.len()];
                    for (&e, &v) in u.event.iter().zip(&values) {
                        out[starts[e as usize]] = v;
                    }
                    drop(values);
                    out_kinds.push(out);
                }
                return IntervalColumns {
                    cells: CellIndex::Listed {
                        starts,
                        threads: vec![ThreadIndex(0); cells],
                    },
                    kinds: out_kinds,
                };
            }
        };
        let events = runs.iter().enumerate().flat_map(|(i, &(c0, e0))| {
            let end = runs.get(i + 1).map_or(cells, |r| r.0);
            e0 as usize..e0 as usize + (end - c0)
        });
        IntervalColumns {
            cells: CellIndex::Listed {
                starts: first_thread_starts(n_events, events),
                threads: vec![ThreadIndex(0); cells],
            },
            kinds,
        }
    }
}

/// The cell ranges of `n_events` events of which each of `events` has one cell (each event
/// at most once): event `e` owns cells `starts[e]..starts[e + 1]`.
fn first_thread_starts(n_events: usize, events: impl Iterator<Item = usize>) -> Vec<usize> {
    let mut starts = vec![0usize; n_events + 1];
    for e in events {
        starts[e + 1] += 1;
    }
    for e in 0..n_events {
        starts[e + 1] += starts[e];
    }
    starts
}

/// The arena from one draft per event: each draft's threads and its row-major values, one kind
/// at a time, freed as it is copied.
fn from_drafts(drafts: Vec<Draft>, width: usize) -> IntervalColumns {
    let cells: usize = drafts.iter().map(|d| d.threads.len()).sum();
    let mut starts = Vec::with_capacity(drafts.len() + 1);
    let mut threads = Vec::with_capacity(cells);
    let mut kinds: Vec<Vec<f64>> = (0..width).map(|_| Vec::with_capacity(cells)).collect();
    starts.push(0);
    for d in drafts {
        threads.extend_from_slice(&d.threads);
        for (k, values) in kinds.iter_mut().enumerate() {
            values.extend(d.rows.iter().skip(k).step_by(width));
        }
        starts.push(threads.len());
    }
    IntervalColumns {
        cells: CellIndex::Listed { starts, threads },
        kinds,
    }
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
    // Every event on every thread `0..T` (each slot filled by its own thread): the arrays are
    // already the arena, and no thread or range needs storing.
    let full = count.iter().all(|&n| n as usize == stride)
        && threads[..count.len() * stride]
            .chunks_exact(stride.max(1))
            .all(|ts| ts.iter().enumerate().all(|(i, &t)| t as usize == i));
    if full && stride > 0 {
        drop(threads);
        let end = count.len() * stride;
        for k in &mut kinds {
            k.truncate(end);
            k.shrink_to_fit();
        }
        return IntervalColumns {
            cells: CellIndex::full(count.len(), stride),
            kinds,
        };
    }
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
        cells: CellIndex::Listed {
            starts,
            // The same allocation, each u32 read as its ThreadIndex.
            threads: threads.into_iter().map(ThreadIndex).collect(),
        },
        kinds,
    }
}

#[cfg(test)]
mod tests;
