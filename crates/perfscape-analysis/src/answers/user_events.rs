//! User (atomic) events (`/api/userevents`, `/api/userevent/{id}`): every user event with its
//! statistics over the threads and, when a thread is selected, that thread's; one user event's
//! per-thread values.
//!
//! TAU records a user event per thread as count, min, max, mean and sum of squares of the
//! sampled values (the `userevents` section of a profile file). Over the threads: the count is
//! the sum of the counts, min and max the smallest minimum and the largest maximum, the mean
//! the pooled mean `Σ count·mean / Σ count` and the standard deviation the pooled population
//! deviation `sqrt(Σ sumsqr / Σ count − mean²)` — the statistics of all the values sampled by
//! every thread together. (ParaProf's "Mean" and "Total" user-event views instead average or add
//! each column over the threads, so its total of `max` is a sum of maxima; those are in
//! `mean_count` only, as the mean count per thread.)

use crate::error::ViewError;
use perfscape_model::{AtomicColumn, AtomicEventId, Profile, ThreadIndex};
use serde::Serialize;

/// Statistics of a user event's sampled values.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct UserEventStats {
    /// Number of values sampled.
    pub count: f64,
    /// Smallest value (0 when none).
    pub min: f64,
    /// Largest value (0 when none).
    pub max: f64,
    /// Mean value (0 when none).
    pub mean: f64,
    /// Population standard deviation of the values (0 when none).
    pub stddev: f64,
}

impl UserEventStats {
    /// The pooled statistics of rows `rows` of `col` (see the module documentation).
    pub fn pooled(col: &AtomicColumn, rows: impl Iterator<Item = usize>) -> Self {
        let (mut n, mut sum, mut ss) = (0.0, 0.0, 0.0);
        let (mut min, mut max) = (f64::INFINITY, f64::NEG_INFINITY);
        for r in rows {
            let c = col.count()[r];
            if c <= 0.0 {
                continue;
            }
            n += c;
            sum += c * col.mean()[r];
            ss += col.sum_squares()[r];
            min = min.min(col.min()[r]);
            max = max.max(col.max()[r]);
        }
        if n <= 0.0 {
            return UserEventStats {
                count: 0.0,
                min: 0.0,
                max: 0.0,
                mean: 0.0,
                stddev: 0.0,
            };
        }
        let mean = sum / n;
        UserEventStats {
            count: n,
            min,
            max,
            mean,
            stddev: (ss / n - mean * mean).max(0.0).sqrt(),
        }
    }
}

/// One user event in [`UserEventsResponse`].
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct UserEventRow {
    /// User event id (for `/api/userevent/{id}`).
    pub id: u32,
    /// Name as ParaProf shows it.
    pub name: String,
    /// For a context event (`name : callpath`), the name before ` : `.
    pub base_name: Option<String>,
    /// For a context event, the callpath it was recorded in.
    pub context_path: Option<String>,
    /// For a context event, the id of that callpath's interval event, when the profile has it
    /// (selecting the row selects it).
    pub context_event: Option<u32>,
    /// Threads that sampled it.
    pub threads: u32,
    /// Over all threads together.
    pub all: UserEventStats,
    /// Mean count per thread that sampled it.
    pub mean_count: f64,
    /// The selected thread's statistics (absent when no thread is selected or it has none).
    pub thread: Option<UserEventStats>,
}

/// `GET /api/userevents`: every user event.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct UserEventsResponse {
    /// Threads in the run.
    pub threads_all: u32,
    /// The selected thread's address, if one was given.
    pub thread: Option<String>,
    /// Every user event, in the profile's order.
    pub rows: Vec<UserEventRow>,
}

/// Every user event of `profile` with its statistics over all threads and, when `thread` is
/// given, that thread's.
pub fn user_events(profile: &Profile, thread: Option<ThreadIndex>) -> UserEventsResponse {
    UserEventsResponse {
        threads_all: profile.threads().len() as u32,
        thread: thread.map(|t| profile.thread(t).to_string()),
        rows: (0..profile.atomic_events().len())
            .map(|i| row(profile, i, thread))
            .collect(),
    }
}

/// User event `i`'s row.
fn row(profile: &Profile, i: usize, thread: Option<ThreadIndex>) -> UserEventRow {
    let a = &profile.atomic_events()[i];
    let col = profile.atomic(AtomicEventId::from(i));
    let all = UserEventStats::pooled(col, 0..col.len());
    let k = col.len();
    UserEventRow {
        id: i as u32,
        name: a.name.clone(),
        base_name: a.base_name.clone(),
        context_path: a.context_path.clone(),
        context_event: a.context.map(|e| e.0),
        threads: k as u32,
        all,
        mean_count: if k > 0 { all.count / k as f64 } else { 0.0 },
        thread: thread
            .and_then(|t| col.row_of(t))
            .map(|r| UserEventStats::pooled(col, std::iter::once(r))),
    }
}

/// One thread's statistics of a user event.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct UserEventThread {
    /// Thread address.
    pub thread: String,
    /// Its statistics.
    pub stats: UserEventStats,
}

/// `GET /api/userevent/{id}`: one user event on every thread that sampled it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct UserEventDetail {
    /// The event with its statistics over the threads.
    pub row: UserEventRow,
    /// Per thread, in thread order; at most `points` (see `downsampled`).
    pub threads: Vec<UserEventThread>,
    /// True when `threads` lists every n-th thread only (more threads than `points`).
    pub downsampled: bool,
}

/// User event `id` on each thread (in thread order, at most `points`, default 4096, clamped to
/// 16..=100,000; beyond that every n-th thread).
///
/// # Errors
/// [`ViewError::NotFound`] for an unknown user event.
pub fn user_event_detail(
    profile: &Profile,
    id: u32,
    points: Option<u32>,
) -> Result<UserEventDetail, ViewError> {
    let n = profile.atomic_events().len();
    if id as usize >= n {
        return Err(ViewError::NotFound(format!(
            "user event {id} (the run has {n} user events)"
        )));
    }
    let col = profile.atomic(AtomicEventId::from(id as usize));
    let points = points.unwrap_or(4096).clamp(16, 100_000) as usize;
    let step = col.len().div_ceil(points).max(1);
    let threads = (0..col.len())
        .step_by(step)
        .map(|r| UserEventThread {
            thread: profile.thread(col.threads()[r]).to_string(),
            stats: UserEventStats::pooled(col, std::iter::once(r)),
        })
        .collect();
    Ok(UserEventDetail {
        row: row(profile, id as usize, None),
        threads,
        downsampled: step > 1,
    })
}
