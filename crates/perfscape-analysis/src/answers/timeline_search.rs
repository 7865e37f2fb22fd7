//! Search of a trace's timeline by name (`/api/timeline/search`): the intervals whose names
//! contain a text, walked in time order one at a time (next / previous), with their count, so
//! a big trace is searched without shipping its slices ([`crate::timeline_flows::search_slices`]).

use super::timeline::TraceIndex;
use crate::error::ViewError;
use crate::timeline_flows::{Direction, search_slices};
use serde::{Deserialize, Serialize};

/// Which way the search walks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum SearchDir {
    /// The first match after the current one (wrapping to the first).
    #[default]
    Next,
    /// The last match before the current one (wrapping to the last).
    Prev,
}

/// `GET /api/timeline/search` (`q`, `dir`, `at_ns`, `lane`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(
    feature = "ts",
    derive(ts_rs::TS),
    ts(rename = "TimelineSearchRequest", optional_fields)
)]
pub struct TimelineSearchParams {
    /// The text searched for in slice names (case-insensitive substring; required, not empty).
    pub q: Option<String>,
    /// `next` (default) or `prev`.
    pub dir: Option<SearchDir>,
    /// The current match's start (ns since the trace's first event); with `lane`. Without
    /// them, the first (`next`) or last (`prev`) match.
    pub at_ns: Option<f64>,
    /// The current match's lane.
    pub lane: Option<u32>,
}

/// One match: an interval of a lane.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct TimelineHit {
    /// 1-based position among all matches in (start, lane) order.
    pub position: f64,
    /// Lane (position in the trace, as `TimelineResponse.lanes_from`).
    pub lane: u32,
    /// Thread address `N.C.T` of the lane.
    pub thread: String,
    /// Start (ns since the first event).
    pub start_ns: f64,
    /// End (ns since the first event).
    pub end_ns: f64,
    /// Nesting depth.
    pub depth: u32,
    /// The slice's name.
    pub name: String,
}

/// The answer of `/api/timeline/search`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct TimelineSearchResponse {
    /// The text searched for.
    pub q: String,
    /// Matching slices in the whole trace.
    pub total: f64,
    /// Distinct names that match.
    pub names: u32,
    /// The match walked to (null when nothing matches).
    pub hit: Option<TimelineHit>,
}

/// `GET /api/timeline/search`: the match after (or before) the current one.
///
/// # Errors
/// [`ViewError::Invalid`] for a missing or empty `q`, or an `at_ns` that is not finite.
pub fn timeline_search(
    trace: &TraceIndex,
    p: &TimelineSearchParams,
) -> Result<TimelineSearchResponse, ViewError> {
    let q = p.q.as_deref().map(str::trim).unwrap_or("");
    if q.is_empty() {
        return Err(ViewError::invalid("q: the text to search for is missing"));
    }
    let needle = q.to_lowercase();
    let matches: Vec<bool> = trace
        .names()
        .iter()
        .map(|n| n.to_lowercase().contains(&needle))
        .collect();
    let dir = match p.dir.unwrap_or_default() {
        SearchDir::Next => Direction::Next,
        SearchDir::Prev => Direction::Previous,
    };
    let key = match (p.at_ns, p.lane) {
        (Some(t), Some(l)) if t.is_finite() => {
            let row = if dir == Direction::Next { u32::MAX } else { 0 };
            Some((trace.origin_ns().saturating_add(t.round() as i64), l, row))
        }
        (Some(t), _) if !t.is_finite() => return Err(ViewError::invalid("at_ns: not a finite time")),
        _ => None,
    };
    let t = trace.trace();
    let (total, hit) = search_slices(t, &matches, key, dir);
    let rel = |x: i64| (x - trace.origin_ns()) as f64;
    let hit = hit.map(|h| {
        let lane = t.lane(h.lane as usize);
        let r = h.row as usize;
        TimelineHit {
            position: h.position as f64,
            lane: h.lane,
            thread: t.threads()[h.lane as usize].id.to_string(),
            start_ns: rel(lane.start_ns()[r]),
            end_ns: rel(lane.end_ns()[r]),
            depth: lane.depth()[r],
            name: trace.names()[lane.name()[r] as usize].clone(),
        }
    });
    Ok(TimelineSearchResponse {
        q: q.to_string(),
        total: total as f64,
        names: matches.iter().filter(|&&m| m).count() as u32,
        hit,
    })
}
