//! [`ProfileBuilder`]: the one way readers turn what they parsed into a [`Profile`].
//!
//! Readers hand over one thread at a time ([`ThreadData`]), threads in ascending
//! [`ThreadId`] order. The builder interns event, group and user-event names, appends the
//! values to the per-event columns and, in [`ProfileBuilder::finish`], links callpaths to
//! their parents and routines and context user events to their callpaths.

use crate::columns::{AtomicColumn, IntervalColumn};
use crate::event::{
    AtomicEvent, CALLPATH_SEPARATOR, Event, EventKind, SourceLocation, callpath_frames, callpath_leaf,
    callpath_parent, normalize_timer_name, normalize_user_event_name,
};
use crate::ids::{AtomicEventId, EventId, GroupId, ThreadId, ThreadIndex};
use crate::metadata::MetadataBuilder;
use crate::metric::Metric;
use crate::profile::{CallTree, Profile};
use std::collections::HashMap;

/// Errors of [`ProfileBuilder::add_thread`]: the caller broke the builder's contract.
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
}

/// Something the builder did that a user should know about (reported with the load).
#[derive(Debug, Clone, PartialEq)]
pub struct BuildNote {
    /// Thread concerned.
    pub thread: ThreadId,
    /// What happened.
    pub message: String,
}

/// The measured data of one thread, as a reader parsed it: timers (interval events), user
/// (atomic) events and metadata. Values of timer rows are stored flat, `n_metrics` per row.
#[derive(Debug, Clone, Default)]
pub struct ThreadData {
    n_metrics: usize,
    /// Metadata key/values of the thread (TAU's `<metadata>` block).
    pub metadata: Vec<(String, String)>,
    timer_names: Vec<String>,
    timer_groups: Vec<String>,
    calls: Vec<f64>,
    subcalls: Vec<f64>,
    exclusive: Vec<f64>,
    inclusive: Vec<f64>,
    atomic_names: Vec<String>,
    atomic_values: Vec<[f64; 5]>,
    declared: Vec<(String, String)>,
}

impl ThreadData {
    /// Empty data for a profile with `n_metrics` metrics.
    pub fn new(n_metrics: usize) -> Self {
        Self {
            n_metrics,
            ..Self::default()
        }
    }

    /// Number of metrics per timer row.
    pub fn n_metrics(&self) -> usize {
        self.n_metrics
    }

    /// Appends a timer row. `name` is the raw name (normalized by the builder); `groups` is
    /// TAU's `|`-separated group list (may be empty); `exclusive`/`inclusive` hold one value per
    /// metric. Errors if the slices do not have `n_metrics` values.
    pub fn push_timer(
        &mut self,
        name: impl Into<String>,
        groups: impl Into<String>,
        calls: f64,
        subcalls: f64,
        exclusive: &[f64],
        inclusive: &[f64],
    ) -> Result<(), BuildError> {
        let name = name.into();
        if exclusive.len() != self.n_metrics || inclusive.len() != self.n_metrics {
            return Err(BuildError::MetricCount {
                event: name,
                expected: self.n_metrics,
                got: exclusive.len().min(inclusive.len()),
            });
        }
        self.timer_names.push(name);
        self.timer_groups.push(groups.into());
        self.calls.push(calls);
        self.subcalls.push(subcalls);
        self.exclusive.extend_from_slice(exclusive);
        self.inclusive.extend_from_slice(inclusive);
        Ok(())
    }

    /// Appends a user (atomic) event row: number of samples, max, min, mean, sum of squares.
    pub fn push_atomic(
        &mut self,
        name: impl Into<String>,
        count: f64,
        max: f64,
        min: f64,
        mean: f64,
        sum_squares: f64,
    ) {
        self.atomic_names.push(name.into());
        self.atomic_values.push([count, max, min, mean, sum_squares]);
    }

    /// Declares a timer this thread lists without a value: the builder registers the event
    /// (name and groups) but the thread does not count as having it. TAU's tools treat a line
    /// with zero calls this way.
    pub fn declare_timer(&mut self, name: impl Into<String>, groups: impl Into<String>) {
        self.declared.push((name.into(), groups.into()));
    }

    /// Number of timer rows.
    pub fn timer_count(&self) -> usize {
        self.timer_names.len()
    }

    /// Number of user event rows.
    pub fn atomic_count(&self) -> usize {
        self.atomic_names.len()
    }

    /// Raw name of timer row `i`.
    pub fn timer_name(&self, i: usize) -> &str {
        &self.timer_names[i]
    }

    /// Calls of timer row `i`.
    pub fn timer_calls(&self, i: usize) -> f64 {
        self.calls[i]
    }

    /// Overwrites the values of metric `m` of timer row `i` (used to merge per-metric files).
    pub fn set_metric_values(&mut self, i: usize, m: usize, exclusive: f64, inclusive: f64) {
        self.exclusive[i * self.n_metrics + m] = exclusive;
        self.inclusive[i * self.n_metrics + m] = inclusive;
    }
}

#[derive(Debug)]
struct EventDraft {
    event: Event,
    raw_groups: String,
}

/// Incrementally builds a [`Profile`]; see the module documentation.
#[derive(Debug)]
pub struct ProfileBuilder {
    metrics: Vec<Metric>,
    threads: Vec<ThreadId>,
    metadata: MetadataBuilder,
    groups: Vec<String>,
    group_index: HashMap<String, GroupId>,
    events: Vec<EventDraft>,
    event_index: HashMap<String, EventId>,
    interval: Vec<IntervalColumn>,
    atomic_names: Vec<String>,
    atomic_index: HashMap<String, AtomicEventId>,
    atomic: Vec<AtomicColumn>,
    notes: Vec<BuildNote>,
}

impl ProfileBuilder {
    /// A builder for a profile with the given metrics (in display order).
    pub fn new(metrics: Vec<Metric>) -> Self {
        Self {
            metrics,
            threads: Vec::new(),
            metadata: MetadataBuilder::default(),
            groups: Vec::new(),
            group_index: HashMap::new(),
            events: Vec::new(),
            event_index: HashMap::new(),
            interval: Vec::new(),
            atomic_names: Vec::new(),
            atomic_index: HashMap::new(),
            atomic: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// The metrics the builder was created with.
    pub fn metrics(&self) -> &[Metric] {
        &self.metrics
    }

    /// Number of threads added so far.
    pub fn thread_count(&self) -> usize {
        self.threads.len()
    }

    fn intern_group(&mut self, name: &str) -> GroupId {
        if let Some(&g) = self.group_index.get(name) {
            return g;
        }
        let g = GroupId::from(self.groups.len());
        self.groups.push(name.to_string());
        self.group_index.insert(name.to_string(), g);
        g
    }

    fn add_groups(&mut self, e: EventId, raw: &str) {
        if self.events[e.index()].raw_groups == raw {
            return;
        }
        for g in raw.split('|').map(str::trim).filter(|g| !g.is_empty()) {
            let id = self.intern_group(g);
            let groups = &mut self.events[e.index()].event.groups;
            if !groups.contains(&id) {
                groups.push(id);
            }
        }
        self.events[e.index()].raw_groups = raw.to_string();
    }

    /// Declares an event without giving it a value on any thread (e.g. a TAU line with zero
    /// calls, which TAU's tools do not count as the thread having the event). Returns its id.
    pub fn declare_event(&mut self, raw_name: &str, raw_groups: &str) -> EventId {
        let name = normalize_timer_name(raw_name);
        let id = match self.event_index.get(name.as_ref()) {
            Some(&id) => id,
            None => {
                let id = EventId::from(self.events.len());
                let leaf = callpath_leaf(&name);
                let throttled = leaf.ends_with("[THROTTLED]");
                let event = Event {
                    name: name.to_string(),
                    groups: Vec::new(),
                    kind: EventKind::of_leaf(leaf),
                    source: SourceLocation::parse_from_name(leaf),
                    throttled,
                    depth: u32::try_from(callpath_frames(&name).count()).unwrap_or(u32::MAX),
                    parent: None,
                    routine: None,
                };
                self.events.push(EventDraft {
                    event,
                    raw_groups: String::from("\u{0}"),
                });
                self.event_index.insert(name.into_owned(), id);
                self.interval
                    .push(IntervalColumn::with_metrics(self.metrics.len()));
                id
            }
        };
        self.add_groups(id, raw_groups);
        id
    }

    fn intern_atomic(&mut self, raw_name: &str) -> AtomicEventId {
        let name = normalize_user_event_name(raw_name);
        if let Some(&id) = self.atomic_index.get(name.as_ref()) {
            return id;
        }
        let id = AtomicEventId::from(self.atomic_names.len());
        self.atomic_names.push(name.to_string());
        self.atomic_index.insert(name.into_owned(), id);
        self.atomic.push(AtomicColumn::default());
        id
    }

    /// Adds one thread's data. Threads must come in strictly ascending [`ThreadId`] order.
    ///
    /// A timer or user event listed twice by the same thread is merged as ParaProf merges it
    /// (TAU's `perfdmf` `TauDataSource`): timer values and calls are summed; user events combine
    /// counts, min, max, sums of squares and the count-weighted mean. Each merge is noted.
    pub fn add_thread(&mut self, id: ThreadId, data: ThreadData) -> Result<ThreadIndex, BuildError> {
        if let Some(&previous) = self.threads.last()
            && previous >= id
        {
            return Err(BuildError::ThreadOrder { previous, got: id });
        }
        let n_metrics = self.metrics.len();
        if data.n_metrics != n_metrics && data.timer_count() > 0 {
            return Err(BuildError::MetricCount {
                event: data.timer_names[0].clone(),
                expected: n_metrics,
                got: data.n_metrics,
            });
        }
        let t = ThreadIndex::from(self.threads.len());
        self.threads.push(id);
        let ThreadData {
            metadata,
            timer_names,
            timer_groups,
            calls,
            subcalls,
            exclusive,
            inclusive,
            atomic_names,
            atomic_values,
            declared,
            ..
        } = data;
        for (name, groups) in &declared {
            self.declare_event(name, groups);
        }
        self.metadata.add(t, metadata);
        for (row, (name, groups)) in timer_names.iter().zip(timer_groups.iter()).enumerate() {
            let e = self.declare_event(name, groups);
            let col = &mut self.interval[e.index()];
            let values = row * n_metrics..(row + 1) * n_metrics;
            if col.threads.last() == Some(&t) {
                let last = col.threads.len() - 1;
                col.calls[last] += calls[row];
                col.subcalls[last] += subcalls[row];
                for (m, (x, i)) in exclusive[values.clone()]
                    .iter()
                    .zip(&inclusive[values])
                    .enumerate()
                {
                    col.exclusive[m][last] += x;
                    col.inclusive[m][last] += i;
                }
                let name = self.events[e.index()].event.name.clone();
                self.notes.push(BuildNote {
                    thread: id,
                    message: format!("timer `{name}` is listed more than once; its values were summed"),
                });
            } else {
                col.threads.push(t);
                col.calls.push(calls[row]);
                col.subcalls.push(subcalls[row]);
                for (m, (x, i)) in exclusive[values.clone()]
                    .iter()
                    .zip(&inclusive[values])
                    .enumerate()
                {
                    col.exclusive[m].push(*x);
                    col.inclusive[m].push(*i);
                }
            }
        }
        for (name, [count, max, min, mean, sum_squares]) in atomic_names.iter().zip(atomic_values) {
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
                let name = self.atomic_names[a.index()].clone();
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
        Ok(t)
    }

    /// Notes collected so far (merged duplicates, ...).
    pub fn notes(&self) -> &[BuildNote] {
        &self.notes
    }

    /// Links callpaths and context events, and returns the profile and the builder's notes.
    pub fn finish(self) -> (Profile, Vec<BuildNote>) {
        let ProfileBuilder {
            metrics,
            threads,
            metadata,
            groups,
            events,
            event_index,
            mut interval,
            atomic_names,
            atomic_index,
            mut atomic,
            notes,
            ..
        } = self;
        let mut events: Vec<Event> = events.into_iter().map(|d| d.event).collect();
        for (i, e) in events.iter_mut().enumerate() {
            if e.depth > 1 {
                e.parent = callpath_parent(&e.name).and_then(|p| event_index.get(p).copied());
                e.routine = event_index.get(callpath_leaf(&e.name)).copied();
            } else {
                e.routine = Some(EventId::from(i));
            }
        }
        // Paths without their first frame, to attach context user events (TAU writes their
        // callpath without the `.TAU application` root). Ambiguous keys map to None.
        let mut without_root: HashMap<&str, Option<EventId>> = HashMap::new();
        for (i, e) in events.iter().enumerate() {
            if let Some(pos) = e.name.find(CALLPATH_SEPARATOR) {
                let key = &e.name[pos + CALLPATH_SEPARATOR.len()..];
                without_root
                    .entry(key)
                    .and_modify(|v| *v = None)
                    .or_insert(Some(EventId::from(i)));
            }
        }
        let resolve = |path: &str| -> Option<EventId> {
            let path = normalize_timer_name(path);
            event_index
                .get(path.as_ref())
                .copied()
                .or_else(|| without_root.get(path.as_ref()).copied().flatten())
        };
        let atomic_events: Vec<AtomicEvent> = atomic_names
            .iter()
            .map(|name| {
                // Split at the first ` : ` whose right side names an interval event; failing
                // that, at the first one followed by a callpath (`a => b`), unresolved.
                let splits: Vec<usize> = name.match_indices(" : ").map(|(i, _)| i).collect();
                let resolved = splits
                    .iter()
                    .find_map(|&i| resolve(&name[i + 3..]).map(|ctx| (i, Some(ctx))));
                let found = resolved.or_else(|| {
                    splits
                        .iter()
                        .find(|&&i| name[i + 3..].contains("=>"))
                        .map(|&i| (i, None))
                });
                match found {
                    Some((split, ctx)) => {
                        let base_name = name[..split].to_string();
                        AtomicEvent {
                            name: name.clone(),
                            context: ctx,
                            context_path: Some(normalize_timer_name(&name[split + 3..]).into_owned()),
                            base: atomic_index.get(base_name.as_str()).copied(),
                            base_name: Some(base_name),
                        }
                    }
                    None => AtomicEvent {
                        name: name.clone(),
                        context: None,
                        context_path: None,
                        base: None,
                        base_name: None,
                    },
                }
            })
            .collect();
        for c in &mut interval {
            c.shrink_to_fit();
        }
        for c in &mut atomic {
            c.shrink_to_fit();
        }
        let call_tree = CallTree::build(&events);
        let profile = Profile {
            metadata: metadata.finish(),
            threads,
            metrics,
            groups,
            events,
            event_index,
            interval,
            atomic_events,
            atomic_index,
            atomic,
            call_tree,
        };
        (profile, notes)
    }
}
