//! What each view of the browser is answered with: serializable structs (the JSON of the HTTP
//! API, documented in `API.md`) computed by pure functions from a profile, a series or a
//! trace and typed parameters.
//!
//! The server only picks the profile (the run's or a sample's), keeps the expensive
//! intermediates (row sets, thread axes, pyramids) in its cache, and asks these functions.
//! With the `ts` feature every answer derives `ts_rs::TS`, from which the server generates the
//! front end's TypeScript types (`web/src/api/`).
//!
//! | view | function | answer |
//! |---|---|---|
//! | ranked events | [`events`] | [`EventsResponse`] |
//! | rows of the matrix views | [`rows`] | [`RowsResponse`] |
//! | heat map | [`matrix`] | [`MatrixResponse`] |
//! | seed 000's overview | [`overview`] | [`OverviewResponse`] |
//! | 3-D terrain | [`terrain`] | [`TerrainResponse`] |
//! | thread axis and clusters | [`threads`] | [`ThreadsResponse`] |
//! | one event across threads | [`event_detail`] | [`EventDetail`] |
//! | call tree | [`call_tree_table`] | [`CallTreeResponse`] |
//! | categories and POP metrics | [`categories_view`] | [`CategoriesResponse`] |
//! | samples of a run over time | [`samples`] | [`SeriesResponse`] |
//! | one event over the samples | [`trend`] | [`TrendResponse`] |
//! | Kiviat tube | [`kiviat`] | [`KiviatResponse`] |
//! | point cloud | [`point_cloud`] | [`PointCloudResponse`] |
//! | timeline of a trace | [`timeline`] | [`TimelineResponse`] |
//! | search of a trace's timeline by name | [`timeline_search`] | [`TimelineSearchResponse`] |
//! | two runs compared per event | [`diff_table`] | [`DiffResponse`] |
//! | one event of two runs per thread | [`diff_threads`] | [`DiffThreadsResponse`] |
//! | diff heat map of two runs | [`diff_matrix`] | [`DiffMatrixResponse`] |
//! | scaling study of the served runs | [`scaling_view`] | [`ScalingResponse`] |
//! | two runs' call trees as one | [`diff_call_tree`] | [`DiffTreeResponse`] |
//! | user (atomic) events | [`user_events`] | [`UserEventsResponse`] |
//! | one user event per thread | [`user_event_detail`] | [`UserEventDetail`] |
//! | findings | [`findings_view`] | [`FindingsResponse`] |
//! | processes and channels | [`architecture`] | [`ArchitectureResponse`] |
//! | communication matrix (ranks × ranks) | [`comm_view`] | [`CommResponse`] |
//! | a source file with its line heat and statistics | [`source_view`] | [`SourceResponse`] |
//! | the instructions of a source line range | [`disasm_view`] | [`DisasmResponse`] |

mod architecture;
mod calltree;
mod categories;
mod comm;
mod compare;
mod compare_tree;
mod disasm;
mod event;
mod events;
mod findings;
mod matrix;
mod series;
mod shared_pyramid;
mod source;
mod threads;
mod timeline;
mod timeline_search;
mod user_events;

pub use architecture::{
    ArchChannel, ArchProcess, ArchitectureResponse, MAX_PROCESSES, RankChannel, architecture,
};
pub use calltree::{CallTreeResponse, MAX_TREE_NODES, Scope, TreeNodeJson, call_tree_table};
pub use categories::{
    CATEGORY_POINTS_DEFAULT, CategoriesResponse, CategoryBin, CategoryJson, ProcessCategories,
    categories_view,
};
pub use comm::{CommParams, CommPathJson, CommResponse, CommStat, comm_view};
pub use compare::{
    DiffMatrixResponse, DiffMatrixRow, DiffParams, DiffResponse, DiffRowJson, DiffShow, DiffThreadJson,
    DiffThreadsResponse, ScalingResponse, ScalingRowJson, diff_matrix, diff_table, diff_threads,
    scaling_view,
};
pub use compare_tree::{DiffTreeNode, DiffTreeResponse, MAX_DIFF_TREE_NODES, diff_call_tree};
pub use disasm::{DisasmResponse, InstructionJson, MAX_DISASM_LINES, disasm_view};
pub use event::{
    EVENT_POINTS_DEFAULT, EventAttribute, EventDetail, HistogramJson, ThreadValue, event_detail,
};
pub use events::{EventRow, EventsResponse, events, ranked_events};
pub use findings::{FindingJson, FindingsResponse, findings_view};
pub use matrix::{
    Bin, CellPick, MatrixInput, MatrixResponse, OverviewOptions, OverviewResponse, OverviewRowJson, PeakJson,
    Region, RowJson, RowSpec, RowsResponse, RunRange, RunResolution, TerrainResponse, build_pyramid,
    build_window_pyramid, matrix, overview, region_rows, rows, terrain,
};
pub use series::{
    KiviatParams, KiviatResponse, KiviatThread, PointCloudResponse, SampleJson, SeriesResponse, TrendPoint,
    TrendResponse, kiviat, point_cloud, samples, trend,
};
pub use shared_pyramid::derived_pyramid;
pub use source::{
    LineBinJson, LineHeat, LineJson, RoutineJson, SourceFileJson, SourceOptions, SourceResponse, SourceText,
    files_json, source_file, source_view,
};
pub use threads::{ClusterJson, ThreadsResponse, threads};
pub use timeline::{TimelineFlows, TimelineLane, TimelineParams, TimelineResponse, TraceIndex, timeline};
pub use timeline_search::{
    SearchDir, TimelineHit, TimelineSearchParams, TimelineSearchResponse, timeline_search,
};
pub use user_events::{
    UserEventDetail, UserEventRow, UserEventStats, UserEventThread, UserEventsResponse, user_event_detail,
    user_events,
};

use crate::stats::Summary;
use perfscape_model::{Combine, EventId, Profile, ThreadIndex};
use serde::Serialize;

/// Statistics of one value kind across threads (see `perfscape_analysis::Summary`).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SummaryJson {
    /// Threads that have the event.
    pub threads: u32,
    /// How `total` combines the threads' values: `sum` for calls, subcalls and metrics that
    /// add up, else the metric's own rule (`min`, `max`, `mean`, `not_combinable`).
    pub combine: Combine,
    /// The threads' values combined under `combine` (the sum, the minimum, ...); `null` when
    /// they cannot be combined (a not combinable metric on several threads).
    pub total: Option<f64>,
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

impl SummaryJson {
    /// The summary `s` of `profile`, threads written `N.C.T`.
    pub fn of(profile: &Profile, s: &Summary) -> Self {
        let th = |t: Option<ThreadIndex>| t.map(|t| profile.thread(t).to_string());
        SummaryJson {
            threads: s.threads as u32,
            combine: s.combine,
            total: finite(s.total),
            mean: s.mean,
            mean_all: s.mean_all,
            min: s.min,
            min_thread: th(s.min_thread),
            max: s.max,
            max_thread: th(s.max_thread),
            stddev: s.stddev,
            stddev_all: s.stddev_all,
            imbalance: s.imbalance(),
        }
    }
}

/// The group names of event `e`.
fn groups(profile: &Profile, e: EventId) -> Vec<String> {
    profile
        .event(e)
        .groups
        .iter()
        .map(|g| profile.group_name(*g).to_string())
        .collect()
}

/// `file:line` of event `e`, if it has a source location.
fn source(profile: &Profile, e: EventId) -> Option<String> {
    profile
        .event(e)
        .source()
        .as_ref()
        .map(|s| format!("{}:{}", s.file, s.line))
}

/// `v` when finite.
fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

/// Up to `max` evenly spaced positions of `0..n`, always with the first and the last.
fn thin(n: usize, max: usize) -> Vec<usize> {
    if n <= max {
        return (0..n).collect();
    }
    if max <= 1 {
        return (max == 1).then_some(n - 1).into_iter().collect();
    }
    let mut out: Vec<usize> = (0..max).map(|i| i * (n - 1) / (max - 1)).collect();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thin_keeps_ends_and_count() {
        assert_eq!(thin(5, 10), vec![0, 1, 2, 3, 4]);
        let t = thin(1000, 256);
        assert_eq!(t.len(), 256);
        assert_eq!(t[0], 0);
        assert_eq!(t.last().copied(), Some(999));
        assert!(t.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(thin(9, 1), vec![8]);
        assert_eq!(thin(9, 0), Vec::<usize>::new());
    }
}
