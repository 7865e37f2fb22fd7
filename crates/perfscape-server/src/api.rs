//! The JSON types of the HTTP API (documented in `API.md`): the views' answers, computed and
//! defined in [`perfscape_analysis::answers`] and re-exported here, and the server's own
//! ([`RunInfo`], [`ErrorResponse`]). The requests are in [`crate::request`]. Their TypeScript
//! twins are generated into `web/src/api/` by ts-rs (`cargo test -p perfscape-server`), so the
//! front end and the server cannot drift.
//!
//! Conventions: values are in the metric's own unit (`unit` says which); threads are written
//! `N.C.T`; `null` marks a cell without data.

pub use perfscape_analysis::answers::{
    ArchChannel, ArchProcess, ArchitectureResponse, Bin, CallTreeResponse, CategoriesResponse, ClusterJson,
    CommPathJson, CommResponse, DiffMatrixResponse, DiffMatrixRow, DiffResponse, DiffRowJson, DiffThreadJson,
    DiffThreadsResponse, DiffTreeNode, DiffTreeResponse, DisasmResponse, EventDetail, EventRow,
    EventsResponse, FindingJson, FindingsResponse, HistogramJson, KiviatResponse, KiviatThread,
    MatrixResponse, OverviewResponse, OverviewRowJson, PeakJson, PointCloudResponse, RowJson, RowsResponse,
    SampleJson, ScalingResponse, ScalingRowJson, SeriesResponse, SourceResponse, SummaryJson,
    TerrainResponse, ThreadValue, ThreadsResponse, TimelineFlows, TimelineHit, TimelineLane,
    TimelineResponse, TimelineSearchResponse, TreeNodeJson, TrendPoint, TrendResponse, UserEventDetail,
    UserEventRow, UserEventStats, UserEventThread, UserEventsResponse,
};
use perfscape_model::Combine;
use serde::Serialize;
use ts_rs::TS;

/// `GET /api/run`: what was loaded.
#[derive(Debug, Clone, Serialize, TS)]
#[ts(export)]
pub struct RunInfo {
    /// `ok` when the run loaded, `error` when it did not (then `error` says why).
    pub status: String,
    /// Why the run did not load.
    pub error: Option<String>,
    /// The path given on the command line.
    pub path: String,
    /// Format read (`tau`, ...).
    pub format: String,
    /// Files read and their total size in bytes.
    pub files_read: u32,
    /// Total bytes read.
    pub bytes_read: f64,
    /// Number of threads.
    pub threads: u32,
    /// Number of distinct nodes (ranks).
    pub nodes: u32,
    /// Metrics in order (`metric` parameters index this list).
    pub metrics: Vec<MetricInfo>,
    /// Number of flat events with data.
    pub flat_events: u32,
    /// Number of callpath events with data.
    pub callpath_events: u32,
    /// Number of flat `[SAMPLE]` (per source line) events.
    pub sample_events: u32,
    /// Number of source files the run names with sampled lines or located timers (the source
    /// panel's files, `GET /api/source`).
    pub source_files: u32,
    /// Number of user (atomic) events.
    pub user_events: u32,
    /// True when the profile has callpaths (the call tree has structure).
    pub has_callpaths: bool,
    /// Metadata with the same value on every thread.
    pub metadata: Vec<MetadataItem>,
    /// Metadata keys whose value varies, with the first thread's value and the count of threads.
    pub varying_metadata: Vec<VaryingMetadata>,
    /// Files that could not be loaded (`path:line: reason`).
    pub bad_files: Vec<String>,
    /// Warnings from loading.
    pub warnings: Vec<String>,
    /// Notes from loading.
    pub notes: Vec<String>,
    /// The first threads' addresses (at most 10,000), in id order.
    pub thread_ids: Vec<String>,
    /// True for a shared session (`serve --share`): the page joins the session hub at `/api/ws`.
    pub shared: bool,
    /// Samples of the run observed over time (0 when the run has none); see `/api/series`.
    pub samples: u32,
    /// True while the series is still growing (live mode).
    pub live: bool,
    /// True when the run is a finished run replayed as a live run (`serve --replay`):
    /// `POST /api/replay` starts it again from its first sample.
    pub replay: bool,
    /// True when the run is a trace: the timeline (`/api/timeline`) can show it.
    pub timeline: bool,
    /// True when the run has a communication matrix (TAU_COMM_MATRIX user events): `/api/comm`
    /// shows it.
    pub comm: bool,
    /// The other runs given to `serve A B...`, in order (`run=1` of `/api/diff` is the first):
    /// their paths, and for each whether it loaded (else why not).
    pub compared: Vec<ComparedInfo>,
    /// True when the served runs (the run and the compared ones) are at two or more process
    /// counts: `/api/scaling` studies them.
    pub scaling: bool,
    /// The directory of the store of runs served with `--store DIR` (`GET /api/store` lists
    /// its runs), if any.
    pub store: Option<String>,
    /// The dashboard files served with `--dashboard FILE` (`GET /api/dashboard/{index}`), in
    /// order; empty when none.
    pub dashboards: Vec<crate::dashboard::spec::DashboardInfo>,
    /// The file of `serve --layout FILE` when the page's layout (`GET /api/layout`) is not the
    /// built-in one; `null` for the built-in layout.
    pub layout: Option<String>,
    /// What `--filter` hid from every view (`null` when the run is not filtered): each view
    /// says so in its head.
    pub filter: Option<FilterInfo>,
}

/// `GET /api/memory`: what the server keeps between requests against its budget
/// (`--cache-memory`), and its view computations (at most `slots` run at once, one per core;
/// the others wait in arrival order). Sizes in bytes, approximate (what the cache weighs).
#[derive(Debug, Clone, Serialize, TS)]
#[ts(export)]
pub struct MemoryInfo {
    /// The server's memory budget: the loaded runs, what the cache keeps and builds, and the
    /// answers being computed.
    pub budget_bytes: f64,
    /// Approximate bytes of the loaded runs' profiles (held outside the cache).
    pub loaded_bytes: f64,
    /// The cache's part of the budget: the budget less the loaded runs. The cache keeps at most
    /// half of it and builds at most a quarter.
    pub cache_budget_bytes: f64,
    /// Bytes kept now: profiles of samples, ranked tables, row sets, thread axes, pyramids.
    pub held_bytes: f64,
    /// Entries kept now.
    pub entries: f64,
    /// Bytes reserved by the pyramids being built now (at most a quarter of the cache's budget).
    pub building_bytes: f64,
    /// Computations run since the start (identical concurrent requests count once).
    pub computations: f64,
    /// View computations that may run at once (the machine's cores).
    pub slots: u32,
    /// View computations running now.
    pub computing: u32,
    /// Requests waiting for a computation slot now.
    pub waiting: u32,
    /// The server process's resident memory (Linux; `null` elsewhere): the budget, the loaded
    /// runs, the requests in flight and what the allocator keeps.
    pub rss_bytes: Option<f64>,
}

/// What a `--filter` hid from the served run: the rules and the counts, shown in every view's
/// head (nothing disappears without a word).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[ts(export)]
pub struct FilterInfo {
    /// The rules, as written, joined with `, `.
    pub rules: String,
    /// Interval events before the filter.
    pub events_before: u32,
    /// Events hidden.
    pub events_hidden: u32,
    /// Threads before the filter.
    pub threads_before: u32,
    /// Threads hidden (`threads>Kx`).
    pub threads_hidden: u32,
}

impl From<&perfscape_analysis::FilterReport> for FilterInfo {
    fn from(f: &perfscape_analysis::FilterReport) -> Self {
        let n = |x: usize| u32::try_from(x).unwrap_or(u32::MAX);
        FilterInfo {
            rules: f.rules.clone(),
            events_before: n(f.events_before),
            events_hidden: n(f.hidden),
            threads_before: n(f.threads_before),
            threads_hidden: n(f.threads_hidden),
        }
    }
}

/// What a reader of [`RunInfo`] as JSON needs of it to ask for more (the report): the number of
/// samples and of metrics.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct RunInfoSummary {
    /// Samples of the run observed over time.
    pub samples: u32,
    /// Number of metrics.
    #[serde(deserialize_with = "count")]
    pub metrics: usize,
}

/// The length of a JSON array.
fn count<'de, D: serde::Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    Ok(<Vec<serde::de::IgnoredAny> as serde::Deserialize>::deserialize(d)?.len())
}

/// A run served beside run A for comparison.
#[derive(Debug, Clone, Serialize, TS)]
#[ts(export)]
pub struct ComparedInfo {
    /// The path given on the command line.
    pub path: String,
    /// Threads of the run (0 when it did not load).
    pub threads: u32,
    /// Why it did not load, or why it cannot be compared with run A (`null` when it can).
    pub error: Option<String>,
}

/// A metric.
#[derive(Debug, Clone, Serialize, TS)]
#[ts(export)]
pub struct MetricInfo {
    /// Name, e.g. `TIME`.
    pub name: String,
    /// Unit symbol: `µs`, `ns`, `cycles`, `B`, `count`, or the tool's own.
    pub unit: String,
    /// True for time units.
    pub is_time: bool,
    /// How the metric's values combine across threads and call paths: `sum` (totals and
    /// percentages of the run), `min`, `max`, `mean` (totals are that combination, no
    /// percentages), `not_combinable` (no totals of several values).
    pub combine: Combine,
}

/// A metadata key/value.
#[derive(Debug, Clone, Serialize, TS)]
#[ts(export)]
pub struct MetadataItem {
    /// Key.
    pub name: String,
    /// Value.
    pub value: String,
}

/// A metadata key whose value differs between threads.
#[derive(Debug, Clone, Serialize, TS)]
#[ts(export)]
pub struct VaryingMetadata {
    /// Key.
    pub name: String,
    /// Value on the first thread that has it.
    pub first_value: String,
    /// Thread of that first value.
    pub first_thread: String,
    /// Number of threads with this key.
    pub threads: u32,
}

/// An error answer (`4xx`/`5xx`).
#[derive(Debug, Clone, Serialize, TS)]
#[ts(export)]
pub struct ErrorResponse {
    /// What went wrong.
    pub error: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes the TypeScript twins of the answers defined in `perfscape-analysis` (with their
    /// dependencies) into `TS_RS_EXPORT_DIR` (`web/src/api/`, see `.cargo/config.toml`), as
    /// `#[ts(export)]` does for the types of this crate.
    #[test]
    fn export_bindings_of_the_analysis_answers() {
        let cfg = ts_rs::Config::from_env();
        macro_rules! export {
            ($($t:ty),* $(,)?) => {$( <$t as TS>::export_all(&cfg).expect(stringify!($t)); )*};
        }
        export!(
            CallTreeResponse,
            CategoriesResponse,
            CommResponse,
            EventDetail,
            EventsResponse,
            KiviatResponse,
            MatrixResponse,
            OverviewResponse,
            PointCloudResponse,
            RowsResponse,
            SeriesResponse,
            TerrainResponse,
            ThreadsResponse,
            TimelineResponse,
            UserEventsResponse,
            UserEventDetail,
            FindingsResponse,
            ArchitectureResponse,
            TrendResponse,
            DiffResponse,
            DiffThreadsResponse,
            DiffMatrixResponse,
            ScalingResponse,
            DiffTreeResponse,
            SourceResponse,
            DisasmResponse,
            crate::request::TimelineRequest,
            TimelineSearchResponse,
            crate::request::TimelineSearchRequest,
        );
    }
}
