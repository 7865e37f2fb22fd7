//! The perfscape HTTP server: a JSON API over one loaded profile (see `API.md` at the
//! repository root) and the browser front end, embedded in the binary.
//!
//! ```no_run
//! # async fn demo() -> Result<(), perfscape_server::ServeError> {
//! use perfscape_server::{AppState, ServerConfig, bind, router};
//! let loaded = perfscape_formats::open("run".as_ref(), &Default::default()).map_err(|e| e.to_string());
//! let state = AppState::new("run", loaded, None);
//! let listener = bind(&ServerConfig::default()).await?;
//! axum::serve(listener, router(state)).await.ok();
//! # Ok(()) }
//! ```
//!
//! # Design constraints
//! - The heavy work (statistics, reductions to screen resolution) is done here, in Rust; the
//!   browser only asks and draws. No endpoint returns a whole events × threads matrix of a large
//!   run: matrix answers are bounded by the requested resolution (at most 4096 × 4096 bins).
//! - Safety: binds 127.0.0.1 by default; never serves a file outside its embedded assets; unknown
//!   paths are 404; a non-loopback address needs an access token, and then every request must
//!   carry it (query `token=`, `Authorization: Bearer`, or the cookie set on first use) or gets 403.

pub mod api;
mod assets;
pub mod query;
pub mod series;
pub mod share;
pub mod timeline;

use axum::Router;
use axum::extract::{Path, Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use perfscape_formats::Opened;
use query::{ApiError, ViewParams};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

/// Where and how to listen.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Address to bind. Default `127.0.0.1`.
    pub bind: IpAddr,
    /// Port; 0 (default) lets the system pick a free one.
    pub port: u16,
    /// Access token; required when `bind` is not a loopback address. Default none.
    pub token: Option<String>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            bind: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: 0,
            token: None,
        }
    }
}

/// Errors starting the server.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// A non-loopback address without a token.
    #[error(
        "refusing to listen on {0} without an access token: anyone on the network could read the profile. Add --token <secret> (or --token auto)"
    )]
    NeedsToken(IpAddr),
    /// Binding failed.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// Binds the listening socket, enforcing the token rule.
pub async fn bind(cfg: &ServerConfig) -> Result<tokio::net::TcpListener, ServeError> {
    if !cfg.bind.is_loopback() && cfg.token.is_none() {
        return Err(ServeError::NeedsToken(cfg.bind));
    }
    let addr = SocketAddr::new(cfg.bind, cfg.port);
    tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| ServeError::Bind { addr, source })
}

/// A fresh unguessable token: 128 random bits as 32 hex digits.
pub fn random_token() -> String {
    let mut b = [0u8; 16];
    // getrandom only fails when the OS has no entropy source; fall back to time + address.
    if getrandom::fill(&mut b).is_err() {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        b.copy_from_slice(&t.to_le_bytes());
    }
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The loaded run the server shows (or why it could not be loaded).
pub struct AppState {
    path: String,
    run: Result<Opened, String>,
    token: Option<String>,
    cache: query::ViewCache,
    hub: share::Hub,
    shared: bool,
    series: series::SeriesState,
    trace: Option<timeline::TraceState>,
}

/// Options of [`AppState::with_options`].
#[derive(Default)]
pub struct StateOptions {
    /// A shared session (`serve --share`).
    pub shared: bool,
    /// The run observed over time, if it has samples (snapshots, dumps, or a live run); its
    /// final profile should be `run`'s profile so that event ids agree. A live run passes its
    /// `perfscape_live::SeriesHandle` and an `Err` run ("waiting for the first sample"): the
    /// views then read its newest sample.
    pub series: Option<Arc<dyn series::SeriesSource>>,
    /// True while the series is still growing (live mode).
    pub live: bool,
    /// The trace of the run (a Chrome trace), shown by the timeline view.
    pub trace: Option<Arc<perfscape_model::Trace>>,
}

impl AppState {
    /// State for a run at `path`: the load result (an error message is shown in the page) and
    /// the access token, if any.
    pub fn new(path: impl Into<String>, run: Result<Opened, String>, token: Option<String>) -> Arc<Self> {
        Self::with_options(path, run, token, StateOptions::default())
    }

    /// Like [`AppState::new`] for a shared session (`serve --share`): the page connects to the
    /// session hub and shows who is present.
    pub fn new_shared(
        path: impl Into<String>,
        run: Result<Opened, String>,
        token: Option<String>,
    ) -> Arc<Self> {
        Self::with_options(
            path,
            run,
            token,
            StateOptions {
                shared: true,
                ..Default::default()
            },
        )
    }

    /// State for a run with the options (shared session, samples over time, live mode).
    pub fn with_options(
        path: impl Into<String>,
        run: Result<Opened, String>,
        token: Option<String>,
        options: StateOptions,
    ) -> Arc<Self> {
        Arc::new(Self {
            path: path.into(),
            run,
            token,
            cache: query::ViewCache::default(),
            hub: share::Hub::default(),
            shared: options.shared,
            series: series::SeriesState::new(options.series, options.live),
            trace: options.trace.map(timeline::TraceState::new),
        })
    }

    /// The session hub (broadcast server events to every browser through it).
    pub fn hub(&self) -> &share::Hub {
        &self.hub
    }

    /// The loaded run, or the load error.
    pub fn run(&self) -> &Result<Opened, String> {
        &self.run
    }

    /// The run's samples over time (empty for runs without any).
    pub fn series(&self) -> &series::SeriesState {
        &self.series
    }
}

type Shared = Arc<AppState>;

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        (status, axum::Json(api::ErrorResponse { error: self.message })).into_response()
    }
}

/// Runs a computation on the blocking pool against the profile the parameters' `sample`/`mode`
/// name (the run's own profile when they name none).
async fn compute_at<T: serde::Serialize + Send + 'static>(
    state: Shared,
    at: Option<&ViewParams>,
    f: impl FnOnce(&perfscape_model::Profile, &query::ViewCache) -> Result<T, ApiError> + Send + 'static,
) -> Response {
    let (sample, mode) = match at.map(series::sample_and_mode) {
        Some(Ok(x)) => x,
        Some(Err(e)) => return e.into_response(),
        None => (None, perfscape_model::SampleMode::Cumulative),
    };
    blocking(move || {
        let picked = state
            .series
            .pick(sample, mode, state.run.as_ref().ok().map(|l| &l.profile))?;
        match picked {
            series::Picked::Run => match &state.run {
                Ok(l) => f(&l.profile, &state.cache),
                Err(e) => Err(ApiError {
                    status: 503,
                    message: format!("the run did not load: {e}"),
                }),
            },
            series::Picked::Sample(p, cache) => f(&p, &cache),
        }
    })
    .await
}

/// Runs `f` on the blocking pool and answers its value as JSON, or its error.
async fn blocking<T: serde::Serialize + Send + 'static>(
    f: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Response {
    match tokio::task::spawn_blocking(f).await {
        Ok(Ok(v)) => axum::Json(v).into_response(),
        Ok(Err(e)) => e.into_response(),
        Err(e) => ApiError {
            status: 500,
            message: format!("internal error: {e}"),
        }
        .into_response(),
    }
}

async fn get_run(State(s): State<Shared>) -> Response {
    let live_info = s.run.is_err() && s.series.series().is_some();
    let mut info = if live_info {
        live_run_info(&s)
    } else {
        query::run_info(&s.path, &s.run)
    };
    info.shared = s.shared;
    info.samples = s.series.len() as u32;
    info.live = s.series.is_live();
    info.timeline = s.trace.is_some();
    axum::Json(info).into_response()
}

/// `/api/run` of a live run: described by its newest sample; `waiting` before the first.
fn live_run_info(s: &AppState) -> api::RunInfo {
    let picked = s.series.pick(None, perfscape_model::SampleMode::Cumulative, None);
    let mut report = perfscape_formats::LoadReport {
        format: "tau-snapshot (live)",
        ..Default::default()
    };
    report.notes.push(format!(
        "{} run: {} samples so far",
        if s.series.is_live() {
            "live"
        } else {
            "finished live"
        },
        s.series.len()
    ));
    let mut info = match picked {
        Ok(series::Picked::Sample(p, _)) => query::run_info_of(&s.path, &p, &report),
        _ => {
            let mut i = query::run_info(&s.path, &Err(String::new()));
            i.status = "waiting".into();
            i.error = Some("waiting for the first sample of the live run".into());
            i
        }
    };
    info.warnings.extend(s.series.warnings());
    info
}

/// Follows a live run: every [`perfscape_live::LiveEvent`] is pushed to every browser as a
/// `{"type": "event", "event": {...}}` message (the event's own JSON, e.g. `{"event":
/// "sample", "id": 3, ...}`); file errors and notices join the run's warnings; the series
/// stops being live when the run finishes. Runs on a blocking thread until the run ends.
pub fn follow_live(state: Shared, run: Arc<perfscape_live::LiveRun>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        while let Some(event) = run.recv() {
            match &event {
                perfscape_live::LiveEvent::FileError(e) => state.series.warn(e.to_string()),
                perfscape_live::LiveEvent::Notice { message } => state.series.warn(message.clone()),
                perfscape_live::LiveEvent::Finished { .. } => state.series.set_live(false),
                _ => {}
            }
            if let Ok(v) = serde_json::to_value(&event) {
                state.hub.broadcast(&share::ServerMessage::Event { event: v });
            }
        }
        state.series.set_live(false);
    })
}

async fn get_series(State(s): State<Shared>) -> Response {
    axum::Json(s.series.info()).into_response()
}

async fn get_trend(State(s): State<Shared>, Query(q): Query<ViewParams>) -> Response {
    blocking(move || s.series.trend(&q)).await
}

async fn get_kiviat(State(s): State<Shared>, Query(q): Query<ViewParams>) -> Response {
    blocking(move || s.series.kiviat(&q)).await
}

async fn get_pointcloud(State(s): State<Shared>, Query(q): Query<ViewParams>) -> Response {
    let at = q.clone();
    compute_at(s, Some(&at), move |p, _| series::pointcloud(p, &q)).await
}

async fn get_timeline(State(s): State<Shared>, Query(q): Query<ViewParams>) -> Response {
    blocking(move || match &s.trace {
        Some(t) => t.timeline(s.run.as_ref().ok().map(|l| &l.profile), &q),
        None => Err(ApiError::bad(
            "this run is not a trace: the timeline shows Chrome traces (Chrome Trace Event JSON)",
        )),
    })
    .await
}

async fn get_ws(State(s): State<Shared>, ws: axum::extract::ws::WebSocketUpgrade) -> Response {
    ws.on_upgrade(move |socket| async move { s.hub.serve(socket).await })
}

async fn get_events(State(s): State<Shared>, Query(q): Query<ViewParams>) -> Response {
    let at = q.clone();
    compute_at(s, Some(&at), move |p, c| query::events_cached(p, c, &q)).await
}

async fn get_matrix(State(s): State<Shared>, Query(q): Query<ViewParams>) -> Response {
    let at = q.clone();
    compute_at(s, Some(&at), move |p, c| query::matrix(p, c, &q)).await
}

async fn get_overview(State(s): State<Shared>, Query(q): Query<ViewParams>) -> Response {
    let at = q.clone();
    compute_at(s, Some(&at), move |p, c| query::overview(p, c, &q)).await
}

async fn get_event(State(s): State<Shared>, Path(id): Path<u32>, Query(q): Query<ViewParams>) -> Response {
    let at = q.clone();
    compute_at(s, Some(&at), move |p, _| query::event(p, id, &q)).await
}

async fn get_calltree(State(s): State<Shared>, Query(q): Query<ViewParams>) -> Response {
    let at = q.clone();
    compute_at(s, Some(&at), move |p, _| query::calltree(p, &q)).await
}

async fn get_terrain(State(s): State<Shared>, Query(q): Query<ViewParams>) -> Response {
    let at = q.clone();
    compute_at(s, Some(&at), move |p, c| query::terrain(p, c, &q)).await
}

async fn get_threads(State(s): State<Shared>, Query(q): Query<ViewParams>) -> Response {
    let at = q.clone();
    compute_at(s, Some(&at), move |p, c| query::threads(p, c, &q)).await
}

async fn get_rows(State(s): State<Shared>, Query(q): Query<ViewParams>) -> Response {
    let at = q.clone();
    compute_at(s, Some(&at), move |p, c| query::rows(p, c, &q)).await
}

async fn api_not_found() -> Response {
    ApiError::not_found("no such API endpoint (see API.md)").into_response()
}

const COOKIE: &str = "perfscape_token";

/// Token check: query `token=`, `Authorization: Bearer`, or the cookie. A valid query token
/// sets the cookie so that the page's own asset and API requests pass.
async fn require_token(State(s): State<Shared>, req: Request, next: Next) -> Response {
    let Some(token) = s.token.clone() else {
        return next.run(req).await;
    };
    let from_query = req.uri().query().and_then(|q| {
        q.split('&')
            .find_map(|kv| kv.strip_prefix("token="))
            .map(str::to_string)
    });
    let headers: &HeaderMap = req.headers();
    let from_header = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_string);
    let from_cookie = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find_map(|c| {
            c.split(';')
                .find_map(|kv| kv.trim().strip_prefix(&format!("{COOKIE}=")).map(str::to_string))
        });
    let ok = |t: &Option<String>| {
        t.as_deref()
            .is_some_and(|t| constant_time_eq(t.as_bytes(), token.as_bytes()))
    };
    if ok(&from_query) {
        let mut resp = next.run(req).await;
        if let Ok(v) = HeaderValue::from_str(&format!("{COOKIE}={token}; HttpOnly; SameSite=Strict; Path=/"))
        {
            resp.headers_mut().append(header::SET_COOKIE, v);
        }
        return resp;
    }
    if ok(&from_header) || ok(&from_cookie) {
        return next.run(req).await;
    }
    (
        StatusCode::FORBIDDEN,
        axum::Json(api::ErrorResponse {
            error: "access token required".into(),
        }),
    )
        .into_response()
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The application: API routes, embedded assets, token check, gzip.
pub fn router(state: Shared) -> Router {
    let api = Router::new()
        .route("/run", get(get_run))
        .route("/events", get(get_events))
        .route("/matrix", get(get_matrix))
        .route("/overview", get(get_overview))
        .route("/event/{id}", get(get_event))
        .route("/calltree", get(get_calltree))
        .route("/terrain", get(get_terrain))
        .route("/rows", get(get_rows))
        .route("/threads", get(get_threads))
        .route("/ws", get(get_ws))
        .route("/series", get(get_series))
        .route("/trend", get(get_trend))
        .route("/kiviat", get(get_kiviat))
        .route("/pointcloud", get(get_pointcloud))
        .route("/timeline", get(get_timeline))
        .fallback(api_not_found);
    Router::new()
        .nest("/api", api)
        .route("/", get(assets::index))
        .route("/assets/{*file}", get(assets::asset))
        .fallback(assets::not_found)
        .layer(middleware::from_fn_with_state(state.clone(), require_token))
        .layer(
            tower_http::compression::CompressionLayer::new().quality(tower_http::CompressionLevel::Fastest),
        )
        .with_state(state)
}
