//! [`CellRows`]: the (event, thread) cells of a profile while it is built, turned into the
//! event-by-event [`IntervalColumns`] arena once at the end.
//!
//! The cells of the first thread are kept in arrival order, in one array per kind: a call tree
//! of 10^6 nodes on one thread comes node by node, so its arrays become the arena as they are.
//! When a second thread arrives the cells move to one draft per event (its threads and
//! row-major values), where each further thread's row is appended: runs of many threads
//! (TAU: 10^3–10^6 threads x 10^2–10^3 events) then need no reordering at the end, only one
//! copy of each draft into the arena.

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
}

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

    /// Makes room for one more event (ids are dense: call once per new event, in id order).
    pub(crate) fn push_event(&mut self) {
        match &mut self.drafts {
            Some(drafts) => drafts.push(Draft::default()),
            None => self.last.push(NONE),
        }
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
        if self.drafts.is_none() {
            self.last.reserve(additional);
        }
    }

    /// Reserves room for `cells` more cells (amortized, as [`Vec::reserve`]).
    pub(crate) fn reserve(&mut self, cells: usize) {
        if self.drafts.is_some() {
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
            let r = last as usize;
            self.kinds[0][r] += calls;
            self.kinds[1][r] += subcalls;
            for (m, (x, i)) in exclusive.iter().zip(inclusive).enumerate() {
                self.kinds[2 + 2 * m][r] += x;
                self.kinds[3 + 2 * m][r] += i;
            }
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
        if let Some(drafts) = self.drafts {
            return from_drafts(drafts, self.kinds.len());
        }
        let CellRows {
            event,
            thread,
            kinds,
            last,
            drafts: _,
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
