//! Scale measurement of the snapshot reader and the integrator (not a pass/fail check).
//!
//! `cargo run --release -p perfscape-formats --example series_scale -- [RANKS] [SAMPLES]`
//! (default 256 ranks, 200 samples). Synthesizes snapshot files of RANKS ranks × SAMPLES
//! snapshots × 50 timers, feeds them block by block through one `SnapshotStream` per rank and
//! an `Integrator` as live mode would, and prints throughput, the time to integrate one
//! sample of every rank, the series' memory, and the cost of a delta trend and a delta
//! profile. `bench/bench.py` records its output in BENCHMARKS.md.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use perfscape_formats::tau::snapshot::SnapshotStream;
use perfscape_model::{
    EventId, Integrator, IntegratorOptions, MetricId, SampleId, SampleMode, ThreadId, ValueKind,
};
use std::time::Instant;

fn main() {
    let args: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let ranks = args.first().copied().unwrap_or(256);
    let samples = args.get(1).copied().unwrap_or(200);
    let events = 50usize;
    let file = |r: usize| {
        let mut s = format!(
            "<profile_xml>\n<thread id=\"{r}.0.0.1\" node=\"{r}\" context=\"0\" thread=\"0\">\n<metadata>\n</metadata>\n</thread>\n<definitions thread=\"{r}.0.0.1\">\n<metric id=\"0\"><name>TIME</name>\n<units>unknown</units>\n</metric>\n</definitions>\n<definitions thread=\"{r}.0.0.1\">\n"
        );
        for e in 0..events {
            s += &format!(
                "<event id=\"{e}\"><name>routine_{e} void (int)</name><group>TAU_USER</group></event>\n"
            );
        }
        s += "</definitions>\n</profile_xml>\n";
        for k in 1..=samples {
            s += &format!(
                "<profile_xml>\n<profile thread=\"{r}.0.0.1\">\n<name>iteration {k}</name>\n<timestamp>{}</timestamp>\n<interval_data metrics=\"0 \">\n",
                1_700_000_000_000_000u64 + k as u64 * 1000
            );
            for e in 0..events {
                let v = (k * (e + 1) * (r + 3)) as f64;
                s += &format!("{e} {k} {} {} {} \n", k * 2, v, v * 1.5);
            }
            s += "</interval_data>\n<atomic_data>\n</atomic_data>\n</profile>\n\n</profile_xml>\n";
        }
        s.into_bytes()
    };
    let files: Vec<Vec<u8>> = (0..ranks).map(file).collect();
    let bytes: usize = files.iter().map(Vec::len).sum();
    // Where each block ends in each file, to feed the files block by block as live mode would.
    let ends: Vec<Vec<usize>> = files
        .iter()
        .map(|f| {
            String::from_utf8_lossy(f)
                .match_indices("</profile_xml>\n")
                .map(|(i, m)| i + m.len())
                .collect()
        })
        .collect();
    let mut streams: Vec<SnapshotStream> = (0..ranks)
        .map(|r| SnapshotStream::new(format!("snapshot.{r}.0.0")))
        .collect();
    let now = Instant::now();
    let mut integ = Integrator::new(IntegratorOptions::default());
    for r in 0..ranks {
        integ.expect_thread(ThreadId::new(r as u32, 0, 0));
    }
    let t = Instant::now();
    let mut per_sample = Vec::new();
    // Block 0 holds the definitions; block k the k-th snapshot.
    for k in 0..=samples {
        let t1 = Instant::now();
        for r in 0..ranks {
            let from = if k == 0 { 0 } else { ends[r][k - 1] };
            let pushed = streams[r].push(&files[r][from..ends[r][k]]);
            assert!(pushed.errors.is_empty());
            for s in pushed.samples {
                integ.push(s, now).unwrap();
            }
        }
        let done = integ.poll(now);
        if k > 0 {
            assert_eq!(done.len(), 1);
            per_sample.push(t1.elapsed());
        }
    }
    let total = t.elapsed();
    let (series, _) = integ.finish();
    per_sample.sort();
    let t = Instant::now();
    let trend = series.timer_trend(EventId(7), ValueKind::Exclusive, MetricId(0), SampleMode::Delta);
    let trend_time = t.elapsed();
    let t = Instant::now();
    let p = series
        .profile_at(SampleId::from(samples / 2), SampleMode::Delta)
        .unwrap();
    let profile_time = t.elapsed();
    assert_eq!(trend.len(), samples);
    assert_eq!(p.threads().len(), ranks);
    println!(
        "{ranks} ranks x {samples} samples x {events} timers: {:.1} MB of XML read and integrated block by block \
         in {total:?} ({:.0} MB/s); one {ranks}-thread sample (parse its {ranks} blocks + integrate): median {:?}, \
         max {:?}; series heap {:.1} MB ({:.1} B per cell-quantity); delta trend of one timer over all samples \
         {trend_time:?}; delta profile of one sample {profile_time:?}",
        bytes as f64 / 1e6,
        bytes as f64 / 1e6 / total.as_secs_f64(),
        per_sample[per_sample.len() / 2],
        per_sample[per_sample.len() - 1],
        series.heap_bytes() as f64 / 1e6,
        series.heap_bytes() as f64 / (ranks * samples * events * 4) as f64,
    );
}
