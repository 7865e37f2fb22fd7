//! The producers of `producers/`: the Python module and the C header stream to a listener,
//! and what the server integrates is what they sent (values worked out by hand).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use perfscape_live::{ListenAddr, LiveEvent, LiveRun, StreamOptions, listen};
use perfscape_model::{MetricId, SampleId, SampleMode, ThreadId, ValueKind};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const T: MetricId = MetricId(0);

fn producers() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../producers")
}

fn wait_final(run: &LiveRun, threads: usize) -> Vec<LiveEvent> {
    let end = Instant::now() + Duration::from_secs(30);
    let mut seen = Vec::new();
    let mut ended = 0;
    while Instant::now() < end {
        if let Ok(e) = run.recv_timeout(Duration::from_millis(100)) {
            ended += matches!(e, LiveEvent::ThreadEnded { .. }) as usize;
            let done = ended == threads && matches!(&e, LiveEvent::Sample(s) if s.name == "final");
            seen.push(e);
            if done {
                return seen;
            }
        }
    }
    panic!("timed out: {seen:#?}");
}

#[test]
fn the_python_producer_streams_regions_counters_and_explicit_samples() {
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("py.sock");
    let run = listen(&ListenAddr::Unix(sock.clone()), &StreamOptions::default()).unwrap();
    let script = format!(
        r#"
import sys
sys.path.insert(0, {producers:?})
from perfscape_stream import Stream
ms = 1_000_000
t0 = 1_800_000_000 * 1_000_000_000
for rank in (0, 1):
    s = Stream("unix:{sock}", rank=rank, program="py-test")
    s.enter("main", t_ns=t0)
    s.enter("solve", t_ns=t0 + ms)
    s.counter("residual", 2.0 + rank, t_ns=t0 + 2 * ms)
    s.exit(t_ns=t0 + (3 + rank) * ms)
    s.sample("step 1", t_ns=t0 + 5 * ms)
    s.exit(t_ns=t0 + 10 * ms)
    s.end(t_ns=t0 + 10 * ms)
    assert s.errors() == [], "no record refused"
    s.close()
# An explicit sample (the values a TAU snapshot carries), then a bad record.
s = Stream("unix:{sock}", rank=2)
s.sample("step 1", t_ns=t0 + 5 * ms, events=[
    {{"name": "main", "calls": 1, "subcalls": 1, "exclusive": [4000.0], "inclusive": [5000.0]}},
    {{"name": "solve", "calls": 1, "exclusive": [1000.0], "inclusive": [1000.0]}}])
s._send({{"type": "exit", "region": "nothing", "t_ns": t0 + 6 * ms}})
s.end(t_ns=t0 + 10 * ms)
errors = s.errors()
assert len(errors) == 1 and "no region is open" in errors[0]["message"], errors
print("ok")
"#,
        producers = producers().display().to_string(),
        sock = sock.display()
    );
    let out = Command::new("python3").arg("-c").arg(&script).output().unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let events = wait_final(&run, 3);
    assert!(events.iter().any(
        |e| matches!(e, LiveEvent::ProducerError { message, .. } if message.contains("no region is open"))
    ));
    let series = run.series().read();
    assert_eq!(series.len(), 2);
    let step = series.profile_at(SampleId(0), SampleMode::Cumulative).unwrap();
    let v = |p: &perfscape_model::Profile, e: &str, rank: u32, k: ValueKind| {
        let t = p.thread_index(ThreadId::new(rank, 0, 0)).unwrap();
        p.value(p.event_by_name(e).unwrap(), t, k, T)
    };
    // At 5 ms: solve took 2 ms (rank 0) and 3 ms (rank 1); main is open, counted up to 5 ms.
    assert_eq!(v(&step, "solve", 0, ValueKind::Inclusive), Some(2000.0));
    assert_eq!(v(&step, "solve", 1, ValueKind::Inclusive), Some(3000.0));
    assert_eq!(v(&step, "main", 1, ValueKind::Exclusive), Some(2000.0));
    assert_eq!(v(&step, "main", 0, ValueKind::Inclusive), Some(5000.0));
    // Rank 2's explicit values are the sample as sent.
    assert_eq!(v(&step, "main", 2, ValueKind::Exclusive), Some(4000.0));
    assert_eq!(v(&step, "solve", 2, ValueKind::Calls), Some(1.0));
    let last = series.profile_at(SampleId(1), SampleMode::Cumulative).unwrap();
    assert_eq!(v(&last, "main", 0, ValueKind::Inclusive), Some(10000.0));
    assert_eq!(v(&last, "main", 0, ValueKind::Exclusive), Some(8000.0));
    let residual = last.atomic_event_by_name("residual").unwrap();
    assert_eq!(last.atomic(residual).count().len(), 2);
}

#[test]
fn the_c_header_streams_from_a_program() {
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("c.sock");
    let src = dir.path().join("prog.c");
    std::fs::write(
        &src,
        r#"
#include "perfscape_stream.h"
int main(void) {
    ps_stream s;
    if (ps_open(&s, NULL, 3, 1, "c-test \"quoted\"") != 0) return 2;
    ps_enter(&s, "main", NULL);
    for (int i = 0; i < 5; i++) {
        ps_enter(&s, "loop\tbody", NULL);
        ps_enter(&s, "rec", NULL);
        ps_enter(&s, "rec", NULL);
        ps_exit(&s, "rec");
        ps_exit(&s, "rec");
        ps_enter(&s, "MPI_Send()", "MPI");
        ps_send(&s, 4, 1024);
        ps_exit(&s, "MPI_Send()");
        ps_counter(&s, "temperature", 20.5 + i);
        ps_exit(&s, "loop\tbody");
    }
    ps_sample(&s, "after loop");
    ps_enter(&s, "left open", NULL);
    return ps_end(&s) == 0 ? 0 : 3;
}
"#,
    )
    .unwrap();
    let exe = dir.path().join("prog");
    let cc = Command::new("cc")
        .args([
            "-std=c99",
            "-D_POSIX_C_SOURCE=200809L",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-I",
        ])
        .arg(producers())
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap();
    assert!(cc.status.success(), "{}", String::from_utf8_lossy(&cc.stderr));
    let run = listen(&ListenAddr::Unix(sock.clone()), &StreamOptions::default()).unwrap();
    let tau = dir.path().join("tau");
    std::fs::create_dir(&tau).unwrap();
    let status = Command::new(&exe)
        .env("PERFSCAPE_STREAM", format!("unix:{}", sock.display()))
        .env("PERFSCAPE_TAU_DIR", &tau)
        .status()
        .unwrap();
    assert!(status.success(), "{status}");
    let events = wait_final(&run, 1);
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, LiveEvent::ProducerError { .. })),
        "{events:#?}"
    );
    let series = run.series().read();
    assert_eq!(series.len(), 2);
    let p = series.profile_at(SampleId(0), SampleMode::Cumulative).unwrap();
    let t = p.thread_index(ThreadId::new(3, 0, 1)).unwrap();
    let calls = |e: &str| p.value(p.event_by_name(e).unwrap(), t, ValueKind::Calls, T);
    assert_eq!(calls("loop\tbody"), Some(5.0));
    assert_eq!(calls("MPI_Send()"), Some(5.0));
    let sent = p.atomic_event_by_name("Message size sent to node 4").unwrap();
    assert_eq!(p.atomic(sent).count(), &[5.0]);
    let temp = p.atomic_event_by_name("temperature").unwrap();
    assert_eq!(p.atomic(temp).count(), &[5.0]);
    // rec: 10 calls (5 recursive), its inclusive time counted at the outer exits only.
    assert_eq!(calls("rec"), Some(10.0));
    let last = series.profile_at(SampleId(1), SampleMode::Cumulative).unwrap();
    assert_file_equals_stream(&tau, &last, ThreadId::new(3, 0, 1));
}

/// The profile the C header writes at its end (TAU's format, read back by perfscape's TAU
/// reader) equals the final sample the server integrated from the same program's stream:
/// every flat timer and user event, exactly.
fn assert_file_equals_stream(tau_dir: &Path, streamed: &perfscape_model::Profile, thread: ThreadId) {
    let file = perfscape_formats::open(tau_dir, &perfscape_formats::OpenOptions::default())
        .unwrap()
        .profile;
    let (ft, st) = (
        file.thread_index(thread).unwrap(),
        streamed.thread_index(thread).unwrap(),
    );
    let mut timers = 0;
    for e in file.event_ids() {
        let name = file.event_name(e);
        let se = streamed
            .event_by_name(&name)
            .unwrap_or_else(|| panic!("`{name}` not streamed"));
        for k in [
            ValueKind::Calls,
            ValueKind::Subcalls,
            ValueKind::Exclusive,
            ValueKind::Inclusive,
        ] {
            assert_eq!(
                file.value(e, ft, k, T),
                streamed.value(se, st, k, T),
                "{name} {k:?}"
            );
        }
        timers += 1;
    }
    let flat = streamed.events().iter().filter(|e| !e.is_callpath()).count();
    assert_eq!(timers, flat, "every flat timer of the stream is in the file");
    let mut users = 0;
    for a in file.atomic_events().iter().map(|a| a.name.clone()) {
        let fa = file.atomic(file.atomic_event_by_name(&a).unwrap());
        let sa = streamed.atomic(
            streamed
                .atomic_event_by_name(&a)
                .unwrap_or_else(|| panic!("`{a}`")),
        );
        assert_eq!(fa.count(), sa.count(), "{a}");
        assert_eq!(fa.max(), sa.max(), "{a}");
        assert_eq!(fa.min(), sa.min(), "{a}");
        assert_eq!(fa.mean(), sa.mean(), "{a}");
        assert_eq!(fa.sum_squares(), sa.sum_squares(), "{a}");
        users += 1;
    }
    assert_eq!(users, streamed.atomic_events().len());
}
