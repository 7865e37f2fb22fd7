//! Replay: a finished run written again into a watched directory gives the consumer the
//! same events and the same series as watching the finished directory, at any speed; the
//! pace follows the run's own timestamps.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use perfscape_formats::{OpenOptions, open, registry};
use perfscape_live::{
    FinishReason, LiveEvent, LiveOptions, LiveRun, ReplayOptions, ReplayPlan, ReplayStart, replay,
    replay_plan, replay_plan_with, top_changes, watch,
};
use perfscape_model::{MetricId, SampleId, SampleSeries};
use std::time::{Duration, Instant};

/// Options that read a directory's snapshots, as live mode does (snapshot files win over the
/// profiles and dumps beside them).
fn snapshots() -> OpenOptions<'static> {
    OpenOptions {
        format: Some(registry::named_or_err("tau-snapshot").unwrap()),
        ..OpenOptions::default()
    }
}

fn live_opts() -> LiveOptions {
    LiveOptions {
        max_wait: Some(Duration::from_secs(60)),
        quiet: Duration::from_millis(400),
        ..LiveOptions::default()
    }
}

/// What a consumer sees: the sample events, and per sample the top changes.
fn seen(
    run: &LiveRun,
) -> (
    Vec<LiveEvent>,
    FinishReason,
    SampleSeries,
    Vec<Vec<perfscape_live::TopChange>>,
) {
    let events = collect_until_finished(run, Duration::from_secs(60));
    let reason = finish_reason(&events);
    assert!(file_errors(&events).is_empty(), "{:?}", file_errors(&events));
    let series = run.series().snapshot();
    let tops = (0..series.len())
        .map(|s| top_changes(&series, SampleId::from(s), MetricId(0), 3))
        .collect();
    let kept = events
        .into_iter()
        .map(|(_, e)| e)
        .filter(|e| matches!(e, LiveEvent::Sample(_) | LiveEvent::Amended(_)))
        .collect();
    (kept, reason, series, tops)
}

#[test]
fn a_replay_is_a_live_run_of_the_same_samples() {
    for name in [
        "mpi-stencil-np8-snapshot",
        "pthread-heat-t4-snapshot",
        "mpi-stencil-np4-profile-plus-snapshots",
        "mpi-stencil-np4-dumpincr",
    ] {
        let dir = run(name);
        let batch = open(&dir, &snapshots()).unwrap().series.unwrap();
        let watched = watch(&dir, &live_opts()).unwrap();
        let (w_events, w_reason, w_series, w_tops) = seen(&watched);
        assert_eq!(w_reason, FinishReason::AllThreadsEnded, "{name}");
        assert_same_series(&w_series, &batch, name);
        assert_eq!(
            w_events.len(),
            batch.len(),
            "{name}: one event per sample, nothing amended"
        );
        assert!(w_tops.iter().skip(1).all(|t| t.len() == 3), "{name}: {w_tops:?}");
        for speed in [0.0, 4.0] {
            let opts = ReplayOptions {
                speed,
                live: live_opts(),
                ..ReplayOptions::default()
            };
            let replayed = replay(&dir, &opts).unwrap();
            let tmp = replayed.dir().to_path_buf();
            assert!(tmp.is_dir());
            let (r_events, r_reason, r_series, r_tops) = seen(&replayed);
            let ctx = format!("{name} at speed {speed}");
            assert_eq!(r_reason, FinishReason::AllThreadsEnded, "{ctx}");
            assert_eq!(r_events, w_events, "{ctx}");
            assert_eq!(r_tops, w_tops, "{ctx}");
            assert_same_series(&r_series, &batch, &ctx);
            drop(replayed);
            assert!(!tmp.exists(), "{ctx}: the temporary directory is removed");
        }
    }
}

#[test]
fn the_pace_follows_the_runs_own_timestamps() {
    let dir = run("mpi-stencil-np8-snapshot");
    let batch = open(&dir, &snapshots()).unwrap().series.unwrap();
    let span_us = batch.samples().last().unwrap().timestamp_us() - batch.samples()[0].timestamp_us();
    let speed = 0.5;
    let expected = Duration::from_secs_f64(span_us as f64 / 1e6 / speed);
    let opts = ReplayOptions {
        speed,
        live: live_opts(),
        ..ReplayOptions::default()
    };
    let replayed = replay(&dir, &opts).unwrap();
    let events = collect_until_finished(&replayed, Duration::from_secs(60));
    let times: Vec<Instant> = events
        .iter()
        .filter(|(_, e)| matches!(e, LiveEvent::Sample(_)))
        .map(|(at, _)| *at)
        .collect();
    assert_eq!(times.len(), batch.len());
    let took = times[times.len() - 1].duration_since(times[0]);
    assert!(
        took >= expected.mul_f64(0.8) && took <= expected + Duration::from_secs(2),
        "first to last sample took {took:?}, the run's timestamps span {expected:?} at speed {speed}"
    );
}

#[test]
fn incremental_dumps_are_replayed_and_integrated_by_position() {
    let dir = run("mpi-stencil-np4-dumpincr");
    let batch = open(
        &dir,
        &OpenOptions {
            format: registry::named("tau-dumps"),
            ..OpenOptions::default()
        },
    )
    .unwrap()
    .series
    .unwrap();
    let files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_str().unwrap();
            n.starts_with("dump__") || n.starts_with("profile.")
        })
        .map(|p| {
            (
                p.file_name().unwrap().to_str().unwrap().to_string(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    assert_eq!(files.len(), 16 + 4);
    let plan = ReplayPlan::from_files(files).unwrap();
    assert_eq!(plan.threads(), 4);
    assert_eq!(plan.writes(), 20);
    // The dump names span 5 s (each rank's own 1-second clock).
    assert_eq!(plan.duration_us(), 5_000_000);
    let opts = ReplayOptions {
        speed: 0.0,
        live: live_opts(),
        ..ReplayOptions::default()
    };
    let replayed = replay_plan(plan, &opts).unwrap();
    let events = collect_until_finished(&replayed, Duration::from_secs(60));
    assert_eq!(finish_reason(&events), FinishReason::AllThreadsEnded);
    // Only the "read as UTC" note is allowed: these dumps have a `Local Time` offset.
    assert!(file_errors(&events).is_empty(), "{:?}", file_errors(&events));
    let names: Vec<&str> = samples(&events).iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["dump 1", "dump 2", "dump 3", "dump 4"]);
    assert_same_series(&replayed.series().snapshot(), &batch, "dumps");
}

#[test]
fn a_replay_can_be_stopped_and_bad_options_are_refused() {
    let dir = run("mpi-stencil-np8-snapshot");
    let opts = ReplayOptions {
        speed: 0.01, // 44 s
        live: live_opts(),
        ..ReplayOptions::default()
    };
    let replayed = replay(&dir, &opts).unwrap();
    let first = loop {
        if let LiveEvent::Sample(s) = replayed.recv_timeout(Duration::from_secs(20)).unwrap() {
            break s;
        }
    };
    assert_eq!(first.name, "iteration 20");
    replayed.stop();
    let rest = collect_until_finished(&replayed, Duration::from_secs(10));
    assert_eq!(finish_reason(&rest), FinishReason::Stopped);
    assert!(replayed.series().len() < 21);

    for speed in [-1.0, f64::NAN, f64::INFINITY] {
        let bad = ReplayOptions {
            speed,
            ..ReplayOptions::default()
        };
        let e = replay(&dir, &bad).unwrap_err();
        assert!(e.to_string().contains("replay speed"), "{e}");
    }
    let e = replay(&corpus().join("cube"), &ReplayOptions::default()).unwrap_err();
    assert!(e.to_string().contains("no TAU snapshot files"), "{e}");
    // A target directory that already holds a run is refused.
    let into = ReplayOptions {
        into: Some(run("mpi-stencil-np4-profile")),
        ..ReplayOptions::default()
    };
    let e = replay(&dir, &into).unwrap_err();
    assert!(e.to_string().contains("already holds TAU files"), "{e}");
}

#[test]
fn a_held_replay_waits_after_its_first_sample_and_a_new_one_reuses_the_series() {
    let dir = run("mpi-stencil-np8-snapshot");
    // As fast as possible: without the hold every sample would arrive at once.
    let opts = ReplayOptions {
        speed: 0.0,
        live: live_opts(),
        ..ReplayOptions::default()
    };
    let begin = ReplayStart {
        series: None,
        hold_after_first_sample: true,
    };
    let held = replay_plan_with(ReplayPlan::from_dir(&dir).unwrap(), &opts, begin).unwrap();
    let first = loop {
        if let LiveEvent::Sample(s) = held.recv_timeout(Duration::from_secs(20)).unwrap() {
            break s;
        }
    };
    assert_eq!(first.id, SampleId(0));
    // Held: nothing more arrives until it is resumed.
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(held.series().len(), 1, "held after the first sample");
    held.resume_replay();
    let rest = collect_until_finished(&held, Duration::from_secs(60));
    assert_eq!(finish_reason(&rest), FinishReason::AllThreadsEnded);
    assert_eq!(held.series().len(), 21);
    // Again from the start, into the same series (emptied first): its readers see it regrow.
    let series = held.series().clone();
    held.stop_and_wait();
    let again = ReplayStart {
        series: Some(series.clone()),
        hold_after_first_sample: true,
    };
    let second = replay_plan_with(ReplayPlan::from_dir(&dir).unwrap(), &opts, again).unwrap();
    let first = loop {
        if let LiveEvent::Sample(s) = second.recv_timeout(Duration::from_secs(20)).unwrap() {
            break s;
        }
    };
    assert_eq!(first.id, SampleId(0), "numbered from the start again");
    assert_eq!(
        series.len(),
        1,
        "the readers' series holds the new first sample only"
    );
    second.resume_replay();
    let rest = collect_until_finished(&second, Duration::from_secs(60));
    assert_eq!(finish_reason(&rest), FinishReason::AllThreadsEnded);
    assert_eq!(series.len(), 21);
}
