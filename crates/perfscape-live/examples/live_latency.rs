//! Latency of the live path (not a pass/fail check): from the moment the last rank's block of
//! a sample is written to the moment the watcher announces the integrated sample.
//!
//! `cargo run --release -p perfscape-live --example live_latency -- [RANKS...]` (default 64
//! and 1024). The run is synthetic but made of real blocks: rank `r` writes the snapshot file
//! of rank `r % 8` of `../shared/corpus/tau-real/mpi-stencil-np8-snapshot` with its thread id
//! renamed to `r.0.0` (every `N.0.0.<pid>` and `node="N"` of the file; values, names and
//! timestamps unchanged), so 1,024 ranks are 128 copies of each of the 8 real files (21
//! samples each, 22 KB per file). For every sample k the writer appends block k of every rank
//! (ranks in a random order, as fast as it can: all ranks snapshot at the same moment), notes
//! the time after the last write, and waits for the `Sample` event; then pauses 50 ms. Sample
//! 0 is reported apart (it includes `LiveOptions::thread_grace`, the wait for more threads to
//! appear). Rows: with file-system notifications (inotify) and with polling only (every
//! 100 ms, the fallback). Last, a replay of the whole synthetic run at speed 0 (as fast as
//! possible): time until `Finished`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use perfscape_live::synthetic::{self, RankFile, snapshot_run};
use perfscape_live::{LiveEvent, LiveOptions, LiveRun, ReplayOptions, ReplayPlan, replay_plan, watch};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn corpus_run() -> PathBuf {
    let p = std::env::var_os("PERFSCAPE_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"));
    p.join("tau-real/mpi-stencil-np8-snapshot")
}

fn synthetic(ranks: usize) -> Vec<RankFile> {
    snapshot_run(&corpus_run(), ranks).unwrap()
}

fn append(path: &Path, bytes: &[u8]) {
    synthetic::append(path, bytes).unwrap();
}

fn wait_sample(run: &LiveRun, k: u32) -> Instant {
    loop {
        match run.recv_timeout(Duration::from_secs(120)).unwrap() {
            LiveEvent::Sample(s) if s.id.0 == k => {
                assert!(s.complete, "{s:?}");
                return Instant::now();
            }
            LiveEvent::Sample(s) => panic!("sample {} out of order (waiting for {k})", s.id.0),
            LiveEvent::FileError(e) => panic!("{e}"),
            _ => {}
        }
    }
}

struct Row {
    first: Vec<Duration>,
    rest: Vec<Duration>,
    write: Vec<Duration>,
}

fn measure(files: &[RankFile], opts: &LiveOptions, reps: usize) -> Row {
    let mut row = Row {
        first: Vec::new(),
        rest: Vec::new(),
        write: Vec::new(),
    };
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    for _ in 0..reps {
        let tmp = tempfile::tempdir().unwrap();
        let run = watch(tmp.path(), opts).unwrap();
        let rounds = files[0].blocks.len();
        let mut order: Vec<usize> = (0..files.len()).collect();
        for k in 0..rounds {
            for i in (1..order.len()).rev() {
                seed ^= seed >> 12;
                seed ^= seed << 25;
                seed ^= seed >> 27;
                let j = (seed.wrapping_mul(0x2545_F491_4F6C_DD1D) % (i as u64 + 1)) as usize;
                order.swap(i, j);
            }
            let t0 = Instant::now();
            for &r in &order {
                let f = &files[r];
                append(&tmp.path().join(&f.name), &f.bytes[f.blocks[k].clone()]);
            }
            let written = Instant::now();
            row.write.push(written - t0);
            let got = wait_sample(&run, k as u32);
            if k == 0 {
                row.first.push(got - written);
            } else {
                row.rest.push(got - written);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        loop {
            if let LiveEvent::Finished { .. } = run.recv_timeout(Duration::from_secs(60)).unwrap() {
                break;
            }
        }
    }
    row
}

fn pct(v: &mut [Duration], p: f64) -> Duration {
    v.sort();
    v[((v.len() - 1) as f64 * p).round() as usize]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

fn main() {
    let ranks: Vec<usize> = {
        let a: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
        if a.is_empty() { vec![64, 1024] } else { a }
    };
    let base = LiveOptions {
        max_wait: Some(Duration::from_secs(60)),
        ..LiveOptions::default()
    };
    let polling = LiveOptions {
        use_notify: false,
        poll_interval: Duration::from_millis(100),
        ..base.clone()
    };
    println!(
        "| ranks | watching | samples | p50 | p95 | max | sample 0 (incl. 200 ms thread grace) | writing one sample's blocks (p50) |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for &n in &ranks {
        let files = synthetic(n);
        let reps = if n <= 128 { 5 } else { 3 };
        for (label, opts) in [("inotify", &base), ("polling 100 ms", &polling)] {
            let mut row = measure(&files, opts, reps);
            let first = pct(&mut row.first, 0.5);
            let count = row.rest.len();
            println!(
                "| {n} | {label} | {count} | {} | {} | {} | {} | {} |",
                ms(pct(&mut row.rest, 0.5)),
                ms(pct(&mut row.rest, 0.95)),
                ms(pct(&mut row.rest, 1.0)),
                ms(first),
                ms(pct(&mut row.write, 0.5)),
            );
        }
    }
    println!();
    for &n in &ranks {
        let files = synthetic(n);
        let bytes: usize = files.iter().map(|f| f.bytes.len()).sum();
        let plan = ReplayPlan::from_files(files.into_iter().map(|f| (f.name, f.bytes)).collect()).unwrap();
        let t = Instant::now();
        let run = replay_plan(
            plan,
            &ReplayOptions {
                speed: 0.0,
                live: base.clone(),
                ..ReplayOptions::default()
            },
        )
        .unwrap();
        let mut samples = 0;
        loop {
            match run.recv().unwrap() {
                LiveEvent::Sample(_) => samples += 1,
                LiveEvent::Finished { .. } => break,
                _ => {}
            }
        }
        println!(
            "replay --speed 0 of {n} ranks ({:.1} MB, {samples} samples): {} until Finished",
            bytes as f64 / 1e6,
            ms(t.elapsed())
        );
    }
}
