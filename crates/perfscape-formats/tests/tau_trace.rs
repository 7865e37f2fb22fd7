//! TAU traces (`tautrace.N.C.T.trc` + `events.N.edf`): the trace read from the binary files
//! equals the `trace.chrome.json` TAU's `tau_trace2json` wrote for the same run (same
//! threads, same intervals with the same names and times to the microsecond, same messages);
//! its derived profile equals the profiles TAU's `trace2profile` rebuilt from the same trace
//! (`oracle/trace2profile`, from which `pprof.txt` was printed); truncated and damaged files
//! load what is intact and say where they stop.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::corpus;
use perfscape_formats::tau::trace::{RECORD_BYTES, parse_trc};
use perfscape_formats::{OpenOptions, Opened, detect, open};
use perfscape_model::{MetricId, ThreadId, Trace, ValueKind};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn run() -> PathBuf {
    corpus().join("tau-real/mpi-stencil-np4-trace")
}

fn load(path: &Path) -> (Trace, Opened) {
    let mut opened =
        open(path, &OpenOptions::default()).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (opened.trace.take().expect("a TAU trace gives its trace"), opened)
}

/// Per thread (node, context, thread): the intervals as (start, end, depth, name), sorted.
type Lanes = BTreeMap<(u32, u32, u32), Vec<(i64, i64, u32, String)>>;

fn lanes(t: &Trace) -> Lanes {
    let mut out = Lanes::new();
    for (i, th) in t.threads().iter().enumerate() {
        let l = t.lane(i);
        let mut v: Vec<_> = (0..l.len())
            .map(|k| {
                (
                    l.start_ns()[k],
                    l.end_ns()[k],
                    l.depth()[k],
                    t.names()[l.name()[k] as usize].clone(),
                )
            })
            .collect();
        v.sort();
        out.insert((th.id.node, th.id.context, th.id.thread), v);
    }
    out
}

fn flows(t: &Trace) -> Vec<(u32, i64, u32, i64)> {
    let f = t.flows();
    let node = |i: u32| t.threads()[i as usize].id.node;
    let mut v: Vec<_> = (0..f.len())
        .map(|i| {
            (
                node(f.from_thread[i]),
                f.from_ns[i],
                node(f.to_thread[i]),
                f.to_ns[i],
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn the_trace_equals_taus_chrome_json_of_the_same_run() {
    assert_eq!(detect(&run()).unwrap().name, "tau-trace");
    let (tau, opened) = load(&run());
    assert!(!opened.report.is_partial(), "{:?}", opened.report);
    assert!(opened.report.warnings.is_empty(), "{:?}", opened.report.warnings);
    let (chrome, _) = load(&run().join("trace.chrome.json"));
    let (a, b) = (lanes(&tau), lanes(&chrome));
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    let mut intervals = 0;
    for (k, v) in &a {
        assert_eq!(v.len(), b[k].len(), "thread {k:?}");
        for (x, y) in v.iter().zip(&b[k]) {
            assert_eq!(x, y, "thread {k:?}");
            // Microseconds, as TAU wrote them.
            assert_eq!(x.0 % 1000, 0);
            intervals += 1;
        }
    }
    assert_eq!(intervals, 1776);
    // Messages: the same 360, from the same send to the same receive.
    let (fa, fb) = (flows(&tau), flows(&chrome));
    assert_eq!(fa.len(), 360);
    assert_eq!(fa, fb);
    // (The time ranges differ: the user events, kept here as counters, were left out of the
    // JSON by `tau_trace2json -ignoreatomic`.)
    assert!(chrome.counters().is_empty() && !tau.counters().is_empty());
}

/// Per (sender rank, receiver rank), the sizes of the messages in order of sending: from the
/// flow starts (`"ph": "s"`) of TAU's `trace.chrome.json`, read line by line here (their
/// `pid`, `args.destNode` and `args.message-size`), independently of perfscape's readers.
fn chrome_json_messages() -> BTreeMap<(u32, u32), Vec<u64>> {
    let text = std::fs::read_to_string(run().join("trace.chrome.json")).unwrap();
    let mut starts: Vec<(u32, u32, f64, u64)> = Vec::new();
    for line in text.lines().filter(|l| l.contains("\"ph\": \"s\"")) {
        let v: serde_json::Value = serde_json::from_str(line.trim().trim_end_matches(',')).unwrap();
        let num = |x: &serde_json::Value| -> f64 {
            x.as_f64()
                .or_else(|| x.as_str().and_then(|s| s.parse().ok()))
                .unwrap()
        };
        starts.push((
            num(&v["pid"]) as u32,
            num(&v["args"]["destNode"]) as u32,
            num(&v["ts"]),
            num(&v["args"]["message-size"]) as u64,
        ));
    }
    starts.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let mut out: BTreeMap<(u32, u32), Vec<u64>> = BTreeMap::new();
    for (from, to, _, size) in starts {
        out.entry((from, to)).or_default().push(size);
    }
    out
}

/// The same from a trace's flows (sender and receiver by node, in order of sending).
fn flow_messages(t: &Trace) -> BTreeMap<(u32, u32), Vec<u64>> {
    let f = t.flows();
    let node = |i: u32| t.threads()[i as usize].id.node;
    let mut v: Vec<(u32, u32, i64, u64)> = (0..f.len())
        .map(|i| {
            (
                node(f.from_thread[i]),
                node(f.to_thread[i]),
                f.from_ns[i],
                f.bytes[i].expect("a TAU message has its length"),
            )
        })
        .collect();
    v.sort();
    let mut out: BTreeMap<(u32, u32), Vec<u64>> = BTreeMap::new();
    for (from, to, _, size) in v {
        out.entry((from, to)).or_default().push(size);
    }
    out
}

#[test]
fn message_bytes_equal_the_sizes_in_taus_chrome_json() {
    let want = chrome_json_messages();
    assert_eq!(want.values().map(Vec::len).sum::<usize>(), 360);
    let (tau, _) = load(&run());
    assert_eq!(flow_messages(&tau), want);
    // The Chrome reader takes the same sizes from the flow starts' `message-size`.
    let (chrome, _) = load(&run().join("trace.chrome.json"));
    assert_eq!(flow_messages(&chrome), want);
}

#[test]
fn parsed_from_bytes_as_from_files() {
    let files: Vec<(ThreadId, Vec<u8>, Vec<u8>)> = (0..4)
        .map(|r| {
            let edf = std::fs::read(run().join(format!("events.{r}.edf"))).unwrap();
            let trc = std::fs::read(run().join(format!("tautrace.{r}.0.0.trc"))).unwrap();
            (
                ThreadId {
                    node: r,
                    context: 0,
                    thread: 0,
                },
                edf,
                trc,
            )
        })
        .collect();
    let borrowed: Vec<(ThreadId, &[u8], &[u8])> =
        files.iter().map(|(t, e, r)| (*t, &e[..], &r[..])).collect();
    let (trace, profile, _) = perfscape_formats::tau::trace::parse_run(&borrowed).unwrap();
    let (t, opened) = load(&run());
    assert_eq!(trace, t);
    assert_eq!(profile, opened.profile);
}

#[test]
fn the_derived_profile_equals_taus_trace2profile() {
    let (_, opened) = load(&run());
    let p = &opened.profile;
    let tau = open(&run().join("oracle/trace2profile"), &OpenOptions::default())
        .unwrap()
        .profile;
    assert_eq!(p.threads(), tau.threads());
    let t = MetricId(0);
    let mut cells = 0;
    for e in tau.event_ids() {
        let name = tau.event_name(e);
        let col = tau.interval(e);
        let pe = p.event_by_name(&name).unwrap_or_else(|| panic!("no `{name}`"));
        for (r, th) in col.threads().iter().enumerate() {
            let pt = p.thread_index(tau.thread(*th)).unwrap();
            for (kind, want) in [
                (ValueKind::Calls, col.calls()[r]),
                (ValueKind::Subcalls, col.subcalls()[r]),
                (ValueKind::Exclusive, col.values(ValueKind::Exclusive, t)[r]),
                (ValueKind::Inclusive, col.values(ValueKind::Inclusive, t)[r]),
            ] {
                if want == 0.0 && kind == ValueKind::Calls && p.value(pe, pt, kind, t).is_none() {
                    // trace2profile lists `smooth` with 0 calls on a rank that never calls it.
                    continue;
                }
                assert_eq!(
                    p.value(pe, pt, kind, t),
                    Some(want),
                    "{} {name} {kind:?}",
                    tau.thread(*th)
                );
                cells += 1;
            }
        }
    }
    assert!(cells >= 4 * (17 * 4 + 3), "{cells}");
}

/// A copy of the run's trace files in a temporary directory (the corpus is read-only).
fn copy_run() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for r in 0..4 {
        for f in [format!("tautrace.{r}.0.0.trc"), format!("events.{r}.edf")] {
            std::fs::write(dir.path().join(&f), std::fs::read(run().join(&f)).unwrap()).unwrap();
        }
    }
    dir
}

#[test]
fn truncated_and_damaged_files_load_what_is_intact_and_say_where_they_stop() {
    let full = std::fs::read(run().join("tautrace.2.0.0.trc")).unwrap();
    let (whole, _) = load(&run());
    let whole_lanes = lanes(&whole);
    for cut in [30usize, 24 * 100 + 7, full.len() / 2 + 5, full.len() - 1] {
        let dir = copy_run();
        std::fs::write(dir.path().join("tautrace.2.0.0.trc"), &full[..cut]).unwrap();
        let (trace, opened) = load(dir.path());
        let e = &opened.report.partial_files[0];
        assert!(e.path.ends_with("tautrace.2.0.0.trc"), "{e}");
        assert_eq!(
            e.byte_offset,
            Some((cut / RECORD_BYTES * RECORD_BYTES) as u64),
            "{e}"
        );
        assert!(e.message.contains("truncated"), "{e}");
        let got = lanes(&trace);
        for k in [(0, 0, 0), (1, 0, 0), (3, 0, 0)] {
            assert_eq!(got[&k], whole_lanes[&k]);
        }
        // Rank 2 keeps the timers closed before the cut, and the others, still open, are
        // closed at its last record with a warning.
        let (records, _) = parse_trc(&full[..cut]).unwrap();
        let last_ns = (records.last().unwrap().ti - 1_795_290_117_565_368) as i64 * 1000;
        for iv in &got[&(2, 0, 0)] {
            assert!(whole_lanes[&(2, 0, 0)].contains(iv) || iv.1 == last_ns, "{iv:?}");
        }
    }
    // Not a TAU trace: the first record is not EV_INIT.
    let dir = copy_run();
    let mut bad = full.clone();
    bad[0] = 0x11;
    std::fs::write(dir.path().join("tautrace.2.0.0.trc"), &bad).unwrap();
    let (trace, opened) = load(dir.path());
    let e = &opened.report.bad_files[0];
    assert_eq!(e.byte_offset, Some(0));
    assert!(e.message.contains("EV_INIT"), "{e}");
    assert_eq!(trace.threads().len(), 3);
    // An event definition file that is not one: its rank is not read, with the line.
    std::fs::write(
        dir.path().join("events.1.edf"),
        "111 dynamic_trace_events\n4 TAU 0 no quotes\n",
    )
    .unwrap();
    let (_, opened) = load(dir.path());
    assert!(
        opened
            .report
            .bad_files
            .iter()
            .any(|e| e.path.ends_with("events.1.edf") && e.line == Some(2))
    );
    assert!(
        opened
            .report
            .bad_files
            .iter()
            .any(|e| e.path.ends_with("tautrace.1.0.0.trc"))
    );
}
