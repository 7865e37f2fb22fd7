//! Scaling studies (`perfscape scaling RUN...`): runs of one program at several process counts,
//! per event its value against the count, the speedup and parallel efficiency against the
//! smallest count, its share of each run, and a fitted scaling model in Extra-P's
//! performance-model normal form ([`super::pmnf`]).
//!
//! Definitions (strong scaling, as in ParaProf's and Thicket's scaling charts): an event's
//! value at count p is its per-thread value (total over the run's threads divided by their
//! number; [`super::diff::Normalize::PerThread`]), the mean over runs at the same count;
//! speedup(p) = value(p₀) / value(p) and efficiency(p) = speedup(p) · p₀ / p for the smallest
//! count p₀; share(p) = the event's total as a percent of the run total ([`crate::stats::run_total`]).

use super::canonical::events_across;
use super::diff::{Normalize, event_summary, normalized};
use super::pmnf::{Measurement, ScalingModel, fit};
use crate::stats::run_total;
use perfscape_model::{EventId, Profile, ValueKind};
use serde::Serialize;
use thiserror::Error;

/// One event of a [`Scaling`] study.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ScalingRow {
    /// The event's name (from the first run that has it).
    pub name: String,
    /// Whether it is a callpath event.
    pub callpath: bool,
    /// Per run, in the order given: the event's id there (`None` when the run lacks it).
    pub events: Vec<Option<EventId>>,
    /// Per count (ascending, as [`Scaling::counts`]): the mean over that count's runs of the
    /// per-thread value, in the metric's unit (0 for a run without the event).
    pub values: Vec<f64>,
    /// Per count: value at the smallest count / value at this count (`None` when 0).
    pub speedup: Vec<Option<f64>>,
    /// Per count: speedup × smallest count / count.
    pub efficiency: Vec<Option<f64>>,
    /// Per count: the event's total as a percent of the run total, mean over the count's runs
    /// (`None` for a metric that does not add up).
    pub share_percent: Vec<Option<f64>>,
    /// True when the share grows with scale: at the largest count it is at least 1.25 times
    /// and at least 1 percentage point above the share at the smallest count.
    pub share_grows: bool,
    /// The scaling model of the values against the count (Extra-P's default single-parameter
    /// modeler on every run's value, repetitions averaged as Extra-P does); `None` when none
    /// could be fitted (`model_error` says why: fewer than 5 counts, ...).
    pub model: Option<ScalingModel>,
    /// Why no model was fitted.
    pub model_error: Option<String>,
}

/// A scaling study over several runs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Scaling {
    /// The metric's name.
    pub metric: String,
    /// The value kind.
    pub kind: ValueKind,
    /// The distinct counts, ascending.
    pub counts: Vec<f64>,
    /// Per count, the number of runs at it (repetitions are averaged; the model sees each).
    pub runs_per_count: Vec<usize>,
    /// One row per event of any run, largest value at the largest count first.
    pub rows: Vec<ScalingRow>,
}

/// Why a scaling study cannot be made.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum ScalingError {
    /// Fewer than two distinct counts.
    #[error("a scaling study needs runs at two or more process counts; the runs have {0}")]
    TooFewCounts(usize),
    /// A run lacks the metric.
    #[error("run {run} has no metric `{metric}`")]
    MissingMetric {
        /// Index of the run in the order given.
        run: usize,
        /// The metric's name.
        metric: String,
    },
    /// A count is not a positive finite number.
    #[error("run {run}: the count {count} is not a positive number")]
    BadCount {
        /// Index of the run.
        run: usize,
        /// The count given.
        count: f64,
    },
}

/// The number of processes of a run as a scaling study counts them: its distinct ranks
/// (nodes) when it has several, else its threads.
pub fn process_count(p: &Profile) -> usize {
    let mut nodes: Vec<u32> = p.threads().iter().map(|t| t.node).collect();
    nodes.dedup();
    if nodes.len() > 1 {
        nodes.len()
    } else {
        p.threads().len()
    }
}

/// A scaling study of `runs`, each with its count (processes, threads or any scaling
/// parameter), for the metric named `metric` and value kind `kind`; callpath events only with
/// `include_callpaths`. Events are matched across runs by canonical path
/// ([`super::canonical`]); a run without an event counts 0 for it.
pub fn scaling(
    runs: &[(f64, &Profile)],
    metric: &str,
    kind: ValueKind,
    include_callpaths: bool,
) -> Result<Scaling, ScalingError> {
    for (i, &(count, _)) in runs.iter().enumerate() {
        if !(count.is_finite() && count > 0.0) {
            return Err(ScalingError::BadCount { run: i, count });
        }
    }
    let mut counts: Vec<f64> = runs.iter().map(|r| r.0).collect();
    counts.sort_by(f64::total_cmp);
    counts.dedup();
    if counts.len() < 2 {
        return Err(ScalingError::TooFewCounts(counts.len()));
    }
    let count_of: Vec<usize> = runs
        .iter()
        .map(|r| counts.iter().position(|&c| c == r.0).unwrap_or(0))
        .collect();
    let mut runs_per_count = vec![0; counts.len()];
    for &c in &count_of {
        runs_per_count[c] += 1;
    }
    let profiles: Vec<&Profile> = runs.iter().map(|r| r.1).collect();
    let mut metrics = Vec::new();
    for (i, p) in profiles.iter().enumerate() {
        metrics.push(
            p.metric_by_name(metric)
                .ok_or_else(|| ScalingError::MissingMetric {
                    run: i,
                    metric: metric.to_string(),
                })?,
        );
    }
    let totals: Vec<Option<f64>> = profiles
        .iter()
        .zip(&metrics)
        .map(|(p, &m)| run_total(p, m))
        .collect();
    let n = counts.len();
    let mut rows: Vec<ScalingRow> = events_across(&profiles, include_callpaths)
        .into_iter()
        .map(|ev| {
            let mut measurements: Vec<Measurement> =
                counts.iter().map(|&x| Measurement::new(x, Vec::new())).collect();
            let mut share_sum = vec![0.0; n];
            let mut additive = true;
            for (r, e) in ev.events.iter().enumerate() {
                let s = e.map(|e| event_summary(profiles[r], e, metrics[r], kind));
                measurements[count_of[r]]
                    .values
                    .push(s.as_ref().map_or(0.0, |s| normalized(s, Normalize::PerThread)));
                match totals[r] {
                    Some(t) if t != 0.0 && !kind.is_metric_independent() => {
                        share_sum[count_of[r]] += 100.0 * s.map_or(0.0, |s| s.total) / t
                    }
                    _ => additive = false,
                }
            }
            // Repetitions are averaged as Extra-P does (the model sees the same means).
            let values: Vec<f64> = measurements.iter().map(Measurement::mean).collect();
            let speedup: Vec<Option<f64>> = values
                .iter()
                .map(|&v| (v != 0.0).then(|| values[0] / v))
                .collect();
            let efficiency = speedup
                .iter()
                .zip(&counts)
                .map(|(s, &c)| s.map(|s| s * counts[0] / c))
                .collect();
            let share_percent: Vec<Option<f64>> = share_sum
                .iter()
                .zip(&runs_per_count)
                .map(|(&s, &k)| additive.then(|| s / k as f64))
                .collect();
            let share_grows = match (share_percent[0], share_percent[n - 1]) {
                (Some(first), Some(last)) => last >= 1.25 * first && last - first >= 1.0,
                _ => false,
            };
            let (model, model_error) = match fit(&measurements) {
                Ok(m) => (Some(m), None),
                Err(e) => (None, Some(e.to_string())),
            };
            ScalingRow {
                name: ev.name,
                callpath: ev.callpath,
                events: ev.events,
                model,
                model_error,
                values,
                speedup,
                efficiency,
                share_percent,
                share_grows,
            }
        })
        .collect();
    rows.sort_by(|x, y| crate::stats::larger_first(x.values[n - 1], y.values[n - 1]));
    Ok(Scaling {
        metric: metric.to_string(),
        kind,
        counts,
        runs_per_count,
        rows,
    })
}
