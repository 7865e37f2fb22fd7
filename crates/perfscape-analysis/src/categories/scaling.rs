//! POP's efficiencies across the runs of a scaling study: per run its parallel efficiency
//! (load balance × communication efficiency, [`super::PopMetrics`]) and, against the run with the
//! fewest processes, its computational scalability and global efficiency — the table POP reports
//! show (POP Centre of Excellence, "POP Standard Metrics for Parallel Performance Analysis",
//! <https://pop-coe.eu/node/69>).
//!
//! Computational scalability compares the total useful time of all threads: for a strong-scaling
//! study (the same problem on more processes) `Σ useful(ref) / Σ useful(p)`, 1 when adding
//! processes adds no work; for a weak-scaling study (the problem grows with the processes) the
//! reference's total is scaled by `p / p_ref` first. Global efficiency = parallel efficiency ×
//! computational scalability.

use super::Categorized;
use serde::Serialize;

/// How the problem size changes with the process count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Scaling {
    /// The same problem on every count.
    Strong,
    /// The problem grows in proportion to the count.
    Weak,
}

/// POP's figures of one run of the study.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PopScalingRow {
    /// The run's process count.
    pub count: f64,
    /// Load balance: mean(useful) / max(useful).
    pub load_balance: f64,
    /// Communication efficiency: max(useful) / runtime.
    pub communication_efficiency: f64,
    /// Parallel efficiency: their product.
    pub parallel_efficiency: f64,
    /// The sum over the threads of their useful time (the metric's unit).
    pub useful_total: f64,
    /// The reference run's useful total (scaled for weak scaling) over this run's; 1 for the
    /// reference; `None` when this run has no useful time.
    pub computational_scalability: Option<f64>,
    /// parallel efficiency × computational scalability.
    pub global_efficiency: Option<f64>,
}

/// The POP table of `runs` (process count, categories of one run, all in the same metric), in
/// the order given; the reference is the run with the smallest count (the first of those).
pub fn pop_scaling(runs: &[(f64, &Categorized)], scaling: Scaling) -> Vec<PopScalingRow> {
    let totals: Vec<f64> = runs.iter().map(|(_, c)| c.useful().iter().sum()).collect();
    let reference = runs
        .iter()
        .enumerate()
        .min_by(|a, b| a.1.0.total_cmp(&b.1.0))
        .map(|(i, _)| i);
    runs.iter()
        .zip(&totals)
        .map(|((count, c), &useful_total)| {
            let pop = c.pop();
            let computational_scalability = reference.and_then(|r| {
                let (ref_count, ref_total) = (runs[r].0, totals[r]);
                let expected = match scaling {
                    Scaling::Strong => ref_total,
                    Scaling::Weak if ref_count > 0.0 => ref_total * count / ref_count,
                    Scaling::Weak => return None,
                };
                (useful_total > 0.0).then(|| expected / useful_total)
            });
            PopScalingRow {
                count: *count,
                load_balance: pop.load_balance,
                communication_efficiency: pop.communication_efficiency,
                parallel_efficiency: pop.parallel_efficiency,
                useful_total,
                computational_scalability,
                global_efficiency: computational_scalability.map(|cs| cs * pop.parallel_efficiency),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::categories::{RuleSet, categorize};
    use perfscape_model::{Metric, MetricId, Profile, ProfileBuilder, ThreadData, ThreadId};

    /// `ranks` ranks, each `work` useful and `wait` in MPI_Wait, `main` holding both.
    fn run(ranks: u32, work: f64, wait: f64) -> Profile {
        let mut b = ProfileBuilder::new(vec![Metric::tau("TIME")]);
        for rank in 0..ranks {
            let mut d = ThreadData::new(1);
            d.push_timer("main", "TAU_DEFAULT", 1.0, 2.0, &[0.0], &[work + wait])
                .unwrap();
            d.push_timer("work", "TAU_USER", 1.0, 0.0, &[work], &[work])
                .unwrap();
            d.push_timer("MPI_Wait()", "MPI", 1.0, 0.0, &[wait], &[wait])
                .unwrap();
            b.add_thread(ThreadId::new(rank, 0, 0), d).unwrap();
        }
        b.finish().0
    }

    #[test]
    fn strong_and_weak_scaling_by_hand() {
        let rules = RuleSet::defaults();
        // 2 ranks x 40 useful; 4 ranks x 25 useful (100 in all: 25% more work than 80).
        let (a, b) = (run(2, 40.0, 10.0), run(4, 25.0, 25.0));
        let ca = categorize(&a, MetricId(0), &rules).unwrap();
        let cb = categorize(&b, MetricId(0), &rules).unwrap();
        let strong = pop_scaling(&[(2.0, &ca), (4.0, &cb)], Scaling::Strong);
        assert_eq!(strong[0].computational_scalability, Some(1.0));
        assert_eq!(strong[0].parallel_efficiency, 40.0 / 50.0);
        assert_eq!(strong[1].useful_total, 100.0);
        assert_eq!(strong[1].computational_scalability, Some(0.8));
        assert_eq!(strong[1].parallel_efficiency, 0.5);
        assert_eq!(strong[1].global_efficiency, Some(0.4));
        // Weak: 4 ranks should do twice the work of 2: 160 expected, 100 done.
        let weak = pop_scaling(&[(4.0, &cb), (2.0, &ca)], Scaling::Weak);
        assert_eq!(weak[1].computational_scalability, Some(1.0));
        assert_eq!(weak[0].computational_scalability, Some(1.6));
    }
}
