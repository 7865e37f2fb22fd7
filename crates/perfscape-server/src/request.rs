//! One typed request per endpoint: the query parameters each endpoint takes, parsed at the
//! edge by [`Params`] into typed values (enums, thread addresses, id lists). An unknown value
//! is a 400 whose message names the parameter and the values it accepts; parameters an
//! endpoint does not take are ignored (the `token`, the page's own state).
//!
//! The requests are flat (each lists all its parameters) rather than composed of shared
//! groups with `#[serde(flatten)]`: flattened fields are buffered as strings, which then no
//! longer parse as numbers or booleans, and errors lose the parameter's name. The `groups!`
//! helpers turn the shared parameters into the analysis' types.
//!
//! Every request derives `ts_rs::TS`: `cargo test -p perfscape-server` writes their
//! TypeScript twins into `web/src/api/` beside the answers'. They also serialize back into a
//! query string (`serde_urlencoded::to_string`), which the tests use.

use crate::error::ApiError;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use perfscape_analysis::ViewError;
use perfscape_analysis::answers::{
    CommParams, CommStat, DiffShow, LineHeat, OverviewOptions, Region, RowSpec, Scope,
};
use perfscape_analysis::axis::{AxisParams, Subset, ThreadOrder};
use perfscape_analysis::compare::diff::{DiffSort, Normalize};
use perfscape_analysis::params::{EventIds, ThreadAddr, ThreadAddrs, Values};
use perfscape_analysis::views::{Reduce, RowKind, RowOrder};
use perfscape_model::{Metric, SampleMode, ValueKind};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// An axum extractor: the query string parsed into `T`, or a 400 naming the parameter.
#[derive(Debug, Clone, Default)]
pub struct Params<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for Params<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        parse_query(parts.uri.query().unwrap_or("")).map(Params)
    }
}

/// Parses a query string into `T`.
///
/// # Errors
/// A 400 [`ApiError`] naming the parameter, the value given and what it accepts, e.g.
/// ``reduce `avg`: expected max or sum``.
pub fn parse_query<T: DeserializeOwned>(query: &str) -> Result<T, ApiError> {
    let de = serde_urlencoded::Deserializer::new(form_urlencoded::parse(query.as_bytes()));
    serde_path_to_error::deserialize(de).map_err(|e| {
        let name = e.path().to_string();
        let inner = e.inner().to_string();
        let given = form_urlencoded::parse(query.as_bytes())
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.into_owned());
        ApiError::bad(describe(&name, given.as_deref(), &inner))
    })
}

/// The message of a parameter that did not parse: ``NAME `VALUE`: expected ...``.
fn describe(name: &str, given: Option<&str>, error: &str) -> String {
    // serde's enums: "unknown variant `avg`, expected `max` or `sum`".
    if let Some(rest) = error.strip_prefix("unknown variant `")
        && let Some((value, expected)) = rest.split_once("`, expected ")
    {
        return format!("{name} `{value}`: expected {}", expected.replace('`', ""));
    }
    // The text forms of perfscape_analysis::params: "`x`: expected ...".
    if error.starts_with('`') {
        return format!("{name} {error}");
    }
    match given {
        Some(v) => format!("{name} `{v}`: {error}"),
        None => format!("{name}: {error}"),
    }
}

/// The sample a view reads: the `sample` and `mode` parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct At {
    /// The sample's sequence number; none = the run's final state (or, in live mode and with
    /// deltas, the newest sample).
    pub sample: Option<u32>,
    /// Cumulative values or deltas.
    pub mode: SampleMode,
}

impl Default for At {
    /// The run's final state (the newest sample of a live run), cumulative.
    fn default() -> Self {
        Self {
            sample: None,
            mode: SampleMode::Cumulative,
        }
    }
}

/// `GET /api/events`: the ranked event table.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, optional_fields)]
pub struct EventsRequest {
    /// Metric index (see `/api/run`); default 0.
    pub metric: Option<u32>,
    /// Value kind ranked: `exclusive` (default), `inclusive`, `calls`, `subcalls`.
    pub kind: Option<ValueKind>,
    /// Include callpath events; default false.
    pub callpaths: Option<bool>,
    /// Runs observed over time: the sample (sequence number) read; default the final state.
    pub sample: Option<u32>,
    /// `cumulative` (default) or `delta` (the change since each thread's previous sample).
    pub mode: Option<SampleMode>,
}

/// `GET /api/diff`: run A (the first run of `serve A B...`) against another run, per event.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, optional_fields)]
pub struct DiffRequest {
    /// Which run is B: its position in `/api/run`'s `compared` list, 1-based; default 1.
    pub run: Option<u32>,
    /// Metric index (of run A); default 0.
    pub metric: Option<u32>,
    /// Value kind compared; default `exclusive`.
    pub kind: Option<ValueKind>,
    /// `total` or `per_thread`; default per thread when the thread counts differ, else total.
    pub normalize: Option<Normalize>,
    /// Include callpath events; default false.
    pub callpaths: Option<bool>,
    /// Row order: `abs_delta` (default), `delta`, `ratio`, `a`, `b`.
    pub sort: Option<DiffSort>,
    /// At most this many rows; default 500.
    pub n: Option<u32>,
}

/// `GET /api/diff/threads`: one event of run A against the same event of run B, per thread.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, optional_fields)]
pub struct DiffThreadsRequest {
    /// Which run is B (1-based in `compared`); default 1.
    pub run: Option<u32>,
    /// Run A's event id.
    pub event: u32,
    /// Metric index (of run A); default 0.
    pub metric: Option<u32>,
    /// Value kind; default `exclusive`.
    pub kind: Option<ValueKind>,
}

/// `GET /api/diff/matrix`: the diff heat map, events × the threads both runs have.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, optional_fields)]
pub struct DiffMatrixRequest {
    /// Which run is B (1-based in `compared`); default 1.
    pub run: Option<u32>,
    /// Metric index (of run A); default 0.
    pub metric: Option<u32>,
    /// Value kind; default `exclusive`.
    pub kind: Option<ValueKind>,
    /// Rows may be callpath events too; default false.
    pub callpaths: Option<bool>,
    /// `delta` (B − A, default) or `log_ratio` (log2 B / A).
    pub show: Option<DiffShow>,
    /// Number of rows (events with the largest |B − A|); default 40, at most 1,000.
    pub rows: Option<u32>,
    /// Number of thread bins (columns); default 400, at most 8,192.
    pub w: Option<u32>,
}

/// `GET /api/scaling`: a scaling study of the served runs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, optional_fields)]
pub struct ScalingRequest {
    /// Metric index (of the main run); default 0.
    pub metric: Option<u32>,
    /// Value kind; default `exclusive`.
    pub kind: Option<ValueKind>,
    /// Include callpath events; default false.
    pub callpaths: Option<bool>,
}

/// `GET /api/diff/calltree`: the call trees of the main run and another as one.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, optional_fields)]
pub struct DiffTreeRequest {
    /// Which run is B (1-based in `compared`); default 1.
    pub run: Option<u32>,
    /// Metric index (of run A); default 0.
    pub metric: Option<u32>,
    /// `total` or `per_thread`; default per thread when the thread counts differ, else total.
    pub normalize: Option<Normalize>,
}

/// `GET /api/rows`: the rows of the matrix views.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, optional_fields)]
pub struct RowsRequest {
    /// Metric index; default 0.
    pub metric: Option<u32>,
    /// Value kind ranking the rows: `exclusive` (default), `inclusive`, `calls`, `subcalls`.
    pub kind: Option<ValueKind>,
    /// `events` (default) or `lines` (source lines of `[SAMPLE]` events).
    pub rows: Option<RowKind>,
    /// Include callpath events as rows; default false.
    pub callpaths: Option<bool>,
    /// Event row order: `rank` (default), `file`, `name`.
    pub order: Option<RowOrder>,
    /// Runs observed over time: the sample read; default the final state.
    pub sample: Option<u32>,
    /// `cumulative` (default) or `delta`.
    pub mode: Option<SampleMode>,
}

/// `GET /api/matrix`: a region of rows × threads at a resolution.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, optional_fields)]
pub struct MatrixRequest {
    /// Metric index; default 0.
    pub metric: Option<u32>,
    /// Value kind: `exclusive` (default), `inclusive`, `calls`, `subcalls`.
    pub kind: Option<ValueKind>,
    /// `events` (default) or `lines`.
    pub rows: Option<RowKind>,
    /// Include callpath events as rows; default false.
    pub callpaths: Option<bool>,
    /// Event row order: `rank` (default), `file`, `name`.
    pub order: Option<RowOrder>,
    /// How bins combine cells: `max` (default) or `sum`.
    pub reduce: Option<Reduce>,
    /// Thread axis order: `id` (default), `value`, `cluster`.
    pub threads: Option<ThreadOrder>,
    /// The event ordering the threads with `threads=value`.
    pub by_event: Option<u32>,
    /// Clusters with `threads=cluster` (default 8, 1..=64).
    pub clusters: Option<u32>,
    /// Threads shown: `all` (default), `top`, `reps` (needs `threads=cluster`).
    pub subset: Option<Subset>,
    /// Threads shown with `subset=top` (default 64).
    pub top: Option<u32>,
    /// First row position (default 0).
    pub r0: Option<u32>,
    /// End row position, exclusive (default all).
    pub r1: Option<u32>,
    /// First thread position (default 0).
    pub t0: Option<u32>,
    /// End thread position, exclusive (default all).
    pub t1: Option<u32>,
    /// Most row bins (default 200, at most 4096).
    pub h: Option<u32>,
    /// Most thread bins (default 400, at most 4096).
    pub w: Option<u32>,
    /// Most row bins of the whole matrix for the whole-run colour range (`run` in the
    /// answer; with `ww`).
    pub wh: Option<u32>,
    /// Most thread bins of the whole matrix for the whole-run colour range (with `wh`).
    pub ww: Option<u32>,
    /// A thread `N.C.T` whose position on the axis the answer gives.
    pub thread: Option<ThreadAddr>,
    /// Runs observed over time: the sample read; default the final state.
    pub sample: Option<u32>,
    /// `cumulative` (default) or `delta`.
    pub mode: Option<SampleMode>,
}

/// `GET /api/overview`: seed 000's overview of all rows × all threads.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, optional_fields)]
pub struct OverviewRequest {
    /// Metric index; default 0.
    pub metric: Option<u32>,
    /// Value kind: `exclusive` (default), `inclusive`, `calls`, `subcalls`.
    pub kind: Option<ValueKind>,
    /// `events` (default) or `lines`.
    pub rows: Option<RowKind>,
    /// Include callpath events as rows; default false.
    pub callpaths: Option<bool>,
    /// Event row order: `rank` (default), `file`, `name`.
    pub order: Option<RowOrder>,
    /// How bins combine cells: `max` (default) or `sum`.
    pub reduce: Option<Reduce>,
    /// Thread axis order: `id` (default), `value`, `cluster`.
    pub threads: Option<ThreadOrder>,
    /// The event ordering the threads with `threads=value`.
    pub by_event: Option<u32>,
    /// Clusters with `threads=cluster` (default 8, 1..=64).
    pub clusters: Option<u32>,
    /// Threads shown: `all` (default), `top`, `reps`.
    pub subset: Option<Subset>,
    /// Threads shown with `subset=top` (default 64).
    pub top: Option<u32>,
    /// Skip runs of more than this many empty rows (default 10).
    pub skip: Option<u32>,
    /// Kept rows per overview row (default 1).
    pub bin: Option<u32>,
    /// Strips side by side (default 1, at most 64).
    pub strips: Option<u32>,
    /// Thread bins (default 64, at most 4096).
    pub w: Option<u32>,
    /// Runs observed over time: the sample read; default the final state.
    pub sample: Option<u32>,
    /// `cumulative` (default) or `delta`.
    pub mode: Option<SampleMode>,
}

/// `GET /api/terrain`: a MAX grid for a 3-D surface and its labelled peaks.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, optional_fields)]
pub struct TerrainRequest {
    /// Metric index; default 0.
    pub metric: Option<u32>,
    /// Value kind: `exclusive` (default), `inclusive`, `calls`, `subcalls`.
    pub kind: Option<ValueKind>,
    /// `events` (default) or `lines`.
    pub rows: Option<RowKind>,
    /// Include callpath events as rows; default false.
    pub callpaths: Option<bool>,
    /// Event row order: `rank` (default), `file`, `name`.
    pub order: Option<RowOrder>,
    /// Thread axis order: `id` (default), `value`, `cluster`.
    pub threads: Option<ThreadOrder>,
    /// The event ordering the threads with `threads=value`.
    pub by_event: Option<u32>,
    /// Clusters with `threads=cluster` (default 8, 1..=64).
    pub clusters: Option<u32>,
    /// Threads shown: `all` (default), `top`, `reps`.
    pub subset: Option<Subset>,
    /// Threads shown with `subset=top` (default 64).
    pub top: Option<u32>,
    /// First row position (default 0).
    pub r0: Option<u32>,
    /// End row position, exclusive (default all).
    pub r1: Option<u32>,
    /// First thread position (default 0).
    pub t0: Option<u32>,
    /// End thread position, exclusive (default all).
    pub t1: Option<u32>,
    /// Event bins (default 40, at most 4096).
    pub h: Option<u32>,
    /// Thread bins (default 64, at most 4096).
    pub w: Option<u32>,
    /// Labelled peaks (default 5, at most 50).
    pub peaks: Option<u32>,
    /// A thread `N.C.T` whose position on the axis the grid gives.
    pub thread: Option<ThreadAddr>,
    /// Runs observed over time: the sample read; default the final state.
    pub sample: Option<u32>,
    /// `cumulative` (default) or `delta`.
    pub mode: Option<SampleMode>,
}

/// `GET /api/threads`: the thread axis and its clusters.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, optional_fields)]
pub struct ThreadsRequest {
    /// Metric index; default 0.
    pub metric: Option<u32>,
    /// Value kind ordering or clustering the threads: `exclusive` (default), `inclusive`,
    /// `calls`, `subcalls`.
    pub kind: Option<ValueKind>,
    /// Thread axis order: `id` (default), `value`, `cluster`.
    pub threads: Option<ThreadOrder>,
    /// The event ordering the threads with `threads=value`.
    pub by_event: Option<u32>,
    /// Clusters with `threads=cluster` (default 8, 1..=64).
    pub clusters: Option<u32>,
    /// Threads shown: `all` (default), `top`, `reps`.
    pub subset: Option<Subset>,
    /// Threads shown with `subset=top` (default 64).
    pub top: Option<u32>,
    /// Runs observed over time: the sample read; default the final state.
    pub sample: Option<u32>,
    /// `cumulative` (default) or `delta`.
    pub mode: Option<SampleMode>,
}

/// `GET /api/event/{id}`: one event across threads.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, optional_fields)]
pub struct EventRequest {
    /// Metric index; default 0.
    pub metric: Option<u32>,
    /// Value kind: `exclusive` (default), `inclusive`, `calls`, `subcalls`.
    pub kind: Option<ValueKind>,
    /// Histogram bins (default Sturges' rule, 1..=1000).
    pub bins: Option<u32>,
    /// Most per-thread values (default 4096, 16..=100,000).
    pub points: Option<u32>,
    /// Runs observed over time: the sample read; default the final state.
    pub sample: Option<u32>,
    /// `cumulative` (default) or `delta`.
    pub mode: Option<SampleMode>,
}

/// `GET /api/source`: a source file with the heat and statistics of its lines.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, optional_fields)]
pub struct SourceRequest {
    /// The file, as the run names it; default the file of `event`, else the file with the
    /// largest total.
    pub file: Option<String>,
    /// An event whose file is shown when `file` is not given.
    pub event: Option<u32>,
    /// What a line's heat is: `sum` (default), `mean`, `max`, `thread`.
    pub heat: Option<LineHeat>,
    /// The thread `N.C.T` of `heat=thread`.
    pub thread: Option<ThreadAddr>,
    /// The overview skips runs of more than this many lines without values (default 10).
    pub skip: Option<u32>,
    /// Lines per overview bin (default 1).
    pub bin: Option<u32>,
    /// How an overview bin combines its lines: `max` (default) or `sum`.
    pub reduce: Option<Reduce>,
    /// Metric index; default 0.
    pub metric: Option<u32>,
    /// Value kind: `exclusive` (default), `inclusive`, `calls`, `subcalls`.
    pub kind: Option<ValueKind>,
    /// Runs observed over time: the sample read; default the final state.
    pub sample: Option<u32>,
    /// `cumulative` (default) or `delta`.
    pub mode: Option<SampleMode>,
}

/// `GET /api/disasm`: the instructions of a source line range in the served executable.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, optional_fields)]
pub struct DisasmRequest {
    /// The file, as the run names it (required).
    pub file: Option<String>,
    /// First line (required).
    pub first: Option<u32>,
    /// Last line (default `first`).
    pub last: Option<u32>,
    /// Metric index of the line totals; default 0.
    pub metric: Option<u32>,
    /// Value kind: `exclusive` (default), `inclusive`, `calls`, `subcalls`.
    pub kind: Option<ValueKind>,
    /// Runs observed over time: the sample read; default the final state.
    pub sample: Option<u32>,
    /// `cumulative` (default) or `delta`.
    pub mode: Option<SampleMode>,
}

/// `GET /api/userevents`: every user (atomic) event.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, optional_fields)]
pub struct UserEventsRequest {
    /// A thread `N.C.T` whose own statistics each row also gives.
    pub thread: Option<ThreadAddr>,
    /// Runs observed over time: the sample read; default the final state.
    pub sample: Option<u32>,
    /// `cumulative` (default) or `delta`.
    pub mode: Option<SampleMode>,
}

/// `GET /api/userevent/{id}`: one user event on every thread.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, optional_fields)]
pub struct UserEventRequest {
    /// Most threads listed (default 4096, 16..=100,000; beyond that every n-th thread).
    pub points: Option<u32>,
    /// Runs observed over time: the sample read; default the final state.
    pub sample: Option<u32>,
    /// `cumulative` (default) or `delta`.
    pub mode: Option<SampleMode>,
}

/// `GET /api/categories`: the time per category of the run, its processes and its threads,
/// and POP's efficiency metrics.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, optional_fields)]
pub struct CategoriesRequest {
    /// Metric index; default 0 (a metric that adds up).
    pub metric: Option<u32>,
    /// Order the threads by their time in this category (index into the answer's
    /// `categories`), largest first; default thread order.
    pub sort: Option<u32>,
    /// Most bins of threads (default 2048, 16..=100,000).
    pub points: Option<u32>,
    /// A thread `N.C.T` whose times are given too (the selection).
    pub thread: Option<ThreadAddr>,
    /// Runs observed over time: the sample read; default the final state.
    pub sample: Option<u32>,
    /// `cumulative` (default) or `delta`.
    pub mode: Option<SampleMode>,
}

/// `GET /api/findings`: what is wrong with the run, ranked by the time it costs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, optional_fields)]
pub struct FindingsRequest {
    /// Metric index; default 0.
    pub metric: Option<u32>,
    /// A straggler's value is at least this many times its event's median (default 2).
    pub straggler_ratio: Option<f64>,
    /// Smallest load imbalance reported, max / mean − 1 (default 0.10).
    pub imbalance_min: Option<f64>,
    /// At most this many findings of each kind (default 20, at most 1,000).
    pub n: Option<u32>,
    /// Runs observed over time: the sample read; default the final state.
    pub sample: Option<u32>,
    /// `cumulative` (default) or `delta`.
    pub mode: Option<SampleMode>,
}

/// `GET /api/architecture`: processes with their time per category and the channels between
/// them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, optional_fields)]
pub struct ArchitectureRequest {
    /// Metric index of the category times; default 0.
    pub metric: Option<u32>,
    /// Runs observed over time: the sample read; default the final state.
    pub sample: Option<u32>,
    /// `cumulative` (default) or `delta`.
    pub mode: Option<SampleMode>,
}

/// `GET /api/comm`: the communication matrix, senders × receivers of one path and statistic.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, optional_fields)]
pub struct CommRequest {
    /// The path: a callpath element (timer name) or `All Paths` (default).
    pub path: Option<String>,
    /// `bytes` (default), `calls`, `mean_bytes`, `max_bytes`, `min_bytes`, `stddev_bytes`.
    pub stat: Option<CommStat>,
    /// How a bin's cells combine: `max` (default) or `sum` (bytes and calls only).
    pub reduce: Option<Reduce>,
    /// First sender rank (default 0).
    pub r0: Option<u32>,
    /// End sender rank, exclusive (default all).
    pub r1: Option<u32>,
    /// First receiver rank (default 0).
    pub c0: Option<u32>,
    /// End receiver rank, exclusive (default all).
    pub c1: Option<u32>,
    /// Most sender bins (default 256, 1..=4096).
    pub h: Option<u32>,
    /// Most receiver bins (default 256, 1..=4096).
    pub w: Option<u32>,
    /// Runs observed over time: the sample read; default the final state.
    pub sample: Option<u32>,
    /// `cumulative` (default) or `delta`.
    pub mode: Option<SampleMode>,
}

impl CommRequest {
    /// The parameters of the view.
    pub fn params(&self) -> CommParams {
        CommParams {
            path: self.path.clone(),
            stat: self.stat.unwrap_or_default(),
            reduce: self.reduce.unwrap_or_default(),
            r0: self.r0,
            r1: self.r1,
            c0: self.c0,
            c1: self.c1,
            h: self.h,
            w: self.w,
        }
    }
}

/// `GET /api/calltree`: the call tree in a scope.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, optional_fields)]
pub struct CallTreeRequest {
    /// Metric index; default 0.
    pub metric: Option<u32>,
    /// `total` (default), `mean`, `mean_all`, or a thread `N.C.T`.
    pub scope: Option<Scope>,
    /// Runs observed over time: the sample read; default the final state.
    pub sample: Option<u32>,
    /// `cumulative` (default) or `delta`.
    pub mode: Option<SampleMode>,
}

/// `GET /api/trend`: one timer over every sample.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, optional_fields)]
pub struct TrendRequest {
    /// The event (required).
    pub event: Option<u32>,
    /// Metric index; default 0.
    pub metric: Option<u32>,
    /// Value kind: `exclusive` (default), `inclusive`, `calls`, `subcalls`.
    pub kind: Option<ValueKind>,
    /// `cumulative` (default) or `delta`.
    pub mode: Option<SampleMode>,
}

/// `GET /api/kiviat`: seed 001's Kiviat tube.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, optional_fields)]
pub struct KiviatRequest {
    /// Event ids `1,2,3` on the axes (at most 16; default the 6 flat events with the largest
    /// per-thread value at the last sample).
    pub events: Option<EventIds>,
    /// Threads `N.C.T,N.C.T`, one tube each (at most 64; default: `thread`, then the threads
    /// with the smallest and largest value of each event, at most 8).
    pub threads_list: Option<ThreadAddrs>,
    /// A thread the default tubes include.
    pub thread: Option<ThreadAddr>,
    /// Metric index; default 0.
    pub metric: Option<u32>,
    /// Value kind: `exclusive` (default), `inclusive`, `calls`, `subcalls`.
    pub kind: Option<ValueKind>,
    /// `cumulative` (default) or `delta`.
    pub mode: Option<SampleMode>,
}

/// `GET /api/pointcloud`: threads as points in a space of 3 or 4 events.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, optional_fields)]
pub struct PointCloudRequest {
    /// Event ids `x,y,z[,colour]` (3 or 4; default the 4 flat events with the largest total).
    pub events: Option<EventIds>,
    /// Most points (default 20,000, at most 200,000).
    pub points_max: Option<u32>,
    /// Metric index; default 0.
    pub metric: Option<u32>,
    /// Value kind: `exclusive` (default), `inclusive`, `calls`, `subcalls`.
    pub kind: Option<ValueKind>,
    /// Runs observed over time: the sample read; default the final state.
    pub sample: Option<u32>,
    /// `cumulative` (default) or `delta`.
    pub mode: Option<SampleMode>,
}

/// `GET /api/timeline`: the lanes of a trace in a time window at a resolution; the
/// analysis's own parameter type (nothing else is asked).
pub use perfscape_analysis::answers::TimelineParams as TimelineRequest;

/// `GET /api/timeline/search`: slices of a trace by name, next / previous (`q`, `dir`,
/// `at_ns`, `lane`); the analysis's own parameter type.
pub use perfscape_analysis::answers::TimelineSearchParams as TimelineSearchRequest;

/// Helpers generated for the requests that have the parameter groups they name.
macro_rules! groups {
    (at: $($t:ty),*) => {$(
        impl $t {
            /// The sample read (`sample`, `mode`).
            pub fn at(&self) -> At {
                At { sample: self.sample, mode: self.mode.unwrap_or(SampleMode::Cumulative) }
            }
        }
    )*};
    (values: $($t:ty),*) => {$(
        impl $t {
            /// The metric and value kind, checked against the run's `metrics`.
            ///
            /// # Errors
            /// 400 for a metric the run does not have.
            pub fn values(&self, metrics: &[Metric]) -> Result<Values, ViewError> {
                Values::new(metrics, self.metric, self.kind)
            }
        }
    )*};
    (rows: $($t:ty),*) => {$(
        impl $t {
            /// The rows of the matrix views for `values` ([`RowSpec::canonical`]: one cache key
            /// for the same rows).
            pub fn row_spec(&self, values: Values) -> RowSpec {
                RowSpec {
                    values,
                    rows: self.rows.unwrap_or_default(),
                    callpaths: self.callpaths.unwrap_or(false),
                    order: self.order.unwrap_or_default(),
                }
                .canonical()
            }
        }
    )*};
    (axis: $($t:ty),*) => {$(
        impl $t {
            /// The thread axis parameters.
            pub fn axis(&self) -> AxisParams {
                AxisParams {
                    threads: self.threads.unwrap_or_default(),
                    by_event: self.by_event,
                    clusters: self.clusters,
                    subset: self.subset.unwrap_or_default(),
                    top: self.top,
                }
            }
        }
    )*};
    (region: $($t:ty),*) => {$(
        impl $t {
            /// The region and resolution asked for.
            pub fn region(&self) -> Region {
                Region { r0: self.r0, r1: self.r1, t0: self.t0, t1: self.t1, h: self.h, w: self.w }
            }
        }
    )*};
}

groups!(at: EventsRequest, RowsRequest, MatrixRequest, OverviewRequest, TerrainRequest, ThreadsRequest,
    EventRequest, CallTreeRequest, PointCloudRequest, UserEventsRequest, UserEventRequest, CategoriesRequest, FindingsRequest, ArchitectureRequest, CommRequest, SourceRequest, DisasmRequest);
groups!(values: DiffRequest, DiffThreadsRequest, DiffMatrixRequest, ScalingRequest, EventsRequest, RowsRequest, MatrixRequest, OverviewRequest, TerrainRequest, ThreadsRequest,
    EventRequest, TrendRequest, KiviatRequest, PointCloudRequest, SourceRequest, DisasmRequest);
groups!(rows: RowsRequest, MatrixRequest, OverviewRequest, TerrainRequest);
groups!(axis: MatrixRequest, OverviewRequest, TerrainRequest, ThreadsRequest);
groups!(region: MatrixRequest, TerrainRequest);

impl OverviewRequest {
    /// The overview's options.
    pub fn options(&self) -> OverviewOptions {
        OverviewOptions {
            skip: self.skip,
            bin: self.bin,
            strips: self.strips,
            w: self.w,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_values_name_the_parameter_and_what_it_accepts() {
        let e = parse_query::<MatrixRequest>("reduce=avg").unwrap_err();
        assert_eq!(
            (e.status, e.message.as_str()),
            (400, "reduce `avg`: expected max or sum")
        );
        let e = parse_query::<EventsRequest>("kind=bogus").unwrap_err();
        assert_eq!(
            e.message,
            "kind `bogus`: expected one of exclusive, inclusive, calls, subcalls"
        );
        let e = parse_query::<MatrixRequest>("metric=x").unwrap_err();
        assert!(e.message.starts_with("metric `x`: "), "{}", e.message);
        let e = parse_query::<MatrixRequest>("thread=1.2").unwrap_err();
        assert_eq!(e.message, "thread `1.2`: expected a thread N.C.T");
        let e = parse_query::<KiviatRequest>("events=1,a").unwrap_err();
        assert!(
            e.message.starts_with("events `a` is not an event id"),
            "{}",
            e.message
        );
    }

    #[test]
    fn requests_round_trip_through_the_query_string() {
        let q = MatrixRequest {
            kind: Some(ValueKind::Inclusive),
            threads: Some(ThreadOrder::Cluster),
            thread: Some("3.0.1".parse().unwrap()),
            h: Some(7),
            ..Default::default()
        };
        let s = serde_urlencoded::to_string(&q).unwrap();
        assert_eq!(s, "kind=inclusive&threads=cluster&h=7&thread=3.0.1");
        assert_eq!(parse_query::<MatrixRequest>(&s).unwrap(), q);
        // Parameters an endpoint does not take are ignored.
        assert_eq!(
            parse_query::<EventsRequest>("token=abc&focus=heatmap").unwrap(),
            EventsRequest::default()
        );
    }
}
