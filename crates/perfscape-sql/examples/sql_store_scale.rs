//! Benchmark: a GROUP BY over more rows than fit in memory as profiles, streamed from a store.
//!
//! `sql_store_scale add DIR RUNS THREADS EVENTS` builds RUNS synthetic profiles of THREADS ×
//! EVENTS (one at a time, seeds 0, 1, ...; see `common/synthetic.rs`) and adds each to the
//! store in DIR (`perfscape_sql::store`), printing one JSON line per run.
//! `sql_store_scale query DIR` then times `SELECT event, SUM, MAX, AVG ... GROUP BY event` over
//! `event_values` of every run of the store (RUNS × THREADS × EVENTS rows, read from the Parquet
//! files as the query runs) twice, in a process of its own so its peak RSS is the query's.
//! bench/sql_bench.py `--store-threads` runs both.
//!
//! `cargo run --release -p perfscape-sql --example sql_store_scale -- add /tmp/s 10 100000 1000`

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

#[path = "common/synthetic.rs"]
mod synthetic;

use perfscape_sql::store::Store;
use perfscape_sql::{QueryLimits, RunSet};
use std::sync::Arc;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |i: usize| args.get(i).cloned().unwrap_or_default();
    let store = Store::new(arg(2));
    match arg(1).as_str() {
        "add" => {
            let runs: u64 = arg(3).parse().unwrap();
            let threads: u32 = arg(4).parse().unwrap();
            let events: usize = arg(5).parse().unwrap();
            for seed in 0..runs {
                let t = Instant::now();
                let profile = synthetic::profile(threads, events, seed);
                let build_s = t.elapsed().as_secs_f64();
                let mut set = RunSet::new();
                set.add(&format!("synthetic-{seed}"), "synthetic", Arc::new(profile));
                let t = Instant::now();
                store.add(&set).unwrap();
                println!(
                    "{{\"run\": {seed}, \"rows\": {}, \"build_s\": {build_s:.2}, \"add_s\": {:.2}, \"peak_rss_bytes\": {}}}",
                    u64::from(threads) * events as u64,
                    t.elapsed().as_secs_f64(),
                    synthetic::peak_rss()
                );
            }
        }
        "query" => {
            // The command line's limits: no row limit, 4 GiB for the engine's operators.
            let session = store.session(QueryLimits::default()).unwrap();
            let rows = session
                .query_blocking("SELECT COUNT(*) AS n FROM event_values")
                .unwrap();
            let n = perfscape_sql::arrow::array::AsArray::as_primitive::<
                perfscape_sql::arrow::datatypes::Int64Type,
            >(rows.batches[0].column(0).as_ref())
            .value(0);
            let q = "SELECT event, SUM(exclusive) AS s, MAX(exclusive) AS mx, AVG(exclusive) AS mean FROM event_values GROUP BY event";
            let mut times = Vec::new();
            let mut groups = 0;
            for _ in 0..2 {
                let t = Instant::now();
                let r = session.query_blocking(q).unwrap();
                times.push(t.elapsed().as_secs_f64());
                groups = r.rows;
            }
            println!(
                "{{\"rows\": {n}, \"groups\": {groups}, \"group_by_s\": [{:.2}, {:.2}], \"peak_rss_bytes\": {}}}",
                times[0],
                times[1],
                synthetic::peak_rss()
            );
        }
        _ => panic!("usage: sql_store_scale add DIR RUNS THREADS EVENTS | sql_store_scale query DIR"),
    }
}
