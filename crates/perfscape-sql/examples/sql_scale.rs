//! Benchmark: SQL over a synthetic profile of THREADS threads × EVENTS flat events (one
//! metric): builds the profile, then times `GROUP BY event` over `event_values`
//! (THREADS × EVENTS rows) three times and prints one JSON line (seconds, peak RSS).
//! With `--parquet FILE` it also writes `event_values` to FILE, so that pandas can run the
//! same aggregation on the same values (bench/sql_bench.py does both, in one run).
//!
//! `cargo run --release --example sql_scale -p perfscape-sql -- 100000 1000`

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use perfscape_sql::{QueryLimits, RunSet, SqlSession};
use std::sync::Arc;
use std::time::Instant;

#[path = "common/synthetic.rs"]
mod synthetic;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let threads: u32 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(10_000);
    let events: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(1_000);
    let parquet = args
        .iter()
        .position(|a| a == "--parquet")
        .and_then(|i| args.get(i + 1))
        .cloned();

    let start = Instant::now();
    let profile = synthetic::profile(threads, events, 0);
    let build_s = start.elapsed().as_secs_f64();

    let mut set = RunSet::new();
    set.add("synthetic", "synthetic", Arc::new(profile));
    let session = SqlSession::new(&set, QueryLimits::default()).unwrap();
    let q = "SELECT event, SUM(exclusive) AS s, MAX(exclusive) AS mx, AVG(exclusive) AS mean FROM event_values GROUP BY event";
    let mut times = Vec::new();
    let mut groups = 0;
    for _ in 0..3 {
        let t = Instant::now();
        let r = session.query_blocking(q).unwrap();
        times.push(t.elapsed().as_secs_f64());
        groups = r.rows;
    }
    times.sort_by(f64::total_cmp);
    if let Some(path) = &parquet {
        let t = Instant::now();
        let r = session
            .query_blocking("SELECT event, thread, exclusive FROM event_values")
            .unwrap();
        let file = std::fs::File::create(path).unwrap();
        let mut w =
            perfscape_sql::datafusion::parquet::arrow::ArrowWriter::try_new(file, r.schema.clone(), None)
                .unwrap();
        for batch in &r.batches {
            w.write(batch).unwrap();
        }
        w.close().unwrap();
        eprintln!("wrote {path} in {:.2} s", t.elapsed().as_secs_f64());
    }
    println!(
        "{{\"threads\": {threads}, \"events\": {events}, \"rows\": {}, \"groups\": {groups}, \"build_s\": {build_s:.3}, \
         \"group_by_s\": [{:.4}, {:.4}, {:.4}], \"peak_rss_bytes\": {}}}",
        u64::from(threads) * events as u64,
        times[0],
        times[1],
        times[2],
        synthetic::peak_rss()
    );
}
