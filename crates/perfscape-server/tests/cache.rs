//! The server's one cache: each key computed once however many requests miss it at the same
//! time, everything within one memory budget, and answers unchanged after evictions.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use axum::http::StatusCode;
use common::{example_state, get_json};
use perfscape_analysis::axis::ThreadOrder;
use perfscape_analysis::views::{Reduce, RowKind};
use perfscape_model::ValueKind;
use perfscape_server::StateOptions;
use perfscape_server::request::{MatrixRequest, OverviewRequest};

fn uri(path: &str, q: &impl serde::Serialize) -> String {
    format!("{path}?{}", serde_urlencoded::to_string(q).unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_identical_requests_compute_each_key_once() {
    let state = example_state(StateOptions::default());
    let app = perfscape_server::router(state.clone());
    // A clustered axis: rows, axis (k-means), and the pyramid of every event row (its own key:
    // the rows it is cut from, `RowSpec::shared`), four keys.
    let q = uri(
        "/api/matrix",
        &MatrixRequest {
            threads: Some(ThreadOrder::Cluster),
            clusters: Some(5),
            ..Default::default()
        },
    );
    let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(16));
    let tasks: Vec<_> = (0..16)
        .map(|_| {
            let (app, q, barrier) = (app.clone(), q.clone(), barrier.clone());
            tokio::spawn(async move {
                barrier.wait().await;
                get_json(&app, &q).await
            })
        })
        .collect();
    let mut answers = Vec::new();
    for t in tasks {
        let (s, j) = t.await.unwrap();
        assert_eq!(s, StatusCode::OK, "{j}");
        answers.push(j);
    }
    assert!(answers.windows(2).all(|w| w[0] == w[1]));
    let stats = state.cache_stats();
    assert_eq!(
        stats.computations, 4,
        "rows, every event row, axis and pyramid once each: {stats:?}"
    );
    assert_eq!(stats.entries, 4);
    // Another view over the same rows and axis reuses them: nothing new is computed.
    let (s, _) = get_json(
        &app,
        &uri(
            "/api/overview",
            &OverviewRequest {
                threads: Some(ThreadOrder::Cluster),
                clusters: Some(5),
                ..Default::default()
            },
        ),
    )
    .await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(state.cache_stats().computations, 4);
}

#[tokio::test]
async fn a_tiny_budget_evicts_and_answers_stay_the_same() {
    let budget = 200_000;
    let small = example_state(StateOptions {
        cache_memory: Some(budget),
        ..Default::default()
    });
    let large = example_state(StateOptions::default());
    let (small_app, large_app) = (
        perfscape_server::router(small.clone()),
        perfscape_server::router(large),
    );
    // Many distinct views: kinds × row kinds × orders × callpaths, each its own rows and pyramid.
    let mut requests = Vec::new();
    for kind in [ValueKind::Exclusive, ValueKind::Inclusive, ValueKind::Calls] {
        for callpaths in [false, true] {
            for threads in [ThreadOrder::Id, ThreadOrder::Cluster] {
                requests.push(MatrixRequest {
                    kind: Some(kind),
                    callpaths: Some(callpaths),
                    threads: Some(threads),
                    rows: Some(RowKind::Events),
                    reduce: Some(Reduce::Max),
                    h: Some(64),
                    w: Some(16),
                    ..Default::default()
                });
            }
        }
    }
    let mut first = Vec::new();
    for q in &requests {
        let (s, j) = get_json(&small_app, &uri("/api/matrix", q)).await;
        assert_eq!(s, StatusCode::OK, "{j}");
        let (_, want) = get_json(&large_app, &uri("/api/matrix", q)).await;
        assert_eq!(j, want, "the same answer with a tiny budget");
        first.push(j);
        let st = small.cache_stats();
        assert!(st.bytes <= budget, "{st:?}");
    }
    let after_first_pass = small.cache_stats();
    assert!(
        after_first_pass.entries < after_first_pass.computations,
        "entries were evicted: {after_first_pass:?}"
    );
    // Asked again after the evictions: recomputed, the same numbers.
    for (q, want) in requests.iter().zip(&first) {
        let (_, j) = get_json(&small_app, &uri("/api/matrix", q)).await;
        assert_eq!(&j, want);
    }
    let st = small.cache_stats();
    assert!(st.computations > after_first_pass.computations, "{st:?}");
    assert!(st.bytes <= budget, "{st:?}");
}

/// `GET /api/memory` tells what the cache holds (as `cache_stats`), and while 24 requests for
/// different clusterings are answered no more computations run at once than there are slots
/// (cores); every request is answered and the counters come back to zero.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn computations_run_at_most_one_per_core_and_memory_tells_the_cache() {
    let state = example_state(StateOptions::default());
    let app = perfscape_server::router(state.clone());
    let (s, m) = get_json(&app, "/api/memory").await;
    assert_eq!(s, StatusCode::OK, "{m}");
    let slots = m["slots"].as_u64().unwrap();
    let cores = std::thread::available_parallelism().unwrap().get() as u64;
    assert_eq!(slots, cores);
    // The budget holds the loaded run and the cache.
    let (budget, loaded) = state.memory_budget();
    assert!(loaded > 100_000, "the 64-rank example weighs {loaded} bytes");
    assert_eq!(m["budget_bytes"].as_f64().unwrap(), budget as f64);
    assert_eq!(m["loaded_bytes"].as_f64().unwrap(), loaded as f64);
    assert_eq!(
        m["cache_budget_bytes"].as_f64().unwrap(),
        state.cache_stats().budget as f64
    );
    assert_eq!(state.cache_stats().budget, budget - loaded);
    let tasks: Vec<_> = (1..=24u32)
        .map(|k| {
            let app = app.clone();
            let q = uri(
                "/api/matrix",
                &MatrixRequest {
                    threads: Some(ThreadOrder::Cluster),
                    clusters: Some(k),
                    ..Default::default()
                },
            );
            tokio::spawn(async move { get_json(&app, &q).await.0 })
        })
        .collect();
    // Watch the counters while the requests are answered.
    let mut most = 0;
    let mut waited = false;
    while tasks.iter().any(|t| !t.is_finished()) {
        let (_, m) = get_json(&app, "/api/memory").await;
        most = most.max(m["computing"].as_u64().unwrap());
        waited |= m["waiting"].as_u64().unwrap() > 0;
        tokio::task::yield_now().await;
    }
    for t in tasks {
        assert_eq!(t.await.unwrap(), StatusCode::OK);
    }
    assert!(most <= slots, "{most} computations at once with {slots} slots");
    if slots < 24 {
        assert!(waited, "24 requests on {slots} slots: some must have waited");
    }
    let (_, m) = get_json(&app, "/api/memory").await;
    assert_eq!(
        (m["computing"].as_u64(), m["waiting"].as_u64()),
        (Some(0), Some(0)),
        "{m}"
    );
    let stats = state.cache_stats();
    assert_eq!(m["held_bytes"].as_f64().unwrap(), stats.bytes as f64);
    assert_eq!(m["entries"].as_f64().unwrap(), stats.entries as f64);
    assert!(stats.entries > 0);
    if cfg!(target_os = "linux") {
        assert!(m["rss_bytes"].as_f64().unwrap() > 1e6, "{m}");
    }
}

/// The `X-Perfscape-Cache` header tells how an answer was made: the first request of a
/// clustered heat map computes its stages (`miss`), the same request again finds them all
/// (`hit`), a view with no cached stage (one event across threads) is `direct`; every answer
/// says how long it waited for a slot and computed (`Server-Timing`).
#[tokio::test]
async fn answers_say_whether_their_stages_were_cached() {
    let state = example_state(StateOptions::default());
    let app = perfscape_server::router(state.clone());
    let q = uri(
        "/api/matrix",
        &MatrixRequest {
            threads: Some(ThreadOrder::Cluster),
            clusters: Some(3),
            ..Default::default()
        },
    );
    let how = |h: &axum::http::HeaderMap| {
        let cache = h
            .get("x-perfscape-cache")
            .map(|v| v.to_str().unwrap().to_string());
        let timing = h.get("server-timing").map(|v| v.to_str().unwrap().to_string());
        (cache, timing)
    };
    let (s, h, _) = common::request(&app, &q, &[]).await;
    assert_eq!(s, StatusCode::OK);
    let (cache, timing) = how(&h);
    assert_eq!(cache.as_deref(), Some("miss"));
    let timing = timing.unwrap();
    assert!(
        timing.starts_with("wait;dur=") && timing.contains(", compute;dur="),
        "{timing}"
    );
    // Rows, every event row (the pyramid's), axis, pyramid.
    assert_eq!(state.cache_stats().computations, 4);
    let (s, h, _) = common::request(&app, &q, &[]).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(how(&h).0.as_deref(), Some("hit"));
    assert_eq!(state.cache_stats().computations, 4, "nothing computed again");
    // Another thread axis (by id) over the same rows: its axis (and a pyramid) are computed.
    let zoom = uri(
        "/api/matrix",
        &MatrixRequest {
            r0: Some(0),
            r1: Some(1),
            ..Default::default()
        },
    );
    let (s, h, body) = common::request(&app, &zoom, &[]).await;
    assert_eq!(s, StatusCode::OK, "{body}");
    assert_eq!(how(&h).0.as_deref(), Some("miss"));
    let (s, h, _) = common::request(&app, "/api/event/0", &[]).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(how(&h).0.as_deref(), Some("direct"));
}
