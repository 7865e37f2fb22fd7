//! Scale benchmark: an in-memory 1,000,000-thread × 1,000-event matrix of one value kind,
//! built with the logic of `../shared/tools/tau_scale.py` (every value of a real rank × a
//! lognormal noise, a load-imbalance ramp over the ranks, about 1 rank in 1000 a straggler, and
//! per-source-line sample rows with a few hot regions and long empty runs), then the pyramid
//! build time and the time of screen-sized requests (heat map, zoomed heat map, overview,
//! terrain grid) from it. Prints one JSON object.
//!
//! Run: `cargo run --release -p perfscape-analysis --example million -- [THREADS] [EVENTS] [REQUESTS] [sparse]`
//! (defaults 1000000 1000 200; needs about 4.5 GB of memory for the default size). By default
//! every cell has a value (10^9 values: the sampled lines get a small background besides their
//! hot regions); `sparse` keeps tau_scale.py's empty lines.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use perfscape_analysis::pyramid::{DEFAULT_LEVEL_CELLS, MatrixSource, Pyramid};
use perfscape_analysis::views::{OverviewParams, Reduce};
use perfscape_formats::{OpenOptions, open};
use perfscape_model::{MetricId, ValueKind};
use rayon::prelude::*;
use std::path::Path;
use std::time::Instant;

/// Rows × columns of f32 (NaN = no data): 4 bytes per cell.
struct DenseF32 {
    rows: usize,
    cols: usize,
    values: Vec<f32>,
}

impl MatrixSource for DenseF32 {
    fn n_rows(&self) -> usize {
        self.rows
    }
    fn n_cols(&self) -> usize {
        self.cols
    }
    fn for_each_in_row(&self, r: usize, f: &mut dyn FnMut(usize, f64)) {
        for (p, &v) in self.values[r * self.cols..(r + 1) * self.cols].iter().enumerate() {
            if !v.is_nan() {
                f(p, v as f64);
            }
        }
    }
    fn get(&self, r: usize, pos: usize) -> Option<f64> {
        self.values
            .get(r * self.cols + pos)
            .copied()
            .filter(|v| !v.is_nan())
            .map(f64::from)
    }
    fn fold_range(&self, r: usize, range: std::ops::Range<usize>, reduce: Reduce) -> f64 {
        let row = &self.values[r * self.cols..(r + 1) * self.cols];
        row[range].iter().fold(f64::NAN, |acc, &v| {
            perfscape_analysis::pyramid::combine(acc, f64::from(v), reduce)
        })
    }
}

/// xorshift64* with Box–Muller gaussians: deterministic per (seed, rank).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }
    fn gauss(&mut self) -> f64 {
        let u = self.next().max(1e-300);
        let v = self.next();
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

fn pct(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((p / 100.0) * v.len() as f64).floor().min(v.len() as f64 - 1.0) as usize]
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .take(3)
        .map(|a| a.parse().unwrap())
        .collect();
    let threads = args.first().copied().unwrap_or(1_000_000);
    let events = args.get(1).copied().unwrap_or(1000);
    let requests = args.get(2).copied().unwrap_or(200);
    let dense = std::env::args().nth(4).as_deref() != Some("sparse");

    // The real ranks to copy: the 64-rank example run's flat events (exclusive TIME).
    let run =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/tau/mpi-stencil-np64-callpath-commmatrix");
    let p = open(&run, &OpenOptions::default()).unwrap().profile;
    let timers: Vec<(Vec<f64>, bool)> = p
        .event_ids()
        .filter(|&e| !p.event(e).is_callpath())
        .map(|e| {
            let mut v = vec![0.0; p.threads().len()];
            let col = p.interval(e);
            for (t, x) in col.threads().iter().zip(col.exclusive(MetricId(0))) {
                v[t.index()] = *x;
            }
            (v, p.event_groups_joined(e).contains("MPI"))
        })
        .collect();
    let n_src = p.threads().len();
    let n_timers = timers.len().min(events);
    let n_lines = events - n_timers;
    // Hot regions of the sampled lines, as tau_scale.py does.
    let mut rng0 = Rng(7919);
    let mut hot = vec![0.0f64; n_lines];
    for _ in 0..(n_lines / 2000).max(3) {
        let centre = (rng0.next() * n_lines as f64) as usize;
        let width = 3 + (rng0.next() * 37.0) as usize;
        let peak = 1e3 + rng0.next() * 4.99e5;
        for (l, h) in hot
            .iter_mut()
            .enumerate()
            .take((centre + width + 1).min(n_lines))
            .skip(centre.saturating_sub(width))
        {
            let x = (l as f64 - centre as f64) / (width as f64 / 2.0);
            *h = h.max(peak * (-x * x).exp());
        }
    }

    let t0 = Instant::now();
    let mut values = vec![f32::NAN; events * threads];
    // Column by column (one rank each), in parallel over chunks of ranks.
    let cols_per_chunk = 4096;
    let chunks: Vec<Vec<(usize, Vec<f32>)>> = (0..threads.div_ceil(cols_per_chunk))
        .into_par_iter()
        .map(|ch| {
            (ch * cols_per_chunk..((ch + 1) * cols_per_chunk).min(threads))
                .map(|r| {
                    let mut rng = Rng((1u64 << 32) ^ r as u64 ^ 0x5DEE_CE66);
                    let ramp = 1.0 + 0.3 * (r as f64 / (threads.max(2) - 1) as f64);
                    let straggler = rng.next() < 0.001;
                    let strag_idx = (rng.next() * n_timers as f64) as usize;
                    let mut col = vec![f32::NAN; events];
                    for (i, (v, mpi)) in timers.iter().take(n_timers).enumerate() {
                        let mut f = (0.05 * rng.gauss()).exp() * if *mpi { 2.0 - ramp } else { ramp };
                        if straggler && i == strag_idx {
                            f *= 3.0;
                        }
                        col[i] = (v[r % n_src] * f).round() as f32;
                    }
                    for (l, &w) in hot.iter().enumerate() {
                        let w = if dense { w + 10.0 } else { w };
                        if w > 0.0 {
                            let v = w * (0.2 * rng.gauss()).exp() * ramp;
                            if v >= 1.0 {
                                col[n_timers + l] = v.round() as f32;
                            }
                        }
                    }
                    (r, col)
                })
                .collect()
        })
        .collect();
    for chunk in chunks {
        for (r, col) in chunk {
            for (e, v) in col.into_iter().enumerate() {
                values[e * threads + r] = v;
            }
        }
    }
    let gen_s = t0.elapsed().as_secs_f64();
    let m = DenseF32 {
        rows: events,
        cols: threads,
        values,
    };
    let cells = m.values.iter().filter(|v| !v.is_nan()).count();

    let t1 = Instant::now();
    let pyr = Pyramid::build(&m, DEFAULT_LEVEL_CELLS);
    let build_s = t1.elapsed().as_secs_f64();

    let mut rng = Rng(42);
    let mut time = |f: &mut dyn FnMut(&mut Rng)| -> (f64, f64) {
        let mut ms: Vec<f64> = (0..requests)
            .map(|_| {
                let t = Instant::now();
                f(&mut rng);
                t.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        (pct(&mut ms, 50.0), pct(&mut ms, 99.0))
    };
    let whole = time(&mut |_| {
        std::hint::black_box(pyr.grid(&m, 0..events, 0..threads, 200, 400, Reduce::Max));
    });
    let zoom = time(&mut |rng| {
        let a = (rng.next() * threads as f64) as usize;
        let b = (a + 1 + (rng.next() * (threads - a) as f64) as usize).min(threads);
        let r0 = (rng.next() * events as f64) as usize;
        let r1 = (r0 + 1 + (rng.next() * (events - r0) as f64) as usize).min(events);
        std::hint::black_box(pyr.grid(&m, r0..r1, a..b, 200, 400, Reduce::Max));
    });
    let small = time(&mut |rng| {
        // Deep zoom: 2,000 threads × 50 rows, below the first stored level.
        let a = (rng.next() * (threads - 2000) as f64) as usize;
        let r0 = (rng.next() * (events - 50) as f64) as usize;
        std::hint::black_box(pyr.grid(&m, r0..r0 + 50, a..a + 2000, 200, 400, Reduce::Sum));
    });
    let overview = time(&mut |_| {
        std::hint::black_box(pyr.overview(
            &m,
            OverviewParams {
                skip_empty_over: 20,
                bin: 4,
                reduce: Reduce::Max,
                strips: 3,
                max_cols: 64,
            },
        ));
    });
    let terrain = time(&mut |_| {
        std::hint::black_box(pyr.grid(&m, 0..events, 0..threads, 40, 64, Reduce::Max));
    });
    let _ = ValueKind::Exclusive;
    println!(
        "{{\"dense\":{dense},\"threads\":{threads},\"events\":{events},\"cells\":{cells},\"matrix_bytes\":{},\"pyramid_bytes\":{},\"generate_s\":{gen_s:.2},\"pyramid_build_s\":{build_s:.2},\
\"requests\":{requests},\"heatmap_whole_ms\":[{:.2},{:.2}],\"heatmap_zoom_ms\":[{:.2},{:.2}],\"heatmap_deep_zoom_ms\":[{:.2},{:.2}],\"overview_ms\":[{:.2},{:.2}],\"terrain_ms\":[{:.2},{:.2}]}}",
        m.values.len() * 4,
        pyr.heap_bytes(),
        whole.0,
        whole.1,
        zoom.0,
        zoom.1,
        small.0,
        small.1,
        overview.0,
        overview.1,
        terrain.0,
        terrain.1
    );
}
