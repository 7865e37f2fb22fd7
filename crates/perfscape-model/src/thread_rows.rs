//! [`ThreadRows`]: a thread's timer rows written straight into a [`ProfileBuilder`], for
//! readers that build a call tree of 10^5–10^6 nodes: no [`ThreadData`] row per node is held
//! beside the builder's own copy of the values.

use crate::builder::{NodeFrame, ProfileBuilder};
use crate::ids::{EventId, ThreadId, ThreadIndex};
use crate::thread_data::{BuildError, ThreadData};

/// The rows of one thread being added by [`ProfileBuilder::add_thread_with`]: events are
/// interned and their values written into the builder as they come.
#[derive(Debug)]
pub struct ThreadRows<'b> {
    builder: &'b mut ProfileBuilder,
    t: ThreadIndex,
    id: ThreadId,
}

impl ProfileBuilder {
    /// Adds thread `id` with what `data` holds (its metadata, rows, user events and total,
    /// exactly as [`ProfileBuilder::add_thread`]), then calls `write` to add more timer rows
    /// straight into the builder. Returns the thread's index and what `write` returned.
    ///
    /// Errors: those of [`ProfileBuilder::add_thread`]; `write` sees its own row errors.
    pub fn add_thread_with<R>(
        &mut self,
        id: ThreadId,
        data: ThreadData,
        write: impl FnOnce(&mut ThreadRows<'_>) -> R,
    ) -> Result<(ThreadIndex, R), BuildError> {
        let t = self.add_thread(id, data)?;
        let mut rows = ThreadRows { builder: self, t, id };
        Ok((t, write(&mut rows)))
    }
}

impl ThreadRows<'_> {
    /// The thread's index in the profile.
    pub fn thread(&self) -> ThreadIndex {
        self.t
    }

    /// Number of metrics of the profile (values per row and kind).
    pub fn n_metrics(&self) -> usize {
        self.builder.metrics().len()
    }

    /// Interns a call-tree node, as [`ProfileBuilder::intern_node`].
    pub fn intern_node(&mut self, parent: Option<EventId>, frame: &str, raw_groups: &str) -> EventId {
        self.builder.intern_node(parent, frame, raw_groups)
    }

    /// A frame made ready for many nodes, as [`ProfileBuilder::node_frame`].
    pub fn node_frame(&mut self, frame: &str, raw_groups: &str) -> NodeFrame {
        self.builder.node_frame(frame, raw_groups)
    }

    /// Interns a call-tree node of a ready frame, as [`ProfileBuilder::intern_node_frame`].
    pub fn intern_node_frame(&mut self, parent: EventId, frame: &NodeFrame) -> EventId {
        self.builder.intern_node_frame(parent, frame)
    }

    /// Reserves room for `additional` more events, as [`ProfileBuilder::reserve_events`].
    pub fn reserve_events(&mut self, additional: usize) {
        self.builder.reserve_events(additional);
    }

    /// Reserves room for `additional` more rows of this thread (amortized).
    pub fn reserve_rows(&mut self, additional: usize) {
        self.builder.reserve_cells(additional);
    }

    /// Adds the thread's row of event `e` (an id the builder returned): calls, subcalls and
    /// per metric the exclusive and inclusive value (one per metric, in the metric's unit). A
    /// second row of the same event is added to the first and noted, as in
    /// [`ProfileBuilder::add_thread`].
    ///
    /// Errors: [`BuildError::UnknownEvent`] for an id the builder did not return,
    /// [`BuildError::MetricCount`] when a slice does not have one value per metric.
    pub fn push_event(
        &mut self,
        e: EventId,
        calls: f64,
        subcalls: f64,
        exclusive: &[f64],
        inclusive: &[f64],
    ) -> Result<(), BuildError> {
        if e.index() >= self.builder.event_count() {
            return Err(BuildError::UnknownEvent { event: e.0 });
        }
        let expected = self.builder.metrics().len();
        if exclusive.len() != expected || inclusive.len() != expected {
            return Err(BuildError::MetricCount {
                event: self.builder.event_name(e),
                expected,
                got: if exclusive.len() == expected {
                    inclusive.len()
                } else {
                    exclusive.len()
                },
            });
        }
        self.builder
            .add_cell(self.id, self.t, e, [calls, subcalls], exclusive, inclusive);
        Ok(())
    }

    /// Adds the thread's rows of `events` (ids the builder returned) given as whole columns,
    /// `kinds` in [`crate::IntervalColumns`] order: calls, subcalls, then per metric the
    /// exclusive and the inclusive values (in the metric's unit), each as long as `events`.
    /// When the thread is the profile's first and `events` ascend (strictly, and past every
    /// event it has a row of), the arrays become the profile's cells as they are: a call tree
    /// of 10^6 nodes is not copied, nor is an event index kept per row. Otherwise the rows
    /// are added one by one, as [`ThreadRows::push_event`] adds them.
    ///
    /// Errors (nothing is added then): [`BuildError::UnknownEvent`] for an id the builder did
    /// not return, [`BuildError::RowCount`] for an array not as long as `events`,
    /// [`BuildError::MetricCount`] when `kinds` does not have `2 + 2M` arrays.
    pub fn push_columns(&mut self, events: &[EventId], kinds: Vec<Vec<f64>>) -> Result<(), BuildError> {
        if let Some(e) = events.iter().find(|e| e.index() >= self.builder.event_count()) {
            return Err(BuildError::UnknownEvent { event: e.0 });
        }
        let metrics = self.builder.metrics().len();
        if let Some(bad) = kinds.iter().find(|k| k.len() != events.len()) {
            return Err(BuildError::RowCount {
                expected: events.len(),
                got: bad.len(),
            });
        }
        if kinds.len() != 2 + 2 * metrics {
            return Err(BuildError::MetricCount {
                event: events
                    .first()
                    .map_or_else(String::new, |&e| self.builder.event_name(e)),
                expected: metrics,
                got: kinds.len().saturating_sub(2) / 2,
            });
        }
        self.builder.add_columns(self.id, self.t, events, kinds);
        Ok(())
    }

    /// Interns the timer named `raw_name` (normalized as [`ThreadData::push_timer`] names
    /// are) with groups `raw_groups`, without a row, and returns its id.
    pub fn declare_timer(&mut self, raw_name: &str, raw_groups: &str) -> EventId {
        self.builder.declare_event(raw_name, raw_groups)
    }

    /// Adds the thread's row of the timer named `raw_name` (normalized and interned as
    /// [`ThreadData::push_timer`] names are) with groups `raw_groups`; errors as
    /// [`ThreadRows::push_event`].
    pub fn push_timer(
        &mut self,
        raw_name: &str,
        raw_groups: &str,
        calls: f64,
        subcalls: f64,
        exclusive: &[f64],
        inclusive: &[f64],
    ) -> Result<(), BuildError> {
        let e = self.builder.declare_event(raw_name, raw_groups);
        self.push_event(e, calls, subcalls, exclusive, inclusive)
    }

    /// Sets the thread's total per metric (as [`ThreadData::set_total`]); ignored unless it
    /// has one value per metric.
    pub fn set_total(&mut self, total: &[f64]) {
        self.builder.set_thread_total(self.t, total);
    }
}

#[cfg(test)]
mod tests {
    use crate::{Metric, MetricId, ProfileBuilder, ThreadData, ThreadId, ThreadIndex};

    /// The same two threads given as ThreadData rows and as ThreadRows give the same profile.
    #[test]
    fn rows_written_straight_equal_rows_given_in_thread_data() {
        let metrics = || vec![Metric::tau("TIME"), Metric::tau("PAPI_TOT_CYC")];
        let mut a = ProfileBuilder::new(metrics());
        let mut b = ProfileBuilder::new(metrics());
        for (rank, scale) in [(0u32, 1.0), (1, 2.0)] {
            let id = ThreadId::new(rank, 0, 0);
            // By ThreadData: node ids interned first, rows pushed by id and by name.
            let main = a.intern_node(None, "main", "G");
            let f = a.intern_node(Some(main), "f", "");
            let mut d = ThreadData::new(2);
            d.push_event(main, 1.0, 1.0, &[3.0 * scale, 30.0], &[7.0 * scale, 70.0])
                .unwrap();
            d.push_event(f, 2.0, 0.0, &[4.0 * scale, 40.0], &[4.0 * scale, 40.0])
                .unwrap();
            d.push_timer("line 12", "L", 5.0, 0.0, &[1.0, 2.0], &[1.0, 2.0])
                .unwrap();
            d.set_total(&[7.0 * scale, 70.0]);
            a.add_thread(id, d).unwrap();
            // By ThreadRows.
            let (t, ()) = b
                .add_thread_with(id, ThreadData::new(2), |rows| {
                    let main = rows.intern_node(None, "main", "G");
                    let f = rows.intern_node(Some(main), "f", "");
                    rows.push_event(main, 1.0, 1.0, &[3.0 * scale, 30.0], &[7.0 * scale, 70.0])
                        .unwrap();
                    rows.push_event(f, 2.0, 0.0, &[4.0 * scale, 40.0], &[4.0 * scale, 40.0])
                        .unwrap();
                    rows.push_timer("line 12", "L", 5.0, 0.0, &[1.0, 2.0], &[1.0, 2.0])
                        .unwrap();
                    rows.set_total(&[7.0 * scale, 70.0]);
                })
                .unwrap();
            assert_eq!(t, ThreadIndex(rank));
        }
        let (pa, na) = a.finish();
        let (pb, nb) = b.finish();
        assert_eq!(pa, pb);
        assert!(na.is_empty() && nb.is_empty());
        assert_eq!(pb.thread_total(ThreadIndex(1), MetricId(0)), Some(14.0));
        let f = pb.event_by_name("main => f").unwrap();
        assert_eq!(pb.interval(f).exclusive(MetricId(0)), &[4.0, 8.0]);
    }

    /// Rows given as columns (adopted for the first thread, added one by one for the second
    /// and for rows out of order) make the profile rows given one by one make.
    #[test]
    fn rows_given_as_columns_equal_rows_given_one_by_one() {
        let metrics = || vec![Metric::tau("TIME"), Metric::tau("PAPI_TOT_CYC")];
        let mut a = ProfileBuilder::new(metrics());
        let mut b = ProfileBuilder::new(metrics());
        // (frame index, calls, subcalls, exclusive, inclusive) per row; frame 0 is the root.
        let threads: [&[(usize, f64)]; 3] = [
            &[(0, 1.0), (1, 2.0), (2, 3.0)],
            &[(0, 4.0), (2, 5.0)],
            &[(2, 6.0), (0, 7.0)], // out of order
        ];
        for (rank, rows_of) in threads.iter().enumerate() {
            let id = ThreadId::new(rank as u32, 0, 0);
            let events = |intern: &mut dyn FnMut(Option<crate::EventId>, &str) -> crate::EventId| {
                let main = intern(None, "main");
                let f = intern(Some(main), "f");
                let g = intern(Some(f), "g");
                [main, f, g]
            };
            a.add_thread_with(id, ThreadData::new(2), |rows| {
                let ev = events(&mut |p, n| rows.intern_node(p, n, "G"));
                for &(i, x) in *rows_of {
                    rows.push_event(ev[i], x, 1.0, &[x, 2.0 * x], &[3.0 * x, 4.0 * x])
                        .unwrap();
                }
            })
            .unwrap();
            b.add_thread_with(id, ThreadData::new(2), |rows| {
                let ev = events(&mut |p, n| rows.intern_node(p, n, "G"));
                let ids: Vec<_> = rows_of.iter().map(|&(i, _)| ev[i]).collect();
                let col = |k: f64| rows_of.iter().map(|&(_, x)| k * x).collect::<Vec<_>>();
                let ones = vec![1.0; rows_of.len()];
                let kinds = vec![col(1.0), ones, col(1.0), col(3.0), col(2.0), col(4.0)];
                // Wrong shapes are refused and add nothing.
                assert!(matches!(
                    rows.push_columns(&ids, vec![vec![1.0]; 6]),
                    Err(crate::BuildError::RowCount { .. })
                ));
                assert!(matches!(
                    rows.push_columns(&ids, kinds[..4].to_vec()),
                    Err(crate::BuildError::MetricCount { .. })
                ));
                assert!(matches!(
                    rows.push_columns(&[crate::EventId(9)], vec![vec![1.0]; 6]),
                    Err(crate::BuildError::UnknownEvent { event: 9 })
                ));
                rows.push_columns(&ids, kinds).unwrap();
            })
            .unwrap();
        }
        let (pa, na) = a.finish();
        let (pb, nb) = b.finish();
        assert_eq!(pa, pb);
        assert!(na.is_empty() && nb.is_empty());
        let g = pb.event_by_name("main => f => g").unwrap();
        assert_eq!(pb.interval(g).inclusive(MetricId(1)), &[12.0, 20.0, 24.0]);
        assert_eq!(pb.interval(g).threads().len(), 3);
    }

    #[test]
    fn a_second_row_is_summed_and_noted_and_bad_rows_are_refused() {
        let mut b = ProfileBuilder::new(vec![Metric::tau("TIME")]);
        b.add_thread_with(ThreadId::new(0, 0, 0), ThreadData::new(1), |rows| {
            let main = rows.intern_node(None, "main", "");
            rows.push_event(main, 1.0, 0.0, &[2.0], &[2.0]).unwrap();
            rows.push_event(main, 1.0, 0.0, &[3.0], &[3.0]).unwrap();
            assert!(
                rows.push_event(crate::EventId(9), 1.0, 0.0, &[1.0], &[1.0])
                    .is_err()
            );
            assert!(rows.push_event(main, 1.0, 0.0, &[1.0, 1.0], &[1.0]).is_err());
        })
        .unwrap();
        let (p, notes) = b.finish();
        let main = p.event_by_name("main").unwrap();
        assert_eq!(p.interval(main).exclusive(MetricId(0)), &[5.0]);
        assert_eq!(p.interval(main).calls(), &[2.0]);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].message.contains("more than once"), "{notes:?}");
    }
}
