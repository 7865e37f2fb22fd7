//! Live mode end to end: a replay of a real snapshot run is watched, each sample is pushed to a
//! WebSocket client exactly once and in order, the API answers from the growing series, and
//! when the run has finished every number equals the batch load of the same run.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use futures_util::StreamExt;
use perfscape_analysis::answers;
use perfscape_analysis::params::Values;
use perfscape_formats::OpenOptions;
use perfscape_live::{LiveOptions, ReplayOptions, replay};
use perfscape_model::SampleMode;
use perfscape_server::{AppState, ServerConfig, StateOptions, bind, follow_live, router};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio_tungstenite::tungstenite::Message;

fn run_dir() -> PathBuf {
    let p = std::env::var_os("PERFSCAPE_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"));
    p.join("tau-real/mpi-stencil-np8-snapshot")
}

async fn get(app: &axum::Router, uri: &str) -> serde_json::Value {
    common::get_json(app, uri).await.1
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn samples_are_pushed_once_in_order_and_equal_the_batch_load() {
    // The run's 21 samples span ~1.4 s; at twice its pace they arrive over ~0.7 s.
    let live = Arc::new(
        replay(
            &run_dir(),
            &ReplayOptions {
                speed: 2.0,
                into: None,
                live: LiveOptions::default(),
            },
        )
        .unwrap(),
    );
    let listener = bind(&ServerConfig::default()).await.unwrap();
    let addr = listener.local_addr().unwrap();
    // The default access rules (loopback names, any port): the test asks both through the
    // socket and through the router directly.
    let state = AppState::live(
        "np8 (replay)",
        Arc::new(live.series().clone()),
        StateOptions::default(),
    );
    let app = router(state.clone());
    let served = app.clone();
    tokio::spawn(async move { axum::serve(listener, served).await.unwrap() });
    let (mut ws, _) = tokio_tungstenite::connect_async(format!("ws://{addr}/api/ws"))
        .await
        .unwrap();
    // Follow only once the client listens, so that it sees every event.
    let follower = follow_live(state.clone(), live.clone());
    let mut ids = Vec::new();
    let mut mid_run_checked = false;
    loop {
        let msg = tokio::time::timeout(Duration::from_secs(30), ws.next())
            .await
            .expect("an event within 30 s")
            .unwrap()
            .unwrap();
        let Message::Text(t) = msg else { continue };
        let v: serde_json::Value = serde_json::from_str(&t).unwrap();
        if v["type"] != "event" {
            continue;
        }
        match v["event"]["event"].as_str().unwrap() {
            "sample" => {
                ids.push(v["event"]["id"].as_u64().unwrap());
                if ids.len() == 3 && !mid_run_checked {
                    // While the run goes on, the API answers from the samples so far.
                    mid_run_checked = true;
                    let run = get(&app, "/api/run").await;
                    assert_eq!(run["status"], "ok", "{run}");
                    assert!(run["samples"].as_u64().unwrap() >= 3);
                    let ev = get(&app, "/api/events").await;
                    assert!(!ev["rows"].as_array().unwrap().is_empty());
                }
            }
            "finished" => break,
            _ => {}
        }
    }
    follower.join().unwrap();
    assert_eq!(ids, (0..21).collect::<Vec<u64>>(), "every sample once, in order");
    assert!(mid_run_checked);
    let run = get(&app, "/api/run").await;
    assert_eq!(run["status"], "ok");
    assert_eq!(run["samples"], 21);
    assert_eq!(run["live"], false);
    assert_eq!(run["threads"], 8);
    // The finished live series answers exactly like the batch load of the same run.
    let batch = perfscape_formats::open(&run_dir(), &OpenOptions::default())
        .unwrap()
        .series
        .unwrap();
    let ours = get(&app, "/api/series").await;
    let theirs = serde_json::to_value(answers::samples(Some(&batch), false)).unwrap();
    assert_eq!(ours["samples"], theirs["samples"]);
    // Event ids follow the order events were first seen, which differs: match them by name.
    let live_ids: Vec<u32> = {
        let live_series = state.series().series().unwrap().read();
        (0..batch.timer_count() as u32)
            .map(|e| {
                live_series
                    .timer_by_name(batch.timer_name(perfscape_model::EventId(e)))
                    .unwrap()
                    .0
            })
            .collect()
    };
    let values = Values::new(batch.metrics(), None, None).unwrap();
    for e in 0..batch.timer_count() as u32 {
        for (mode, m) in [
            ("cumulative", SampleMode::Cumulative),
            ("delta", SampleMode::Delta),
        ] {
            let id = live_ids[e as usize];
            let ours = get(&app, &format!("/api/trend?event={id}&mode={mode}")).await;
            let theirs = answers::trend(&batch, e, values, m).unwrap();
            assert_eq!(
                ours["points"].to_string(),
                serde_json::to_value(&theirs).unwrap()["points"].to_string(),
                "event {e} {mode}"
            );
        }
    }
}
