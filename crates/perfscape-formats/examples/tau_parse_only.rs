//! Times the TAU text parser alone on one thread (not a pass/fail check): reads every
//! `profile.*` file of a run directory into memory, then parses each with
//! [`perfscape_formats::tau::parse_profile_text`] `ROUNDS` times and prints the best round
//! (reading and merging, which the load adds, are left out).
//!
//! `cargo run --release -p perfscape-formats --example tau_parse_only -- RUN [ROUNDS]`

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use perfscape_formats::tau::parse_profile_text;
use std::path::PathBuf;
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let run = PathBuf::from(args.next().expect("usage: tau_parse_only RUN [ROUNDS]"));
    let rounds: usize = args.next().map_or(5, |r| r.parse().expect("ROUNDS: a number"));
    let texts: Vec<String> = std::fs::read_dir(&run)
        .unwrap()
        .filter_map(|e| {
            let e = e.unwrap();
            let name = e.file_name().into_string().ok()?;
            name.starts_with("profile.")
                .then(|| std::fs::read_to_string(e.path()).unwrap())
        })
        .collect();
    let bytes: usize = texts.iter().map(String::len).sum();
    let mut best = f64::INFINITY;
    let mut lines = 0;
    for _ in 0..rounds {
        let t = Instant::now();
        lines = 0;
        for text in &texts {
            let f = parse_profile_text(text).unwrap();
            lines += f.timers.len() + f.user_events.len();
            std::hint::black_box(&f);
        }
        best = best.min(t.elapsed().as_secs_f64());
    }
    println!(
        "{} files, {:.1} MB, {lines} timer and user event lines: parsed in {:.1} ms (best of {rounds}), {:.2} GB/s, {:.1} ns a line",
        texts.len(),
        bytes as f64 / 1e6,
        best * 1e3,
        bytes as f64 / best / 1e9,
        best * 1e9 / lines as f64
    );
}
