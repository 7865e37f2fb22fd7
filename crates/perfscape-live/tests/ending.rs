//! Threads that will never write their `final` snapshot (issue "hardening", point 5): a
//! rank whose snapshot file is removed while the run is watched is ended at once, reported
//! with the file's name, and the other ranks' samples go out without it; a rank that stays
//! silent is given up `max_wait` after the run's final sample went out. In both cases the run
//! finishes by itself instead of waiting for a sample that can never complete. Real snapshot
//! files of the np8 run, written progressively.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use perfscape_formats::{OpenOptions, open, registry};
use perfscape_live::{FinishReason, LiveEvent, LiveOptions, watch};
use perfscape_model::{SampleId, ThreadId};
use std::time::{Duration, Instant};

fn batch_len() -> usize {
    let options = OpenOptions {
        format: Some(registry::named_or_err("tau-snapshot").unwrap()),
        ..OpenOptions::default()
    };
    open(&run("mpi-stencil-np8-snapshot"), &options)
        .unwrap()
        .series
        .unwrap()
        .len()
}

/// Rank 2 writes its first `kept` snapshots, then its file is removed; the others write
/// everything. `max_wait` is longer than the test may take, so nothing here waits for it.
fn removed_file(use_notify: bool) {
    let dir = run("mpi-stencil-np8-snapshot");
    let srcs = sources(&dir);
    let removed = srcs
        .iter()
        .position(|s| s.thread == ThreadId::new(2, 0, 0))
        .unwrap();
    let kept = 5usize;
    let tmp = tempfile::tempdir().unwrap();
    let options = LiveOptions {
        max_wait: Some(Duration::from_secs(120)),
        poll_interval: Duration::from_millis(100),
        use_notify,
        ..LiveOptions::default()
    };
    let run = watch(tmp.path(), &options).unwrap();
    let write_round = |k: usize| {
        for s in &srcs {
            if let Some(r) = s.blocks.get(k) {
                append(&tmp.path().join(&s.name), &s.bytes[r.clone()]);
            }
        }
    };
    for k in 0..kept {
        write_round(k);
    }
    // Rank 2's snapshots were read (the first `kept` samples are complete) before it goes.
    let mut events = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while samples(&events).len() < kept {
        let e = run
            .recv_timeout(deadline - Instant::now())
            .expect("the first samples");
        events.push((Instant::now(), e));
    }
    std::fs::remove_file(tmp.path().join(&srcs[removed].name)).unwrap();
    let rounds = srcs.iter().map(|s| s.blocks.len()).max().unwrap();
    for k in kept..rounds {
        for (i, s) in srcs.iter().enumerate() {
            if let (true, Some(r)) = (i != removed, s.blocks.get(k)) {
                append(&tmp.path().join(&s.name), &s.bytes[r.clone()]);
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    // Far less than max_wait: the removal, not the timeout, ends the wait for rank 2.
    events.extend(collect_until_finished(&run, Duration::from_secs(60)));
    assert_eq!(finish_reason(&events), FinishReason::AllThreadsEnded);
    let rank2 = ThreadId::new(2, 0, 0);
    let errors = file_errors(&events);
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert!(
        errors[0].contains("snapshot.2.0.0") && errors[0].contains("removed while the run was watched"),
        "{}",
        errors[0]
    );
    assert!(
        errors[0].contains(&format!("the {kept} snapshot(s) read from it are kept")),
        "{}",
        errors[0]
    );
    assert!(
        events
            .iter()
            .any(|(_, e)| matches!(e, LiveEvent::ThreadEnded { thread } if *thread == rank2))
    );
    let got = samples(&events);
    assert_eq!(got.len(), batch_len(), "every sample of the others went out");
    for (k, s) in got.iter().enumerate() {
        assert_eq!(s.id, SampleId::from(k));
        if k < kept {
            assert!(s.complete, "{s:?}");
        } else {
            assert_eq!(s.threads_missing, vec![rank2], "{s:?}");
            assert_eq!((s.threads_present, s.threads_expected), (7, 8), "{s:?}");
        }
    }
    // The series keeps what rank 2 wrote: its values in the first samples.
    let series = run.series().snapshot();
    let t2 = series.threads().iter().position(|t| *t == rank2).unwrap();
    for k in 0..got.len() {
        let present = series.sample(SampleId::from(k)).unwrap().missing_threads();
        assert_eq!(
            present.iter().any(|t| t.index() == t2),
            k >= kept,
            "sample {k}: rank 2 present exactly in the samples it wrote"
        );
    }
}

#[test]
fn a_removed_snapshot_file_ends_its_thread_and_the_run_finishes() {
    removed_file(true);
}

#[test]
fn a_removed_snapshot_file_is_noticed_by_polling_alone() {
    removed_file(false);
}

#[test]
fn a_rank_without_a_final_snapshot_is_given_up_max_wait_after_the_final_sample() {
    // Rank 5's file exists but stays empty (the program's buffer never flushed, or it hangs).
    let dir = run("mpi-stencil-np8-snapshot");
    let srcs = sources(&dir);
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("snapshot.5.0.0"), b"").unwrap();
    let max_wait = Duration::from_millis(300);
    let options = LiveOptions {
        max_wait: Some(max_wait),
        ..LiveOptions::default()
    };
    let run = watch(tmp.path(), &options).unwrap();
    for s in srcs.iter().filter(|s| s.thread.node != 5) {
        append(&tmp.path().join(&s.name), &s.bytes);
    }
    let events = collect_until_finished(&run, Duration::from_secs(60));
    assert_eq!(finish_reason(&events), FinishReason::AllThreadsEnded);
    let rank5 = ThreadId::new(5, 0, 0);
    let got = samples(&events);
    assert_eq!(got.len(), batch_len());
    assert!(
        got.iter()
            .all(|s| s.threads_missing == vec![rank5] && !s.complete)
    );
    let final_at = events
        .iter()
        .find(|(_, e)| matches!(e, LiveEvent::Sample(s) if s.name == "final"))
        .unwrap()
        .0;
    let (error_at, error) = events
        .iter()
        .find_map(|(at, e)| match e {
            LiveEvent::FileError(f) => Some((*at, f.to_string())),
            _ => None,
        })
        .expect("rank 5 is reported");
    assert!(
        error.contains("snapshot.5.0.0")
            && error.contains("wrote no `final` snapshot")
            && error.contains("--max-wait"),
        "{error}"
    );
    assert_eq!(file_errors(&events).len(), 1);
    // Times are taken where the test receives the events (a little after the watcher
    // decided), hence the small allowance below max_wait.
    let waited = error_at.duration_since(final_at);
    assert!(
        waited + Duration::from_millis(50) >= max_wait && waited < max_wait + Duration::from_secs(10),
        "rank 5 was given up {waited:?} after the final sample"
    );
    assert!(
        events
            .iter()
            .any(|(_, e)| matches!(e, LiveEvent::ThreadEnded { thread } if *thread == rank5))
    );
}

#[test]
fn without_max_wait_a_silent_rank_is_waited_for_until_stopped() {
    let dir = run("mpi-stencil-np8-snapshot");
    let srcs = sources(&dir);
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("snapshot.5.0.0"), b"").unwrap();
    let options = LiveOptions {
        max_wait: None,
        ..LiveOptions::default()
    };
    let run = watch(tmp.path(), &options).unwrap();
    // Rank 5 never wrote a sample: with no max_wait the samples wait for it, so the others'
    // parts stay pending and nothing goes out until the caller stops the run.
    for s in srcs.iter().filter(|s| s.thread.node != 5) {
        append(&tmp.path().join(&s.name), &s.bytes);
    }
    std::thread::sleep(Duration::from_millis(1500));
    run.stop();
    let events = collect_until_finished(&run, Duration::from_secs(30));
    assert_eq!(finish_reason(&events), FinishReason::Stopped);
    assert!(file_errors(&events).is_empty(), "{:?}", file_errors(&events));
}
