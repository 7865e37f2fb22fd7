//! Findings: what is wrong with a run, ranked by the time it costs.
//!
//! [`findings`] looks at one metric of a profile and reports, each with its cost (in the
//! metric's unit and as a percent of a typical thread's time), its evidence and the view that
//! shows it:
//!
//! - **Stragglers** ([`FindingKind::Straggler`], `stragglers.rs`): a thread whose value in an
//!   event (exclusive or inclusive) is at least [`FindingOptions::straggler_ratio`] times the
//!   median over the threads that have the event, when only a few threads
//!   ([`FindingOptions::straggler_max_share`]) are that far off: when many are, they are a
//!   class of threads that behave differently (the root of a gather, the boundary ranks of a
//!   stencil), not stragglers. One finding per thread (its costliest event; the others are
//!   evidence). Cost: value − median.
//! - **Load imbalance** ([`FindingKind::Imbalance`], `balance.rs`): an event of useful work (a
//!   flat event whose category's class is useful, [`crate::categories`]) whose largest exclusive
//!   value exceeds the mean over all threads by at least [`FindingOptions::imbalance_min`].
//!   Cost: max − mean (the time the others wait for the slowest; ParaProf's and the POP
//!   Centre's definition). The evidence says how the values run along the ranks (the
//!   correlation of value with rank: a ramp, or noise). Waiting in communication is not
//!   reported as imbalance of its own: it is the symptom of imbalance in the work before it.
//! - **Communication-bound threads** ([`FindingKind::CommunicationBound`]): a thread whose
//!   share of time outside useful work is at least [`FindingOptions::idle_share_gap`] above
//!   the median thread's share.
//! - **Low parallel efficiency** ([`FindingKind::Efficiency`]): the POP metrics of the run
//!   ([`crate::categories::PopMetrics`]: load balance = mean(useful) / max(useful),
//!   communication efficiency = max(useful) / runtime, parallel efficiency = their product)
//!   below [`FindingOptions::efficiency_min`]
//!   (POP reports call an efficiency under 0.8 worth improving). Cost: `runtime × (1 −
//!   parallel efficiency)`, the time each thread loses on average; its percent is `100 × (1 −
//!   parallel efficiency)`, the share of the run's thread time that is not useful work.
//! - **Hot spots** ([`FindingKind::HotSpot`]): flat events whose exclusive time is at least
//!   [`FindingOptions::hot_spot_share`] of all thread time (where to look first, not a fault).
//!
//! - **Wait states** of a trace ([`add_wait_states`], `waits.rs`): Scalasca's late sender,
//!   late receiver and wait at N x N ([`crate::wait_states`]), one finding per pattern.
//!
//! Only timers are looked at ([`perfscape_model::EventKind::Timer`]: instrumented routines and
//! regions, and the frames of sampled call trees): sampled source lines (`[SAMPLE]`, ...) are
//! estimates, with sampling noise, of time the timers already hold.
//!
//! Costs are compared with the **median thread total** (the median over threads of each
//! thread's total, [`crate::thread_totals`]): a straggler's own total would otherwise shrink
//! every other percentage. Thresholds are options with documented defaults; the CLI and the
//! server expose them.

mod balance;
mod stragglers;
mod waits;

use crate::categories::{Categorized, PopMetrics};
use crate::stats::thread_totals;
use perfscape_model::{EventId, MetricId, Profile, ThreadIndex, Trace};
use serde::Serialize;

/// What a finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    /// One thread far above the others in an event.
    Straggler,
    /// An event of useful work unevenly spread over the threads.
    Imbalance,
    /// A thread spending far more of its time outside useful work than the others.
    CommunicationBound,
    /// The run's POP efficiencies below the threshold.
    Efficiency,
    /// An event taking a large share of all thread time.
    HotSpot,
    /// Receivers of a trace waiting for late senders (Scalasca "Late Sender").
    LateSender,
    /// Senders of a trace blocked by late receivers (Scalasca "Late Receiver").
    LateReceiver,
    /// Locations of a trace waiting in n-to-n collectives (Scalasca "Wait at N x N").
    #[serde(rename = "wait_nxn")]
    WaitAtNxN,
}

impl FindingKind {
    /// The kind's name in the CLI and the API (`straggler`, `imbalance`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            FindingKind::Straggler => "straggler",
            FindingKind::Imbalance => "imbalance",
            FindingKind::CommunicationBound => "communication_bound",
            FindingKind::Efficiency => "efficiency",
            FindingKind::HotSpot => "hot_spot",
            FindingKind::LateSender => "late_sender",
            FindingKind::LateReceiver => "late_receiver",
            FindingKind::WaitAtNxN => "wait_nxn",
        }
    }
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// What it is about.
    pub kind: FindingKind,
    /// One line saying what was found, with names and numbers.
    pub title: String,
    /// Time lost, in the metric's unit (see each kind for how it is counted); 0 for kinds
    /// without a cost of their own ([`FindingKind::HotSpot`] gives the event's total).
    pub cost: f64,
    /// `cost` as a percent of the median thread total (for [`FindingKind::Efficiency`], of the
    /// runtime).
    pub cost_percent: f64,
    /// The numbers behind it, one statement each.
    pub evidence: Vec<String>,
    /// The event the view should select, if any.
    pub event: Option<EventId>,
    /// The thread the view should select, if any.
    pub thread: Option<ThreadIndex>,
}

/// Thresholds of [`findings`]; [`Default`] gives the documented defaults.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FindingOptions {
    /// A straggler's value is at least this many times the event's median (default 2).
    pub straggler_ratio: f64,
    /// At most this share of the threads may be that far off in one event for them to be
    /// stragglers (default 0.001, i.e. 1 in 1,000; always at least one thread).
    pub straggler_max_share: f64,
    /// Smallest cost of a straggler, as a share of the median thread total (default 0.0001).
    pub straggler_min_cost: f64,
    /// Smallest imbalance `max / mean − 1` reported (default 0.10).
    pub imbalance_min: f64,
    /// Smallest imbalance cost `max − mean`, as a share of the median thread total (default
    /// 0.0001).
    pub imbalance_min_cost: f64,
    /// A communication-bound thread's non-useful share exceeds the median thread's by at least
    /// this (default 0.25, i.e. 25 percentage points).
    pub idle_share_gap: f64,
    /// POP efficiencies under this are reported (default 0.8).
    pub efficiency_min: f64,
    /// Hot spots take at least this share of all thread time (default 0.10).
    pub hot_spot_share: f64,
    /// At most this many findings of each kind (default 20), costliest first.
    pub max_per_kind: usize,
}

impl Default for FindingOptions {
    fn default() -> Self {
        FindingOptions {
            straggler_ratio: 2.0,
            straggler_max_share: 0.001,
            straggler_min_cost: 0.0001,
            imbalance_min: 0.10,
            imbalance_min_cost: 0.0001,
            idle_share_gap: 0.25,
            efficiency_min: 0.8,
            hot_spot_share: 0.10,
            max_per_kind: 20,
        }
    }
}

/// The findings of a run in one metric.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Findings {
    /// The median over threads of each thread's total: the basis of every percent.
    pub median_thread_total: f64,
    /// The POP metrics, when the categories were given and some time counts as useful.
    pub pop: Option<PopMetrics>,
    /// Every finding: the losses (stragglers, imbalance, communication-bound threads,
    /// efficiency; at most `max_per_kind` of each, the costliest) ranked together by
    /// `cost_percent`, then the hot spots by their share.
    pub findings: Vec<Finding>,
}

/// Finds what is wrong with metric `m` of `profile` (see the module documentation).
///
/// `categories` (of the same metric, [`crate::categories::categorize`]) says which events are
/// useful work (their category's class is useful) and gives each thread's useful time and the
/// POP metrics; without it, or for a metric that does not add up, the kinds that need it
/// (imbalance, communication-bound, efficiency) are left out. Runs with fewer than three threads
/// have no stragglers.
pub fn findings(
    profile: &Profile,
    m: MetricId,
    categories: Option<&Categorized>,
    opts: &FindingOptions,
) -> Findings {
    let additive = profile.metric(m).combine.is_additive();
    let categories =
        categories.filter(|c| additive && c.metric == m && c.event_category.len() == profile.events().len());
    // The categories already hold each thread's total (`thread_totals`' inclusive value).
    let totals: Vec<f64> = match categories {
        Some(c) => c.thread_total.clone(),
        None => thread_totals(profile, m).iter().map(|t| t.inclusive).collect(),
    };
    let median_thread_total = median(&mut totals.iter().copied().filter(|v| !v.is_nan()).collect::<Vec<_>>());
    let ctx = Context {
        profile,
        m,
        totals: &totals,
        basis: median_thread_total,
        opts,
        ranks_only: profile.threads().iter().all(|t| t.context == 0 && t.thread == 0),
    };
    let mut out = Vec::new();
    let mut push = |mut v: Vec<Finding>| {
        v.sort_by(|a, b| crate::stats::larger_first(a.cost, b.cost));
        v.truncate(opts.max_per_kind);
        out.extend(v);
    };
    push(stragglers::stragglers(&ctx));
    let mut pop = None;
    if let Some(cat) = categories {
        let useful: Vec<bool> = cat
            .event_category
            .iter()
            .map(|&c| cat.categories[c as usize].class.is_useful())
            .collect();
        push(balance::imbalance(&ctx, &useful));
        push(balance::communication_bound(&ctx, &cat.useful()));
        let p = cat.pop();
        if p.max_useful > 0.0 {
            push(balance::efficiency(&ctx, &p));
            pop = Some(p);
        }
    }
    // Losses ranked together by cost (percent of the basis), then the hot spots, which are
    // where the time goes rather than time lost.
    out.sort_by(|a, b| crate::stats::larger_first(a.cost_percent, b.cost_percent));
    if additive {
        let mut hot = balance::hot_spots(&ctx);
        hot.truncate(opts.max_per_kind);
        out.extend(hot);
    }
    Findings {
        median_thread_total,
        pop,
        findings: out,
    }
}

/// Adds the wait states of `trace` (the trace `profile` was derived from) to `f`, the
/// findings of metric `m` of `profile` (`waits.rs`): per pattern of
/// [`crate::wait_states`] — late sender, late receiver, wait at N x N — that lost time, one
/// finding ([`FindingKind::LateSender`], [`FindingKind::LateReceiver`],
/// [`FindingKind::WaitAtNxN`]) whose cost is the time lost by the thread that lost most (in
/// `m`'s unit, which must be a time: else nothing is added), its thread that one, its event
/// the operation where most time was lost, and its evidence the total, the time per rank
/// and per operation. They are ranked with the other losses (at most `max_per_kind` each),
/// the hot spots staying last.
pub fn add_wait_states(
    f: &mut Findings,
    profile: &Profile,
    m: MetricId,
    trace: &Trace,
    opts: &FindingOptions,
) {
    let totals: Vec<f64> = thread_totals(profile, m).iter().map(|t| t.inclusive).collect();
    let ctx = Context {
        profile,
        m,
        totals: &totals,
        basis: f.median_thread_total,
        opts,
        ranks_only: profile.threads().iter().all(|t| t.context == 0 && t.thread == 0),
    };
    let new = waits::wait_states(&ctx, trace);
    if new.is_empty() {
        return;
    }
    let (hot, mut losses): (Vec<Finding>, Vec<Finding>) = std::mem::take(&mut f.findings)
        .into_iter()
        .partition(|x| x.kind == FindingKind::HotSpot);
    losses.extend(new);
    losses.sort_by(|a, b| crate::stats::larger_first(a.cost_percent, b.cost_percent));
    losses.extend(hot);
    f.findings = losses;
}

/// What every finder reads.
struct Context<'a> {
    profile: &'a Profile,
    m: MetricId,
    /// Each thread's total (NaN: none).
    totals: &'a [f64],
    /// The median thread total (the percent basis).
    basis: f64,
    opts: &'a FindingOptions,
    /// Every thread is thread 0 of context 0: threads are named by rank.
    ranks_only: bool,
}

impl Context<'_> {
    /// `cost` as a percent of the median thread total (0 when that is 0).
    fn percent(&self, cost: f64) -> f64 {
        if self.basis > 0.0 {
            100.0 * cost / self.basis
        } else {
            0.0
        }
    }

    /// The unit symbol of the metric, for titles.
    fn unit(&self) -> &str {
        self.profile.metric(self.m).unit.symbol()
    }

    /// An event's display name.
    fn name(&self, e: EventId) -> String {
        self.profile.event_name(e)
    }

    /// A thread's address (`rank 3` when every thread is a rank's only one, `n.c.t`
    /// otherwise).
    fn thread(&self, t: ThreadIndex) -> String {
        let id = self.profile.thread(t);
        if self.ranks_only {
            format!("rank {}", id.node)
        } else {
            id.to_string()
        }
    }
}

/// The median of `v` (the mean of the two middle values for an even count; 0 when empty).
/// Reorders `v`.
pub(crate) fn median(v: &mut [f64]) -> f64 {
    let n = v.len();
    if n == 0 {
        return 0.0;
    }
    let cmp = |a: &f64, b: &f64| a.total_cmp(b);
    let (_, &mut hi, _) = v.select_nth_unstable_by(n / 2, cmp);
    if n % 2 == 1 {
        hi
    } else {
        let lo = v[..n / 2].iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (lo + hi) / 2.0
    }
}

/// A value with its unit, three significant digits (`1.23 s`, `456 us`).
fn show(v: f64, unit: &str) -> String {
    let (v, unit) = match unit {
        "us" | "µs" if v.abs() >= 1e6 => (v / 1e6, "s"),
        "us" | "µs" if v.abs() >= 1e3 => (v / 1e3, "ms"),
        _ => (v, unit),
    };
    let digits = if v.abs() >= 100.0 {
        0
    } else if v.abs() >= 10.0 {
        1
    } else {
        2
    };
    format!("{v:.digits$} {unit}")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use perfscape_model::{Metric, ProfileBuilder, ThreadData, ThreadId};

    /// Four ranks: `main` holds `work` (useful) and `MPI_Wait` (not); rank 3's work is 4x.
    fn run() -> Profile {
        let mut b = ProfileBuilder::new(vec![Metric::tau("TIME")]);
        for rank in 0..4u32 {
            let work = if rank == 3 { 40.0 } else { 10.0 };
            let wait = 50.0 - work;
            let mut d = ThreadData::new(1);
            d.push_timer("main", "TAU_DEFAULT", 1.0, 2.0, &[0.0], &[50.0])
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
    fn pop_metrics_and_imbalance_by_hand() {
        let p = run();
        let cat =
            crate::categories::categorize(&p, MetricId(0), &crate::categories::RuleSet::defaults()).unwrap();
        let f = findings(&p, MetricId(0), Some(&cat), &FindingOptions::default());
        let pop = f.pop.unwrap();
        // useful per rank: 10, 10, 10, 40; runtime 50.
        assert_eq!(pop.max_useful, 40.0);
        assert_eq!(pop.mean_useful, 17.5);
        assert_eq!(pop.load_balance, 17.5 / 40.0);
        assert_eq!(pop.communication_efficiency, 40.0 / 50.0);
        assert!((pop.parallel_efficiency - 0.35).abs() < 1e-12);
        let imb: Vec<_> = f
            .findings
            .iter()
            .filter(|x| x.kind == FindingKind::Imbalance)
            .collect();
        assert_eq!(imb.len(), 1, "{:#?}", f.findings);
        assert_eq!(p.event_name(imb[0].event.unwrap()), "work");
        assert_eq!(imb[0].cost, 40.0 - 17.5);
        assert_eq!(imb[0].thread, Some(ThreadIndex::from(3)));
        // Rank 3 is 4x the median in `work` and 1 thread in 4 exceeds the share of 1 in 1,000,
        // but at least one thread may always be a straggler.
        let st: Vec<_> = f
            .findings
            .iter()
            .filter(|x| x.kind == FindingKind::Straggler)
            .collect();
        assert_eq!(st.len(), 1);
        assert_eq!(st[0].thread, Some(ThreadIndex::from(3)));
        assert_eq!(st[0].cost, 30.0);
        // The MPI wait is not reported as imbalance: it is the symptom.
        assert!(!imb.iter().any(|x| p.event_name(x.event.unwrap()) == "MPI_Wait()"));
        // Without categories, no POP and no imbalance.
        let none = findings(&p, MetricId(0), None, &FindingOptions::default());
        assert!(none.pop.is_none());
        assert!(!none.findings.iter().any(|x| x.kind == FindingKind::Imbalance));
    }

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&mut []), 0.0);
    }
}
