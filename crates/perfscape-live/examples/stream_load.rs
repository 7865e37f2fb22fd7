//! Load on a stream listener (STREAM.md): N simulated producers (one TCP connection each, on
//! loopback, in this process; tasks of a one-thread runtime, or with `LOAD=threads` one thread
//! each) send enter/exit pairs at a given rate and a sample every interval; prints records per second sustained, the latency from the last
//! producer sending sample k to the integrated sample k being announced (p50/p95/max), and
//! the process's resident memory over time.
//!
//! `cargo run --release -p perfscape-live --example stream_load -- PRODUCERS SECONDS PAIRS_PER_S SAMPLE_MS`
//! (defaults 1024 60 200 1000).
//!
//! To the page instead: with `PAGES_URL=http://127.0.0.1:PORT` (a `perfscape serve --listen
//! tcp://127.0.0.1:LPORT --no-token --port PORT` started beforehand), `CONNECT=127.0.0.1:LPORT`
//! and `PAGES=K`, the producers stream to that server and K page clients each hold its
//! WebSocket (`/api/ws`) and, on every `sample` event, read `/api/series` as the page does;
//! the latency is then from the last producer sending sample k to the last page holding the
//! series with it. `SERVER_PID=PID` adds the server's resident memory every 10 s.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use perfscape_live::stream::record::Record;
use perfscape_live::{LiveEvent, StreamOptions, listen};
use std::io::Write;
use std::net::TcpStream;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

fn rss_mib() -> f64 {
    let pid = std::env::var("SERVER_PID").unwrap_or_else(|_| "self".into());
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
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

/// Time between a producer's writes.
const TICK: Duration = Duration::from_millis(20);

/// What one simulated producer sends: a hello, then every [`TICK`] its share of enter/exit
/// pairs, and a sample record every `sample_ms`.
struct Script {
    rank: u64,
    per_tick: usize,
    sample_ms: u64,
    samples: usize,
    start: Instant,
    next_sample: usize,
    /// Records written.
    n: u64,
    /// Ticks begun.
    k: u32,
}

impl Script {
    fn new(rank: u64, pairs_per_s: u64, sample_ms: u64, samples: usize, start: Instant) -> Self {
        Self {
            rank,
            per_tick: (pairs_per_s as f64 * TICK.as_secs_f64()).max(1.0) as usize,
            sample_ms,
            samples,
            start,
            next_sample: 0,
            n: 0,
            k: 0,
        }
    }

    fn hello(&self, buf: &mut Vec<u8>) {
        line(
            &Record::Hello {
                protocol: 1,
                program: Some("stream_load".into()),
                run: None,
                rank: self.rank as u32,
                thread: 0,
                metrics: None,
                token: None,
            },
            buf,
        );
    }

    /// When the next write is due; None when every sample went out.
    fn due(&mut self) -> Option<Instant> {
        (self.next_sample < self.samples).then(|| {
            self.k += 1;
            self.start + TICK * (self.k - 1)
        })
    }

    /// This tick's records into `buf`; Some(k) when they end with sample k.
    fn tick(&mut self, buf: &mut Vec<u8>) -> Option<usize> {
        const REGIONS: [&str; 4] = ["compute", "MPI_Allreduce()", "halo_exchange", "MPI_Waitall()"];
        buf.clear();
        let t = now_ns();
        for i in 0..self.per_tick {
            let region = REGIONS[(self.rank as usize + i) % REGIONS.len()].to_string();
            line(
                &Record::Enter {
                    region: region.clone(),
                    group: None,
                    t_ns: t,
                },
                buf,
            );
            line(&Record::Exit { region, t_ns: t }, buf);
            self.n += 2;
        }
        let sample_due = self.start + Duration::from_millis(self.sample_ms * (self.next_sample as u64 + 1));
        if Instant::now() < sample_due {
            return None;
        }
        line(
            &Record::Sample {
                name: format!("s{}", self.next_sample),
                t_ns: t,
                events: None,
                user_events: None,
            },
            buf,
        );
        self.n += 1;
        self.next_sample += 1;
        Some(self.next_sample - 1)
    }
}

/// The simulated producers streaming to `addr`, one TCP connection each: by default tasks of
/// one tokio runtime with `LOAD_THREADS` threads (default 1), so that the load costs a thread,
/// not a thousand; with `LOAD=threads`, one OS thread per producer (the first version of this
/// bench).
struct Load {
    /// Per sample: when its last record was sent (ns since the epoch, max over producers).
    sent: Arc<Vec<AtomicU64>>,
    /// Records sent.
    records: Arc<AtomicU64>,
    /// When the producers start sending.
    start: Instant,
    handles: Vec<std::thread::JoinHandle<()>>,
}

impl Load {
    fn start(addr: &str, producers: u64, pairs_per_s: u64, sample_ms: u64, samples: usize) -> Self {
        let sent: Arc<Vec<AtomicU64>> = Arc::new((0..samples).map(|_| AtomicU64::new(0)).collect());
        let records = Arc::new(AtomicU64::new(0));
        let start = Instant::now() + Duration::from_millis(500);
        let script = move |rank| Script::new(rank, pairs_per_s, sample_ms, samples, start);
        let handles = if std::env::var("LOAD").is_ok_and(|l| l == "threads") {
            (0..producers)
                .map(|p| {
                    let (addr, sent, records) = (addr.to_string(), sent.clone(), records.clone());
                    std::thread::Builder::new()
                        .stack_size(128 * 1024)
                        .spawn(move || produce_blocking(&addr, script(p), &sent, &records))
                        .expect("spawn")
                })
                .collect()
        } else {
            let threads: usize = std::env::var("LOAD_THREADS")
                .ok()
                .and_then(|t| t.parse().ok())
                .unwrap_or(1);
            let (addr, sent, records) = (addr.to_string(), sent.clone(), records.clone());
            vec![std::thread::spawn(move || {
                let mut builder = if threads <= 1 {
                    tokio::runtime::Builder::new_current_thread()
                } else {
                    let mut b = tokio::runtime::Builder::new_multi_thread();
                    b.worker_threads(threads);
                    b
                };
                let rt = builder.enable_all().build().expect("runtime");
                rt.block_on(async move {
                    let tasks: Vec<_> = (0..producers)
                        .map(|p| {
                            tokio::spawn(produce(addr.clone(), script(p), sent.clone(), records.clone()))
                        })
                        .collect();
                    for t in tasks {
                        let _ = t.await;
                    }
                });
            })]
        };
        Self {
            sent,
            records,
            start,
            handles,
        }
    }

    fn join(self) {
        for h in self.handles {
            let _ = h.join();
        }
    }
}

/// One producer on its own thread.
fn produce_blocking(addr: &str, mut script: Script, sent: &[AtomicU64], records: &AtomicU64) {
    let mut s = TcpStream::connect(addr).expect("connect");
    let _ = s.set_nodelay(true);
    let mut buf = Vec::with_capacity(64 * 1024);
    script.hello(&mut buf);
    s.write_all(&buf).expect("hello");
    while let Some(due) = script.due() {
        if let Some(d) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(d);
        }
        let sample = script.tick(&mut buf);
        if s.write_all(&buf).is_err() {
            return;
        }
        if let Some(k) = sample {
            sent[k].fetch_max(now_ns() as u64, Ordering::Relaxed);
        }
    }
    records.fetch_add(script.n, Ordering::Relaxed);
}

/// One producer as a task: the same records and timing as [`produce_blocking`].
async fn produce(addr: String, mut script: Script, sent: Arc<Vec<AtomicU64>>, records: Arc<AtomicU64>) {
    let s = tokio::net::TcpStream::connect(&addr).await.expect("connect");
    let _ = s.set_nodelay(true);
    let write_all = async |mut bytes: &[u8]| -> bool {
        while !bytes.is_empty() {
            match s.try_write(bytes) {
                Ok(n) => bytes = &bytes[n..],
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    if s.writable().await.is_err() {
                        return false;
                    }
                }
                Err(_) => return false,
            }
        }
        true
    };
    let mut buf = Vec::with_capacity(64 * 1024);
    script.hello(&mut buf);
    assert!(write_all(&buf).await, "hello");
    while let Some(due) = script.due() {
        tokio::time::sleep_until(due.into()).await;
        let sample = script.tick(&mut buf);
        if !write_all(&buf).await {
            return;
        }
        if let Some(k) = sample {
            sent[k].fetch_max(now_ns() as u64, Ordering::Relaxed);
        }
    }
    records.fetch_add(script.n, Ordering::Relaxed);
}

/// p50 / p95 / max of `v` (sorted here).
fn quantiles(v: &mut [f64]) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    let q = |p: f64| {
        v.get(((v.len() as f64 - 1.0) * p).round() as usize)
            .copied()
            .unwrap_or(f64::NAN)
    };
    (q(0.5), q(0.95), q(1.0))
}

/// One HTTP GET on `host` (HOST:PORT), the body's length.
fn http_get(host: &str, path: &str) -> usize {
    use std::io::Read;
    let Ok(mut s) = TcpStream::connect(host) else {
        return 0;
    };
    let _ = write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    );
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    out.len()
}

/// The load against a served run, measured at `pages` page clients (see the module docs).
fn to_pages(
    addr: &str,
    url: &str,
    pages: usize,
    (producers, seconds, pairs_per_s, sample_ms): (u64, u64, u64, u64),
) {
    let samples = (seconds * 1000 / sample_ms) as usize;
    let host = url
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    // Per sample and page: when the page held the series with it (ns since the epoch).
    let held: Arc<Vec<Mutex<Vec<u64>>>> = Arc::new((0..samples).map(|_| Mutex::new(Vec::new())).collect());
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut clients = Vec::new();
    for _ in 0..pages {
        let (host, held, stop) = (host.clone(), held.clone(), stop.clone());
        clients.push(std::thread::spawn(move || {
            let (mut ws, _) = tungstenite::connect(format!("ws://{host}/api/ws")).expect("websocket");
            if let tungstenite::stream::MaybeTlsStream::Plain(s) = ws.get_mut() {
                let _ = s.set_read_timeout(Some(Duration::from_millis(200)));
            }
            while !stop.load(Ordering::Relaxed) {
                let Ok(msg) = ws.read() else { continue };
                let Ok(text) = msg.into_text() else { continue };
                let v: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
                if v["type"] != "event" || v["event"]["event"] != "sample" {
                    continue;
                }
                let name = v["event"]["name"].as_str().unwrap_or("");
                let Ok(k) = name.trim_start_matches('s').parse::<usize>() else {
                    continue;
                };
                http_get(&host, "/api/series");
                if let Some(h) = held.get(k) {
                    h.lock().expect("lock").push(now_ns() as u64);
                }
            }
        }));
    }
    std::thread::sleep(Duration::from_millis(500));
    let load = Load::start(addr, producers, pairs_per_s, sample_ms, samples);
    let mut rss_trace = vec![rss_mib()];
    let deadline = load.start + Duration::from_secs(seconds + 30);
    let mut last_rss = Instant::now();
    while Instant::now() < deadline && held.last().is_none_or(|h| h.lock().expect("lock").len() < pages) {
        std::thread::sleep(Duration::from_millis(100));
        if last_rss.elapsed() >= Duration::from_secs(10) {
            rss_trace.push(rss_mib());
            last_rss = Instant::now();
        }
    }
    let elapsed = load.start.elapsed().as_secs_f64();
    let (sent, records) = (load.sent.clone(), load.records.clone());
    load.join();
    stop.store(true, Ordering::Relaxed);
    for c in clients {
        let _ = c.join();
    }
    let mut lat: Vec<f64> = Vec::new();
    let mut partial = 0;
    for (k, h) in held.iter().enumerate() {
        let h = h.lock().expect("lock");
        if h.len() < pages {
            partial += 1;
            continue;
        }
        let last = h.iter().copied().max().unwrap_or(0);
        lat.push((last as f64 - sent[k].load(Ordering::Relaxed) as f64) / 1e6);
    }
    let (p50, p95, max) = quantiles(&mut lat);
    let total = records.load(Ordering::Relaxed);
    println!(
        "producers {producers}, {seconds} s, {pairs_per_s} enter/exit pairs/s each, a sample every {sample_ms} ms, {pages} pages"
    );
    println!(
        "records sent {total} in {elapsed:.1} s: {:.0} records/s",
        total as f64 / elapsed
    );
    println!(
        "samples at every page {}/{samples} ({partial} not at every page); latency last send -> last page holding the series: p50 {p50:.1} ms, p95 {p95:.1} ms, max {max:.1} ms",
        lat.len()
    );
    println!("server resident MiB every 10 s: {rss_trace:.0?}");
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, d: u64| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(d);
    let (producers, seconds, pairs_per_s, sample_ms) = (arg(0, 1024), arg(1, 60), arg(2, 200), arg(3, 1000));
    let samples = (seconds * 1000 / sample_ms) as usize;
    if let (Ok(addr), Ok(url)) = (std::env::var("CONNECT"), std::env::var("PAGES_URL")) {
        let pages: usize = std::env::var("PAGES")
            .ok()
            .and_then(|p| p.parse().ok())
            .unwrap_or(1);
        return to_pages(&addr, &url, pages, (producers, seconds, pairs_per_s, sample_ms));
    }
    let opts = StreamOptions::default();
    let run = listen(&"tcp://127.0.0.1:0".parse().expect("address"), &opts).expect("listen");
    let addr = run
        .dir()
        .to_str()
        .expect("utf-8")
        .trim_start_matches("tcp://")
        .to_string();
    let load = Load::start(&addr, producers, pairs_per_s, sample_ms, samples);
    let (sent, records, start, rss0) = (load.sent.clone(), load.records.clone(), load.start, rss_mib());
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
    load.join();
    let mut l: Vec<f64> = latencies.lock().expect("lock").iter().map(|x| x.0).collect();
    let (p50, p95, max) = quantiles(&mut l);
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
        "samples announced {got}/{samples} ({incomplete} without every producer); latency last send -> announced: p50 {p50:.1} ms, p95 {p95:.1} ms, max {max:.1} ms"
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
