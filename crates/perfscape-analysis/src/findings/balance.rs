//! Findings about how work and waiting are spread: load imbalance of useful events,
//! communication-bound threads, the POP efficiencies and hot spots (see the module
//! documentation of `findings`).

use super::{Context, Finding, FindingKind, median, show};
use crate::categories::PopMetrics;
use crate::stats::{Summary, larger_first};
use perfscape_model::{Combine, EventId, EventKind, Profile, ThreadIndex, ValueKind};

/// Flat events of useful work whose largest exclusive value is far above the mean.
pub(super) fn imbalance(ctx: &Context<'_>, useful: &[bool]) -> Vec<Finding> {
    let p = ctx.profile;
    let n = p.threads().len();
    let o = ctx.opts;
    let unit = ctx.unit();
    let mut out = Vec::new();
    for e in p.event_ids() {
        if !useful[e.index()] || !flat_timer(p, e) {
            continue;
        }
        let col = p.interval(e);
        let values = col.exclusive(ctx.m);
        let s = Summary::of(values, col.threads(), n, Combine::Sum);
        let cost = s.imbalance_cost();
        if s.mean_all <= 0.0
            || s.imbalance() - 1.0 < o.imbalance_min
            || cost < o.imbalance_min_cost * ctx.basis
        {
            continue;
        }
        let (Some(max_t), Some(min_t)) = (s.max_thread, s.min_thread) else {
            continue;
        };
        let name = ctx.name(e);
        let mut evidence = vec![
            format!(
                "largest on {}: {}; mean over all {} threads {}; smallest on {}: {}",
                ctx.thread(max_t),
                show(s.max, unit),
                n,
                show(s.mean_all, unit),
                ctx.thread(min_t),
                show(s.min, unit)
            ),
            trend(col.threads(), values),
        ];
        if s.threads < n {
            evidence.push(format!("only {} of the {n} threads have it", s.threads));
        }
        out.push(Finding {
            kind: FindingKind::Imbalance,
            title: format!(
                "{name} is imbalanced: the slowest thread takes {:.0}% more than the mean ({} lost)",
                100.0 * (s.imbalance() - 1.0),
                show(cost, unit)
            ),
            cost,
            cost_percent: ctx.percent(cost),
            evidence,
            event: Some(e),
            thread: Some(max_t),
        });
    }
    out
}

/// A flat (not callpath) timer: its exclusive values add up to the thread's time once. Sampled
/// source lines (`[SAMPLE]`, ...) estimate time the timers already hold, with sampling noise.
fn flat_timer(p: &Profile, e: EventId) -> bool {
    let ev = p.event(e);
    !ev.is_callpath() && ev.kind == EventKind::Timer
}

/// How the values run along the thread order: the Pearson correlation of value with thread
/// index, in words.
fn trend(threads: &[ThreadIndex], values: &[f64]) -> String {
    let pairs: Vec<(f64, f64)> = threads
        .iter()
        .zip(values)
        .filter(|(_, v)| !v.is_nan())
        .map(|(t, &v)| (t.index() as f64, v))
        .collect();
    let k = pairs.len() as f64;
    let (mx, my) = pairs
        .iter()
        .fold((0.0, 0.0), |(a, b), (x, y)| (a + x / k, b + y / k));
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (x, y) in &pairs {
        sxy += (x - mx) * (y - my);
        sxx += (x - mx) * (x - mx);
        syy += (y - my) * (y - my);
    }
    if sxx <= 0.0 || syy <= 0.0 {
        return "no trend along the threads".into();
    }
    let r = sxy / (sxx * syy).sqrt();
    if r >= 0.5 {
        format!("grows along the threads (correlation with the thread index {r:.2}): a ramp")
    } else if r <= -0.5 {
        format!("falls along the threads (correlation with the thread index {r:.2}): a ramp")
    } else {
        format!("no trend along the threads (correlation with the thread index {r:.2}): scattered")
    }
}

/// Threads whose share of time outside useful work is far above the median thread's.
pub(super) fn communication_bound(ctx: &Context<'_>, useful: &[f64]) -> Vec<Finding> {
    let shares: Vec<Option<f64>> = useful
        .iter()
        .zip(ctx.totals)
        .map(|(&u, &t)| (t > 0.0).then(|| (1.0 - u / t).clamp(0.0, 1.0)))
        .collect();
    let typical = median(&mut shares.iter().flatten().copied().collect::<Vec<_>>());
    let unit = ctx.unit();
    shares
        .iter()
        .enumerate()
        .filter_map(|(i, s)| {
            let s = (*s)?;
            if s - typical < ctx.opts.idle_share_gap {
                return None;
            }
            let t = ThreadIndex::from(i);
            let cost = (s - typical) * ctx.totals[i];
            Some(Finding {
                kind: FindingKind::CommunicationBound,
                title: format!(
                    "{} spends {:.0}% of its time outside useful work; the median thread {:.0}%",
                    ctx.thread(t),
                    100.0 * s,
                    100.0 * typical
                ),
                cost,
                cost_percent: ctx.percent(cost),
                evidence: vec![format!(
                    "useful work {} of a total of {}",
                    show(useful[i], unit),
                    show(ctx.totals[i], unit)
                )],
                event: None,
                thread: Some(t),
            })
        })
        .collect()
}

/// The run's POP efficiencies when the parallel efficiency is under the threshold.
pub(super) fn efficiency(ctx: &Context<'_>, pop: &PopMetrics) -> Vec<Finding> {
    if pop.parallel_efficiency >= ctx.opts.efficiency_min {
        return Vec::new();
    }
    let unit = ctx.unit();
    let cost = pop.runtime * (1.0 - pop.parallel_efficiency);
    vec![Finding {
        kind: FindingKind::Efficiency,
        title: format!(
            "Parallel efficiency {:.2}: load balance {:.2} x communication efficiency {:.2}",
            pop.parallel_efficiency, pop.load_balance, pop.communication_efficiency
        ),
        cost,
        cost_percent: 100.0 * (1.0 - pop.parallel_efficiency),
        evidence: vec![
            format!(
                "useful work per thread: mean {}, largest {}; runtime (largest thread total) {}",
                show(pop.mean_useful, unit),
                show(pop.max_useful, unit),
                show(pop.runtime, unit)
            ),
            format!("useful work: {}", pop.useful_categories.join(", ")),
            format!(
                "{} is the lower: {}",
                if pop.load_balance < pop.communication_efficiency {
                    "load balance"
                } else {
                    "communication efficiency"
                },
                if pop.load_balance < pop.communication_efficiency {
                    "the useful work is unevenly spread"
                } else {
                    "the threads spend most of their time outside useful work (communication, waiting, setup)"
                }
            ),
        ],
        event: None,
        thread: None,
    }]
}

/// Flat events taking at least the hot-spot share of all thread time.
pub(super) fn hot_spots(ctx: &Context<'_>) -> Vec<Finding> {
    let p = ctx.profile;
    let n = p.threads().len();
    let all: f64 = ctx.totals.iter().filter(|v| !v.is_nan()).sum();
    if all <= 0.0 {
        return Vec::new();
    }
    let unit = ctx.unit();
    let mut out: Vec<(EventId, Summary)> = p
        .event_ids()
        .filter(|&e| flat_timer(p, e))
        .map(|e| {
            let col = p.interval(e);
            (
                e,
                Summary::of(
                    col.values(ValueKind::Exclusive, ctx.m),
                    col.threads(),
                    n,
                    Combine::Sum,
                ),
            )
        })
        .filter(|(_, s)| s.total / all >= ctx.opts.hot_spot_share)
        .collect();
    out.sort_by(|a, b| larger_first(a.1.total, b.1.total));
    out.into_iter()
        .map(|(e, s)| Finding {
            kind: FindingKind::HotSpot,
            title: format!(
                "{} takes {:.0}% of all thread time (exclusive)",
                ctx.name(e),
                100.0 * s.total / all
            ),
            cost: s.mean_all,
            cost_percent: ctx.percent(s.mean_all),
            evidence: vec![format!(
                "{} per thread on average over {} threads; largest {}",
                show(s.mean_all, unit),
                n,
                show(s.max, unit)
            )],
            event: Some(e),
            thread: s.max_thread,
        })
        .collect()
}
