//! [`Profile`]: one integrated parallel profile, and its [`CallTree`].

use crate::columns::{AtomicColumn, IntervalColumn, IntervalColumns, ValueKind};
use crate::event::{AtomicEvent, Event};
use crate::event_index::EventIndex;
use crate::ids::{AtomicEventId, EventId, GroupId, MetricId, ThreadId, ThreadIndex};
use crate::metadata::Metadata;
use crate::metric::Metric;
use rustc_hash::FxHashMap as HashMap;

/// One integrated parallel profile: threads, metrics, events and the measured values.
///
/// Shapes: `threads()` has T entries sorted by [`ThreadId`]; `events()` E interval events;
/// `metrics()` M metrics; for every event, [`Profile::interval`] gives a column over the
/// threads that have the event with calls, subcalls and, per metric, exclusive and inclusive
/// values (in the metric's unit). User events likewise via [`Profile::atomic`].
///
/// Built by [`crate::ProfileBuilder`]; immutable afterwards.
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    pub(crate) metadata: Metadata,
    pub(crate) threads: Vec<ThreadId>,
    pub(crate) metrics: Vec<Metric>,
    pub(crate) groups: Vec<String>,
    pub(crate) events: Vec<Event>,
    pub(crate) event_index: EventIndex,
    pub(crate) interval: IntervalColumns,
    pub(crate) atomic_events: Vec<AtomicEvent>,
    pub(crate) atomic_index: HashMap<String, AtomicEventId>,
    pub(crate) atomic: Vec<AtomicColumn>,
    pub(crate) call_tree: CallTree,
    /// Per-event attributes (event, name, value), ascending by event, each event's in the
    /// order they were first set.
    pub(crate) event_attributes: Vec<(EventId, String, String)>,
    /// Thread totals given by the reader ([`crate::ThreadData::set_total`]): T x M values,
    /// thread-major, valid where `has_total` is set; both empty when no thread has one.
    pub(crate) totals: Vec<f64>,
    pub(crate) has_total: Vec<bool>,
}

impl Profile {
    /// Run metadata.
    pub fn metadata(&self) -> &Metadata {
        &self.metadata
    }

    /// All threads, ascending by (node, context, thread).
    pub fn threads(&self) -> &[ThreadId] {
        &self.threads
    }

    /// The address of thread `t`.
    pub fn thread(&self, t: ThreadIndex) -> ThreadId {
        self.threads[t.index()]
    }

    /// Index of a thread address, if the profile has that thread.
    pub fn thread_index(&self, id: ThreadId) -> Option<ThreadIndex> {
        self.threads.binary_search(&id).ok().map(ThreadIndex::from)
    }

    /// The attributes of event `e`: (name, value) pairs that describe the call-tree node
    /// rather than measure it (Caliper's per-region `ProblemSize`, `Reps`, ..., which Thicket
    /// keeps as per-node metadata), in the order the reader set them. Empty for most events.
    pub fn event_attributes(&self, e: EventId) -> impl Iterator<Item = (&str, &str)> {
        let start = self.event_attributes.partition_point(|(x, ..)| *x < e);
        self.event_attributes[start..]
            .iter()
            .take_while(move |(x, ..)| *x == e)
            .map(|(_, k, v)| (k.as_str(), v.as_str()))
    }

    /// The total of thread `t` in metric `m` as its reader gave it (the sum of a sampled call
    /// tree's roots, see [`crate::ThreadData::set_total`]), or `None` when the reader gave
    /// none (TAU: a thread's total is then its largest inclusive value, ParaProf's rule).
    pub fn thread_total(&self, t: ThreadIndex, m: MetricId) -> Option<f64> {
        if !*self.has_total.get(t.index())? {
            return None;
        }
        self.totals
            .get(t.index() * self.metrics.len() + m.index())
            .copied()
    }

    /// Metrics, in display order.
    pub fn metrics(&self) -> &[Metric] {
        &self.metrics
    }

    /// Metric `m`.
    pub fn metric(&self, m: MetricId) -> &Metric {
        &self.metrics[m.index()]
    }

    /// The metric of that name (exact match first, then ASCII case-insensitive).
    pub fn metric_by_name(&self, name: &str) -> Option<MetricId> {
        self.metrics
            .iter()
            .position(|m| m.name == name)
            .or_else(|| {
                self.metrics
                    .iter()
                    .position(|m| m.name.eq_ignore_ascii_case(name))
            })
            .map(MetricId::from)
    }

    /// Iterator over every metric id.
    pub fn metric_ids(&self) -> impl Iterator<Item = MetricId> + '_ {
        (0..self.metrics.len()).map(MetricId::from)
    }

    /// Group names; [`Event::groups`] indexes this.
    pub fn groups(&self) -> &[String] {
        &self.groups
    }

    /// Name of group `g`.
    pub fn group_name(&self, g: GroupId) -> &str {
        &self.groups[g.index()]
    }

    /// Interval events (timers), flat and callpath.
    pub fn events(&self) -> &[Event] {
        &self.events
    }

    /// Event `e`.
    pub fn event(&self, e: EventId) -> &Event {
        &self.events[e.index()]
    }

    /// Iterator over every event id.
    pub fn event_ids(&self) -> impl Iterator<Item = EventId> + '_ {
        (0..self.events.len()).map(EventId::from)
    }

    /// The event of that whole name (`a => b => c` for a callpath), resolved through the call
    /// tree. The name may be given in any TAU spacing (`a  => b  ` finds `a => b`).
    pub fn event_by_name(&self, name: &str) -> Option<EventId> {
        let n = crate::event::normalize_timer_name(name);
        self.event_index.resolve(&self.events, n.as_ref())
    }

    /// The child of call-tree node `parent` (or, for `None`, the event without parent) whose
    /// own frame is `frame` (normalized text, see [`Event::frame`]).
    pub fn event_child(&self, parent: Option<EventId>, frame: &str) -> Option<EventId> {
        self.event_index.get(&self.events, parent, frame)
    }

    /// The whole name of event `e` as ParaProf shows it: its ancestors' frames and its own,
    /// joined by `" => "` (`a => b => c`). Built on each call, O(depth).
    pub fn event_name(&self, e: EventId) -> String {
        let mut out = String::new();
        crate::event_index::write_name(&self.events, e, &mut out);
        out
    }

    /// Appends the whole name of event `e` (see [`Profile::event_name`]) to `out`.
    pub fn write_event_name(&self, e: EventId, out: &mut String) {
        crate::event_index::write_name(&self.events, e, out);
    }

    /// The group names of event `e`, joined by `" | "` as ParaProf writes them.
    pub fn event_groups_joined(&self, e: EventId) -> String {
        let groups: Vec<&str> = self.events[e.index()]
            .groups
            .iter()
            .map(|g| self.group_name(*g))
            .collect();
        groups.join(" | ")
    }

    /// Values of event `e` on the threads that have it.
    pub fn interval(&self, e: EventId) -> IntervalColumn<'_> {
        self.interval.column(e.index())
    }

    /// Every event's values in one arena (see [`IntervalColumns`]).
    pub fn interval_columns(&self) -> &IntervalColumns {
        &self.interval
    }

    /// One cell: the value of `kind` of event `e` on thread `t` in metric `m`, if `t` has `e`.
    pub fn value(&self, e: EventId, t: ThreadIndex, kind: ValueKind, m: MetricId) -> Option<f64> {
        self.interval.column(e.index()).value_at(t, kind, m)
    }

    /// User (atomic) events.
    pub fn atomic_events(&self) -> &[AtomicEvent] {
        &self.atomic_events
    }

    /// The user event of that name (runs of spaces collapsed as in [`AtomicEvent::name`]).
    pub fn atomic_event_by_name(&self, name: &str) -> Option<AtomicEventId> {
        let n = crate::event::normalize_user_event_name(name);
        self.atomic_index.get(n.as_ref()).copied()
    }

    /// Values of user event `a` on the threads that have it.
    pub fn atomic(&self, a: AtomicEventId) -> &AtomicColumn {
        &self.atomic[a.index()]
    }

    /// The call tree built from the callpath events.
    pub fn call_tree(&self) -> &CallTree {
        &self.call_tree
    }

    /// The same profile with metric `m` described by `metric` and each of its exclusive and
    /// inclusive values `v` replaced by `f(v)`; threads, events, calls and subcalls are
    /// unchanged. Used for unit conversions such as processor cycles to time. Returns the
    /// profile unchanged when `m` is out of range.
    pub fn map_metric(mut self, m: MetricId, metric: Metric, f: impl Fn(f64) -> f64) -> Profile {
        if m.index() >= self.metrics.len() {
            return self;
        }
        self.metrics[m.index()] = metric;
        let n = self.metrics.len();
        for v in self.totals.iter_mut().skip(m.index()).step_by(n) {
            *v = f(*v);
        }
        for kind in [ValueKind::Exclusive, ValueKind::Inclusive] {
            for v in self.interval.kind_mut(kind, m) {
                *v = f(*v);
            }
        }
        self
    }

    /// The same profile with one more metric, `metric`, whose id is the old metric count:
    /// every (event, thread) cell gets `f(values)` as its exclusive value, where `values[m]`
    /// is the cell's exclusive value of metric `m`, and likewise its inclusive value from the
    /// inclusive ones; a thread total given by the reader ([`Profile::thread_total`]) gets
    /// `f` of the thread's totals. Threads, events, calls, subcalls and the other metrics are
    /// unchanged. Used for derived metrics (an expression over the measured metrics).
    ///
    /// `f` may return NaN for a cell that has no value (a division by zero); the analyses
    /// treat a NaN cell as a thread without a value.
    pub fn with_metric(mut self, metric: Metric, f: impl Fn(&[f64]) -> f64) -> Profile {
        let m_old = self.metrics.len();
        let mut cell = vec![0.0; m_old];
        let mut eval = |kind: ValueKind| -> Vec<f64> {
            let columns: Vec<&[f64]> = (0..m_old)
                .map(|m| self.interval.kind(kind, MetricId::from(m)))
                .collect();
            (0..self.interval.cell_count())
                .map(|r| {
                    for (v, c) in cell.iter_mut().zip(&columns) {
                        *v = c[r];
                    }
                    f(&cell)
                })
                .collect()
        };
        let exclusive = eval(ValueKind::Exclusive);
        let inclusive = eval(ValueKind::Inclusive);
        self.interval.push_metric(exclusive, inclusive);
        if !self.totals.is_empty() {
            let totals: Vec<f64> = self
                .totals
                .chunks_exact(m_old.max(1))
                .flat_map(|row| {
                    let derived = if m_old == 0 { f64::NAN } else { f(row) };
                    row.iter().copied().chain(std::iter::once(derived))
                })
                .collect();
            self.totals = totals;
        }
        self.metrics.push(metric);
        self
    }

    /// The same profile with only the interval events where `keep[e]` is true, and
    /// without any event whose parent call-tree node is not kept (a node is shown below its
    /// caller: hiding a node hides its subtree). Kept events get new ids, in their old order;
    /// parents, routines (`None` when the routine's flat event is not kept), user events'
    /// context events, attributes and the call tree follow. Values, threads, metrics, user
    /// events and metadata are unchanged. `keep` shorter than the events keeps the rest.
    /// Used by event filters; the second value is the number of events removed.
    pub fn retain_events(mut self, keep: &[bool]) -> (Profile, usize) {
        let n = self.events.len();
        // 0 = not decided yet, 1 = kept, 2 = removed; decided along parent chains.
        let mut state = vec![0u8; n];
        let mut chain = Vec::new();
        for start in 0..n {
            let mut e = start;
            while state[e] == 0 {
                chain.push(e);
                match self.events[e].parent() {
                    Some(p) if p.index() < n => e = p.index(),
                    _ => break,
                }
            }
            // Resolve from the top of the chain down.
            while let Some(x) = chain.pop() {
                let parent_ok = self.events[x]
                    .parent()
                    .is_none_or(|p| p.index() >= n || state[p.index()] == 1);
                state[x] = if parent_ok && keep.get(x).copied().unwrap_or(true) {
                    1
                } else {
                    2
                };
            }
        }
        let mut new_id = vec![None; n];
        let mut next = 0u32;
        for (i, s) in state.iter().enumerate() {
            if *s == 1 {
                new_id[i] = Some(EventId(next));
                next += 1;
            }
        }
        let removed = n - next as usize;
        if removed == 0 {
            return (self, 0);
        }
        let remap = |e: Option<EventId>| e.and_then(|e| new_id.get(e.index()).copied().flatten());
        let events = std::mem::take(&mut self.events);
        let mut kept_events = Vec::with_capacity(next as usize);
        for (i, mut event) in events.into_iter().enumerate() {
            if new_id[i].is_none() {
                continue;
            }
            event.set_parent(remap(event.parent()));
            event.set_routine(remap(event.routine()));
            kept_events.push(event);
        }
        self.events = kept_events;
        self.interval = std::mem::take(&mut self.interval).retain_events(|e| new_id[e].is_some());
        for a in &mut self.atomic_events {
            a.context = remap(a.context);
        }
        self.event_attributes = std::mem::take(&mut self.event_attributes)
            .into_iter()
            .filter_map(|(e, k, v)| Some((remap(Some(e))?, k, v)))
            .collect();
        self.event_index = EventIndex::build(&self.events);
        self.call_tree = CallTree::build(&self.events);
        (self, removed)
    }

    /// The same profile with only the threads where `keep[t]` is true (`keep` shorter than the
    /// threads keeps the rest), renumbered in their old order: every event's and user event's
    /// rows, the thread totals and the per-thread metadata follow; events, metrics and the call
    /// tree are unchanged (an event no kept thread has stays, with no rows). Used by thread
    /// filters; the second value is the number of threads removed.
    pub fn retain_threads(mut self, keep: &[bool]) -> (Profile, usize) {
        let n = self.threads.len();
        let mut map = vec![None; n];
        let mut next = 0u32;
        for (t, slot) in map.iter_mut().enumerate() {
            if keep.get(t).copied().unwrap_or(true) {
                *slot = Some(ThreadIndex(next));
                next += 1;
            }
        }
        let removed = n - next as usize;
        if removed == 0 {
            return (self, 0);
        }
        self.threads = self
            .threads
            .iter()
            .zip(&map)
            .filter_map(|(id, m)| m.map(|_| *id))
            .collect();
        self.interval = std::mem::take(&mut self.interval).with_threads(&map);
        self.atomic = std::mem::take(&mut self.atomic)
            .into_iter()
            .map(|c| c.with_threads(&map))
            .collect();
        self.metadata = std::mem::take(&mut self.metadata).with_threads(&map);
        if !self.has_total.is_empty() {
            let m = self.metrics.len();
            let (mut totals, mut has) = (Vec::new(), Vec::new());
            for (t, kept) in map.iter().enumerate() {
                if kept.is_some() {
                    totals.extend_from_slice(&self.totals[t * m..(t + 1) * m]);
                    has.push(self.has_total[t]);
                }
            }
            self.totals = totals;
            self.has_total = has;
        }
        (self, removed)
    }

    /// Number of (event, thread) cells that hold values.
    pub fn interval_cell_count(&self) -> usize {
        self.interval.cell_count()
    }

    /// Approximate heap bytes held by the value columns (the bulk of a large profile).
    pub fn value_heap_bytes(&self) -> usize {
        self.interval.heap_bytes()
            + self.atomic.iter().map(AtomicColumn::heap_bytes).sum::<usize>()
            + self.threads.capacity() * std::mem::size_of::<ThreadId>()
    }
}

/// The call tree of a callpath profile, with events as nodes.
///
/// TAU writes each callpath `f1 => ... => fn` as an event of its own. A node's parent is the
/// event named by the path without its last frame (`f1 => ... => fn-1`; for two-frame paths
/// that is the flat event `f1`, e.g. `.TAU application`). Roots are the flat events that start
/// a path, and the paths whose parent is not in the profile (cut by TAU_CALLPATH_DEPTH).
/// Profiles without callpaths have an empty tree.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CallTree {
    roots: Vec<EventId>,
    /// Children of event `e`: `children[offsets[e]..offsets[e + 1]]` (compressed rows: two
    /// arrays for the whole tree, none per node).
    offsets: Vec<u32>,
    children: Vec<EventId>,
}

impl CallTree {
    pub(crate) fn build(events: &[Event]) -> Self {
        let n = events.len();
        let mut count = vec![0u32; n + 1];
        let mut roots = Vec::new();
        for (i, e) in events.iter().enumerate() {
            if !e.is_callpath() {
                continue;
            }
            match e.parent() {
                Some(p) if p.index() < n => count[p.index()] += 1,
                _ => roots.push(EventId::from(i)),
            }
        }
        for (i, e) in events.iter().enumerate() {
            if !e.is_callpath() && count[i] > 0 {
                roots.push(EventId::from(i));
            }
        }
        roots.sort_unstable();
        if roots.is_empty() {
            return Self::default();
        }
        // The counts become the offsets in place: first each event's end slot (prefix sums),
        // then, as its children are written from the last event back, its first slot. No
        // array beside `offsets` and `children` (8 bytes an event at the load's peak).
        let mut offsets = count;
        let mut total = 0u32;
        for c in &mut offsets[..n] {
            total += *c;
            *c = total;
        }
        offsets[n] = total;
        let mut children = vec![EventId(0); total as usize];
        for (i, e) in events.iter().enumerate().rev() {
            if let (true, Some(p)) = (e.is_callpath(), e.parent())
                && p.index() < n
            {
                let slot = &mut offsets[p.index()];
                *slot -= 1;
                children[*slot as usize] = EventId::from(i);
            }
        }
        Self {
            roots,
            offsets,
            children,
        }
    }

    /// True when the profile has callpath events.
    pub fn is_empty(&self) -> bool {
        self.roots.is_empty()
    }

    /// Root nodes, ascending by event id.
    pub fn roots(&self) -> &[EventId] {
        &self.roots
    }

    /// Children of node `e`, ascending by event id (empty for leaves and non-nodes).
    pub fn children(&self, e: EventId) -> &[EventId] {
        match (self.offsets.get(e.index()), self.offsets.get(e.index() + 1)) {
            (Some(&a), Some(&b)) => &self.children[a as usize..b as usize],
            _ => &[],
        }
    }
}
