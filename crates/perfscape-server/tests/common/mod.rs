//! Helpers shared by the server's test binaries: the corpus, the 64-rank example, and HTTP
//! requests through the router (with a `Host` the default access rules accept).

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode};
use http_body_util::BodyExt;
use perfscape_formats::{OpenOptions, Opened, open};
use perfscape_model::Profile;
use perfscape_server::cache::{Slot, ViewCache};
use perfscape_server::endpoints::View;
use perfscape_server::{AppState, StateOptions};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tower::ServiceExt;

pub fn corpus() -> PathBuf {
    let p = std::env::var_os("PERFSCAPE_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"));
    assert!(p.is_dir(), "the shared corpus is expected at {}", p.display());
    p
}

pub fn example_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/tau/mpi-stencil-np64-callpath-commmatrix")
}

pub fn example() -> Opened {
    open(&example_dir(), &OpenOptions::default()).unwrap()
}

/// A state of the example with `options`.
pub fn example_state(options: StateOptions) -> Arc<AppState> {
    AppState::new("example", Ok(example()), options)
}

/// A view of `p` (the run's slot) with `cache`.
pub fn view<'a>(p: &'a Profile, cache: &'a ViewCache) -> View<'a> {
    View::new(p, Slot::Run, cache)
}

/// A cache of the default size for tests.
pub fn cache() -> ViewCache {
    ViewCache::new(1 << 30)
}

/// `GET uri` with `headers` (and `Host: localhost` unless given): status, headers, body.
pub async fn request(
    app: &axum::Router,
    uri: &str,
    headers: &[(&str, &str)],
) -> (StatusCode, HeaderMap, String) {
    let mut req = Request::builder().uri(uri);
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        req = req.header("host", "localhost");
    }
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let resp = app
        .clone()
        .oneshot(req.body(Body::empty()).unwrap())
        .await
        .unwrap();
    let status = resp.status();
    let h = resp.headers().clone();
    let body = resp.into_body().collect().await.unwrap().to_bytes();
    (status, h, String::from_utf8_lossy(&body).to_string())
}

/// `GET uri`: status and JSON body.
pub async fn get_json(app: &axum::Router, uri: &str) -> (StatusCode, serde_json::Value) {
    let (s, _, body) = request(app, uri, &[]).await;
    (s, serde_json::from_str(&body).unwrap_or(serde_json::Value::Null))
}
