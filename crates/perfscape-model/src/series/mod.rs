//! [`SampleSeries`]: a run observed over time, as a sequence of integrated samples.
//!
//! TAU can write a thread's profile several times while the program runs (snapshots,
//! incremental dumps). Each write holds the values accumulated since the program started.
//! Integrating the per-thread writes of one moment gives a *sample*; the sequence of samples
//! is a [`SampleSeries`] (the "performance data integrator" of perfscape's seed paper: one
//! synchronized, sequenced, timestamped dataset). Series are built by
//! [`crate::Integrator`]; this module stores and queries them.
//!
//! # Storage
//! Columnar and dense along the sample axis, sparse along the thread axis: for every timer
//! (and user event) one row per sample, each row holding, quantity by quantity, the values of
//! the threads that ever had the event (the event's *slots*, in the order the threads first
//! had it). A timer row is `[calls × w | subcalls × w | excl m0 × w | incl m0 × w | excl m1 ×
//! w | ...]` for `w` slots, so "value of event e, kind k, metric m for every thread at sample
//! s" is one contiguous slice ([`SampleSeries::timer_row`]), and a trend over all samples is
//! one pass over the event's rows. Only cumulative values are stored; deltas are computed on
//! demand (two slices). 1,024 threads × 1,000 samples × 50 timers × one metric take
//! 4 × 8 B × 51.2 M ≈ 1.6 GB; the memory is in [`SampleSeries::heap_bytes`].
//!
//! Cell values: `0` when the thread was present in the sample but had not called the event
//! yet (TAU omits events with zero calls); `NaN` when the thread did not write the sample
//! (it is *missing*, see [`SampleSeries::missing_threads`]). Slots at or beyond a row's
//! width (threads that had the event only later) are not in that row.
//!
//! # Deltas
//! The delta of a thread at sample `s` is its cumulative value at `s` minus its cumulative
//! value at the previous sample the thread was present in (0 before its first). Summed over
//! the samples a thread is present in, the deltas give its last cumulative value. For user
//! events, count, sum (`count × mean`) and sum of squares are differenced and the mean is
//! recomputed for the interval; TAU does not record per-interval extremes, so `Max`/`Min`
//! in delta mode are the cumulative extremes at `s`.

mod profile;
mod query;

use crate::event::normalize_user_event_name;
use crate::ids::{AtomicEventId, EventId, ThreadId, ThreadIndex};
use crate::metric::Metric;
use rustc_hash::FxHashMap as HashMap;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// The sequence number of an integrated sample: its position in [`SampleSeries::samples`]
/// (0-based, in the order samples were integrated).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SampleId(pub u32);

impl SampleId {
    /// The sequence number as a `usize`, for indexing.
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }
}

impl From<usize> for SampleId {
    /// Converts a position (saturating at `u32::MAX`, which a series never reaches).
    #[inline]
    fn from(i: usize) -> Self {
        Self(u32::try_from(i).unwrap_or(u32::MAX))
    }
}

/// Whether values are read as written (accumulated since the program started) or as the
/// change since the thread's previous sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum SampleMode {
    /// Values accumulated since the program started, as TAU writes them.
    Cumulative,
    /// The change since the same thread's previous sample (per-interval values).
    Delta,
}

/// Which number of a user (atomic) event is meant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AtomicKind {
    /// Number of samples of the quantity.
    Count,
    /// Largest sampled value.
    Max,
    /// Smallest sampled value.
    Min,
    /// Mean of the sampled values.
    Mean,
    /// Sum of the squares of the sampled values.
    SumSquares,
}

impl AtomicKind {
    /// All kinds, in TAU's column order.
    pub const ALL: [AtomicKind; 5] = [
        AtomicKind::Count,
        AtomicKind::Max,
        AtomicKind::Min,
        AtomicKind::Mean,
        AtomicKind::SumSquares,
    ];

    fn q(self) -> usize {
        match self {
            AtomicKind::Count => 0,
            AtomicKind::Max => 1,
            AtomicKind::Min => 2,
            AtomicKind::Mean => 3,
            AtomicKind::SumSquares => 4,
        }
    }
}

const ATOMIC_Q: usize = 5;
const MISSING_TS: i64 = i64::MIN;

/// One integrated sample: its name, timestamp and which threads wrote it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SampleInfo {
    name: String,
    timestamp_us: i64,
    /// By series thread index; `MISSING_TS` for threads that did not write the sample.
    thread_timestamps_us: Vec<i64>,
    expected_threads: u32,
    present: u32,
    thinned: bool,
}

impl SampleInfo {
    /// True when the sample's values were dropped to keep the series within its window
    /// (`IntegratorOptions::window`): its name, time and counts remain, its values are folded into
    /// the next kept sample's deltas (values are cumulative, so nothing else is lost).
    pub fn is_thinned(&self) -> bool {
        self.thinned
    }

    /// Name of the sample as the program gave it (TAU: `iteration 40`, `final`, ...).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Time of the sample in microseconds since the Unix epoch: the latest timestamp of the
    /// threads present (the moment the last of them wrote it).
    pub fn timestamp_us(&self) -> i64 {
        self.timestamp_us
    }

    /// True when thread `t` wrote this sample.
    pub fn is_present(&self, t: ThreadIndex) -> bool {
        self.thread_timestamps_us
            .get(t.index())
            .is_some_and(|&ts| ts != MISSING_TS)
    }

    /// When thread `t` wrote the sample (µs since the epoch, the thread's own clock), if it
    /// did.
    pub fn thread_timestamp_us(&self, t: ThreadIndex) -> Option<i64> {
        self.thread_timestamps_us
            .get(t.index())
            .copied()
            .filter(|&ts| ts != MISSING_TS)
    }

    /// The threads that wrote the sample, ascending by series thread index.
    pub fn present_threads(&self) -> impl Iterator<Item = ThreadIndex> + '_ {
        self.thread_timestamps_us
            .iter()
            .enumerate()
            .filter(|(_, ts)| **ts != MISSING_TS)
            .map(|(i, _)| ThreadIndex::from(i))
    }

    /// Number of threads that wrote the sample.
    pub fn present_count(&self) -> usize {
        self.present as usize
    }

    /// Number of threads the series knew when the sample was integrated; the sample is
    /// complete when all of them wrote it.
    pub fn expected_threads(&self) -> usize {
        self.expected_threads as usize
    }

    /// The threads expected but missing (see [`SampleInfo::expected_threads`]); empty for a
    /// thinned sample (which threads wrote it is no longer kept).
    pub fn missing_threads(&self) -> Vec<ThreadIndex> {
        if self.thinned {
            return Vec::new();
        }
        (0..self.expected_threads as usize)
            .map(ThreadIndex::from)
            .filter(|&t| !self.is_present(t))
            .collect()
    }

    /// True when every expected thread wrote the sample.
    pub fn is_complete(&self) -> bool {
        self.present >= self.expected_threads
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
struct EventRows {
    /// Slot -> thread.
    slots: Vec<ThreadIndex>,
    /// Thread index -> slot.
    slot_of: HashMap<u32, u32>,
    /// One row per sample: `q × width` values, quantity-major.
    rows: Vec<Vec<f64>>,
}

impl EventRows {
    fn slot(&mut self, t: ThreadIndex) -> usize {
        if let Some(&j) = self.slot_of.get(&t.0) {
            return j as usize;
        }
        let j = self.slots.len();
        self.slots.push(t);
        self.slot_of.insert(t.0, u32::try_from(j).unwrap_or(u32::MAX));
        j
    }

    fn heap_bytes(&self) -> usize {
        self.slots.capacity() * 4
            + self.slot_of.capacity() * 12
            + self.rows.iter().map(|r| r.capacity() * 8 + 24).sum::<usize>()
    }
}

/// The values of one event for the threads of one sample: `threads[i]` has `values[i]`.
/// Missing threads have `NaN`; present threads that had not called the event have 0.
#[derive(Clone, Debug, PartialEq)]
pub struct SampleValues<'a> {
    /// Threads (series indices) in slot order.
    pub threads: &'a [ThreadIndex],
    /// One value per thread; borrowed for cumulative values, computed for deltas.
    pub values: Cow<'a, [f64]>,
}

/// Statistics of one event across the threads of one sample.
///
/// `min`, `max`, `mean`, `stddev` (population) are over the threads that have the event at
/// that sample (cumulative calls > 0), as ParaProf counts them; `mean_all` divides the sum by
/// every thread present in the sample. `NaN` when no thread has the event.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct AcrossThreads {
    /// Threads that have the event at this sample.
    pub threads: u32,
    /// Threads present in the sample.
    pub present: u32,
    /// Sum over the threads that have the event.
    pub sum: f64,
    /// Smallest value.
    pub min: f64,
    /// A thread with the smallest value (the lowest thread id among equals).
    pub min_thread: Option<ThreadIndex>,
    /// Largest value.
    pub max: f64,
    /// A thread with the largest value (the lowest thread id among equals).
    pub max_thread: Option<ThreadIndex>,
    /// Mean over the threads that have the event.
    pub mean: f64,
    /// Sum divided by the threads present.
    pub mean_all: f64,
    /// Population standard deviation over the threads that have the event.
    pub stddev: f64,
}

/// A run observed over time; see the module documentation for shapes and semantics.
///
/// Ids: [`EventId`] and [`AtomicEventId`] index the series' own event tables; a profile made
/// by [`SampleSeries::profile_at`] keeps the same [`EventId`]s. [`ThreadIndex`] is a position
/// in [`SampleSeries::threads`] (the order threads became known, ascending [`ThreadId`] when
/// a finished run is loaded).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SampleSeries {
    metrics: Vec<Metric>,
    threads: Vec<ThreadId>,
    thread_index: HashMap<ThreadId, ThreadIndex>,
    thread_metadata: Vec<Vec<(String, String)>>,
    timer_names: Vec<String>,
    timer_groups: Vec<String>,
    timer_index: HashMap<String, EventId>,
    timers: Vec<EventRows>,
    atomic_names: Vec<String>,
    atomic_index: HashMap<String, AtomicEventId>,
    atomics: Vec<EventRows>,
    samples: Vec<SampleInfo>,
    /// Row position -> sample id: the kept samples, ascending (a sample's row is found by a
    /// binary search, [`SampleSeries::row`]).
    kept: Vec<u32>,
    /// Older samples are kept when their id is a multiple of this (see
    /// [`SampleSeries::thin`]); 0 or 1 until the window first overflows.
    stride: u32,
}

/// What [`SampleSeries::amend_sample`] did with a late part.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Amend {
    /// The part was added to the sample.
    Added,
    /// The thread was already present in the sample (a second copy): nothing changed.
    AlreadyPresent,
    /// The sample was thinned out of the window (or does not exist): nothing changed.
    Thinned,
}

/// One thread's part of a sample with series ids resolved (built by the integrator).
#[derive(Clone, Debug)]
pub(crate) struct ResolvedPart {
    pub(crate) thread: ThreadIndex,
    pub(crate) timestamp_us: i64,
    /// Per timer: `(event, offset into values)`; `nq` values each: calls, subcalls, then
    /// exclusive and inclusive per series metric.
    pub(crate) timers: Vec<EventId>,
    pub(crate) values: Vec<f64>,
    pub(crate) atomics: Vec<(AtomicEventId, [f64; ATOMIC_Q])>,
}

impl SampleSeries {
    // ----- construction (crate-internal: the integrator builds series) -----

    pub(crate) fn set_metrics(&mut self, metrics: Vec<Metric>) {
        self.metrics = metrics;
    }

    /// Values per timer cell: calls, subcalls, exclusive and inclusive per metric.
    pub(crate) fn timer_q(&self) -> usize {
        2 + 2 * self.metrics.len()
    }

    pub(crate) fn add_thread(&mut self, id: ThreadId) -> ThreadIndex {
        if let Some(&t) = self.thread_index.get(&id) {
            return t;
        }
        let t = ThreadIndex::from(self.threads.len());
        self.threads.push(id);
        self.thread_index.insert(id, t);
        self.thread_metadata.push(Vec::new());
        t
    }

    pub(crate) fn set_thread_metadata(&mut self, t: ThreadIndex, metadata: Vec<(String, String)>) {
        if let Some(m) = self.thread_metadata.get_mut(t.index()) {
            *m = metadata;
        }
    }

    pub(crate) fn has_thread_metadata(&self, t: ThreadIndex) -> bool {
        self.thread_metadata.get(t.index()).is_some_and(|m| !m.is_empty())
    }

    /// Interns a normalized timer name.
    pub(crate) fn intern_timer(&mut self, name: &str, groups: &str) -> EventId {
        if let Some(&e) = self.timer_index.get(name) {
            if self.timer_groups[e.index()].is_empty() && !groups.is_empty() {
                self.timer_groups[e.index()] = groups.to_string();
            }
            return e;
        }
        let e = EventId::from(self.timer_names.len());
        self.timer_names.push(name.to_string());
        self.timer_groups.push(groups.to_string());
        self.timer_index.insert(name.to_string(), e);
        self.timers.push(EventRows {
            rows: vec![Vec::new(); self.kept.len()],
            ..EventRows::default()
        });
        e
    }

    /// Interns a user event name (normalized here).
    pub(crate) fn intern_atomic(&mut self, raw: &str) -> AtomicEventId {
        let name = normalize_user_event_name(raw);
        if let Some(&a) = self.atomic_index.get(name.as_ref()) {
            return a;
        }
        let a = AtomicEventId::from(self.atomic_names.len());
        self.atomic_names.push(name.to_string());
        self.atomic_index.insert(name.into_owned(), a);
        self.atomics.push(EventRows {
            rows: vec![Vec::new(); self.kept.len()],
            ..EventRows::default()
        });
        a
    }

    /// Appends a sample made of the given thread parts.
    pub(crate) fn push_sample(&mut self, name: String, parts: &[ResolvedPart]) -> SampleId {
        let s = SampleId::from(self.samples.len());
        let mut ts = vec![MISSING_TS; self.threads.len()];
        for p in parts {
            if let Some(slot) = ts.get_mut(p.thread.index()) {
                *slot = p.timestamp_us;
            }
        }
        let present = ts.iter().filter(|&&x| x != MISSING_TS).count();
        let timestamp_us = ts.iter().copied().filter(|&x| x != MISSING_TS).max().unwrap_or(0);
        let info = SampleInfo {
            name,
            timestamp_us,
            thread_timestamps_us: ts,
            expected_threads: u32::try_from(self.threads.len()).unwrap_or(u32::MAX),
            present: u32::try_from(present).unwrap_or(u32::MAX),
            thinned: false,
        };
        let nq = self.timer_q();
        // Slots first (a new slot widens this sample's row).
        for p in parts {
            for &e in &p.timers {
                self.timers[e.index()].slot(p.thread);
            }
            for &(a, _) in &p.atomics {
                self.atomics[a.index()].slot(p.thread);
            }
        }
        for rows in self.timers.iter_mut() {
            let row = new_row(&rows.slots, nq, &info);
            rows.rows.push(row);
        }
        for rows in self.atomics.iter_mut() {
            let row = new_row(&rows.slots, ATOMIC_Q, &info);
            rows.rows.push(row);
        }
        self.samples.push(info);
        let r = self.kept.len();
        self.kept.push(s.0);
        for p in parts {
            self.write_part(r, p);
        }
        s
    }

    /// Adds a thread's late part to an already integrated sample where it was missing.
    /// Changes nothing when the thread is already present or the sample was thinned.
    pub(crate) fn amend_sample(&mut self, s: SampleId, part: &ResolvedPart) -> Amend {
        let si = s.index();
        let t = part.thread;
        let Some(r) = self.row(si) else {
            return Amend::Thinned;
        };
        let info = &mut self.samples[si];
        if info.is_present(t) {
            return Amend::AlreadyPresent;
        }
        if info.thread_timestamps_us.len() <= t.index() {
            info.thread_timestamps_us.resize(t.index() + 1, MISSING_TS);
        }
        info.thread_timestamps_us[t.index()] = part.timestamp_us;
        info.present += 1;
        info.timestamp_us = info.timestamp_us.max(part.timestamp_us);
        let nq = self.timer_q();
        // The thread's existing cells in this sample were NaN (missing): now 0 until written.
        for rows in self.timers.iter_mut() {
            zero_cells(rows, r, t, nq);
        }
        for rows in self.atomics.iter_mut() {
            zero_cells(rows, r, t, ATOMIC_Q);
        }
        for &e in &part.timers {
            let rows = &mut self.timers[e.index()];
            let j = rows.slot(t);
            widen(rows, r, j + 1, nq, &self.samples[si]);
        }
        for &(a, _) in &part.atomics {
            let rows = &mut self.atomics[a.index()];
            let j = rows.slot(t);
            widen(rows, r, j + 1, ATOMIC_Q, &self.samples[si]);
        }
        self.write_part(r, part);
        Amend::Added
    }

    /// The row position of sample `s` (an index into [`SampleSeries::samples`]), `None` when
    /// it was thinned or does not exist.
    pub(super) fn row(&self, s: usize) -> Option<usize> {
        let s = u32::try_from(s).ok()?;
        self.kept.binary_search(&s).ok()
    }

    /// Keeps the series within `window` kept samples (`window` ≥ 4; smaller values are
    /// raised to 4). The newest `window / 2` samples stay whole; among the older ones only the
    /// samples whose sequence number is a multiple of a stride are kept, the stride doubling
    /// (1, 2, 4, …) whenever the window would still overflow — so the older part of a long run
    /// stays spread evenly over its whole history at a spacing that grows with it (the
    /// round-robin archives of RRDtool keep monitoring series the same way). Sample 0 is
    /// always kept, and so is the last sample each thread is present in (its final state,
    /// read by [`SampleSeries::final_profile`]). A thinned sample keeps its name, time and
    /// counts, not its values; since values are cumulative, a kept sample's delta then covers
    /// the interval since the thread's previous kept sample: nothing is lost from the run's
    /// totals. Returns the samples thinned now (ascending).
    pub(crate) fn thin(&mut self, window: usize) -> Vec<SampleId> {
        let window = window.max(4);
        let n = self.kept.len();
        if n <= window {
            return Vec::new();
        }
        let old = n - window / 2;
        self.stride = self.stride.max(1);
        // Each thread's last present sample is kept.
        let mut protected = vec![false; n];
        let mut seen = vec![false; self.threads.len()];
        let mut unseen = self.threads.len();
        for r in (0..n).rev() {
            if unseen == 0 {
                break;
            }
            for t in self.samples[self.kept[r] as usize].present_threads() {
                if let Some(x) = seen.get_mut(t.index())
                    && !*x
                {
                    *x = true;
                    unseen -= 1;
                    protected[r] = true;
                }
            }
        }
        let mut drop: Vec<bool>;
        loop {
            let stride = self.stride;
            drop = (0..n)
                .map(|r| r < old && self.kept[r] % stride != 0 && !protected[r])
                .collect();
            if n - drop.iter().filter(|&&d| d).count() <= window || self.stride >= 1 << 30 {
                break;
            }
            self.stride *= 2;
        }
        let thinned: Vec<SampleId> = (0..n)
            .filter(|&r| drop[r])
            .map(|r| SampleId(self.kept[r]))
            .collect();
        if thinned.is_empty() {
            return thinned;
        }
        for rows in self.timers.iter_mut().chain(self.atomics.iter_mut()) {
            let mut r = 0;
            rows.rows.retain(|_| {
                r += 1;
                !drop.get(r - 1).copied().unwrap_or(false)
            });
        }
        for &s in &thinned {
            let info = &mut self.samples[s.index()];
            info.thinned = true;
            info.thread_timestamps_us = Vec::new();
        }
        let mut r = 0;
        self.kept.retain(|_| {
            r += 1;
            !drop[r - 1]
        });
        thinned
    }

    /// Adds part `p` into the row at position `r` (see [`SampleSeries::row`]).
    fn write_part(&mut self, r: usize, p: &ResolvedPart) {
        let nq = self.timer_q();
        for (i, &e) in p.timers.iter().enumerate() {
            let rows = &mut self.timers[e.index()];
            let Some(&j) = rows.slot_of.get(&p.thread.0) else {
                continue;
            };
            let row = &mut rows.rows[r];
            let w = row.len() / nq;
            for q in 0..nq {
                if let (Some(cell), Some(v)) = (row.get_mut(q * w + j as usize), p.values.get(i * nq + q)) {
                    *cell += v;
                }
            }
        }
        for &(a, v) in &p.atomics {
            let rows = &mut self.atomics[a.index()];
            let Some(&j) = rows.slot_of.get(&p.thread.0) else {
                continue;
            };
            let row = &mut rows.rows[r];
            let w = row.len() / ATOMIC_Q;
            let j = j as usize;
            let cell = |q: usize| q * w + j;
            let old_n = row[cell(0)];
            if old_n == 0.0 {
                for (q, x) in v.iter().enumerate() {
                    row[cell(q)] = *x;
                }
            } else {
                // The same user event listed twice by one thread: combine as ParaProf does.
                let n = old_n + v[0];
                let mean = if n != 0.0 {
                    (row[cell(3)] * old_n + v[3] * v[0]) / n
                } else {
                    0.0
                };
                row[cell(0)] = n;
                row[cell(1)] = row[cell(1)].max(v[1]);
                row[cell(2)] = row[cell(2)].min(v[2]);
                row[cell(3)] = mean;
                row[cell(4)] += v[4];
            }
        }
    }

    // ----- queries -----

    /// The metrics, in display order.
    pub fn metrics(&self) -> &[Metric] {
        &self.metrics
    }

    /// The threads, by series thread index.
    pub fn threads(&self) -> &[ThreadId] {
        &self.threads
    }

    /// The series index of a thread address.
    pub fn thread_index(&self, id: ThreadId) -> Option<ThreadIndex> {
        self.thread_index.get(&id).copied()
    }

    /// Metadata key/values of thread `t` (from its first document; empty if none).
    pub fn thread_metadata(&self, t: ThreadIndex) -> &[(String, String)] {
        self.thread_metadata.get(t.index()).map_or(&[], Vec::as_slice)
    }

    /// Number of samples, thinned ones included ([`SampleId`]s run from 0 to `len() - 1`).
    pub fn len(&self) -> usize {
        self.samples.len()
    }

    /// The samples whose values are kept (not thinned, see [`SampleInfo::is_thinned`]), in
    /// sequence order; every sample when the series has no window.
    pub fn kept_samples(&self) -> impl DoubleEndedIterator<Item = SampleId> + ExactSizeIterator + '_ {
        self.kept.iter().map(|&s| SampleId(s))
    }

    /// Number of samples thinned so far (see [`SampleInfo::is_thinned`]).
    pub fn thinned_count(&self) -> usize {
        self.samples.len() - self.kept.len()
    }

    /// True when no sample was integrated.
    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    /// All samples, in sequence order, thinned ones included (see
    /// [`SampleSeries::kept_samples`]).
    pub fn samples(&self) -> &[SampleInfo] {
        &self.samples
    }

    /// Sample `s`, if it exists.
    pub fn sample(&self, s: SampleId) -> Option<&SampleInfo> {
        self.samples.get(s.index())
    }

    /// The first sample of that name (e.g. `final`).
    pub fn sample_by_name(&self, name: &str) -> Option<SampleId> {
        self.samples
            .iter()
            .position(|s| s.name == name)
            .map(SampleId::from)
    }

    /// Threads expected but missing in sample `s` (empty when `s` does not exist).
    pub fn missing_threads(&self, s: SampleId) -> Vec<ThreadIndex> {
        self.sample(s)
            .map(SampleInfo::missing_threads)
            .unwrap_or_default()
    }

    /// Number of timers (interval events).
    pub fn timer_count(&self) -> usize {
        self.timer_names.len()
    }

    /// Normalized name of timer `e` (as [`crate::Profile`] names it).
    pub fn timer_name(&self, e: EventId) -> &str {
        self.timer_names.get(e.index()).map_or("", String::as_str)
    }

    /// TAU group list of timer `e` as first written (`|`-separated).
    pub fn timer_groups(&self, e: EventId) -> &str {
        self.timer_groups.get(e.index()).map_or("", String::as_str)
    }

    /// The timer of that name, in any TAU spacing.
    pub fn timer_by_name(&self, name: &str) -> Option<EventId> {
        let n = crate::event::normalize_timer_name(name);
        self.timer_index.get(n.as_ref()).copied()
    }

    /// Number of user (atomic) events.
    pub fn user_event_count(&self) -> usize {
        self.atomic_names.len()
    }

    /// Name of user event `a` (runs of spaces collapsed).
    pub fn user_event_name(&self, a: AtomicEventId) -> &str {
        self.atomic_names.get(a.index()).map_or("", String::as_str)
    }

    /// The user event of that name.
    pub fn user_event_by_name(&self, name: &str) -> Option<AtomicEventId> {
        let n = normalize_user_event_name(name);
        self.atomic_index.get(n.as_ref()).copied()
    }

    /// The threads that had timer `e` at some sample, in slot order (row position order).
    pub fn timer_threads(&self, e: EventId) -> &[ThreadIndex] {
        self.timers.get(e.index()).map_or(&[], |r| r.slots.as_slice())
    }

    /// The threads that had user event `a` at some sample, in slot order.
    pub fn user_event_threads(&self, a: AtomicEventId) -> &[ThreadIndex] {
        self.atomics.get(a.index()).map_or(&[], |r| r.slots.as_slice())
    }

    /// Approximate heap bytes held by the series (values, slots, sample table).
    pub fn heap_bytes(&self) -> usize {
        self.timers.iter().map(EventRows::heap_bytes).sum::<usize>()
            + self.atomics.iter().map(EventRows::heap_bytes).sum::<usize>()
            + self
                .samples
                .iter()
                .map(|s| s.thread_timestamps_us.capacity() * 8 + s.name.capacity() + 64)
                .sum::<usize>()
            + self.kept.capacity() * 4
    }
}

/// A new row for a sample: 0 for present slot threads, NaN for missing ones.
fn new_row(slots: &[ThreadIndex], nq: usize, info: &SampleInfo) -> Vec<f64> {
    if slots.is_empty() {
        return Vec::new();
    }
    let one: Vec<f64> = slots
        .iter()
        .map(|&t| if info.is_present(t) { 0.0 } else { f64::NAN })
        .collect();
    let mut row = Vec::with_capacity(nq * slots.len());
    for _ in 0..nq {
        row.extend_from_slice(&one);
    }
    row
}

/// Sets thread `t`'s cells of row `s` to 0 (if its slot is inside the row).
fn zero_cells(rows: &mut EventRows, s: usize, t: ThreadIndex, nq: usize) {
    let Some(&j) = rows.slot_of.get(&t.0) else {
        return;
    };
    let Some(row) = rows.rows.get_mut(s) else {
        return;
    };
    let w = row.len() / nq;
    let j = j as usize;
    if j < w {
        for q in 0..nq {
            row[q * w + j] = 0.0;
        }
    }
}

/// Widens row `s` to at least `width` slots; new cells are 0 for present threads, NaN else.
fn widen(rows: &mut EventRows, s: usize, width: usize, nq: usize, info: &SampleInfo) {
    let Some(row) = rows.rows.get(s) else {
        return;
    };
    let w = row.len() / nq;
    if w >= width {
        return;
    }
    let fill: Vec<f64> = rows.slots[w..width]
        .iter()
        .map(|&t| if info.is_present(t) { 0.0 } else { f64::NAN })
        .collect();
    let mut new_row = Vec::with_capacity(nq * width);
    for q in 0..nq {
        new_row.extend_from_slice(&row[q * w..(q + 1) * w]);
        new_row.extend_from_slice(&fill);
    }
    rows.rows[s] = new_row;
}
