//! Runs side by side in the browser (`/api/diff`, `/api/diff/threads`): the answers of the
//! compare panel, from [`crate::compare`]'s matching and differences.

use crate::compare::diff::{
    Change, DiffOptions, DiffSort, Normalize, default_normalize, diff_runs, thread_diff,
};
use crate::compare::matching::{MatchNote, RunMatch};
use crate::error::ViewError;
use perfscape_model::{EventId, MetricId, Profile, ValueKind};
use serde::Serialize;

/// One event of [`DiffResponse`].
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DiffRowJson {
    /// The event's id in run A (`null` when added in B): select it with this id.
    pub event_a: Option<u32>,
    /// The event's id in run B (`null` when removed).
    pub event_b: Option<u32>,
    /// The event's name (run A's when it has it).
    pub name: String,
    /// True for callpath events.
    pub callpath: bool,
    /// `matched`, `added` or `removed`.
    pub change: Change,
    /// How the pair was matched (`exact`, `throttled`, `source_location`).
    pub note: MatchNote,
    /// Value in A, in the metric's unit, normalized as [`DiffResponse::normalize`] says.
    pub a: f64,
    /// Value in B.
    pub b: f64,
    /// B − A.
    pub delta: f64,
    /// B / A (`null` when A is 0).
    pub ratio: Option<f64>,
    /// B − A in percent of A's run total (`null` for calls, subcalls and metrics that do not
    /// add up).
    pub percent_of_a: Option<f64>,
    /// Threads of A having the event.
    pub threads_a: u32,
    /// Threads of B having the event.
    pub threads_b: u32,
}

/// `GET /api/diff`: two runs compared event by event (the numbers of `perfscape diff`).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DiffResponse {
    /// Metric index in run A.
    pub metric: u32,
    /// The metric's name.
    pub metric_name: String,
    /// Unit of the values.
    pub unit: String,
    /// Value kind compared.
    pub kind: ValueKind,
    /// Normalization applied (`total` or `per_thread`).
    pub normalize: Normalize,
    /// Threads of run A and of run B.
    pub threads: [u32; 2],
    /// True when both runs have the same threads (per-thread differences line up).
    pub same_threads: bool,
    /// Run totals of A and B, normalized (`null` when the metric does not add up).
    pub totals: [Option<f64>; 2],
    /// Events (flat and callpath) in both runs, added in B, removed in B.
    pub counts: [u32; 3],
    /// Names of the metrics of A only and of B only.
    pub metrics_only: [Vec<String>; 2],
    /// Number of rows before `n` cut them.
    pub rows_total: u32,
    /// The rows, sorted as asked, at most `n`.
    pub rows: Vec<DiffRowJson>,
}

/// Parameters of [`diff_table`].
#[derive(Debug, Clone, Copy)]
pub struct DiffParams {
    /// Run A's metric.
    pub metric: MetricId,
    /// The value kind.
    pub kind: ValueKind,
    /// `None`: per thread when the thread counts differ, else the total.
    pub normalize: Option<Normalize>,
    /// Include callpath events.
    pub callpaths: bool,
    /// Row order.
    pub sort: DiffSort,
    /// At most this many rows.
    pub n: usize,
}

/// Run B's metric of run A's `metric`. Errors: `metric` is not one of A's, or B lacks it.
pub(super) fn metric_in_both(
    a: &Profile,
    matched: &RunMatch,
    metric: MetricId,
) -> Result<MetricId, ViewError> {
    if metric.index() >= a.metrics().len() {
        return Err(ViewError::invalid(format!(
            "metric={}: run A has {} metrics",
            metric.0,
            a.metrics().len()
        )));
    }
    matched
        .metric_in_b(metric)
        .ok_or_else(|| ViewError::invalid(format!("metric={}: not in run B", metric.0)))
}

/// The compare panel's table: [`diff_runs`] with names, the run totals and what is in one run
/// only. Errors: the metric is not one of A's, or not in B.
pub fn diff_table(
    a: &Profile,
    b: &Profile,
    matched: &RunMatch,
    q: DiffParams,
) -> Result<DiffResponse, ViewError> {
    metric_in_both(a, matched, q.metric)?;
    let normalize = q.normalize.unwrap_or_else(|| default_normalize(a, b));
    let opts = DiffOptions {
        metric: q.metric,
        kind: q.kind,
        normalize,
        include_callpaths: q.callpaths,
        sort: q.sort,
    };
    let d = diff_runs(a, b, matched, opts).map_err(|e| ViewError::invalid(e.to_string()))?;
    let name = |e: Option<EventId>, p: &Profile| e.map(|e| (p.event_name(e), p.event(e).is_callpath()));
    let rows = d
        .rows
        .iter()
        .take(q.n)
        .map(|r| {
            let (name, callpath) = name(r.a, a).or_else(|| name(r.b, b)).unwrap_or_default();
            DiffRowJson {
                event_a: r.a.map(|e| e.0),
                event_b: r.b.map(|e| e.0),
                name,
                callpath,
                change: r.change,
                note: r.note,
                a: r.value_a,
                b: r.value_b,
                delta: r.delta,
                ratio: r.ratio,
                percent_of_a: r.percent_of_a,
                threads_a: r.threads_a as u32,
                threads_b: r.threads_b as u32,
            }
        })
        .collect();
    let names = |p: &Profile, ms: &[MetricId]| ms.iter().map(|&m| p.metric(m).name.clone()).collect();
    Ok(DiffResponse {
        metric: q.metric.0,
        metric_name: a.metric(q.metric).name.clone(),
        unit: a.metric(q.metric).unit.symbol().to_string(),
        kind: q.kind,
        normalize,
        threads: [a.threads().len() as u32, b.threads().len() as u32],
        same_threads: matched.same_threads(),
        totals: [d.total_a, d.total_b],
        counts: [
            matched.events.len() as u32,
            matched.events_only_b.len() as u32,
            matched.events_only_a.len() as u32,
        ],
        metrics_only: [
            names(a, &matched.metrics_only_a),
            names(b, &matched.metrics_only_b),
        ],
        rows_total: d.rows.len() as u32,
        rows,
    })
}

/// One thread of [`DiffThreadsResponse`].
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DiffThreadJson {
    /// The thread, `node.context.thread`.
    pub thread: String,
    /// Its value in A (`null` when A lacks the thread or the thread the event).
    pub a: Option<f64>,
    /// Its value in B.
    pub b: Option<f64>,
    /// B − A (a missing value counts 0).
    pub delta: f64,
}

/// `GET /api/diff/threads`: one event's difference thread by thread.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DiffThreadsResponse {
    /// Run A's event id.
    pub event: u32,
    /// Its name.
    pub name: String,
    /// Unit of the values.
    pub unit: String,
    /// True when both runs have the same threads.
    pub same_threads: bool,
    /// The threads, largest increase first (see [`thread_diff`]).
    pub threads: Vec<DiffThreadJson>,
}

/// The difference of run A's event `event` thread by thread. Errors: no such event or
/// metric, or the event is not in B.
pub fn diff_threads(
    a: &Profile,
    b: &Profile,
    matched: &RunMatch,
    event: EventId,
    metric: MetricId,
    kind: ValueKind,
) -> Result<DiffThreadsResponse, ViewError> {
    if event.index() >= a.events().len() {
        return Err(ViewError::not_found(format!(
            "event={}: no such event in run A",
            event.0
        )));
    }
    let pair = matched
        .events
        .iter()
        .find(|p| p.a == event)
        .copied()
        .ok_or_else(|| {
            ViewError::not_found(format!(
                "event={}: `{}` is not in run B",
                event.0,
                a.event_name(event)
            ))
        })?;
    let mb = metric_in_both(a, matched, metric)?;
    let threads = thread_diff(a, b, matched, pair, (metric, mb), kind)
        .into_iter()
        .map(|r| DiffThreadJson {
            thread: r.thread.to_string(),
            a: r.value_a,
            b: r.value_b,
            delta: r.delta,
        })
        .collect();
    Ok(DiffThreadsResponse {
        event: event.0,
        name: a.event_name(event),
        unit: a.metric(metric).unit.symbol().to_string(),
        same_threads: matched.same_threads(),
        threads,
    })
}

/// What the cells of a [`DiffMatrixResponse`] hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum DiffShow {
    /// B − A, in the metric's unit.
    Delta,
    /// log2(B / A): 0 = no change, 1 = doubled, −1 = halved (`null` where A or B is 0).
    LogRatio,
}

/// One row (event) of [`DiffMatrixResponse`].
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DiffMatrixRow {
    /// Run A's event id.
    pub event: u32,
    /// Its name.
    pub name: String,
    /// B − A of the event over the common threads.
    pub delta: f64,
}

/// `GET /api/diff/matrix`: the diff heat map, events × the threads both runs have, at screen
/// resolution.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DiffMatrixResponse {
    /// What the cells hold.
    pub show: DiffShow,
    /// Unit of `delta` cells.
    pub unit: String,
    /// The rows: the matched events with the largest |B − A| over the common threads, largest
    /// first.
    pub rows: Vec<DiffMatrixRow>,
    /// Threads both runs have (the columns are bins of them, in A's thread order).
    pub threads: u32,
    /// Per column, its first and last thread (`node.context.thread`).
    pub columns: Vec<[String; 2]>,
    /// Row-major cells, `rows × columns`: per bin the value of largest magnitude among its
    /// threads (a peak is never averaged away); `null` where no thread has a value.
    pub cells: Vec<Option<f64>>,
    /// The largest |cell|: the diverging scale runs from −extent to +extent, centred on 0.
    pub extent: f64,
}

/// Per thread of `p` (dense, by thread index) the value of event `e`, `None` where the thread
/// lacks it.
fn dense(p: &Profile, e: EventId, m: MetricId, kind: ValueKind) -> Vec<Option<f64>> {
    let col = p.interval(e);
    let mut out = vec![None; p.threads().len()];
    for (t, v) in col.threads().iter().zip(col.values(kind, m)) {
        out[t.index()] = Some(*v);
    }
    out
}

/// The diff heat map: the `rows` matched events (flat, or also callpaths) with the largest
/// |B − A| summed over the threads both runs have, × those threads in `width` bins (at most one
/// bin per thread). A cell is per thread B − A (a thread lacking the event counts 0) or
/// log2(B / A), reduced per bin to the value of largest magnitude. Errors: the metric is not
/// one of A's or not in B.
pub fn diff_matrix(
    a: &Profile,
    b: &Profile,
    matched: &RunMatch,
    q: DiffParams,
    show: DiffShow,
    width: usize,
) -> Result<DiffMatrixResponse, ViewError> {
    let mb = metric_in_both(a, matched, q.metric)?;
    let common = &matched.threads;
    let per_thread = |pair: &crate::compare::matching::EventPair| -> Vec<Option<f64>> {
        let (va, vb) = (dense(a, pair.a, q.metric, q.kind), dense(b, pair.b, mb, q.kind));
        common
            .iter()
            .map(|&(ta, tb)| {
                let (x, y) = (va[ta.index()], vb[tb.index()]);
                match show {
                    _ if x.is_none() && y.is_none() => None,
                    DiffShow::Delta => Some(y.unwrap_or(0.0) - x.unwrap_or(0.0)),
                    DiffShow::LogRatio => match (x, y) {
                        (Some(x), Some(y)) if x > 0.0 && y > 0.0 => Some((y / x).log2()),
                        _ => None,
                    },
                }
            })
            .collect()
    };
    // Rank the matched events by |B − A| over the common threads.
    let mut ranked: Vec<(f64, &crate::compare::matching::EventPair)> = matched
        .events
        .iter()
        .filter(|p| q.callpaths || !a.event(p.a).is_callpath())
        .map(|p| {
            // With the same threads in both runs the sum over them is the difference of the
            // columns' sums (no per-thread vectors for the events that are not shown).
            let d: f64 = if matched.same_threads() {
                let sum = |r: &Profile, e: EventId, m: MetricId| {
                    r.interval(e).values(q.kind, m).iter().sum::<f64>()
                };
                sum(b, p.b, mb) - sum(a, p.a, q.metric)
            } else {
                let (va, vb) = (dense(a, p.a, q.metric, q.kind), dense(b, p.b, mb, q.kind));
                common
                    .iter()
                    .map(|&(ta, tb)| vb[tb.index()].unwrap_or(0.0) - va[ta.index()].unwrap_or(0.0))
                    .sum()
            };
            (d, p)
        })
        .collect();
    ranked.sort_by(|x, y| crate::stats::larger_first(x.0.abs(), y.0.abs()).then(x.1.a.cmp(&y.1.a)));
    ranked.truncate(q.n);
    let n = common.len();
    let w = width.clamp(1, n.max(1));
    let bin = |i: usize| (i * w) / n.max(1);
    let mut columns: Vec<[String; 2]> = vec![[String::new(), String::new()]; w.min(n)];
    for (i, &(ta, _)) in common.iter().enumerate() {
        let c = &mut columns[bin(i)];
        if c[0].is_empty() {
            c[0] = a.thread(ta).to_string();
        }
        c[1] = a.thread(ta).to_string();
    }
    let cols = columns.len();
    let mut cells: Vec<Option<f64>> = vec![None; ranked.len() * cols];
    let mut extent = 0.0f64;
    for (r, (_, pair)) in ranked.iter().enumerate() {
        for (i, v) in per_thread(pair).into_iter().enumerate() {
            let Some(v) = v else { continue };
            let cell = &mut cells[r * cols + bin(i)];
            if cell.is_none_or(|c| v.abs() > c.abs()) {
                *cell = Some(v);
            }
            extent = extent.max(v.abs());
        }
    }
    Ok(DiffMatrixResponse {
        show,
        unit: a.metric(q.metric).unit.symbol().to_string(),
        rows: ranked
            .iter()
            .map(|(d, p)| DiffMatrixRow {
                event: p.a.0,
                name: a.event_name(p.a),
                delta: *d,
            })
            .collect(),
        threads: n as u32,
        columns,
        cells,
        extent,
    })
}

/// One event of [`ScalingResponse`].
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ScalingRowJson {
    /// The event's id in the main run (`null` when it lacks the event).
    pub event: Option<u32>,
    /// Its name.
    pub name: String,
    /// Per count: the per-thread value (mean over the count's runs), in the metric's unit.
    pub values: Vec<f64>,
    /// Per count: speedup against the smallest count (`null` where the value is 0).
    pub speedup: Vec<Option<f64>>,
    /// Per count: parallel efficiency.
    pub efficiency: Vec<Option<f64>>,
    /// Per count: percent of the run (`null` for a metric that does not add up).
    pub share_percent: Vec<Option<f64>>,
    /// The share of the run grows with scale.
    pub share_grows: bool,
    /// The Extra-P model, as Extra-P writes it with `p` for the count (`null` when none).
    pub model: Option<String>,
    /// Why there is no model.
    pub model_error: Option<String>,
    /// The model sampled at 64 counts spaced evenly on a log scale from the smallest to the
    /// largest count: `[count, value]` (empty without a model).
    pub curve: Vec<[f64; 2]>,
}

/// `GET /api/scaling`: a scaling study of the served runs (the main run and the compared ones,
/// each at its process count).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ScalingResponse {
    /// The metric's name.
    pub metric: String,
    /// Unit of the values.
    pub unit: String,
    /// The value kind.
    pub kind: ValueKind,
    /// The distinct counts, ascending.
    pub counts: Vec<f64>,
    /// Runs at each count.
    pub runs_per_count: Vec<u32>,
    /// The events, largest value at the largest count first.
    pub rows: Vec<ScalingRowJson>,
}

/// The scaling view: [`crate::compare::scaling::scaling`] of `runs` (each with its count; the
/// first is the main run, whose event ids the rows carry) for the main run's metric `metric`.
/// Errors: fewer than two counts, a run without the metric.
pub fn scaling_view(
    runs: &[(f64, &Profile)],
    metric: MetricId,
    kind: ValueKind,
    callpaths: bool,
) -> Result<ScalingResponse, ViewError> {
    let main = runs.first().ok_or_else(|| ViewError::invalid("no runs"))?.1;
    if metric.index() >= main.metrics().len() {
        return Err(ViewError::invalid(format!(
            "metric={}: the run has {} metrics",
            metric.0,
            main.metrics().len()
        )));
    }
    let name = &main.metric(metric).name;
    let s = crate::compare::scaling::scaling(runs, name, kind, callpaths)
        .map_err(|e| ViewError::invalid(e.to_string()))?;
    let (lo, hi) = (s.counts[0], s.counts[s.counts.len() - 1]);
    let rows = s
        .rows
        .iter()
        .map(|r| ScalingRowJson {
            event: r.events.first().copied().flatten().map(|e| e.0),
            name: r.name.clone(),
            values: r.values.clone(),
            speedup: r.speedup.clone(),
            efficiency: r.efficiency.clone(),
            share_percent: r.share_percent.clone(),
            share_grows: r.share_grows,
            model: r.model.as_ref().map(|m| m.formula("p")),
            model_error: r.model_error.clone(),
            curve: r.model.as_ref().map_or_else(Vec::new, |m| {
                (0..64)
                    .map(|i| {
                        let x = lo * (hi / lo).powf(i as f64 / 63.0);
                        [x, m.eval(x)]
                    })
                    .collect()
            }),
        })
        .collect();
    Ok(ScalingResponse {
        metric: name.clone(),
        unit: main.metric(metric).unit.symbol().to_string(),
        kind,
        counts: s.counts,
        runs_per_count: s.runs_per_count.iter().map(|&n| n as u32).collect(),
        rows,
    })
}
