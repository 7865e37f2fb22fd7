//! Benchmark of the "what is wrong" analyses after a run is loaded: findings (and, once they
//! are there, categories and the communication matrix) on a TAU run, timed in this process
//! with the load excluded. Prints one JSON object.
//!
//! Run: `cargo run --release -p perfscape-analysis --example insight_bench -- RUN [REPEAT]`

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use perfscape_analysis::findings::{FindingOptions, findings};
use perfscape_formats::{OpenOptions, open};
use perfscape_model::{MetricId, event::routine_name};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let run = args.get(1).expect("usage: insight_bench RUN [REPEAT]");
    let repeat: usize = args.get(2).map(|s| s.parse().unwrap()).unwrap_or(5);
    let t0 = Instant::now();
    let p = open(std::path::Path::new(run), &OpenOptions::default())
        .unwrap()
        .profile;
    let load_s = t0.elapsed().as_secs_f64();
    let useful: Vec<bool> = p
        .event_ids()
        .map(|e| !routine_name(p.event(e).leaf()).starts_with("MPI_"))
        .collect();
    let mut times = Vec::new();
    let mut n = 0;
    for _ in 0..repeat {
        let t = Instant::now();
        let f = findings(&p, MetricId(0), &useful, &FindingOptions::default());
        times.push(t.elapsed().as_secs_f64());
        n = f.findings.len();
    }
    if std::env::var_os("SHOW").is_some() {
        for f in &findings(&p, MetricId(0), &useful, &FindingOptions::default()).findings {
            eprintln!("{:?} {:.3}% {}", f.kind, f.cost_percent, f.title);
        }
    }
    times.sort_by(f64::total_cmp);
    println!(
        "{{\"run\": \"{run}\", \"threads\": {}, \"load_s\": {load_s:.3}, \"findings\": {n}, \"findings_s_median\": {:.4}, \"findings_s_min\": {:.4}}}",
        p.threads().len(),
        times[times.len() / 2],
        times[0]
    );
}
