//! `POST /api/sql` end to end: an answer checked against the profile, refusals, a request
//! from another site's page, the content type, the row limit.

#![cfg(feature = "sql")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use common::{example, example_state};
use http_body_util::BodyExt;
use perfscape_server::StateOptions;
use perfscape_server::router;
use tower::ServiceExt;

async fn post(app: &axum::Router, body: &str, headers: &[(&str, &str)]) -> (StatusCode, serde_json::Value) {
    let mut req = Request::builder()
        .method("POST")
        .uri("/api/sql")
        .header("host", "localhost");
    if !headers
        .iter()
        .any(|(k, _)| k.eq_ignore_ascii_case("content-type"))
    {
        req = req.header("content-type", "application/json");
    }
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let resp = app
        .clone()
        .oneshot(req.body(Body::from(body.to_string())).unwrap())
        .await
        .unwrap();
    let status = resp.status();
    let bytes = resp.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null),
    )
}

fn q(sql: &str) -> String {
    serde_json::json!({ "query": sql }).to_string()
}

#[tokio::test]
async fn a_query_answers_the_profiles_numbers() {
    let app = router(example_state(StateOptions::default()));
    let p = example().profile;
    let (s, v) = post(
        &app,
        &q("SELECT e.name, SUM(v.exclusive) AS x, COUNT(*) AS n FROM event_values v JOIN events e USING (run, event) \
            WHERE NOT e.is_callpath GROUP BY e.name ORDER BY x DESC LIMIT 3"),
        &[],
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["columns"][1]["name"], "x");
    assert_eq!(v["columns"][1]["data_type"], "Float64");
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    for r in rows {
        let e = p.event_by_name(r[0].as_str().unwrap()).unwrap();
        let want: f64 = p.interval(e).exclusive(perfscape_model::MetricId(0)).iter().sum();
        assert!((r[1].as_f64().unwrap() - want).abs() <= 1e-9 * want, "{r}");
        assert_eq!(r[2].as_u64().unwrap() as usize, p.interval(e).len());
    }
    assert_eq!(v["truncated"], false);
}

#[tokio::test]
async fn refusals_and_limits() {
    let app = router(example_state(StateOptions::default()));
    let (s, v) = post(&app, &q("DROP TABLE runs"), &[]).await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    assert!(v["error"].as_str().unwrap().starts_with("refused"), "{v}");
    let (s, v) = post(&app, &q("SELECT nope FROM runs"), &[]).await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    assert!(v["error"].as_str().unwrap().contains("line 1, column 8"), "{v}");
    // Another site's page may not query (its Origin), nor post without JSON's content type.
    let (s, _) = post(&app, &q("SELECT 1"), &[("origin", "http://evil.example")]).await;
    assert_eq!(s, StatusCode::FORBIDDEN);
    let (s, _) = post(&app, &q("SELECT 1"), &[("content-type", "text/plain")]).await;
    assert_eq!(s, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    let (s, _) = post(&app, &q("SELECT 1"), &[("origin", "http://localhost")]).await;
    assert_eq!(s, StatusCode::OK);
    // At most MAX_ROWS rows.
    let (s, v) = post(&app, &q("SELECT x FROM generate_series(1, 20000) t(x)"), &[]).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(
        v["rows"].as_array().unwrap().len(),
        perfscape_server::endpoints::sql::MAX_ROWS
    );
    assert_eq!(v["truncated"], true);
    // GET is not a query.
    let (s, _, _) = common::request(&app, "/api/sql", &[]).await;
    assert_eq!(s, StatusCode::METHOD_NOT_ALLOWED);
}

async fn get(app: &axum::Router, uri: &str) -> (StatusCode, serde_json::Value) {
    let req = Request::builder()
        .uri(uri)
        .header("host", "localhost")
        .body(Body::empty())
        .unwrap();
    let resp = app.clone().oneshot(req).await.unwrap();
    let status = resp.status();
    let bytes = resp.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null),
    )
}

#[tokio::test]
async fn a_served_store_is_listed_and_queried() {
    use perfscape_sql::store::Store;
    let dir = tempfile::tempdir().unwrap();
    let mut set = perfscape_sql::RunSet::new();
    let opened = example();
    let threads = opened.profile.threads().len();
    let p = &opened.profile;
    let total: f64 = (0..p.events().len())
        .map(|i| perfscape_model::EventId(i as u32))
        .filter(|&e| !p.event(e).is_callpath())
        .map(|e| {
            p.interval(e)
                .exclusive(perfscape_model::MetricId(0))
                .iter()
                .sum::<f64>()
        })
        .sum();
    set.add_tagged(
        "examples/np64",
        "tau",
        vec![("build".into(), "baseline".into())],
        std::sync::Arc::new(opened),
    );
    Store::new(dir.path()).add(&set).unwrap();

    let app = router(example_state(StateOptions {
        store: Some(dir.path().to_path_buf()),
        ..StateOptions::default()
    }));
    let (s, run) = get(&app, "/api/run").await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(run["store"], dir.path().display().to_string());
    let (s, v) = get(&app, "/api/store").await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["runs"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(v["runs"][0]["run"], 0);
    assert_eq!(v["runs"][0]["name"], "np64");
    assert_eq!(v["runs"][0]["tags"]["build"], "baseline");
    assert_eq!(v["runs"][0]["threads"].as_u64().unwrap() as usize, threads);

    let body = serde_json::json!({
        "query": "SELECT t.value, SUM(v.exclusive) FROM event_values v JOIN events e USING (run, event) \
                  JOIN tags t USING (run) WHERE NOT e.is_callpath AND v.metric = 0 GROUP BY 1",
        "over": "store",
    });
    let (s, v) = post(&app, &body.to_string(), &[]).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["rows"][0][0], "baseline");
    let got = v["rows"][0][1].as_f64().unwrap();
    assert!(
        (got - total).abs() <= 1e-9 * total,
        "{got} vs the profile's {total}"
    );

    // A server without a store says so.
    let plain = router(example_state(StateOptions::default()));
    let (s, v) = get(&plain, "/api/store").await;
    assert_eq!(s, StatusCode::NOT_FOUND, "{v}");
    let (s, v) = post(&plain, &body.to_string(), &[]).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
    assert!(v["error"].as_str().unwrap().contains("no store"), "{v}");
    let (_, run) = get(&plain, "/api/run").await;
    assert!(run["store"].is_null());
}

#[tokio::test]
async fn placeholders_are_bound_to_the_selection() {
    let app = router(example_state(StateOptions::default()));
    let p = example().profile;
    let e = p.event_by_name("MPI_Allreduce()").unwrap();
    let t = p.threads()[3];
    let body = |params: serde_json::Value| {
        serde_json::json!({
            "query": "SELECT v.exclusive, th.label FROM event_values v JOIN threads th USING (run, thread) \
                      WHERE v.event = $event AND v.thread = $thread AND v.metric = COALESCE($metric, 0)",
            "params": params,
        })
        .to_string()
    };
    let (s, v) = post(
        &app,
        &body(serde_json::json!({ "event": e.0, "thread": t.to_string() })),
        &[],
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    let col = p.interval(e);
    let i = col.threads().iter().position(|x| x.index() == 3).unwrap();
    assert_eq!(
        v["rows"],
        serde_json::json!([[col.exclusive(perfscape_model::MetricId(0))[i], t.to_string()]])
    );
    // Nothing selected: NULL, so no row matches.
    let (s, v) = post(&app, &body(serde_json::json!({})), &[]).await;
    assert_eq!(
        (s, v["rows"].as_array().map(Vec::len)),
        (StatusCode::OK, Some(0)),
        "{v}"
    );
    // A thread that is not in the run, a thread that is not N.C.T, a placeholder without a value.
    let (s, v) = post(&app, &body(serde_json::json!({ "thread": "99.0.0" })), &[]).await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    assert!(v["error"].as_str().unwrap().contains("no such thread"), "{v}");
    let (s, _) = post(&app, &body(serde_json::json!({ "thread": "rank 3" })), &[]).await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    let (s, v) = post(&app, &q("SELECT $nothing"), &[]).await;
    assert_ne!(s, StatusCode::OK);
    assert!(v["error"].as_str().unwrap().contains("$nothing"), "{v}");
}

#[tokio::test]
async fn run_is_bound_to_the_compared_run() {
    // Served as `serve example np8 example`: run 1 has 8 threads, run 2 has 64.
    let np8 = perfscape_formats::open(
        &common::corpus().join("tau-real/mpi-stencil-np8-snapshot"),
        &perfscape_formats::OpenOptions::default(),
    )
    .unwrap();
    let state = perfscape_server::AppState::with_compared(
        "example",
        Ok(example()),
        vec![
            perfscape_server::ComparedRun::new("np8", Ok(np8)),
            perfscape_server::ComparedRun::new("example", Ok(example())),
        ],
        StateOptions::default(),
    );
    let app = router(state);
    let count = |run: serde_json::Value| {
        serde_json::json!({
            "query": "SELECT COUNT(*) AS n FROM threads WHERE run = $run",
            "params": { "run": run },
        })
        .to_string()
    };
    for (run, threads) in [
        (serde_json::json!(1), 8),
        (serde_json::json!(2), 64),
        (serde_json::Value::Null, 0),
    ] {
        let (s, v) = post(&app, &count(run.clone()), &[]).await;
        assert_eq!(s, StatusCode::OK, "{v}");
        assert_eq!(v["rows"], serde_json::json!([[threads]]), "$run = {run}");
    }
}
