//! Ranked event lists: the seeds' "ranked procedure list" (rank, name, source file, sum,
//! percent), with statistics across threads for each entry.

use crate::stats::{EventStats, Summary, event_kind_stats, event_stats, larger_first, run_total};
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

/// [`top_events`] with the run's total (`run_total(profile, m)`) already known. The events
/// are ranked by their key's statistics alone; the other kinds' are computed for the
/// entries kept (both in parallel, in event order: the same result for any number of worker
/// threads).
fn ranked(profile: &Profile, m: MetricId, opts: TopOptions, total: Option<f64>) -> Vec<RankedEvent> {
    let mut all = ranked_keys(profile, m, opts.by, opts.include_callpaths, total);
    if opts.n > 0 {
        all.truncate(opts.n);
    }
    complete(profile, m, all)
}

/// An entry of a ranking before its full statistics: [`RankedEvent`] with only the
/// statistics of the ranked kind (`key`).
#[derive(Clone, Copy)]
struct Keyed {
    rank: usize,
    event: EventId,
    percent: Option<f64>,
    key: Summary,
}

/// Every event with a value ([`TopOptions::include_callpaths`] as given), ranked by `by`
/// ([`ranked`] before the cut to `n`), with the statistics of `by`'s kind only.
fn ranked_keys(
    profile: &Profile,
    m: MetricId,
    by: RankBy,
    include_callpaths: bool,
    total: Option<f64>,
) -> Vec<Keyed> {
    let kind = by.kind();
    let ids: Vec<EventId> = profile
        .event_ids()
        .filter(|&e| include_callpaths || !profile.event(e).is_callpath())
        .filter(|&e| !profile.interval(e).is_empty())
        .collect();
    let mut entries: Vec<(EventId, Summary)> = ids
        .par_iter()
        .map(|&e| (e, event_kind_stats(profile, e, m, kind)))
        .collect();
    entries.sort_by(|a, b| larger_first(a.1.total, b.1.total).then(a.0.cmp(&b.0)));
    entries
        .into_iter()
        .enumerate()
        .map(|(i, (event, key))| Keyed {
            rank: i + 1,
            event,
            percent: total.map(|t| if t > 0.0 { 100.0 * key.total / t } else { 0.0 }),
            key,
        })
        .collect()
}

/// The entries of a ranking with every kind's statistics ([`event_stats`]).
fn complete(profile: &Profile, m: MetricId, keyed: Vec<Keyed>) -> Vec<RankedEvent> {
    keyed
        .par_iter()
        .map(|k| RankedEvent {
            rank: k.rank,
            event: k.event,
            sum: k.key.total,
            percent: k.percent,
            stats: event_stats(profile, k.event, m),
        })
        .collect()
}

/// Events ranked by load imbalance (`max / mean over all threads`) of their exclusive value,
/// among the flat events whose exclusive total is at least `min_percent` of the run total
/// (so that tiny events do not crowd out the ones that matter; a metric that does not add up
/// has no run total, so all its flat events take part). Largest imbalance first.
pub fn most_imbalanced(profile: &Profile, m: MetricId, min_percent: f64, n: usize) -> Vec<RankedEvent> {
    let total = run_total(profile, m);
    let all = ranked_keys(profile, m, RankBy::Exclusive, false, total);
    complete(profile, m, imbalanced_of(profile, all, total, min_percent, n))
}

/// The hot spots and the most imbalanced events at once, as `perfscape summary` shows them:
/// the lists of [`top_events`] (`n_hot` flat events by exclusive value) and of
/// [`most_imbalanced`] (`min_percent`, `n_imbalanced`), from one ranking of the flat events
/// by their exclusive statistics, with the other kinds' computed only for the entries of the
/// two lists. `total` is the run total of metric `m`, as [`run_total`] gives it (or
/// [`crate::run_total_of`] from thread totals already computed).
pub fn hot_and_imbalanced(
    profile: &Profile,
    m: MetricId,
    n_hot: usize,
    min_percent: f64,
    n_imbalanced: usize,
    total: Option<f64>,
) -> (Vec<RankedEvent>, Vec<RankedEvent>) {
    let all = ranked_keys(profile, m, RankBy::Exclusive, false, total);
    let hot = all[..if n_hot > 0 {
        n_hot.min(all.len())
    } else {
        all.len()
    }]
        .to_vec();
    let imbalanced = imbalanced_of(profile, all, total, min_percent, n_imbalanced);
    (complete(profile, m, hot), complete(profile, m, imbalanced))
}

/// [`most_imbalanced`] from every flat event ranked by exclusive value (`all`, keyed by
/// their exclusive statistics).
fn imbalanced_of(
    profile: &Profile,
    all: Vec<Keyed>,
    total: Option<f64>,
    min_percent: f64,
    n: usize,
) -> Vec<Keyed> {
    let mut entries: Vec<Keyed> = all
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
        b.key
            .imbalance()
            .total_cmp(&a.key.imbalance())
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

#[cfg(test)]
mod tests {
    use super::*;
    use perfscape_model::{Metric, ProfileBuilder, ThreadData, ThreadId};

    /// 4 threads: `main` (inclusive 100 each, the thread totals), `a` 40 on every thread,
    /// `b` 10, 10, 10, 50 (max / mean over all threads = 50 / 20 = 2.5), `c` 1 on thread 0
    /// only (0.25% of the run total 400: below `min_percent` 1), a callpath `main => a`.
    fn planted() -> Profile {
        let mut b = ProfileBuilder::new(vec![Metric::tau("TIME")]);
        for t in 0..4u32 {
            let mut d = ThreadData::new(1);
            let bv = if t == 3 { 50.0 } else { 10.0 };
            d.push_timer("main", "G", 1.0, 2.0, &[100.0 - 40.0 - bv], &[100.0])
                .unwrap();
            d.push_timer("a", "G", 1.0, 0.0, &[40.0], &[40.0]).unwrap();
            d.push_timer("main => a", "G", 1.0, 0.0, &[40.0], &[40.0])
                .unwrap();
            d.push_timer("b", "G", 1.0, 0.0, &[bv], &[bv]).unwrap();
            if t == 0 {
                d.push_timer("c", "G", 1.0, 0.0, &[1.0], &[1.0]).unwrap();
            }
            b.add_thread(ThreadId::new(t, 0, 0), d).unwrap();
        }
        b.finish().0
    }

    fn names(p: &Profile, r: &[RankedEvent]) -> Vec<(usize, String)> {
        r.iter().map(|r| (r.rank, p.event_name(r.event))).collect()
    }

    #[test]
    fn both_lists_at_once_are_the_lists_of_each() {
        let p = planted();
        let m = MetricId(0);
        assert_eq!(run_total(&p, m), Some(400.0));
        let (hot, imb) = hot_and_imbalanced(&p, m, 2, 1.0, 10, run_total(&p, m));
        // Exclusive sums: main 4 * 100 - 160 - 80 = 160, a 160, b 80, c 1; ties by event id.
        assert_eq!(names(&p, &hot), [(1, "main".to_string()), (2, "a".to_string())]);
        assert_eq!(hot[0].sum, 160.0);
        assert_eq!(hot[1].percent, Some(40.0));
        // Imbalance (max / mean over all threads): b 2.5, main 50 / 40 = 1.25, a 1; c is
        // under 1% of the run.
        assert_eq!(
            names(&p, &imb),
            [
                (1, "b".to_string()),
                (2, "main".to_string()),
                (3, "a".to_string())
            ]
        );
        assert_eq!(imb[0].stats.exclusive.max, 50.0);
        let top = top_events(
            &p,
            m,
            TopOptions {
                n: 2,
                ..TopOptions::default()
            },
        );
        assert_eq!(hot, top);
        assert_eq!(imb, most_imbalanced(&p, m, 1.0, 10));
        // Ranked by the key's statistics alone, each entry then carries every kind's.
        for r in hot.iter().chain(&imb) {
            assert_eq!(r.stats, crate::stats::event_stats(&p, r.event, m));
            assert_eq!(r.sum, r.stats.exclusive.total);
        }
        let by_inclusive = top_events(
            &p,
            m,
            TopOptions {
                by: RankBy::Inclusive,
                n: 0,
                include_callpaths: true,
            },
        );
        // Inclusive sums: main 400, then a and `main => a` 160 (event order), b 80, c 1.
        assert_eq!(
            by_inclusive.iter().map(|r| (r.rank, r.sum)).collect::<Vec<_>>(),
            [(1, 400.0), (2, 160.0), (3, 160.0), (4, 80.0), (5, 1.0)]
        );
        assert_eq!(by_inclusive[1].stats.inclusive.total, 160.0);
        assert_eq!(by_inclusive[4].stats.calls.total, 1.0);
        // n = 0: every list whole.
        let (hot, imb) = hot_and_imbalanced(&p, m, 0, 0.0, 0, run_total(&p, m));
        assert_eq!(names(&p, &hot).len(), 4);
        assert_eq!(names(&p, &imb).len(), 4);
    }
}
