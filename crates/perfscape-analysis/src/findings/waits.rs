//! Wait states of a trace as findings ([`super::add_wait_states`]): Scalasca's late sender,
//! late receiver and wait at N x N ([`crate::wait_states`]), one finding per pattern that
//! lost time, its cost the time lost by the thread that lost most.

use super::{Context, Finding, FindingKind, show};
use crate::wait_states::{innermost, late_receivers, late_senders, wait_at_nxn};
use perfscape_model::{ThreadId, Trace, Unit};
use std::collections::BTreeMap;

/// Nanoseconds in `unit` (`None`: not a time unit).
fn ns_per(unit: &Unit) -> Option<f64> {
    match unit {
        Unit::Seconds => Some(1e9),
        Unit::Microseconds => Some(1e3),
        Unit::Nanoseconds => Some(1.0),
        _ => None,
    }
}

/// What one pattern lost: per thread and per rank (ns), the instances that lost time, and
/// the time lost per operation name (ns).
struct Lost<'a> {
    lost: &'a [(ThreadId, i64)],
    per_rank: &'a BTreeMap<u32, i64>,
    count: usize,
    ops: &'a BTreeMap<String, i64>,
}

/// One pattern's finding (`what` names its instances in the evidence); the operation that
/// lost most is the event to select.
fn finding(ctx: &Context<'_>, kind: FindingKind, pattern: &str, what: &str, l: Lost<'_>) -> Option<Finding> {
    let Lost {
        lost,
        per_rank,
        count,
        ops,
    } = l;
    let per = ns_per(&ctx.profile.metric(ctx.m).unit)?;
    let total: i64 = lost.iter().map(|x| x.1).sum();
    let &(worst, worst_ns) = lost.iter().max_by_key(|x| (x.1, std::cmp::Reverse(x.0)))?;
    if total <= 0 {
        return None;
    }
    let unit = ctx.unit().to_string();
    let v = |ns: i64| ns as f64 / per;
    let thread = ctx.profile.thread_index(worst);
    let who = match thread {
        Some(t) => ctx.thread(t),
        None => worst.to_string(),
    };
    let cost = v(worst_ns);
    let mut evidence = vec![
        format!(
            "{} lost in all over {count} {what}; {who} lost the most, {}",
            show(v(total), &unit),
            show(cost, &unit)
        ),
        format!(
            "by rank: {}",
            per_rank
                .iter()
                .filter(|r| *r.1 > 0)
                .map(|(r, ns)| format!("{r}: {}", show(v(*ns), &unit)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    ];
    let top_op = ops.iter().max_by_key(|x| x.1).map(|x| x.0.clone());
    if !ops.is_empty() {
        evidence.push(format!(
            "in: {}",
            ops.iter()
                .map(|(n, ns)| format!("{n} {}", show(v(*ns), &unit)))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Some(Finding {
        kind,
        title: format!("{pattern}: {who} lost {} waiting", show(cost, &unit)),
        cost,
        cost_percent: ctx.percent(cost),
        evidence,
        event: top_op.and_then(|n| ctx.profile.event_by_name(&n)),
        thread,
    })
}

/// The innermost interval name of `trace`'s lane `t` around `ns`, if any.
fn op_name(trace: &Trace, t: usize, ns: i64) -> Option<String> {
    let l = trace.lanes().get(t)?;
    let i = innermost(l, ns)?;
    Some(perfscape_model::event::normalize_timer_name(&trace.names()[l.name()[i] as usize]).into_owned())
}

/// The findings of the three wait-state patterns of `trace` (see the module documentation);
/// none when the metric is not a time.
pub(super) fn wait_states(ctx: &Context<'_>, trace: &Trace) -> Vec<Finding> {
    let mut out = Vec::new();
    let flows = trace.flows();
    let ls = late_senders(trace);
    let mut ops: BTreeMap<String, i64> = BTreeMap::new();
    for m in &ls.messages {
        if let Some(n) = op_name(trace, m.receiver, flows.to_ns[m.flow]) {
            *ops.entry(n).or_default() += m.wait_ns;
        }
    }
    out.extend(finding(
        ctx,
        FindingKind::LateSender,
        "Late sender",
        "message(s) received before they were sent",
        Lost {
            lost: &ls.per_thread_ns,
            per_rank: &ls.per_rank_ns,
            count: ls.messages.len(),
            ops: &ops,
        },
    ));
    let lr = late_receivers(trace);
    let mut ops: BTreeMap<String, i64> = BTreeMap::new();
    for m in &lr.messages {
        if let Some(n) = op_name(trace, m.sender, flows.from_ns[m.flow]) {
            *ops.entry(n).or_default() += m.wait_ns;
        }
    }
    out.extend(finding(
        ctx,
        FindingKind::LateReceiver,
        "Late receiver",
        "send(s) blocked until their receive was posted",
        Lost {
            lost: &lr.per_thread_ns,
            per_rank: &lr.per_rank_ns,
            count: lr.messages.len(),
            ops: &ops,
        },
    ));
    let nxn = wait_at_nxn(trace);
    let mut ops: BTreeMap<String, i64> = BTreeMap::new();
    for w in &nxn.waits {
        *ops.entry(w.op.mpi_name()).or_default() += w.wait_ns;
    }
    out.extend(finding(
        ctx,
        FindingKind::WaitAtNxN,
        "Wait at N x N",
        &format!("wait(s) in {} n-to-n collective operation(s)", nxn.instances),
        Lost {
            lost: &nxn.per_thread_ns,
            per_rank: &nxn.per_rank_ns,
            count: nxn.waits.len(),
            ops: &ops,
        },
    ));
    out
}
