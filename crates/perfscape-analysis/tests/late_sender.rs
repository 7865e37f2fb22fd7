//! Scalasca's late-sender wait state: on hand-made traces with planted late senders whose lost
//! time is known (built with `TraceBuilder`, and an OTF2 archive written with the `otf2`
//! Python writer, `perfscape-formats/tests/fixtures/otf2/make_late_sender.py`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use perfscape_analysis::wait_states::late_senders;
use perfscape_formats::{OpenOptions, open};
use perfscape_model::trace::TraceThread;
use perfscape_model::{ThreadId, TraceBuilder};
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
