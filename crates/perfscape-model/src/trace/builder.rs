//! [`TraceBuilder`]: interning, thread registration, and the nesting of intervals.

use super::{
    AsyncSpans, Collective, Collectives, CounterSeries, Flows, InstantScope, Instants, IntervalLane,
    NO_PARENT, Trace, TraceThread,
};
use crate::ids::ThreadId;
use rustc_hash::FxHashMap as HashMap;

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
    /// Lanes nested early by [`TraceBuilder::finish_lane`], with their count of improper
    /// intervals and of intervals added after.
    done: Vec<Option<(IntervalLane, usize)>>,
    late: Vec<usize>,
    names: Interner,
    categories: Interner,
    instants: Vec<(u32, i64, u32, u32, InstantScope)>,
    counters: Vec<CounterSeries>,
    counter_index: HashMap<(u32, String, String), usize>,
    asyncs: Vec<(u32, i64, i64, u32, u32, String)>,
    /// Flows as added (columns, in order of adding; sorted by [`TraceBuilder::finish`]).
    flows: Flows,
    collectives: Vec<Collective>,
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
            done: Vec::new(),
            late: Vec::new(),
            names: Interner::default(),
            categories,
            instants: Vec::new(),
            counters: Vec::new(),
            counter_index: HashMap::default(),
            asyncs: Vec::new(),
            flows: Flows::default(),
            collectives: Vec::new(),
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
        self.done.push(None);
        self.late.push(0);
        h
    }

    /// Nests the intervals of thread handle `thread` now (as [`TraceBuilder::finish`] would)
    /// and frees their raw form, for a reader that has added all of a thread's intervals and
    /// wants to hold no more than one thread's raw intervals at a time. Intervals added to
    /// that thread afterwards are not kept (a note at [`TraceBuilder::finish`] counts them).
    pub fn finish_lane(&mut self, thread: u32) {
        let t = thread as usize;
        if let (Some(raw), Some(done)) = (self.raw.get_mut(t), self.done.get_mut(t))
            && done.is_none()
        {
            let ivs = std::mem::take(raw);
            *done = Some(nest(&ivs));
        }
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
        if self.done.get(thread as usize).is_some_and(Option::is_some) {
            self.late[thread as usize] += 1;
            return;
        }
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

    /// Adds a flow from (`from_thread`, `from_ns`) to (`to_thread`, `to_ns`) whose size is
    /// not known (its [`Flows::bytes`] is `None`).
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
        self.add_message(from_thread, from_ns, to_thread, to_ns, name, category, id, None);
    }

    /// Reserves room for `additional` more flows (a reader that knows how many it will add
    /// saves the slack of growing the columns by doubling).
    pub fn reserve_flows(&mut self, additional: usize) {
        let f = &mut self.flows;
        f.from_thread.reserve_exact(additional);
        f.from_ns.reserve_exact(additional);
        f.to_thread.reserve_exact(additional);
        f.to_ns.reserve_exact(additional);
        f.name.reserve_exact(additional);
        f.category.reserve_exact(additional);
        f.id.reserve_exact(additional);
        f.bytes.reserve_exact(additional);
    }

    /// Adds a message: a flow from (`from_thread`, `from_ns`) to (`to_thread`, `to_ns`) of
    /// `bytes` bytes (`None`: the input does not say).
    #[allow(clippy::too_many_arguments)]
    pub fn add_message(
        &mut self,
        from_thread: u32,
        from_ns: i64,
        to_thread: u32,
        to_ns: i64,
        name: u32,
        category: u32,
        id: &str,
        bytes: Option<u64>,
    ) {
        let f = &mut self.flows;
        f.from_thread.push(from_thread);
        f.from_ns.push(from_ns);
        f.to_thread.push(to_thread);
        f.to_ns.push(to_ns);
        f.name.push(name);
        f.category.push(category);
        f.id.push(id.to_string());
        f.bytes.push(bytes);
    }

    /// Adds one location's part in a collective operation (`c.thread` a handle of
    /// [`TraceBuilder::thread`]; an end before the begin is stored as the begin).
    pub fn add_collective(&mut self, mut c: Collective) {
        c.end_ns = c.end_ns.max(c.begin_ns);
        self.collectives.push(c);
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
            done,
            late,
            names,
            categories,
            mut instants,
            mut counters,
            mut asyncs,
            mut flows,
            mut collectives,
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
        let mut done = done;
        let mut sorted_threads = Vec::with_capacity(threads.len());
        for &old in &order {
            let (lane, improper) = match done.get_mut(old).and_then(Option::take) {
                Some(nested) => nested,
                None => nest(&raw[old].take().unwrap_or_default()),
            };
            if let Some(&n) = late.get(old)
                && n > 0
            {
                notes.push(TraceNote {
                    thread: threads[old].id,
                    message: format!("{n} interval(s) added after the thread's lane was finished; not kept"),
                });
            }
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
        // Sorted by source time (stable: adding order at equal times), each column permuted
        // in place, so that no column is held twice.
        let mut order: Vec<u32> = (0..u32::try_from(flows.len()).unwrap_or(u32::MAX)).collect();
        order.sort_by_key(|&i| flows.from_ns[i as usize]);
        permute(&mut flows.from_thread, &order);
        permute(&mut flows.from_ns, &order);
        permute(&mut flows.to_thread, &order);
        permute(&mut flows.to_ns, &order);
        permute(&mut flows.name, &order);
        permute(&mut flows.category, &order);
        permute(&mut flows.bytes, &order);
        permute(&mut flows.id, &order);
        drop(order);
        for t in flows.from_thread.iter_mut().chain(flows.to_thread.iter_mut()) {
            *t = remap(*t);
        }
        for c in &mut collectives {
            c.thread = remap(c.thread);
        }
        collectives.sort_by_key(|c| (c.begin_ns, c.thread));
        let collectives = Collectives {
            thread: collectives.iter().map(|c| c.thread).collect(),
            op: collectives.iter().map(|c| c.op).collect(),
            communicator: collectives.iter().map(|c| c.communicator).collect(),
            communicator_name: collectives.iter().map(|c| c.communicator_name).collect(),
            root: collectives.iter().map(|c| c.root).collect(),
            bytes_sent: collectives.iter().map(|c| c.bytes_sent).collect(),
            bytes_received: collectives.iter().map(|c| c.bytes_received).collect(),
            begin_ns: collectives.iter().map(|c| c.begin_ns).collect(),
            end_ns: collectives.iter().map(|c| c.end_ns).collect(),
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
            collectives,
            metadata,
        };
        (trace, notes)
    }
}

/// Reorders `v` in place so that `v[i]` becomes the old `v[order[i]]` (`order` a permutation
/// of `0..v.len()`; a shorter `order` or `v` leaves the rest), by following each cycle of the
/// permutation with swaps: O(n) time, a byte per element besides.
fn permute<T>(v: &mut [T], order: &[u32]) {
    let n = v.len().min(order.len());
    let mut done = vec![false; n];
    for start in 0..n {
        if done[start] {
            continue;
        }
        let mut cur = start;
        loop {
            done[cur] = true;
            let next = order[cur] as usize;
            if next == start || next >= n || done[next] {
                break;
            }
            v.swap(cur, next);
            cur = next;
        }
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
    // Order: by start, then by input position; complete events that start together and
    // follow each other in the input (no begin/end pair starting at that time written
    // between them) take the positions of their run longest first. Input positions are
    // distinct, and the order of adding breaks ties if they are not.
    let mut idx: Vec<u32> = (0..u32::try_from(n).unwrap_or(u32::MAX)).collect();
    idx.sort_unstable_by_key(|&i| (ivs[i as usize].start, ivs[i as usize].start_seq, i));
    let mut g = 0;
    while g < n {
        let start = ivs[idx[g] as usize].start;
        let mut h = g + 1;
        while h < n && ivs[idx[h] as usize].start == start {
            h += 1;
        }
        for run in idx[g..h].split_mut(|&i| !complete(&ivs[i as usize])) {
            if run.len() > 1 {
                run.sort_unstable_by_key(|&i| {
                    (
                        std::cmp::Reverse(ivs[i as usize].end),
                        ivs[i as usize].start_seq,
                        i,
                    )
                });
            }
        }
        g = h;
    }
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
        let i = i as usize;
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
    #[test]
    fn permuting_in_place_equals_gathering() {
        // A permutation with cycles of lengths 1, 2 and 5 (and its inverse).
        let order: Vec<u32> = vec![0, 2, 1, 4, 5, 6, 7, 3];
        let v: Vec<String> = (0..8).map(|i| format!("v{i}")).collect();
        let want: Vec<String> = order.iter().map(|&i| v[i as usize].clone()).collect();
        let mut got = v.clone();
        super::permute(&mut got, &order);
        assert_eq!(got, want);
        let mut inverse = vec![0u32; 8];
        for (i, &o) in order.iter().enumerate() {
            inverse[o as usize] = i as u32;
        }
        super::permute(&mut got, &inverse);
        assert_eq!(got, v);
    }
}
