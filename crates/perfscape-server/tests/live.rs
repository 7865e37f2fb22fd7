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

/// `POST /api/replay` with `body` (JSON), optionally from a page of `origin`.
async fn post_replay(app: &axum::Router, body: &str, origin: Option<&str>) -> (u16, serde_json::Value) {
    use http_body_util::BodyExt;
    use tower::ServiceExt;
    let mut req = axum::http::Request::builder()
        .method("POST")
        .uri("/api/replay")
        .header("host", "localhost")
        .header("content-type", "application/json");
    if let Some(o) = origin {
        req = req.header("origin", o);
    }
    let resp = app
        .clone()
        .oneshot(req.body(axum::body::Body::from(body.to_string())).unwrap())
        .await
        .unwrap();
    let status = resp.status().as_u16();
    let bytes = resp.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null),
    )
}

/// The live events pushed on `ws` until `finished`: `(kind, id or generation)`.
async fn events_until_finished<S>(ws: &mut S) -> Vec<(String, u64)>
where
    S: futures_util::Stream<Item = Result<Message, tokio_tungstenite::tungstenite::Error>> + Unpin,
{
    let mut seen = Vec::new();
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
        let kind = v["event"]["event"].as_str().unwrap().to_string();
        match kind.as_str() {
            "sample" => seen.push((kind, v["event"]["id"].as_u64().unwrap())),
            "restarted" => seen.push((kind, v["event"]["generation"].as_u64().unwrap())),
            "finished" => {
                seen.push((kind, 0));
                return seen;
            }
            _ => {}
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replay_waits_for_the_first_page_and_starts_again_from_its_first_sample() {
    use perfscape_live::ReplayPlan;
    use perfscape_server::replay::Replay;
    // At 5 times its pace the run's 21 samples take ~0.3 s: held, it waits for the page.
    let opts = ReplayOptions {
        speed: 5.0,
        into: None,
        live: LiveOptions::default(),
    };
    let replay = Replay::start(ReplayPlan::from_dir(&run_dir()).unwrap(), opts, true).unwrap();
    let listener = bind(&ServerConfig::default()).await.unwrap();
    let addr = listener.local_addr().unwrap();
    let state = AppState::replayed("np8 (replay)", replay.clone(), StateOptions::default());
    let app = router(state.clone());
    let served = app.clone();
    tokio::spawn(async move { axum::serve(listener, served).await.unwrap() });
    // The first sample arrives; then the replay holds. (Wait for the sample itself, not only
    // for the run to be up: on a loaded machine the first can come well after the second.)
    let mut run = get(&app, "/api/run").await;
    for _ in 0..300 {
        if run["status"] == "ok" && run["samples"].as_u64().is_some_and(|n| n >= 1) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        run = get(&app, "/api/run").await;
    }
    assert_eq!(run["status"], "ok", "{run}");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let run = get(&app, "/api/run").await;
    assert_eq!(
        run["samples"], 1,
        "held at the first sample until a page connects"
    );
    assert_eq!(run["live"], true);
    assert_eq!(run["replay"], true);
    assert!(replay.status().held);
    // A page connects: the rest of the run is pushed to it, in order.
    let (mut ws, _) = tokio_tungstenite::connect_async(format!("ws://{addr}/api/ws"))
        .await
        .unwrap();
    let first = events_until_finished(&mut ws).await;
    let ids: Vec<u64> = first
        .iter()
        .filter(|(k, _)| k == "sample")
        .map(|(_, i)| *i)
        .collect();
    assert_eq!(ids, (1..21).collect::<Vec<u64>>(), "{first:?}");
    let run = get(&app, "/api/run").await;
    assert_eq!(
        (run["samples"].as_u64(), run["live"].as_bool()),
        (Some(21), Some(false))
    );
    let series_before = get(&app, "/api/series").await;
    let trend_before = get(&app, "/api/trend?event=0").await;
    // From another site's page: refused; an unknown action: refused.
    let (status, _) = post_replay(&app, r#"{"action":"restart"}"#, Some("http://evil.example")).await;
    assert_eq!(status, 403);
    let (status, _) = post_replay(&app, r#"{"action":"rewind"}"#, None).await;
    assert!((400..500).contains(&status), "{status}");
    // Again from the start: every page is told, then gets every sample from the first.
    let (status, answer) = post_replay(&app, r#"{"action":"restart"}"#, None).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["generation"], 2);
    let second = events_until_finished(&mut ws).await;
    assert_eq!(second[0], ("restarted".to_string(), 2), "{second:?}");
    let ids: Vec<u64> = second
        .iter()
        .filter(|(k, _)| k == "sample")
        .map(|(_, i)| *i)
        .collect();
    assert_eq!(ids, (0..21).collect::<Vec<u64>>(), "{second:?}");
    assert_eq!(
        second.iter().filter(|(k, _)| k == "finished").count(),
        1,
        "the stopped replay's end is not pushed"
    );
    let run = get(&app, "/api/run").await;
    assert_eq!(
        (run["samples"].as_u64(), run["live"].as_bool()),
        (Some(21), Some(false))
    );
    // The same samples and answers as the first time (the old ones are not read from the cache).
    assert_eq!(
        get(&app, "/api/series").await["samples"],
        series_before["samples"]
    );
    assert_eq!(get(&app, "/api/trend?event=0").await, trend_before);
    replay.stop();
}

#[tokio::test]
async fn a_run_not_replayed_cannot_be_restarted() {
    let state = AppState::new("nothing", Err("no run".into()), StateOptions::default());
    let (status, answer) = post_replay(&router(state), r#"{"action":"restart"}"#, None).await;
    assert_eq!(status, 404, "{answer}");
}
