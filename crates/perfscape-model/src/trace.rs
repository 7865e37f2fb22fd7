//! [`Trace`]: what happened when, per thread — the input of timeline views and of profiles
//! derived from traces.
//!
//! A trace holds, in columnar tables:
//! - per thread, an [`IntervalLane`]: intervals (slices) with start and end in **nanoseconds**
//!   (`i64`, on the input's own clock, usually since an arbitrary origin), an interned name,
//!   a category and their nesting (depth and parent interval), sorted by start;
//! - [`Instants`]: point events with a scope (thread, process, global, async);
//! - [`CounterSeries`]: sampled values of named counters per process;
//! - [`AsyncSpans`]: intervals that are not bound to a thread's stack (Chrome `b`/`e`,
//!   `S`/`F`), keyed by an id;
//! - [`Flows`]: arrows between two points of (usually different) threads: messages, task
//!   hand-offs (Chrome `s`/`t`/`f`; MPI messages in TAU traces).
//!
//! Threads are addressed like profile threads ([`ThreadId`] = node.context.thread), so a
//! trace and the profile derived from it share thread numbers. Built with [`TraceBuilder`].

use crate::ids::ThreadId;
use rustc_hash::FxHashMap as HashMap;
use serde::{Deserialize, Serialize};

/// "No parent" in [`IntervalLane::parent`].
pub const NO_PARENT: u32 = u32::MAX;

/// One thread of a trace: its address and how the input named it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceThread {
    /// Address, shared with the derived profile.
    pub id: ThreadId,
    /// The process as the input wrote it (e.g. a Chrome `pid`, `"1102"` or `"Spans"`).
    pub process: String,
    /// The thread as the input wrote it (e.g. a Chrome `tid`).
    pub thread: String,
    /// Process name (Chrome `process_name` metadata), if given.
    pub process_name: Option<String>,
    /// Thread name (Chrome `thread_name` metadata), if given.
    pub thread_name: Option<String>,
}

/// The intervals of one thread, columnar, sorted by start (then longer first, then input
/// order), so that a parent always precedes its children.
///
/// Row `i` is the interval `[start_ns[i], end_ns[i]]` named `names()[name[i]]`, of category
/// `categories()[category[i]]`, at nesting `depth[i]` (0 = top level) under interval
/// `parent[i]` ([`NO_PARENT`] at top level).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct IntervalLane {
    start_ns: Vec<i64>,
    end_ns: Vec<i64>,
    name: Vec<u32>,
    category: Vec<u32>,
    depth: Vec<u32>,
    parent: Vec<u32>,
}

impl IntervalLane {
    /// Number of intervals.
    pub fn len(&self) -> usize {
        self.start_ns.len()
    }

    /// True when the lane has no intervals.
    pub fn is_empty(&self) -> bool {
        self.start_ns.is_empty()
    }

    /// Start times, nanoseconds.
    pub fn start_ns(&self) -> &[i64] {
        &self.start_ns
    }

    /// End times, nanoseconds (`>=` the start).
    pub fn end_ns(&self) -> &[i64] {
        &self.end_ns
    }

    /// Name of each interval, an index into [`Trace::names`].
    pub fn name(&self) -> &[u32] {
        &self.name
    }

    /// Category of each interval, an index into [`Trace::categories`].
    pub fn category(&self) -> &[u32] {
        &self.category
    }

    /// Nesting depth of each interval (0 = top level).
    pub fn depth(&self) -> &[u32] {
        &self.depth
    }

    /// Row of each interval's parent, or [`NO_PARENT`].
    pub fn parent(&self) -> &[u32] {
        &self.parent
    }

    /// Rows of the intervals overlapping `[from_ns, to_ns]` (for a timeline viewport): a
    /// binary search for the last interval starting before `to_ns`, then a linear scan of the
    /// rows before it for those still open at `from_ns`.
    pub fn overlapping(&self, from_ns: i64, to_ns: i64) -> Vec<usize> {
        let end = self.start_ns.partition_point(|&s| s <= to_ns);
        (0..end).filter(|&i| self.end_ns[i] >= from_ns).collect()
    }
}

/// What an instant event applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InstantScope {
    /// The thread that wrote it (Chrome scope `t`, the default).
    Thread,
    /// Its whole process (Chrome scope `p`).
    Process,
    /// The whole trace (Chrome scope `g`).
    Global,
    /// A point of an async span (Chrome `n`, `T`, `p`).
    Async,
}

/// Instant (point) events, columnar, sorted by time.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Instants {
    /// Index into [`Trace::threads`] of the thread that wrote each instant.
    pub thread: Vec<u32>,
    /// Time, nanoseconds.
    pub ts_ns: Vec<i64>,
    /// Name, an index into [`Trace::names`].
    pub name: Vec<u32>,
    /// Category, an index into [`Trace::categories`].
    pub category: Vec<u32>,
    /// Scope.
    pub scope: Vec<InstantScope>,
}

impl Instants {
    /// Number of instants.
    pub fn len(&self) -> usize {
        self.ts_ns.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.ts_ns.is_empty()
    }
}

/// One counter time series: the values of one series of a named counter in one process,
/// sorted by time (Chrome `C` events: a counter `name` with `args {series: value, ...}`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CounterSeries {
    /// Process (node) the counter belongs to.
    pub node: u32,
    /// Counter name (with the Chrome `id` appended in brackets when one is given).
    pub name: String,
    /// Series name within the counter (the `args` key, e.g. `value`).
    pub series: String,
    /// Sample times, nanoseconds.
    pub ts_ns: Vec<i64>,
    /// Values, as written (unit unknown).
    pub value: Vec<f64>,
}

/// Async spans, columnar, sorted by start: intervals tied to an id rather than a thread's
/// stack (Chrome nestable `b`/`e` and legacy `S`/`F` events).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AsyncSpans {
    /// Index into [`Trace::threads`] of the thread that began the span.
    pub thread: Vec<u32>,
    /// Start, nanoseconds.
    pub start_ns: Vec<i64>,
    /// End, nanoseconds.
    pub end_ns: Vec<i64>,
    /// Name, an index into [`Trace::names`].
    pub name: Vec<u32>,
    /// Category, an index into [`Trace::categories`].
    pub category: Vec<u32>,
    /// The id that ties begin and end together, as written.
    pub id: Vec<String>,
}

impl AsyncSpans {
    /// Number of spans.
    pub fn len(&self) -> usize {
        self.start_ns.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.start_ns.is_empty()
    }
}

/// Flows (arrows), columnar, sorted by start: from a point on one thread to a point on
/// another (or the same) thread — messages, task hand-offs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Flows {
    /// Index into [`Trace::threads`] of the source thread.
    pub from_thread: Vec<u32>,
    /// Source time, nanoseconds.
    pub from_ns: Vec<i64>,
    /// Index into [`Trace::threads`] of the destination thread.
    pub to_thread: Vec<u32>,
    /// Destination time, nanoseconds.
    pub to_ns: Vec<i64>,
    /// Name, an index into [`Trace::names`].
    pub name: Vec<u32>,
    /// Category, an index into [`Trace::categories`].
    pub category: Vec<u32>,
    /// The flow id, as written.
    pub id: Vec<String>,
}

impl Flows {
    /// Number of flows.
    pub fn len(&self) -> usize {
        self.from_ns.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.from_ns.is_empty()
    }
}

/// A trace: threads with their intervals, instants, counters, async spans and flows. See the
/// module documentation. Immutable; built with [`TraceBuilder`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Trace {
    threads: Vec<TraceThread>,
    lanes: Vec<IntervalLane>,
    names: Vec<String>,
    categories: Vec<String>,
    instants: Instants,
    counters: Vec<CounterSeries>,
    async_spans: AsyncSpans,
    flows: Flows,
    metadata: Vec<(String, String)>,
}

impl Trace {
    /// Threads, ascending by [`ThreadId`].
    pub fn threads(&self) -> &[TraceThread] {
        &self.threads
    }

    /// The intervals of thread `t` (an index into [`Trace::threads`]).
    pub fn lane(&self, t: usize) -> &IntervalLane {
        &self.lanes[t]
    }

    /// Every lane, parallel to [`Trace::threads`].
    pub fn lanes(&self) -> &[IntervalLane] {
        &self.lanes
    }

    /// Interned event names.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Interned categories (index 0 is the empty category).
    pub fn categories(&self) -> &[String] {
        &self.categories
    }

    /// Instant events.
    pub fn instants(&self) -> &Instants {
        &self.instants
    }

    /// Counter series.
    pub fn counters(&self) -> &[CounterSeries] {
        &self.counters
    }

    /// Async spans.
    pub fn async_spans(&self) -> &AsyncSpans {
        &self.async_spans
    }

    /// Flows between threads.
    pub fn flows(&self) -> &Flows {
        &self.flows
    }

    /// Key/values describing the trace as a whole.
    pub fn metadata(&self) -> &[(String, String)] {
        &self.metadata
    }

    /// Index of thread `id` in [`Trace::threads`].
    pub fn thread_index(&self, id: ThreadId) -> Option<usize> {
        self.threads.binary_search_by_key(&id, |t| t.id).ok()
    }

    /// Earliest and latest time of any interval, instant, counter value, async span or flow
    /// (nanoseconds), or `None` for an empty trace.
    pub fn time_range_ns(&self) -> Option<(i64, i64)> {
        let mut lo = i64::MAX;
        let mut hi = i64::MIN;
        let mut see = |a: i64, b: i64| {
            lo = lo.min(a);
            hi = hi.max(b);
        };
        for l in &self.lanes {
            for (s, e) in l.start_ns.iter().zip(&l.end_ns) {
                see(*s, *e);
            }
        }
        for &t in &self.instants.ts_ns {
            see(t, t);
        }
        for c in &self.counters {
            for &t in &c.ts_ns {
                see(t, t);
            }
        }
        for (s, e) in self.async_spans.start_ns.iter().zip(&self.async_spans.end_ns) {
            see(*s, *e);
        }
        for (s, e) in self.flows.from_ns.iter().zip(&self.flows.to_ns) {
            see((*s).min(*e), (*s).max(*e));
        }
        (lo <= hi).then_some((lo, hi))
    }

    /// Total number of intervals over all lanes.
    pub fn interval_count(&self) -> usize {
        self.lanes.iter().map(IntervalLane::len).sum()
    }
}

/// Something the builder noticed while nesting intervals.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceNote {
    /// The thread concerned.
    pub thread: ThreadId,
    /// What happened.
    pub message: String,
}

#[derive(Debug, Default)]
struct Interner {
    values: Vec<String>,
    index: HashMap<String, u32>,
}

impl Interner {
    fn intern(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        let i = u32::try_from(self.values.len()).unwrap_or(u32::MAX);
        self.values.push(s.to_string());
        self.index.insert(s.to_string(), i);
        i
    }
}

/// A raw interval before nesting: (start, end, name, category, sequence of its start event,
/// sequence of its end event).
#[derive(Clone, Copy, Debug)]
struct RawInterval {
    start: i64,
    end: i64,
    name: u32,
    category: u32,
    start_seq: u64,
    end_seq: u64,
}

/// Builds a [`Trace`]: register threads, intern names, add intervals (in any order) and the
/// other event kinds, then [`TraceBuilder::finish`] sorts everything and computes the nesting.
#[derive(Debug)]
pub struct TraceBuilder {
    threads: Vec<TraceThread>,
    thread_index: HashMap<ThreadId, u32>,
    raw: Vec<Vec<RawInterval>>,
    names: Interner,
    categories: Interner,
    instants: Vec<(u32, i64, u32, u32, InstantScope)>,
    counters: Vec<CounterSeries>,
    counter_index: HashMap<(u32, String, String), usize>,
    asyncs: Vec<(u32, i64, i64, u32, u32, String)>,
    flows: Vec<(u32, i64, u32, i64, u32, u32, String)>,
    metadata: Vec<(String, String)>,
}

impl Default for TraceBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl TraceBuilder {
    /// An empty builder. Category 0 is the empty category.
    pub fn new() -> Self {
        let mut categories = Interner::default();
        categories.intern("");
        Self {
            threads: Vec::new(),
            thread_index: HashMap::default(),
            raw: Vec::new(),
            names: Interner::default(),
            categories,
            instants: Vec::new(),
            counters: Vec::new(),
            counter_index: HashMap::default(),
            asyncs: Vec::new(),
            flows: Vec::new(),
            metadata: Vec::new(),
        }
    }

    /// Registers a thread (or returns the handle of the one already registered with that id;
    /// its names are then filled in where still missing). Returns a handle for the `add_*`
    /// calls.
    pub fn thread(&mut self, info: TraceThread) -> u32 {
        if let Some(&h) = self.thread_index.get(&info.id) {
            let t = &mut self.threads[h as usize];
            if t.process_name.is_none() {
                t.process_name = info.process_name;
            }
            if t.thread_name.is_none() {
                t.thread_name = info.thread_name;
            }
            return h;
        }
        let h = u32::try_from(self.threads.len()).unwrap_or(u32::MAX);
        self.thread_index.insert(info.id, h);
        self.threads.push(info);
        self.raw.push(Vec::new());
        h
    }

    /// Interns an event name.
    pub fn name(&mut self, s: &str) -> u32 {
        self.names.intern(s)
    }

    /// Interns a category.
    pub fn category(&mut self, s: &str) -> u32 {
        self.categories.intern(s)
    }

    /// Adds an interval `[start_ns, end_ns]` to thread handle `thread`. `start_seq` and
    /// `end_seq` are the positions in the input of the events that opened and closed it:
    /// different for a begin/end pair, equal for one complete event (Chrome `X`). They decide
    /// the nesting of intervals that touch (see [`TraceBuilder::finish`]). An interval whose
    /// end precedes its start is stored with `end = start`.
    #[allow(clippy::too_many_arguments)]
    pub fn add_interval(
        &mut self,
        thread: u32,
        start_ns: i64,
        end_ns: i64,
        name: u32,
        category: u32,
        start_seq: u64,
        end_seq: u64,
    ) {
        if let Some(lane) = self.raw.get_mut(thread as usize) {
            lane.push(RawInterval {
                start: start_ns,
                end: end_ns.max(start_ns),
                name,
                category,
                start_seq,
                end_seq,
            });
        }
    }

    /// Adds an instant event.
    pub fn add_instant(&mut self, thread: u32, ts_ns: i64, name: u32, category: u32, scope: InstantScope) {
        self.instants.push((thread, ts_ns, name, category, scope));
    }

    /// Adds one value of series `series` of counter `name` of process `node`.
    pub fn add_counter_value(&mut self, node: u32, name: &str, series: &str, ts_ns: i64, value: f64) {
        let key = (node, name.to_string(), series.to_string());
        let i = match self.counter_index.get(&key) {
            Some(&i) => i,
            None => {
                self.counters.push(CounterSeries {
                    node,
                    name: name.to_string(),
                    series: series.to_string(),
                    ts_ns: Vec::new(),
                    value: Vec::new(),
                });
                self.counter_index.insert(key, self.counters.len() - 1);
                self.counters.len() - 1
            }
        };
        self.counters[i].ts_ns.push(ts_ns);
        self.counters[i].value.push(value);
    }

    /// Adds an async span begun by thread handle `thread`.
    pub fn add_async_span(
        &mut self,
        thread: u32,
        start_ns: i64,
        end_ns: i64,
        name: u32,
        category: u32,
        id: &str,
    ) {
        self.asyncs.push((
            thread,
            start_ns,
            end_ns.max(start_ns),
            name,
            category,
            id.to_string(),
        ));
    }

    /// Adds a flow from (`from_thread`, `from_ns`) to (`to_thread`, `to_ns`).
    #[allow(clippy::too_many_arguments)]
    pub fn add_flow(
        &mut self,
        from_thread: u32,
        from_ns: i64,
        to_thread: u32,
        to_ns: i64,
        name: u32,
        category: u32,
        id: &str,
    ) {
        self.flows.push((
            from_thread,
            from_ns,
            to_thread,
            to_ns,
            name,
            category,
            id.to_string(),
        ));
    }

    /// Adds a key/value about the whole trace.
    pub fn push_metadata(&mut self, key: &str, value: &str) {
        self.metadata.push((key.to_string(), value.to_string()));
    }

    /// Sorts, nests and returns the trace, with notes about intervals that overlap without
    /// nesting (a child that ends after its parent: it stays the parent's child, and a
    /// derived profile clips it to the parent).
    ///
    /// Nesting: intervals in order of start, then of input position (complete events that
    /// start together and are written one after the other: longest first); each is the child of the innermost open interval that
    /// has not ended before it. An interval ending exactly when the next one starts has ended
    /// before it if its end event comes earlier in the input (a begin/end pair), or, for a
    /// complete event, unless the next one is zero-length and written after it. So
    /// `B a, B b, E b, E a` at one time nests b in a, back-to-back complete events are
    /// siblings, a complete event written before a begin event at the same time encloses it,
    /// and of two complete events starting together the longer encloses the shorter.
    pub fn finish(self) -> (Trace, Vec<TraceNote>) {
        let TraceBuilder {
            threads,
            raw,
            names,
            categories,
            mut instants,
            mut counters,
            mut asyncs,
            mut flows,
            metadata,
            ..
        } = self;
        // Threads sorted by id; handles remapped.
        let mut order: Vec<usize> = (0..threads.len()).collect();
        order.sort_by_key(|&i| threads[i].id);
        let mut new_index = vec![0u32; threads.len()];
        for (new, &old) in order.iter().enumerate() {
            new_index[old] = u32::try_from(new).unwrap_or(u32::MAX);
        }
        let remap = |h: u32| new_index.get(h as usize).copied().unwrap_or(h);
        let mut notes = Vec::new();
        let mut lanes = Vec::with_capacity(threads.len());
        let mut raw: Vec<Option<Vec<RawInterval>>> = raw.into_iter().map(Some).collect();
        let mut sorted_threads = Vec::with_capacity(threads.len());
        for &old in &order {
            let ivs = raw[old].take().unwrap_or_default();
            let (lane, improper) = nest(&ivs);
            if improper > 0 {
                notes.push(TraceNote {
                    thread: threads[old].id,
                    message: format!(
                        "{improper} interval(s) end after the interval that encloses their start (overlap without nesting); each is kept as a child of that interval"
                    ),
                });
            }
            lanes.push(lane);
            sorted_threads.push(threads[old].clone());
        }
        instants.sort_by_key(|i| i.1);
        let instants = Instants {
            thread: instants.iter().map(|i| remap(i.0)).collect(),
            ts_ns: instants.iter().map(|i| i.1).collect(),
            name: instants.iter().map(|i| i.2).collect(),
            category: instants.iter().map(|i| i.3).collect(),
            scope: instants.iter().map(|i| i.4).collect(),
        };
        for c in &mut counters {
            let mut idx: Vec<usize> = (0..c.ts_ns.len()).collect();
            idx.sort_by_key(|&i| c.ts_ns[i]);
            c.ts_ns = idx.iter().map(|&i| c.ts_ns[i]).collect();
            c.value = idx.iter().map(|&i| c.value[i]).collect();
        }
        counters.sort_by(|a, b| (a.node, &a.name, &a.series).cmp(&(b.node, &b.name, &b.series)));
        asyncs.sort_by_key(|a| a.1);
        let async_spans = AsyncSpans {
            thread: asyncs.iter().map(|a| remap(a.0)).collect(),
            start_ns: asyncs.iter().map(|a| a.1).collect(),
            end_ns: asyncs.iter().map(|a| a.2).collect(),
            name: asyncs.iter().map(|a| a.3).collect(),
            category: asyncs.iter().map(|a| a.4).collect(),
            id: asyncs.into_iter().map(|a| a.5).collect(),
        };
        flows.sort_by_key(|f| f.1);
        let flows = Flows {
            from_thread: flows.iter().map(|f| remap(f.0)).collect(),
            from_ns: flows.iter().map(|f| f.1).collect(),
            to_thread: flows.iter().map(|f| remap(f.2)).collect(),
            to_ns: flows.iter().map(|f| f.3).collect(),
            name: flows.iter().map(|f| f.4).collect(),
            category: flows.iter().map(|f| f.5).collect(),
            id: flows.into_iter().map(|f| f.6).collect(),
        };
        let trace = Trace {
            threads: sorted_threads,
            lanes,
            names: names.values,
            categories: categories.values,
            instants,
            counters,
            async_spans,
            flows,
            metadata,
        };
        (trace, notes)
    }
}

/// Nests the intervals of one lane (see [`TraceBuilder::finish`]): sort by start, then by
/// input position (complete events that start together and are written one after the other
/// are ordered longest first, taking the input positions of that run in turn), then a stack: before an interval opens, the
/// open intervals that ended before it are closed — those ending earlier, and those ending
/// at its start whose end came first: a begin/end pair's end does when its end event
/// precedes the new interval's event in the input; a complete event's end does unless the
/// new interval is zero-length at that time and written after it.
/// Returns the lane and the number of intervals that end after their parent.
fn nest(ivs: &[RawInterval]) -> (IntervalLane, usize) {
    let n = ivs.len();
    let complete = |iv: &RawInterval| iv.start_seq == iv.end_seq;
    // Effective position: complete events that start together and follow each other in the
    // input (no begin/end pair starting at that time written between them) take the
    // positions of their run longest first.
    let mut eff: Vec<u64> = ivs.iter().map(|iv| iv.start_seq).collect();
    let mut by_start: HashMap<i64, Vec<usize>> = HashMap::default();
    for (i, iv) in ivs.iter().enumerate() {
        by_start.entry(iv.start).or_default().push(i);
    }
    for group in by_start.values_mut().filter(|g| g.len() > 1) {
        group.sort_unstable_by_key(|&i| ivs[i].start_seq);
        for run in group.split(|&i| !complete(&ivs[i])).filter(|r| r.len() > 1) {
            let seqs: Vec<u64> = run.iter().map(|&i| ivs[i].start_seq).collect();
            let mut order = run.to_vec();
            order.sort_by_key(|&i| (std::cmp::Reverse(ivs[i].end), ivs[i].start_seq));
            for (i, s) in order.into_iter().zip(seqs) {
                eff[i] = s;
            }
        }
    }
    let mut idx: Vec<usize> = (0..n).collect();
    idx.sort_unstable_by_key(|&i| (ivs[i].start, eff[i], i));
    let mut lane = IntervalLane {
        start_ns: Vec::with_capacity(n),
        end_ns: Vec::with_capacity(n),
        name: Vec::with_capacity(n),
        category: Vec::with_capacity(n),
        depth: Vec::with_capacity(n),
        parent: Vec::with_capacity(n),
    };
    // Stack of (interval, row).
    let mut stack: Vec<(usize, u32)> = Vec::new();
    let mut improper = 0;
    for i in idx {
        let iv = &ivs[i];
        while let Some(&(top, _)) = stack.last() {
            let t = &ivs[top];
            let ended = t.end < iv.start
                || (t.end == iv.start
                    && if complete(t) {
                        // A zero-length interval at a complete event's end, written after
                        // it, is its last child.
                        !(iv.end == t.end && iv.start_seq > t.start_seq)
                    } else {
                        t.end_seq < iv.start_seq
                    });
            if ended {
                stack.pop();
            } else {
                break;
            }
        }
        let parent = stack.last().copied();
        if let Some((p, _)) = parent
            && ivs[p].end < iv.end
        {
            improper += 1;
        }
        let row = u32::try_from(lane.start_ns.len()).unwrap_or(NO_PARENT);
        lane.start_ns.push(iv.start);
        lane.end_ns.push(iv.end);
        lane.name.push(iv.name);
        lane.category.push(iv.category);
        lane.depth.push(u32::try_from(stack.len()).unwrap_or(u32::MAX));
        lane.parent.push(parent.map_or(NO_PARENT, |(_, r)| r));
        stack.push((i, row));
    }
    (lane, improper)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn thread(n: u32) -> TraceThread {
        TraceThread {
            id: ThreadId::new(n, 0, 0),
            process: n.to_string(),
            thread: "0".into(),
            process_name: None,
            thread_name: None,
        }
    }

    #[test]
    fn nests_touching_intervals_by_input_order() {
        let mut b = TraceBuilder::new();
        let t = b.thread(thread(0));
        let (a, c, d) = (b.name("a"), b.name("c"), b.name("d"));
        // B a @0 (seq 0), B c @10 (1), E c @10 (2), E a @10 (3): c is a's child.
        b.add_interval(t, 0, 10, a, 0, 0, 3);
        b.add_interval(t, 10, 10, c, 0, 1, 2);
        // X d @10..20 (seq 4): a sibling of a (a ended before d's event).
        b.add_interval(t, 10, 20, d, 0, 4, 4);
        let (tr, notes) = b.finish();
        assert!(notes.is_empty());
        let l = tr.lane(0);
        assert_eq!(l.name(), &[a, c, d]);
        assert_eq!(l.depth(), &[0, 1, 0]);
        assert_eq!(l.parent(), &[NO_PARENT, 0, NO_PARENT]);
        assert_eq!(tr.time_range_ns(), Some((0, 20)));
        assert_eq!(l.overlapping(15, 30), vec![2]);
        assert_eq!(l.overlapping(0, 5), vec![0]);
    }

    #[test]
    fn mixed_complete_and_begin_end_events_follow_the_input() {
        // From catapult's x_event_trace.json: B UpdateLayer @0 (seq 0), X Picture @0..31
        // (seq 1), B Paint @0 (2), E Paint @0 (3), E UpdateLayer @0 (4); then B UpdateLayer
        // @0 (5), X Picture @0..31 (6), B Paint @31 (7), E Paint @31 (8), E UpdateLayer @31
        // (9). The zero-length UpdateLayer and its contents come first; the second Picture
        // (written after its UpdateLayer) is its child, and the zero-length Paint at the
        // Picture's end, written after it, is the Picture's last child.
        let mut b = TraceBuilder::new();
        let t = b.thread(thread(0));
        let (u, pic, paint) = (b.name("UpdateLayer"), b.name("Picture"), b.name("Paint"));
        b.add_interval(t, 0, 0, u, 0, 0, 4);
        b.add_interval(t, 0, 0, pic, 0, 1, 1);
        b.add_interval(t, 0, 0, paint, 0, 2, 3);
        b.add_interval(t, 0, 31, u, 0, 5, 9);
        b.add_interval(t, 0, 31, pic, 0, 6, 6);
        b.add_interval(t, 31, 31, paint, 0, 7, 8);
        // Two complete events written child first (as exporters that write at the end do).
        let (x, y) = (b.name("x"), b.name("y"));
        b.add_interval(t, 100, 110, y, 0, 10, 10);
        b.add_interval(t, 100, 150, x, 0, 11, 11);
        let (tr, notes) = b.finish();
        assert!(notes.is_empty(), "{notes:?}");
        let l = tr.lane(0);
        let rows: Vec<(&str, u32, u32)> = (0..l.len())
            .map(|i| {
                (
                    tr.names()[l.name()[i] as usize].as_str(),
                    l.depth()[i],
                    l.parent()[i],
                )
            })
            .collect();
        assert_eq!(
            rows,
            vec![
                ("UpdateLayer", 0, NO_PARENT),
                ("Picture", 1, 0),
                ("Paint", 2, 1),
                ("UpdateLayer", 0, NO_PARENT),
                ("Picture", 1, 3),
                ("Paint", 2, 4),
                ("x", 0, NO_PARENT),
                ("y", 1, 6),
            ]
        );
    }

    #[test]
    fn improper_overlap_is_noted_and_threads_sorted() {
        let mut b = TraceBuilder::new();
        let t1 = b.thread(thread(5));
        let t0 = b.thread(thread(1));
        let x = b.name("x");
        b.add_interval(t1, 0, 10, x, 0, 0, 0);
        b.add_interval(t1, 5, 15, x, 0, 1, 1);
        b.add_instant(t0, 3, x, 0, InstantScope::Thread);
        b.add_flow(t0, 1, t1, 2, x, 0, "7");
        let (tr, notes) = b.finish();
        assert_eq!(tr.threads()[0].id, ThreadId::new(1, 0, 0));
        assert_eq!(tr.lane(1).depth(), &[0, 1]);
        assert_eq!(notes.len(), 1);
        assert_eq!(notes[0].thread, ThreadId::new(5, 0, 0));
        assert_eq!(tr.instants().thread, vec![0]);
        assert_eq!((tr.flows().from_thread[0], tr.flows().to_thread[0]), (0, 1));
    }
}
