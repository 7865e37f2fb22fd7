//! Benchmark of the source view (`GET /api/source`) after a run is loaded: the per-line table,
//! the file chosen (the hottest), the view with the file's text (every sampled line's values
//! over every thread, its statistics, the line overview) and its JSON, as the server's endpoint
//! computes them, timed in this process with the load and the file read excluded. Prints one
//! JSON object.
//!
//! Run: `cargo run --release -p perfscape-analysis --example source_bench -- RUN SOURCE_FILE [REPEAT]`
//! (a run of `../shared/tools/tau_scale.py --lines 10000`, whose samples name `stencil.c`, and a
//! 10,000-line `stencil.c`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use perfscape_analysis::answers::{SourceOptions, SourceText, source_file, source_view};
use perfscape_analysis::lines::LineTable;
use perfscape_analysis::params::Values;
use perfscape_formats::{OpenOptions, open};
use perfscape_model::{MetricId, ValueKind};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (run, src) = (
        args.get(1).expect("usage: source_bench RUN SOURCE_FILE [REPEAT]"),
        args.get(2).expect("usage: source_bench RUN SOURCE_FILE [REPEAT]"),
    );
    let repeat: usize = args.get(3).map(|s| s.parse().unwrap()).unwrap_or(7);
    let t0 = Instant::now();
    let p = open(std::path::Path::new(run), &OpenOptions::default())
        .unwrap()
        .profile;
    let load_s = t0.elapsed().as_secs_f64();
    let text = std::fs::read_to_string(src).unwrap();
    let values = Values {
        metric: MetricId(0),
        kind: ValueKind::Exclusive,
    };
    let (mut times, mut bytes, mut lines, mut cells) = (Vec::new(), 0, 0, 0);
    for _ in 0..repeat {
        let t = Instant::now();
        let table = LineTable::new(&p);
        let f = source_file(&table, &p, None, None, values).unwrap();
        let found = SourceText::Found {
            path: src,
            text: &text,
        };
        let v = source_view(&p, &table, f, found, values, SourceOptions::default()).unwrap();
        let json = serde_json::to_vec(&v).unwrap();
        times.push(t.elapsed().as_secs_f64());
        bytes = json.len();
        lines = v.lines.len();
        cells = v.lines.iter().map(|l| l.stats.threads as usize).sum();
    }
    times.sort_by(f64::total_cmp);
    println!(
        "{{\"run\": \"{run}\", \"threads\": {}, \"load_s\": {load_s:.3}, \"text_lines\": {}, \"sampled_lines\": {lines}, \"cells\": {cells}, \"json_bytes\": {bytes}, \"median_ms\": {:.2}, \"min_ms\": {:.2}, \"max_ms\": {:.2}}}",
        p.threads().len(),
        text.lines().count(),
        times[times.len() / 2] * 1e3,
        times[0] * 1e3,
        times[times.len() - 1] * 1e3
    );
}
