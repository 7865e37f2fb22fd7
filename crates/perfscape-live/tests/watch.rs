//! Live mode on real TAU runs written progressively into a watched directory: every sample
//! arrives once, in order, with the values of the finished files (compared cell by cell with
//! the batch load of the original directory, `perfscape_formats::load_series`); a rank that
//! stops writing is reported missing after `max_wait` while the others proceed, and its late
//! parts are added; truncated and rewritten files neither duplicate nor lose samples.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use perfscape_formats::{OpenOptions, open, registry};
use perfscape_live::{FinishReason, LiveEvent, LiveOptions, watch};
use perfscape_model::{SampleId, ThreadId};
use std::path::Path;
use std::time::{Duration, Instant};

/// Options that read a directory's snapshots, as live mode does (snapshot files win over the
/// profiles and dumps beside them).
fn snapshots() -> OpenOptions<'static> {
    OpenOptions {
        format: Some(registry::named_or_err("tau-snapshot").unwrap()),
        ..OpenOptions::default()
    }
}

fn opts() -> LiveOptions {
    LiveOptions {
        // Long enough that no sample goes out incomplete on a loaded machine.
        max_wait: Some(Duration::from_secs(60)),
        poll_interval: Duration::from_millis(200),
        ..LiveOptions::default()
    }
}

/// Writes `pieces` of the run in `src` into a fresh watched directory while collecting the
/// events; checks the invariants every progressive write must keep, and returns the events
/// with the times the pieces were written.
fn watch_progressive(
    src: &Path,
    pieces: impl FnOnce(&[Source]) -> Vec<Piece>,
    options: LiveOptions,
) -> (Vec<Timed>, Vec<Instant>, perfscape_model::SampleSeries) {
    let srcs = sources(src);
    let pieces = pieces(&srcs);
    let dir = tempfile::tempdir().unwrap();
    let run = watch(dir.path(), &options).unwrap();
    assert_eq!(run.finished(), None);
    let target = dir.path().to_path_buf();
    let writer = std::thread::spawn(move || write_pieces(&target, &srcs, &pieces));
    let events = collect_until_finished(&run, Duration::from_secs(60));
    assert_eq!(run.finished(), Some(finish_reason(&events)));
    let written = writer.join().unwrap();
    let series = run.series().snapshot();
    (events, written, series)
}

#[test]
fn every_sample_arrives_once_in_order_with_the_values_of_the_finished_files() {
    let mut rng = Rng(0x5EED_1234_ABCD_0001);
    /// (label, run directory, blocks to cut: (file, block, inside this text)).
    type Case<'a> = (&'a str, std::path::PathBuf, Vec<(usize, usize, &'a str)>);
    let cases: [Case; 3] = [
        (
            "np8",
            run("mpi-stencil-np8-snapshot"),
            // A block cut inside a snapshot name, one inside a tag, one inside a number row,
            // one inside the last (final) block.
            vec![
                (1, 3, "<name>iteration"),
                (2, 5, "<interval_data"),
                (6, 8, "</atomic_data>"),
                (4, 20, "<name>final"),
            ],
        ),
        (
            "heat",
            run("pthread-heat-t4-snapshot"),
            // Inside an escaped callpath arrow `=&gt;` of the event definitions.
            vec![(1, 0, "=&gt;"), (3, 4, "<name>iteration")],
        ),
        (
            "hecatoncheir",
            corpus().join("tau-snapshot/hecatoncheir-driver-snapshot"),
            // Inside a CDATA section of an event name.
            vec![(0, 0, "<![CDATA[hec::init")],
        ),
    ];
    for (label, dir, splits) in cases {
        let batch = open(&dir, &snapshots()).unwrap().series.unwrap();
        let mut pieces = None;
        let (events, written, series) = watch_progressive(
            &dir,
            |srcs| {
                let p = interleaved_blocks(srcs, &mut rng, &splits);
                pieces = Some(p.clone());
                p
            },
            opts(),
        );
        let pieces = pieces.unwrap();
        let srcs = sources(&dir);
        let halves = pieces
            .iter()
            .filter(|p| !srcs[p.file].blocks.contains(&p.range))
            .count();
        assert_eq!(
            halves,
            2 * splits.len(),
            "{label}: every block in `splits` was cut"
        );
        assert!(
            file_errors(&events).is_empty(),
            "{label}: {:?}",
            file_errors(&events)
        );
        assert_eq!(finish_reason(&events), FinishReason::AllThreadsEnded, "{label}");
        let got = samples(&events);
        // Exactly once, in order, complete, with the batch's names and timestamps.
        let ids: Vec<u32> = got.iter().map(|s| s.id.0).collect();
        assert_eq!(ids, (0..batch.len() as u32).collect::<Vec<_>>(), "{label}");
        let got_names: Vec<&str> = got.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(got_names, names(&batch), "{label}");
        for (s, info) in got.iter().zip(batch.samples()) {
            assert_eq!(s.timestamp_us, info.timestamp_us(), "{label} {}", s.name);
            assert_eq!(s.complete, info.is_complete(), "{label} {}", s.name);
            assert_eq!(s.threads_present, info.present_count(), "{label} {}", s.name);
        }
        assert!(
            !events.iter().any(|(_, e)| matches!(e, LiveEvent::Amended(_))),
            "{label}: nothing amended"
        );
        let appeared = events
            .iter()
            .filter(|(_, e)| matches!(e, LiveEvent::ThreadAppeared { .. }))
            .count();
        assert_eq!(appeared, batch.threads().len(), "{label}");
        let ended = events
            .iter()
            .filter(|(_, e)| matches!(e, LiveEvent::ThreadEnded { .. }))
            .count();
        assert_eq!(ended, batch.threads().len(), "{label}");
        // Live, not at the end: samples were announced while the files were still growing.
        let last_write = *written.last().unwrap();
        let early = events
            .iter()
            .filter(|(at, e)| matches!(e, LiveEvent::Sample(_)) && *at < last_write)
            .count();
        if batch.len() > 2 {
            assert!(
                early >= batch.len() / 2,
                "{label}: only {early} of {} samples before the end",
                batch.len()
            );
        }
        let cells = assert_same_series(&series, &batch, label);
        assert!(cells > 1000, "{label}: {cells} cells compared");
    }
}

#[test]
fn files_written_in_4k_pieces_like_taus_stdio_give_the_same_series() {
    for dir in [run("mpi-stencil-np8-snapshot"), run("pthread-heat-t4-snapshot")] {
        let batch = open(&dir, &snapshots()).unwrap().series.unwrap();
        let (events, _, series) = watch_progressive(&dir, in_4k_pieces, opts());
        assert!(file_errors(&events).is_empty(), "{:?}", file_errors(&events));
        let ids: Vec<u32> = samples(&events).iter().map(|s| s.id.0).collect();
        assert_eq!(ids, (0..batch.len() as u32).collect::<Vec<_>>());
        assert_same_series(&series, &batch, &dir.display().to_string());
    }
}

#[test]
fn a_rank_that_stops_writing_is_reported_missing_after_max_wait_and_the_others_proceed() {
    let dir = run("mpi-stencil-np8-snapshot");
    let batch = open(&dir, &snapshots()).unwrap().series.unwrap();
    let srcs = sources(&dir);
    let stalled = 3usize;
    let stop_after = 5usize; // rank 3 writes blocks 0..=4 (iteration 20..100), then stalls
    let max_wait = Duration::from_millis(300);
    let mut rng = Rng(77);
    let all = interleaved_blocks(&srcs, &mut rng, &[]);
    // (piece, its block index)
    let mut first: Vec<(Piece, usize)> = Vec::new();
    let mut rest: Vec<Piece> = Vec::new();
    let mut n = vec![0usize; srcs.len()];
    for p in all {
        let k = n[p.file];
        n[p.file] += 1;
        if p.file == stalled && k >= stop_after {
            rest.push(p);
        } else {
            first.push((p, k));
        }
    }
    let tmp = tempfile::tempdir().unwrap();
    let options = LiveOptions {
        max_wait: Some(max_wait),
        poll_interval: Duration::from_millis(200),
        ..LiveOptions::default()
    };
    let run = watch(tmp.path(), &options).unwrap();
    let target = tmp.path().to_path_buf();
    let srcs2 = sources(&dir);
    let first_pieces: Vec<Piece> = first.iter().map(|(p, _)| p.clone()).collect();
    let writer = std::thread::spawn(move || write_pieces(&target, &srcs2, &first_pieces));
    // The others go on to their final snapshot without rank 3.
    let mut events = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let e = run
            .recv_timeout(deadline - Instant::now())
            .expect("the final sample in time");
        let fin = matches!(&e, LiveEvent::Sample(s) if s.name == "final");
        events.push((Instant::now(), e));
        if fin {
            break;
        }
    }
    let written = writer.join().unwrap();
    let got = samples(&events);
    assert_eq!(
        got.len(),
        batch.len(),
        "every sample went out without waiting for rank 3"
    );
    let rank3 = ThreadId::new(3, 0, 0);
    for (k, s) in got.iter().enumerate() {
        assert_eq!(s.id, SampleId::from(k));
        if k < stop_after {
            assert!(s.complete && s.threads_missing.is_empty(), "{s:?}");
        } else {
            assert!(!s.complete, "{s:?}");
            assert_eq!(s.threads_missing, vec![rank3], "{s:?}");
            assert_eq!((s.threads_present, s.threads_expected), (7, 8));
        }
    }
    // The first incomplete sample waited max_wait for rank 3 (counted from its first part).
    let first_part_of_5 = first
        .iter()
        .zip(&written)
        .find(|((_, k), _)| *k == stop_after)
        .map(|(_, at)| *at)
        .unwrap();
    let announced_5 = events
        .iter()
        .find(|(_, e)| matches!(e, LiveEvent::Sample(s) if s.id == SampleId::from(stop_after)))
        .unwrap()
        .0;
    let waited = announced_5.duration_since(first_part_of_5);
    assert!(
        waited >= max_wait && waited < max_wait + Duration::from_secs(5),
        "sample {stop_after} was announced {waited:?} after its first part"
    );
    // Rank 3 catches up: its parts are added to the samples it missed, in order.
    let target = tmp.path();
    for p in &rest {
        append(
            &target.join(&srcs[p.file].name),
            &srcs[p.file].bytes[p.range.clone()],
        );
    }
    let tail = collect_until_finished(&run, Duration::from_secs(30));
    assert_eq!(finish_reason(&tail), FinishReason::AllThreadsEnded);
    let amended: Vec<(u32, ThreadId, bool)> = tail
        .iter()
        .filter_map(|(_, e)| match e {
            LiveEvent::Amended(a) => Some((a.id.0, a.thread, a.complete)),
            _ => None,
        })
        .collect();
    let expected: Vec<(u32, ThreadId, bool)> = (stop_after as u32..batch.len() as u32)
        .map(|s| (s, rank3, true))
        .collect();
    assert_eq!(amended, expected);
    assert!(samples(&tail).is_empty(), "no sample twice");
    assert_same_series(&run.series().snapshot(), &batch, "late rank 3");
}

#[test]
fn truncated_and_rewritten_files_neither_duplicate_nor_lose_samples() {
    let dir = run("mpi-stencil-np8-snapshot");
    let batch = open(&dir, &snapshots()).unwrap().series.unwrap();
    let srcs = sources(&dir);
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let run = watch(t, &opts()).unwrap();
    let path = |f: usize| t.join(&srcs[f].name);
    let block = |f: usize, k: usize| &srcs[f].bytes[srcs[f].blocks[k].clone()];
    let upto = |f: usize, k: usize| &srcs[f].bytes[..srcs[f].blocks[k].start];
    let pause = || std::thread::sleep(Duration::from_millis(60));
    // Blocks 0..10 of everyone, rank 5 also half of block 10.
    for k in 0..10 {
        for f in 0..srcs.len() {
            append(&path(f), block(f, k));
        }
        pause();
    }
    let b10 = srcs[5].blocks[10].clone();
    append(&path(5), &srcs[5].bytes[b10.start..b10.start + b10.len() / 2]);
    pause();
    // (a) rank 2's file truncated to nothing and written again from the start, block by block.
    std::fs::write(path(2), b"").unwrap();
    pause();
    for k in 0..10 {
        append(&path(2), block(2, k));
    }
    pause();
    // (b) rank 5 rolls back its half block: truncated to the end of block 9 (shorter than
    // what was read), then continues normally.
    std::fs::write(path(5), upto(5, 10)).unwrap();
    pause();
    // (c) rank 1's file replaced by a copy (new inode) holding blocks 0..12.
    let copy = t.join("copy.tmp");
    std::fs::write(&copy, upto(1, 12)).unwrap();
    std::fs::rename(&copy, path(1)).unwrap();
    pause();
    // Everyone goes on (rank 1 from block 12).
    for k in 10..srcs[0].blocks.len() {
        for f in 0..srcs.len() {
            if f == 1 && k < 12 {
                continue;
            }
            append(&path(f), block(f, k));
        }
        pause();
    }
    let events = collect_until_finished(&run, Duration::from_secs(60));
    assert!(file_errors(&events).is_empty(), "{:?}", file_errors(&events));
    let notices: Vec<&String> = events
        .iter()
        .filter_map(|(_, e)| match e {
            LiveEvent::Notice { message } if message.contains("reading it again") => Some(message),
            _ => None,
        })
        .collect();
    assert!(notices.len() >= 3, "{notices:#?}");
    assert!(
        notices
            .iter()
            .any(|n| n.contains("snapshot.2.0.0") && n.contains("truncated"))
    );
    assert!(
        notices
            .iter()
            .any(|n| n.contains("snapshot.5.0.0") && n.contains("unfinished block"))
    );
    assert!(
        notices
            .iter()
            .any(|n| n.contains("snapshot.1.0.0") && n.contains("replaced"))
    );
    let got = samples(&events);
    let ids: Vec<u32> = got.iter().map(|s| s.id.0).collect();
    assert_eq!(
        ids,
        (0..batch.len() as u32).collect::<Vec<_>>(),
        "each sample once"
    );
    assert!(got.iter().all(|s| s.complete));
    assert!(!events.iter().any(|(_, e)| matches!(e, LiveEvent::Amended(_))));
    assert_same_series(&run.series().snapshot(), &batch, "rewrites");
}

#[test]
fn a_file_rewritten_with_other_content_is_reported() {
    let dir = run("mpi-stencil-np8-snapshot");
    let srcs = sources(&dir);
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let run = watch(t, &opts()).unwrap();
    for s in &srcs {
        append(&t.join(&s.name), &s.bytes[..s.blocks[3].end]);
    }
    std::thread::sleep(Duration::from_millis(400));
    // A new run of the program in the same directory: other process id, other times.
    let text = String::from_utf8(srcs[0].bytes[..srcs[0].blocks[1].end].to_vec()).unwrap();
    let pid = text
        .split("<thread id=\"0.0.0.")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .to_string();
    let other = text
        .replace(&format!("0.0.0.{pid}"), "0.0.0.99999")
        .replace("<timestamp>1", "<timestamp>2");
    std::fs::write(t.join("snapshot.0.0.0"), other).unwrap();
    let mut errors = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while errors.is_empty() && Instant::now() < deadline {
        if let Ok(LiveEvent::FileError(e)) = run.recv_timeout(Duration::from_millis(200)) {
            errors.push(e);
        }
    }
    let e = errors.first().expect("the rewrite is reported");
    assert!(e.path.ends_with("snapshot.0.0.0"), "{e}");
    assert!(e.message.contains("rewritten with different content"), "{e}");
    assert!(e.message.contains("snapshot 1 is `iteration 20`"), "{e}");
}

#[test]
fn polling_alone_gives_the_same_result_when_notifications_are_off() {
    let dir = run("mpi-stencil-np8-snapshot");
    let batch = open(&dir, &snapshots()).unwrap().series.unwrap();
    let mut rng = Rng(99);
    let options = LiveOptions {
        use_notify: false,
        poll_interval: Duration::from_millis(40),
        ..opts()
    };
    let (events, _, series) = watch_progressive(
        &dir,
        |srcs| interleaved_blocks(srcs, &mut rng, &[(0, 2, "<name>iteration")]),
        options,
    );
    assert!(file_errors(&events).is_empty(), "{:?}", file_errors(&events));
    assert_eq!(finish_reason(&events), FinishReason::AllThreadsEnded);
    let ids: Vec<u32> = samples(&events).iter().map(|s| s.id.0).collect();
    assert_eq!(ids, (0..batch.len() as u32).collect::<Vec<_>>());
    assert!(samples(&events).iter().all(|s| s.complete));
    assert_same_series(&series, &batch, "polling");
}

#[cfg(unix)]
#[test]
fn an_unreadable_file_is_reported_once_and_read_when_it_can_be() {
    let dir = run("mpi-stencil-np8-snapshot");
    let batch = open(&dir, &snapshots()).unwrap().series.unwrap();
    let srcs = sources(&dir);
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    // Rank 4's "file" cannot be read (a link to a directory: opening works, reading fails
    // with EISDIR, also for root); the others write everything.
    let elsewhere = tempfile::tempdir().unwrap();
    let locked = t.join(&srcs[4].name);
    std::os::unix::fs::symlink(elsewhere.path(), &locked).unwrap();
    let options = LiveOptions {
        poll_interval: Duration::from_millis(20),
        ..opts()
    };
    let run = watch(t, &options).unwrap();
    for (i, s) in srcs.iter().enumerate() {
        if i != 4 {
            append(&t.join(&s.name), &s.bytes);
        }
    }
    std::thread::sleep(Duration::from_millis(500)); // about 25 rescans
    assert!(run.series().is_empty(), "the samples wait for rank 4");
    // Now the real file replaces it.
    let copy = t.join("copy.tmp");
    std::fs::write(&copy, &srcs[4].bytes).unwrap();
    std::fs::rename(&copy, &locked).unwrap();
    let events = collect_until_finished(&run, Duration::from_secs(30));
    let errors = file_errors(&events);
    assert_eq!(errors.len(), 1, "reported once: {errors:?}");
    assert!(errors[0].contains("snapshot.4.0.0: cannot read"), "{errors:?}");
    assert_eq!(finish_reason(&events), FinishReason::AllThreadsEnded);
    assert_same_series(&run.series().snapshot(), &batch, "unreadable for a while");
}
