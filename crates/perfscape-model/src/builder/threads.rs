//! Adding threads to a [`ProfileBuilder`]: one at a time ([`ProfileBuilder::add_thread`],
//! in the parent module) or many at once ([`ProfileBuilder::add_threads`]), and the steps
//! both share: the checks, the thread's own facts (metadata, total, declared timers) and its
//! user events.

use super::{BuildNote, ProfileBuilder};
use crate::event_index::write_name;
use crate::ids::{EventId, ThreadId, ThreadIndex};
use crate::thread_data::{BuildError, RowEvent, ThreadData};

impl ProfileBuilder {
    /// Adds `threads` (ascending [`ThreadId`] order, each after the threads added before):
    /// the same as [`ProfileBuilder::add_thread`] on each in turn, with the same profile,
    /// notes and errors.
    ///
    /// Each thread's events are found in turn, then the cells of all of them are written
    /// together, with the cell layout checked once for them all and a few rows at a time
    /// across the threads: thread by thread, every cell of a TAU thread goes to another
    /// event's column on another page.
    ///
    /// # Errors
    /// The first error [`ProfileBuilder::add_thread`] would return; the threads before it are
    /// added.
    pub fn add_threads(&mut self, threads: Vec<(ThreadId, ThreadData)>) -> Result<(), BuildError> {
        let t0 = ThreadIndex::from(self.threads.len());
        if t0.index() == 0 || threads.len() < 2 {
            for (id, data) in threads {
                self.add_thread(id, data)?;
            }
            return Ok(());
        }
        let mut events: Vec<Vec<EventId>> = Vec::with_capacity(threads.len());
        // Per event, the last thread of the block (plus one) that has a cell of it.
        let mut seen: Vec<u32> = Vec::new();
        let mut summed = false;
        let mut failed = None;
        for (j, (id, data)) in threads.iter().enumerate() {
            if let Err(e) = self.check_thread(self.threads.last().copied(), *id, data) {
                failed = Some(e);
                break;
            }
            let t = self.begin_thread(*id, data);
            let mut list = Vec::with_capacity(data.timer_count());
            self.resolve_rows(data, &mut list);
            seen.resize(self.events.len(), 0);
            let mark = u32::try_from(j + 1).unwrap_or(u32::MAX);
            for &e in &list {
                if seen[e.index()] == mark {
                    // Noted where `add_cell` notes it; summed when the cells are added.
                    summed = true;
                    self.note_summed(*id, e);
                }
                seen[e.index()] = mark;
            }
            events.push(list);
            self.add_atomics(*id, t, data);
        }
        let written = !summed
            && self
                .cells
                .add_block(t0, &events, |j, r| threads[j].1.row_values(r));
        if !written {
            // Cell by cell, in the same order as `add_thread` (a second cell of an event on
            // a thread is summed here, and was noted above).
            for (j, list) in events.iter().enumerate() {
                let t = ThreadIndex::from(t0.index() + j);
                for (r, &e) in list.iter().enumerate() {
                    let (calls, subcalls, exclusive, inclusive) = threads[j].1.row_values(r);
                    self.cells.add(e, t, calls, subcalls, exclusive, inclusive);
                }
            }
        }
        failed.map_or(Ok(()), Err)
    }

    /// Checks that thread `id` with `data` can follow thread `previous` (the last added):
    /// ids ascend, the rows carry one value per metric, and every event id is one this
    /// builder made.
    ///
    /// # Errors
    /// [`BuildError::ThreadOrder`], [`BuildError::MetricCount`] or
    /// [`BuildError::UnknownEvent`].
    pub(super) fn check_thread(
        &self,
        previous: Option<ThreadId>,
        id: ThreadId,
        data: &ThreadData,
    ) -> Result<(), BuildError> {
        if let Some(previous) = previous
            && previous >= id
        {
            return Err(BuildError::ThreadOrder { previous, got: id });
        }
        let n_metrics = self.metrics.len();
        if data.n_metrics() != n_metrics && data.timer_count() > 0 {
            return Err(BuildError::MetricCount {
                event: match data.timer_rows().next() {
                    Some((RowEvent::Id(e), ..)) => {
                        let mut name = String::new();
                        write_name(&self.events, e, &mut name);
                        name
                    }
                    _ => data.timer_name(0).to_string(),
                },
                expected: n_metrics,
                got: data.n_metrics(),
            });
        }
        let n_events = self.events.len();
        if let Some(e) = data.largest_event_id().filter(|e| e.index() >= n_events) {
            return Err(BuildError::UnknownEvent { event: e.0 });
        }
        Ok(())
    }

    /// Adds thread `id` (checked by [`ProfileBuilder::check_thread`]) with its metadata, its
    /// total and its declared timers, and returns its index; its cells and user events are
    /// added after.
    pub(super) fn begin_thread(&mut self, id: ThreadId, data: &ThreadData) -> ThreadIndex {
        let n_metrics = self.metrics.len();
        let t = ThreadIndex::from(self.threads.len());
        self.threads.push(id);
        let (template, pairs) = data.metadata_with_template();
        self.metadata.add_with_template(t, template, pairs);
        let given = data.total();
        self.has_total.push(given.len() == n_metrics && n_metrics > 0);
        if given.len() == n_metrics {
            self.totals.extend_from_slice(given);
        } else {
            self.totals.extend(std::iter::repeat_n(0.0, n_metrics));
        }
        for (name, groups) in data.declared_rows() {
            self.intern_event(name, groups);
        }
        t
    }

    /// Adds the user events of thread `id` (index `t`). One listed twice is combined as
    /// ParaProf combines it (counts summed, the count-weighted mean, min, max, sums of
    /// squares summed) and noted.
    pub(super) fn add_atomics(&mut self, id: ThreadId, t: ThreadIndex, data: &ThreadData) {
        for (name, [count, max, min, mean, sum_squares]) in data.atomic_rows() {
            let a = self.intern_atomic(name);
            let col = &mut self.atomic[a.index()];
            if col.threads.last() == Some(&t) {
                let last = col.threads.len() - 1;
                let n = col.count[last] + count;
                col.mean[last] = if n != 0.0 {
                    (col.mean[last] * col.count[last] + mean * count) / n
                } else {
                    0.0
                };
                col.count[last] = n;
                col.max[last] = col.max[last].max(max);
                col.min[last] = col.min[last].min(min);
                col.sum_squares[last] += sum_squares;
                self.notes.push(BuildNote {
                    thread: id,
                    message: format!(
                        "user event `{name}` is listed more than once; the entries were combined"
                    ),
                });
            } else {
                col.threads.push(t);
                col.count.push(count);
                col.max.push(max);
                col.min.push(min);
                col.mean.push(mean);
                col.sum_squares.push(sum_squares);
            }
        }
    }
}
