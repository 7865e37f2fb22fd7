//! Wait states of message passing in a trace, after Scalasca's patterns (Geimer et al., "The
//! Scalasca performance toolset architecture", 2010; Scalasca's pattern documentation,
//! "Late Sender"): so far the **late sender**.
//!
//! A message is a flow of the [`Trace`] from a point of the sender's lane (the send event) to
//! a point of the receiver's lane (the receive event, or the completion of a non-blocking
//! receive). Its *send operation* is the innermost interval of the sender's lane around the
//! send point (e.g. `MPI_Send`, `MPI_Isend`), its *receive operation* the innermost interval
//! of the receiver's lane around the receive point (e.g. `MPI_Recv`, `MPI_Wait`). The
//! receiver waits for a late sender when its receive operation starts before the send
//! operation does; the time lost is
//!
//! `wait_ns = min(send_start - recv_start, recv_end - recv_start)` when positive, else 0
//!
//! (no more than the receive operation lasted). A message whose send or receive point lies in
//! no interval has no operation and is counted apart. Times are the trace's nanoseconds; the
//! lanes' clocks are taken as synchronized (OTF2 readers apply the clock offsets).

use perfscape_model::trace::{IntervalLane, NO_PARENT};
use perfscape_model::{ThreadId, Trace};
use std::collections::BTreeMap;

/// One message that waited for a late sender.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LateSender {
    /// Index of the message in [`Trace::flows`].
    pub flow: usize,
    /// The receiving thread (index into [`Trace::threads`]).
    pub receiver: usize,
    /// The sending thread (index into [`Trace::threads`]).
    pub sender: usize,
    /// Start of the receive operation, ns.
    pub recv_start_ns: i64,
    /// Start of the send operation, ns.
    pub send_start_ns: i64,
    /// Time the receiver lost waiting, ns (> 0).
    pub wait_ns: i64,
}

/// The late senders of a trace.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LateSenders {
    /// Every message that waited, in flow order.
    pub messages: Vec<LateSender>,
    /// Time lost waiting per receiving thread, ns (every thread of the trace, 0 when none).
    pub per_thread_ns: Vec<(ThreadId, i64)>,
    /// Time lost waiting per rank (a thread's node), ns, ascending by rank.
    pub per_rank_ns: BTreeMap<u32, i64>,
    /// Messages examined (their send and receive operations were found).
    pub examined: usize,
    /// Messages whose send or receive point lies in no interval of its lane: not examined.
    pub without_operation: usize,
}

/// The innermost interval of `lane` around time `t`, if any: an ancestor (or itself) of the
/// last interval starting at or before `t` (intervals nest, and are sorted by start).
fn innermost(lane: &IntervalLane, t: i64) -> Option<usize> {
    let n = lane.start_ns().partition_point(|&s| s <= t);
    let mut i = n.checked_sub(1)?;
    loop {
        if lane.end_ns()[i] >= t {
            return Some(i);
        }
        let p = lane.parent()[i];
        if p == NO_PARENT {
            return None;
        }
        i = p as usize;
    }
}

/// The late senders of `trace` (see the module documentation).
pub fn late_senders(trace: &Trace) -> LateSenders {
    let flows = trace.flows();
    let mut out = LateSenders::default();
    let mut lost = vec![0i64; trace.threads().len()];
    for f in 0..flows.len() {
        let (from, to) = (flows.from_thread[f] as usize, flows.to_thread[f] as usize);
        if from >= trace.lanes().len() || to >= trace.lanes().len() {
            out.without_operation += 1;
            continue;
        }
        let (sl, rl) = (trace.lane(from), trace.lane(to));
        let (Some(s), Some(r)) = (innermost(sl, flows.from_ns[f]), innermost(rl, flows.to_ns[f])) else {
            out.without_operation += 1;
            continue;
        };
        out.examined += 1;
        let (send_start, recv_start, recv_end) = (sl.start_ns()[s], rl.start_ns()[r], rl.end_ns()[r]);
        let wait = send_start
            .saturating_sub(recv_start)
            .min(recv_end.saturating_sub(recv_start));
        if wait > 0 {
            lost[to] = lost[to].saturating_add(wait);
            out.messages.push(LateSender {
                flow: f,
                receiver: to,
                sender: from,
                recv_start_ns: recv_start,
                send_start_ns: send_start,
                wait_ns: wait,
            });
        }
    }
    for (th, &ns) in trace.threads().iter().zip(&lost) {
        out.per_thread_ns.push((th.id, ns));
        let r = out.per_rank_ns.entry(th.id.node).or_default();
        *r = r.saturating_add(ns);
    }
    out
}
