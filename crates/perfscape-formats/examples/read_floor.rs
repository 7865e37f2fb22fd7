//! The floor under a TAU load: the time to read every file of a run directory, and nothing
//! else (not a pass/fail check).
//!
//! `cargo run --release -p perfscape-formats --example read_floor -- RUN [THREADS] [REPEAT]`
//!
//! Lists RUN's `profile.*` files (and those of its `MULTI__*` metric directories), then reads
//! them whole with THREADS threads (default: the machine's cores), each thread taking every
//! THREADS-th file into one reused buffer, REPEAT times (default 5, after one warm-up pass).
//! Prints one line: files, bytes and the median wall time of a pass in seconds, listing
//! included. `bench/bench.py` prints it beside the load's time: a load cannot take less.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The profile files of `run`: `profile.*` in it and in its `MULTI__*` subdirectories.
fn profile_files(run: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(run).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with("profile.") {
            files.push(entry.path());
        } else if name.starts_with("MULTI__") && entry.file_type().unwrap().is_dir() {
            files.extend(profile_files(&entry.path()));
        }
    }
    files
}

/// One pass: lists the files and reads them with `threads` threads; returns (files, bytes).
fn pass(run: &Path, threads: usize) -> (usize, u64) {
    let files = profile_files(run);
    let bytes: u64 = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let files = &files;
                s.spawn(move || {
                    let mut buf = Vec::new();
                    let mut bytes = 0u64;
                    for f in files.iter().skip(t).step_by(threads) {
                        buf.clear();
                        bytes += std::fs::File::open(f).unwrap().read_to_end(&mut buf).unwrap() as u64;
                    }
                    bytes
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    });
    (files.len(), bytes)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let run = PathBuf::from(args.next().expect("usage: read_floor RUN [THREADS] [REPEAT]"));
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(cores).max(1);
    let repeat: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(5).max(1);
    let (files, bytes) = pass(&run, threads);
    let mut walls: Vec<f64> = (0..repeat)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(pass(&run, threads));
            t.elapsed().as_secs_f64()
        })
        .collect();
    walls.sort_by(f64::total_cmp);
    println!(
        "{files} files, {bytes} bytes, {threads} threads: median {:.4} s (min {:.4}, max {:.4}) over {repeat} passes",
        walls[walls.len() / 2],
        walls[0],
        walls[walls.len() - 1]
    );
}
