//! Loads one input without the cache and prints its size (not a pass/fail check): the load
//! alone, with the system allocator, for heap profilers such as heaptrack (the `perfscape`
//! binary uses jemalloc, which they do not see).
//!
//! `cargo run --release -p perfscape-formats --example load_only -- RUN`
//! then e.g. `heaptrack target/release/examples/load_only RUN`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use perfscape_formats::{CacheMode, OpenOptions, Parts, open};
use std::path::PathBuf;
use std::time::Instant;

fn main() {
    let run = PathBuf::from(std::env::args().nth(1).expect("usage: load_only RUN"));
    let opts = OpenOptions {
        cache: CacheMode::Off,
        parts: Parts::PROFILE,
        ..OpenOptions::default()
    };
    let t = Instant::now();
    let run_data = open(&run, &opts).unwrap();
    let p = &run_data.profile;
    println!(
        "{}: {} threads, {} events, {} cells, value heap {} bytes, {:.3} s",
        run.display(),
        p.threads().len(),
        p.events().len(),
        p.interval_cell_count(),
        p.value_heap_bytes(),
        t.elapsed().as_secs_f64()
    );
}
