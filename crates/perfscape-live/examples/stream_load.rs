//! Load on a stream listener (STREAM.md): N simulated producers (one thread and one TCP
//! connection each, on loopback, in this process) send enter/exit pairs at a given rate and a
//! sample every interval; prints records per second sustained, the latency from the last
//! producer sending sample k to the integrated sample k being announced (p50/p95/max), and
//! the process's resident memory over time.
//!
//! `cargo run --release -p perfscape-live --example stream_load -- PRODUCERS SECONDS PAIRS_PER_S SAMPLE_MS`
//! (defaults 1024 60 200 1000).

#![allow(clippy::expect_used, clippy::unwrap_used)]

use perfscape_live::stream::record::Record;
use perfscape_live::{LiveEvent, StreamOptions, listen};
use std::io::Write;
use std::net::TcpStream;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

fn rss_mib() -> f64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

fn now_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}

fn line(r: &Record, out: &mut Vec<u8>) {
    serde_json::to_writer(&mut *out, r).expect("serializable");
    out.push(b'\n');
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, d: u64| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(d);
    let (producers, seconds, pairs_per_s, sample_ms) = (arg(0, 1024), arg(1, 60), arg(2, 200), arg(3, 1000));
    let opts = StreamOptions::default();
    let run = listen(&"tcp://127.0.0.1:0".parse().expect("address"), &opts).expect("listen");
    let addr = run
        .dir()
        .to_str()
        .expect("utf-8")
        .trim_start_matches("tcp://")
        .to_string();
    let samples = (seconds * 1000 / sample_ms) as usize;
    // Per sample: when its last record was sent (ns since the epoch, max over producers).
    let sent: Arc<Vec<AtomicU64>> = Arc::new((0..samples).map(|_| AtomicU64::new(0)).collect());
    let records = Arc::new(AtomicU64::new(0));
    let start = Instant::now() + Duration::from_millis(500);
    let rss0 = rss_mib();
    let mut handles = Vec::new();
    for p in 0..producers {
        let (addr, sent, records) = (addr.clone(), sent.clone(), records.clone());
        handles.push(
            std::thread::Builder::new()
                .stack_size(128 * 1024)
                .spawn(move || {
                    let mut s = TcpStream::connect(&addr).expect("connect");
                    let _ = s.set_nodelay(true);
                    let mut buf = Vec::with_capacity(64 * 1024);
                    line(
                        &Record::Hello {
                            protocol: 1,
                            program: Some("stream_load".into()),
                            run: None,
                            rank: p as u32,
                            thread: 0,
                            metrics: None,
                            token: None,
                        },
                        &mut buf,
                    );
                    s.write_all(&buf).expect("hello");
                    let tick = Duration::from_millis(20);
                    let per_tick = (pairs_per_s as f64 * tick.as_secs_f64()).max(1.0) as usize;
                    let regions = ["compute", "MPI_Allreduce()", "halo_exchange", "MPI_Waitall()"];
                    let mut next_sample = 0usize;
                    let mut n = 0u64;
                    let mut k = 0usize;
                    while next_sample < samples {
                        let due = start + tick * k as u32;
                        k += 1;
                        if let Some(d) = due.checked_duration_since(Instant::now()) {
                            std::thread::sleep(d);
                        }
                        buf.clear();
                        let t = now_ns();
                        for i in 0..per_tick {
                            let region = regions[(p as usize + i) % regions.len()].to_string();
                            line(
                                &Record::Enter {
                                    region: region.clone(),
                                    group: None,
                                    t_ns: t,
                                },
                                &mut buf,
                            );
                            line(&Record::Exit { region, t_ns: t }, &mut buf);
                            n += 2;
                        }
                        let sample_due = start + Duration::from_millis(sample_ms * (next_sample as u64 + 1));
                        let is_sample = Instant::now() >= sample_due;
                        if is_sample {
                            line(
                                &Record::Sample {
                                    name: format!("s{next_sample}"),
                                    t_ns: t,
                                    events: None,
                                    user_events: None,
                                },
                                &mut buf,
                            );
                            n += 1;
                        }
                        if s.write_all(&buf).is_err() {
                            return;
                        }
                        if is_sample {
                            sent[next_sample].fetch_max(now_ns() as u64, Ordering::Relaxed);
                            next_sample += 1;
                        }
                    }
                    records.fetch_add(n, Ordering::Relaxed);
                })
                .expect("spawn"),
        );
    }
    let latencies = Arc::new(Mutex::new(Vec::new()));
    let mut rss_trace = Vec::new();
    let mut last_rss = Instant::now();
    let mut got = 0;
    let (mut appeared, mut amended) = (0, 0);
    let deadline = start + Duration::from_secs(seconds + 30);
    while got < samples && Instant::now() < deadline {
        if last_rss.elapsed() >= Duration::from_secs(10) {
            rss_trace.push(rss_mib());
            last_rss = Instant::now();
        }
        let e = run.recv_timeout(Duration::from_millis(100));
        match &e {
            Ok(LiveEvent::ThreadAppeared { .. }) => appeared += 1,
            Ok(LiveEvent::Amended(_)) => amended += 1,
            Ok(LiveEvent::ProducerError { message, .. }) | Ok(LiveEvent::Notice { message }) => {
                eprintln!("{message}")
            }
            _ => {}
        }
        if let Ok(LiveEvent::Sample(s)) = e {
            let k: usize = s.name.trim_start_matches('s').parse().unwrap_or(usize::MAX);
            if let Some(at) = sent.get(k) {
                let lat_ms = (now_ns() as f64 - at.load(Ordering::Relaxed) as f64) / 1e6;
                latencies.lock().expect("lock").push((lat_ms, s.threads_present));
            }
            got += 1;
        }
    }
    let elapsed = start.elapsed().as_secs_f64();
    for h in handles {
        let _ = h.join();
    }
    let mut l: Vec<f64> = latencies.lock().expect("lock").iter().map(|x| x.0).collect();
    l.sort_by(f64::total_cmp);
    let q = |p: f64| {
        l.get(((l.len() as f64 - 1.0) * p).round() as usize)
            .copied()
            .unwrap_or(f64::NAN)
    };
    let total = records.load(Ordering::Relaxed);
    let incomplete = latencies
        .lock()
        .expect("lock")
        .iter()
        .filter(|x| x.1 < producers as usize)
        .count();
    println!(
        "producers {producers}, {seconds} s, {pairs_per_s} enter/exit pairs/s each, a sample every {sample_ms} ms"
    );
    println!(
        "records sent {total} in {elapsed:.1} s: {:.0} records/s",
        total as f64 / elapsed
    );
    println!(
        "samples announced {got}/{samples} ({incomplete} without every producer); latency last send -> announced: p50 {:.1} ms, p95 {:.1} ms, max {:.1} ms",
        q(0.5),
        q(0.95),
        q(1.0)
    );
    let present: Vec<usize> = latencies.lock().expect("lock").iter().map(|x| x.1).collect();
    println!(
        "threads present per sample: {present:?}; {appeared} producers said hello; {amended} samples amended"
    );
    println!(
        "resident MiB: before {rss0:.0}, every 10 s {rss_trace:.0?}, end {:.0}",
        rss_mib()
    );
    run.stop_and_wait();
}
