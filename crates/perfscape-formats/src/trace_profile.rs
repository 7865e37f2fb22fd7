//! A profile derived from the intervals of a [`Trace`]: per thread, per event, calls,
//! subcalls, inclusive and exclusive time, flat and per callpath.
//!
//! Definitions (per thread; times of the trace's intervals):
//! - an interval's **callpath** is the names of its enclosing intervals from the top level
//!   down to its own, joined by `" => "`; one callpath event per distinct path (the top level
//!   ones are the flat events of their names, as TAU writes `.TAU application`);
//! - **calls** of an event = its intervals; **subcalls** = the intervals directly nested in
//!   them;
//! - **inclusive** = the length of the union of its intervals (so a recursive, nested
//!   same-name interval is not counted twice);
//! - **exclusive** = the sum over its intervals of the interval's length minus the time
//!   covered by the union of its direct children (clipped to the interval, so a child that
//!   overlaps its parent's end without nesting counts only inside it).
//!
//! Times become the `TIME` metric in microseconds (TAU's unit), from the trace's integer
//! nanoseconds. Event groups are the intervals' categories (the first one seen per name).

use crate::stacks::FrameTable;
use perfscape_model::trace::{IntervalLane, NO_PARENT};
use perfscape_model::{
    BuildError, BuildNote, Metric, Profile, ProfileBuilder, ThreadData, ThreadRows, Trace, Unit,
};
use rustc_hash::FxHashMap as HashMap;

/// Nanoseconds per microsecond.
const NS_PER_US: f64 = 1000.0;

/// The profile of a trace without samples: one metric, `TIME` (microseconds), and per
/// thread with intervals the rows of [`emit_lane`], with the metadata `Source format` =
/// `source` and the thread's names (`{prefix} process`, `{prefix} thread` and their names
/// when given). Threads without intervals are left out. Returns the builder's notes.
pub(crate) fn derive_profile(
    trace: &Trace,
    source: &str,
    prefix: &str,
) -> Result<(Profile, Vec<BuildNote>), BuildError> {
    let mut builder = ProfileBuilder::new(vec![Metric::new("TIME", Unit::Microseconds)]);
    let mut frames = FrameTable::default();
    for (t, th) in trace.threads().iter().enumerate() {
        let lane = trace.lane(t);
        if lane.is_empty() {
            continue;
        }
        let mut data = ThreadData::new(1);
        emit_lane(trace, lane, &mut data, 0, &mut frames);
        data.push_metadata("Source format", source);
        data.push_metadata(&format!("{prefix} process"), &th.process);
        data.push_metadata(&format!("{prefix} thread"), &th.thread);
        if let Some(n) = &th.process_name {
            data.push_metadata(&format!("{prefix} process name"), n);
        }
        if let Some(n) = &th.thread_name {
            data.push_metadata(&format!("{prefix} thread name"), n);
        }
        builder.add_thread(th.id, data)?;
    }
    Ok(builder.finish())
}

/// Where [`emit_lane`] writes a thread's timer rows: a [`ThreadData`] being filled, or the
/// rows of a thread being added ([`ThreadRows`]).
pub(crate) trait TimerRows {
    /// Number of metrics per row.
    fn n_metrics(&self) -> usize;
    /// Adds the row of the timer named `name` (see [`ThreadData::push_timer`]); a row with
    /// the wrong number of values is not added (the callers give `n_metrics`).
    fn push_timer(&mut self, name: &str, group: &str, calls: f64, subcalls: f64, excl: &[f64], incl: &[f64]);
}

impl TimerRows for ThreadData {
    fn n_metrics(&self) -> usize {
        ThreadData::n_metrics(self)
    }
    fn push_timer(&mut self, name: &str, group: &str, calls: f64, subcalls: f64, excl: &[f64], incl: &[f64]) {
        // Only fails on a metric-count mismatch, excluded by the callers.
        let _ = ThreadData::push_timer(self, name, group, calls, subcalls, excl, incl);
    }
}

impl TimerRows for ThreadRows<'_> {
    fn n_metrics(&self) -> usize {
        ThreadRows::n_metrics(self)
    }
    fn push_timer(&mut self, name: &str, group: &str, calls: f64, subcalls: f64, excl: &[f64], incl: &[f64]) {
        // Only fails on a metric-count mismatch, excluded by the callers.
        let _ = ThreadRows::push_timer(self, name, group, calls, subcalls, excl, incl);
    }
}

/// Appends the rows derived from `lane` (see the module documentation) to `data`, with the
/// time in metric `time_metric` (microseconds) and 0 in the others. `frames` cleans names
/// (`=>` inside a name, empty names) the same way for every thread.
pub(crate) fn emit_lane(
    trace: &Trace,
    lane: &IntervalLane,
    data: &mut impl TimerRows,
    time_metric: usize,
    frames: &mut FrameTable,
) {
    let n = lane.len();
    if n == 0 {
        return;
    }
    let n_metrics = data.n_metrics();
    let start = lane.start_ns();
    let end = lane.end_ns();
    let parent = lane.parent();
    let category = lane.category();
    // Frame id of each interval's name (cleaned, interned across threads).
    let mut frame_of_name: HashMap<u32, u32> = HashMap::default();
    let mut frame = Vec::with_capacity(n);
    for (&nm, &cat) in lane.name().iter().zip(category) {
        let f = *frame_of_name.entry(nm).or_insert_with(|| {
            let name = trace.names().get(nm as usize).map_or("", String::as_str);
            let cat = trace.categories().get(cat as usize).map_or("", String::as_str);
            frames.intern(name, cat)
        });
        frame.push(f);
    }
    // Children coverage and counts per interval.
    let mut cover_until: Vec<i64> = start.to_vec();
    let mut covered = vec![0i64; n];
    let mut children = vec![0u32; n];
    for i in 0..n {
        let p = parent[i];
        if p == NO_PARENT {
            continue;
        }
        let p = p as usize;
        children[p] += 1;
        let cs = start[i].max(start[p]).max(cover_until[p]);
        let ce = end[i].min(end[p]);
        if ce > cs {
            covered[p] = covered[p].saturating_add(ce.saturating_sub(cs));
        }
        cover_until[p] = cover_until[p].max(ce);
    }
    // Callpath nodes.
    #[derive(Default, Clone)]
    struct Acc {
        calls: u64,
        subcalls: u64,
        excl_ns: i64,
        incl_ns: i64,
        cover_until: i64,
    }
    impl Acc {
        fn add(&mut self, s: i64, e: i64, excl: i64, kids: u32) {
            self.calls += 1;
            self.subcalls += u64::from(kids);
            self.excl_ns = self.excl_ns.saturating_add(excl);
            let from = s.max(self.cover_until);
            if e > from {
                self.incl_ns = self.incl_ns.saturating_add(e.saturating_sub(from));
            }
            self.cover_until = self.cover_until.max(e);
        }
    }
    let mut node_index: HashMap<(u32, u32), u32> = HashMap::default();
    let mut nodes: Vec<(u32, u32, Acc)> = Vec::new(); // (parent node, frame, values)
    let mut node_of = vec![0u32; n];
    let mut flat: HashMap<u32, Acc> = HashMap::default();
    let mut flat_order: Vec<u32> = Vec::new();
    for i in 0..n {
        let pnode = if parent[i] == NO_PARENT {
            NO_PARENT
        } else {
            node_of[parent[i] as usize]
        };
        let key = (pnode, frame[i]);
        let node = match node_index.get(&key) {
            Some(&x) => x,
            None => {
                let x = u32::try_from(nodes.len()).unwrap_or(u32::MAX);
                nodes.push((
                    pnode,
                    frame[i],
                    Acc {
                        cover_until: i64::MIN,
                        ..Acc::default()
                    },
                ));
                node_index.insert(key, x);
                x
            }
        };
        node_of[i] = node;
        let excl = end[i].saturating_sub(start[i]).saturating_sub(covered[i]);
        nodes[node as usize].2.add(start[i], end[i], excl, children[i]);
        flat.entry(frame[i])
            .or_insert_with(|| {
                flat_order.push(frame[i]);
                Acc {
                    cover_until: i64::MIN,
                    ..Acc::default()
                }
            })
            .add(start[i], end[i], excl, children[i]);
    }
    let mut excl = vec![0.0; n_metrics];
    let mut incl = vec![0.0; n_metrics];
    let mut push = |data: &mut _, name: &str, group: &str, a: &Acc| {
        excl[time_metric] = a.excl_ns as f64 / NS_PER_US;
        incl[time_metric] = a.incl_ns as f64 / NS_PER_US;
        TimerRows::push_timer(data, name, group, a.calls as f64, a.subcalls as f64, &excl, &incl);
    };
    for f in &flat_order {
        if let Some(a) = flat.get(f) {
            push(data, frames.name(*f), frames.group(*f), a);
        }
    }
    // Path names: nodes are created parents first.
    let mut names: Vec<String> = Vec::with_capacity(nodes.len());
    let mut group = String::new();
    for (pnode, f, a) in &nodes {
        let name = if *pnode == NO_PARENT {
            frames.name(*f).to_string()
        } else {
            format!("{} => {}", names[*pnode as usize], frames.name(*f))
        };
        if *pnode != NO_PARENT {
            group.clear();
            let g = frames.group(*f);
            if !g.is_empty() {
                group.push_str(g);
                group.push('|');
            }
            group.push_str("TAU_CALLPATH");
            push(data, &name, &group, a);
        }
        names.push(name);
    }
}
