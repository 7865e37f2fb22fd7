//! Latency of live mode end to end (not a pass/fail check): from the moment the last rank's
//! block of a sample is written into the watched directory to the moment EVERY connected
//! browser client (WebSocket) has the sample's event, through the same path as
//! `perfscape serve --watch`: watcher, integrator, `follow_live`, the session hub, WebSocket.
//!
//! `cargo run --release -p perfscape-server --example live_push_latency -- [RANKS...]`
//! (default 64 and 1024; 4 clients). The run is `perfscape_live::synthetic::snapshot_run` of
//! `../shared/corpus/tau-real/mpi-stencil-np8-snapshot` (rank `r` = the real file of rank
//! `r % 8` renamed): for every sample the writer appends that block of every rank as fast as
//! it can, notes the time after the last write, waits until every client has the event, and
//! pauses 50 ms. Sample 0 (which includes the 200 ms wait for more threads to appear) is
//! reported apart.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use futures_util::StreamExt;
use perfscape_live::synthetic::{append, snapshot_run};
use perfscape_live::{LiveOptions, watch};
use perfscape_server::{AppState, ServerConfig, StateOptions, bind, follow_live, router};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_tungstenite::tungstenite::Message;

const CLIENTS: usize = 4;

fn corpus_run() -> PathBuf {
    let p = std::env::var_os("PERFSCAPE_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"));
    p.join("tau-real/mpi-stencil-np8-snapshot")
}

/// Per client, the time each sample id arrived.
type Arrivals = Arc<Mutex<Vec<Vec<Option<Instant>>>>>;

async fn measure(ranks: usize) -> (Vec<Duration>, Duration) {
    let files = snapshot_run(&corpus_run(), ranks).unwrap();
    let rounds = files[0].blocks.len();
    let dir = tempfile::tempdir().unwrap();
    let live = Arc::new(
        watch(
            dir.path(),
            &LiveOptions {
                max_wait: Some(Duration::from_secs(60)),
                ..LiveOptions::default()
            },
        )
        .unwrap(),
    );
    let cfg = ServerConfig::default();
    let listener = bind(&cfg).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let state = AppState::live(
        "live latency",
        Arc::new(live.series().clone()),
        StateOptions {
            access: cfg.access(addr),
            ..Default::default()
        },
    );
    let app = router(state.clone());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let arrivals: Arrivals = Arc::new(Mutex::new(vec![vec![None; rounds]; CLIENTS]));
    for c in 0..CLIENTS {
        let (mut ws, _) = tokio_tungstenite::connect_async(format!("ws://{addr}/api/ws"))
            .await
            .unwrap();
        let arrivals = arrivals.clone();
        tokio::spawn(async move {
            while let Some(Ok(msg)) = ws.next().await {
                let Message::Text(t) = msg else { continue };
                let now = Instant::now();
                let v: serde_json::Value = serde_json::from_str(&t).unwrap();
                if v["type"] == "event"
                    && v["event"]["event"] == "sample"
                    && let Some(id) = v["event"]["id"].as_u64()
                    && let Some(slot) = arrivals.lock().unwrap()[c].get_mut(id as usize)
                {
                    *slot = Some(now);
                }
            }
        });
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    // Follow only once every client listens, so that each sees every sample.
    let follower = follow_live(state.clone(), live.clone());
    let mut lat = Vec::new();
    let mut first = Duration::ZERO;
    let dirp = dir.path().to_path_buf();
    for k in 0..rounds {
        for f in &files {
            append(&dirp.join(&f.name), &f.bytes[f.blocks[k].clone()]).unwrap();
        }
        let written = Instant::now();
        let got = loop {
            {
                let a = arrivals.lock().unwrap();
                if a.iter().all(|c| c[k].is_some()) {
                    break a.iter().filter_map(|c| c[k]).max().unwrap();
                }
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        };
        if k == 0 {
            first = got.saturating_duration_since(written);
        } else {
            lat.push(got.saturating_duration_since(written));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    live.stop();
    tokio::task::spawn_blocking(move || follower.join().unwrap())
        .await
        .unwrap();
    (lat, first)
}

fn pct(v: &mut [Duration], p: f64) -> Duration {
    v.sort();
    v[((v.len() - 1) as f64 * p).round() as usize]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

fn main() {
    let ranks: Vec<usize> = {
        let a: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
        if a.is_empty() { vec![64, 1024] } else { a }
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    println!("| ranks | clients | samples | p50 | p95 | max | sample 0 (incl. 200 ms thread grace) |");
    println!("|---|---|---|---|---|---|---|");
    for &n in &ranks {
        let reps = if n <= 128 { 3 } else { 2 };
        let mut all = Vec::new();
        let mut firsts = Vec::new();
        for _ in 0..reps {
            let (lat, first) = rt.block_on(measure(n));
            all.extend(lat);
            firsts.push(first);
        }
        println!(
            "| {n} | {CLIENTS} | {} | {} | {} | {} | {} |",
            all.len(),
            ms(pct(&mut all, 0.5)),
            ms(pct(&mut all, 0.95)),
            ms(pct(&mut all, 1.0)),
            ms(pct(&mut firsts, 0.5)),
        );
    }
}
