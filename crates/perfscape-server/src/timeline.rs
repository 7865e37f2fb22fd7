//! `GET /api/timeline`: the lanes of a trace (one per thread) in a time window, reduced to the
//! pixels asked for by [`perfscape_analysis::timeline`], and the merged timeline of flagged
//! events. Times in the answer are nanoseconds since the trace's first event (so they fit a
//! JavaScript number exactly whatever the trace's clock origin).

use crate::api::{TimelineLane, TimelineResponse};
use crate::query::{ApiError, ViewParams};
use perfscape_analysis::timeline::{LaneIndex, Window, flagged_occupancy, lane_slices};
use perfscape_model::{EventId, Profile, Trace};
use std::collections::HashMap;
use std::sync::Arc;

/// Default and largest widths (pixels).
const WIDTH_DEFAULT: u32 = 1200;
const WIDTH_MAX: u32 = 8192;
/// Lanes per answer: default and most.
const LANES_DEFAULT: u32 = 64;
const LANES_MAX: u32 = 512;

/// A trace with its lane indices, built once.
pub struct TraceState {
    trace: Arc<Trace>,
    index: Vec<LaneIndex>,
    origin_ns: i64,
    end_ns: i64,
    /// Each trace name as the profile derived from the trace names its event
    /// ([`perfscape_model::event::normalize_timer_name`]: TAU writes `"MPI_Init()  "`).
    names: Vec<String>,
}

impl TraceState {
    /// Indexes `trace` (`O(intervals)`).
    pub fn new(trace: Arc<Trace>) -> Self {
        let index = trace.lanes().iter().map(LaneIndex::new).collect();
        let (origin_ns, end_ns) = trace.time_range_ns().unwrap_or((0, 0));
        let names = trace
            .names()
            .iter()
            .map(|n| perfscape_model::event::normalize_timer_name(n).into_owned())
            .collect();
        Self {
            trace,
            index,
            origin_ns,
            end_ns,
            names,
        }
    }

    /// The trace.
    pub fn trace(&self) -> &Trace {
        &self.trace
    }

    /// `GET /api/timeline` (parameters `from_ns`, `to_ns`, `w`, `l0`, `l1`, `depth`, `flag`;
    /// see API.md). Errors: 400 for a window that is not finite or ends before it starts, or
    /// a malformed `flag`; 404 for a flagged event the profile does not have.
    pub fn timeline(&self, profile: Option<&Profile>, q: &ViewParams) -> Result<TimelineResponse, ApiError> {
        let duration = (self.end_ns - self.origin_ns) as f64;
        let from = q.from_ns.unwrap_or(0.0);
        let to = q.to_ns.unwrap_or(duration);
        if !from.is_finite() || !to.is_finite() || to < from {
            return Err(ApiError::bad(format!(
                "timeline: the window [{from}, {to}] is not a time range (ns since the first event)"
            )));
        }
        let width = q.w.unwrap_or(WIDTH_DEFAULT).clamp(1, WIDTH_MAX);
        let w = Window {
            from_ns: self.origin_ns.saturating_add(from.floor() as i64),
            to_ns: self.origin_ns.saturating_add(to.ceil() as i64),
            width_px: width as usize,
        };
        let lane_count = self.trace.lanes().len() as u32;
        let l0 = q.l0.unwrap_or(0).min(lane_count);
        let l1 =
            q.l1.unwrap_or(l0 + LANES_DEFAULT)
                .clamp(l0, (l0 + LANES_MAX).min(lane_count));
        let max_depth = q.depth.unwrap_or(32).clamp(1, 1024) as usize;
        // Flagged names: profile events matched to trace names.
        let mut flagged_names = Vec::new();
        if let Some(list) = q.flag.as_deref() {
            for x in list.split(',').filter(|x| !x.trim().is_empty()) {
                let id: u32 = x
                    .trim()
                    .parse()
                    .map_err(|_| ApiError::bad(format!("flag: `{x}` is not an event id")))?;
                let p = profile.ok_or_else(|| ApiError::bad("flag: the run did not load"))?;
                if id as usize >= p.events().len() {
                    return Err(ApiError::not_found(format!("no event {id}")));
                }
                // A callpath flags its leaf routine.
                flagged_names.push(p.event(EventId(id)).leaf().to_string());
            }
        }
        let flagged: Vec<bool> = self
            .names
            .iter()
            .map(|n| flagged_names.iter().any(|f| f == n))
            .collect();
        let occupancy = if flagged_names.is_empty() {
            Vec::new()
        } else {
            flagged_occupancy(&self.trace, &self.index, &flagged, &w)
        };
        // Lanes, with the names they use renumbered compactly.
        let mut names: Vec<String> = Vec::new();
        let mut renum: HashMap<u32, u32> = HashMap::new();
        let rel = |t: i64| (t - self.origin_ns) as f64;
        let lanes = (l0..l1)
            .map(|l| {
                let lane = self.trace.lane(l as usize);
                let index = &self.index[l as usize];
                let th = &self.trace.threads()[l as usize];
                let slices = lane_slices(lane, index, &w, max_depth);
                let mut out = TimelineLane {
                    thread: th.id.to_string(),
                    label: label(th),
                    depths: index.depths() as u32,
                    start: Vec::with_capacity(slices.len()),
                    end: Vec::with_capacity(slices.len()),
                    depth: Vec::with_capacity(slices.len()),
                    name: Vec::with_capacity(slices.len()),
                    merged: Vec::with_capacity(slices.len()),
                };
                for s in slices {
                    let n = *renum.entry(s.name).or_insert_with(|| {
                        names.push(self.names[s.name as usize].clone());
                        (names.len() - 1) as u32
                    });
                    out.start.push(rel(s.start_ns));
                    out.end.push(rel(s.end_ns));
                    out.depth.push(s.depth);
                    out.name.push(n);
                    out.merged.push(s.merged);
                }
                out
            })
            .collect();
        Ok(TimelineResponse {
            origin_ns: self.origin_ns as f64,
            duration_ns: duration,
            from_ns: from,
            to_ns: to,
            width,
            lane_count,
            lanes_from: l0,
            lanes,
            names,
            flagged: flagged_names,
            occupancy,
        })
    }
}

/// `process_name / thread_name` as the trace names them, else `pid / tid`.
fn label(t: &perfscape_model::TraceThread) -> String {
    let p = t.process_name.clone().unwrap_or_else(|| t.process.clone());
    let th = t.thread_name.clone().unwrap_or_else(|| t.thread.clone());
    format!("{p} / {th}")
}
