//! Matching two runs: which event, metric and thread of run A is which of run B, and what is
//! in one run only. Nothing is dropped: every event, metric and thread of either run is either
//! in a pair or in a run's "only" list.

use super::canonical::{CanonicalKey, CanonicalKeys, canonical_keys};
use perfscape_model::{EventId, MetricId, Profile, ThreadId, ThreadIndex};
use serde::Serialize;
use std::collections::HashMap;
use thiserror::Error;

/// How the two events of a pair were matched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum MatchNote {
    /// The same name in both runs, frame by frame.
    Exact,
    /// One run marks the timer `[THROTTLED]` (TAU stopped measuring it early), the other not.
    Throttled,
    /// The same routines, written differently: another source location
    /// (`[{file} {line,col}]`) or PDT signature marker on a frame of the path.
    SourceLocation,
}

impl MatchNote {
    /// Short text for tables: empty for [`MatchNote::Exact`].
    pub fn as_str(self) -> &'static str {
        match self {
            MatchNote::Exact => "",
            MatchNote::Throttled => "throttled in one run",
            MatchNote::SourceLocation => "source location differs",
        }
    }
}

/// One event of run A and the same event of run B.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct EventPair {
    /// The event in run A.
    pub a: EventId,
    /// The event in run B.
    pub b: EventId,
    /// How they were matched (the most notable note of the pair and its callers).
    pub note: MatchNote,
}

/// Two runs matched event by event, metric by metric and thread by thread.
#[derive(Clone, Debug, PartialEq)]
pub struct RunMatch {
    /// Events present in both runs, in run A's event order.
    pub events: Vec<EventPair>,
    /// Events of run A only (removed in B), in event order.
    pub events_only_a: Vec<EventId>,
    /// Events of run B only (added in B), in event order.
    pub events_only_b: Vec<EventId>,
    /// Metrics present in both runs (same name, same unit): (A's, B's), in A's order.
    pub metrics: Vec<(MetricId, MetricId)>,
    /// Metrics of run A only.
    pub metrics_only_a: Vec<MetricId>,
    /// Metrics of run B only.
    pub metrics_only_b: Vec<MetricId>,
    /// Threads present in both runs, by (node, context, thread): (A's index, B's index), in
    /// A's thread order.
    pub threads: Vec<(ThreadIndex, ThreadIndex)>,
    /// Threads of run A only.
    pub threads_only_a: Vec<ThreadIndex>,
    /// Threads of run B only.
    pub threads_only_b: Vec<ThreadIndex>,
}

impl RunMatch {
    /// True when both runs have exactly the same threads (by node, context, thread): per-thread
    /// comparisons ([`super::diff::thread_diff`]) are meaningful.
    pub fn same_threads(&self) -> bool {
        self.threads_only_a.is_empty() && self.threads_only_b.is_empty()
    }

    /// B's metric paired with A's metric `m`, if B has it.
    pub fn metric_in_b(&self, m: MetricId) -> Option<MetricId> {
        self.metrics.iter().find(|(a, _)| *a == m).map(|&(_, b)| b)
    }
}

/// Why two runs cannot be compared.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum MatchError {
    /// A metric of the same name has different units in the two runs.
    #[error(
        "metric `{metric}` is in {unit_a} in run A but in {unit_b} in run B: values in different units are not compared"
    )]
    UnitMismatch {
        /// The metric's name.
        metric: String,
        /// Its unit in run A.
        unit_a: String,
        /// Its unit in run B.
        unit_b: String,
    },
    /// The runs share no event: a comparison would be an empty table.
    #[error(
        "the runs have no event in common (run A has {events_a} events, run B {events_b}): are they runs of the same program?"
    )]
    NoCommonEvent {
        /// Events of run A.
        events_a: usize,
        /// Events of run B.
        events_b: usize,
    },
}

/// Matches run `b` against run `a`.
///
/// - Events by canonical path (see [`super::canonical`]): frames reduced to their routine
///   names, so the same function with another source-location suffix or a `[THROTTLED]`
///   marker matches, and [`EventPair::note`] says so.
/// - Metrics by name; the same name in two units is an error ([`MatchError::UnitMismatch`]).
/// - Threads by (node, context, thread).
///
/// Errors: [`MatchError::UnitMismatch`]; [`MatchError::NoCommonEvent`] when both runs have
/// events and none matches.
pub fn match_runs(a: &Profile, b: &Profile) -> Result<RunMatch, MatchError> {
    let keys = canonical_keys(&[a, b]);
    let (events, events_only_a, events_only_b) = match_events(a, b, &keys);
    if events.is_empty() && !a.events().is_empty() && !b.events().is_empty() {
        return Err(MatchError::NoCommonEvent {
            events_a: a.events().len(),
            events_b: b.events().len(),
        });
    }
    let (metrics, metrics_only_a, metrics_only_b) = match_metrics(a, b)?;
    let (threads, threads_only_a, threads_only_b) = match_threads(a, b);
    Ok(RunMatch {
        events,
        events_only_a,
        events_only_b,
        metrics,
        metrics_only_a,
        metrics_only_b,
        threads,
        threads_only_a,
        threads_only_b,
    })
}

type Split<T, P> = (Vec<P>, Vec<T>, Vec<T>);

fn match_events(a: &Profile, b: &Profile, keys: &CanonicalKeys) -> Split<EventId, EventPair> {
    let in_b: HashMap<CanonicalKey, EventId> =
        b.event_ids().map(|e| (keys.per_run[1][e.index()], e)).collect();
    let mut pair_of_a: Vec<Option<usize>> = vec![None; a.events().len()];
    let mut matched_b = vec![false; b.events().len()];
    let mut pairs = Vec::new();
    let mut only_a = Vec::new();
    // Parents before children, so that a pair inherits its callers' note.
    for e in by_depth(a) {
        match in_b.get(&keys.per_run[0][e.index()]) {
            Some(&f) => {
                let own = note(&a.event(e).frame, &b.event(f).frame);
                let inherited = a
                    .event(e)
                    .parent()
                    .and_then(|p| pair_of_a[p.index()])
                    .map(|i| pairs_note(&pairs, i));
                matched_b[f.index()] = true;
                pair_of_a[e.index()] = Some(pairs.len());
                pairs.push(EventPair {
                    a: e,
                    b: f,
                    note: own.max(inherited.unwrap_or(MatchNote::Exact)),
                });
            }
            None => only_a.push(e),
        }
    }
    pairs.sort_by_key(|p| p.a);
    only_a.sort();
    let only_b = b.event_ids().filter(|f| !matched_b[f.index()]).collect();
    (pairs, only_a, only_b)
}

fn pairs_note(pairs: &[EventPair], i: usize) -> MatchNote {
    pairs.get(i).map_or(MatchNote::Exact, |p| p.note)
}

/// The events of `p` ordered by depth (then id): every parent before its children.
fn by_depth(p: &Profile) -> Vec<EventId> {
    let mut ids: Vec<EventId> = p.event_ids().collect();
    ids.sort_by_key(|&e| (p.event(e).depth, e));
    ids
}

/// The note of two frames with the same canonical path.
fn note(fa: &str, fb: &str) -> MatchNote {
    let unthrottled = |s: &str| {
        let t = s.trim_end();
        t.strip_suffix("[THROTTLED]").map_or(t, str::trim_end).to_owned()
    };
    if fa == fb {
        MatchNote::Exact
    } else if unthrottled(fa) == unthrottled(fb) {
        MatchNote::Throttled
    } else {
        MatchNote::SourceLocation
    }
}

fn match_metrics(a: &Profile, b: &Profile) -> Result<Split<MetricId, (MetricId, MetricId)>, MatchError> {
    let mut pairs = Vec::new();
    let mut only_a = Vec::new();
    let mut matched_b = vec![false; b.metrics().len()];
    for m in a.metric_ids() {
        let ma = a.metric(m);
        match b.metric_by_name(&ma.name) {
            Some(n) if b.metric(n).unit != ma.unit => {
                return Err(MatchError::UnitMismatch {
                    metric: ma.name.clone(),
                    unit_a: ma.unit.symbol().to_string(),
                    unit_b: b.metric(n).unit.symbol().to_string(),
                });
            }
            Some(n) => {
                matched_b[n.index()] = true;
                pairs.push((m, n));
            }
            None => only_a.push(m),
        }
    }
    let only_b = b.metric_ids().filter(|n| !matched_b[n.index()]).collect();
    Ok((pairs, only_a, only_b))
}

fn match_threads(a: &Profile, b: &Profile) -> Split<ThreadIndex, (ThreadIndex, ThreadIndex)> {
    let in_b: HashMap<ThreadId, usize> = b.threads().iter().enumerate().map(|(i, &t)| (t, i)).collect();
    let mut matched_b = vec![false; b.threads().len()];
    let mut pairs = Vec::new();
    let mut only_a = Vec::new();
    for (i, t) in a.threads().iter().enumerate() {
        match in_b.get(t) {
            Some(&j) => {
                matched_b[j] = true;
                pairs.push((ThreadIndex(i as u32), ThreadIndex(j as u32)));
            }
            None => only_a.push(ThreadIndex(i as u32)),
        }
    }
    let only_b = (0..b.threads().len())
        .filter(|&j| !matched_b[j])
        .map(|j| ThreadIndex(j as u32))
        .collect();
    (pairs, only_a, only_b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use perfscape_model::{Metric, ProfileBuilder, ThreadData, Unit};

    fn run(threads: &[u32], names: &[&str], metrics: Vec<Metric>) -> Profile {
        let n = metrics.len();
        let mut b = ProfileBuilder::new(metrics);
        for &t in threads {
            let mut d = ThreadData::new(n);
            for name in names {
                d.push_timer(name, "TAU_DEFAULT", 1.0, 0.0, &vec![1.0; n], &vec![1.0; n])
                    .unwrap();
            }
            b.add_thread(ThreadId::new(t, 0, 0), d).unwrap();
        }
        b.finish().0
    }

    #[test]
    fn nothing_is_dropped_and_notes_say_how() {
        let a = run(
            &[0, 1],
            &["main", "main => solve", "old", "io [THROTTLED]"],
            vec![Metric::tau("TIME"), Metric::tau("PAPI_FP_INS")],
        );
        let b = run(
            &[0, 1, 2],
            &["main [{m.c} {3,1}]", "main [{m.c} {3,1}] => solve", "new", "io"],
            vec![Metric::tau("TIME"), Metric::tau("PAPI_L2_DCM")],
        );
        let m = match_runs(&a, &b).unwrap();
        let name = |p: &Profile, e: EventId| p.event_name(e);
        let pairs: Vec<(String, String, MatchNote)> = m
            .events
            .iter()
            .map(|p| (name(&a, p.a), name(&b, p.b), p.note))
            .collect();
        assert_eq!(
            pairs,
            [
                (
                    "main".into(),
                    "main [{m.c} {3,1}]".into(),
                    MatchNote::SourceLocation
                ),
                (
                    "main => solve".into(),
                    "main [{m.c} {3,1}] => solve".into(),
                    MatchNote::SourceLocation
                ),
                ("io [THROTTLED]".into(), "io".into(), MatchNote::Throttled),
            ]
        );
        assert_eq!(
            m.events_only_a.iter().map(|&e| name(&a, e)).collect::<Vec<_>>(),
            ["old"]
        );
        assert_eq!(
            m.events_only_b.iter().map(|&e| name(&b, e)).collect::<Vec<_>>(),
            ["new"]
        );
        assert_eq!(m.metrics, [(MetricId(0), MetricId(0))]);
        assert_eq!(
            (m.metrics_only_a.clone(), m.metrics_only_b.clone()),
            (vec![MetricId(1)], vec![MetricId(1)])
        );
        assert_eq!(m.threads.len(), 2);
        assert_eq!(m.threads_only_b, [ThreadIndex(2)]);
        assert!(!m.same_threads());
    }

    #[test]
    fn units_and_disjoint_runs_are_refused() {
        let a = run(&[0], &["main"], vec![Metric::new("TIME", Unit::Seconds)]);
        let b = run(&[0], &["main"], vec![Metric::tau("TIME")]);
        let e = match_runs(&a, &b).unwrap_err();
        assert_eq!(
            e.to_string(),
            "metric `TIME` is in s in run A but in µs in run B: values in different units are not compared"
        );
        let c = run(&[0], &["other"], vec![Metric::new("TIME", Unit::Seconds)]);
        assert!(matches!(
            match_runs(&a, &c),
            Err(MatchError::NoCommonEvent { .. })
        ));
    }
}
