//! OTF2: the corpus archive loads; per location, each region's visits, inclusive and
//! exclusive time (to the nanosecond) and the messages sent and received equal those
//! computed with the OTF2 library's Python bindings (`fixtures/otf2/make_reference.py`,
//! committed output); messages become flows between the right lanes; truncated and damaged
//! files load what is intact and say where they stop.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::corpus;
use perfscape_formats::{OpenOptions, Opened, detect, open};
use perfscape_model::trace::CollectiveOp;
use perfscape_model::{MetricId, Profile, ThreadId, Trace, ValueKind};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn archive() -> PathBuf {
    corpus().join("otf2/pipit-ping-pong-otf2-2rank")
}

fn reference() -> Value {
    let text = include_str!("fixtures/otf2/pipit-ping-pong-otf2-2rank.json");
    serde_json::from_str(text).unwrap()
}

fn load(path: &Path) -> (Trace, Opened) {
    let mut opened =
        open(path, &OpenOptions::default()).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (
        opened.trace.take().expect("an OTF2 archive gives its trace"),
        opened,
    )
}

/// The trace thread of OTF2 location `id` (its `thread` field is the location id).
fn lane_of(trace: &Trace, id: u64) -> usize {
    trace
        .threads()
        .iter()
        .position(|t| t.thread == id.to_string())
        .unwrap_or_else(|| panic!("no lane for location {id}"))
}

fn value(p: &Profile, thread: ThreadId, event: &str, kind: ValueKind) -> f64 {
    let e = p
        .event_by_name(event)
        .unwrap_or_else(|| panic!("no event {event}"));
    let t = p.thread_index(thread).unwrap();
    p.value(e, t, kind, MetricId(0))
        .unwrap_or_else(|| panic!("no {kind:?} of {event} on {thread}"))
}

#[test]
fn detected_from_the_directory_and_the_anchor_file() {
    assert_eq!(detect(&archive()).unwrap().name, "otf2");
    assert_eq!(detect(&archive().join("traces.otf2")).unwrap().name, "otf2");
    let (a, _) = load(&archive());
    let (b, _) = load(&archive().join("traces.otf2"));
    assert_eq!(a, b);
}

#[test]
fn parsed_from_bytes_as_from_files() {
    let a = archive();
    let read = |f: &str| std::fs::read(a.join(f)).unwrap();
    let (d0, e0, d1, e1) = (
        read("traces/0.def"),
        read("traces/0.evt"),
        read("traces/1.def"),
        read("traces/1.evt"),
    );
    let (trace, profile, report) = perfscape_formats::otf2::parse_archive(
        &read("traces.otf2"),
        &read("traces.def"),
        &[(Some(&d0), Some(&e0)), (Some(&d1), Some(&e1))],
    )
    .unwrap();
    let (t, opened) = load(&a);
    assert_eq!(trace, t);
    assert_eq!(profile, opened.profile);
    assert_eq!(report.notes, opened.report.notes);
}

/// Compares the archive at `path` with the reference numbers of `make_reference.py`: per
/// location each region's visits, inclusive and exclusive time (to the ns), the intervals,
/// and the messages; returns the trace and the report. `cells` is the number of (location,
/// region) cells expected.
fn check_against_reference(path: &Path, reference: &Value, cells: usize) -> (Trace, Opened) {
    let (trace, opened) = load(path);
    assert!(!opened.report.is_partial(), "{:?}", opened.report);
    assert!(opened.report.warnings.is_empty(), "{:?}", opened.report.warnings);
    let p = &opened.profile;
    let locations = reference["locations"].as_array().unwrap();
    assert_eq!(trace.threads().len(), locations.len());
    let mut checked = 0;
    for loc in locations {
        let id = loc["location"].as_u64().unwrap();
        let lane = lane_of(&trace, id);
        let th = &trace.threads()[lane];
        assert_eq!(th.thread_name.as_deref(), loc["name"].as_str());
        assert_eq!(th.process_name.as_deref(), loc["group"].as_str());
        assert_eq!(trace.lane(lane).len() as u64, loc["intervals"].as_u64().unwrap());
        // Metric samples: the counters of its process, in its series.
        let mut want: Vec<(i64, String, f64)> = loc["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                (
                    m[0].as_i64().unwrap(),
                    m[1].as_str().unwrap().to_string(),
                    m[2].as_f64().unwrap(),
                )
            })
            .collect();
        let mut got: Vec<(i64, String, f64)> = trace
            .counters()
            .iter()
            .filter(|c| c.node == th.id.node && c.series == id.to_string())
            .flat_map(|c| {
                c.ts_ns
                    .iter()
                    .zip(&c.value)
                    .map(|(&t, &v)| (t, c.name.clone(), v))
            })
            .collect();
        want.sort_by(|a, b| a.partial_cmp(b).unwrap());
        got.sort_by(|a, b| a.partial_cmp(b).unwrap());
        assert_eq!(got, want, "location {id} metrics");
        for (region, r) in loc["regions"].as_object().unwrap() {
            let calls = value(p, th.id, region, ValueKind::Calls);
            assert_eq!(
                calls as u64,
                r["visits"].as_u64().unwrap(),
                "{id} {region} visits"
            );
            // TIME is in microseconds, from integer nanoseconds: back to nanoseconds exactly.
            for (kind, key) in [
                (ValueKind::Inclusive, "inclusive_ns"),
                (ValueKind::Exclusive, "exclusive_ns"),
            ] {
                let ns = (value(p, th.id, region, kind) * 1000.0).round() as i64;
                assert_eq!(ns, r[key].as_i64().unwrap(), "location {id} {region} {key}");
            }
            checked += 1;
        }
    }
    assert_eq!(checked, cells);
    // Messages: the flows leaving and reaching each lane, with the bytes in the notes.
    let flows = trace.flows();
    for loc in locations {
        let lane = lane_of(&trace, loc["location"].as_u64().unwrap()) as u32;
        let sent = flows.from_thread.iter().filter(|&&t| t == lane).count() as u64;
        let received = flows.to_thread.iter().filter(|&&t| t == lane).count() as u64;
        assert_eq!(sent, loc["messages_sent"].as_u64().unwrap());
        assert_eq!(received, loc["messages_received"].as_u64().unwrap());
        // Bytes: every flow carries its message length.
        let bytes = |side: &[u32]| -> u64 {
            (0..flows.len())
                .filter(|&i| side[i] == lane)
                .map(|i| flows.bytes[i].expect("an OTF2 message has its length"))
                .sum()
        };
        assert_eq!(bytes(&flows.from_thread), loc["bytes_sent"].as_u64().unwrap());
        assert_eq!(bytes(&flows.to_thread), loc["bytes_received"].as_u64().unwrap());
    }
    let total_sent: u64 = locations
        .iter()
        .map(|l| l["messages_sent"].as_u64().unwrap())
        .sum();
    let total_bytes: u64 = locations.iter().map(|l| l["bytes_sent"].as_u64().unwrap()).sum();
    assert_eq!(flows.len() as u64, total_sent);
    let note = format!("{total_sent} MPI messages sent ({total_bytes} bytes), {total_sent} matched");
    assert!(
        opened.report.notes.iter().any(|n| n.starts_with(&note)),
        "{:?}",
        opened.report.notes
    );
    (trace, opened)
}

/// True when lane `lane` has an interval named `name` around time `t`.
fn inside(trace: &Trace, lane: u32, t: i64, name: &str) -> bool {
    let l = trace.lane(lane as usize);
    (0..l.len())
        .any(|i| trace.names()[l.name()[i] as usize] == name && l.start_ns()[i] <= t && t <= l.end_ns()[i])
}

#[test]
fn region_times_and_messages_equal_the_otf2_python_reader() {
    let (trace, _) = check_against_reference(&archive(), &reference(), 2 * 7);
    // Every flow starts inside an MPI_Send and ends inside an MPI_Recv of its lanes.
    let flows = trace.flows();
    for i in 0..flows.len() {
        assert!(
            inside(&trace, flows.from_thread[i], flows.from_ns[i], "MPI_Send"),
            "flow {i}"
        );
        assert!(
            inside(&trace, flows.to_thread[i], flows.to_ns[i], "MPI_Recv"),
            "flow {i}"
        );
        assert!(flows.from_thread[i] != flows.to_thread[i]);
    }
}

#[test]
fn non_blocking_messages_collectives_threads_and_metrics_of_a_hand_made_trace() {
    // Written by fixtures/otf2/make_late_sender.py with the otf2 Python writer; reference by
    // make_reference.py: two ranks, rank 0 with a second thread, send/recv, isend/irecv
    // (+ completions), a barrier (collective begin/end), a metric sample.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/otf2/late-sender-2rank");
    let reference: Value =
        serde_json::from_str(include_str!("fixtures/otf2/late-sender-2rank.json")).unwrap();
    let (trace, opened) = check_against_reference(&dir, &reference, 6 + 2 + 6);
    // The worker thread is the second thread of rank 0's process.
    let worker = &trace.threads()[lane_of(&trace, 1)];
    assert_eq!((worker.id.node, worker.id.thread), (0, 1));
    // The isend/irecv message goes from inside MPI_Isend to inside MPI_Wait (the irecv
    // completion), the blocking one from MPI_Send to MPI_Recv.
    let flows = trace.flows();
    let ends: Vec<(i64, i64)> = (0..flows.len())
        .map(|i| (flows.from_ns[i], flows.to_ns[i]))
        .collect();
    assert_eq!(ends, vec![(5010, 5200), (6010, 6300)]);
    assert!(inside(&trace, flows.to_thread[1], 6300, "MPI_Wait"));
    let notes = opened.report.notes.join("\n");
    assert!(notes.contains("2 MPI collective operations"), "{notes}");
    // The barrier, kept: rank 1's begin/end 6501..7399, rank 0's 7001..7400 (the script's).
    let c = trace.collectives();
    type Row = (u32, CollectiveOp, i64, i64, Option<u32>, u64, u64);
    let rows: Vec<Row> = (0..c.len())
        .map(|i| {
            let r = c.row(i);
            let node = trace.threads()[r.thread as usize].id.node;
            (
                node,
                r.op,
                r.begin_ns,
                r.end_ns,
                r.root,
                r.bytes_sent,
                r.bytes_received,
            )
        })
        .collect();
    assert_eq!(
        rows,
        vec![
            (1, CollectiveOp::Barrier, 6501, 7399, None, 0, 0),
            (0, CollectiveOp::Barrier, 7001, 7400, None, 0, 0)
        ]
    );
    assert_eq!(trace.names()[c.communicator_name[0] as usize], "MPI_COMM_WORLD");
    assert_eq!(c.communicator[0], c.communicator[1]);
    // The metric samples: an unsigned counter, a double and a signed value.
    let samples: usize = trace.counters().iter().map(|c| c.value.len()).sum();
    assert_eq!(samples, 5);
}

#[test]
fn collectives_of_a_hand_made_trace_with_planted_wait_states() {
    // Written by fixtures/otf2/make_wait_states.py; reference by make_reference.py: three
    // ranks, two messages, two allreduces and a barrier.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/otf2/wait-states-3rank");
    let reference: Value =
        serde_json::from_str(include_str!("fixtures/otf2/wait-states-3rank.json")).unwrap();
    let (trace, _) = check_against_reference(&dir, &reference, 4 + 5 + 4);
    let c = trace.collectives();
    assert_eq!(c.len(), 9);
    // Per rank, in order: allreduce, allreduce, barrier; 8 bytes each way in the allreduces.
    for rank in 0..3u32 {
        let mine: Vec<(CollectiveOp, u64, u64)> = (0..c.len())
            .filter(|&i| trace.threads()[c.thread[i] as usize].id.node == rank)
            .map(|i| (c.op[i], c.bytes_sent[i], c.bytes_received[i]))
            .collect();
        assert_eq!(
            mine,
            vec![
                (CollectiveOp::Allreduce, 8, 8),
                (CollectiveOp::Allreduce, 8, 8),
                (CollectiveOp::Barrier, 0, 0)
            ]
        );
    }
    // Rank 2 enters the first allreduce at 8500, its begin record 1 ns later, its end 10 ns
    // before its leave at 9020.
    let i = (0..c.len())
        .find(|&i| trace.threads()[c.thread[i] as usize].id.node == 2)
        .unwrap();
    assert_eq!((c.begin_ns[i], c.end_ns[i]), (8501, 9010));
}

/// A copy of the archive in a temporary directory (the corpus is read-only).
fn copy_archive() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let src = archive();
    std::fs::create_dir(dir.path().join("traces")).unwrap();
    for f in [
        "traces.otf2",
        "traces.def",
        "traces/0.def",
        "traces/0.evt",
        "traces/1.def",
        "traces/1.evt",
    ] {
        std::fs::copy(src.join(f), dir.path().join(f)).unwrap();
    }
    for f in [
        "traces.otf2",
        "traces.def",
        "traces/0.def",
        "traces/0.evt",
        "traces/1.def",
        "traces/1.evt",
    ] {
        let mut perm = std::fs::metadata(dir.path().join(f)).unwrap().permissions();
        #[allow(clippy::permissions_set_readonly_false)]
        perm.set_readonly(false);
        std::fs::set_permissions(dir.path().join(f), perm).unwrap();
    }
    dir
}

fn intervals_by_name(trace: &Trace, lane: usize) -> BTreeMap<(i64, i64), String> {
    let l = trace.lane(lane);
    (0..l.len())
        .map(|i| {
            (
                (l.start_ns()[i], l.end_ns()[i]),
                trace.names()[l.name()[i] as usize].clone(),
            )
        })
        .collect()
}

#[test]
fn truncated_event_files_load_what_is_intact_and_say_where_they_stop() {
    let (whole, _) = load(&archive());
    let full = std::fs::read(archive().join("traces/1.evt")).unwrap();
    let whole_1 = intervals_by_name(&whole, lane_of(&whole, 1));
    let whole_0 = intervals_by_name(&whole, lane_of(&whole, 0));
    let mut fewer = 0;
    for cut in [0usize, 1, 10, 18, 19, 100, 401, full.len() / 2, full.len() - 2] {
        let dir = copy_archive();
        std::fs::write(dir.path().join("traces/1.evt"), &full[..cut]).unwrap();
        let (trace, opened) = load(dir.path());
        let r = &opened.report;
        assert_eq!(r.partial_files.len(), 1, "cut {cut}: {r:?}");
        let e = &r.partial_files[0];
        assert!(e.path.ends_with("traces/1.evt"), "{e}");
        let at = e
            .byte_offset
            .unwrap_or_else(|| panic!("cut {cut}: no offset in {e}"));
        assert!(at <= cut as u64, "cut {cut}: offset {at}");
        assert!(
            e.message.contains("truncated") || e.message.contains("cut off") || e.message.contains("ends"),
            "{e}"
        );
        // Location 0 is whole; location 1 has the intervals closed before the cut (those still
        // open are closed at its last event, with a warning).
        assert_eq!(intervals_by_name(&trace, lane_of(&trace, 0)), whole_0);
        let got = intervals_by_name(&trace, lane_of(&trace, 1));
        let complete = got.iter().filter(|(k, v)| whole_1.get(k) == Some(v)).count();
        assert!(complete <= whole_1.len());
        if got.len() < whole_1.len() {
            fewer += 1;
        }
    }
    assert!(fewer >= 7, "{fewer}");
}

#[test]
fn damaged_files_name_the_offset_and_what_was_expected() {
    // A compressed integer whose size byte is 9: the region of the first enter event.
    let full = std::fs::read(archive().join("traces/0.evt")).unwrap();
    let enter = full.windows(2).position(|w| w == [0x0c, 0x01]).unwrap();
    let mut bad = full.clone();
    bad[enter + 1] = 9;
    let dir = copy_archive();
    std::fs::write(dir.path().join("traces/0.evt"), &bad).unwrap();
    let (_, opened) = load(dir.path());
    let e = &opened.report.partial_files[0];
    assert!(e.path.ends_with("traces/0.evt"));
    assert_eq!(e.byte_offset, Some(enter as u64 + 1), "{e}");
    // A chunk header that is not one.
    let mut bad = full.clone();
    bad[0] = 0x07;
    std::fs::write(dir.path().join("traces/0.evt"), &bad).unwrap();
    let (_, opened) = load(dir.path());
    let e = &opened.report.partial_files[0];
    assert_eq!(e.byte_offset, Some(0));
    assert!(e.message.contains("chunk header"), "{e}");
    // A missing event file: that location is a bad file, the other loads.
    std::fs::remove_file(dir.path().join("traces/0.evt")).unwrap();
    let (trace, opened) = load(dir.path());
    assert_eq!(opened.report.bad_files.len(), 1);
    assert!(!trace.lane(lane_of(&trace, 1)).is_empty());
    // The global definitions cut in their middle: an error naming traces.def and the offset,
    // or a partial load when the locations were read before the cut.
    let defs = std::fs::read(archive().join("traces.def")).unwrap();
    for cut in [0usize, 10, 200, defs.len() - 2] {
        let dir = copy_archive();
        std::fs::write(dir.path().join("traces.def"), &defs[..cut]).unwrap();
        match open(dir.path(), &OpenOptions::default()) {
            Err(e) => assert!(e.to_string().contains("traces.def"), "{e}"),
            Ok(o) => assert!(
                o.report
                    .partial_files
                    .iter()
                    .any(|e| e.path.ends_with("traces.def"))
            ),
        }
    }
    // A wrong anchor file.
    let dir = copy_archive();
    std::fs::write(dir.path().join("traces.otf2"), b"\x03BOTF2\0\x03").unwrap();
    let e = open(dir.path(), &OpenOptions::default()).unwrap_err().to_string();
    assert!(e.contains("traces.otf2"), "{e}");
}

#[test]
fn fuzz_finding_huge_message_lengths_and_clock_offsets_do_not_overflow() {
    // An input of the `otf2` fuzz target (framing: 2-byte length + bytes for the anchor
    // file, the global definitions, then local definitions and events per location) whose
    // message lengths summed past u64 and whose times lay ±2^64 ticks apart.
    let data =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/otf2/fuzz-overflow.bin"))
            .unwrap();
    fn take<'a>(d: &mut &'a [u8]) -> &'a [u8] {
        if d.len() < 2 {
            return std::mem::take(d);
        }
        let n = usize::from(u16::from_le_bytes([d[0], d[1]])).min(d.len() - 2);
        let part = &d[2..2 + n];
        *d = &d[2 + n..];
        part
    }
    let mut d = &data[..];
    let (anchor, defs) = (take(&mut d), take(&mut d));
    let mut parts = Vec::new();
    while !d.is_empty() && parts.len() < 8 {
        let def = take(&mut d);
        let evt = take(&mut d);
        parts.push((Some(def), Some(evt)));
    }
    // Loads (what is intact) or fails with a reason; never panics.
    if let Ok((trace, _, _)) = perfscape_formats::otf2::parse_archive(anchor, defs, &parts) {
        for i in 0..trace.threads().len() {
            let l = trace.lane(i);
            assert!(
                l.start_ns()
                    .iter()
                    .zip(l.end_ns())
                    .all(|(s, e)| s <= e && e.abs() <= 1 << 62)
            );
        }
    }
}

/// Any archive against its `make_reference.py` output (not run by default; used to check
/// larger archives written with the Python writer, e.g. several chunks per location):
/// `OTF2_ARCHIVE=DIR OTF2_REFERENCE=REF.json cargo test -p perfscape-formats --test otf2 -- --ignored`
#[test]
#[ignore = "needs OTF2_ARCHIVE and OTF2_REFERENCE"]
fn an_archive_named_by_the_environment_equals_its_reference() {
    let dir = PathBuf::from(std::env::var("OTF2_ARCHIVE").unwrap());
    let reference: Value =
        serde_json::from_str(&std::fs::read_to_string(std::env::var("OTF2_REFERENCE").unwrap()).unwrap())
            .unwrap();
    let cells = reference["locations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["regions"].as_object().unwrap().len())
        .sum();
    check_against_reference(&dir, &reference, cells);
}
