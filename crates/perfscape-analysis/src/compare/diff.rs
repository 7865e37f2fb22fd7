//! The difference of two runs per event (`perfscape diff A B`) and per thread of one event.
//!
//! Values follow ParaProf's statistics ([`crate::stats::Summary`]): `total` is the value
//! combined over the threads that have the event (the sum for an additive metric), `per
//! thread` the sum divided by all threads of the run (ParaProf's `Mean,AllThreads`, TAU
//! pprof's mean). Summed over threads, the per-event difference of two runs equals Hatchet's
//! `gf_b - gf_a` summed over ranks (`tests/diff_hatchet.rs`).

use super::matching::{EventPair, MatchNote, RunMatch};
use crate::stats::{Summary, larger_first, run_total};
use perfscape_model::{Combine, EventId, MetricId, Profile, ThreadId, ValueKind};
use serde::{Deserialize, Serialize};
use std::cmp::Ordering;
use thiserror::Error;

/// How each run's value of an event is normalized before the two are compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum Normalize {
    /// The total over the run's threads (the metric's own combination when it does not add
    /// up). Right when both runs have the same threads.
    Total,
    /// The total divided by the run's number of threads (threads without the event count as
    /// 0): what one thread spends on average. Right when the thread counts differ. Metrics that
    /// do not add up keep their combination (a minimum has no per-thread share).
    PerThread,
}

/// The order of the rows of a [`Diff`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum DiffSort {
    /// Largest |B − A| first (default).
    AbsDelta,
    /// Largest B − A first: the regressions on top, the improvements at the bottom.
    Delta,
    /// Largest B / A first (events new in B, with no ratio, last).
    Ratio,
    /// Largest value in A first.
    A,
    /// Largest value in B first.
    B,
}

/// Options of [`diff_runs`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DiffOptions {
    /// The metric, as run A's id; run B's is the metric of the same name
    /// ([`RunMatch::metrics`]).
    pub metric: MetricId,
    /// The value kind compared (exclusive, inclusive, calls, subcalls).
    pub kind: ValueKind,
    /// Normalization of each run's value.
    pub normalize: Normalize,
    /// Also compare callpath events (`a => b`); by default only flat events (with callpath
    /// profiling TAU lists every routine both flat and per path).
    pub include_callpaths: bool,
    /// Row order.
    pub sort: DiffSort,
}

/// Whether an event is in both runs or in one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum Change {
    /// In both runs.
    Matched,
    /// In run B only.
    Added,
    /// In run A only.
    Removed,
}

/// One event of a [`Diff`]. A value of a run without the event is 0.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct DiffRow {
    /// The event in run A (`None` when added in B).
    pub a: Option<EventId>,
    /// The event in run B (`None` when removed in B).
    pub b: Option<EventId>,
    /// In both runs, or added, or removed.
    pub change: Change,
    /// How the pair was matched ([`MatchNote::Exact`] for an added or removed event).
    pub note: MatchNote,
    /// The value in run A, in the metric's unit, normalized as asked.
    pub value_a: f64,
    /// The value in run B.
    pub value_b: f64,
    /// `value_b - value_a`.
    pub delta: f64,
    /// `value_b / value_a`; `None` when `value_a` is 0.
    pub ratio: Option<f64>,
    /// `delta` in percent of run A's run total ([`run_total`], normalized the same way):
    /// how much of A's whole run the change is. `None` for calls, subcalls and metrics that
    /// do not add up.
    pub percent_of_a: Option<f64>,
    /// Threads of run A that have the event.
    pub threads_a: usize,
    /// Threads of run B that have the event.
    pub threads_b: usize,
}

/// The difference of two runs, event by event.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Diff {
    /// The metric in run A.
    pub metric_a: MetricId,
    /// The same metric in run B.
    pub metric_b: MetricId,
    /// The value kind compared.
    pub kind: ValueKind,
    /// The normalization applied.
    pub normalize: Normalize,
    /// Run A's run total, normalized (`None` when not additive).
    pub total_a: Option<f64>,
    /// Run B's run total, normalized.
    pub total_b: Option<f64>,
    /// One row per event of either run (flat events only unless asked), sorted as asked.
    pub rows: Vec<DiffRow>,
}

/// Why a diff cannot be computed.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum DiffError {
    /// Run B lacks the metric asked for.
    #[error("metric `{0}` is not in run B")]
    MetricNotInB(String),
    /// The metric id is not one of run A's.
    #[error("run A has no metric {0}")]
    NoSuchMetric(usize),
}

/// The statistics across threads of event `e` of `p` in metric `m`, kind `kind`, combined by
/// the metric's rule (calls and subcalls add up).
pub fn event_summary(p: &Profile, e: EventId, m: MetricId, kind: ValueKind) -> Summary {
    let col = p.interval(e);
    let combine = if kind.is_metric_independent() {
        Combine::Sum
    } else {
        p.metric(m).combine
    };
    Summary::of(col.values(kind, m), col.threads(), p.threads().len(), combine)
}

/// A run's value of an event from its [`event_summary`]: the total over the threads that have
/// it, or with [`Normalize::PerThread`] and an additive metric its sum divided by all of the
/// run's threads.
pub fn normalized(s: &Summary, normalize: Normalize) -> f64 {
    match normalize {
        Normalize::PerThread if s.combine.is_additive() => s.mean_all,
        _ => s.total,
    }
}

/// The value of event `e` of `p` in metric `m`, kind `kind`, [`normalized`], and the number
/// of threads that have it.
pub fn event_value(
    p: &Profile,
    e: EventId,
    m: MetricId,
    kind: ValueKind,
    normalize: Normalize,
) -> (f64, usize) {
    let s = event_summary(p, e, m, kind);
    (normalized(&s, normalize), s.threads)
}

/// The normalization when none is asked for: per thread when the runs have different thread
/// counts, else the total.
pub fn default_normalize(a: &Profile, b: &Profile) -> Normalize {
    if a.threads().len() == b.threads().len() {
        Normalize::Total
    } else {
        Normalize::PerThread
    }
}

fn normalized_total(p: &Profile, m: MetricId, kind: ValueKind, normalize: Normalize) -> Option<f64> {
    if kind.is_metric_independent() {
        return None;
    }
    let t = run_total(p, m)?;
    Some(match normalize {
        Normalize::Total => t,
        Normalize::PerThread => t / p.threads().len().max(1) as f64,
    })
}

/// The difference of runs `a` and `b` (matched by [`super::matching::match_runs`]) per
/// event, for one metric and value kind. Every event of either run is a row (added and
/// removed events with 0 for the run that lacks them); callpath events only with
/// [`DiffOptions::include_callpaths`].
///
/// Errors: the metric is not one of A's ([`DiffError::NoSuchMetric`]) or not in B
/// ([`DiffError::MetricNotInB`]).
pub fn diff_runs(a: &Profile, b: &Profile, matched: &RunMatch, opts: DiffOptions) -> Result<Diff, DiffError> {
    let ma = opts.metric;
    if ma.index() >= a.metrics().len() {
        return Err(DiffError::NoSuchMetric(ma.index()));
    }
    let mb = matched
        .metric_in_b(ma)
        .ok_or_else(|| DiffError::MetricNotInB(a.metric(ma).name.clone()))?;
    let total_a = normalized_total(a, ma, opts.kind, opts.normalize);
    let total_b = normalized_total(b, mb, opts.kind, opts.normalize);
    let keep = |p: &Profile, e: EventId| opts.include_callpaths || !p.event(e).is_callpath();
    let value_a = |e: EventId| event_value(a, e, ma, opts.kind, opts.normalize);
    let value_b = |e: EventId| event_value(b, e, mb, opts.kind, opts.normalize);
    let row = |ea: Option<EventId>, eb: Option<EventId>, change: Change, note: MatchNote| {
        let (va, ta) = ea.map_or((0.0, 0), value_a);
        let (vb, tb) = eb.map_or((0.0, 0), value_b);
        let delta = vb - va;
        DiffRow {
            a: ea,
            b: eb,
            change,
            note,
            value_a: va,
            value_b: vb,
            delta,
            ratio: (va != 0.0).then(|| vb / va),
            percent_of_a: total_a.filter(|&t| t != 0.0).map(|t| 100.0 * delta / t),
            threads_a: ta,
            threads_b: tb,
        }
    };
    let mut rows: Vec<DiffRow> = Vec::new();
    for &EventPair { a: ea, b: eb, note } in &matched.events {
        if keep(a, ea) || keep(b, eb) {
            rows.push(row(Some(ea), Some(eb), Change::Matched, note));
        }
    }
    for &e in matched.events_only_a.iter().filter(|&&e| keep(a, e)) {
        rows.push(row(Some(e), None, Change::Removed, MatchNote::Exact));
    }
    for &e in matched.events_only_b.iter().filter(|&&e| keep(b, e)) {
        rows.push(row(None, Some(e), Change::Added, MatchNote::Exact));
    }
    sort_rows(&mut rows, opts.sort);
    Ok(Diff {
        metric_a: ma,
        metric_b: mb,
        kind: opts.kind,
        normalize: opts.normalize,
        total_a,
        total_b,
        rows,
    })
}

/// Sorts rows by `sort`, ties by A's event, then B's (rows of A's events first).
pub fn sort_rows(rows: &mut [DiffRow], sort: DiffSort) {
    let key = |r: &DiffRow| match sort {
        DiffSort::AbsDelta => r.delta.abs(),
        DiffSort::Delta => r.delta,
        DiffSort::Ratio => r.ratio.unwrap_or(f64::NAN),
        DiffSort::A => r.value_a,
        DiffSort::B => r.value_b,
    };
    let ids = |r: &DiffRow| (r.a.is_none(), r.a, r.b);
    rows.sort_by(|x, y| larger_first(key(x), key(y)).then_with(|| ids(x).cmp(&ids(y))));
}

/// One thread of a [`thread_diff`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ThreadDiffRow {
    /// The thread (node, context, thread).
    pub thread: ThreadId,
    /// Its value in run A (`None` when run A lacks the thread or the thread lacks the event).
    pub value_a: Option<f64>,
    /// Its value in run B.
    pub value_b: Option<f64>,
    /// `value_b - value_a`, a missing value counting as 0.
    pub delta: f64,
}

/// The difference of one matched event thread by thread, for the threads of both runs
/// (matched by node, context, thread; a thread of one run only has `None` for the other),
/// largest B − A first (the threads that got slower on top), ties in thread order.
///
/// `ma` is run A's metric, `mb` run B's ([`RunMatch::metric_in_b`]).
pub fn thread_diff(
    a: &Profile,
    b: &Profile,
    matched: &RunMatch,
    pair: EventPair,
    (ma, mb): (MetricId, MetricId),
    kind: ValueKind,
) -> Vec<ThreadDiffRow> {
    let row = |thread: ThreadId, va: Option<f64>, vb: Option<f64>| ThreadDiffRow {
        thread,
        value_a: va,
        value_b: vb,
        delta: vb.unwrap_or(0.0) - va.unwrap_or(0.0),
    };
    let mut rows: Vec<ThreadDiffRow> = matched
        .threads
        .iter()
        .map(|&(ta, tb)| {
            row(
                a.thread(ta),
                a.value(pair.a, ta, kind, ma),
                b.value(pair.b, tb, kind, mb),
            )
        })
        .chain(
            matched
                .threads_only_a
                .iter()
                .map(|&t| row(a.thread(t), a.value(pair.a, t, kind, ma), None)),
        )
        .chain(
            matched
                .threads_only_b
                .iter()
                .map(|&t| row(b.thread(t), None, b.value(pair.b, t, kind, mb))),
        )
        .collect();
    rows.sort_by(|x, y| match larger_first(x.delta, y.delta) {
        Ordering::Equal => x.thread.cmp(&y.thread),
        o => o,
    });
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::matching::match_runs;
    use perfscape_model::{Metric, ProfileBuilder, ThreadData};

    /// A run with per-thread (name, exclusive = inclusive) values.
    fn run(threads: &[&[(&str, f64)]]) -> Profile {
        let mut b = ProfileBuilder::new(vec![Metric::tau("TIME")]);
        for (t, events) in threads.iter().enumerate() {
            let mut d = ThreadData::new(1);
            for &(name, v) in *events {
                d.push_timer(name, "TAU_DEFAULT", 1.0, 0.0, &[v], &[v]).unwrap();
            }
            b.add_thread(ThreadId::new(t as u32, 0, 0), d).unwrap();
        }
        b.finish().0
    }

    fn opts(normalize: Normalize) -> DiffOptions {
        DiffOptions {
            metric: MetricId(0),
            kind: ValueKind::Exclusive,
            normalize,
            include_callpaths: false,
            sort: DiffSort::AbsDelta,
        }
    }

    #[test]
    fn totals_per_thread_added_removed() {
        let a = run(&[&[("main", 10.0), ("old", 4.0)], &[("main", 30.0)]]);
        let b = run(&[
            &[("main", 20.0), ("new", 1.0)],
            &[("main", 20.0)],
            &[("main", 20.0)],
        ]);
        let m = match_runs(&a, &b).unwrap();
        let d = diff_runs(&a, &b, &m, opts(Normalize::Total)).unwrap();
        let got: Vec<(Change, f64, f64, f64, Option<f64>)> = d
            .rows
            .iter()
            .map(|r| (r.change, r.value_a, r.value_b, r.delta, r.ratio))
            .collect();
        assert_eq!(
            got,
            [
                (Change::Matched, 40.0, 60.0, 20.0, Some(1.5)),
                (Change::Removed, 4.0, 0.0, -4.0, Some(0.0)),
                (Change::Added, 0.0, 1.0, 1.0, None),
            ]
        );
        // A's run total: per thread its largest inclusive value (10 and 30).
        assert_eq!(d.total_a, Some(40.0));
        assert_eq!(d.rows[0].percent_of_a, Some(50.0));
        let p = diff_runs(&a, &b, &m, opts(Normalize::PerThread)).unwrap();
        // Per thread, main is unchanged (40 / 2 = 60 / 3) and sorts after `old` (4 / 2).
        let got: Vec<(Change, f64, f64)> = p.rows.iter().map(|r| (r.change, r.value_a, r.value_b)).collect();
        assert_eq!(
            got,
            [
                (Change::Removed, 2.0, 0.0),
                (Change::Added, 0.0, 1.0 / 3.0),
                (Change::Matched, 20.0, 20.0)
            ]
        );
        assert_eq!(p.total_a, Some(20.0));

        let main = m.events[0];
        let t = thread_diff(&a, &b, &m, main, (MetricId(0), MetricId(0)), ValueKind::Exclusive);
        let got: Vec<(u32, Option<f64>, Option<f64>, f64)> = t
            .iter()
            .map(|r| (r.thread.node, r.value_a, r.value_b, r.delta))
            .collect();
        assert_eq!(
            got,
            [
                (2, None, Some(20.0), 20.0),
                (0, Some(10.0), Some(20.0), 10.0),
                (1, Some(30.0), Some(20.0), -10.0)
            ]
        );
    }
}
