//! Benchmark of the "what is wrong" analyses after a run is loaded: the categories (default
//! rules) and the findings on a TAU run, timed in this process with the load excluded. Prints
//! one JSON object.
//!
//! Run: `cargo run --release -p perfscape-analysis --example insight_bench -- RUN [REPEAT]`

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use perfscape_analysis::categories::{RuleSet, categorize};
use perfscape_analysis::findings::{FindingOptions, findings};
use perfscape_formats::{OpenOptions, open};
use perfscape_model::MetricId;
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
    let rules = RuleSet::defaults();
    let mut times = Vec::new();
    let mut cat_times = Vec::new();
    let mut n = 0;
    for _ in 0..repeat {
        let t = Instant::now();
        let cat = categorize(&p, MetricId(0), &rules).unwrap();
        cat_times.push(t.elapsed().as_secs_f64());
        let f = findings(&p, MetricId(0), Some(&cat), &FindingOptions::default());
        times.push(t.elapsed().as_secs_f64());
        n = f.findings.len();
    }
    if std::env::var_os("SHOW").is_some() {
        let cat = categorize(&p, MetricId(0), &rules).unwrap();
        for f in &findings(&p, MetricId(0), Some(&cat), &FindingOptions::default()).findings {
            eprintln!("{:?} {:.3}% {}", f.kind, f.cost_percent, f.title);
        }
    }
    times.sort_by(f64::total_cmp);
    cat_times.sort_by(f64::total_cmp);
    println!(
        "{{\"run\": \"{run}\", \"threads\": {}, \"load_s\": {load_s:.3}, \"findings\": {n}, \"categories_s_median\": {:.4}, \"categories_and_findings_s_median\": {:.4}, \"categories_and_findings_s_min\": {:.4}}}",
        p.threads().len(),
        cat_times[cat_times.len() / 2],
        times[times.len() / 2],
        times[0]
    );
}
