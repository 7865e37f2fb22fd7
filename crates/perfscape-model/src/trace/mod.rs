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
//!   hand-offs (Chrome `s`/`t`/`f`; MPI messages in TAU traces), with their bytes when known;
//! - [`Collectives`]: collective operations, one row per location taking part (operation,
//!   communicator, root, bytes sent and received, begin and end).
//!
//! Threads are addressed like profile threads ([`ThreadId`] = node.context.thread), so a
//! trace and the profile derived from it share thread numbers. Built with [`TraceBuilder`].

mod builder;

pub use builder::{TraceBuilder, TraceNote};

use crate::ids::ThreadId;
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
    /// Bytes of each message, when the input gives them (OTF2 send records' message length,
    /// TAU trace messages' packed length); `None` when the input does not say (Chrome flows
    /// without a size argument, task hand-offs) — never a guessed 0.
    pub bytes: Vec<Option<u64>>,
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

/// The kind of a collective operation, numbered as OTF2's `OTF2_CollectiveOp`
/// (`OTF2_Events.h`: 0 barrier … 16 reduce-scatter-block); other values (handle creation,
/// allocation) kept as [`CollectiveOp::Other`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CollectiveOp {
    /// `MPI_Barrier` (0).
    Barrier,
    /// `MPI_Bcast` (1).
    Bcast,
    /// `MPI_Gather` (2).
    Gather,
    /// `MPI_Gatherv` (3).
    Gatherv,
    /// `MPI_Scatter` (4).
    Scatter,
    /// `MPI_Scatterv` (5).
    Scatterv,
    /// `MPI_Allgather` (6).
    Allgather,
    /// `MPI_Allgatherv` (7).
    Allgatherv,
    /// `MPI_Alltoall` (8).
    Alltoall,
    /// `MPI_Alltoallv` (9).
    Alltoallv,
    /// `MPI_Alltoallw` (10).
    Alltoallw,
    /// `MPI_Allreduce` (11).
    Allreduce,
    /// `MPI_Reduce` (12).
    Reduce,
    /// `MPI_Reduce_scatter` (13).
    ReduceScatter,
    /// `MPI_Scan` (14).
    Scan,
    /// `MPI_Exscan` (15).
    Exscan,
    /// `MPI_Reduce_scatter_block` (16).
    ReduceScatterBlock,
    /// Any other `OTF2_CollectiveOp` value, as written.
    Other(u8),
}

impl CollectiveOp {
    /// The operation of OTF2 code `code` (`OTF2_CollectiveOp`).
    pub fn from_otf2(code: u8) -> Self {
        use CollectiveOp::*;
        const OPS: [CollectiveOp; 17] = [
            Barrier,
            Bcast,
            Gather,
            Gatherv,
            Scatter,
            Scatterv,
            Allgather,
            Allgatherv,
            Alltoall,
            Alltoallv,
            Alltoallw,
            Allreduce,
            Reduce,
            ReduceScatter,
            Scan,
            Exscan,
            ReduceScatterBlock,
        ];
        OPS.get(usize::from(code)).copied().unwrap_or(Other(code))
    }

    /// True for the n-to-n operations of Scalasca's "Wait at N x N" pattern (`is_mpi_n2n`:
    /// allgather(v), alltoall, allreduce, reduce-scatter(-block); Scalasca leaves out
    /// alltoallv and alltoallw, whose processes need not all exchange data).
    pub fn is_n_to_n(self) -> bool {
        use CollectiveOp::*;
        matches!(
            self,
            Allgather | Allgatherv | Alltoall | Allreduce | ReduceScatter | ReduceScatterBlock
        )
    }

    /// The MPI name (`MPI_Allreduce`), or `collective N` for other codes.
    pub fn mpi_name(self) -> String {
        use CollectiveOp::*;
        let s = match self {
            Barrier => "MPI_Barrier",
            Bcast => "MPI_Bcast",
            Gather => "MPI_Gather",
            Gatherv => "MPI_Gatherv",
            Scatter => "MPI_Scatter",
            Scatterv => "MPI_Scatterv",
            Allgather => "MPI_Allgather",
            Allgatherv => "MPI_Allgatherv",
            Alltoall => "MPI_Alltoall",
            Alltoallv => "MPI_Alltoallv",
            Alltoallw => "MPI_Alltoallw",
            Allreduce => "MPI_Allreduce",
            Reduce => "MPI_Reduce",
            ReduceScatter => "MPI_Reduce_scatter",
            Scan => "MPI_Scan",
            Exscan => "MPI_Exscan",
            ReduceScatterBlock => "MPI_Reduce_scatter_block",
            Other(c) => return format!("collective {c}"),
        };
        s.to_string()
    }
}

/// One location's part in one collective operation (a row of [`Collectives`]; what
/// [`TraceBuilder::add_collective`] takes, `thread` being a builder handle there).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Collective {
    /// Index into [`Trace::threads`] (a builder handle when added).
    pub thread: u32,
    /// The operation.
    pub op: CollectiveOp,
    /// The communicator as the input numbers it (an OTF2 global communicator id): the
    /// operations of one communicator are matched into instances by their order.
    pub communicator: u32,
    /// The communicator's name, an index into [`Trace::names`].
    pub communicator_name: u32,
    /// The root's rank in the communicator, for rooted operations (`None`: no root).
    pub root: Option<u32>,
    /// Bytes this location sent in the operation.
    pub bytes_sent: u64,
    /// Bytes this location received in the operation.
    pub bytes_received: u64,
    /// Begin (OTF2 `MpiCollectiveBegin`), nanoseconds.
    pub begin_ns: i64,
    /// End (OTF2 `MpiCollectiveEnd`), nanoseconds (`>=` the begin).
    pub end_ns: i64,
}

/// Collective operations, columnar, one row per (location, operation), sorted by begin (then
/// thread). Row `i` is [`Collectives::row`] `i`; see [`Collective`] for the fields.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Collectives {
    /// Index into [`Trace::threads`].
    pub thread: Vec<u32>,
    /// The operation.
    pub op: Vec<CollectiveOp>,
    /// The communicator as the input numbers it.
    pub communicator: Vec<u32>,
    /// The communicator's name, an index into [`Trace::names`].
    pub communicator_name: Vec<u32>,
    /// The root's rank in the communicator, if the operation has one.
    pub root: Vec<Option<u32>>,
    /// Bytes sent by the location.
    pub bytes_sent: Vec<u64>,
    /// Bytes received by the location.
    pub bytes_received: Vec<u64>,
    /// Begin, nanoseconds.
    pub begin_ns: Vec<i64>,
    /// End, nanoseconds.
    pub end_ns: Vec<i64>,
}

impl Collectives {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.begin_ns.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.begin_ns.is_empty()
    }

    /// Row `i`.
    ///
    /// # Panics
    /// `i` is not a row.
    pub fn row(&self, i: usize) -> Collective {
        Collective {
            thread: self.thread[i],
            op: self.op[i],
            communicator: self.communicator[i],
            communicator_name: self.communicator_name[i],
            root: self.root[i],
            bytes_sent: self.bytes_sent[i],
            bytes_received: self.bytes_received[i],
            begin_ns: self.begin_ns[i],
            end_ns: self.end_ns[i],
        }
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
    #[serde(default)]
    collectives: Collectives,
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

    /// Collective operations, one row per location taking part (OTF2 `MpiCollectiveBegin` /
    /// `MpiCollectiveEnd`).
    pub fn collectives(&self) -> &Collectives {
        &self.collectives
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
    fn a_lane_finished_early_equals_one_finished_at_the_end() {
        let build = |early: bool| {
            let mut b = TraceBuilder::new();
            let t1 = b.thread(thread(3));
            let t0 = b.thread(thread(1));
            let (a, c) = (b.name("a"), b.name("c"));
            b.add_interval(t1, 10, 10, c, 0, 1, 2);
            b.add_interval(t1, 0, 10, a, 0, 0, 3);
            if early {
                b.finish_lane(t1);
            }
            b.add_interval(t0, 5, 6, c, 0, 0, 1);
            b.add_message(t1, 7, t0, 9, c, 0, "m", Some(64));
            b.add_flow(t0, 1, t1, 2, a, 0, "f");
            b.finish()
        };
        let (early, notes) = build(true);
        assert!(notes.is_empty());
        assert_eq!(early, build(false).0);
        assert_eq!(early.lane(1).depth(), &[0, 1]);
        // Flows sorted by source time, threads remapped, bytes kept with their flow.
        assert_eq!(early.flows().id, vec!["f", "m"]);
        assert_eq!(early.flows().bytes, vec![None, Some(64)]);
        assert_eq!(early.flows().from_thread, vec![0, 1]);
        // An interval added after its lane was finished is not kept, and said so.
        let mut b = TraceBuilder::new();
        let t = b.thread(thread(0));
        let a = b.name("a");
        b.add_interval(t, 0, 1, a, 0, 0, 1);
        b.finish_lane(t);
        b.add_interval(t, 2, 3, a, 0, 2, 3);
        let (tr, notes) = b.finish();
        assert_eq!(tr.lane(0).len(), 1);
        assert!(
            notes[0].message.contains("1 interval(s) added after"),
            "{notes:?}"
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
