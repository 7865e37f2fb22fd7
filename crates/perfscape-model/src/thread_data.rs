//! [`ThreadData`]: what a reader parsed for one thread, handed to the builder.
//!
//! Names are stored in one text arena per thread (no allocation per line), already
//! normalized, so the sequential builder only has to look them up. Readers fill it in
//! parallel, one thread each.

use crate::event::{normalize_timer_name, normalize_user_event_name};
use crate::ids::{EventId, ThreadId};
use std::sync::Arc;

/// Metadata key/value pairs shared by the threads of a run (see
/// [`ThreadData::set_metadata_template`]): `(key, value)` in the order the reader found them.
pub type MetadataTemplate = Arc<[(String, String)]>;

/// Errors of [`crate::ProfileBuilder::add_thread`]: the caller broke the builder's contract.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// Threads must be added in strictly ascending order of [`ThreadId`].
    #[error(
        "thread {got} added after thread {previous}: threads must be added once each, in ascending order"
    )]
    ThreadOrder {
        /// The last thread added.
        previous: ThreadId,
        /// The thread that came out of order.
        got: ThreadId,
    },
    /// A row named an event id the builder did not return (see [`ThreadData::push_event`]).
    #[error("timer row names event #{event}, which the builder did not intern")]
    UnknownEvent {
        /// The event id given.
        event: u32,
    },
    /// A row carried a number of metric values different from the profile's metric count.
    #[error("event `{event}` has {got} values per kind but the profile has {expected} metrics")]
    MetricCount {
        /// Event name.
        event: String,
        /// Metrics of the profile.
        expected: usize,
        /// Values given.
        got: usize,
    },
    /// Rows given as columns ([`crate::ThreadRows::push_columns`]) whose value arrays are
    /// not as long as their list of events.
    #[error("a value column has {got} rows but {expected} events were given")]
    RowCount {
        /// Events given.
        expected: usize,
        /// Values in the column.
        got: usize,
    },
}

/// One metadata pair of a thread: its own key and value in the text arena, or pair `k` of
/// the thread's [`MetadataTemplate`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum MetaPair {
    Own(Span, Span),
    Template(u32),
}

/// A range of [`ThreadData`]'s text arena.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Span {
    start: u32,
    len: u32,
}

/// A timer row: 24 bytes, the builder reads every row of every thread once more after the
/// reader wrote it (on another core: the fewer bytes, the fewer cache misses).
#[derive(Clone, Copy, Debug)]
struct TimerRow {
    /// The event, when the reader interned it in the builder ([`ThreadData::push_event`]);
    /// [`NAMED`] for a row named by its name (in [`ThreadData`]'s `named`).
    event: u32,
    calls: f64,
    subcalls: f64,
}

/// [`TimerRow::event`] of a row named by its name. No builder makes this id (it would be its
/// 2^32-th event), and [`crate::ProfileBuilder::add_thread`] refuses a row naming it.
const NAMED: u32 = u32::MAX;

const _: () = assert!(std::mem::size_of::<TimerRow>() == 24);

/// How a timer row names its event: by whole name (TAU text) or by an event the reader
/// interned in the builder (call-tree formats, [`crate::ProfileBuilder::intern_node`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum RowEvent<'a> {
    /// Normalized whole name and `|`-separated groups.
    Name(&'a str, &'a str),
    /// An interned event.
    Id(EventId),
}

/// The exclusive and inclusive value of one timer in one metric.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MetricValue {
    /// Position of the metric in the profile's metric list.
    pub metric: usize,
    /// Exclusive value, in the metric's unit.
    pub exclusive: f64,
    /// Inclusive value, in the metric's unit.
    pub inclusive: f64,
}

/// The measured data of one thread, as a reader parsed it: timers (interval events), user
/// (atomic) events and metadata. Timer values are stored flat, `n_metrics` per row.
#[derive(Debug, Clone, Default)]
pub struct ThreadData {
    n_metrics: usize,
    text: String,
    metadata: Vec<MetaPair>,
    /// The pairs [`MetaPair::Template`] points to.
    metadata_template: Option<MetadataTemplate>,
    timers: Vec<TimerRow>,
    /// The rows named by their name, in row order: (row, normalized name, groups).
    named: Vec<(u32, Span, Span)>,
    exclusive: Vec<f64>,
    inclusive: Vec<f64>,
    atomics: Vec<(Span, [f64; 5])>,
    declared: Vec<(Span, Span)>,
    /// The largest event id pushed or declared (checked once by the builder).
    largest_id: Option<EventId>,
    total: Vec<f64>,
}

impl ThreadData {
    /// Empty data for a profile with `n_metrics` metrics.
    pub fn new(n_metrics: usize) -> Self {
        Self {
            n_metrics,
            ..Self::default()
        }
    }

    /// Empty data with room for `timers` timer rows and `text_bytes` bytes of names.
    pub fn with_capacity(n_metrics: usize, timers: usize, text_bytes: usize) -> Self {
        Self {
            n_metrics,
            text: String::with_capacity(text_bytes),
            timers: Vec::with_capacity(timers),
            exclusive: Vec::with_capacity(timers * n_metrics),
            inclusive: Vec::with_capacity(timers * n_metrics),
            ..Self::default()
        }
    }

    /// Makes room for `additional` more timer rows (readers that know their row count ask
    /// for it once, instead of a doubling that leaves up to half the arrays unused).
    pub fn reserve_timers(&mut self, additional: usize) {
        self.timers.reserve_exact(additional);
        self.exclusive.reserve_exact(additional * self.n_metrics);
        self.inclusive.reserve_exact(additional * self.n_metrics);
    }

    fn store(&mut self, s: &str) -> Span {
        let start = self.text.len();
        self.text.push_str(s);
        Span {
            start: u32::try_from(start).unwrap_or(u32::MAX),
            len: u32::try_from(s.len()).unwrap_or(u32::MAX),
        }
    }

    fn get(&self, s: Span) -> &str {
        let start = s.start as usize;
        self.text.get(start..start + s.len as usize).unwrap_or("")
    }

    /// Number of metrics per timer row.
    pub fn n_metrics(&self) -> usize {
        self.n_metrics
    }

    /// Adds a metadata key/value.
    pub fn push_metadata(&mut self, key: &str, value: &str) {
        let k = self.store(key);
        let v = self.store(value);
        self.metadata.push(MetaPair::Own(k, v));
    }

    /// Makes `template` the pairs [`ThreadData::push_metadata_from_template`] adds from: a
    /// reader whose threads repeat most of one list of metadata (TAU: the same ~70 keys, most
    /// values alike on every rank) shares one copy of it instead of storing it per thread.
    /// Replaces an earlier template (pairs added from it before are then read from the new
    /// one: set it once, before adding any).
    pub fn set_metadata_template(&mut self, template: MetadataTemplate) {
        self.metadata.reserve_exact(template.len());
        self.metadata_template = Some(template);
    }

    /// Adds pair `k` of the template ([`ThreadData::set_metadata_template`]) as a metadata
    /// key/value, as [`ThreadData::push_metadata`] would add it. Returns false, adding
    /// nothing, when there is no template or it has no pair `k`.
    pub fn push_metadata_from_template(&mut self, k: usize) -> bool {
        let in_range = self.metadata_template.as_ref().is_some_and(|t| k < t.len());
        if let (true, Ok(k)) = (in_range, u32::try_from(k)) {
            self.metadata.push(MetaPair::Template(k));
            return true;
        }
        false
    }

    /// Metadata key/values in the order added.
    pub fn metadata(&self) -> impl Iterator<Item = (&str, &str)> + '_ {
        self.metadata_with_template().1.map(|(_, k, v)| (k, v))
    }

    /// The thread's metadata pairs as [`ThreadData::metadata`] gives them, each with its
    /// number in the template ([`ThreadData::set_metadata_template`]) when it is one of the
    /// template's pairs; and the template.
    pub(crate) fn metadata_with_template(
        &self,
    ) -> (
        Option<&MetadataTemplate>,
        impl Iterator<Item = (Option<u32>, &str, &str)> + '_,
    ) {
        let template = self.metadata_template.as_ref();
        let items = self.metadata.iter().map(move |&p| match p {
            MetaPair::Own(k, v) => (None, self.get(k), self.get(v)),
            MetaPair::Template(j) => template
                .and_then(|t| t.get(j as usize))
                .map_or((None, "", ""), |(k, v)| (Some(j), k.as_str(), v.as_str())),
        });
        (template, items)
    }

    /// Appends a timer row. `name` is the raw name (normalized here as ParaProf shows it, see
    /// [`normalize_timer_name`]); `groups` is TAU's `|`-separated group list (may be empty);
    /// `exclusive`/`inclusive` hold one value per metric. Errors if the slices do not have
    /// `n_metrics` values.
    pub fn push_timer(
        &mut self,
        name: &str,
        groups: &str,
        calls: f64,
        subcalls: f64,
        exclusive: &[f64],
        inclusive: &[f64],
    ) -> Result<(), BuildError> {
        self.check_values(exclusive, inclusive, || name.to_string())?;
        self.push_row(name, groups, calls, subcalls);
        self.exclusive.extend_from_slice(exclusive);
        self.inclusive.extend_from_slice(inclusive);
        Ok(())
    }

    /// Errors unless both slices hold `n_metrics` values; `event` names the row's event.
    fn check_values(
        &self,
        exclusive: &[f64],
        inclusive: &[f64],
        event: impl FnOnce() -> String,
    ) -> Result<(), BuildError> {
        if exclusive.len() != self.n_metrics || inclusive.len() != self.n_metrics {
            return Err(BuildError::MetricCount {
                event: event(),
                expected: self.n_metrics,
                got: exclusive.len().min(inclusive.len()),
            });
        }
        Ok(())
    }

    /// Appends a timer row with values for one metric only (the other metrics get 0, to be
    /// filled with [`ThreadData::set_metric_values`]).
    pub fn push_timer_for_metric(
        &mut self,
        name: &str,
        groups: &str,
        calls: f64,
        subcalls: f64,
        value: MetricValue,
    ) {
        self.push_row(name, groups, calls, subcalls);
        self.push_one_metric(value);
    }

    /// Appends a timer row for event `e`, interned beforehand in the builder this data is
    /// added to ([`crate::ProfileBuilder::intern_node`]): no name is stored. Errors like
    /// [`ThreadData::push_timer`].
    pub fn push_event(
        &mut self,
        e: EventId,
        calls: f64,
        subcalls: f64,
        exclusive: &[f64],
        inclusive: &[f64],
    ) -> Result<(), BuildError> {
        self.check_values(exclusive, inclusive, || format!("#{}", e.0))?;
        self.push_event_row(e, calls, subcalls);
        self.exclusive.extend_from_slice(exclusive);
        self.inclusive.extend_from_slice(inclusive);
        Ok(())
    }

    /// Appends a timer row for event `e` (interned beforehand, as for
    /// [`ThreadData::push_event`]) with values for one metric only, as
    /// [`ThreadData::push_timer_for_metric`] does for a named row.
    pub fn push_event_for_metric(&mut self, e: EventId, calls: f64, subcalls: f64, value: MetricValue) {
        self.push_event_row(e, calls, subcalls);
        self.push_one_metric(value);
    }

    /// The row of event `e` (values appended by the caller).
    fn push_event_row(&mut self, e: EventId, calls: f64, subcalls: f64) {
        self.largest_id = self.largest_id.max(Some(e));
        self.timers.push(TimerRow {
            event: e.0,
            calls,
            subcalls,
        });
    }

    /// The values of the row just pushed: `value`'s metric, 0 for the others.
    fn push_one_metric(&mut self, value: MetricValue) {
        if self.n_metrics == 1 && value.metric == 0 {
            self.exclusive.push(value.exclusive);
            self.inclusive.push(value.inclusive);
            return;
        }
        let base = self.exclusive.len();
        self.exclusive.resize(base + self.n_metrics, 0.0);
        self.inclusive.resize(base + self.n_metrics, 0.0);
        if value.metric < self.n_metrics {
            self.exclusive[base + value.metric] = value.exclusive;
            self.inclusive[base + value.metric] = value.inclusive;
        }
    }

    /// Sets the thread's total per metric (`n_metrics` values; ignored otherwise): what the
    /// thread measured in all, when the reader knows it better than the largest inclusive
    /// value does. A sampled call tree has several roots (the stacks of threads, signal
    /// handlers, unwinds that failed), so its total is the sum of its roots' inclusive
    /// values (pprof's and Hatchet's total), not the largest one (ParaProf's rule for TAU's
    /// single `.TAU application` root). See [`crate::Profile::thread_total`].
    pub fn set_total(&mut self, total: &[f64]) {
        if total.len() == self.n_metrics {
            self.total = total.to_vec();
        }
    }

    /// The total set by [`ThreadData::set_total`] (empty when none was set).
    pub(crate) fn total(&self) -> &[f64] {
        &self.total
    }

    /// Declares interned event `e` without a value on this thread (see
    /// [`ThreadData::declare_timer`]).
    pub fn declare_event(&mut self, e: EventId) {
        // The builder interned it already: only the id's validity is left to check.
        self.largest_id = self.largest_id.max(Some(e));
    }

    fn push_row(&mut self, name: &str, groups: &str, calls: f64, subcalls: f64) {
        let name = self.store(&normalize_timer_name(name));
        let groups = self.store(groups);
        let row = u32::try_from(self.timers.len()).unwrap_or(u32::MAX);
        self.named.push((row, name, groups));
        self.timers.push(TimerRow {
            event: NAMED,
            calls,
            subcalls,
        });
    }

    /// Makes room for `additional` more user event rows ([`ThreadData::push_atomic`]).
    pub fn reserve_atomics(&mut self, additional: usize) {
        self.atomics.reserve_exact(additional);
    }

    /// Appends a user (atomic) event row: number of samples, max, min, mean, sum of squares.
    /// The name is normalized as ParaProf shows it ([`normalize_user_event_name`]).
    pub fn push_atomic(&mut self, name: &str, count: f64, max: f64, min: f64, mean: f64, sum_squares: f64) {
        let span = self.store(&normalize_user_event_name(name));
        self.atomics.push((span, [count, max, min, mean, sum_squares]));
    }

    /// Declares a timer this thread lists without a value: the builder registers the event
    /// (name and groups) but the thread does not count as having it. TAU's tools treat a line
    /// with zero calls this way.
    pub fn declare_timer(&mut self, name: &str, groups: &str) {
        let n = self.store(&normalize_timer_name(name));
        let g = self.store(groups);
        self.declared.push((n, g));
    }

    /// Number of timer rows.
    pub fn timer_count(&self) -> usize {
        self.timers.len()
    }

    /// Number of user event rows.
    pub fn atomic_count(&self) -> usize {
        self.atomics.len()
    }

    /// Normalized name of timer row `i` (empty if out of range or pushed by event id).
    pub fn timer_name(&self, i: usize) -> &str {
        let Ok(row) = u32::try_from(i) else { return "" };
        self.named
            .binary_search_by_key(&row, |&(r, _, _)| r)
            .map_or("", |k| self.get(self.named[k].1))
    }

    /// Calls of timer row `i` (0 if out of range).
    pub fn timer_calls(&self, i: usize) -> f64 {
        self.timers.get(i).map_or(0.0, |r| r.calls)
    }

    /// Overwrites the values of metric `m` of timer row `i` (used to merge per-metric files);
    /// ignored when out of range.
    pub fn set_metric_values(&mut self, i: usize, m: usize, exclusive: f64, inclusive: f64) {
        if m < self.n_metrics
            && let Some(x) = self.exclusive.get_mut(i * self.n_metrics + m)
        {
            *x = exclusive;
            self.inclusive[i * self.n_metrics + m] = inclusive;
        }
    }

    /// The values of timer row `r`: (calls, subcalls, exclusive per metric, inclusive per
    /// metric).
    ///
    /// # Panics
    /// When `r` is not a row (`r >= timer_count()`).
    #[inline]
    pub(crate) fn row_values(&self, r: usize) -> (f64, f64, &[f64], &[f64]) {
        let n = self.n_metrics;
        let row = &self.timers[r];
        (
            row.calls,
            row.subcalls,
            &self.exclusive[r * n..(r + 1) * n],
            &self.inclusive[r * n..(r + 1) * n],
        )
    }

    /// Timer rows: (event, calls, subcalls, exclusive per metric, inclusive per metric).
    pub(crate) fn timer_rows(&self) -> impl Iterator<Item = (RowEvent<'_>, f64, f64, &[f64], &[f64])> + '_ {
        let n = self.n_metrics;
        let mut named = self.named.iter();
        self.timers.iter().enumerate().map(move |(i, r)| {
            (
                match r.event {
                    NAMED => match named.next() {
                        Some(&(_, name, groups)) => RowEvent::Name(self.get(name), self.get(groups)),
                        None => RowEvent::Name("", ""),
                    },
                    e => RowEvent::Id(EventId(e)),
                },
                r.calls,
                r.subcalls,
                &self.exclusive[i * n..(i + 1) * n],
                &self.inclusive[i * n..(i + 1) * n],
            )
        })
    }

    /// User event rows: (name, [count, max, min, mean, sum of squares]).
    pub(crate) fn atomic_rows(&self) -> impl Iterator<Item = (&str, [f64; 5])> + '_ {
        self.atomics.iter().map(|&(s, v)| (self.get(s), v))
    }

    /// Declared timers: (name, groups).
    pub(crate) fn declared_rows(&self) -> impl Iterator<Item = (&str, &str)> + '_ {
        self.declared.iter().map(|&(n, g)| (self.get(n), self.get(g)))
    }

    /// The largest interned event id among the rows and declarations (`None` when all rows
    /// are named).
    pub(crate) fn largest_event_id(&self) -> Option<EventId> {
        self.largest_id
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Metric, ProfileBuilder, ThreadIndex};

    #[test]
    fn metadata_from_a_template_reads_as_the_pairs_pushed_by_name() {
        let template: MetadataTemplate = vec![
            ("host".to_string(), "vm".to_string()),
            ("pid".to_string(), "1".to_string()),
        ]
        .into();
        let mut d = ThreadData::new(1);
        assert!(!d.push_metadata_from_template(0), "no template yet");
        d.set_metadata_template(template.clone());
        assert!(d.push_metadata_from_template(1));
        d.push_metadata("rank", "3");
        assert!(d.push_metadata_from_template(0));
        assert!(!d.push_metadata_from_template(2), "out of range");
        let mut by_name = ThreadData::new(1);
        for (k, v) in [("pid", "1"), ("rank", "3"), ("host", "vm")] {
            by_name.push_metadata(k, v);
        }
        assert_eq!(
            d.metadata().collect::<Vec<_>>(),
            by_name.metadata().collect::<Vec<_>>()
        );
        let mut b = ProfileBuilder::new(vec![Metric::tau("TIME")]);
        b.add_thread(ThreadId::new(0, 0, 0), by_name).unwrap();
        b.add_thread(ThreadId::new(1, 0, 0), d).unwrap();
        let (p, _) = b.finish();
        assert_eq!(p.metadata().get_common("host"), Some("vm"));
        assert_eq!(p.metadata().get(ThreadIndex(1), "rank"), Some("3"));
    }
}
