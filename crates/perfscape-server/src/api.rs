//! The JSON types of the HTTP API (documented in `API.md`). Their TypeScript twins are
//! generated into `web/src/api/` by ts-rs (`cargo test -p perfscape-server`), so the front end
//! and the server cannot drift.
//!
//! Conventions: values are in the metric's own unit (`unit` says which); threads are written
//! `N.C.T`; `null` marks a cell without data.

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
    /// True when the run is a trace: the timeline (`/api/timeline`) can show it.
    pub timeline: bool,
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

/// Statistics of one value kind across threads (see `perfscape_analysis::Summary`).
#[derive(Debug, Clone, Serialize, TS)]
#[ts(export)]
pub struct SummaryJson {
    /// Threads that have the event.
    pub threads: u32,
    /// Sum over threads.
    pub total: f64,
    /// Mean over the threads that have the event.
    pub mean: f64,
    /// Mean over all threads.
    pub mean_all: f64,
    /// Smallest value.
    pub min: f64,
    /// Thread with the smallest value.
    pub min_thread: Option<String>,
    /// Largest value.
    pub max: f64,
    /// Thread with the largest value.
    pub max_thread: Option<String>,
    /// Population standard deviation over the threads that have the event.
    pub stddev: f64,
    /// Population standard deviation over all threads.
    pub stddev_all: f64,
    /// `max / mean_all`.
    pub imbalance: f64,
}

/// One row of the ranked event table.
#[derive(Debug, Clone, Serialize, TS)]
#[ts(export)]
pub struct EventRow {
    /// Event id (use it in `/api/event/{id}`).
    pub id: u32,
    /// 1-based rank by total of the requested kind.
    pub rank: u32,
    /// Event name.
    pub name: String,
    /// Group names.
    pub groups: Vec<String>,
    /// Source file, if the name carries one.
    pub source_file: Option<String>,
    /// Source line, if the name carries one.
    pub source_line: Option<u32>,
    /// `timer`, `sample`, `sample_context`, ...
    pub kind: String,
    /// True for callpath events.
    pub callpath: bool,
    /// The flat event of the routine (itself for flat events).
    pub routine: Option<u32>,
    /// Percent of the run total (ParaProf's convention).
    pub percent: f64,
    /// Statistics of the requested kind across threads.
    pub stats: SummaryJson,
    /// Total calls across threads.
    pub calls: f64,
}

/// `GET /api/events`: the ranked event table.
#[derive(Debug, Clone, Serialize, TS)]
#[ts(export)]
pub struct EventsResponse {
    /// Metric index.
    pub metric: u32,
    /// Unit of the values.
    pub unit: String,
    /// Value kind ranked (`exclusive`, `inclusive`, `calls`, `subcalls`).
    pub kind: String,
    /// Sum over threads of each thread's top-level inclusive value (the percent divisor).
    pub run_total: f64,
    /// Rows, ranked.
    pub rows: Vec<EventRow>,
}

/// A bin of rows or of threads in a matrix answer.
#[derive(Debug, Clone, Serialize, TS)]
#[ts(export)]
pub struct Bin {
    /// First position covered.
    pub first: u32,
    /// Last position covered (inclusive).
    pub last: u32,
    /// Label: the row's label or `first – last` labels.
    pub label: String,
    /// The event of a single-event row bin (for selection), if any.
    pub event: Option<u32>,
    /// The thread of a single-thread column bin (for selection), if any.
    pub thread: Option<String>,
}

/// `GET /api/matrix`: rows × threads reduced to at most h × w cells.
#[derive(Debug, Clone, Serialize, TS)]
#[ts(export)]
pub struct MatrixResponse {
    /// Total rows in the row space (events or lines).
    pub row_count: u32,
    /// Total threads on the thread axis.
    pub thread_count: u32,
    /// Row bins, top to bottom.
    pub rows: Vec<Bin>,
    /// Thread bins, left to right.
    pub cols: Vec<Bin>,
    /// Cell values row-major (`rows.len() * cols.len()`), `null` = no data.
    pub values: Vec<Option<f64>>,
    /// Smallest cell value.
    pub min: Option<f64>,
    /// Largest cell value.
    pub max: Option<f64>,
    /// How cells were reduced: `max` or `sum`.
    pub reduce: String,
    /// Unit of the values.
    pub unit: String,
    /// Thread axis: `id`, `value` (by the value of `by_event`) or `cluster`; with `subset`.
    pub thread_order: String,
    /// Position on the thread axis of the `thread` asked about, if it is shown.
    pub thread_position: Option<u32>,
    /// With `threads=cluster`: the position where each cluster starts.
    pub cluster_starts: Vec<u32>,
    /// Size of the pyramid level the columns came from (bin width `2^level` threads).
    pub level: u32,
}

/// One row of the overview.
#[derive(Debug, Clone, Serialize, TS)]
#[ts(export)]
pub struct OverviewRowJson {
    /// First row position covered.
    pub first: u32,
    /// Last row position covered.
    pub last: u32,
    /// Label of the first row.
    pub label: String,
    /// Empty rows skipped just before this row.
    pub skipped_before: u32,
    /// Values per thread bin.
    pub values: Vec<Option<f64>>,
}

/// `GET /api/overview`: the seed's reduced overview in strips.
#[derive(Debug, Clone, Serialize, TS)]
#[ts(export)]
pub struct OverviewResponse {
    /// Total rows in the row space.
    pub row_count: u32,
    /// Total threads.
    pub thread_count: u32,
    /// Thread bins.
    pub cols: Vec<Bin>,
    /// Strips side by side, each top to bottom.
    pub strips: Vec<Vec<OverviewRowJson>>,
    /// Empty rows in the row space.
    pub empty_rows: u32,
    /// Rows skipped in long empty runs.
    pub skipped_rows: u32,
    /// Largest value.
    pub max: Option<f64>,
    /// Unit of the values.
    pub unit: String,
    /// With `threads=cluster`: the position where each cluster starts.
    pub cluster_starts: Vec<u32>,
}

/// A thread's value of one event.
#[derive(Debug, Clone, Serialize, TS)]
#[ts(export)]
pub struct ThreadValue {
    /// Thread address.
    pub thread: String,
    /// Value.
    pub value: f64,
}

/// A histogram.
#[derive(Debug, Clone, Serialize, TS)]
#[ts(export)]
pub struct HistogramJson {
    /// Bin edges (bins + 1).
    pub edges: Vec<f64>,
    /// Counts per bin.
    pub counts: Vec<u32>,
}

/// `GET /api/event/{id}`: one event across threads.
#[derive(Debug, Clone, Serialize, TS)]
#[ts(export)]
pub struct EventDetail {
    /// Event id.
    pub id: u32,
    /// Name.
    pub name: String,
    /// Groups.
    pub groups: Vec<String>,
    /// Source file and line, if any.
    pub source: Option<String>,
    /// Metric index of `values`/`stats`.
    pub metric: u32,
    /// Unit.
    pub unit: String,
    /// Value kind of `values`/`stats`.
    pub kind: String,
    /// Statistics across threads.
    pub stats: SummaryJson,
    /// Per-thread values, largest first; at most `points` entries (see `downsampled`).
    pub values: Vec<ThreadValue>,
    /// True when `values` is a rank-space reduction (each entry the max of a bucket of
    /// consecutive ranks) because there were more threads than `points`.
    pub downsampled: bool,
    /// Threads having the event.
    pub threads: u32,
    /// Histogram of the values across threads.
    pub histogram: HistogramJson,
}

/// One node of the call tree table.
#[derive(Debug, Clone, Serialize, TS)]
#[ts(export)]
pub struct TreeNodeJson {
    /// Event id of the node.
    pub id: u32,
    /// Parent node's id.
    pub parent: Option<u32>,
    /// Depth (0 = root).
    pub depth: u32,
    /// Routine name (last frame).
    pub name: String,
    /// Source location (`file:line`), if any.
    pub source: Option<String>,
    /// Inclusive value in the scope.
    pub inclusive: f64,
    /// Exclusive value in the scope.
    pub exclusive: f64,
    /// Calls in the scope.
    pub calls: f64,
    /// Threads having the node.
    pub threads: u32,
    /// Children ids.
    pub children: Vec<u32>,
    /// The flat event of the node's routine, if the profile has it.
    pub routine: Option<u32>,
}

/// `GET /api/calltree`.
#[derive(Debug, Clone, Serialize, TS)]
#[ts(export)]
pub struct CallTreeResponse {
    /// Scope: `total`, `mean`, `mean_all` or a thread `N.C.T`.
    pub scope: String,
    /// Unit.
    pub unit: String,
    /// True when built from callpaths; false = flat list.
    pub has_callpaths: bool,
    /// Nodes in depth-first order.
    pub nodes: Vec<TreeNodeJson>,
}

/// A labelled terrain peak.
#[derive(Debug, Clone, Serialize, TS)]
#[ts(export)]
pub struct PeakJson {
    /// Row bin index in the grid.
    pub row_bin: u32,
    /// Column bin index in the grid.
    pub col_bin: u32,
    /// Event id.
    pub event: u32,
    /// Event name.
    pub name: String,
    /// Thread.
    pub thread: String,
    /// Value.
    pub value: f64,
}

/// `GET /api/terrain`: a grid for a 3-D surface plus the k largest peaks.
#[derive(Debug, Clone, Serialize, TS)]
#[ts(export)]
pub struct TerrainResponse {
    /// The grid (rows = events, cols = threads), reduced by MAX.
    pub grid: MatrixResponse,
    /// Largest cells, at most one per event, largest first.
    pub peaks: Vec<PeakJson>,
}

/// One row of the row space (events or source lines).
#[derive(Debug, Clone, Serialize, TS)]
#[ts(export)]
pub struct RowJson {
    /// Label.
    pub label: String,
    /// Events whose values the row holds.
    pub events: Vec<u32>,
}

/// `GET /api/rows`: the rows of the matrix views in display order (positions index this).
#[derive(Debug, Clone, Serialize, TS)]
#[ts(export)]
pub struct RowsResponse {
    /// `events` or `lines`.
    pub rows_kind: String,
    /// Rows.
    pub rows: Vec<RowJson>,
}

/// One cluster of threads.
#[derive(Debug, Clone, Serialize, TS)]
#[ts(export)]
pub struct ClusterJson {
    /// Cluster number (0 = largest).
    pub id: u32,
    /// Threads in the cluster.
    pub size: u32,
    /// The cluster's threads with the smallest, median and largest total time.
    pub representatives: Vec<String>,
    /// Centroid: the mean value of each feature event over the cluster (metric's unit).
    pub centroid: Vec<f64>,
}

/// `GET /api/threads`: the thread axis for the given ordering.
#[derive(Debug, Clone, Serialize, TS)]
#[ts(export)]
pub struct ThreadsResponse {
    /// `id`, `value` or `cluster`, with the subset.
    pub thread_order: String,
    /// Threads on the axis.
    pub count: u32,
    /// Their addresses in axis order (the first 10,000).
    pub threads: Vec<String>,
    /// With `threads=cluster`: the clusters, largest first.
    pub clusters: Vec<ClusterJson>,
    /// With `threads=cluster`: the feature events (their names) the clustering used.
    pub features: Vec<String>,
}

/// One sample of the series.
#[derive(Debug, Clone, Serialize, TS)]
#[ts(export)]
pub struct SampleJson {
    /// Sequence number (0 = first).
    pub seq: u32,
    /// Name (`iteration 40`, `final`, ...).
    pub name: String,
    /// Timestamp, µs since the epoch (the latest thread's).
    pub timestamp_us: f64,
    /// Threads that wrote the sample.
    pub present: u32,
    /// Threads expected that did not.
    pub missing: u32,
    /// True when every expected thread wrote it.
    pub complete: bool,
}

/// `GET /api/series`: the samples of a run observed over time.
#[derive(Debug, Clone, Serialize, TS)]
#[ts(export)]
pub struct SeriesResponse {
    /// Samples in sequence order.
    pub samples: Vec<SampleJson>,
    /// Threads known.
    pub threads: u32,
    /// True while samples keep arriving.
    pub live: bool,
}

/// Statistics of one event across threads at one sample.
#[derive(Debug, Clone, Serialize, TS)]
#[ts(export)]
pub struct TrendPoint {
    /// Sample sequence number.
    pub seq: u32,
    /// Sample timestamp (µs since the epoch).
    pub timestamp_us: f64,
    /// Threads having the event.
    pub threads: u32,
    /// Smallest value (`null` when no thread has the event).
    pub min: Option<f64>,
    /// Mean over the threads having the event.
    pub mean: Option<f64>,
    /// Largest value.
    pub max: Option<f64>,
    /// Population standard deviation.
    pub stddev: Option<f64>,
    /// Sum over threads (the aggregate).
    pub sum: Option<f64>,
    /// Thread with the largest value.
    pub max_thread: Option<String>,
}

/// `GET /api/trend`: one event over the samples (min / mean / max across threads, σ, sum).
#[derive(Debug, Clone, Serialize, TS)]
#[ts(export)]
pub struct TrendResponse {
    /// Event id.
    pub event: u32,
    /// Event name.
    pub name: String,
    /// `cumulative` or `delta`.
    pub mode: String,
    /// Unit.
    pub unit: String,
    /// One point per sample.
    pub points: Vec<TrendPoint>,
}

/// One thread's tube in the Kiviat view.
#[derive(Debug, Clone, Serialize, TS)]
#[ts(export)]
pub struct KiviatThread {
    /// Thread address.
    pub thread: String,
    /// `values[sample][event]`, each scaled to [0, 1] by the event's largest value in the
    /// answer; `null` where the thread did not write the sample.
    pub values: Vec<Vec<Option<f64>>>,
}

/// `GET /api/kiviat`: per-thread radar polygons over the samples (seed 001's Kiviat tube).
#[derive(Debug, Clone, Serialize, TS)]
#[ts(export)]
pub struct KiviatResponse {
    /// The events (axes of the polygons).
    pub events: Vec<String>,
    /// Each event's largest value (the scale of its axis), in the unit.
    pub scale: Vec<f64>,
    /// Unit.
    pub unit: String,
    /// Sample sequence numbers along the tube.
    pub samples: Vec<u32>,
    /// One tube per thread.
    pub threads: Vec<KiviatThread>,
}

/// `GET /api/pointcloud`: threads as points in a space of three events, coloured by a fourth.
#[derive(Debug, Clone, Serialize, TS)]
#[ts(export)]
pub struct PointCloudResponse {
    /// Names of the x, y, z and colour events.
    pub axes: Vec<String>,
    /// Unit.
    pub unit: String,
    /// Points `[x, y, z, colour]` (0 for a thread without the event).
    pub points: Vec<[f64; 4]>,
    /// Thread of each point.
    pub threads: Vec<String>,
    /// Threads in the profile; more than `points.len()` when the cloud was thinned.
    pub total_threads: u32,
}

/// One thread's lane of the timeline: its slices in the window, columnar.
#[derive(Debug, Clone, Serialize, TS)]
#[ts(export)]
pub struct TimelineLane {
    /// Thread address `N.C.T` (as in the profile derived from the trace).
    pub thread: String,
    /// The process and thread as the trace names them.
    pub label: String,
    /// Nesting depths of the lane in the whole trace.
    pub depths: u32,
    /// Slice starts, ns since the trace's first event.
    pub start: Vec<f64>,
    /// Slice ends, ns since the trace's first event.
    pub end: Vec<f64>,
    /// Slice nesting depths (0 = top level).
    pub depth: Vec<u32>,
    /// Slice names, indices into `TimelineResponse.names`.
    pub name: Vec<u32>,
    /// Intervals in each slice (more than 1: a run of intervals shorter than a pixel merged).
    pub merged: Vec<u32>,
}

/// `GET /api/timeline`: the lanes of a trace in a time window at screen resolution, and the
/// merged timeline of flagged events.
#[derive(Debug, Clone, Serialize, TS)]
#[ts(export)]
pub struct TimelineResponse {
    /// The trace's first event on its own clock (ns); every other time is relative to it.
    pub origin_ns: f64,
    /// Length of the whole trace (ns).
    pub duration_ns: f64,
    /// The window (ns since the first event).
    pub from_ns: f64,
    /// End of the window.
    pub to_ns: f64,
    /// Width the window was reduced for (pixels).
    pub width: u32,
    /// Lanes in the trace (the answer holds `lanes_from ..` of them).
    pub lane_count: u32,
    /// Position of the first lane of the answer.
    pub lanes_from: u32,
    /// The lanes.
    pub lanes: Vec<TimelineLane>,
    /// Names the slices refer to.
    pub names: Vec<String>,
    /// Names of the flagged events.
    pub flagged: Vec<String>,
    /// Per pixel of the window, the number of threads inside a flagged event (averaged over
    /// the pixel's time; all lanes, not only those of the answer).
    pub occupancy: Vec<f64>,
}

/// An error answer (`4xx`/`5xx`).
#[derive(Debug, Clone, Serialize, TS)]
#[ts(export)]
pub struct ErrorResponse {
    /// What went wrong.
    pub error: String,
}
