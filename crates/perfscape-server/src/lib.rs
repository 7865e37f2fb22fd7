//! The perfscape HTTP server: a JSON API over one run (see `API.md` at the repository root)
//! and the browser front end, embedded in the binary.
//!
//! ```no_run
//! # async fn demo() -> Result<(), perfscape_server::ServeError> {
//! use perfscape_server::{Access, AppState, ServerConfig, StateOptions, bind, random_token, router};
//! let cfg = ServerConfig { token: Some(random_token()), ..ServerConfig::default() };
//! let listener = bind(&cfg).await?;
//! let access = cfg.access(listener.local_addr().map_err(|e| perfscape_server::ServeError::Io(e))?);
//! let state = AppState::open("run".as_ref(), &Default::default(), StateOptions { access, ..Default::default() });
//! axum::serve(listener, router(state)).await.ok();
//! # Ok(()) }
//! ```
//!
//! # Design constraints
//! - Thin: each endpoint parses its typed request ([`request`]) and asks one function of
//!   [`perfscape_analysis::answers`]; the server only picks the profile (the run's or a
//!   sample's, [`series`]), caches, and serves.
//! - Bounded: no answer grows with the number of threads beyond its bounds (matrix answers at
//!   most 4096 × 4096 bins); everything kept between requests shares one memory budget
//!   ([`cache`]), least recently used evicted, each key computed once.
//! - Closed: binds 127.0.0.1 by default; requests must name the server (`Host`), WebSockets
//!   come from its own pages (`Origin`), a token guards every request unless turned off on
//!   loopback, security headers on every response ([`access`]); only embedded assets are
//!   served, unknown paths are 404.

pub mod access;
pub mod api;
mod assets;
pub mod cache;
mod cancel;
mod compute;
pub mod dashboard;
pub mod endpoints;
mod error;
pub mod replay;
pub mod report;
pub mod request;
pub mod series;
pub mod share;
pub mod sources;
mod state;

pub use access::Access;
pub use error::ApiError;
pub use state::{AppState, ComparedRun, Run, StateOptions};

/// The process's resident memory in bytes (Linux: `VmRSS` of `/proc/self/status`); `None`
/// elsewhere. `serve` gives it as [`StateOptions::resident_bytes`] once the runs are loaded.
pub fn resident_bytes() -> Option<u64> {
    compute::rss_bytes().map(|b| b as u64)
}

use axum::Router;
use axum::extract::{Path, State};
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use endpoints::View;
use request::{
    ArchitectureRequest, At, CallTreeRequest, CategoriesRequest, CommRequest, DiffMatrixRequest, DiffRequest,
    DiffThreadsRequest, DiffTreeRequest, DisasmRequest, EventRequest, EventsRequest, FindingsRequest,
    KiviatRequest, MatrixRequest, OverviewRequest, Params, PointCloudRequest, RowsRequest, ScalingRequest,
    SourceRequest, TerrainRequest, ThreadsRequest, TimelineRequest, TimelineSearchRequest, TrendRequest,
    UserEventRequest, UserEventsRequest,
};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

/// Where and how to listen.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Address to bind. Default `127.0.0.1`.
    pub bind: IpAddr,
    /// Port; 0 (default) lets the system pick a free one.
    pub port: u16,
    /// Access token; required when `bind` is not a loopback address. Default none (the CLI
    /// makes a random one unless told `--no-token`).
    pub token: Option<String>,
    /// Host names accepted beside the bound address and the loopback names (`--allow-host`).
    pub allow_hosts: Vec<String>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            bind: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: 0,
            token: None,
            allow_hosts: Vec::new(),
        }
    }
}

impl ServerConfig {
    /// The access rules of this configuration once listening on `addr`.
    pub fn access(&self, addr: SocketAddr) -> Access {
        Access::new(addr, self.token.clone(), &self.allow_hosts)
    }
}

/// Errors starting the server.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// A non-loopback address without a token.
    #[error(
        "refusing to listen on {0} without an access token: anyone on the network could read the profile. Drop --no-token (a random token is the default) or give --token <secret>"
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
    /// Another I/O error (reading the bound address).
    #[error("{0}")]
    Io(#[from] std::io::Error),
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

type Shared = Arc<AppState>;

use compute::{blocking, json_on_pool};

/// Runs `f` on the blocking pool against the profile `at` names (the run's own profile when
/// it names none), and answers its value as JSON or its error.
async fn answer<T: serde::Serialize + Send + 'static>(
    state: Shared,
    at: At,
    f: impl FnOnce(View<'_>) -> Result<T, ApiError> + Send + 'static,
) -> Response {
    blocking(&state.compute.clone(), move || {
        let run = state.run.as_ref().ok().map(|r| &r.profile);
        match state.series.pick(&state.cache, at, run)? {
            series::Picked::Run => match &state.run {
                Ok(r) => f(View::new(&r.profile, cache::Slot::Run, &state.cache)),
                Err(e) => Err(ApiError::unavailable(format!("the run did not load: {e}"))),
            },
            series::Picked::Sample(p, slot) => f(View::new(&p, slot, &state.cache)),
        }
    })
    .await
}

/// `GET /api/memory`: what the server keeps against its budget, and its computations.
async fn get_memory(State(s): State<Shared>) -> Response {
    axum::Json(compute::memory(s.memory_budget(), s.cache_stats(), &s.compute)).into_response()
}

async fn get_run(State(s): State<Shared>) -> Response {
    axum::Json(run_info(&s)).into_response()
}

/// What `GET /api/run` answers for state `s`.
fn run_info(s: &AppState) -> api::RunInfo {
    let mut info = match &s.run {
        Ok(r) => endpoints::run::loaded(&s.path, &r.profile, &r.report),
        Err(_) if s.series.series().is_some() => live_run_info(s),
        Err(e) => endpoints::run::failed(&s.path, e),
    };
    info.shared = s.shared;
    info.store = s.store.as_ref().map(|d| d.display().to_string());
    info.dashboards = s.dashboards.list();
    info.layout = s.dashboards.layout_path().map(|p| p.display().to_string());
    info.filter = s.filter.clone();
    info.samples = s.series.len() as u32;
    info.live = s.series.is_live();
    info.replay = s.replay.is_some();
    info.timeline = s.trace.is_some();
    info.comm |= s
        .trace
        .as_ref()
        .is_some_and(|t| perfscape_analysis::comm::has_trace_messages(t.trace()));
    info.compared = s
        .compared
        .iter()
        .map(|c| api::ComparedInfo {
            path: c.path.clone(),
            threads: c.run.as_ref().map_or(0, |r| r.profile.threads().len() as u32),
            error: match (&s.run, &c.run) {
                (_, Err(e)) => Some(e.clone()),
                (Ok(a), Ok(_)) => c.matched(&a.profile).err(),
                (Err(_), Ok(_)) => None,
            },
        })
        .collect();
    info.scaling = match &s.run {
        Ok(r) => {
            let mut counts: Vec<f64> = endpoints::compare::scaling_runs(&r.profile, &s.compared)
                .iter()
                .map(|x| x.0)
                .collect();
            counts.sort_by(f64::total_cmp);
            counts.dedup();
            counts.len() >= 2
        }
        Err(_) => false,
    };
    info
}

/// `/api/run` of a live run: described by its newest sample; `waiting` before the first.
fn live_run_info(s: &AppState) -> api::RunInfo {
    let picked = s.series.pick(&s.cache, At::default(), None);
    let mut report = perfscape_formats::LoadReport {
        format: s.live_format,
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
    let dropped = s.hub.dropped();
    if dropped > 0 {
        report.notes.push(format!(
            "{dropped} pushed messages were missed by pages that read too slowly (each read the series again)"
        ));
    }
    let mut info = match picked {
        Ok(series::Picked::Sample(p, _)) => endpoints::run::loaded(&s.path, &p, &report),
        _ => {
            let mut i = endpoints::run::failed(&s.path, "waiting for the first sample of the live run");
            i.status = "waiting".into();
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
            replay::on_live_event(&state.series, &state.hub, &event);
        }
        state.series.set_live(false);
    })
}

async fn get_series(State(s): State<Shared>) -> Response {
    axum::Json(endpoints::series::samples(&s.series)).into_response()
}

async fn get_trend(State(s): State<Shared>, Params(q): Params<TrendRequest>) -> Response {
    blocking(&s.compute.clone(), move || {
        endpoints::series::trend(&s.series, &q)
    })
    .await
}

async fn get_kiviat(State(s): State<Shared>, Params(q): Params<KiviatRequest>) -> Response {
    blocking(&s.compute.clone(), move || {
        endpoints::series::kiviat(&s.series, &q)
    })
    .await
}

async fn get_pointcloud(State(s): State<Shared>, Params(q): Params<PointCloudRequest>) -> Response {
    answer(s, q.at(), move |v| endpoints::series::pointcloud(v, &q)).await
}

async fn get_timeline(State(s): State<Shared>, Params(q): Params<TimelineRequest>) -> Response {
    blocking(&s.compute.clone(), move || {
        let profile = s.run.as_ref().ok().map(|r| &r.profile);
        endpoints::timeline::get(s.trace.as_ref(), profile, &q)
    })
    .await
}

async fn get_timeline_search(State(s): State<Shared>, Params(q): Params<TimelineSearchRequest>) -> Response {
    blocking(&s.compute.clone(), move || {
        endpoints::timeline::search(s.trace.as_ref(), &q)
    })
    .await
}

async fn get_ws(State(s): State<Shared>, ws: axum::extract::ws::WebSocketUpgrade) -> Response {
    ws.on_upgrade(move |socket| async move {
        // A replay held for the first page (`--wait-for-page`) goes on.
        if let Some(r) = &s.replay {
            r.page_connected();
        }
        s.hub.serve(socket).await;
    })
}

/// `POST /api/replay` (JSON body `{"action": "restart"}`): a run served with `--replay` is
/// written again from its first sample; 404 for other runs. Refused from another site's page
/// as `POST /api/sql` is.
async fn post_replay(
    State(s): State<Shared>,
    headers: axum::http::HeaderMap,
    axum::Json(q): axum::Json<replay::ReplayRequest>,
) -> Response {
    if let Some(origin) = headers.get(axum::http::header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        if !s.access().origin_allowed(origin) {
            return ApiError::forbidden(format!(
                "a replay request from the page of `{origin}`, which is not this server"
            ))
            .into_response();
        }
    }
    // Not in a view computation slot: stopping the replay waits for its writer.
    json_on_pool(move || {
        let r = s
            .replay
            .as_ref()
            .ok_or_else(|| ApiError::not_found("the run is not served with --replay"))?;
        match q.action {
            replay::ReplayAction::Restart => r.restart(s.clone()),
        }
    })
    .await
}

async fn get_events(State(s): State<Shared>, Params(q): Params<EventsRequest>) -> Response {
    answer(s, q.at(), move |v| endpoints::events::get(v, &q)).await
}

async fn get_rows(State(s): State<Shared>, Params(q): Params<RowsRequest>) -> Response {
    answer(s, q.at(), move |v| endpoints::matrix::rows(v, &q)).await
}

async fn get_matrix(State(s): State<Shared>, Params(q): Params<MatrixRequest>) -> Response {
    answer(s, q.at(), move |v| endpoints::matrix::matrix(v, &q)).await
}

async fn get_overview(State(s): State<Shared>, Params(q): Params<OverviewRequest>) -> Response {
    answer(s, q.at(), move |v| endpoints::matrix::overview(v, &q)).await
}

async fn get_terrain(State(s): State<Shared>, Params(q): Params<TerrainRequest>) -> Response {
    answer(s, q.at(), move |v| endpoints::matrix::terrain(v, &q)).await
}

async fn get_threads(State(s): State<Shared>, Params(q): Params<ThreadsRequest>) -> Response {
    answer(s, q.at(), move |v| endpoints::matrix::threads(v, &q)).await
}

async fn get_categories(State(s): State<Shared>, Params(q): Params<CategoriesRequest>) -> Response {
    let rules = s.category_rules.clone();
    answer(s, q.at(), move |v| endpoints::categories::get(v, &q, &rules)).await
}

async fn get_findings(State(s): State<Shared>, Params(q): Params<FindingsRequest>) -> Response {
    let rules = s.category_rules.clone();
    let st = s.clone();
    answer(s, q.at(), move |v| {
        let trace = endpoints::comm::trace_of(&st, v.slot);
        endpoints::findings::findings(v, trace, &q, &rules)
    })
    .await
}

async fn get_architecture(State(s): State<Shared>, Params(q): Params<ArchitectureRequest>) -> Response {
    let rules = s.category_rules.clone();
    let st = s.clone();
    answer(s, q.at(), move |v| {
        let trace = endpoints::comm::trace_of(&st, v.slot);
        endpoints::findings::architecture_view(v, trace, &q, &rules)
    })
    .await
}

async fn get_event(
    State(s): State<Shared>,
    Path(id): Path<u32>,
    Params(q): Params<EventRequest>,
) -> Response {
    answer(s, q.at(), move |v| endpoints::event::get(v, id, &q)).await
}

async fn get_user_events(State(s): State<Shared>, Params(q): Params<UserEventsRequest>) -> Response {
    answer(s, q.at(), move |v| endpoints::user_events::list(v, &q)).await
}

async fn get_user_event(
    State(s): State<Shared>,
    Path(id): Path<u32>,
    Params(q): Params<UserEventRequest>,
) -> Response {
    answer(s, q.at(), move |v| endpoints::user_events::detail(v, id, &q)).await
}

async fn get_source(State(s): State<Shared>, Params(q): Params<SourceRequest>) -> Response {
    let roots = s.sources.clone();
    let binary = s.binary.is_some();
    answer(s, q.at(), move |v| {
        let binary = binary || endpoints::source::executable(v.profile, &roots).is_some();
        endpoints::source::get(v, &q, &roots, binary)
    })
    .await
}

async fn get_disasm(State(s): State<Shared>, Params(q): Params<DisasmRequest>) -> Response {
    let binary = s.binary.clone();
    let roots = s.sources.clone();
    answer(s, q.at(), move |v| {
        // Without --binary: the executable the run's metadata names, found under the source roots.
        let found = match &binary {
            Some(b) => Some(b.as_path().to_path_buf()),
            None => endpoints::source::executable(v.profile, &roots),
        };
        endpoints::source::disasm(v, &q, found.as_deref())
    })
    .await
}

async fn get_comm(State(s): State<Shared>, Params(q): Params<CommRequest>) -> Response {
    let st = s.clone();
    answer(s, q.at(), move |v| {
        endpoints::comm::get(v, endpoints::comm::trace_of(&st, v.slot), &q)
    })
    .await
}

async fn get_calltree(State(s): State<Shared>, Params(q): Params<CallTreeRequest>) -> Response {
    answer(s, q.at(), move |v| endpoints::calltree::get(v, &q)).await
}

/// Runs `f` on the blocking pool against the main run's profile and the runs compared with it.
async fn with_compared<T: serde::Serialize + Send + 'static>(
    state: Shared,
    f: impl FnOnce(&perfscape_model::Profile, &[state::ComparedRun]) -> Result<T, ApiError> + Send + 'static,
) -> Response {
    blocking(&state.compute.clone(), move || match &state.run {
        Ok(r) => f(&r.profile, &state.compared),
        Err(e) => Err(ApiError::unavailable(format!("the run did not load: {e}"))),
    })
    .await
}

async fn get_diff(State(s): State<Shared>, Params(q): Params<DiffRequest>) -> Response {
    with_compared(s, move |a, c| endpoints::compare::diff(a, c, &q)).await
}

async fn get_diff_threads(State(s): State<Shared>, Params(q): Params<DiffThreadsRequest>) -> Response {
    with_compared(s, move |a, c| endpoints::compare::threads(a, c, &q)).await
}

async fn get_diff_matrix(State(s): State<Shared>, Params(q): Params<DiffMatrixRequest>) -> Response {
    with_compared(s, move |a, c| endpoints::compare::matrix(a, c, &q)).await
}

async fn get_scaling(State(s): State<Shared>, Params(q): Params<ScalingRequest>) -> Response {
    with_compared(s, move |a, c| endpoints::compare::scaling(a, c, &q)).await
}

async fn get_diff_calltree(State(s): State<Shared>, Params(q): Params<DiffTreeRequest>) -> Response {
    with_compared(s, move |a, c| endpoints::compare::calltree(a, c, &q)).await
}

/// `POST /api/sql` (JSON body `{"query": "..."}`): refused when the request comes from
/// another site's page (an `Origin` that is not this server); axum's `Json` refuses any
/// content type but `application/json`, which a page cannot send elsewhere without CORS.
#[cfg(feature = "sql")]
async fn post_sql(
    State(s): State<Shared>,
    headers: axum::http::HeaderMap,
    axum::Json(q): axum::Json<endpoints::sql::SqlRequest>,
) -> Response {
    if let Some(origin) = headers.get(axum::http::header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        if !s.access().origin_allowed(origin) {
            return ApiError::forbidden(format!(
                "a query from the page of `{origin}`, which is not this server"
            ))
            .into_response();
        }
    }
    json_on_pool(move || endpoints::sql::query(&s, &q)).await
}

/// `GET /api/store`: the runs of the store served with `--store DIR`.
#[cfg(feature = "sql")]
async fn get_store(State(s): State<Shared>) -> Response {
    json_on_pool(move || endpoints::sql::store(&s)).await
}

/// `GET /api/dashboard/{index}`: a served dashboard file as read now (what is wrong in it is
/// in the answer; 404 past the last).
async fn get_dashboard(State(s): State<Shared>, Path(index): Path<u32>) -> Response {
    blocking(&s.compute.clone(), move || {
        s.dashboards.get(index).ok_or_else(|| {
            ApiError::not_found(format!(
                "no dashboard {index}: this server has {} (perfscape serve RUN --dashboard FILE)",
                s.dashboards.len()
            ))
        })
    })
    .await
}

/// `GET /api/layout`: the page's layout, a dashboard (index `null`): the built-in one, or the
/// file of `serve --layout FILE` as read now.
async fn get_layout(State(s): State<Shared>) -> Response {
    blocking(&s.compute.clone(), move || Ok(s.dashboards.layout())).await
}

async fn api_not_found() -> Response {
    ApiError::not_found("no such API endpoint (see API.md)").into_response()
}

/// The application: API routes, embedded assets, the access checks, security headers, gzip.
pub fn router(state: Shared) -> Router {
    let api = Router::new()
        .route("/run", get(get_run))
        .route("/memory", get(get_memory))
        .route("/events", get(get_events))
        .route("/matrix", get(get_matrix))
        .route("/overview", get(get_overview))
        .route("/event/{id}", get(get_event))
        .route("/comm", get(get_comm))
        .route("/source", get(get_source))
        .route("/disasm", get(get_disasm))
        .route("/calltree", get(get_calltree))
        .route("/userevents", get(get_user_events))
        .route("/userevent/{id}", get(get_user_event))
        .route("/terrain", get(get_terrain))
        .route("/rows", get(get_rows))
        .route("/threads", get(get_threads))
        .route("/categories", get(get_categories))
        .route("/findings", get(get_findings))
        .route("/architecture", get(get_architecture))
        .route("/ws", get(get_ws))
        .route("/series", get(get_series))
        .route("/trend", get(get_trend))
        .route("/kiviat", get(get_kiviat))
        .route("/pointcloud", get(get_pointcloud))
        .route("/timeline", get(get_timeline))
        .route("/timeline/search", get(get_timeline_search))
        .route("/diff", get(get_diff))
        .route("/diff/threads", get(get_diff_threads))
        .route("/diff/matrix", get(get_diff_matrix))
        .route("/diff/calltree", get(get_diff_calltree))
        .route("/scaling", get(get_scaling))
        .route("/dashboard/{index}", get(get_dashboard))
        .route("/layout", get(get_layout))
        .route("/replay", axum::routing::post(post_replay));
    #[cfg(feature = "sql")]
    let api = api
        .route("/sql", axum::routing::post(post_sql))
        .route("/store", get(get_store));
    let api = api.fallback(api_not_found);
    Router::new()
        .nest("/api", api)
        .route("/", get(assets::index))
        .route("/assets/{*file}", get(assets::asset))
        .fallback(assets::not_found)
        .layer(middleware::from_fn_with_state(
            Arc::new(state.access().clone()),
            access::guard,
        ))
        .layer(middleware::from_fn(access::security_headers))
        .layer(
            tower_http::compression::CompressionLayer::new().quality(tower_http::CompressionLevel::Fastest),
        )
        .with_state(state)
}
