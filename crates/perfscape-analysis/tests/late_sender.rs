//! Scalasca's wait states — late sender, late receiver, wait at N x N — on hand-made traces
//! with planted waits whose lost time is known by construction (built with `TraceBuilder`,
//! and OTF2 archives written with the `otf2` Python writer,
//! `perfscape-formats/tests/fixtures/otf2/make_late_sender.py` and `make_wait_states.py`),
//! and as findings.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use perfscape_analysis::findings::{FindingKind, FindingOptions, add_wait_states, findings};
use perfscape_analysis::wait_states::{late_receivers, late_senders, wait_at_nxn};
use perfscape_formats::{OpenOptions, open};
use perfscape_model::trace::{CollectiveOp, TraceThread};
use perfscape_model::{MetricId, ThreadId, TraceBuilder};
use std::path::Path;

fn thread(rank: u32) -> TraceThread {
    TraceThread {
        id: ThreadId::new(rank, 0, 0),
        process: rank.to_string(),
        thread: "0".into(),
        process_name: None,
        thread_name: None,
    }
}

#[test]
fn one_planted_late_sender_among_punctual_messages() {
    let mut b = TraceBuilder::new();
    let (r0, r1, r2) = (b.thread(thread(0)), b.thread(thread(1)), b.thread(thread(2)));
    let cat = b.category("MPI");
    let [main, send, recv, wait, compute] =
        ["main", "MPI_Send", "MPI_Recv", "MPI_Wait", "compute"].map(|n| b.name(n));
    let msg = b.name("message");
    let mut seq = 0;
    let mut iv = |b: &mut TraceBuilder, t: u32, s: i64, e: i64, n: u32| {
        b.add_interval(t, s, e, n, cat, seq, seq + 1);
        seq += 2;
    };
    for t in [r0, r1, r2] {
        iv(&mut b, t, 0, 100_000, main);
    }
    // 1. Planted: rank 1 enters MPI_Recv at 1_000, rank 0 enters MPI_Send only at 5_000
    //    (after computing): rank 1 loses 4_000 ns.
    iv(&mut b, r0, 100, 5_000, compute);
    iv(&mut b, r0, 5_000, 5_100, send);
    iv(&mut b, r1, 1_000, 5_210, recv);
    b.add_flow(r0, 5_010, r1, 5_200, msg, cat, "1");
    // 2. Punctual: the send starts (6_000) before the receive (6_500): no loss.
    iv(&mut b, r0, 6_000, 6_100, send);
    iv(&mut b, r2, 6_500, 6_600, recv);
    b.add_flow(r0, 6_050, r2, 6_550, msg, cat, "2");
    // 3. A late sender whose receive operation is shorter than the delay: the loss is the
    //    receive operation's length, 300 ns (rank 2 waits in MPI_Wait from 7_000 to 7_300
    //    while the send starts at 9_000: an eager protocol delivered it before).
    iv(&mut b, r2, 7_000, 7_300, wait);
    iv(&mut b, r0, 9_000, 9_100, send);
    b.add_flow(r0, 9_010, r2, 7_250, msg, cat, "3");
    // 4. A receive outside every interval: not examined.
    b.add_flow(r0, 5_050, r1, 200_000, msg, cat, "4");
    let (trace, _) = b.finish();
    let ls = late_senders(&trace);
    assert_eq!(ls.examined, 3);
    assert_eq!(ls.without_operation, 1);
    let waits: Vec<(usize, i64)> = ls.messages.iter().map(|m| (m.flow, m.wait_ns)).collect();
    let flow_of = |id: &str| trace.flows().id.iter().position(|x| x == id).unwrap();
    assert_eq!(waits, vec![(flow_of("1"), 4_000), (flow_of("3"), 300)]);
    assert_eq!(ls.messages[0].recv_start_ns, 1_000);
    assert_eq!(ls.messages[0].send_start_ns, 5_000);
    assert_eq!(
        ls.per_rank_ns.into_iter().collect::<Vec<_>>(),
        vec![(0, 0), (1, 4_000), (2, 300)]
    );
    assert_eq!(ls.per_thread_ns[1], (ThreadId::new(1, 0, 0), 4_000));
}

#[test]
fn the_planted_late_sender_of_an_otf2_trace() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../perfscape-formats/tests/fixtures/otf2/late-sender-2rank");
    let trace = open(&dir, &OpenOptions::default()).unwrap().trace.unwrap();
    let ls = late_senders(&trace);
    // Two messages: the blocking one is late by 5000 - 1000 ns; the isend (6000) started
    // before rank 1's MPI_Wait (6100).
    assert_eq!(ls.examined, 2);
    assert_eq!(ls.messages.len(), 1);
    assert_eq!(ls.messages[0].wait_ns, 4_000);
    assert_eq!(
        ls.per_rank_ns.into_iter().collect::<Vec<_>>(),
        vec![(0, 0), (1, 4_000)]
    );
}

/// The archive of `make_wait_states.py` (planted late receiver and waits at N x N).
fn wait_states_trace() -> perfscape_model::Trace {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../perfscape-formats/tests/fixtures/otf2/wait-states-3rank");
    open(&dir, &OpenOptions::default()).unwrap().trace.unwrap()
}

#[test]
fn the_planted_late_receiver_of_an_otf2_trace() {
    let trace = wait_states_trace();
    let lr = late_receivers(&trace);
    // Rank 0's MPI_Send 1000..4100 ends after rank 1 enters MPI_Recv at 4000: 3000 lost.
    // Rank 2's eager MPI_Send 4200..4300 ends before rank 1's MPI_Recv at 5000: nothing.
    assert_eq!(lr.examined, 2);
    assert_eq!(lr.messages.len(), 1);
    let m = lr.messages[0];
    assert_eq!((m.send_start_ns, m.recv_start_ns, m.wait_ns), (1000, 4000, 3000));
    assert_eq!(trace.threads()[m.sender].id.node, 0);
    assert_eq!(
        lr.per_rank_ns.into_iter().collect::<Vec<_>>(),
        vec![(0, 3000), (1, 0), (2, 0)]
    );
    // No late sender: each send starts before its receive.
    assert!(late_senders(&trace).messages.is_empty());
}

#[test]
fn the_planted_waits_at_nxn_of_an_otf2_trace() {
    let trace = wait_states_trace();
    let w = wait_at_nxn(&trace);
    // Two allreduces (the barrier is not n-to-n). #1: enters 6000, 7000, 8500: rank 0 loses
    // 2500, rank 1 1500. #2: enters 10000, 10000, 10400, rank 0 leaving at 10100: rank 0's
    // wait capped at 100, rank 1 400.
    assert_eq!(w.instances, 2);
    let got: Vec<(u32, i64, i64, i64)> = w
        .waits
        .iter()
        .map(|x| {
            (
                trace.threads()[x.thread].id.node,
                x.enter_ns,
                x.latest_enter_ns,
                x.wait_ns,
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (0, 6000, 8500, 2500),
            (1, 7000, 8500, 1500),
            (0, 10000, 10400, 100),
            (1, 10000, 10400, 400)
        ]
    );
    assert_eq!(
        w.per_rank_ns.into_iter().collect::<Vec<_>>(),
        vec![(0, 2600), (1, 1900), (2, 0)]
    );
    assert!(w.waits.iter().all(|x| x.op == CollectiveOp::Allreduce));
}

#[test]
fn wait_states_are_findings_of_a_trace() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../perfscape-formats/tests/fixtures/otf2/wait-states-3rank");
    let opened = open(&dir, &OpenOptions::default()).unwrap();
    let (p, trace) = (&opened.profile, opened.trace.as_ref().unwrap());
    let m = MetricId(0);
    let mut f = findings(p, m, None, &FindingOptions::default());
    add_wait_states(&mut f, p, m, trace, &FindingOptions::default());
    let by_kind = |k: FindingKind| f.findings.iter().find(|x| x.kind == k);
    // TIME is in microseconds: the costs are the worst rank's loss (3000 ns, 2600 ns).
    let lr = by_kind(FindingKind::LateReceiver).unwrap();
    assert_eq!(lr.cost, 3.0);
    assert_eq!(p.thread(lr.thread.unwrap()).node, 0);
    assert_eq!(p.event_name(lr.event.unwrap()), "MPI_Send");
    let nxn = by_kind(FindingKind::WaitAtNxN).unwrap();
    assert_eq!(nxn.cost, 2.6);
    assert_eq!(p.thread(nxn.thread.unwrap()).node, 0);
    assert_eq!(p.event_name(nxn.event.unwrap()), "MPI_Allreduce");
    assert!(
        nxn.evidence
            .iter()
            .any(|e| e.contains("by rank: 0: 2.60 µs, 1: 1.90 µs")),
        "{:?}",
        nxn.evidence
    );
    assert!(by_kind(FindingKind::LateSender).is_none());
}
