//! Time of the categories of a run after it is loaded: `categorize` with the default rules
//! (classify each event once, one pass over the flat events' columns) and POP's metrics, the
//! best and median of 7 runs. Prints one JSON object.
//!
//! Run: `cargo run --release -p perfscape-analysis --example categories_time -- RUN`

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use perfscape_analysis::categories::{RuleSet, categorize};
use perfscape_formats::{OpenOptions, open};
use perfscape_model::MetricId;
use std::time::Instant;

fn main() {
    let run = std::env::args().nth(1).expect("usage: categories_time RUN");
    let t = Instant::now();
    let p = open(std::path::Path::new(&run), &OpenOptions::default())
        .unwrap()
        .profile;
    let load_s = t.elapsed().as_secs_f64();
    let rules = RuleSet::defaults();
    let mut times: Vec<f64> = (0..7)
        .map(|_| {
            let t = Instant::now();
            let c = categorize(&p, MetricId(0), &rules).unwrap();
            let pop = c.pop();
            std::hint::black_box((c.run(), pop));
            t.elapsed().as_secs_f64()
        })
        .collect();
    times.sort_by(f64::total_cmp);
    println!(
        "{{\"run\": \"{run}\", \"threads\": {}, \"events\": {}, \"load_s\": {load_s:.3}, \"categories_best_s\": {:.4}, \"categories_median_s\": {:.4}, \"workers\": {}}}",
        p.threads().len(),
        p.events().len(),
        times[0],
        times[3],
        rayon::current_num_threads()
    );
}
