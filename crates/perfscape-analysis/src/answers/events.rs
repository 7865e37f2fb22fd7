//! The ranked event table (`/api/events`): the same numbers and order as `perfscape top`.

use super::{SummaryJson, groups};
use crate::params::Values;
use crate::stats::{EventStats, event_stats, larger_first, run_total};
use crate::top::{RankBy, TopOptions, top_events};
use perfscape_model::{Combine, EventId, Profile, ValueKind};
use serde::Serialize;
use std::collections::HashMap;

/// One row of the ranked event table.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct EventRow {
    /// Event id (use it in `/api/event/{id}`).
    pub id: u32,
    /// 1-based rank by total of the requested kind.
    pub rank: u32,
    /// Event name.
    pub name: String,
    /// Group names.
    pub groups: Vec<String>,
    /// Source file, if the name carries one.
    pub source_file: Option<String>,
    /// Source line, if the name carries one.
    pub source_line: Option<u32>,
    /// `timer`, `sample`, `sample_context`, ...
    pub kind: String,
    /// True for callpath events.
    pub callpath: bool,
    /// The flat event of the routine (itself for flat events).
    pub routine: Option<u32>,
    /// Percent of the run total (ParaProf's convention); `null` for a metric that does not add
    /// up (a minimum, maximum, mean or ratio has no share of the run); 0 for calls and subcalls.
    pub percent: Option<f64>,
    /// Statistics of the requested kind across threads.
    pub stats: SummaryJson,
    /// Total calls across threads.
    pub calls: f64,
}

/// `GET /api/events`: the ranked event table.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct EventsResponse {
    /// Metric index.
    pub metric: u32,
    /// Unit of the values.
    pub unit: String,
    /// Value kind ranked (`exclusive`, `inclusive`, `calls`, `subcalls`).
    pub kind: String,
    /// How the rows' totals combine the threads' values (`sum` for calls and subcalls and
    /// for metrics that add up; else the metric's rule).
    pub combine: Combine,
    /// Sum over threads of each thread's top-level inclusive value (the percent divisor);
    /// `null` for a metric that does not add up.
    pub run_total: Option<f64>,
    /// Rows, ranked.
    pub rows: Vec<EventRow>,
}

impl EventsResponse {
    /// Approximate heap bytes held (for cache budgets).
    pub fn heap_bytes(&self) -> usize {
        self.rows
            .iter()
            .map(|r| {
                std::mem::size_of::<EventRow>()
                    + r.name.capacity()
                    + r.groups.iter().map(|g| g.capacity() + 24).sum::<usize>()
                    + r.source_file.as_ref().map_or(0, String::capacity)
                    + r.kind.capacity()
                    + r.stats.min_thread.as_ref().map_or(0, String::capacity)
                    + r.stats.max_thread.as_ref().map_or(0, String::capacity)
            })
            .sum::<usize>()
            + self.unit.capacity()
            + self.kind.capacity()
    }
}

/// The events of the table with their statistics, in rank order: flat events with data (and
/// callpath events with `callpaths`); for exclusive and inclusive values the order of
/// [`top_events`] (`perfscape top`), for calls and subcalls by total, largest first, ties by
/// id.
pub fn ranked_events(profile: &Profile, values: Values, callpaths: bool) -> Vec<(EventId, EventStats)> {
    let m = values.metric;
    let mut ranked: Vec<(EventId, EventStats)> = profile
        .event_ids()
        .filter(|&e| (callpaths || !profile.event(e).is_callpath()) && !profile.interval(e).is_empty())
        .map(|e| (e, event_stats(profile, e, m)))
        .collect();
    if matches!(values.kind, ValueKind::Exclusive | ValueKind::Inclusive) {
        let by = if values.kind == ValueKind::Inclusive {
            RankBy::Inclusive
        } else {
            RankBy::Exclusive
        };
        let order: Vec<EventId> = top_events(
            profile,
            m,
            TopOptions {
                by,
                n: 0,
                include_callpaths: callpaths,
            },
        )
        .into_iter()
        .map(|x| x.event)
        .collect();
        let pos: HashMap<EventId, usize> = order.iter().enumerate().map(|(i, e)| (*e, i)).collect();
        ranked.sort_by_key(|(e, _)| pos.get(e).copied().unwrap_or(usize::MAX));
    } else {
        ranked.sort_by(|a, b| {
            larger_first(a.1.get(values.kind).total, b.1.get(values.kind).total).then(a.0.cmp(&b.0))
        });
    }
    ranked
}

/// `GET /api/events`: the ranked table of [`ranked_events`] with percents of the run total
/// (ParaProf's convention; 0 for calls and subcalls; none for a metric that does not add up).
pub fn events(profile: &Profile, values: Values, callpaths: bool) -> EventsResponse {
    let total = run_total(profile, values.metric);
    let rows = ranked_events(profile, values, callpaths)
        .iter()
        .enumerate()
        .map(|(i, (e, st))| {
            let ev = profile.event(*e);
            let s = st.get(values.kind);
            let source = ev.source();
            EventRow {
                id: e.0,
                rank: (i + 1) as u32,
                name: profile.event_name(*e),
                groups: groups(profile, *e),
                source_file: source.map(|s| s.file.to_string()),
                source_line: source.map(|s| s.line),
                kind: ev.kind.as_str().into(),
                callpath: ev.is_callpath(),
                routine: ev.routine().map(|r| r.0),
                percent: match total {
                    _ if values.kind.is_metric_independent() => Some(0.0),
                    Some(t) if t > 0.0 => Some(100.0 * s.total / t),
                    Some(_) => Some(0.0),
                    None => None,
                },
                stats: SummaryJson::of(profile, s),
                calls: st.calls.total,
            }
        })
        .collect();
    EventsResponse {
        metric: values.metric.0,
        unit: values.unit(profile.metrics()),
        kind: values.kind.as_str().into(),
        combine: if values.kind.is_metric_independent() {
            Combine::Sum
        } else {
            profile.metric(values.metric).combine
        },
        run_total: total,
        rows,
    }
}
