//! Runs observed over time: which profile a view shows (a sample, cumulative or delta), and
//! the views made across samples (trend, Kiviat tube) or across threads in a space of
//! events (point cloud).
//!
//! A run with samples (TAU snapshots, merged snapshots, incremental dumps, or a live run) is
//! a [`SampleSeries`]. Every view endpoint takes `sample` and `mode`; [`SeriesState::pick`]
//! turns them into a [`Profile`] made by [`SampleSeries::profile_at`], kept in a small LRU
//! together with its own [`ViewCache`], so a slider moving over samples re-uses the
//! profiles it visited. Event ids of every sample profile equal the series' (and the run's
//! when the run's profile is the series' final profile).
//!
//! The Kiviat tube is the view of perfscape's seed paper 001 (Kiviat diagrams of several
//! events per thread stacked along time); the point cloud is its "threads as points in a
//! space of three metrics" view.

use crate::api::{
    KiviatResponse, KiviatThread, PointCloudResponse, SampleJson, SeriesResponse, TrendPoint, TrendResponse,
};
use crate::query::{ApiError, ViewCache, ViewParams};
use perfscape_model::{EventId, MetricId, Profile, SampleId, SampleMode, SampleSeries, ThreadId, ValueKind};
use std::ops::Deref;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};

/// Sample profiles kept (least recently used dropped). A 4,096-thread sample profile of the
/// np64-like runs takes a few MB.
const PROFILES_KEPT: usize = 8;

/// Most events on a Kiviat tube's axes.
const KIVIAT_EVENTS_MAX: usize = 16;
/// Most threads (tubes) in one Kiviat answer.
const KIVIAT_THREADS_MAX: usize = 64;
/// Most samples along one Kiviat tube (evenly thinned beyond; the last is always kept).
const KIVIAT_SAMPLES_MAX: usize = 256;
/// Default events of a Kiviat tube.
const KIVIAT_EVENTS_DEFAULT: usize = 6;
/// Default threads of a Kiviat answer.
const KIVIAT_THREADS_DEFAULT: usize = 8;

/// Which profile a request is answered from.
pub enum Picked {
    /// The run's own profile (and the state's view cache).
    Run,
    /// A sample's profile and its view cache.
    Sample(Arc<Profile>, Arc<ViewCache>),
}

/// Where the samples come from: a finished run's series, or a live run's growing one.
pub trait SeriesSource: Send + Sync {
    /// Read access to the series as it is now (a live source holds its read lock while the
    /// returned guard lives; keep it short).
    fn read(&self) -> Box<dyn Deref<Target = SampleSeries> + '_>;
}

impl SeriesSource for SampleSeries {
    fn read(&self) -> Box<dyn Deref<Target = SampleSeries> + '_> {
        Box::new(self)
    }
}

impl SeriesSource for RwLock<SampleSeries> {
    fn read(&self) -> Box<dyn Deref<Target = SampleSeries> + '_> {
        Box::new(RwLock::read(self).unwrap_or_else(std::sync::PoisonError::into_inner))
    }
}

impl SeriesSource for perfscape_live::SeriesHandle {
    fn read(&self) -> Box<dyn Deref<Target = SampleSeries> + '_> {
        Box::new(perfscape_live::SeriesHandle::read(self))
    }
}

type ProfileKey = (u32, SampleMode, usize);

/// A sample profile kept in the LRU, with its view cache.
type Kept = (ProfileKey, Arc<Profile>, Arc<ViewCache>);

/// The series of a run (if it has one) and the sample profiles recently asked for.
pub struct SeriesState {
    series: Option<Arc<dyn SeriesSource>>,
    warnings: Mutex<Vec<String>>,
    live: AtomicBool,
    profiles: Mutex<Vec<Kept>>,
}

/// Parses `sample` and `mode` of view parameters. Errors: 400 for a mode other than
/// `cumulative` / `delta`.
pub fn sample_and_mode(q: &ViewParams) -> Result<(Option<u32>, SampleMode), ApiError> {
    let mode = match q.mode.as_deref().unwrap_or("cumulative") {
        "cumulative" => SampleMode::Cumulative,
        "delta" => SampleMode::Delta,
        other => {
            return Err(ApiError::bad(format!(
                "mode `{other}`: expected cumulative or delta"
            )));
        }
    };
    Ok((q.sample, mode))
}

fn mode_name(m: SampleMode) -> &'static str {
    match m {
        SampleMode::Cumulative => "cumulative",
        SampleMode::Delta => "delta",
    }
}

fn value_kind(q: &ViewParams) -> Result<ValueKind, ApiError> {
    match q.kind.as_deref().unwrap_or("exclusive") {
        "exclusive" => Ok(ValueKind::Exclusive),
        "inclusive" => Ok(ValueKind::Inclusive),
        "calls" => Ok(ValueKind::Calls),
        "subcalls" => Ok(ValueKind::Subcalls),
        other => Err(ApiError::bad(format!(
            "kind `{other}`: expected exclusive, inclusive, calls or subcalls"
        ))),
    }
}

fn metric_of(q: &ViewParams, metrics: usize) -> Result<MetricId, ApiError> {
    let m = q.metric.unwrap_or(0);
    if m as usize >= metrics {
        return Err(ApiError::bad(format!(
            "metric {m} does not exist (the run has {metrics})"
        )));
    }
    Ok(MetricId(m))
}

fn unit_of(kind: ValueKind, metrics: &[perfscape_model::Metric], m: MetricId) -> String {
    if kind.is_metric_independent() {
        "count".into()
    } else {
        metrics
            .get(m.index())
            .map_or_else(String::new, |x| x.unit.symbol().to_string())
    }
}

/// Parses a comma-separated list of event ids, each below `count`.
fn event_list(s: &str, count: usize) -> Result<Vec<EventId>, ApiError> {
    s.split(',')
        .filter(|x| !x.trim().is_empty())
        .map(|x| {
            let id: u32 = x
                .trim()
                .parse()
                .map_err(|_| ApiError::bad(format!("events: `{x}` is not an event id")))?;
            if id as usize >= count {
                return Err(ApiError::not_found(format!("no event {id}")));
            }
            Ok(EventId(id))
        })
        .collect()
}

fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

impl SeriesState {
    /// A state for `series` (none for runs without samples); `live` while it grows.
    pub fn new(series: Option<Arc<dyn SeriesSource>>, live: bool) -> Self {
        Self {
            series,
            warnings: Mutex::new(Vec::new()),
            live: AtomicBool::new(live),
            profiles: Mutex::new(Vec::new()),
        }
    }

    /// Number of samples (0 without a series).
    pub fn len(&self) -> usize {
        self.series.as_ref().map(|s| s.read().len()).unwrap_or(0)
    }

    /// True without samples.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// True while samples keep arriving.
    pub fn is_live(&self) -> bool {
        self.live.load(Ordering::Relaxed)
    }

    /// Marks the series finished (the live run ended) or growing again.
    pub fn set_live(&self, live: bool) {
        self.live.store(live, Ordering::Relaxed);
    }

    /// The shared series, if any (a live engine appends to it under the write lock).
    pub fn series(&self) -> Option<&Arc<dyn SeriesSource>> {
        self.series.as_ref()
    }

    /// Notes a problem of a live run (a file that could not be read, a notice), shown with the
    /// run's warnings. Kept: the first 1,000.
    pub fn warn(&self, message: String) {
        if let Ok(mut w) = self.warnings.lock()
            && w.len() < 1000
        {
            w.push(message);
        }
    }

    /// The live run's warnings so far.
    pub fn warnings(&self) -> Vec<String> {
        self.warnings.lock().map(|w| w.clone()).unwrap_or_default()
    }

    /// The profile for `sample` in `mode`. Without a sample: the run's own profile when the
    /// run is finished and `mode` is cumulative; the newest sample otherwise (a live run, or
    /// deltas, which only samples have). Errors: 400 when the run has no samples but one is
    /// asked for; 404 for a sample beyond the series; 503 when a live run has no sample yet
    /// and no profile loaded.
    pub fn pick(
        &self,
        sample: Option<u32>,
        mode: SampleMode,
        run: Option<&Profile>,
    ) -> Result<Picked, ApiError> {
        let Some(series) = &self.series else {
            return match (sample, mode) {
                (None, SampleMode::Cumulative) => Ok(Picked::Run),
                _ => Err(ApiError::bad(
                    "the run has no samples over time (sample/mode apply to snapshot and dump runs)",
                )),
            };
        };
        let series = series.read();
        let n = series.len();
        let s = match sample {
            Some(s) if s as usize >= n => {
                return Err(ApiError::not_found(format!("no sample {s} (the run has {n})")));
            }
            Some(s) => s,
            None if mode == SampleMode::Cumulative && !self.is_live() && run.is_some() => {
                return Ok(Picked::Run);
            }
            None if n == 0 => {
                return if run.is_some() {
                    Ok(Picked::Run)
                } else {
                    Err(ApiError {
                        status: 503,
                        message: "no sample has arrived yet".into(),
                    })
                };
            }
            None => (n - 1) as u32,
        };
        let key = (s, mode, series.timer_count());
        if let Ok(mut list) = self.profiles.lock()
            && let Some(i) = list.iter().position(|(k, _, _)| *k == key)
        {
            let hit = list.remove(i);
            let out = Picked::Sample(hit.1.clone(), hit.2.clone());
            list.push(hit);
            return Ok(out);
        }
        let profile = series.profile_at(SampleId(s), mode).map_err(|e| ApiError {
            status: 500,
            message: format!("internal error: sample {s}: {e}"),
        })?;
        drop(series);
        let profile = Arc::new(profile);
        let cache = Arc::new(ViewCache::default());
        if let Ok(mut list) = self.profiles.lock() {
            if list.len() >= PROFILES_KEPT {
                list.remove(0);
            }
            list.push((key, profile.clone(), cache.clone()));
        }
        Ok(Picked::Sample(profile, cache))
    }

    /// `GET /api/series`: the samples (an empty list for runs without any).
    pub fn info(&self) -> SeriesResponse {
        let live = self.is_live();
        let Some(series) = self.series.as_ref().map(|s| s.read()) else {
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

    fn read(&self) -> Result<Box<dyn Deref<Target = SampleSeries> + '_>, ApiError> {
        Ok(self
            .series
            .as_ref()
            .ok_or_else(|| ApiError::bad("the run has no samples over time"))?
            .read())
    }

    /// `GET /api/trend?event=E`: statistics of timer `E` across threads at every sample
    /// (`kind`, `metric`, `mode`), computed by [`SampleSeries::timer_trend`]: min / mean /
    /// max / population σ over the threads having the event, and their sum. Errors: 400
    /// without a series or an `event`, 404 for an unknown event.
    pub fn trend(&self, q: &ViewParams) -> Result<TrendResponse, ApiError> {
        let series = self.read()?;
        let (_, mode) = sample_and_mode(q)?;
        let kind = value_kind(q)?;
        let m = metric_of(q, series.metrics().len())?;
        let e = q
            .event
            .ok_or_else(|| ApiError::bad("trend: `event` is required"))?;
        if e as usize >= series.timer_count() {
            return Err(ApiError::not_found(format!("no event {e}")));
        }
        let e = EventId(e);
        let points = series
            .timer_trend(e, kind, m, mode)
            .iter()
            .enumerate()
            .map(|(i, a)| TrendPoint {
                seq: i as u32,
                timestamp_us: series
                    .sample(SampleId::from(i))
                    .map_or(0.0, |s| s.timestamp_us() as f64),
                threads: a.threads,
                min: finite(a.min),
                mean: finite(a.mean),
                max: finite(a.max),
                stddev: finite(a.stddev),
                sum: (a.threads > 0).then_some(a.sum),
                max_thread: a.max_thread.map(|t| series.threads()[t.index()].to_string()),
            })
            .collect();
        Ok(TrendResponse {
            event: e.0,
            name: series.timer_name(e).to_string(),
            mode: mode_name(mode).into(),
            unit: unit_of(kind, series.metrics(), m),
            points,
        })
    }

    /// `GET /api/kiviat`: for each thread of `threads_list` (default: `thread` if given, the
    /// threads holding the smallest and largest value of each event, at most 8), the values of the `events`
    /// (default: the 6 flat events with the largest per-thread value at the last sample) at
    /// every sample (thinned evenly to 256), scaled per event by its largest magnitude in the
    /// answer. Errors: 400 without a series or for malformed lists, 404 for unknown ids.
    pub fn kiviat(&self, q: &ViewParams) -> Result<KiviatResponse, ApiError> {
        let series = self.read()?;
        let (_, mode) = sample_and_mode(q)?;
        let kind = value_kind(q)?;
        let m = metric_of(q, series.metrics().len())?;
        let n = series.len();
        let last = SampleId::from(n.saturating_sub(1));
        let events = match q.events.as_deref() {
            Some(s) => event_list(s, series.timer_count())?,
            None => default_events(&series, last, kind, m, KIVIAT_EVENTS_DEFAULT),
        };
        if events.len() > KIVIAT_EVENTS_MAX {
            return Err(ApiError::bad(format!(
                "kiviat: at most {KIVIAT_EVENTS_MAX} events (got {})",
                events.len()
            )));
        }
        let threads: Vec<perfscape_model::ThreadIndex> = match q.threads_list.as_deref() {
            Some(s) => s
                .split(',')
                .filter(|x| !x.trim().is_empty())
                .map(|x| {
                    let id: ThreadId = x
                        .trim()
                        .parse()
                        .map_err(|_| ApiError::bad(format!("threads_list: `{x}`: expected N.C.T")))?;
                    series
                        .thread_index(id)
                        .ok_or_else(|| ApiError::not_found(format!("no thread {id}")))
                })
                .collect::<Result<_, _>>()?,
            None => {
                let first = match q.thread.as_deref() {
                    Some(t) => {
                        let id: ThreadId = t
                            .parse()
                            .map_err(|_| ApiError::bad(format!("thread `{t}`: expected N.C.T")))?;
                        Some(
                            series
                                .thread_index(id)
                                .ok_or_else(|| ApiError::not_found(format!("no thread {id}")))?,
                        )
                    }
                    None => None,
                };
                default_threads(&series, first, &events, last, kind, m, mode)
            }
        };
        if threads.len() > KIVIAT_THREADS_MAX {
            return Err(ApiError::bad(format!(
                "kiviat: at most {KIVIAT_THREADS_MAX} threads (got {})",
                threads.len()
            )));
        }
        let samples = thin(n, KIVIAT_SAMPLES_MAX);
        let mut raw: Vec<Vec<Vec<Option<f64>>>> = threads
            .iter()
            .map(|&t| {
                samples
                    .iter()
                    .map(|&s| {
                        events
                            .iter()
                            .map(|&e| {
                                series
                                    .timer_value(e, t, SampleId::from(s), kind, m, mode)
                                    .and_then(finite)
                            })
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
            unit: unit_of(kind, series.metrics(), m),
            samples: samples.iter().map(|&s| s as u32).collect(),
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
}

fn sample_json(i: usize, s: &perfscape_model::SampleInfo) -> SampleJson {
    let present = s.present_count() as u32;
    let expected = s.expected_threads() as u32;
    SampleJson {
        seq: i as u32,
        name: s.name().to_string(),
        timestamp_us: s.timestamp_us() as f64,
        present,
        missing: expected.saturating_sub(present),
        complete: s.is_complete(),
    }
}

/// Up to `max` evenly spaced positions of `0..n`, always with the last.
fn thin(n: usize, max: usize) -> Vec<usize> {
    if n <= max {
        return (0..n).collect();
    }
    let mut out: Vec<usize> = (0..max).map(|i| i * (n - 1) / (max - 1)).collect();
    out.dedup();
    out
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
/// of each event at sample `s`, then the first thread, at most [`KIVIAT_THREADS_DEFAULT`], in
/// thread order.
fn default_threads(
    series: &SampleSeries,
    first: Option<perfscape_model::ThreadIndex>,
    events: &[EventId],
    s: SampleId,
    kind: ValueKind,
    m: MetricId,
    mode: SampleMode,
) -> Vec<perfscape_model::ThreadIndex> {
    let mut out: Vec<perfscape_model::ThreadIndex> = Vec::new();
    let mut add = |t: perfscape_model::ThreadIndex| {
        if !out.contains(&t) && out.len() < KIVIAT_THREADS_DEFAULT {
            out.push(t);
        }
    };
    if let Some(t) = first {
        add(t);
    }
    for &e in events {
        let v = series.timer_values(e, s, kind, m, mode);
        let mut best: Option<(f64, perfscape_model::ThreadIndex)> = None;
        let mut worst: Option<(f64, perfscape_model::ThreadIndex)> = None;
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
const POINTS_DEFAULT: u32 = 20_000;
/// Most point-cloud points.
const POINTS_MAX: u32 = 200_000;

/// `GET /api/pointcloud`: every thread of `p` as a point `[x, y, z, colour]` of the values of
/// `events` (3 or 4 ids; default the 4 flat events with the largest total), `kind`,
/// `metric`; with 3 events the colour is their sum. A thread without an event has 0 there.
/// Thinned to `points_max` threads (default 20,000) by an even stride in thread order.
/// Errors: 400 for a list of other than 3 or 4 events or a bad kind/metric, 404 for unknown
/// events.
pub fn pointcloud(p: &Profile, q: &ViewParams) -> Result<PointCloudResponse, ApiError> {
    let kind = value_kind(q)?;
    let m = metric_of(q, p.metrics().len())?;
    let events = match q.events.as_deref() {
        Some(s) => event_list(s, p.events().len())?,
        None => {
            let mut ranked: Vec<(f64, EventId)> = p
                .event_ids()
                .filter(|&e| !p.event(e).is_callpath())
                .map(|e| (p.interval(e).values(kind, m).iter().sum::<f64>(), e))
                .filter(|(v, _)| *v > 0.0)
                .collect();
            ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            ranked.into_iter().take(4).map(|x| x.1).collect()
        }
    };
    if !(3..=4).contains(&events.len()) {
        return Err(ApiError::bad(format!(
            "pointcloud: expected 3 or 4 events (x, y, z[, colour]); got {}",
            events.len()
        )));
    }
    let n = p.threads().len();
    let dense: Vec<Vec<f64>> = events
        .iter()
        .map(|&e| {
            let col = p.interval(e);
            let mut v = vec![0.0; n];
            for (t, x) in col.threads().iter().zip(col.values(kind, m)) {
                v[t.index()] = *x;
            }
            v
        })
        .collect();
    let max = q.points_max.unwrap_or(POINTS_DEFAULT).clamp(1, POINTS_MAX) as usize;
    let picked = thin(n, max);
    let points = picked
        .iter()
        .map(|&t| {
            let x = dense[0][t];
            let y = dense[1][t];
            let z = dense[2][t];
            let c = dense.get(3).map_or(x + y + z, |d| d[t]);
            [x, y, z, c]
        })
        .collect();
    let mut axes: Vec<String> = events.iter().map(|&e| p.event(e).name.clone()).collect();
    if axes.len() == 3 {
        axes.push("x + y + z".into());
    }
    Ok(PointCloudResponse {
        axes,
        unit: unit_of(kind, p.metrics(), m),
        threads: picked
            .iter()
            .map(|&t| p.thread(perfscape_model::ThreadIndex::from(t)).to_string())
            .collect(),
        points,
        total_threads: n as u32,
    })
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
        assert_eq!(*t.last().unwrap(), 999);
        assert!(t.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn mode_is_validated() {
        let q = ViewParams {
            mode: Some("sideways".into()),
            ..Default::default()
        };
        assert_eq!(sample_and_mode(&q).unwrap_err().status, 400);
        let q = ViewParams {
            mode: Some("delta".into()),
            sample: Some(3),
            ..Default::default()
        };
        assert_eq!(sample_and_mode(&q).unwrap(), (Some(3), SampleMode::Delta));
    }

    #[test]
    fn runs_without_series_refuse_samples() {
        let st = SeriesState::new(None, false);
        assert!(matches!(
            st.pick(None, SampleMode::Cumulative, None),
            Ok(Picked::Run)
        ));
        assert_eq!(
            st.pick(Some(0), SampleMode::Cumulative, None)
                .err()
                .unwrap()
                .status,
            400
        );
        assert_eq!(st.pick(None, SampleMode::Delta, None).err().unwrap().status, 400);
        assert_eq!(st.trend(&ViewParams::default()).unwrap_err().status, 400);
    }
}
