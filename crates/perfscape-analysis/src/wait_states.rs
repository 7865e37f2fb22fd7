//! Wait states of message passing in a trace, after Scalasca's patterns (Geimer et al., "The
//! Scalasca performance toolset architecture", 2010; Scalasca's pattern documentation and its
//! pattern source `MPI.pattern`): the **late sender** ([`late_senders`]), the **late
//! receiver** ([`late_receivers`]) and the **wait at N x N** collective ([`wait_at_nxn`]).
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
//!
//! The sender waits for a **late receiver** (Scalasca "MPI Late Receiver": a synchronous or
//! rendezvous send blocked until the receive was posted) when its send operation ends after
//! the receive operation starts, and starts before it; the time lost is
//!
//! `wait_ns = recv_start - send_start` when `send_end > recv_start`, else 0
//!
//! (Scalasca's `post_send_bws_cb`: a send that ended before the receive started was never
//! blocked — an eager send — and loses nothing; the loss never exceeds the send operation).
//! The send operation is the one around the send point (for `MPI_Isend`, the isend itself,
//! not its completion: Scalasca looks at the completion, which these flows do not name).
//!
//! **Wait at N x N** (Scalasca "Wait at N x N", `PatternMPI_WaitNxN`): in an n-to-n collective
//! ([`CollectiveOp::is_n_to_n`]: allgather(v), alltoall, allreduce, reduce-scatter(-block))
//! no location can finish before the last has entered. The instances of a communicator are
//! matched by order: the k-th collective operation of each location on a communicator is
//! instance k (MPI requires all members to call a communicator's collectives in one order).
//! A location's operation is the innermost interval of its lane around its collective begin
//! (e.g. `MPI_Allreduce`), or the begin..end records when none is; then
//!
//! `wait_ns = min(latest_enter, own_exit) - own_enter` when positive, else 0,
//!
//! with `latest_enter` the latest enter over the instance's locations that sent bytes
//! (Scalasca leaves zero-sized transfers out), a location that received nothing does not
//! wait, and an instance of one location has none (a process does not wait for itself). The
//! cap at the own exit is Scalasca's for unsynchronized clocks.

use perfscape_model::trace::{CollectiveOp, IntervalLane, NO_PARENT};
use perfscape_model::{ThreadId, Trace};
use std::collections::{BTreeMap, HashMap};

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
/// last interval starting at or before `t` (intervals nest, and are sorted by start). Cost:
/// O(log intervals + depth).
pub fn innermost(lane: &IntervalLane, t: i64) -> Option<usize> {
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
    (out.per_thread_ns, out.per_rank_ns) = per_thread_and_rank(trace, &lost);
    out
}

/// Time lost per thread and per rank, from a per-thread-index sum (see [`LateSenders`]).
fn per_thread_and_rank(trace: &Trace, lost: &[i64]) -> (Vec<(ThreadId, i64)>, BTreeMap<u32, i64>) {
    let mut per_thread = Vec::with_capacity(lost.len());
    let mut per_rank: BTreeMap<u32, i64> = BTreeMap::new();
    for (th, &ns) in trace.threads().iter().zip(lost) {
        per_thread.push((th.id, ns));
        let r = per_rank.entry(th.id.node).or_default();
        *r = r.saturating_add(ns);
    }
    (per_thread, per_rank)
}

/// One message whose sender waited for a late receiver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LateReceiver {
    /// Index of the message in [`Trace::flows`].
    pub flow: usize,
    /// The sending thread, which waited (index into [`Trace::threads`]).
    pub sender: usize,
    /// The receiving thread (index into [`Trace::threads`]).
    pub receiver: usize,
    /// Start of the send operation, ns.
    pub send_start_ns: i64,
    /// Start of the receive operation, ns.
    pub recv_start_ns: i64,
    /// Time the sender lost waiting, ns (> 0).
    pub wait_ns: i64,
}

/// The late receivers of a trace (fields as [`LateSenders`]'; the time is the senders').
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LateReceivers {
    /// Every message whose sender waited, in flow order.
    pub messages: Vec<LateReceiver>,
    /// Time lost waiting per sending thread, ns (every thread of the trace, 0 when none).
    pub per_thread_ns: Vec<(ThreadId, i64)>,
    /// Time lost waiting per rank, ns, ascending by rank.
    pub per_rank_ns: BTreeMap<u32, i64>,
    /// Messages examined (their send and receive operations were found).
    pub examined: usize,
    /// Messages whose send or receive point lies in no interval of its lane: not examined.
    pub without_operation: usize,
}

/// The late receivers of `trace` (see the module documentation).
pub fn late_receivers(trace: &Trace) -> LateReceivers {
    let flows = trace.flows();
    let mut out = LateReceivers::default();
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
        let (send_start, send_end, recv_start) = (sl.start_ns()[s], sl.end_ns()[s], rl.start_ns()[r]);
        let wait = if send_end <= recv_start {
            0
        } else {
            recv_start.saturating_sub(send_start)
        };
        if wait > 0 {
            lost[from] = lost[from].saturating_add(wait);
            out.messages.push(LateReceiver {
                flow: f,
                sender: from,
                receiver: to,
                send_start_ns: send_start,
                recv_start_ns: recv_start,
                wait_ns: wait,
            });
        }
    }
    (out.per_thread_ns, out.per_rank_ns) = per_thread_and_rank(trace, &lost);
    out
}

/// One location's wait in one instance of an n-to-n collective.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NxNWait {
    /// Its row in [`Trace::collectives`].
    pub collective: usize,
    /// The waiting thread (index into [`Trace::threads`]).
    pub thread: usize,
    /// The operation.
    pub op: CollectiveOp,
    /// Its own enter, ns.
    pub enter_ns: i64,
    /// The latest enter over the instance's locations, ns.
    pub latest_enter_ns: i64,
    /// Time lost, ns (> 0).
    pub wait_ns: i64,
}

/// The waits at n-to-n collectives of a trace.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NxNWaits {
    /// Every location's wait (> 0), by instance then thread.
    pub waits: Vec<NxNWait>,
    /// Instances of n-to-n collectives examined (with two locations or more).
    pub instances: usize,
    /// Time lost per thread, ns (every thread of the trace, 0 when none).
    pub per_thread_ns: Vec<(ThreadId, i64)>,
    /// Time lost per rank, ns, ascending by rank.
    pub per_rank_ns: BTreeMap<u32, i64>,
}

/// The waits at n-to-n collectives of `trace` (see the module documentation).
pub fn wait_at_nxn(trace: &Trace) -> NxNWaits {
    let c = trace.collectives();
    let mut out = NxNWaits::default();
    let mut lost = vec![0i64; trace.threads().len()];
    // Instance k of a communicator: the k-th operation of each location on it.
    let mut seen: HashMap<(u32, u32), u32> = HashMap::new();
    let mut instances: BTreeMap<(u32, u32), Vec<usize>> = BTreeMap::new();
    for i in 0..c.len() {
        let k = seen.entry((c.communicator[i], c.thread[i])).or_default();
        if c.op[i].is_n_to_n() {
            instances.entry((c.communicator[i], *k)).or_default().push(i);
        }
        *k += 1;
    }
    // A row's operation: the innermost interval around its begin, else its records.
    let operation = |i: usize| -> (i64, i64) {
        let t = c.thread[i] as usize;
        match trace
            .lanes()
            .get(t)
            .and_then(|l| innermost(l, c.begin_ns[i]).map(|r| (l, r)))
        {
            Some((l, r)) => (l.start_ns()[r], l.end_ns()[r]),
            None => (c.begin_ns[i], c.end_ns[i]),
        }
    };
    for rows in instances.values() {
        if rows.len() < 2 {
            continue;
        }
        out.instances += 1;
        let ops: Vec<(i64, i64)> = rows.iter().map(|&i| operation(i)).collect();
        let Some(latest) = rows
            .iter()
            .zip(&ops)
            .filter(|(i, _)| c.bytes_sent[**i] > 0)
            .map(|(_, o)| o.0)
            .max()
        else {
            continue;
        };
        for (&i, &(enter, exit)) in rows.iter().zip(&ops) {
            if c.bytes_received[i] == 0 {
                continue;
            }
            let wait = latest.min(exit).saturating_sub(enter);
            let t = c.thread[i] as usize;
            if wait > 0 && t < lost.len() {
                lost[t] = lost[t].saturating_add(wait);
                out.waits.push(NxNWait {
                    collective: i,
                    thread: t,
                    op: c.op[i],
                    enter_ns: enter,
                    latest_enter_ns: latest,
                    wait_ns: wait,
                });
            }
        }
    }
    (out.per_thread_ns, out.per_rank_ns) = per_thread_and_rank(trace, &lost);
    out
}
