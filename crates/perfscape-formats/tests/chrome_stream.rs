//! The Chrome reader converts each event as it is read (issue "speed", item 5): what depends
//! on the order of the file still comes out the same — metadata written after the events it
//! names, `samples`/`stackFrames` before or after `traceEvents`, begin/end pairs and flows
//! matched across the whole file, the numbering of names — and a file cut inside an event
//! keeps what precedes the cut and says where it was cut (line and byte offset).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::gzip;
use perfscape_formats::chrome::parse_trace;
use perfscape_formats::{OpenOptions, open};
use perfscape_model::ThreadId;

const EVENTS: &str = r#"
  {"name":"main","ph":"B","ts":0,"pid":7,"tid":1},
  {"name":"work","ph":"X","ts":1,"dur":5,"pid":7,"tid":1},
  {"name":"send","ph":"s","id":3,"ts":2,"pid":7,"tid":1,"cat":"msg"},
  {"name":"recv","ph":"f","id":3,"ts":4,"pid":"7","tid":2,"cat":"msg","bp":"e"},
  {"name":"mark","ph":"i","ts":3,"pid":7,"tid":2},
  {"name":"main","ph":"E","ts":10,"pid":7,"tid":1},
  {"name":"io","ph":"X","ts":0,"dur":9,"pid":7,"tid":2}"#;

const METADATA: &str = r#"
  {"name":"process_name","ph":"M","pid":7,"args":{"name":"rank 0"}},
  {"name":"thread_name","ph":"M","pid":7,"tid":2,"args":{"name":"io thread"}}"#;

const SAMPLES: &str = r#""samples": [
    {"cpu":0,"tid":1,"ts":"1","name":"cycles","sf":2,"weight":1},
    {"cpu":0,"tid":1,"ts":"2","name":"cycles","sf":1,"weight":1}
  ],
  "stackFrames": {"1":{"name":"leaf0","category":"c"},"2":{"name":"leaf1","category":"c","parent":"1"}}"#;

#[test]
fn sections_and_metadata_in_any_order_give_the_same_trace() {
    let variants = [
        // Metadata after the events they name, samples before traceEvents.
        format!("{{{SAMPLES},\n\"traceEvents\": [{EVENTS},{METADATA}]}}"),
        // Metadata first, samples after traceEvents.
        format!("{{\"traceEvents\": [{METADATA},{EVENTS}],\n{SAMPLES}}}"),
    ];
    let parsed: Vec<_> = variants
        .iter()
        .map(|v| parse_trace(v.as_bytes()).unwrap())
        .collect();
    let a = parsed[0].trace.as_ref().unwrap();
    let b = parsed[1].trace.as_ref().unwrap();
    assert_eq!(a, b);
    let io = a
        .threads()
        .iter()
        .find(|t| t.id == ThreadId::new(7, 0, 2))
        .unwrap();
    assert_eq!(io.thread_name.as_deref(), Some("io thread"));
    assert_eq!(io.process_name.as_deref(), Some("rank 0"));
    // pid 7 and "7" are one process; the flow goes from thread 1 to thread 2.
    assert_eq!(a.threads().len(), 2);
    assert_eq!(a.flows().len(), 1);
    // A flow without a `message-size` has no bytes (unknown, not 0).
    assert_eq!(a.flows().bytes, vec![None]);
    assert_eq!(a.interval_count(), 3);
    for p in &parsed {
        assert!(p.partial.is_empty(), "{:?}", p.partial);
        let prof = &p.profile;
        let samples = prof.metric_by_name("samples").unwrap();
        let leaf = prof.event_by_name("leaf0").unwrap();
        let t1 = prof.thread_index(ThreadId::new(7, 0, 1)).unwrap();
        assert_eq!(
            prof.value(leaf, t1, perfscape_model::ValueKind::Inclusive, samples),
            Some(2.0)
        );
    }
    assert_eq!(parsed[0].profile.events().len(), parsed[1].profile.events().len());
}

#[test]
fn names_are_numbered_as_before_streaming() {
    // Complete and instant events' names first (file order), then those of flows and async
    // spans (time order), then begin/end pairs'.
    let text = format!("[{EVENTS}]");
    let t = parse_trace(text.as_bytes()).unwrap();
    let names: Vec<&str> = t
        .trace
        .as_ref()
        .unwrap()
        .names()
        .iter()
        .map(String::as_str)
        .collect();
    assert_eq!(names, ["work", "mark", "io", "send", "recv", "main"]);
}

#[test]
fn a_cut_inside_an_event_keeps_the_events_before_it_and_says_where() {
    let full = format!("{{\"traceEvents\": [{EVENTS}]}}");
    // Cut in the middle of the last event (`io`).
    let cut = full.find("\"io\"").unwrap() + 2;
    let text = &full[..cut];
    let t = parse_trace(text.as_bytes()).unwrap();
    let p = &t.partial[0];
    assert!(p.message.contains("broken or truncated"), "{p}");
    assert!(p.message.contains("the 6 events before"), "{p}");
    assert_eq!(p.line, Some(text.lines().count()));
    let offset = p.offset.expect("the byte offset of the damage") as usize;
    assert!(
        offset <= cut && offset > full.find("{\"name\":\"io\"").unwrap(),
        "{p}"
    );
    // The six complete events before the cut are kept (B/E main and X work on thread 1).
    let trace = t.trace.as_ref().unwrap();
    assert_eq!(trace.interval_count(), 2);
    assert_eq!(trace.flows().len(), 1);
    // Through `open`, the problem names the file, its line and byte offset; compressed, the
    // offset is said to count in the decompressed data.
    let tmp = tempfile::tempdir().unwrap();
    let plain = tmp.path().join("cut.json");
    std::fs::write(&plain, text).unwrap();
    let o = open(&plain, &OpenOptions::default()).unwrap();
    let e = &o.report.partial_files[0];
    assert_eq!(e.path, plain);
    assert_eq!(e.byte_offset, Some(offset as u64));
    assert_eq!(e.line, p.line);
    let gz = tmp.path().join("cut.json.gz");
    std::fs::write(&gz, gzip(text.as_bytes())).unwrap();
    let o = open(&gz, &OpenOptions::default()).unwrap();
    let e = &o.report.partial_files[0];
    assert_eq!(e.byte_offset, Some(offset as u64));
    assert!(e.message.contains("gzip-decompressed"), "{}", e.message);
}

#[test]
fn threads_alternating_with_equal_pid_text_stay_apart() {
    // Consecutive events of one pid and different tids, and of one tid and different pids.
    let text = r#"[
{"name":"a","ph":"X","ts":0,"dur":1,"pid":1,"tid":1},
{"name":"b","ph":"X","ts":0,"dur":1,"pid":1,"tid":2},
{"name":"c","ph":"C","ts":0,"pid":1,"tid":2,"args":{"v":1}},
{"name":"d","ph":"X","ts":0,"dur":1,"pid":1,"tid":2},
{"name":"e","ph":"X","ts":0,"dur":1,"pid":2,"tid":2},
{"name":"f","ph":"X","ts":0,"dur":1,"pid":"2","tid":"2"},
{"name":"g","ph":"X","ts":0,"dur":1,"tid":2}
]"#;
    let t = parse_trace(text.as_bytes()).unwrap();
    let trace = t.trace.unwrap();
    let lanes: Vec<(ThreadId, usize)> = trace
        .threads()
        .iter()
        .enumerate()
        .map(|(i, th)| (th.id, trace.lane(i).len()))
        .collect();
    // The event without a pid is in a process numbered after the largest pid.
    assert_eq!(
        lanes,
        [
            (ThreadId::new(1, 0, 1), 1),
            (ThreadId::new(1, 0, 2), 2),
            (ThreadId::new(2, 0, 2), 2),
            (ThreadId::new(3, 0, 2), 1),
        ]
    );
    assert_eq!(trace.counters().len(), 1);
    assert_eq!(trace.counters()[0].node, 1);
}
