//! The computations behind each API endpoint, as plain functions of the loaded profile and
//! the request parameters (so tests can call them without HTTP).

use crate::api::*;
use perfscape_analysis::pyramid::{DEFAULT_LEVEL_CELLS, ProfileMatrix, Pyramid};
use perfscape_analysis::threads::{
    Clustering, cluster_order, cluster_threads, order_by_value, representatives,
};
use perfscape_analysis::views::{OverviewParams, Reduce, RowKind, RowOrder, RowSet, ThreadAxis};
use perfscape_analysis::{
    Bins, EventStats, RankBy, Summary, TopOptions, TreeScope, call_tree, event_stats, histogram, run_total,
    top_events,
};
use perfscape_formats::Opened;
use perfscape_model::{EventId, EventKind, MetricId, Profile, ValueKind};
use serde::Deserialize;

/// An API error: HTTP status and message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ApiError {
    /// HTTP status code.
    pub status: u16,
    /// What went wrong.
    pub message: String,
}

impl ApiError {
    /// 400 Bad Request.
    pub fn bad(message: impl Into<String>) -> Self {
        Self {
            status: 400,
            message: message.into(),
        }
    }
    /// 404 Not Found.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self {
            status: 404,
            message: message.into(),
        }
    }
}

/// Parameters shared by the view endpoints (all optional, with defaults).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ViewParams {
    /// Metric index (default 0).
    pub metric: Option<u32>,
    /// `exclusive` (default), `inclusive`, `calls`, `subcalls`.
    pub kind: Option<String>,
    /// `events` (default) or `lines` (source lines of `[SAMPLE]` events).
    pub rows: Option<String>,
    /// Include callpath events as rows (default false).
    pub callpaths: Option<bool>,
    /// Row order for event rows: `rank` (default), `file`, `name`.
    pub order: Option<String>,
    /// `max` (default) or `sum`.
    pub reduce: Option<String>,
    /// First row position (default 0).
    pub r0: Option<u32>,
    /// End row position, exclusive (default all).
    pub r1: Option<u32>,
    /// First thread position (default 0).
    pub t0: Option<u32>,
    /// End thread position, exclusive (default all).
    pub t1: Option<u32>,
    /// Maximum row bins (default 200, at most 4096).
    pub h: Option<u32>,
    /// Maximum thread bins (default 400, at most 4096).
    pub w: Option<u32>,
    /// Overview: skip runs of more than this many empty rows (default 10).
    pub skip: Option<u32>,
    /// Overview: rows per bin (default 1).
    pub bin: Option<u32>,
    /// Overview: strips (default 1, at most 64).
    pub strips: Option<u32>,
    /// Histogram bins (default: Sturges).
    pub bins: Option<u32>,
    /// Event view: maximum per-thread values returned (default 4096).
    pub points: Option<u32>,
    /// Call tree scope: `total` (default), `mean`, `mean_all`, or a thread `N.C.T`.
    pub scope: Option<String>,
    /// Terrain: number of labelled peaks (default 5).
    pub peaks: Option<u32>,
    /// Thread axis order: `id` (default), `value` (by the value of `by_event`, largest first)
    /// or `cluster` (by similarity: k-means clusters, largest first).
    pub threads: Option<String>,
    /// The event ordering the threads with `threads=value`.
    pub by_event: Option<u32>,
    /// Number of clusters with `threads=cluster` (default 8, at most 64).
    pub clusters: Option<u32>,
    /// Which threads to show: `all` (default), `top` (the first `top` threads of the order) or
    /// `reps` (the min/median/max representatives of each cluster).
    pub subset: Option<String>,
    /// Threads shown with `subset=top` (default 64).
    pub top: Option<u32>,
    /// A thread `N.C.T` whose position on the axis the answer should give (heat map), or that
    /// the answer should include (Kiviat).
    pub thread: Option<String>,
    /// Runs observed over time: the sample the view shows (default: the run's final state, or
    /// in live mode the newest sample).
    pub sample: Option<u32>,
    /// `cumulative` (default: values since the program started) or `delta` (the change since
    /// each thread's previous sample).
    pub mode: Option<String>,
    /// Kiviat / point cloud: comma-separated event ids.
    pub events: Option<String>,
    /// Kiviat: comma-separated threads `N.C.T`.
    pub threads_list: Option<String>,
    /// Point cloud: maximum points (default 20,000).
    pub points_max: Option<u32>,
    /// Trend: the event.
    pub event: Option<u32>,
    /// Timeline: window start, ns since the trace's first event (default 0).
    pub from_ns: Option<f64>,
    /// Timeline: window end (default the trace's end).
    pub to_ns: Option<f64>,
    /// Timeline: first lane (default 0).
    pub l0: Option<u32>,
    /// Timeline: end lane, exclusive (default first + 64, at most first + 512).
    pub l1: Option<u32>,
    /// Timeline: deepest nesting returned (default 32).
    pub depth: Option<u32>,
    /// Timeline: flagged events (comma-separated event ids of the profile; matched by name).
    pub flag: Option<String>,
}

/// Row sets computed once per (metric, kind, rows, callpaths, order) and reused: ranking the
/// rows costs a pass over every cell, which a heat-map request should not repeat.
#[derive(Debug, Default)]
pub struct ViewCache {
    events: Memo<(u32, &'static str, bool), EventsResponse>,
    rows: Memo<(u32, &'static str, RowKind, bool, RowOrder), RowSet>,
    axes: Memo<AxisKey, AxisInfo>,
    pyramids: std::sync::Mutex<Vec<(PyramidKey, std::sync::Arc<Pyramid>)>>,
}

/// How many pyramids are kept (least recently used ones are dropped).
const PYRAMIDS_KEPT: usize = 6;

/// What defines a thread axis.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct AxisKey {
    order: AxisOrder,
    subset: Subset,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum AxisOrder {
    Id,
    Value {
        event: u32,
        metric: u32,
        kind: &'static str,
    },
    Cluster {
        k: u32,
        metric: u32,
        kind: &'static str,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Subset {
    All,
    Top(u32),
    Reps,
}

/// A thread axis and, for cluster orders, the clustering.
#[derive(Debug)]
pub(crate) struct AxisInfo {
    axis: ThreadAxis,
    clustering: Option<Clustering>,
    cluster_starts: Vec<u32>,
    label: String,
}

type PyramidKey = (u32, &'static str, RowKind, bool, RowOrder, AxisKey);

/// A map of computed answers shared between requests.
type Memo<K, V> = std::sync::Mutex<std::collections::HashMap<K, std::sync::Arc<V>>>;

impl ViewCache {
    fn axis(&self, p: &Profile, key: &AxisKey) -> std::sync::Arc<AxisInfo> {
        if let Ok(map) = self.axes.lock()
            && let Some(a) = map.get(key)
        {
            return a.clone();
        }
        let info = std::sync::Arc::new(build_axis(p, key));
        if let Ok(mut map) = self.axes.lock() {
            map.insert(key.clone(), info.clone());
        }
        info
    }

    fn pyramid(&self, key: PyramidKey, build: impl FnOnce() -> Pyramid) -> std::sync::Arc<Pyramid> {
        if let Ok(mut list) = self.pyramids.lock()
            && let Some(i) = list.iter().position(|(k, _)| *k == key)
        {
            let entry = list.remove(i);
            let pyr = entry.1.clone();
            list.push(entry);
            return pyr;
        }
        let pyr = std::sync::Arc::new(build());
        if let Ok(mut list) = self.pyramids.lock() {
            if list.len() >= PYRAMIDS_KEPT {
                list.remove(0);
            }
            list.push((key, pyr.clone()));
        }
        pyr
    }

    fn rows(&self, p: &Profile, r: &Resolved) -> std::sync::Arc<RowSet> {
        let key = (r.metric.0, r.kind.as_str(), r.rows, r.callpaths, r.order);
        if let Ok(map) = self.rows.lock()
            && let Some(set) = map.get(&key)
        {
            return set.clone();
        }
        let set = std::sync::Arc::new(row_set(p, r));
        if let Ok(mut map) = self.rows.lock() {
            map.insert(key, set.clone());
        }
        set
    }
}

/// Parsed, validated view parameters.
pub(crate) struct Resolved {
    pub metric: MetricId,
    pub kind: ValueKind,
    pub rows: RowKind,
    pub callpaths: bool,
    pub order: RowOrder,
    pub reduce: Reduce,
}

pub(crate) fn resolve(p: &Profile, q: &ViewParams) -> Result<Resolved, ApiError> {
    let metric = q.metric.unwrap_or(0);
    if metric as usize >= p.metrics().len() {
        return Err(ApiError::bad(format!(
            "metric {metric} does not exist (the run has {})",
            p.metrics().len()
        )));
    }
    let kind = match q.kind.as_deref().unwrap_or("exclusive") {
        "exclusive" => ValueKind::Exclusive,
        "inclusive" => ValueKind::Inclusive,
        "calls" => ValueKind::Calls,
        "subcalls" => ValueKind::Subcalls,
        other => {
            return Err(ApiError::bad(format!(
                "kind `{other}`: expected exclusive, inclusive, calls or subcalls"
            )));
        }
    };
    let rows = match q.rows.as_deref().unwrap_or("events") {
        "events" => RowKind::Events,
        "lines" => RowKind::Lines,
        other => return Err(ApiError::bad(format!("rows `{other}`: expected events or lines"))),
    };
    let order = match q.order.as_deref().unwrap_or("rank") {
        "rank" => RowOrder::Rank,
        "file" => RowOrder::File,
        "name" => RowOrder::Name,
        other => {
            return Err(ApiError::bad(format!(
                "order `{other}`: expected rank, file or name"
            )));
        }
    };
    let reduce = match q.reduce.as_deref().unwrap_or("max") {
        "max" => Reduce::Max,
        "sum" => Reduce::Sum,
        other => return Err(ApiError::bad(format!("reduce `{other}`: expected max or sum"))),
    };
    Ok(Resolved {
        metric: MetricId(metric),
        kind,
        rows,
        callpaths: q.callpaths.unwrap_or(false),
        order,
        reduce,
    })
}

fn unit(p: &Profile, r: &Resolved) -> String {
    if r.kind.is_metric_independent() {
        "count".into()
    } else {
        p.metric(r.metric).unit.symbol().to_string()
    }
}

pub(crate) fn row_set(p: &Profile, r: &Resolved) -> RowSet {
    match r.rows {
        RowKind::Events => RowSet::events(p, r.metric, r.kind, r.callpaths, r.order),
        RowKind::Lines => RowSet::lines(p),
    }
}

fn summary_json(p: &Profile, s: &Summary) -> SummaryJson {
    let th = |t: Option<perfscape_model::ThreadIndex>| t.map(|t| p.thread(t).to_string());
    SummaryJson {
        threads: s.threads as u32,
        total: s.total,
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

fn kind_name(k: EventKind) -> &'static str {
    match k {
        EventKind::Timer => "timer",
        EventKind::Sample => "sample",
        EventKind::SampleContext => "sample_context",
        EventKind::Intermediate => "intermediate",
        EventKind::Summary => "summary",
        EventKind::Unwind => "unwind",
    }
}

fn groups(p: &Profile, e: EventId) -> Vec<String> {
    p.event(e)
        .groups
        .iter()
        .map(|g| p.group_name(*g).to_string())
        .collect()
}

/// `GET /api/run`.
pub fn run_info(path: &str, run: &Result<Opened, String>) -> RunInfo {
    let empty = RunInfo {
        status: "error".into(),
        error: None,
        path: path.to_string(),
        format: String::new(),
        files_read: 0,
        bytes_read: 0.0,
        threads: 0,
        nodes: 0,
        metrics: vec![],
        flat_events: 0,
        callpath_events: 0,
        sample_events: 0,
        user_events: 0,
        has_callpaths: false,
        metadata: vec![],
        varying_metadata: vec![],
        bad_files: vec![],
        warnings: vec![],
        notes: vec![],
        thread_ids: vec![],
        shared: false,
        samples: 0,
        live: false,
        timeline: false,
    };
    match run {
        Ok(l) => run_info_of(path, &l.profile, &l.report),
        Err(e) => RunInfo {
            error: Some(e.clone()),
            ..empty
        },
    }
}

/// `GET /api/run` for a profile and its load report (a live run's newest sample).
pub fn run_info_of(path: &str, p: &Profile, r: &perfscape_formats::LoadReport) -> RunInfo {
    let empty = run_info(path, &Err(String::new()));
    let with_data = |f: &dyn Fn(&perfscape_model::Event) -> bool| {
        p.event_ids()
            .filter(|&e| f(p.event(e)) && !p.interval(e).is_empty())
            .count() as u32
    };
    let mut nodes: Vec<u32> = p.threads().iter().map(|t| t.node).collect();
    nodes.dedup();
    RunInfo {
        status: "ok".into(),
        error: None,
        format: r.format.to_string(),
        files_read: r.files_read as u32,
        bytes_read: r.bytes_read as f64,
        threads: p.threads().len() as u32,
        nodes: nodes.len() as u32,
        metrics: p
            .metrics()
            .iter()
            .map(|m| MetricInfo {
                name: m.name.clone(),
                unit: m.unit.symbol().to_string(),
                is_time: m.unit.is_time(),
            })
            .collect(),
        flat_events: with_data(&|e| !e.is_callpath()),
        callpath_events: with_data(&|e| e.is_callpath()),
        sample_events: with_data(&|e| !e.is_callpath() && e.kind == EventKind::Sample),
        user_events: p.atomic_events().len() as u32,
        has_callpaths: !p.call_tree().is_empty(),
        metadata: p
            .metadata()
            .common()
            .iter()
            .map(|(k, v)| MetadataItem {
                name: k.clone(),
                value: v.clone(),
            })
            .collect(),
        varying_metadata: p
            .metadata()
            .varying()
            .iter()
            .filter_map(|(k, vals)| {
                vals.first().map(|(t, v)| VaryingMetadata {
                    name: k.clone(),
                    first_value: v.clone(),
                    first_thread: p.thread(*t).to_string(),
                    threads: vals.len() as u32,
                })
            })
            .collect(),
        bad_files: r.bad_files.iter().map(ToString::to_string).collect(),
        warnings: r.warnings.iter().map(ToString::to_string).collect(),
        notes: r.notes.clone(),
        thread_ids: p.threads().iter().take(10_000).map(ToString::to_string).collect(),
        ..empty
    }
}

/// `GET /api/events`, computed once per (metric, kind, callpaths).
pub fn events_cached(
    p: &Profile,
    cache: &ViewCache,
    q: &ViewParams,
) -> Result<std::sync::Arc<EventsResponse>, ApiError> {
    let r = resolve(p, q)?;
    let key = (r.metric.0, r.kind.as_str(), r.callpaths);
    if let Ok(map) = cache.events.lock()
        && let Some(e) = map.get(&key)
    {
        return Ok(e.clone());
    }
    let e = std::sync::Arc::new(events(p, q)?);
    if let Ok(mut map) = cache.events.lock() {
        map.insert(key, e.clone());
    }
    Ok(e)
}

/// `GET /api/events`.
pub fn events(p: &Profile, q: &ViewParams) -> Result<EventsResponse, ApiError> {
    let r = resolve(p, q)?;
    let by = if r.kind == ValueKind::Inclusive {
        RankBy::Inclusive
    } else {
        RankBy::Exclusive
    };
    let total = run_total(p, r.metric);
    let mut ranked: Vec<(EventId, EventStats)> = p
        .event_ids()
        .filter(|&e| (r.callpaths || !p.event(e).is_callpath()) && !p.interval(e).is_empty())
        .map(|e| (e, event_stats(p, e, r.metric)))
        .collect();
    if matches!(r.kind, ValueKind::Exclusive | ValueKind::Inclusive) {
        // Same order as perfscape top.
        let order: Vec<EventId> = top_events(
            p,
            r.metric,
            TopOptions {
                by,
                n: 0,
                include_callpaths: r.callpaths,
            },
        )
        .into_iter()
        .map(|x| x.event)
        .collect();
        let pos: std::collections::HashMap<EventId, usize> =
            order.iter().enumerate().map(|(i, e)| (*e, i)).collect();
        ranked.sort_by_key(|(e, _)| pos.get(e).copied().unwrap_or(usize::MAX));
    } else {
        ranked.sort_by(|a, b| {
            b.1.get(r.kind)
                .total
                .total_cmp(&a.1.get(r.kind).total)
                .then(a.0.cmp(&b.0))
        });
    }
    let rows = ranked
        .iter()
        .enumerate()
        .map(|(i, (e, st))| {
            let ev = p.event(*e);
            let s = st.get(r.kind);
            EventRow {
                id: e.0,
                rank: (i + 1) as u32,
                name: ev.name.clone(),
                groups: groups(p, *e),
                source_file: ev.source.as_ref().map(|s| s.file.clone()),
                source_line: ev.source.as_ref().map(|s| s.line),
                kind: kind_name(ev.kind).into(),
                callpath: ev.is_callpath(),
                routine: ev.routine.map(|r| r.0),
                percent: if total > 0.0 && !r.kind.is_metric_independent() {
                    100.0 * s.total / total
                } else {
                    0.0
                },
                stats: summary_json(p, s),
                calls: st.calls.total,
            }
        })
        .collect();
    Ok(EventsResponse {
        metric: r.metric.0,
        unit: unit(p, &r),
        kind: r.kind.as_str().into(),
        run_total: total,
        rows,
    })
}

fn clamp_range(a: Option<u32>, b: Option<u32>, n: usize) -> std::ops::Range<usize> {
    let s = (a.unwrap_or(0) as usize).min(n);
    let e = b.map_or(n, |b| (b as usize).min(n)).max(s);
    s..e
}

fn thread_bin_label(p: &Profile, axis: &ThreadAxis, b: &std::ops::Range<usize>) -> String {
    let first = p.thread(axis.order[b.start]);
    if b.len() == 1 {
        first.to_string()
    } else {
        format!("{first} – {}", p.thread(axis.order[b.end - 1]))
    }
}

/// Budget of stored pyramid cells per level; bins narrower than the first stored level read
/// the profile's columns directly.
const LEVEL_CELLS: usize = DEFAULT_LEVEL_CELLS;

fn axis_key(p: &Profile, r: &Resolved, q: &ViewParams) -> Result<AxisKey, ApiError> {
    let order = match q.threads.as_deref().unwrap_or("id") {
        "id" => AxisOrder::Id,
        "value" => {
            let event = q
                .by_event
                .ok_or_else(|| ApiError::bad("threads=value needs by_event=<event id>"))?;
            if event as usize >= p.events().len() {
                return Err(ApiError::not_found(format!("no event {event}")));
            }
            AxisOrder::Value {
                event,
                metric: r.metric.0,
                kind: r.kind.as_str(),
            }
        }
        "cluster" => AxisOrder::Cluster {
            k: q.clusters.unwrap_or(8).clamp(1, 64),
            metric: r.metric.0,
            kind: r.kind.as_str(),
        },
        other => {
            return Err(ApiError::bad(format!(
                "threads `{other}`: expected id, value or cluster"
            )));
        }
    };
    let subset = match q.subset.as_deref().unwrap_or("all") {
        "all" => Subset::All,
        "top" => Subset::Top(q.top.unwrap_or(64).max(1)),
        "reps" => {
            if !matches!(order, AxisOrder::Cluster { .. }) {
                return Err(ApiError::bad("subset=reps needs threads=cluster"));
            }
            Subset::Reps
        }
        other => {
            return Err(ApiError::bad(format!(
                "subset `{other}`: expected all, top or reps"
            )));
        }
    };
    Ok(AxisKey { order, subset })
}

fn kind_of(name: &str) -> ValueKind {
    match name {
        "inclusive" => ValueKind::Inclusive,
        "calls" => ValueKind::Calls,
        "subcalls" => ValueKind::Subcalls,
        _ => ValueKind::Exclusive,
    }
}

fn build_axis(p: &Profile, key: &AxisKey) -> AxisInfo {
    let n = p.threads().len();
    let (order, clustering, label) = match key.order {
        AxisOrder::Id => (
            (0..n).map(perfscape_model::ThreadIndex::from).collect(),
            None,
            "id".to_string(),
        ),
        AxisOrder::Value { event, metric, kind } => (
            order_by_value(p, EventId(event), kind_of(kind), MetricId(metric)),
            None,
            format!("value of event {event}"),
        ),
        AxisOrder::Cluster { k, metric, kind } => {
            let c = cluster_threads(p, MetricId(metric), kind_of(kind), k as usize, 32);
            (cluster_order(&c), Some(c), format!("{k} clusters"))
        }
    };
    let (order, label) = match (key.subset, &clustering, &key.order) {
        (Subset::All, _, _) => (order, label),
        (Subset::Top(t), _, _) => (
            order.into_iter().take(t as usize).collect(),
            format!("{label}, first {t}"),
        ),
        (Subset::Reps, Some(c), AxisOrder::Cluster { metric, .. }) => (
            representatives(p, c, MetricId(*metric)),
            format!("{label}, min/median/max of each"),
        ),
        (Subset::Reps, _, _) => (order, label),
    };
    // Cluster starts: positions where the cluster number changes along the axis.
    let cluster_starts = match &clustering {
        Some(c) => {
            let mut starts = Vec::new();
            let mut prev = u32::MAX;
            for (pos, t) in order.iter().enumerate() {
                let k = c.assignment[t.index()];
                if k != prev {
                    starts.push(pos as u32);
                    prev = k;
                }
            }
            starts
        }
        None => Vec::new(),
    };
    AxisInfo {
        axis: ThreadAxis::from_order(n, order),
        clustering,
        cluster_starts,
        label,
    }
}

/// The pyramid of the current rows × thread axis (built once per view key).
fn pyramid_for(
    p: &Profile,
    cache: &ViewCache,
    r: &Resolved,
    rows: &RowSet,
    key: &AxisKey,
    info: &AxisInfo,
) -> std::sync::Arc<Pyramid> {
    let pkey: PyramidKey = (
        r.metric.0,
        r.kind.as_str(),
        r.rows,
        r.callpaths,
        r.order,
        key.clone(),
    );
    cache.pyramid(pkey, || {
        let src = ProfileMatrix {
            profile: p,
            rows,
            axis: &info.axis,
            kind: r.kind,
            metric: r.metric,
        };
        Pyramid::build(&src, LEVEL_CELLS)
    })
}

fn col_bins_json(p: &Profile, axis: &ThreadAxis, bins: &[std::ops::Range<usize>]) -> Vec<Bin> {
    bins.iter()
        .map(|b| Bin {
            first: b.start as u32,
            last: (b.end - 1) as u32,
            label: thread_bin_label(p, axis, b),
            event: None,
            thread: (b.len() == 1).then(|| p.thread(axis.order[b.start]).to_string()),
        })
        .collect()
}

pub(crate) fn matrix_of(
    p: &Profile,
    cache: &ViewCache,
    r: &Resolved,
    rows: &RowSet,
    q: &ViewParams,
    h_default: u32,
    w_default: u32,
) -> Result<MatrixResponse, ApiError> {
    let key = axis_key(p, r, q)?;
    let info = cache.axis(p, &key);
    let axis = &info.axis;
    let pyr = pyramid_for(p, cache, r, rows, &key, &info);
    let src = ProfileMatrix {
        profile: p,
        rows,
        axis,
        kind: r.kind,
        metric: r.metric,
    };
    let rr = clamp_range(q.r0, q.r1, rows.len());
    let tr = clamp_range(q.t0, q.t1, axis.len());
    let h = q.h.unwrap_or(h_default).clamp(1, 4096) as usize;
    let w = q.w.unwrap_or(w_default).clamp(1, 4096) as usize;
    let g = pyr.grid(&src, rr, tr, h, w, r.reduce);
    let min = g.values.iter().flatten().copied().reduce(f64::min);
    let max = g.values.iter().flatten().copied().reduce(f64::max);
    let thread_position = match &q.thread {
        Some(t) => {
            let id = t
                .parse()
                .map_err(|_| ApiError::bad(format!("thread `{t}`: expected N.C.T")))?;
            p.thread_index(id)
                .and_then(|ti| axis.position(ti))
                .map(|x| x as u32)
        }
        None => None,
    };
    Ok(MatrixResponse {
        row_count: rows.len() as u32,
        thread_count: axis.len() as u32,
        rows: g
            .row_bins
            .iter()
            .map(|b| Bin {
                first: b.start as u32,
                last: (b.end - 1) as u32,
                label: if b.len() == 1 {
                    rows.rows[b.start].label.clone()
                } else {
                    format!("{} (+{} more)", rows.rows[b.start].label, b.len() - 1)
                },
                event: if b.len() == 1 && rows.rows[b.start].events.len() == 1 {
                    Some(rows.rows[b.start].events[0].0)
                } else {
                    None
                },
                thread: None,
            })
            .collect(),
        cols: col_bins_json(p, axis, &g.col_bins),
        min,
        max,
        values: g.values,
        reduce: match r.reduce {
            Reduce::Max => "max".into(),
            Reduce::Sum => "sum".into(),
        },
        unit: unit(p, r),
        thread_order: info.label.clone(),
        thread_position,
        cluster_starts: info.cluster_starts.clone(),
        level: g.level,
    })
}

/// `GET /api/matrix`.
pub fn matrix(p: &Profile, cache: &ViewCache, q: &ViewParams) -> Result<MatrixResponse, ApiError> {
    let r = resolve(p, q)?;
    let rows = cache.rows(p, &r);
    matrix_of(p, cache, &r, &rows, q, 200, 400)
}

/// `GET /api/overview`.
pub fn overview(p: &Profile, cache: &ViewCache, q: &ViewParams) -> Result<OverviewResponse, ApiError> {
    let r = resolve(p, q)?;
    let rows = cache.rows(p, &r);
    let key = axis_key(p, &r, q)?;
    let info = cache.axis(p, &key);
    let pyr = pyramid_for(p, cache, &r, &rows, &key, &info);
    let src = ProfileMatrix {
        profile: p,
        rows: &rows,
        axis: &info.axis,
        kind: r.kind,
        metric: r.metric,
    };
    let params = OverviewParams {
        skip_empty_over: q.skip.unwrap_or(10) as usize,
        bin: q.bin.unwrap_or(1).max(1) as usize,
        reduce: r.reduce,
        strips: q.strips.unwrap_or(1).clamp(1, 64) as usize,
        max_cols: q.w.unwrap_or(64).clamp(1, 4096) as usize,
    };
    let ov = pyr.overview(&src, params);
    Ok(OverviewResponse {
        row_count: rows.len() as u32,
        thread_count: info.axis.len() as u32,
        cols: col_bins_json(p, &info.axis, &ov.col_bins),
        strips: ov
            .strips
            .iter()
            .map(|s| {
                s.iter()
                    .map(|row| OverviewRowJson {
                        first: row.first as u32,
                        last: row.last as u32,
                        label: rows.rows[row.first].label.clone(),
                        skipped_before: row.skipped_before as u32,
                        values: row.values.clone(),
                    })
                    .collect()
            })
            .collect(),
        empty_rows: ov.empty_rows as u32,
        skipped_rows: ov.skipped_rows as u32,
        max: ov.max,
        unit: unit(p, &r),
        cluster_starts: info.cluster_starts.clone(),
    })
}

/// `GET /api/threads`: the thread axis, and the clusters of a cluster order.
pub fn threads(p: &Profile, cache: &ViewCache, q: &ViewParams) -> Result<ThreadsResponse, ApiError> {
    let r = resolve(p, q)?;
    let key = axis_key(p, &r, q)?;
    let info = cache.axis(p, &key);
    let clusters = match &info.clustering {
        Some(c) => {
            let reps = representatives(p, c, r.metric);
            (0..c.sizes.len())
                .map(|k| ClusterJson {
                    id: k as u32,
                    size: c.sizes[k] as u32,
                    representatives: reps
                        .iter()
                        .filter(|t| c.assignment[t.index()] as usize == k)
                        .map(|t| p.thread(*t).to_string())
                        .collect(),
                    centroid: c.centroids[k].clone(),
                })
                .collect()
        }
        None => Vec::new(),
    };
    Ok(ThreadsResponse {
        thread_order: info.label.clone(),
        count: info.axis.len() as u32,
        threads: info
            .axis
            .order
            .iter()
            .take(10_000)
            .map(|t| p.thread(*t).to_string())
            .collect(),
        clusters,
        features: info
            .clustering
            .as_ref()
            .map(|c| c.features.iter().map(|e| p.event(*e).name.clone()).collect())
            .unwrap_or_default(),
    })
}

/// `GET /api/event/{id}`.
pub fn event(p: &Profile, id: u32, q: &ViewParams) -> Result<EventDetail, ApiError> {
    let r = resolve(p, q)?;
    if id as usize >= p.events().len() {
        return Err(ApiError::not_found(format!("no event {id}")));
    }
    let e = EventId(id);
    let ev = p.event(e);
    let st = event_stats(p, e, r.metric);
    let sorted = perfscape_analysis::thread_values_sorted(p, e, r.kind, r.metric);
    let raw: Vec<f64> = sorted.iter().map(|v| v.1).collect();
    let bins = match q.bins {
        Some(k) => Bins::Count(k.clamp(1, 1000) as usize),
        None => Bins::Auto,
    };
    let hist = histogram(&raw, &bins).map_err(ApiError::bad)?;
    let points = q.points.unwrap_or(4096).clamp(16, 100_000) as usize;
    let (values, downsampled) = if sorted.len() <= points {
        (
            sorted
                .iter()
                .map(|(t, v)| ThreadValue {
                    thread: p.thread(*t).to_string(),
                    value: *v,
                })
                .collect(),
            false,
        )
    } else {
        // Rank-space buckets; each keeps its largest value (the first, as values are sorted).
        let per = sorted.len().div_ceil(points);
        (
            sorted
                .chunks(per)
                .map(|c| ThreadValue {
                    thread: p.thread(c[0].0).to_string(),
                    value: c[0].1,
                })
                .collect(),
            true,
        )
    };
    Ok(EventDetail {
        id,
        name: ev.name.clone(),
        groups: groups(p, e),
        source: ev.source.as_ref().map(|s| format!("{}:{}", s.file, s.line)),
        metric: r.metric.0,
        unit: unit(p, &r),
        kind: r.kind.as_str().into(),
        stats: summary_json(p, st.get(r.kind)),
        values,
        downsampled,
        threads: p.interval(e).len() as u32,
        histogram: HistogramJson {
            edges: hist.edges,
            counts: hist
                .counts
                .iter()
                .map(|&c| u32::try_from(c).unwrap_or(u32::MAX))
                .collect(),
        },
    })
}

/// `GET /api/calltree`.
pub fn calltree(p: &Profile, q: &ViewParams) -> Result<CallTreeResponse, ApiError> {
    let r = resolve(p, q)?;
    let scope_s = q.scope.clone().unwrap_or_else(|| "total".into());
    let scope = match scope_s.as_str() {
        "total" => TreeScope::Total,
        "mean" => TreeScope::Mean,
        "mean_all" => TreeScope::MeanAll,
        t => {
            let id = t.parse().map_err(|_| {
                ApiError::bad(format!(
                    "scope `{t}`: expected total, mean, mean_all or a thread N.C.T"
                ))
            })?;
            TreeScope::Thread(
                p.thread_index(id)
                    .ok_or_else(|| ApiError::not_found(format!("no thread {t}")))?,
            )
        }
    };
    let nodes = call_tree(p, r.metric, scope)
        .into_iter()
        .map(|n| TreeNodeJson {
            id: n.event.0,
            parent: n.parent.map(|e| e.0),
            depth: n.depth,
            source: p
                .event(n.event)
                .source
                .as_ref()
                .map(|s| format!("{}:{}", s.file, s.line)),
            name: n.name,
            inclusive: n.inclusive,
            exclusive: n.exclusive,
            calls: n.calls,
            threads: n.threads as u32,
            children: n.children.iter().map(|c| c.0).collect(),
            routine: p.event(n.event).routine.map(|r| r.0),
        })
        .collect();
    Ok(CallTreeResponse {
        scope: scope_s,
        unit: p.metric(r.metric).unit.symbol().to_string(),
        has_callpaths: !p.call_tree().is_empty(),
        nodes,
    })
}

/// `GET /api/terrain`: events × threads (x = `w` thread bins, y = `h` event bins), MAX.
pub fn terrain(p: &Profile, cache: &ViewCache, q: &ViewParams) -> Result<TerrainResponse, ApiError> {
    let mut q = q.clone();
    q.reduce = Some("max".into());
    let r = resolve(p, &q)?;
    let rows = cache.rows(p, &r);
    let grid = matrix_of(p, cache, &r, &rows, &q, 40, 64)?;
    let key = axis_key(p, &r, &q)?;
    let info = cache.axis(p, &key);
    let pyr = pyramid_for(p, cache, &r, &rows, &key, &info);
    let k = q.peaks.unwrap_or(5).min(50) as usize;
    // The largest cell of each row (from the pyramid), largest first.
    let mut best: Vec<(usize, usize, f64)> = (0..rows.len())
        .filter_map(|row| pyr.row_max(row).map(|(pos, v)| (row, pos, v)))
        .collect();
    best.sort_by(|a, b| b.2.total_cmp(&a.2).then(a.0.cmp(&b.0)));
    let row_bin_of = |row: usize| {
        grid.rows
            .iter()
            .position(|b| (b.first as usize..=b.last as usize).contains(&row))
    };
    let col_bin_of = |col: usize| {
        grid.cols
            .iter()
            .position(|b| (b.first as usize..=b.last as usize).contains(&col))
    };
    let peaks = best
        .into_iter()
        .filter_map(|(row, pos, value)| {
            let e = *rows.rows[row].events.first()?;
            Some(PeakJson {
                row_bin: row_bin_of(row)? as u32,
                col_bin: col_bin_of(pos)? as u32,
                event: e.0,
                name: rows.rows[row].label.clone(),
                thread: p.thread(info.axis.order[pos]).to_string(),
                value,
            })
        })
        .take(k)
        .collect();
    Ok(TerrainResponse { grid, peaks })
}

/// `GET /api/rows`.
pub fn rows(p: &Profile, cache: &ViewCache, q: &ViewParams) -> Result<RowsResponse, ApiError> {
    let r = resolve(p, q)?;
    let set = cache.rows(p, &r);
    Ok(RowsResponse {
        rows_kind: match r.rows {
            RowKind::Events => "events".into(),
            RowKind::Lines => "lines".into(),
        },
        rows: set
            .rows
            .iter()
            .map(|row| RowJson {
                label: row.label.clone(),
                events: row.events.iter().map(|e| e.0).collect(),
            })
            .collect(),
    })
}
