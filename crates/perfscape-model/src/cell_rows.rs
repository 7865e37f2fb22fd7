//! [`CellRows`]: the (event, thread) cells of a profile while it is built, in the order the
//! threads give them, turned into the event-by-event [`IntervalColumns`] arena once at the end.

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
        self.last.push(NONE);
    }

    /// Reserves room for `additional` more events.
    pub(crate) fn reserve_events(&mut self, additional: usize) {
        self.last.reserve(additional);
    }

    /// Reserves room for `cells` more cells (amortized, as [`Vec::reserve`]).
    pub(crate) fn reserve(&mut self, cells: usize) {
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
        let CellRows {
            event,
            thread,
            kinds,
            last,
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
