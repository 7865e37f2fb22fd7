//! Ranked event lists: the seeds' "ranked procedure list" (rank, name, source file, sum,
//! percent), with statistics across threads for each entry.

use crate::stats::{EventStats, event_stats, larger_first, run_total};
use perfscape_model::{EventId, MetricId, Profile, ValueKind};
use rayon::prelude::*;
use serde::Serialize;

/// What to rank by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RankBy {
    /// Total exclusive value across threads (where the time is spent).
    Exclusive,
    /// Total inclusive value across threads (what the time is spent under).
    Inclusive,
}

impl RankBy {
    /// The value kind ranked.
    pub fn kind(self) -> ValueKind {
        match self {
            RankBy::Exclusive => ValueKind::Exclusive,
            RankBy::Inclusive => ValueKind::Inclusive,
        }
    }
}

/// Options of [`top_events`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TopOptions {
    /// Ranking key. Default: exclusive.
    pub by: RankBy,
    /// How many entries to return; 0 = all. Default: 20.
    pub n: usize,
    /// Also rank callpath events (`a => b`). Default `false`: with callpath profiling TAU lists
    /// every routine both flat and per path, so ranking both would count it twice.
    pub include_callpaths: bool,
}

impl Default for TopOptions {
    fn default() -> Self {
        Self {
            by: RankBy::Exclusive,
            n: 20,
            include_callpaths: false,
        }
    }
}

/// One entry of a ranked event list.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct RankedEvent {
    /// 1-based rank.
    pub rank: usize,
    /// The event.
    pub event: EventId,
    /// Total of the ranked value kind across threads: their sum, or for a metric that does not
    /// add up its own combination (minimum, maximum, mean; NaN when not combinable), see
    /// [`crate::Summary::total`].
    pub sum: f64,
    /// `sum` as a percent of the run total ([`run_total`]: the sum of every thread's
    /// top-level inclusive value), ParaProf's percentage; `None` for a metric that does not
    /// add up (no share of a run).
    pub percent: Option<f64>,
    /// Full statistics across threads.
    pub stats: EventStats,
}

/// Ranks the events of `profile` by total exclusive or inclusive value in metric `m` (the
/// metric's own combination across threads when it does not add up; totals that could not be
/// combined last). Ties are broken by event id (file order), so the ranking is deterministic.
pub fn top_events(profile: &Profile, m: MetricId, opts: TopOptions) -> Vec<RankedEvent> {
    ranked(profile, m, opts, run_total(profile, m))
}

/// [`top_events`] with the run's total (`run_total(profile, m)`) already known. The
/// statistics of the events are computed in parallel (in event order: the same result for
/// any number of worker threads).
fn ranked(profile: &Profile, m: MetricId, opts: TopOptions, total: Option<f64>) -> Vec<RankedEvent> {
    let ids: Vec<EventId> = profile
        .event_ids()
        .filter(|&e| opts.include_callpaths || !profile.event(e).is_callpath())
        .filter(|&e| !profile.interval(e).is_empty())
        .collect();
    let mut entries: Vec<(EventId, EventStats)> =
        ids.par_iter().map(|&e| (e, event_stats(profile, e, m))).collect();
    let kind = opts.by.kind();
    entries.sort_by(|a, b| larger_first(a.1.get(kind).total, b.1.get(kind).total).then(a.0.cmp(&b.0)));
    if opts.n > 0 {
        entries.truncate(opts.n);
    }
    entries
        .into_iter()
        .enumerate()
        .map(|(i, (event, stats))| {
            let sum = stats.get(kind).total;
            RankedEvent {
                rank: i + 1,
                event,
                sum,
                percent: total.map(|t| if t > 0.0 { 100.0 * sum / t } else { 0.0 }),
                stats,
            }
        })
        .collect()
}

/// Events ranked by load imbalance (`max / mean over all threads`) of their exclusive value,
/// among the flat events whose exclusive total is at least `min_percent` of the run total
/// (so that tiny events do not crowd out the ones that matter; a metric that does not add up
/// has no run total, so all its flat events take part). Largest imbalance first.
pub fn most_imbalanced(profile: &Profile, m: MetricId, min_percent: f64, n: usize) -> Vec<RankedEvent> {
    let total = run_total(profile, m);
    let mut entries: Vec<RankedEvent> = ranked(
        profile,
        m,
        TopOptions {
            by: RankBy::Exclusive,
            n: 0,
            include_callpaths: false,
        },
        total,
    )
    .into_iter()
    .filter(|r| {
        let big = match (total, r.percent) {
            (Some(t), Some(p)) => t > 0.0 && p >= min_percent,
            _ => true,
        };
        big && profile.threads().len() > 1
    })
    .collect();
    entries.sort_by(|a, b| {
        b.stats
            .exclusive
            .imbalance()
            .total_cmp(&a.stats.exclusive.imbalance())
            .then(a.event.cmp(&b.event))
    });
    if n > 0 {
        entries.truncate(n);
    }
    for (i, e) in entries.iter_mut().enumerate() {
        e.rank = i + 1;
    }
    entries
}
