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
    // A clustered axis: rows, axis (k-means) and pyramid, three keys.
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
        stats.computations, 3,
        "rows, axis and pyramid once each: {stats:?}"
    );
    assert_eq!(stats.entries, 3);
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
    assert_eq!(state.cache_stats().computations, 3);
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
