//! The communication matrix of a trace's messages (`comm_matrix_from_trace`): the TAU stencil
//! trace's cells against the flow starts of the `trace.chrome.json` TAU wrote for the same
//! run (counted here, line by line, independently of perfscape's readers), and the OTF2
//! ping-pong's against the `otf2` Python bindings' numbers (`make_reference.py`'s committed
//! fixture).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::float_cmp)]

mod common;

use common::corpus;
use perfscape_analysis::comm::{ALL_PATHS, comm_matrix_from_trace};
use perfscape_formats::{OpenOptions, open};
use perfscape_model::Trace;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

fn trace(path: &Path) -> Trace {
    open(path, &OpenOptions::default()).unwrap().trace.unwrap()
}

#[test]
fn the_tau_stencil_traces_matrix_equals_the_flows_of_taus_chrome_json() {
    let run = corpus().join("tau-real/mpi-stencil-np4-trace");
    let text = std::fs::read_to_string(run.join("trace.chrome.json")).unwrap();
    // (sender, receiver) → (messages, bytes) from the flow starts' pid, destNode, message-size.
    let mut want: BTreeMap<(u32, u32), (f64, f64)> = BTreeMap::new();
    for line in text.lines().filter(|l| l.contains("\"ph\": \"s\"")) {
        let v: Value = serde_json::from_str(line.trim().trim_end_matches(',')).unwrap();
        let from: u32 = v["pid"].as_str().unwrap().parse().unwrap();
        let to = v["args"]["destNode"].as_u64().unwrap() as u32;
        let size = v["args"]["message-size"].as_f64().unwrap();
        let c = want.entry((from, to)).or_default();
        c.0 += 1.0;
        c.1 += size;
    }
    assert_eq!(want.values().map(|c| c.0).sum::<f64>(), 360.0);
    let m = comm_matrix_from_trace(&trace(&run));
    assert_eq!(m.ranks, 4);
    assert_eq!(m.skipped.messages_without_bytes, 0);
    let p = m.path(ALL_PATHS).unwrap();
    let got: BTreeMap<(u32, u32), (f64, f64)> = p
        .cells
        .iter()
        .map(|c| ((c.sender, c.receiver), (c.calls, c.volume_bytes)))
        .collect();
    assert_eq!(got, want);
    // Every message of the stencil is 3200 bytes: min = max = mean, no spread.
    for c in &p.cells {
        assert_eq!(
            (c.min_bytes, c.max_bytes, c.mean_bytes()),
            (3200.0, 3200.0, 3200.0)
        );
        assert_eq!(c.stddev_bytes(), 0.0);
    }
}

#[test]
fn the_otf2_ping_pong_matrix_equals_the_otf2_python_bindings() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../perfscape-formats/tests/fixtures/otf2");
    let reference: Value = serde_json::from_str(
        &std::fs::read_to_string(fixtures.join("pipit-ping-pong-otf2-2rank.json")).unwrap(),
    )
    .unwrap();
    let m = comm_matrix_from_trace(&trace(&corpus().join("otf2/pipit-ping-pong-otf2-2rank")));
    assert_eq!(m.ranks, 2);
    let p = m.path(ALL_PATHS).unwrap();
    // Two ranks, one location each: each location's messages go to the other.
    let locations = reference["locations"].as_array().unwrap();
    assert_eq!(p.cells.len(), 2);
    for (rank, loc) in locations.iter().enumerate() {
        let c = p.cell(rank as u32, 1 - rank as u32).unwrap();
        assert_eq!(c.calls, loc["messages_sent"].as_f64().unwrap());
        assert_eq!(c.volume_bytes, loc["bytes_sent"].as_f64().unwrap());
        let back = p.cell(1 - rank as u32, rank as u32).unwrap();
        assert_eq!(back.calls, loc["messages_received"].as_f64().unwrap());
        assert_eq!(back.volume_bytes, loc["bytes_received"].as_f64().unwrap());
    }
    assert_eq!(p.volume_bytes(), 2.0 * 4_177_920.0);
}

#[test]
fn flows_of_unknown_size_are_counted_apart() {
    use perfscape_model::TraceBuilder;
    use perfscape_model::trace::TraceThread;
    let mut b = TraceBuilder::new();
    let th = |n: u32| TraceThread {
        id: perfscape_model::ThreadId::new(n, 0, 0),
        process: n.to_string(),
        thread: "0".into(),
        process_name: None,
        thread_name: None,
    };
    let (a, c) = (b.thread(th(0)), b.thread(th(2)));
    let name = b.name("m");
    b.add_message(a, 0, c, 5, name, 0, "1", Some(10));
    b.add_message(a, 1, c, 6, name, 0, "2", Some(30));
    b.add_flow(c, 2, a, 7, name, 0, "3");
    let m = comm_matrix_from_trace(&b.finish().0);
    assert_eq!(m.ranks, 3);
    assert_eq!(m.skipped.messages_without_bytes, 1);
    let cell = m.path(ALL_PATHS).unwrap().cell(0, 2).unwrap();
    assert_eq!(
        (cell.calls, cell.volume_bytes, cell.min_bytes, cell.max_bytes),
        (2.0, 40.0, 10.0, 30.0)
    );
    assert_eq!(cell.stddev_bytes(), 10.0);
    assert!(m.path(ALL_PATHS).unwrap().cell(2, 0).is_none());
}
