//! Statistics of an event across threads, with ParaProf's two conventions.
//!
//! ParaProf (TAU's `perfdmf` `DataSource.generateStatistics`) reports, per event and metric:
//! Total; Mean, Min, Max and StandardDeviation over the threads that HAVE the event; and
//! `Mean,AllThreads` and `StandardDeviation,AllThreads` over all threads of the run, a thread
//! without the event counting as 0. Standard deviations are population ones (divide by n). These
//! functions compute the same quantities, the standard deviation with a two-pass algorithm
//! (ParaProf's `sqrt(|sumsq/n - mean^2|)` loses digits when the spread is small next to the
//! mean; the two agree wherever that formula is exact to ~1e-9).
//!
//! Metrics that do not add up (a minimum, a maximum, a mean, a ratio: see
//! [`perfscape_model::Combine`]) keep every statistic but the total, which is their own
//! combination across threads: the minimum of a minimum metric, the maximum of a maximum
//! metric, the mean of a mean metric (as CUBE/pycubexr aggregate `MINDOUBLE`/`MAXDOUBLE` over
//! locations), no value for a metric that is not combinable. They have no run total, so no
//! percentage of it. Calls and subcalls are counts and always add up.

use perfscape_model::{Combine, Combiner, EventId, MetricId, Profile, ThreadIndex, ValueKind};
use rayon::prelude::*;
use serde::Serialize;
use std::cmp::Ordering;

/// Orders values larger first, NaN (a total that could not be combined) last: the order of
/// every ranking.
pub fn larger_first(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (false, false) => b.total_cmp(&a),
        (x, y) => x.cmp(&y),
    }
}

/// Statistics of one quantity (e.g. exclusive time of one event) across threads.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Summary {
    /// Number of threads that have the event with a value (n).
    pub threads: usize,
    /// Number of threads in the run (N).
    pub threads_all: usize,
    /// How the values combine across threads (sum for calls, subcalls and additive metrics).
    pub combine: Combine,
    /// The values of the threads that have the event combined under `combine`: their sum for
    /// an additive metric (ParaProf's Total), their minimum, maximum or mean for a minimum,
    /// maximum or mean metric; NaN for a not combinable metric on more than one thread. 0
    /// when n = 0.
    pub total: f64,
    /// Sum over the n threads divided by n: ParaProf's Mean. 0 when n = 0.
    pub mean: f64,
    /// Sum over the n threads divided by N: ParaProf's `Mean,AllThreads` and TAU pprof's mean
    /// (a thread without the event counts as 0).
    pub mean_all: f64,
    /// Smallest value among the n threads (0 when n = 0).
    pub min: f64,
    /// Thread with the smallest value (the lowest index on ties).
    pub min_thread: Option<ThreadIndex>,
    /// Largest value among the n threads (0 when n = 0).
    pub max: f64,
    /// Thread with the largest value (the lowest index on ties).
    pub max_thread: Option<ThreadIndex>,
    /// Population standard deviation over the n threads (ParaProf's StandardDeviation); 0 for n ≤ 1.
    pub stddev: f64,
    /// Population standard deviation over all N threads, absent ones counting as 0
    /// (ParaProf's `StandardDeviation,AllThreads`).
    pub stddev_all: f64,
}

impl Summary {
    /// Summarizes `values` (one per thread having the event, `threads[i]` holding `values[i]`)
    /// for a run of `threads_all` threads, the total combining them under `combine`.
    ///
    /// A NaN value is a cell without a value (a derived metric's division by zero): its
    /// thread counts as a thread without the event.
    pub fn of(values: &[f64], threads: &[ThreadIndex], threads_all: usize, combine: Combine) -> Self {
        if values.iter().any(|v| v.is_nan()) {
            let (values, threads): (Vec<f64>, Vec<ThreadIndex>) = values
                .iter()
                .zip(threads)
                .filter(|(v, _)| !v.is_nan())
                .map(|(&v, &t)| (v, t))
                .unzip();
            return Self::of(&values, &threads, threads_all, combine);
        }
        let n = values.len();
        let mut total = 0.0;
        let (mut min, mut max) = (f64::INFINITY, f64::NEG_INFINITY);
        let (mut min_i, mut max_i) = (None, None);
        for (i, &v) in values.iter().enumerate() {
            total += v;
            if v < min {
                min = v;
                min_i = Some(i);
            }
            if v > max {
                max = v;
                max_i = Some(i);
            }
        }
        if n == 0 {
            return Summary {
                threads: 0,
                threads_all,
                combine,
                total: 0.0,
                mean: 0.0,
                mean_all: 0.0,
                min: 0.0,
                min_thread: None,
                max: 0.0,
                max_thread: None,
                stddev: 0.0,
                stddev_all: 0.0,
            };
        }
        let mean = total / n as f64;
        let mean_all = if threads_all > 0 {
            total / threads_all as f64
        } else {
            0.0
        };
        let (mut ss, mut ss_all) = (0.0, 0.0);
        for &v in values {
            ss += (v - mean) * (v - mean);
            ss_all += (v - mean_all) * (v - mean_all);
        }
        let absent = threads_all.saturating_sub(n) as f64;
        ss_all += absent * mean_all * mean_all;
        let stddev = if n > 1 { (ss / n as f64).sqrt() } else { 0.0 };
        let stddev_all = if threads_all > 1 {
            (ss_all / threads_all as f64).sqrt()
        } else {
            0.0
        };
        let total = match combine {
            Combine::Sum => total,
            Combine::Min => min,
            Combine::Max => max,
            Combine::Mean => mean,
            Combine::NotCombinable => combine.fold(values).unwrap_or(f64::NAN),
        };
        Summary {
            threads: n,
            threads_all,
            combine,
            total,
            mean,
            mean_all,
            min,
            min_thread: min_i.map(|i| threads[i]),
            max,
            max_thread: max_i.map(|i| threads[i]),
            stddev,
            stddev_all,
        }
    }

    /// Load imbalance: `max / mean_all`, the largest thread value over the mean over all
    /// threads (1 = perfectly balanced; N when one thread of N does all the work). 0 when
    /// the mean is 0.
    pub fn imbalance(&self) -> f64 {
        if self.mean_all > 0.0 {
            self.max / self.mean_all
        } else {
            0.0
        }
    }

    /// Time lost to imbalance: `max - mean_all` (what the slowest thread costs the others
    /// when they wait for it).
    pub fn imbalance_cost(&self) -> f64 {
        self.max - self.mean_all
    }
}

/// Statistics of one event in one metric: calls, subcalls, exclusive and inclusive.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct EventStats {
    /// The event.
    pub event: EventId,
    /// The metric of `exclusive` and `inclusive`.
    pub metric: MetricId,
    /// Calls across threads.
    pub calls: Summary,
    /// Subcalls across threads.
    pub subcalls: Summary,
    /// Exclusive values across threads.
    pub exclusive: Summary,
    /// Inclusive values across threads.
    pub inclusive: Summary,
}

impl EventStats {
    /// The summary of one value kind.
    pub fn get(&self, kind: ValueKind) -> &Summary {
        match kind {
            ValueKind::Exclusive => &self.exclusive,
            ValueKind::Inclusive => &self.inclusive,
            ValueKind::Calls => &self.calls,
            ValueKind::Subcalls => &self.subcalls,
        }
    }
}

/// Statistics of one value kind of event `e` (in metric `m` for exclusive and inclusive)
/// across the threads of `profile`: the `kind` part of [`event_stats`], alone (a ranking
/// needs only its key).
pub fn event_kind_stats(profile: &Profile, e: EventId, m: MetricId, kind: ValueKind) -> Summary {
    let col = profile.interval(e);
    let rule = if kind.is_metric_independent() {
        Combine::Sum
    } else {
        profile.metric(m).combine
    };
    Summary::of(col.values(kind, m), col.threads(), profile.threads().len(), rule)
}

/// Statistics of event `e` in metric `m` across the threads of `profile`.
pub fn event_stats(profile: &Profile, e: EventId, m: MetricId) -> EventStats {
    let s = |kind: ValueKind| event_kind_stats(profile, e, m, kind);
    EventStats {
        event: e,
        metric: m,
        calls: s(ValueKind::Calls),
        subcalls: s(ValueKind::Subcalls),
        exclusive: s(ValueKind::Exclusive),
        inclusive: s(ValueKind::Inclusive),
    }
}

/// Statistics of every event in metric `m`, in event id order (computed in parallel).
pub fn all_event_stats(profile: &Profile, m: MetricId) -> Vec<EventStats> {
    let ids: Vec<EventId> = profile.event_ids().collect();
    ids.par_iter().map(|&e| event_stats(profile, e, m)).collect()
}

/// Per-thread totals in one metric.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ThreadTotals {
    /// The thread.
    pub thread: ThreadIndex,
    /// The thread's whole measured value. For an additive metric its largest inclusive value:
    /// the inclusive value of its top-level timer (`.TAU application`), ParaProf's
    /// `getMaxInclusive`; when the reader gave the thread's total
    /// ([`Profile::thread_total`]: a sampled call tree, whose roots add up), that total. For a metric that does not add up, the combination under its rule
    /// of the inclusive values of the thread's top-level events (the call tree's roots, or the
    /// flat events of a profile without callpaths): a minimum metric's smallest root value,
    /// not its largest node. NaN for a not combinable metric with several roots; 0 for a
    /// thread without events.
    pub inclusive: f64,
    /// The exclusive values of the thread's flat (non-callpath) events combined under the
    /// metric's rule: their sum for an additive metric, their minimum, maximum or mean
    /// otherwise (NaN for a not combinable metric with several events).
    pub exclusive_total: f64,
    /// Number of events the thread has (flat and callpath).
    pub events: usize,
}

/// Totals of every thread in metric `m`, in thread order (see [`ThreadTotals`]).
///
/// Computed in parallel over ranges of threads; each thread still combines its values in
/// event order, so the result is the same for any number of worker threads.
pub fn thread_totals(profile: &Profile, m: MetricId) -> Vec<ThreadTotals> {
    let n = profile.threads().len();
    let tree = profile.call_tree();
    let mut root_flags = vec![
        false;
        if tree.is_empty() {
            0
        } else {
            profile.events().len()
        }
    ];
    for &r in tree.roots() {
        root_flags[r.index()] = true;
    }
    let is_root = |e: EventId| {
        if tree.is_empty() {
            !profile.event(e).is_callpath()
        } else {
            root_flags[e.index()]
        }
    };
    let chunk = n.div_ceil(4 * rayon::current_num_threads()).max(256);
    let starts: Vec<usize> = (0..n).step_by(chunk).collect();
    starts
        .par_iter()
        .flat_map_iter(|&a| thread_totals_of(profile, m, a..(a + chunk).min(n), &is_root))
        .collect()
}

/// [`thread_totals`] of the threads `range`.
fn thread_totals_of(
    profile: &Profile,
    m: MetricId,
    range: std::ops::Range<usize>,
    is_root: &(dyn Fn(EventId) -> bool + Sync),
) -> Vec<ThreadTotals> {
    let rule = profile.metric(m).combine;
    let (a, n) = (range.start, range.len());
    let mut largest: Vec<Option<f64>> = vec![None; n];
    let mut roots = vec![Combiner::new(rule); n];
    let mut exclusive = vec![Combiner::new(rule); n];
    let mut events = vec![0usize; n];
    // Cell (event, thread `a + i`) with values `inc` and `exc` of an event that is `flat`
    // (not a callpath) and counts as a `root`.
    let mut add = |i: usize, inc: f64, exc: f64, flat: bool, root: bool| {
        // A NaN cell has no value (a derived metric's division by zero): skipped.
        let has_inc = !inc.is_nan();
        if has_inc && largest[i].is_none_or(|l| inc > l) {
            largest[i] = Some(inc);
        }
        if root && has_inc {
            roots[i].push(inc);
        }
        if flat && !exc.is_nan() {
            exclusive[i].push(exc);
        }
        events[i] += 1;
    };
    let columns = profile.interval_columns();
    let grid = columns
        .full_grid(ValueKind::Inclusive, m)
        .zip(columns.full_grid(ValueKind::Exclusive, m))
        .filter(|((t_count, inc), _)| inc.len() == columns.len() * t_count);
    if let Some(((t_count, inc), (_, exc))) = grid {
        // Every event on each thread 0..T: cell (e, t) at e * T + t, no per-event view (a
        // call tree of 10^6 nodes on one thread).
        let (lo, hi) = (range.start.min(t_count), range.end.min(t_count));
        for (e, event) in profile.events().iter().enumerate() {
            let flat = !event.is_callpath();
            let root = !rule.is_additive() && is_root(EventId::from(e));
            for t in lo..hi {
                add(t - a, inc[e * t_count + t], exc[e * t_count + t], flat, root);
            }
        }
    } else {
        for e in profile.event_ids() {
            let col = profile.interval(e);
            let flat = !profile.event(e).is_callpath();
            let root = !rule.is_additive() && is_root(e);
            // The rows of the range: threads are sorted in a column.
            let threads = col.threads();
            let lo = threads.partition_point(|t| t.index() < range.start);
            let hi = threads.partition_point(|t| t.index() < range.end);
            let rows = threads[lo..hi]
                .iter()
                .zip(&col.inclusive(m)[lo..hi])
                .zip(&col.exclusive(m)[lo..hi]);
            for ((t, &inc), &exc) in rows {
                add(t.index() - a, inc, exc, flat, root);
            }
        }
    }
    (0..n)
        .map(|i| {
            let combined = |c: &Combiner| match c.finish() {
                Some(v) => v,
                None if c.count() == 0 => 0.0,
                None => f64::NAN,
            };
            let thread = ThreadIndex::from(a + i);
            let given = profile.thread_total(thread, m);
            ThreadTotals {
                thread,
                inclusive: if let Some(total) = given {
                    total
                } else if rule.is_additive() {
                    largest[i].unwrap_or(0.0)
                } else {
                    combined(&roots[i])
                },
                exclusive_total: combined(&exclusive[i]),
                events: events[i],
            }
        })
        .collect()
}

/// The run total of metric `m`: the sum over threads of each thread's largest inclusive value;
/// `None` for a metric that does not add up (a minimum, maximum, mean or ratio has no share
/// of a run).
///
/// This is the divisor of ParaProf's percentages (`topLevelInclSum` in
/// `DataSource.generateStatistics`): an event's total as a percent of this is its share of
/// all measured thread time.
pub fn run_total(profile: &Profile, m: MetricId) -> Option<f64> {
    profile
        .metric(m)
        .combine
        .is_additive()
        .then(|| run_total_of(&thread_totals(profile, m)))
}

/// [`run_total`] from the [`thread_totals`] of the same metric, already computed (`None` is
/// the caller's to give for a metric that does not add up): their inclusive values summed
/// in thread order.
pub fn run_total_of(totals: &[ThreadTotals]) -> f64 {
    totals.iter().map(|t| t.inclusive).sum()
}

/// The values of event `e` on every thread that has it, largest first (ties by thread order).
pub fn thread_values_sorted(
    profile: &Profile,
    e: EventId,
    kind: ValueKind,
    m: MetricId,
) -> Vec<(ThreadIndex, f64)> {
    let col = profile.interval(e);
    let mut v: Vec<(ThreadIndex, f64)> = col
        .threads()
        .iter()
        .copied()
        .zip(col.values(kind, m).iter().copied())
        .collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(v: &[u32]) -> Vec<ThreadIndex> {
        v.iter().map(|&i| ThreadIndex(i)).collect()
    }

    #[test]
    fn both_conventions() {
        // 3 of 4 threads have the event: values 2, 4, 6.
        let s = Summary::of(&[2.0, 4.0, 6.0], &t(&[0, 2, 3]), 4, Combine::Sum);
        assert_eq!(s.total, 12.0);
        assert_eq!(s.mean, 4.0);
        assert_eq!(s.mean_all, 3.0);
        assert_eq!((s.min, s.min_thread), (2.0, Some(ThreadIndex(0))));
        assert_eq!((s.max, s.max_thread), (6.0, Some(ThreadIndex(3))));
        assert!((s.stddev - (8.0f64 / 3.0).sqrt()).abs() < 1e-15);
        // all threads: 2,0,4,6 mean 3 -> var = (1+9+1+9)/4 = 5
        assert!((s.stddev_all - 5.0f64.sqrt()).abs() < 1e-15);
        assert_eq!(s.imbalance(), 2.0);
    }

    #[test]
    fn empty_and_single() {
        let s = Summary::of(&[], &[], 5, Combine::Min);
        assert_eq!((s.threads, s.total, s.stddev, s.min_thread), (0, 0.0, 0.0, None));
        let s = Summary::of(&[7.0], &t(&[1]), 1, Combine::NotCombinable);
        assert_eq!((s.stddev, s.stddev_all, s.imbalance()), (0.0, 0.0, 1.0));
    }

    #[test]
    fn totals_follow_the_metric_rule() {
        let v = [2.0, 4.0, 9.0];
        let th = t(&[0, 1, 2]);
        let total = |c| Summary::of(&v, &th, 4, c).total;
        assert_eq!(total(Combine::Sum), 15.0);
        assert_eq!(total(Combine::Min), 2.0);
        assert_eq!(total(Combine::Max), 9.0);
        assert_eq!(total(Combine::Mean), 5.0);
        assert!(total(Combine::NotCombinable).is_nan());
        // The other statistics do not depend on the rule.
        let (a, b) = (
            Summary::of(&v, &th, 4, Combine::Sum),
            Summary::of(&v, &th, 4, Combine::Min),
        );
        assert_eq!(
            (a.mean, a.mean_all, a.stddev, a.max),
            (b.mean, b.mean_all, b.stddev, b.max)
        );
    }

    /// Two threads of a run with `main => {a, b}`, a sum metric and a minimum metric whose
    /// inclusive values are minima over the subtree (as CUBE derives them).
    fn min_profile() -> Profile {
        use perfscape_model::{Metric, ProfileBuilder, ThreadData, ThreadId, Unit};
        let mut b = ProfileBuilder::new(vec![
            Metric::new("time", Unit::Seconds),
            Metric::new("min_time", Unit::Seconds).combined_by(Combine::Min),
        ]);
        for (k, scale) in [1.0, 2.0].into_iter().enumerate() {
            let mut d = ThreadData::new(2);
            // name, exclusive (time, min_time), inclusive (time, min_time)
            for (name, x, i) in [
                ("main", [1.0, 50.0], [10.0, 3.0]),
                ("a", [6.0, 3.0], [6.0, 3.0]),
                ("b", [3.0, 7.0], [3.0, 7.0]),
                ("main => a", [6.0, 3.0], [6.0, 3.0]),
                ("main => b", [3.0, 7.0], [3.0, 7.0]),
            ] {
                d.push_timer(name, "G", 1.0, 0.0, &x.map(|v| v * scale), &i.map(|v| v * scale))
                    .unwrap();
            }
            b.add_thread(ThreadId::new(k as u32, 0, 0), d).unwrap();
        }
        b.finish().0
    }

    #[test]
    fn thread_totals_and_run_total_of_a_minimum_metric() {
        let p = min_profile();
        let time = thread_totals(&p, MetricId(0));
        assert_eq!((time[1].inclusive, time[1].exclusive_total), (20.0, 20.0));
        assert_eq!(run_total(&p, MetricId(0)), Some(30.0));
        let min = thread_totals(&p, MetricId(1));
        // The root's inclusive minimum, not the largest node value (50 or 7).
        assert_eq!((min[0].inclusive, min[1].inclusive), (3.0, 6.0));
        // The smallest exclusive value of the flat events: min(50, 3, 7).
        assert_eq!((min[0].exclusive_total, min[1].exclusive_total), (3.0, 6.0));
        assert_eq!(run_total(&p, MetricId(1)), None);
        let main = p.event_by_name("main").unwrap();
        let s = event_stats(&p, main, MetricId(1));
        assert_eq!((s.exclusive.total, s.inclusive.total), (50.0, 3.0));
        assert_eq!(s.calls.total, 2.0);
    }

    #[test]
    fn cells_without_a_value_count_as_absent_threads() {
        let s = Summary::of(
            &[f64::NAN, 2.0, f64::NAN, 6.0],
            &t(&[0, 1, 2, 3]),
            4,
            Combine::Mean,
        );
        assert_eq!((s.threads, s.total, s.mean, s.mean_all), (2, 4.0, 4.0, 2.0));
        assert_eq!(
            (s.min_thread, s.max_thread),
            (Some(ThreadIndex(1)), Some(ThreadIndex(3)))
        );
        assert_eq!(s.stddev, 2.0);
        let none = Summary::of(&[f64::NAN], &t(&[0]), 1, Combine::Sum);
        assert_eq!((none.threads, none.total), (0, 0.0));
    }

    #[test]
    fn ties_go_to_the_lowest_thread() {
        let s = Summary::of(&[5.0, 5.0, 1.0, 1.0], &t(&[0, 1, 2, 3]), 4, Combine::Sum);
        assert_eq!(s.max_thread, Some(ThreadIndex(0)));
        assert_eq!(s.min_thread, Some(ThreadIndex(2)));
    }

    proptest::proptest! {
        #[test]
        fn stddev_matches_the_textbook_formula(values in proptest::collection::vec(-1e6f64..1e6, 1..50), extra in 0usize..5) {
            let threads: Vec<ThreadIndex> = (0..values.len()).map(ThreadIndex::from).collect();
            let n_all = values.len() + extra;
            let s = Summary::of(&values, &threads, n_all, Combine::Sum);
            let mut all = values.clone();
            all.extend(std::iter::repeat_n(0.0, extra));
            let mean = all.iter().sum::<f64>() / n_all as f64;
            let var = all.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n_all as f64;
            let expect = if n_all > 1 { var.sqrt() } else { 0.0 };
            proptest::prop_assert!((s.stddev_all - expect).abs() <= 1e-9 * expect.max(1.0));
        }
    }

    /// 1,000 threads (several ranges), a NaN cell, and a metric combined by its minimum; with
    /// `gaps`, events missing on some threads (per-event thread lists), else every event on
    /// every thread (the arena's full grid).
    fn thousand_threads(gaps: bool) -> Profile {
        use perfscape_model::{Metric, ProfileBuilder, ThreadData, ThreadId, Unit};
        let mut b = ProfileBuilder::new(vec![
            Metric::new("time", Unit::Seconds),
            Metric::new("min_time", Unit::Seconds).combined_by(Combine::Min),
        ]);
        if !gaps {
            // Announced, as TAU's reader does: the cells are written in their final place.
            b.expect_threads(1000);
        }
        for r in 0..1000u32 {
            let mut d = ThreadData::new(2);
            let x = f64::from(r % 97);
            d.push_timer("main", "", 1.0, 2.0, &[x, x + 1.0], &[x + 50.0, x + 2.0])
                .unwrap();
            if !gaps || r % 3 != 0 {
                d.push_timer("main => f", "", 1.0, 0.0, &[x / 2.0, 3.0], &[x / 2.0, 3.0])
                    .unwrap();
            }
            if !gaps || r % 7 == 0 {
                let v = if r == 693 { f64::NAN } else { 7.0 + x };
                d.push_timer("g", "", 1.0, 0.0, &[v, 0.5], &[v, 0.5]).unwrap();
            }
            b.add_thread(ThreadId::new(r, 0, 0), d).unwrap();
        }
        b.finish().0
    }

    #[test]
    fn thread_totals_over_ranges_of_threads_equal_one_pass_per_thread() {
        let listed = thousand_threads(true);
        let grid = thousand_threads(false);
        let layout = |p: &Profile| {
            p.interval_columns()
                .full_grid(ValueKind::Inclusive, MetricId(0))
                .is_some()
        };
        assert!(!layout(&listed) && layout(&grid), "both layouts are tested");
        check_thread_totals(&listed);
        check_thread_totals(&grid);
    }

    /// Checks [`thread_totals`] of every metric of `p` against one pass per thread.
    fn check_thread_totals(p: &Profile) {
        for m in [MetricId(0), MetricId(1)] {
            let got = thread_totals(p, m);
            assert_eq!(got.len(), 1000);
            let rule = p.metric(m).combine;
            for (i, tt) in got.iter().enumerate() {
                let th = ThreadIndex::from(i);
                // The thread's cells, one event at a time, in event order.
                let cells: Vec<(EventId, f64, f64)> = p
                    .event_ids()
                    .filter_map(|e| {
                        let col = p.interval(e);
                        col.row_of(th)
                            .map(|r| (e, col.inclusive(m)[r], col.exclusive(m)[r]))
                    })
                    .collect();
                let flat_exc: Vec<f64> = cells
                    .iter()
                    .filter(|(e, _, x)| !p.event(*e).is_callpath() && !x.is_nan())
                    .map(|c| c.2)
                    .collect();
                let largest = cells
                    .iter()
                    .map(|c| c.1)
                    .filter(|v| !v.is_nan())
                    .fold(f64::NEG_INFINITY, f64::max);
                assert_eq!(tt.thread, th);
                assert_eq!(tt.events, cells.len(), "thread {i}");
                if rule.is_additive() {
                    assert_eq!(tt.inclusive, largest, "thread {i}");
                    assert_eq!(tt.exclusive_total, flat_exc.iter().sum::<f64>(), "thread {i}");
                } else {
                    let roots: Vec<f64> = cells
                        .iter()
                        .filter(|(e, v, _)| p.call_tree().roots().contains(e) && !v.is_nan())
                        .map(|c| c.1)
                        .collect();
                    assert_eq!(Some(tt.inclusive), rule.fold(&roots), "thread {i}");
                    assert_eq!(Some(tt.exclusive_total), rule.fold(&flat_exc), "thread {i}");
                }
            }
        }
    }
}
