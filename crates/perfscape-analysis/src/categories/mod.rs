//! Categories of time (what the time is spent on: MPI collectives, I/O, OpenMP barriers, ...)
//! and POP's efficiency metrics computed from them.
//!
//! A [`RuleSet`] (TOML, see [`DEFAULT_RULES`]) gives each event a category from its ROUTINE
//! (the leaf frame of its callpath, without a source location, see
//! [`perfscape_model::event::routine_name`]) and its groups; the first matching rule wins and the
//! time no rule covers is the category [`OTHER`], never dropped. Each thread's time is split
//! among the categories by the exclusive values of its FLAT events (every reader gives one per
//! routine, a call-tree format as the sum of the routine's nodes), so each unit of time is
//! counted once and the categories of a thread add up to the `exclusive_total` of
//! [`crate::stats::thread_totals`] (for TAU, its top-level inclusive value up to rounding).
//! Sample events (`[SAMPLE]`, `[CONTEXT]`, `[SUMMARY]`, `[UNWIND]`, `[INTERMEDIATE]`: any
//! [`perfscape_model::EventKind`] but `Timer`) measure time the timers running at each sample
//! already hold (TAU attributes every sample to its timer), so a run that has timers splits
//! its timers only; a run of samples alone splits its samples.
//!
//! POP's metrics ([`PopMetrics`]) follow the POP Centre of Excellence's hierarchy ("POP
//! Standard Metrics for Parallel Performance Analysis", <https://pop-coe.eu/node/69>; M.
//! Wagner et al., "A Structured Approach to Performance Analysis", Tools for High Performance
//! Computing 2017): the useful time of a thread is its time in the categories of useful
//! classes ([`CategoryClass::is_useful`]), load balance = mean(useful) / max(useful),
//! communication efficiency = max(useful) / runtime (runtime = the largest thread total) and
//! parallel efficiency = their product.

mod rules;
mod scaling;

pub use rules::{CategoryClass, CategoryDef, DEFAULT_RULES, OTHER, RuleSet, RulesError};
pub use scaling::{PopScalingRow, Scaling, pop_scaling};

use crate::error::ViewError;
use perfscape_model::event::routine_name;
use perfscape_model::{EventId, EventKind, MetricId, Profile, ThreadIndex};
use rayon::prelude::*;
use serde::Serialize;

/// The time of every thread in every category of one metric (see the module's documentation).
#[derive(Debug, Clone)]
pub struct Categorized {
    /// The metric the times are in (its unit).
    pub metric: MetricId,
    /// The categories shown: those of the rule set that at least one flat event of the run
    /// falls in, in rule-file order, then [`OTHER`] (always present, last).
    pub categories: Vec<CategoryDef>,
    /// The category of every event (index into `categories`), in event id order: a flat
    /// event's by its routine and groups, a callpath event's that of its routine's flat event
    /// (or of its own leaf when the profile has no flat event for it).
    pub event_category: Vec<u32>,
    /// Per thread (thread order) the time in each category: row-major, `categories.len()`
    /// values per thread, in the metric's unit.
    pub thread_times: Vec<f64>,
    /// Per thread its total (`inclusive` of [`crate::stats::thread_totals`]).
    pub thread_total: Vec<f64>,
}

/// Splits every thread's time in metric `m` among the categories of `rules`.
///
/// Each distinct flat event is classified once, then one pass over its column adds its
/// exclusive values to its category's cell of each thread (in parallel over ranges of
/// threads; each cell adds its values in event order, so the result does not depend on the
/// number of workers).
///
/// # Errors
/// [`ViewError::Invalid`] when the metric does not add up (a minimum, maximum or ratio has no
/// share of time to split).
pub fn categorize(profile: &Profile, m: MetricId, rules: &RuleSet) -> Result<Categorized, ViewError> {
    let metric = profile.metric(m);
    if !metric.combine.is_additive() {
        return Err(ViewError::invalid(format!(
            "metric `{}` does not add up ({}): categories split a metric that does, such as time",
            metric.name,
            metric.combine.as_str()
        )));
    }
    let events = profile.events();
    let classify = |e: &perfscape_model::Event| {
        let groups = e.groups.iter().map(|&g| profile.group_name(g));
        rules.classify(routine_name(e.leaf()), groups) as u32
    };
    let flat_or_own: Vec<u32> = events
        .par_iter()
        .map(|e| if e.is_callpath() { u32::MAX } else { classify(e) })
        .collect();
    // Keep the categories some flat event falls in, and OTHER.
    let all = rules.categories();
    let mut used = vec![false; all.len()];
    used[rules.other()] = true;
    for &c in &flat_or_own {
        if c != u32::MAX {
            used[c as usize] = true;
        }
    }
    let mut remap = vec![u32::MAX; all.len()];
    let mut categories = Vec::new();
    for (i, def) in all.iter().enumerate() {
        if used[i] {
            remap[i] = categories.len() as u32;
            categories.push(def.clone());
        }
    }
    let event_category: Vec<u32> = events
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let raw = flat_or_own[i];
            if raw != u32::MAX {
                return remap[raw as usize];
            }
            match e.routine().map(|r| flat_or_own[r.index()]) {
                Some(c) if c != u32::MAX => remap[c as usize],
                // A callpath whose routine has no flat event: its own leaf's category when that
                // category is shown, else OTHER.
                _ => {
                    let c = remap[classify(e) as usize];
                    if c == u32::MAX { remap[rules.other()] } else { c }
                }
            }
        })
        .collect();
    let k = categories.len();
    let n = profile.threads().len();
    // Sample events hold time the timers already hold: counted only in a run without timers.
    let has_timers = events
        .iter()
        .any(|e| !e.is_callpath() && e.kind == EventKind::Timer);
    let flat: Vec<EventId> = profile
        .event_ids()
        .filter(|&e| {
            let ev = profile.event(e);
            !ev.is_callpath() && (!has_timers || ev.kind == EventKind::Timer)
        })
        .collect();
    let chunk = n.div_ceil(4 * rayon::current_num_threads()).max(256);
    let starts: Vec<usize> = (0..n).step_by(chunk.max(1)).collect();
    let thread_times: Vec<f64> = starts
        .par_iter()
        .flat_map_iter(|&a| {
            let range = a..(a + chunk).min(n);
            let mut cells = vec![0.0; range.len() * k];
            for &e in &flat {
                let c = event_category[e.index()] as usize;
                let col = profile.interval(e);
                let threads = col.threads();
                let lo = threads.partition_point(|t| t.index() < range.start);
                let hi = threads.partition_point(|t| t.index() < range.end);
                for (t, &x) in threads[lo..hi].iter().zip(&col.exclusive(m)[lo..hi]) {
                    if !x.is_nan() {
                        cells[(t.index() - a) * k + c] += x;
                    }
                }
            }
            cells
        })
        .collect();
    let thread_total = crate::stats::thread_totals(profile, m)
        .iter()
        .map(|t| t.inclusive)
        .collect();
    Ok(Categorized {
        metric: m,
        categories,
        event_category,
        thread_times,
        thread_total,
    })
}

impl Categorized {
    /// The times of thread `t` in each category.
    pub fn thread(&self, t: ThreadIndex) -> &[f64] {
        let k = self.categories.len();
        &self.thread_times[t.index() * k..(t.index() + 1) * k]
    }

    /// Number of threads.
    pub fn threads(&self) -> usize {
        self.thread_total.len()
    }

    /// The sum over the threads `threads` of their time in each category.
    pub fn sum_of(&self, threads: impl Iterator<Item = ThreadIndex>) -> Vec<f64> {
        let mut s = vec![0.0; self.categories.len()];
        for t in threads {
            for (a, b) in s.iter_mut().zip(self.thread(t)) {
                *a += b;
            }
        }
        s
    }

    /// The run's time in each category (the sum over all threads).
    pub fn run(&self) -> Vec<f64> {
        self.sum_of((0..self.threads()).map(ThreadIndex::from))
    }

    /// The time of each process (node: threads of the same [`perfscape_model::ThreadId::node`])
    /// in each category, by node in increasing order: `(node, times)`.
    pub fn by_process(&self, profile: &Profile) -> Vec<(u32, Vec<f64>)> {
        let k = self.categories.len();
        let mut out: Vec<(u32, Vec<f64>)> = Vec::new();
        let mut order: Vec<usize> = (0..self.threads()).collect();
        order.sort_by_key(|&i| profile.threads()[i].node);
        for i in order {
            let node = profile.threads()[i].node;
            if out.last().is_none_or(|(n, _)| *n != node) {
                out.push((node, vec![0.0; k]));
            }
            if let Some((_, s)) = out.last_mut() {
                for (a, b) in s.iter_mut().zip(self.thread(ThreadIndex::from(i))) {
                    *a += b;
                }
            }
        }
        out
    }

    /// Each thread's useful time: its time in the categories of useful classes.
    pub fn useful(&self) -> Vec<f64> {
        let useful: Vec<bool> = self.categories.iter().map(|c| c.class.is_useful()).collect();
        (0..self.threads())
            .map(|i| {
                let row = self.thread(ThreadIndex::from(i));
                row.iter().zip(&useful).filter(|(_, u)| **u).map(|(x, _)| x).sum()
            })
            .collect()
    }

    /// POP's efficiency metrics of the run (see [`PopMetrics`]).
    pub fn pop(&self) -> PopMetrics {
        let useful = self.useful();
        let n = useful.len();
        let max_useful = useful.iter().copied().fold(0.0, f64::max);
        let mean_useful = if n == 0 {
            0.0
        } else {
            useful.iter().sum::<f64>() / n as f64
        };
        let runtime = self.thread_total.iter().copied().fold(0.0, f64::max);
        let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
        let load_balance = ratio(mean_useful, max_useful);
        let communication_efficiency = ratio(max_useful, runtime);
        let names = |useful: bool| {
            self.categories
                .iter()
                .filter(|c| c.class.is_useful() == useful)
                .map(|c| c.name.clone())
                .collect()
        };
        PopMetrics {
            useful_categories: names(true),
            not_useful_categories: names(false),
            mean_useful,
            max_useful,
            runtime,
            load_balance,
            communication_efficiency,
            parallel_efficiency: load_balance * communication_efficiency,
        }
    }
}

/// POP's efficiency metrics of one run (POP Centre of Excellence, "POP Standard Metrics for
/// Parallel Performance Analysis", <https://pop-coe.eu/node/69>), from the useful time of
/// each thread (its time in the categories listed in `useful_categories`). Times in the
/// metric's unit; efficiencies between 0 and 1 (0 when a divisor is 0).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PopMetrics {
    /// The categories counted as useful (classes computation, io, overhead).
    pub useful_categories: Vec<String>,
    /// The categories counted as not useful (classes communication, synchronization, idle,
    /// runtime).
    pub not_useful_categories: Vec<String>,
    /// Mean over the threads of their useful time.
    pub mean_useful: f64,
    /// Largest useful time of a thread.
    pub max_useful: f64,
    /// Runtime: the largest thread total (its top-level inclusive value, ParaProf's
    /// `getMaxInclusive`).
    pub runtime: f64,
    /// Load balance: `mean_useful / max_useful`.
    pub load_balance: f64,
    /// Communication efficiency: `max_useful / runtime`.
    pub communication_efficiency: f64,
    /// Parallel efficiency: `load_balance × communication_efficiency` (= mean_useful / runtime).
    pub parallel_efficiency: f64,
}
