//! Views of a run observed over time ([`SampleSeries`]): the sample list, one event over the
//! samples (trend), seed 001's Kiviat tube (several events per thread as polygons stacked
//! along the samples), and its "threads as points in a space of three metrics" view (point
//! cloud, computed on one sample's profile or on any profile).

use super::{finite, thin};
use crate::error::ViewError;
use crate::params::{EventIds, ThreadAddrs, Values, event_id};
use crate::stats::larger_first;
use perfscape_model::{
    Combine, EventId, MetricId, Profile, SampleId, SampleInfo, SampleMode, SampleSeries, ThreadId,
    ThreadIndex, ValueKind,
};
use serde::Serialize;

/// One sample of the series.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
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
    /// True when its values were dropped to keep a live run within its window of samples
    /// (`serve --sample-window`): it cannot be selected; the next kept sample's deltas
    /// include its interval.
    pub thinned: bool,
}

/// `GET /api/series`: the samples of a run observed over time.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SeriesResponse {
    /// Samples in sequence order.
    pub samples: Vec<SampleJson>,
    /// Threads known.
    pub threads: u32,
    /// True while samples keep arriving.
    pub live: bool,
}

/// Statistics of one event across threads at one sample.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct TrendPoint {
    /// Sample sequence number (only kept samples have points; see `SampleJson::thinned`).
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
    /// Sum over threads (the aggregate); `null` when no thread has the event, or for a metric
    /// that does not add up (its minimum, maximum and mean are the other fields).
    pub sum: Option<f64>,
    /// Thread with the largest value.
    pub max_thread: Option<String>,
}

/// `GET /api/trend`: one event over the samples (min / mean / max across threads, σ, sum).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
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
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct KiviatThread {
    /// Thread address.
    pub thread: String,
    /// `values[sample][event]`, each scaled to [0, 1] by the event's largest value in the
    /// answer; `null` where the thread did not write the sample.
    pub values: Vec<Vec<Option<f64>>>,
}

/// `GET /api/kiviat`: per-thread radar polygons over the samples (seed 001's Kiviat tube).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct KiviatResponse {
    /// The events (axes of the polygons).
    pub events: Vec<String>,
    /// Each event's largest value (the scale of its axis), in the unit.
    pub scale: Vec<f64>,
    /// Unit.
    pub unit: String,
    /// Sample sequence numbers along the tube (kept samples only).
    pub samples: Vec<u32>,
    /// One tube per thread.
    pub threads: Vec<KiviatThread>,
}

/// `GET /api/pointcloud`: threads as points in a space of three events, coloured by a fourth.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
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

fn mode_name(m: SampleMode) -> &'static str {
    match m {
        SampleMode::Cumulative => "cumulative",
        SampleMode::Delta => "delta",
    }
}

fn sample_json(i: usize, s: &SampleInfo) -> SampleJson {
    let present = s.present_count() as u32;
    let expected = s.expected_threads() as u32;
    SampleJson {
        seq: i as u32,
        name: s.name().to_string(),
        timestamp_us: s.timestamp_us() as f64,
        present,
        missing: expected.saturating_sub(present),
        complete: s.is_complete(),
        thinned: s.is_thinned(),
    }
}

/// `GET /api/series`: the samples of `series` (none: an empty list), `live` while it grows.
pub fn samples(series: Option<&SampleSeries>, live: bool) -> SeriesResponse {
    let Some(series) = series else {
        return SeriesResponse {
            samples: vec![],
            threads: 0,
            live,
        };
    };
    SeriesResponse {
        samples: series
            .samples()
            .iter()
            .enumerate()
            .map(|(i, s)| sample_json(i, s))
            .collect(),
        threads: series.threads().len() as u32,
        live,
    }
}

/// `GET /api/trend`: statistics of timer `event` across threads at every sample (`values`,
/// `mode`), computed by [`SampleSeries::timer_trend`]: min / mean / max / population σ over the
/// threads having the event, and their sum (`null`s where no thread has it yet; no sum for a
/// metric that does not add up).
///
/// # Errors
/// [`ViewError::NotFound`] for an unknown event.
pub fn trend(
    series: &SampleSeries,
    event: u32,
    values: Values,
    mode: SampleMode,
) -> Result<TrendResponse, ViewError> {
    let e = event_id(series.timer_count(), event)?;
    let adds_up = values.kind.is_metric_independent()
        || series
            .metrics()
            .get(values.metric.index())
            .is_none_or(|m| m.combine.is_additive());
    let points = series
        .timer_trend(e, values.kind, values.metric, mode)
        .iter()
        .map(|(s, a)| TrendPoint {
            seq: s.0,
            timestamp_us: series.sample(*s).map_or(0.0, |s| s.timestamp_us() as f64),
            threads: a.threads,
            min: finite(a.min),
            mean: finite(a.mean),
            max: finite(a.max),
            stddev: finite(a.stddev),
            sum: (a.threads > 0 && adds_up).then_some(a.sum),
            max_thread: a.max_thread.map(|t| series.threads()[t.index()].to_string()),
        })
        .collect();
    Ok(TrendResponse {
        event: e.0,
        name: series.timer_name(e).to_string(),
        mode: mode_name(mode).into(),
        unit: values.unit(series.metrics()),
        points,
    })
}

/// Most events on a Kiviat tube's axes.
pub const KIVIAT_EVENTS_MAX: usize = 16;
/// Most threads (tubes) in one Kiviat answer.
pub const KIVIAT_THREADS_MAX: usize = 64;
/// Most samples along one Kiviat tube (evenly thinned beyond; the last is always kept).
pub const KIVIAT_SAMPLES_MAX: usize = 256;
/// Default events of a Kiviat tube.
const KIVIAT_EVENTS_DEFAULT: usize = 6;
/// Default threads of a Kiviat answer.
const KIVIAT_THREADS_DEFAULT: usize = 8;

/// The Kiviat tube's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct KiviatParams {
    /// The metric and value kind.
    pub values: Values,
    /// Cumulative values or deltas.
    pub mode: SampleMode,
    /// The events on the axes (`events`; default the 6 flat timers with the largest
    /// per-thread value at the last sample); at most 16.
    pub events: Option<EventIds>,
    /// The threads, one tube each (`threads_list`; default: `thread`, then the threads with
    /// the smallest and largest value of each event, at most 8); at most 64.
    pub threads: Option<ThreadAddrs>,
    /// A thread the default tubes include first (`thread`).
    pub thread: Option<ThreadId>,
}

fn series_thread(series: &SampleSeries, id: ThreadId) -> Result<ThreadIndex, ViewError> {
    series
        .thread_index(id)
        .ok_or_else(|| ViewError::not_found(format!("no thread {id}")))
}

/// `GET /api/kiviat`: for each thread, the values of the events at every sample (thinned
/// evenly to 256, the last kept), each divided by its event's largest magnitude in the answer
/// (`scale`).
///
/// # Errors
/// [`ViewError::Invalid`] for more than 16 events or 64 threads; [`ViewError::NotFound`] for
/// unknown events or threads.
pub fn kiviat(series: &SampleSeries, params: &KiviatParams) -> Result<KiviatResponse, ViewError> {
    let (kind, m, mode) = (params.values.kind, params.values.metric, params.mode);
    let kept: Vec<SampleId> = series.kept_samples().collect();
    let last = kept.last().copied().unwrap_or(SampleId(0));
    let events = match &params.events {
        Some(list) => list.events(series.timer_count())?,
        None => default_events(series, last, kind, m, KIVIAT_EVENTS_DEFAULT),
    };
    if events.len() > KIVIAT_EVENTS_MAX {
        return Err(ViewError::invalid(format!(
            "kiviat: at most {KIVIAT_EVENTS_MAX} events (got {})",
            events.len()
        )));
    }
    let threads: Vec<ThreadIndex> = match &params.threads {
        Some(list) => list
            .0
            .iter()
            .map(|&id| series_thread(series, id))
            .collect::<Result<_, _>>()?,
        None => {
            let first = params.thread.map(|t| series_thread(series, t)).transpose()?;
            default_threads(series, first, &events, last, kind, m, mode)
        }
    };
    if threads.len() > KIVIAT_THREADS_MAX {
        return Err(ViewError::invalid(format!(
            "kiviat: at most {KIVIAT_THREADS_MAX} threads (got {})",
            threads.len()
        )));
    }
    let samples: Vec<SampleId> = thin(kept.len(), KIVIAT_SAMPLES_MAX)
        .into_iter()
        .map(|i| kept[i])
        .collect();
    let mut raw: Vec<Vec<Vec<Option<f64>>>> = threads
        .iter()
        .map(|&t| {
            samples
                .iter()
                .map(|&s| {
                    events
                        .iter()
                        .map(|&e| series.timer_value(e, t, s, kind, m, mode).and_then(finite))
                        .collect()
                })
                .collect()
        })
        .collect();
    let mut scale = vec![0.0f64; events.len()];
    for tube in &raw {
        for row in tube {
            for (k, v) in row.iter().enumerate() {
                if let Some(v) = v {
                    scale[k] = scale[k].max(v.abs());
                }
            }
        }
    }
    for tube in &mut raw {
        for row in tube.iter_mut() {
            for (k, v) in row.iter_mut().enumerate() {
                if let Some(x) = v
                    && scale[k] > 0.0
                {
                    *x /= scale[k];
                }
            }
        }
    }
    Ok(KiviatResponse {
        events: events.iter().map(|&e| series.timer_name(e).to_string()).collect(),
        scale,
        unit: params.values.unit(series.metrics()),
        samples: samples.iter().map(|s| s.0).collect(),
        threads: threads
            .iter()
            .zip(raw)
            .map(|(&t, values)| KiviatThread {
                thread: series.threads()[t.index()].to_string(),
                values,
            })
            .collect(),
    })
}

fn is_callpath(name: &str) -> bool {
    name.contains("=>")
}

/// The `k` flat timers with the largest per-thread value at sample `s`.
fn default_events(
    series: &SampleSeries,
    s: SampleId,
    kind: ValueKind,
    m: MetricId,
    k: usize,
) -> Vec<EventId> {
    let mut ranked: Vec<(f64, EventId)> = (0..series.timer_count())
        .map(|i| EventId(i as u32))
        .filter(|&e| !is_callpath(series.timer_name(e)))
        .map(|e| {
            let v = series.timer_values(e, s, kind, m, SampleMode::Cumulative);
            let max = v
                .values
                .iter()
                .copied()
                .filter(|x| x.is_finite())
                .fold(0.0, f64::max);
            (max, e)
        })
        .filter(|(v, _)| *v > 0.0)
        .collect();
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    ranked.into_iter().take(k).map(|x| x.1).collect()
}

/// `first` (the selected thread) if any, then the threads with the smallest and largest value
/// of each event at sample `s`, then the first thread present, at most
/// [`KIVIAT_THREADS_DEFAULT`], in thread order.
fn default_threads(
    series: &SampleSeries,
    first: Option<ThreadIndex>,
    events: &[EventId],
    s: SampleId,
    kind: ValueKind,
    m: MetricId,
    mode: SampleMode,
) -> Vec<ThreadIndex> {
    let mut out: Vec<ThreadIndex> = Vec::new();
    let mut add = |t: ThreadIndex| {
        if !out.contains(&t) && out.len() < KIVIAT_THREADS_DEFAULT {
            out.push(t);
        }
    };
    if let Some(t) = first {
        add(t);
    }
    for &e in events {
        let v = series.timer_values(e, s, kind, m, mode);
        let mut best: Option<(f64, ThreadIndex)> = None;
        let mut worst: Option<(f64, ThreadIndex)> = None;
        for (&t, &x) in v.threads.iter().zip(v.values.iter()) {
            if !x.is_finite() {
                continue;
            }
            if best.is_none_or(|b| x > b.0) {
                best = Some((x, t));
            }
            if worst.is_none_or(|w| x < w.0) {
                worst = Some((x, t));
            }
        }
        if let Some((_, t)) = best {
            add(t);
        }
        if let Some((_, t)) = worst {
            add(t);
        }
    }
    if let Some(t) = series
        .samples()
        .get(s.index())
        .and_then(|i| i.present_threads().next())
    {
        add(t);
    }
    out.sort_by_key(|t| series.threads()[t.index()]);
    out
}

/// Default point-cloud points.
pub const POINTS_DEFAULT: u32 = 20_000;
/// Most point-cloud points.
pub const POINTS_MAX: u32 = 200_000;

/// `GET /api/pointcloud`: every thread of `profile` as a point `[x, y, z, colour]` of the
/// `values` of `events` (3 or 4 ids; default the 4 flat events with the largest total, totals
/// combined under the metric's rule); with 3 events the colour is their sum, or their
/// combination under the metric's rule when it does not add up (the minimum of a minimum
/// metric, ...). A thread without an event has 0 there. Thinned to
/// `points_max` threads (default 20,000, at most 200,000) by an even stride in thread order.
///
/// # Errors
/// [`ViewError::Invalid`] for other than 3 or 4 events; [`ViewError::NotFound`] for unknown
/// events.
pub fn point_cloud(
    profile: &Profile,
    values: Values,
    events: Option<&EventIds>,
    points_max: Option<u32>,
) -> Result<PointCloudResponse, ViewError> {
    let (kind, m) = (values.kind, values.metric);
    let rule = if kind.is_metric_independent() {
        Combine::Sum
    } else {
        profile.metric(m).combine
    };
    let events = match events {
        Some(list) => list.events(profile.events().len())?,
        None => {
            let mut ranked: Vec<(f64, EventId)> = profile
                .event_ids()
                .filter(|&e| !profile.event(e).is_callpath())
                .filter_map(|e| Some((rule.fold(profile.interval(e).values(kind, m))?, e)))
                .filter(|(v, _)| *v > 0.0)
                .collect();
            ranked.sort_by(|a, b| larger_first(a.0, b.0).then(a.1.cmp(&b.1)));
            ranked.into_iter().take(4).map(|x| x.1).collect()
        }
    };
    if !(3..=4).contains(&events.len()) {
        return Err(ViewError::invalid(format!(
            "pointcloud: expected 3 or 4 events (x, y, z[, colour]); got {}",
            events.len()
        )));
    }
    let n = profile.threads().len();
    let dense: Vec<Vec<f64>> = events
        .iter()
        .map(|&e| {
            let col = profile.interval(e);
            let mut v = vec![0.0; n];
            for (t, x) in col.threads().iter().zip(col.values(kind, m)) {
                v[t.index()] = *x;
            }
            v
        })
        .collect();
    let max = points_max.unwrap_or(POINTS_DEFAULT).clamp(1, POINTS_MAX) as usize;
    let picked = thin(n, max);
    let points = picked
        .iter()
        .map(|&t| {
            let x = dense[0][t];
            let y = dense[1][t];
            let z = dense[2][t];
            let c = dense
                .get(3)
                .map_or_else(|| rule.fold(&[x, y, z]).unwrap_or(f64::NAN), |d| d[t]);
            [x, y, z, c]
        })
        .collect();
    let mut axes: Vec<String> = events.iter().map(|&e| profile.event_name(e)).collect();
    if axes.len() == 3 {
        axes.push(match rule {
            Combine::Sum => "x + y + z".into(),
            other => format!("{other} of x, y, z"),
        });
    }
    Ok(PointCloudResponse {
        axes,
        unit: values.unit(profile.metrics()),
        threads: picked
            .iter()
            .map(|&t| profile.thread(ThreadIndex::from(t)).to_string())
            .collect(),
        points,
        total_threads: n as u32,
    })
}
