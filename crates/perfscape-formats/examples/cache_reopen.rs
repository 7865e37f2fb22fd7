//! Measures the profile cache on one input (not a pass/fail check).
//!
//! `cargo run --release -p perfscape-formats --example cache_reopen -- RUN [REPEAT]`
//!
//! Times `load` without the cache, `Profile::encode`, `load` that writes the cache (`Refresh`), and the median
//! of REPEAT (default 5) re-opens from the cache, split into reading + decoding the cache file
//! (`parse_cache_file`) and the rest (listing and checking the source files). Prints one
//! line; `bench/bench.py` records it in BENCHMARKS.md. The cache entry is written in the cache
//! directory `load` uses (`$PERFSCAPE_CACHE_DIR`, else the user's cache directory).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use perfscape_formats::cache::{cache_dir, entry_path, parse_cache_file};
use perfscape_formats::{CacheMode, OpenOptions, Parts, open};
use std::path::PathBuf;
use std::time::Instant;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let run = PathBuf::from(args.next().expect("usage: cache_reopen RUN [REPEAT]"));
    let repeat: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(5);
    let opts = |cache| OpenOptions {
        cache,
        parts: Parts::PROFILE,
        ..OpenOptions::default()
    };
    let t = Instant::now();
    let fresh = open(&run, &opts(CacheMode::Off)).unwrap();
    let t_files = t.elapsed().as_secs_f64();
    let cells = fresh.profile.interval_cell_count();
    let t = Instant::now();
    let encoded = fresh.profile.encode().len();
    let t_encode = t.elapsed().as_secs_f64();
    let threads = fresh.profile.threads().len();
    drop(fresh);
    let t = Instant::now();
    let written = open(&run, &opts(CacheMode::Refresh)).unwrap();
    let t_write = t.elapsed().as_secs_f64();
    assert!(
        !written
            .report
            .notes
            .iter()
            .any(|n| n.contains("not cached") || n.contains("could not")),
        "{:?}",
        written.report.notes
    );
    drop(written);
    let dir = cache_dir(None).expect("no cache directory: set PERFSCAPE_CACHE_DIR");
    let file = entry_path(&run, None, &dir).unwrap();
    let size = std::fs::metadata(&file).unwrap().len();
    let mut reopen = Vec::new();
    let mut decode = Vec::new();
    for _ in 0..repeat {
        let t = Instant::now();
        let l = open(&run, &opts(CacheMode::ReadWrite)).unwrap();
        reopen.push(t.elapsed().as_secs_f64());
        assert!(l.report.notes.last().unwrap().starts_with("read from the cache"));
        drop(l);
        let t = Instant::now();
        let bytes = std::fs::read(&file).unwrap();
        let (p, _) = parse_cache_file(&bytes).unwrap();
        decode.push(t.elapsed().as_secs_f64());
        drop((p, bytes));
    }
    let (reopen, decode) = (median(reopen), median(decode));
    println!(
        "{threads} threads, {cells} (event, thread) cells: load from the files {t_files:.3} s; \
         load + write the cache {t_write:.3} s (encoding {:.1} MB alone {t_encode:.3} s); cache {:.1} MB; re-open from the cache {reopen:.3} s \
         (read + decode {decode:.3} s, listing and checking the source files {:.3} s)",
        encoded as f64 / 1e6,
        size as f64 / 1e6,
        (reopen - decode).max(0.0)
    );
}
