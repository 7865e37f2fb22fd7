//! [`Integrator`]: merges the samples each thread writes into one [`SampleSeries`].
//!
//! Readers turn what a thread wrote into [`ThreadSample`]s (one per snapshot block or dump
//! file) and [`Integrator::push`] them in the order each thread wrote them; threads may be
//! interleaved in any way, e.g. as files grow in live mode. The integrator decides which
//! thread samples belong together (the *alignment*), appends each integrated sample to the
//! series in sequence, and reports what it did as [`Integrated`] notifications.
//!
//! # Alignment
//! - [`Alignment::ByName`] (TAU snapshots): samples with the same name belong together
//!   (`iteration 40` of every rank); the k-th repetition of a name on a thread goes with the
//!   k-th of the others.
//! - [`Alignment::ByPosition`] (TAU incremental dumps, whose names carry each rank's own
//!   clock): the k-th sample of every thread.
//!
//! # When a sample is integrated
//! The next sample is the pending one that no thread has queued behind another pending
//! sample, earliest timestamp first. It is integrated when every known thread has either
//! written it or *passed* it: the thread ended ([`Integrator::end_thread`], or its sample
//! named `final`, which TAU writes last) or it has written a sample that another thread
//! wrote after this one. A thread that never writes a sample is therefore never waited for
//! once it ended, and with [`IntegratorOptions::max_wait`] not longer than that after the
//! sample was first seen: the sample is integrated with the thread listed as missing.
//! If the missing thread's part arrives later it is added to that sample
//! ([`Integrated::Amended`]): nothing is dropped.
//!
//! The integrator is pure (no I/O, no clock): callers pass the current [`Instant`].

use crate::event::normalize_timer_name;
use crate::ids::{AtomicEventId, EventId, ThreadId, ThreadIndex};
use crate::metric::Metric;
use crate::series::{Amend, ResolvedPart, SampleId, SampleSeries};
use rustc_hash::FxHashMap as HashMap;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Definition of a timer as a reader found it: the reader's id for it and the raw name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimerDef {
    /// Id in the source (TAU's process-wide event id; a row number for formats without ids).
    /// Used with the `Arc` identity to cache name lookups.
    pub id: u32,
    /// Name as written (normalized by the integrator, see [`normalize_timer_name`]).
    pub name: String,
    /// TAU group list, `|`-separated.
    pub groups: String,
}

/// Definition of a user (atomic) event as a reader found it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserEventDef {
    /// Id in the source.
    pub id: u32,
    /// Name as written.
    pub name: String,
}

/// One timer of a [`ThreadSample`].
#[derive(Clone, Debug, PartialEq)]
pub struct TimerSample {
    /// Which timer.
    pub def: Arc<TimerDef>,
    /// Calls since the program started.
    pub calls: f64,
    /// Child calls since the program started.
    pub subcalls: f64,
}

/// One user event of a [`ThreadSample`]: TAU's summary of the values sampled so far.
#[derive(Clone, Debug, PartialEq)]
pub struct UserEventSample {
    /// Which user event.
    pub def: Arc<UserEventDef>,
    /// Number of samples.
    pub count: f64,
    /// Largest value.
    pub max: f64,
    /// Smallest value.
    pub min: f64,
    /// Mean value.
    pub mean: f64,
    /// Sum of squares of the values.
    pub sum_squares: f64,
}

/// What one thread wrote at one moment: cumulative values since the program started.
///
/// `timer_values` holds, per timer in order, exclusive and inclusive per metric:
/// `[excl m0, incl m0, excl m1, incl m1, ...]` (`2 × metrics.len()` values per timer), in the
/// unit of each metric.
#[derive(Clone, Debug, PartialEq)]
pub struct ThreadSample {
    /// The thread.
    pub thread: ThreadId,
    /// Name of the sample (`iteration 40`, `final`, `dump 3`).
    pub name: String,
    /// When the thread wrote it, µs since the Unix epoch (the thread's clock).
    pub timestamp_us: i64,
    /// Metrics of `timer_values`, in their order (shared by the samples of a file).
    pub metrics: Arc<Vec<Metric>>,
    /// The thread's metadata (host, TAU settings, ...), if the source had it.
    pub metadata: Option<Arc<Vec<(String, String)>>>,
    /// Timers with calls and subcalls.
    pub timers: Vec<TimerSample>,
    /// Exclusive/inclusive values, see the type documentation.
    pub timer_values: Vec<f64>,
    /// User events.
    pub user_events: Vec<UserEventSample>,
}

impl ThreadSample {
    /// Exclusive value of timer row `i` in metric `m` (0 if out of range).
    pub fn exclusive(&self, i: usize, m: usize) -> f64 {
        let n = self.metrics.len();
        self.timer_values.get(i * 2 * n + 2 * m).copied().unwrap_or(0.0)
    }

    /// Inclusive value of timer row `i` in metric `m` (0 if out of range).
    pub fn inclusive(&self, i: usize, m: usize) -> f64 {
        let n = self.metrics.len();
        self.timer_values
            .get(i * 2 * n + 2 * m + 1)
            .copied()
            .unwrap_or(0.0)
    }
}

/// How thread samples are matched into integrated samples (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Alignment {
    /// By sample name and repetition (TAU snapshots).
    #[default]
    ByName,
    /// By position in each thread's sequence (TAU incremental dumps).
    ByPosition,
}

/// Options of an [`Integrator`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IntegratorOptions {
    /// How samples are matched. Default [`Alignment::ByName`].
    pub alignment: Alignment,
    /// How long a sample waits for threads that have neither written nor passed it, counted
    /// from when it was first pushed. `None` (the default) waits until those threads end,
    /// which is right for finished runs; live mode sets a bound.
    pub max_wait: Option<Duration>,
    /// Keep at most this many samples' values (at least 4): older samples are thinned as
    /// [`SampleSeries`]'s `thin` describes — the newest half of the window kept whole, the
    /// older samples kept at an even spacing that doubles as the run grows — and the integrator forgets what it
    /// kept for them (which threads wrote them, their names per thread), so a live run's
    /// memory stays flat however long it runs (a few dozen bytes per sample remain: its
    /// name, time and counts). Late parts of a thinned sample are dropped and counted in
    /// [`IntegrationReport::late_after_thinning`]. `None` (the default) keeps every sample.
    pub window: Option<usize>,
}

/// What [`Integrator::poll`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Integrated {
    /// A new sample was appended to the series.
    Sample(SampleId),
    /// A thread that was missing from an earlier sample delivered its part late; the sample
    /// now has it (its cumulative values, and the deltas of that thread at this sample and its
    /// next one, changed).
    Amended {
        /// The sample.
        sample: SampleId,
        /// The thread added.
        thread: ThreadIndex,
    },
}

/// Why a pushed sample was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum IntegrateError {
    /// The sample's metrics are not those of the series.
    #[error("thread {thread}: sample `{sample}` has metrics [{got}] but the series has [{expected}]")]
    Metrics {
        /// Thread.
        thread: ThreadId,
        /// Sample name.
        sample: String,
        /// Metrics of the series.
        expected: String,
        /// Metrics of the sample.
        got: String,
    },
    /// The sample's value array does not match its timers and metrics.
    #[error(
        "thread {thread}: sample `{sample}` has {got} timer values for {timers} timers and {metrics} metrics"
    )]
    Shape {
        /// Thread.
        thread: ThreadId,
        /// Sample name.
        sample: String,
        /// Values given.
        got: usize,
        /// Timers.
        timers: usize,
        /// Metrics.
        metrics: usize,
    },
}

/// Notes of an integration: everything unusual that happened, for the load report.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct IntegrationReport {
    /// Samples completed late by a thread (`(sample, thread)`).
    pub amended: Vec<(SampleId, ThreadId)>,
    /// Human-readable notes (duplicate rows merged, ...).
    pub notes: Vec<String>,
    /// Samples thinned to keep the series within [`IntegratorOptions::window`].
    pub thinned: usize,
    /// Late thread parts that arrived for a sample already thinned: dropped (the thread's
    /// next kept sample holds its values, which are cumulative).
    pub late_after_thinning: usize,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Key {
    Name(String, u32),
    Position(u32),
}

#[derive(Debug)]
struct KeyState {
    key: Key,
    /// (thread, position in that thread's sequence).
    writers: Vec<(ThreadIndex, u32)>,
    first_seen: Instant,
    order: u64,
    min_ts: i64,
    /// Threads holding this key in their queue behind another pending key.
    queued_behind: u32,
    emitted: Option<SampleId>,
}

#[derive(Debug, Default)]
struct ThreadState {
    queue: VecDeque<(usize, ThreadSample)>,
    received: u32,
    name_counts: HashMap<String, u32>,
    ended: bool,
    timer_cache: Vec<Option<(Arc<TimerDef>, EventId)>>,
    atomic_cache: Vec<Option<(Arc<UserEventDef>, AtomicEventId)>>,
    /// Sample metric position -> series metric position, for the last metrics seen.
    metric_map: Option<(Arc<Vec<Metric>>, Vec<usize>)>,
}

/// Merges per-thread samples into a [`SampleSeries`]; see the module documentation.
///
/// ```
/// use perfscape_model::{Integrator, IntegratorOptions, Integrated, Metric, ThreadId, ThreadSample,
///     TimerDef, TimerSample, SampleMode, ValueKind, MetricId};
/// use std::sync::Arc;
/// use std::time::Instant;
///
/// let metrics = Arc::new(vec![Metric::tau("TIME")]);
/// let main = Arc::new(TimerDef { id: 0, name: "main".into(), groups: "TAU_DEFAULT".into() });
/// let sample = |rank: u32, name: &str, incl: f64| ThreadSample {
///     thread: ThreadId::new(rank, 0, 0), name: name.into(), timestamp_us: 1_000 + incl as i64,
///     metrics: metrics.clone(), metadata: None,
///     timers: vec![TimerSample { def: main.clone(), calls: 1.0, subcalls: 0.0 }],
///     timer_values: vec![incl, incl], user_events: vec![],
/// };
/// let now = Instant::now();
/// let mut integ = Integrator::new(IntegratorOptions::default());
/// integ.expect_thread(ThreadId::new(0, 0, 0));
/// integ.expect_thread(ThreadId::new(1, 0, 0));
/// integ.push(sample(0, "iteration 10", 10.0), now).unwrap();
/// assert!(integ.poll(now).is_empty()); // rank 1 has not written it yet
/// integ.push(sample(1, "iteration 10", 12.0), now).unwrap();
/// assert_eq!(integ.poll(now).len(), 1);
/// integ.push(sample(0, "final", 30.0), now).unwrap();
/// integ.push(sample(1, "final", 33.0), now).unwrap();
/// let (series, _report) = integ.finish();
/// assert_eq!(series.len(), 2);
/// let e = series.timer_by_name("main").unwrap();
/// let s = series.sample_by_name("final").unwrap();
/// let delta = series.timer_values(e, s, ValueKind::Inclusive, MetricId(0), SampleMode::Delta);
/// assert_eq!(&delta.values[..], &[20.0, 21.0]);
/// ```
#[derive(Debug)]
pub struct Integrator {
    options: IntegratorOptions,
    series: SampleSeries,
    metrics_set: bool,
    threads: Vec<ThreadState>,
    keys: Vec<KeyState>,
    key_index: HashMap<Key, usize>,
    /// Sample id -> the key it was integrated from.
    sample_key: Vec<u32>,
    next_order: u64,
    report: IntegrationReport,
}

impl Integrator {
    /// An integrator with no threads and no samples yet.
    pub fn new(options: IntegratorOptions) -> Self {
        Self {
            options,
            series: SampleSeries::default(),
            metrics_set: false,
            threads: Vec::new(),
            keys: Vec::new(),
            key_index: HashMap::default(),
            sample_key: Vec::new(),
            next_order: 0,
            report: IntegrationReport::default(),
        }
    }

    /// The options.
    pub fn options(&self) -> &IntegratorOptions {
        &self.options
    }

    /// The series integrated so far (grows with every [`Integrator::poll`]).
    pub fn series(&self) -> &SampleSeries {
        &self.series
    }

    /// Notes so far.
    pub fn report(&self) -> &IntegrationReport {
        &self.report
    }

    /// Declares a thread that exists (e.g. its file was found) before it delivers samples:
    /// samples wait for it. Returns its series index. Threads that push samples are declared
    /// automatically.
    pub fn expect_thread(&mut self, thread: ThreadId) -> ThreadIndex {
        let t = self.series.add_thread(thread);
        if self.threads.len() <= t.index() {
            self.threads.resize_with(t.index() + 1, ThreadState::default);
        }
        t
    }

    /// Declares that `thread` will deliver no more samples (its file is complete): samples it
    /// did not write no longer wait for it.
    pub fn end_thread(&mut self, thread: ThreadId) {
        let t = self.expect_thread(thread);
        self.threads[t.index()].ended = true;
    }

    /// Declares that `thread`'s next sample is lost (e.g. its dump file could not be read),
    /// so that with [`Alignment::ByPosition`] its later samples keep their positions; the
    /// sample it would have been part of lists the thread as missing.
    pub fn skip_sample(&mut self, thread: ThreadId) {
        let t = self.expect_thread(thread);
        self.threads[t.index()].received += 1;
    }

    /// True once every known thread ended.
    pub fn all_ended(&self) -> bool {
        self.threads.iter().all(|t| t.ended)
    }

    /// Number of thread samples waiting to be integrated.
    pub fn pending(&self) -> usize {
        self.threads.iter().map(|t| t.queue.len()).sum()
    }

    /// Queues one thread sample (in the order the thread wrote them). `now` starts the
    /// sample's [`IntegratorOptions::max_wait`]. Nothing is integrated until
    /// [`Integrator::poll`]. A sample named `final` ends its thread (TAU writes it last).
    /// A refused sample counts as lost ([`Integrator::skip_sample`]).
    pub fn push(&mut self, sample: ThreadSample, now: Instant) -> Result<(), IntegrateError> {
        if !self.metrics_set {
            self.series.set_metrics(sample.metrics.as_ref().clone());
            self.metrics_set = true;
        }
        if let Err(e) = self.check_shape(&sample) {
            // Keep the thread's later samples in their positions.
            self.skip_sample(sample.thread);
            return Err(e);
        }
        let t = self.expect_thread(sample.thread);
        let state = &mut self.threads[t.index()];
        let pos = state.received;
        state.received += 1;
        let key = match self.options.alignment {
            Alignment::ByName => {
                let n = state.name_counts.entry(sample.name.clone()).or_insert(0);
                let k = Key::Name(sample.name.clone(), *n);
                *n += 1;
                k
            }
            Alignment::ByPosition => Key::Position(pos),
        };
        let ends = self.options.alignment == Alignment::ByName && sample.name == "final";
        let k = match self.key_index.get(&key) {
            Some(&k) => k,
            None => {
                let k = self.keys.len();
                self.keys.push(KeyState {
                    key: key.clone(),
                    writers: Vec::new(),
                    first_seen: now,
                    order: self.next_order,
                    min_ts: sample.timestamp_us,
                    queued_behind: 0,
                    emitted: None,
                });
                self.next_order += 1;
                self.key_index.insert(key, k);
                k
            }
        };
        let ks = &mut self.keys[k];
        ks.writers.push((t, pos));
        ks.min_ts = ks.min_ts.min(sample.timestamp_us);
        let state = &mut self.threads[t.index()];
        if !state.queue.is_empty() {
            ks.queued_behind += 1;
        }
        state.queue.push_back((k, sample));
        if ends {
            state.ended = true;
        }
        Ok(())
    }

    fn check_shape(&self, sample: &ThreadSample) -> Result<(), IntegrateError> {
        let expected = self.series.metrics();
        let same_set = sample.metrics.len() == expected.len()
            && sample
                .metrics
                .iter()
                .all(|m| expected.iter().any(|e| e.name == m.name));
        if !same_set {
            let names = |ms: &[Metric]| ms.iter().map(|m| m.name.as_str()).collect::<Vec<_>>().join(", ");
            return Err(IntegrateError::Metrics {
                thread: sample.thread,
                sample: sample.name.clone(),
                expected: names(expected),
                got: names(&sample.metrics),
            });
        }
        if sample.timer_values.len() != sample.timers.len() * 2 * sample.metrics.len() {
            return Err(IntegrateError::Shape {
                thread: sample.thread,
                sample: sample.name.clone(),
                got: sample.timer_values.len(),
                timers: sample.timers.len(),
                metrics: sample.metrics.len(),
            });
        }
        Ok(())
    }

    /// Integrates every sample that is ready (see the module documentation) and returns what
    /// was done, in order.
    pub fn poll(&mut self, now: Instant) -> Vec<Integrated> {
        let mut out = Vec::new();
        loop {
            // Late parts of samples already integrated.
            for ti in 0..self.threads.len() {
                while let Some(&(k, _)) = self.threads[ti].queue.front() {
                    let Some(s) = self.keys[k].emitted else { break };
                    let t = ThreadIndex::from(ti);
                    if let Some((_, sample)) = self.pop_head(t) {
                        let part = self.resolve(t, &sample);
                        match self.series.amend_sample(s, &part) {
                            Amend::Added => {
                                self.report.amended.push((s, sample.thread));
                                out.push(Integrated::Amended { sample: s, thread: t });
                            }
                            Amend::AlreadyPresent => self.report.notes.push(format!(
                                "thread {}: sample `{}` was delivered twice; the second copy was ignored",
                                sample.thread, sample.name
                            )),
                            Amend::Thinned => self.report.late_after_thinning += 1,
                        }
                    }
                }
            }
            let Some(k) = self.choose() else { break };
            if !self.ready(k, now) {
                break;
            }
            self.emit(k);
            out.push(Integrated::Sample(SampleId::from(self.series.len() - 1)));
        }
        out
    }

    /// Ends every thread, integrates everything pending, and returns the series with the
    /// report.
    pub fn finish(mut self) -> (SampleSeries, IntegrationReport) {
        for t in &mut self.threads {
            t.ended = true;
        }
        let now = self.keys.iter().map(|k| k.first_seen).max();
        if let Some(now) = now {
            self.poll(now);
        }
        (self.series, self.report)
    }

    fn pop_head(&mut self, t: ThreadIndex) -> Option<(usize, ThreadSample)> {
        let state = &mut self.threads[t.index()];
        let head = state.queue.pop_front()?;
        if let Some(&(next, _)) = state.queue.front() {
            let ks = &mut self.keys[next];
            ks.queued_behind = ks.queued_behind.saturating_sub(1);
        }
        Some(head)
    }

    /// The next key to integrate: among the heads not queued behind another key anywhere,
    /// the earliest; if every head is (a cycle), the earliest head.
    fn choose(&self) -> Option<usize> {
        let heads = self
            .threads
            .iter()
            .filter_map(|t| t.queue.front().map(|(k, _)| *k))
            .filter(|&k| self.keys[k].emitted.is_none());
        let rank = |k: usize| {
            (
                self.keys[k].queued_behind > 0,
                self.keys[k].min_ts,
                self.keys[k].order,
            )
        };
        heads.min_by_key(|&k| rank(k))
    }

    /// True when every thread wrote or passed key `k`, or `k` waited long enough.
    fn ready(&self, k: usize, now: Instant) -> bool {
        let ks = &self.keys[k];
        if let Some(wait) = self.options.max_wait
            && now.saturating_duration_since(ks.first_seen) >= wait
        {
            return true;
        }
        let mut before: Option<HashMap<u32, u32>> = None;
        for state in &self.threads {
            if state.ended || state.queue.front().is_some_and(|(h, _)| *h == k) {
                continue;
            }
            // Passed: the thread queued a key that another thread wrote after k.
            let before = before.get_or_insert_with(|| ks.writers.iter().map(|&(t, p)| (t.0, p)).collect());
            let passed = state.queue.iter().any(|&(k2, _)| {
                k2 != k
                    && self.keys[k2]
                        .writers
                        .iter()
                        .any(|&(u, p2)| before.get(&u.0).is_some_and(|&p| p < p2))
            });
            if !passed {
                return false;
            }
        }
        true
    }

    fn emit(&mut self, k: usize) {
        let mut parts = Vec::new();
        let mut first_name = None;
        for ti in 0..self.threads.len() {
            if self.threads[ti].queue.front().is_some_and(|(h, _)| *h == k) {
                let t = ThreadIndex::from(ti);
                if let Some((_, sample)) = self.pop_head(t) {
                    if first_name.is_none() {
                        first_name = Some(sample.name.clone());
                    }
                    parts.push(self.resolve(t, &sample));
                }
            }
        }
        let name = match &self.keys[k].key {
            Key::Name(n, _) => n.clone(),
            Key::Position(_) => first_name.unwrap_or_default(),
        };
        let s = self.series.push_sample(name, &parts);
        self.keys[k].emitted = Some(s);
        self.sample_key.push(u32::try_from(k).unwrap_or(u32::MAX));
        if let Some(window) = self.options.window {
            let thinned = self.series.thin(window);
            self.report.thinned += thinned.len();
            for s in thinned {
                self.forget(s);
            }
        }
    }

    /// Frees what the integrator kept for thinned sample `s`: its writers, and its name in
    /// each writer's name counts (a copy of the name arriving later from one of them finds
    /// the thinned sample and is counted in [`IntegrationReport::late_after_thinning`]).
    fn forget(&mut self, s: SampleId) {
        let Some(&k) = self.sample_key.get(s.index()) else {
            return;
        };
        let Some(ks) = self.keys.get_mut(k as usize) else {
            return;
        };
        let writers = std::mem::take(&mut ks.writers);
        if let Key::Name(name, 0) = &ks.key {
            for (t, _) in writers {
                if let Some(state) = self.threads.get_mut(t.index())
                    && state.name_counts.get(name) == Some(&1)
                {
                    state.name_counts.remove(name);
                }
            }
        }
    }

    /// Maps a thread sample onto series ids and metric order.
    fn resolve(&mut self, t: ThreadIndex, sample: &ThreadSample) -> ResolvedPart {
        if !self.series.has_thread_metadata(t)
            && let Some(md) = &sample.metadata
        {
            self.series.set_thread_metadata(t, md.as_ref().clone());
        }
        let n_metrics = self.series.metrics().len();
        let nq = 2 + 2 * n_metrics;
        let state = &mut self.threads[t.index()];
        let map_ok = state
            .metric_map
            .as_ref()
            .is_some_and(|(m, _)| Arc::ptr_eq(m, &sample.metrics));
        if !map_ok {
            let series_metrics = self.series.metrics();
            let map: Vec<usize> = sample
                .metrics
                .iter()
                .map(|m| series_metrics.iter().position(|s| s.name == m.name).unwrap_or(0))
                .collect();
            state.metric_map = Some((sample.metrics.clone(), map));
        }
        let map: Vec<usize> = state
            .metric_map
            .as_ref()
            .map(|(_, m)| m.clone())
            .unwrap_or_default();
        let mut part = ResolvedPart {
            thread: t,
            timestamp_us: sample.timestamp_us,
            timers: Vec::with_capacity(sample.timers.len()),
            values: vec![0.0; sample.timers.len() * nq],
            atomics: Vec::with_capacity(sample.user_events.len()),
        };
        let mut seen: HashMap<u32, ()> = HashMap::default();
        let mut duplicates = 0usize;
        for (i, ts) in sample.timers.iter().enumerate() {
            let e = self.timer_id(t, &ts.def);
            if seen.insert(e.0, ()).is_some() {
                duplicates += 1;
            }
            part.timers.push(e);
            let base = i * nq;
            part.values[base] = ts.calls;
            part.values[base + 1] = ts.subcalls;
            for (sm, &m) in map.iter().enumerate() {
                part.values[base + 2 + 2 * m] = sample.exclusive(i, sm);
                part.values[base + 3 + 2 * m] = sample.inclusive(i, sm);
            }
        }
        if duplicates > 0 {
            self.report.notes.push(format!(
                "thread {}: sample `{}` lists {duplicates} timer(s) more than once (same name); their values were summed",
                sample.thread, sample.name
            ));
        }
        for u in &sample.user_events {
            let a = self.atomic_id(t, &u.def);
            part.atomics
                .push((a, [u.count, u.max, u.min, u.mean, u.sum_squares]));
        }
        part
    }

    fn timer_id(&mut self, t: ThreadIndex, def: &Arc<TimerDef>) -> EventId {
        let cache = &mut self.threads[t.index()].timer_cache;
        let i = def.id as usize;
        if let Some(Some((d, e))) = cache.get(i)
            && Arc::ptr_eq(d, def)
        {
            return *e;
        }
        let e = self
            .series
            .intern_timer(&normalize_timer_name(&def.name), &def.groups);
        let cache = &mut self.threads[t.index()].timer_cache;
        if i < 1 << 20 {
            if cache.len() <= i {
                cache.resize(i + 1, None);
            }
            cache[i] = Some((def.clone(), e));
        }
        e
    }

    fn atomic_id(&mut self, t: ThreadIndex, def: &Arc<UserEventDef>) -> AtomicEventId {
        let cache = &mut self.threads[t.index()].atomic_cache;
        let i = def.id as usize;
        if let Some(Some((d, a))) = cache.get(i)
            && Arc::ptr_eq(d, def)
        {
            return *a;
        }
        let a = self.series.intern_atomic(&def.name);
        let cache = &mut self.threads[t.index()].atomic_cache;
        if i < 1 << 20 {
            if cache.len() <= i {
                cache.resize(i + 1, None);
            }
            cache[i] = Some((def.clone(), a));
        }
        a
    }
}
