//! `perfscape watch` and `perfscape replay` as a user runs them: JSON lines for a run
//! written progressively into the watched directory (checked against the batch load of the
//! finished files and against deltas computed here from its cumulative values), exit after
//! the final sample, Ctrl-C, and a replay printing exactly what a watch prints.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{corpus, perfscape};
use perfscape_formats::{OpenOptions, open};
use perfscape_model::{EventId, MetricId, SampleId, SampleMode, ValueKind};
use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

fn run(name: &str) -> PathBuf {
    corpus().join("tau-real").join(name)
}

/// The snapshot files of a run: (file name, bytes, block ranges).
fn blocks(dir: &Path) -> Vec<(String, Vec<u8>, Vec<std::ops::Range<usize>>)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_str().unwrap().to_string();
        if !name.starts_with("snapshot.") {
            continue;
        }
        let bytes = std::fs::read(&p).unwrap();
        let text = String::from_utf8(bytes.clone()).unwrap();
        let mut ranges = Vec::new();
        let mut start = 0;
        for (i, m) in text.match_indices("</profile_xml>\n") {
            ranges.push(start..i + m.len());
            start = i + m.len();
        }
        out.push((name, bytes, ranges));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn append(path: &Path, bytes: &[u8]) {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    f.write_all(bytes).unwrap();
}

/// Starts `perfscape ARGS` with stdout read line by line (with the time each arrived), and a
/// temporary profile cache directory (kept while the returned directory lives).
fn spawn(args: &[&str]) -> (Child, mpsc::Receiver<(Instant, String)>, tempfile::TempDir) {
    let cache = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_perfscape"))
        .env("PERFSCAPE_CACHE_DIR", cache.path())
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send((Instant::now(), line)).is_err() {
                break;
            }
        }
    });
    (child, rx, cache)
}

fn wait(child: &mut Child, timeout: Duration) -> std::process::ExitStatus {
    let end = Instant::now() + timeout;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > end {
            child.kill().unwrap();
            panic!("perfscape did not exit within {timeout:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn watch_prints_one_json_line_per_sample_as_the_run_grows_and_exits_after_final() {
    let src = run("mpi-stencil-np8-snapshot");
    let batch = open(&src, &OpenOptions::default()).unwrap().series.unwrap();
    let files = blocks(&src);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_str().unwrap().to_string();
    let (mut child, lines, _cache) = spawn(&["watch", &dir, "--format", "json"]);
    // The program writes: block k of every rank, ranks interleaved, with pauses; rank 6's
    // block 4 is cut in the middle of its snapshot name and finished after the others.
    let mut last_write = Instant::now();
    for k in 0..files[0].2.len() {
        let mut deferred = None;
        for (i, (name, bytes, ranges)) in files.iter().enumerate().rev() {
            let r = ranges[k].clone();
            let path = tmp.path().join(name);
            if i == 6 && k == 4 {
                let cut = r.start
                    + String::from_utf8_lossy(&bytes[r.clone()])
                        .find("<name>iter")
                        .unwrap()
                    + 8;
                append(&path, &bytes[r.start..cut]);
                deferred = Some((path, cut..r.end));
            } else {
                append(&path, &bytes[r]);
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        std::thread::sleep(Duration::from_millis(15));
        if let Some((path, r)) = deferred {
            append(&path, &files[6].1[r]);
        }
        std::thread::sleep(Duration::from_millis(15));
        last_write = Instant::now();
    }
    let status = wait(&mut child, Duration::from_secs(30));
    assert!(status.success(), "{status:?}");
    let exited = Instant::now();
    let got: Vec<(Instant, Value)> = lines
        .iter()
        .map(|(at, l)| {
            (
                at,
                serde_json::from_str(&l).unwrap_or_else(|e| panic!("{e}: {l}")),
            )
        })
        .collect();
    assert_eq!(got.len(), batch.len(), "one line per sample");
    assert!(
        exited.duration_since(last_write) < Duration::from_secs(5),
        "exits soon after the final sample"
    );
    let early = got.iter().filter(|(at, _)| *at < last_write).count();
    assert!(
        early >= batch.len() / 2,
        "lines come while the run grows ({early} early)"
    );
    let metric = MetricId(0);
    for (k, ((_, v), info)) in got.iter().zip(batch.samples()).enumerate() {
        assert_eq!(v["seq"], k, "{v}");
        assert_eq!(v["name"], info.name(), "{v}");
        assert_eq!(v["timestamp_us"], info.timestamp_us(), "{v}");
        assert_eq!(v["threads"], 8, "{v}");
        assert_eq!(v["expected"], 8, "{v}");
        assert_eq!(v["complete"], true, "{v}");
        assert_eq!(v["missing"], Value::Array(vec![]), "{v}");
        assert_eq!(v["metric"], "TIME", "{v}");
        // The top event: the largest growth of exclusive TIME summed over the ranks,
        // computed here from the cumulative values of the finished files.
        let s = SampleId::from(k);
        let growth = |e: EventId| -> f64 {
            (0..batch.threads().len())
                .map(perfscape_model::ThreadIndex::from)
                .map(|t| {
                    let now = batch
                        .timer_value(e, t, s, ValueKind::Exclusive, metric, SampleMode::Cumulative)
                        .unwrap();
                    let before = if k == 0 {
                        0.0
                    } else {
                        batch
                            .timer_value(
                                e,
                                t,
                                SampleId::from(k - 1),
                                ValueKind::Exclusive,
                                metric,
                                SampleMode::Cumulative,
                            )
                            .unwrap()
                    };
                    now - before
                })
                .sum()
        };
        let (best, best_growth) = (0..batch.timer_count())
            .map(EventId::from)
            .map(|e| (e, growth(e)))
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .unwrap();
        let top = v["top"].as_array().unwrap();
        assert_eq!(top.len(), 3, "{v}");
        assert_eq!(top[0]["event"], batch.timer_name(best), "{v}");
        let delta = top[0]["delta"].as_f64().unwrap();
        assert!(
            (delta - best_growth).abs() <= 1e-9 * best_growth.abs(),
            "{v}: {best_growth}"
        );
        assert!(top[1]["delta"].as_f64().unwrap() <= delta);
    }
}

#[cfg(unix)]
#[test]
fn ctrl_c_stops_watch_with_exit_status_0() {
    let src = run("mpi-stencil-np8-snapshot");
    let files = blocks(&src);
    let tmp = tempfile::tempdir().unwrap();
    for (name, bytes, ranges) in &files {
        append(&tmp.path().join(name), &bytes[..ranges[5].end]);
    }
    // Rank 2 is in the middle of its next block (still in its stdio buffer, say).
    let (name, bytes, ranges) = &files[2];
    append(
        &tmp.path().join(name),
        &bytes[ranges[6].start..ranges[6].start + 300],
    );
    let (mut child, lines, _cache) = spawn(&["watch", tmp.path().to_str().unwrap()]);
    // Header + 6 samples, then the program "hangs".
    let mut got = Vec::new();
    while got.len() < 7 {
        got.push(lines.recv_timeout(Duration::from_secs(20)).unwrap().1);
    }
    assert!(got[0].starts_with("  seq  time (UTC)"), "{got:?}");
    assert!(
        got[6].contains("iteration 120") && got[6].contains("8/8"),
        "{got:?}"
    );
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let status = wait(&mut child, Duration::from_secs(10));
    assert_eq!(status.code(), Some(0), "{status:?}");
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert!(err.contains("stopped"), "{err}");
    assert!(
        !err.contains("incomplete"),
        "an unfinished block is not an error when stopped: {err}"
    );
}

#[test]
fn replay_prints_what_watch_prints() {
    for name in ["mpi-stencil-np8-snapshot", "pthread-heat-t4-snapshot"] {
        let dir = run(name);
        let d = dir.to_str().unwrap();
        for format in ["json", "table"] {
            let watched = perfscape(&["watch", d, "--format", format]);
            assert!(
                watched.status.success(),
                "{}",
                String::from_utf8_lossy(&watched.stderr)
            );
            let text = String::from_utf8(watched.stdout.clone()).unwrap();
            assert!(text.lines().count() >= 18, "{text}");
            for speed in ["0", "8"] {
                let replayed = perfscape(&["replay", d, "--speed", speed, "--format", format]);
                assert!(
                    replayed.status.success(),
                    "{}",
                    String::from_utf8_lossy(&replayed.stderr)
                );
                assert_eq!(
                    String::from_utf8(replayed.stdout).unwrap(),
                    text,
                    "{name} --format {format} --speed {speed}"
                );
            }
        }
    }
}

#[test]
fn watch_refuses_what_it_cannot_watch() {
    let o = perfscape(&["watch", "/nonexistent/run"]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(err.contains("not a directory"), "{err}");
    let o = perfscape(&[
        "replay",
        run("mpi-stencil-np4-profile").to_str().unwrap(),
        "--speed",
        "0",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(err.contains("no TAU snapshot files"), "{err}");
    let o = perfscape(&[
        "replay",
        run("mpi-stencil-np8-snapshot").to_str().unwrap(),
        "--speed=-2",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(err.contains("replay speed -2 is not a number >= 0"), "{err}");
}
