//! The browser front end, built by `build.rs` into `$OUT_DIR/web` and embedded in the binary.
//! Only embedded files are ever served.

use axum::extract::Path;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

#[derive(rust_embed::RustEmbed)]
#[folder = "$OUT_DIR/web"]
struct Web;

fn file(name: &str, cache: &'static str) -> Response {
    match Web::get(name) {
        Some(f) => {
            let mime = f.metadata.mimetype().to_string();
            (
                [
                    (header::CONTENT_TYPE, mime),
                    (header::CACHE_CONTROL, cache.to_string()),
                ],
                f.data.into_owned(),
            )
                .into_response()
        }
        None => (StatusCode::NOT_FOUND, "404 not found\n").into_response(),
    }
}

/// The text of an embedded front-end file (`index.html`, `assets/<file>`), for the report.
pub(crate) fn text(name: &str) -> Option<String> {
    Web::get(name).map(|f| String::from_utf8_lossy(&f.data).into_owned())
}

/// `GET /`: the page.
pub async fn index() -> Response {
    file("index.html", "no-cache")
}

/// `GET /assets/<file>`: hashed build outputs (cacheable forever).
pub async fn asset(Path(name): Path<String>) -> Response {
    file(&format!("assets/{name}"), "public, max-age=31536000, immutable")
}

/// Anything else: 404.
pub async fn not_found() -> impl IntoResponse {
    (StatusCode::NOT_FOUND, "404 not found\n")
}
