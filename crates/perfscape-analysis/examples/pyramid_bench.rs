//! Benchmark of what a matrix view's miss and hit cost the server after a run is loaded: the
//! max/sum pyramid of the event rows and of the source-line rows over every thread (id order)
//! at the server's level budget for a 1 GiB cache (2^23 cells), then a default overview and a
//! terrain (grid, peaks and cell picks) from each. Timed in this process with the load excluded;
//! prints one JSON object per row kind.
//!
//! Run: `cargo run --release -p perfscape-analysis --example pyramid_bench -- RUN [REPEAT]`
//! (e.g. a run of `../shared/tools/tau_scale.py --ranks 4096 --lines 5000`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use perfscape_analysis::answers::{MatrixInput, OverviewOptions, Region, build_pyramid, overview, terrain};
use perfscape_analysis::axis::{AxisOrder, order_axis};
use perfscape_analysis::params::Values;
use perfscape_analysis::views::{Reduce, RowOrder, RowSet};
use perfscape_formats::{OpenOptions, open};
use perfscape_model::{MetricId, ValueKind};
use std::time::Instant;

/// The server's cells per stored level with a 1 GiB cache (`ViewCache::level_cells`).
const LEVEL_CELLS: usize = (1 << 30) / 128;

fn median_ms(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2] * 1e3
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let run = args.get(1).expect("usage: pyramid_bench RUN [REPEAT]");
    let repeat: usize = args.get(2).map(|s| s.parse().unwrap()).unwrap_or(7);
    let p = open(std::path::Path::new(run), &OpenOptions::default())
        .unwrap()
        .profile;
    let values = Values {
        metric: MetricId(0),
        kind: ValueKind::Exclusive,
    };
    let axis = order_axis(&p, AxisOrder::Id);
    let kinds = [
        (
            "events",
            RowSet::events(&p, values.metric, values.kind, true, RowOrder::Rank),
        ),
        ("lines", RowSet::lines(&p)),
    ];
    for (name, rows) in &kinds {
        let (mut build, mut ov, mut ter) = (Vec::new(), Vec::new(), Vec::new());
        let mut bytes = 0;
        for _ in 0..repeat {
            let t = Instant::now();
            let pyramid = build_pyramid(&p, values, rows, &axis, LEVEL_CELLS);
            build.push(t.elapsed().as_secs_f64());
            bytes = pyramid.heap_bytes();
            let m = MatrixInput {
                profile: &p,
                values,
                rows,
                axis: &axis,
                pyramid: &pyramid,
                first_row: 0,
            };
            let t = Instant::now();
            let o = overview(&m, &OverviewOptions::default(), Reduce::Max).unwrap();
            ov.push(t.elapsed().as_secs_f64());
            std::hint::black_box(o);
            let t = Instant::now();
            let g = terrain(&m, &Region::default(), None, None);
            ter.push(t.elapsed().as_secs_f64());
            std::hint::black_box(g);
        }
        println!(
            "{{\"rows\": \"{name}\", \"n_rows\": {}, \"threads\": {}, \"pyramid_bytes\": {bytes}, \"build_ms\": {:.2}, \"overview_ms\": {:.2}, \"terrain_ms\": {:.2}}}",
            rows.len(),
            p.threads().len(),
            median_ms(build),
            median_ms(ov),
            median_ms(ter),
        );
    }
}
