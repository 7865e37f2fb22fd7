//! Repeated runs (`perfscape compare --group before RUN... --group after RUN...`): per event
//! the mean, standard deviation, minimum and maximum over the runs of each group and whether
//! the groups differ beyond the run-to-run noise (Welch's t-test).
//!
//! Welch's test is computed as SciPy's `scipy.stats.ttest_ind(after, before, equal_var=False)`
//! (`scipy/stats/_stats_py.py`, `_unequal_var_ttest_denom` and `_ttest_ind_from_stats`):
//! sample variances with n − 1, the Welch–Satterthwaite degrees of freedom, a two-sided
//! p-value from Student's t distribution; `tests/groups_scipy.rs` checks it against SciPy.

use super::canonical::events_across;
use super::diff::{Normalize, event_value};
use perfscape_model::{EventId, MetricId, Profile, ValueKind};
use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};
use thiserror::Error;

/// Statistics of one event's value over the runs of a group.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct GroupStats {
    /// Number of runs in the group.
    pub runs: usize,
    /// Runs in which the event was measured (a run without it counts as 0).
    pub runs_with_event: usize,
    /// Mean over the runs.
    pub mean: f64,
    /// Sample standard deviation over the runs (divisor n − 1; 0 for one run).
    pub stddev: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
}

impl GroupStats {
    /// Statistics of `values` (one per run); `present` runs had the event.
    pub fn of(values: &[f64], present: usize) -> Self {
        let n = values.len();
        let mean = values.iter().sum::<f64>() / n.max(1) as f64;
        let ss: f64 = values.iter().map(|v| (v - mean) * (v - mean)).sum();
        GroupStats {
            runs: n,
            runs_with_event: present,
            mean,
            stddev: if n > 1 { (ss / (n - 1) as f64).sqrt() } else { 0.0 },
            min: values.iter().copied().fold(f64::INFINITY, f64::min),
            max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        }
    }
}

/// The result of Welch's unequal-variances t-test.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct WelchTest {
    /// t statistic of `mean(x) − mean(y)`: positive when x's mean is larger.
    pub t: f64,
    /// Welch–Satterthwaite degrees of freedom (1 when both variances are 0, as SciPy).
    pub df: f64,
    /// Two-sided p-value: the probability of a difference at least this large if the two
    /// groups had the same mean.
    pub p_value: f64,
}

/// Welch's t-test of samples `x` and `y`, as SciPy's `ttest_ind(x, y, equal_var=False)`.
///
/// `None` when a sample has fewer than 2 values (no variance). With both variances 0, t is
/// ±∞ and p = 0 when the means differ, t and p are NaN when they are equal (as SciPy).
pub fn welch_t_test(x: &[f64], y: &[f64]) -> Option<WelchTest> {
    if x.len() < 2 || y.len() < 2 {
        return None;
    }
    let (sx, sy) = (GroupStats::of(x, x.len()), GroupStats::of(y, y.len()));
    let vn1 = sx.stddev * sx.stddev / x.len() as f64;
    let vn2 = sy.stddev * sy.stddev / y.len() as f64;
    let mut df = (vn1 + vn2).powi(2) / (vn1 * vn1 / (x.len() - 1) as f64 + vn2 * vn2 / (y.len() - 1) as f64);
    if df.is_nan() {
        df = 1.0;
    }
    let t = (sx.mean - sy.mean) / (vn1 + vn2).sqrt();
    let p_value = if t.is_nan() {
        f64::NAN
    } else if t.is_infinite() {
        0.0
    } else {
        match StudentsT::new(0.0, 1.0, df) {
            Ok(dist) => (2.0 * dist.cdf(-t.abs())).min(1.0),
            Err(_) => f64::NAN,
        }
    };
    Some(WelchTest { t, df, p_value })
}

/// One event of a [`GroupComparison`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GroupRow {
    /// The event's name (from the first run that has it).
    pub name: String,
    /// Whether it is a callpath event.
    pub callpath: bool,
    /// Per group, per run: the event's id in that run (`None` when the run lacks it).
    pub events: Vec<Vec<Option<EventId>>>,
    /// Per group: the statistics over its runs.
    pub stats: Vec<GroupStats>,
    /// Mean of the second group minus mean of the first.
    pub delta: f64,
    /// Welch's t-test of the second group against the first (`None` when a group has fewer
    /// than 2 runs).
    pub test: Option<WelchTest>,
}

/// Repeated runs in two groups compared event by event.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GroupComparison {
    /// The metric's name (the same in every run).
    pub metric: String,
    /// The value kind.
    pub kind: ValueKind,
    /// The normalization of each run's value.
    pub normalize: Normalize,
    /// One row per event of any run, largest |delta| first (ties in first-seen order).
    pub rows: Vec<GroupRow>,
}

/// Why groups cannot be compared.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum GroupError {
    /// A group has no run.
    #[error("group {0} has no run")]
    EmptyGroup(usize),
    /// A run lacks the metric.
    #[error("run {run} of group {group} has no metric `{metric}`")]
    MissingMetric {
        /// Group index (0-based).
        group: usize,
        /// Run index in the group (0-based).
        run: usize,
        /// The metric's name.
        metric: String,
    },
    /// The metric has another unit in some run.
    #[error(
        "metric `{metric}` is in {unit_a} in the first run but in {unit_b} in run {run} of group {group}"
    )]
    UnitMismatch {
        /// The metric's name.
        metric: String,
        /// Its unit in the first run.
        unit_a: String,
        /// Its unit in the other run.
        unit_b: String,
        /// Group index.
        group: usize,
        /// Run index in the group.
        run: usize,
    },
}

/// Compares groups of repeated runs (normally two: before and after) per event, for the metric
/// named `metric` and value kind `kind`, each run's value normalized by `normalize` (as
/// [`super::diff::diff_runs`]); callpath events only with `include_callpaths`. Events are
/// matched across all runs by canonical path ([`super::canonical`]); a run without an event
/// counts as 0 for it. The test compares the last group with the first.
pub fn compare_groups(
    groups: &[Vec<&Profile>],
    metric: &str,
    kind: ValueKind,
    normalize: Normalize,
    include_callpaths: bool,
) -> Result<GroupComparison, GroupError> {
    let runs: Vec<&Profile> = groups.iter().flatten().copied().collect();
    if let Some(g) = groups.iter().position(Vec::is_empty) {
        return Err(GroupError::EmptyGroup(g));
    }
    let metrics = run_metrics(groups, metric)?;
    let mut rows: Vec<GroupRow> = events_across(&runs, include_callpaths)
        .into_iter()
        .map(|ev| {
            let values: Vec<f64> = ev
                .events
                .iter()
                .zip(&runs)
                .zip(&metrics)
                .map(|((e, p), &m)| e.map_or(0.0, |e| event_value(p, e, m, kind, normalize).0))
                .collect();
            let mut start = 0;
            let mut events = Vec::new();
            let mut stats = Vec::new();
            let mut samples = Vec::new();
            for g in groups {
                let range = start..start + g.len();
                start += g.len();
                let present = ev.events[range.clone()].iter().filter(|e| e.is_some()).count();
                stats.push(GroupStats::of(&values[range.clone()], present));
                events.push(ev.events[range.clone()].to_vec());
                samples.push(&values[range]);
            }
            let last = samples.len() - 1;
            GroupRow {
                name: ev.name,
                callpath: ev.callpath,
                events,
                delta: stats[last].mean - stats[0].mean,
                test: welch_t_test(samples[last], samples[0]),
                stats,
            }
        })
        .collect();
    rows.sort_by(|x, y| crate::stats::larger_first(x.delta.abs(), y.delta.abs()));
    Ok(GroupComparison {
        metric: metric.to_string(),
        kind,
        normalize,
        rows,
    })
}

/// The metric named `metric` in every run, checked for one unit.
fn run_metrics(groups: &[Vec<&Profile>], metric: &str) -> Result<Vec<MetricId>, GroupError> {
    let mut out = Vec::new();
    let mut unit = None;
    for (g, runs) in groups.iter().enumerate() {
        for (r, p) in runs.iter().enumerate() {
            let m = p
                .metric_by_name(metric)
                .ok_or_else(|| GroupError::MissingMetric {
                    group: g,
                    run: r,
                    metric: metric.to_string(),
                })?;
            let u = &p.metric(m).unit;
            match unit {
                None => unit = Some(u.clone()),
                Some(ref first) if first != u => {
                    return Err(GroupError::UnitMismatch {
                        metric: metric.to_string(),
                        unit_a: first.symbol().to_string(),
                        unit_b: u.symbol().to_string(),
                        group: g,
                        run: r,
                    });
                }
                Some(_) => {}
            }
            out.push(m);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn welch_edge_cases_follow_scipy() {
        assert_eq!(welch_t_test(&[1.0], &[1.0, 2.0]), None);
        let same = welch_t_test(&[2.0, 2.0], &[2.0, 2.0]).unwrap();
        assert!(same.t.is_nan() && same.p_value.is_nan() && same.df == 1.0);
        let apart = welch_t_test(&[3.0, 3.0], &[2.0, 2.0]).unwrap();
        assert_eq!((apart.t, apart.p_value), (f64::INFINITY, 0.0));
        // scipy.stats.ttest_ind([1, 2, 3, 4], [2, 4, 6, 8, 10], equal_var=False)
        // -> t = -2.2514363231593695, p = 0.06913359319239237, df = 5.520787746170677
        let w = welch_t_test(&[1.0, 2.0, 3.0, 4.0], &[2.0, 4.0, 6.0, 8.0, 10.0]).unwrap();
        assert!((w.t - -2.2514363231593695).abs() < 1e-12, "{w:?}");
        assert!((w.df - 5.520787746170677).abs() < 1e-12, "{w:?}");
        assert!((w.p_value - 0.06913359319239237).abs() < 1e-9, "{w:?}");
    }
}
