//! Straggler threads: one thread far above the others in one event (see the module
//! documentation of `findings`).

use super::{Context, Finding, FindingKind, median, show};
use perfscape_model::{EventId, EventKind, ThreadIndex, ValueKind};
use rayon::prelude::*;
use std::collections::BTreeMap;

/// One thread's value far above an event's median.
struct Candidate {
    event: EventId,
    kind: ValueKind,
    thread: ThreadIndex,
    value: f64,
    median: f64,
}

/// Every straggler, one finding per thread.
pub(super) fn stragglers(ctx: &Context<'_>) -> Vec<Finding> {
    let p = ctx.profile;
    let n_threads = p.threads().len();
    if n_threads < 3 {
        return Vec::new();
    }
    let o = ctx.opts;
    let allowed = ((o.straggler_max_share * n_threads as f64).floor() as usize).max(1);
    let min_cost = o.straggler_min_cost * ctx.basis;
    let candidates: Vec<Candidate> = p
        .event_ids()
        .filter(|&e| p.event(e).kind == EventKind::Timer)
        .collect::<Vec<_>>()
        .par_iter()
        .flat_map_iter(|&e| {
            let col = p.interval(e);
            let mut found = Vec::new();
            if col.len() < 3 {
                return found;
            }
            for kind in [ValueKind::Exclusive, ValueKind::Inclusive] {
                let values = col.values(kind, ctx.m);
                let mut sorted: Vec<f64> = values.iter().copied().filter(|v| !v.is_nan()).collect();
                if sorted.len() < 3 {
                    continue;
                }
                let med = median(&mut sorted);
                if med <= 0.0 {
                    continue;
                }
                let far = |v: f64| v >= o.straggler_ratio * med && v - med >= min_cost;
                let count = values.iter().filter(|&&v| far(v)).count();
                if count == 0 || count > allowed {
                    continue;
                }
                for (&t, &v) in col.threads().iter().zip(values) {
                    if far(v) {
                        found.push(Candidate {
                            event: e,
                            kind,
                            thread: t,
                            value: v,
                            median: med,
                        });
                    }
                }
            }
            found
        })
        .collect();
    let mut by_thread: BTreeMap<usize, Vec<Candidate>> = BTreeMap::new();
    for c in candidates {
        by_thread.entry(c.thread.index()).or_default().push(c);
    }
    by_thread.into_values().map(|cs| finding(ctx, cs)).collect()
}

/// The finding of one thread from its candidates: the costliest (the deepest event on ties,
/// where the time is spent rather than where it is included) is the title, the others evidence.
fn finding(ctx: &Context<'_>, mut cs: Vec<Candidate>) -> Finding {
    let p = ctx.profile;
    cs.sort_by(|a, b| {
        crate::stats::larger_first(a.value - a.median, b.value - b.median)
            .then_with(|| p.event(b.event).depth.cmp(&p.event(a.event).depth))
    });
    let unit = ctx.unit();
    let line = |c: &Candidate| {
        format!(
            "{} {}: {} against a median of {} over the threads ({:.1}x)",
            ctx.name(c.event),
            c.kind.as_str(),
            show(c.value, unit),
            show(c.median, unit),
            c.value / c.median
        )
    };
    let top = &cs[0];
    let cost = top.value - top.median;
    let thread = ctx.thread(top.thread);
    let mut evidence: Vec<String> = cs.iter().take(6).map(line).collect();
    if let Some(total) = ctx.totals.get(top.thread.index()).filter(|v| !v.is_nan()) {
        evidence.push(format!(
            "{thread}'s total: {} against a median thread total of {}",
            show(*total, unit),
            show(ctx.basis, unit)
        ));
    }
    Finding {
        kind: FindingKind::Straggler,
        title: format!(
            "{thread} is a straggler in {}: {:.1}x the median, {} more",
            ctx.name(top.event),
            top.value / top.median,
            show(cost, unit)
        ),
        cost,
        cost_percent: ctx.percent(cost),
        evidence,
        event: Some(top.event),
        thread: Some(top.thread),
    }
}
