//! The timeline of a trace (`/api/timeline`): the lanes (one per thread) in a time window,
//! reduced to the pixels asked for by [`crate::timeline`], and the merged timeline of flagged
//! events. Times in the answer are nanoseconds since the trace's first event (so they fit a
//! JavaScript number exactly whatever the trace's clock origin).

use crate::error::ViewError;
use crate::params::{EventIds, event_id};
use crate::timeline::{LaneIndex, Window, activity, flagged_occupancy, lane_slices};
use crate::timeline_flows::{flow_lines, longest_flow_ns};
use perfscape_model::{Profile, Trace, TraceThread};
use serde::Serialize;
use std::collections::HashMap;
use std::sync::Arc;

/// One thread's lane of the timeline: its slices in the window, columnar.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct TimelineLane {
    /// Thread address `N.C.T` (as in the profile derived from the trace).
    pub thread: String,
    /// The process and thread as the trace names them.
    pub label: String,
    /// The process (rank) as the trace names it: lanes of one process are grouped.
    pub process: String,
    /// Nesting depths of the lane in the whole trace.
    pub depths: u32,
    /// Slice starts, ns since the trace's first event.
    pub start: Vec<f64>,
    /// Slice ends, ns since the trace's first event.
    pub end: Vec<f64>,
    /// Slice nesting depths (0 = top level).
    pub depth: Vec<u32>,
    /// Slice names, indices into `TimelineResponse.names`.
    pub name: Vec<u32>,
    /// Intervals in each slice (more than 1: a run of intervals shorter than a pixel merged).
    pub merged: Vec<u32>,
}

/// `GET /api/timeline`: the lanes of a trace in a time window at screen resolution, and the
/// merged timeline of flagged events.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct TimelineResponse {
    /// The trace's first event on its own clock (ns); every other time is relative to it.
    pub origin_ns: f64,
    /// Length of the whole trace (ns).
    pub duration_ns: f64,
    /// The window (ns since the first event).
    pub from_ns: f64,
    /// End of the window.
    pub to_ns: f64,
    /// Width the window was reduced for (pixels).
    pub width: u32,
    /// Lanes in the trace (the answer holds `lanes_from ..` of them).
    pub lane_count: u32,
    /// Position of the first lane of the answer.
    pub lanes_from: u32,
    /// The lanes.
    pub lanes: Vec<TimelineLane>,
    /// Names the slices refer to.
    pub names: Vec<String>,
    /// Names of the flagged events.
    pub flagged: Vec<String>,
    /// Per pixel of the window, the number of threads inside a flagged event (averaged over
    /// the pixel's time; all lanes, not only those of the answer).
    pub occupancy: Vec<f64>,
    /// The summary strip: per pixel of the window, the intervals starting in it over all lanes
    /// (not only those of the answer).
    pub activity: Vec<u32>,
    /// The message lines between the answer's lanes in the window, reduced to pixels.
    pub flows: TimelineFlows,
}

/// Message lines of the timeline, columnar: each line stands for the `count` messages between
/// two lanes whose send and receive times fall in the same pixel columns
/// ([`crate::timeline_flows`]).
#[derive(Debug, Clone, Default, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct TimelineFlows {
    /// Sender lanes (positions in the trace, as `lanes_from`).
    pub from_lane: Vec<u32>,
    /// Receiver lanes.
    pub to_lane: Vec<u32>,
    /// Mean send times of the lines' messages (ns since the first event).
    pub from_ns: Vec<f64>,
    /// Mean receive times.
    pub to_ns: Vec<f64>,
    /// Messages per line.
    pub count: Vec<u32>,
    /// Messages in the window between the answer's lanes (the sum of `count`).
    pub messages: f64,
    /// Messages merged into another's line (`messages` minus the number of lines).
    pub reduced: f64,
    /// Messages in the window with a lane outside the answer's (not drawn).
    pub outside_lanes: f64,
    /// Messages in the whole trace.
    pub total: f64,
}

/// Default width (pixels).
pub const TIMELINE_WIDTH_DEFAULT: u32 = 1200;
/// Largest width (pixels).
pub const TIMELINE_WIDTH_MAX: u32 = 8192;
/// Lanes per answer by default.
pub const TIMELINE_LANES_DEFAULT: u32 = 64;
/// Most lanes per answer.
pub const TIMELINE_LANES_MAX: u32 = 512;

/// A trace with its lane indices, built once (`O(intervals)`) and asked many times.
pub struct TraceIndex {
    trace: Arc<Trace>,
    index: Vec<LaneIndex>,
    origin_ns: i64,
    end_ns: i64,
    /// Each trace name as the profile derived from the trace names its event
    /// ([`perfscape_model::event::normalize_timer_name`]: TAU writes `"MPI_Init()  "`).
    names: Vec<String>,
    longest_flow_ns: i64,
}

impl TraceIndex {
    /// Indexes `trace`.
    pub fn new(trace: Arc<Trace>) -> Self {
        let index = trace.lanes().iter().map(LaneIndex::new).collect();
        let (origin_ns, end_ns) = trace.time_range_ns().unwrap_or((0, 0));
        let names = trace
            .names()
            .iter()
            .map(|n| perfscape_model::event::normalize_timer_name(n).into_owned())
            .collect();
        let longest_flow_ns = longest_flow_ns(trace.flows());
        Self {
            longest_flow_ns,
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

    /// The trace's first event on its own clock (ns).
    pub fn origin_ns(&self) -> i64 {
        self.origin_ns
    }

    /// Each trace name as the derived profile names its event.
    pub fn names(&self) -> &[String] {
        &self.names
    }
}

/// The timeline's parameters as given (`from_ns`, `to_ns`, `w`, `l0`, `l1`, `depth`, `flag`):
/// also the HTTP request `GET /api/timeline` (`TimelineRequest` in TypeScript), since the
/// endpoint takes nothing else.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(
    feature = "ts",
    derive(ts_rs::TS),
    ts(rename = "TimelineRequest", optional_fields)
)]
pub struct TimelineParams {
    /// Window start, ns since the trace's first event (default 0).
    pub from_ns: Option<f64>,
    /// Window end (default the trace's end).
    pub to_ns: Option<f64>,
    /// Pixels (default 1200, 1..=8192).
    pub w: Option<u32>,
    /// First lane (default 0).
    pub l0: Option<u32>,
    /// End lane, exclusive (default first + 64, at most first + 512).
    pub l1: Option<u32>,
    /// Deepest nesting returned (default 32, 1..=1024).
    pub depth: Option<u32>,
    /// Flagged events: ids of `profile`'s events, matched to trace names (a callpath flags
    /// its routine).
    pub flag: Option<EventIds>,
}

/// `GET /api/timeline`: the lanes of `trace` in the window, reduced to `w` pixels, and with
/// `flag` the merged timeline of the flagged events of `profile` (the profile derived from the
/// trace).
///
/// # Errors
/// [`ViewError::Invalid`] for a window that is not finite or ends before it starts, or flags
/// without a profile; [`ViewError::NotFound`] for a flagged event the profile does not have.
pub fn timeline(
    trace: &TraceIndex,
    profile: Option<&Profile>,
    q: &TimelineParams,
) -> Result<TimelineResponse, ViewError> {
    let duration = crate::timeline::offset_ns(trace.end_ns, trace.origin_ns);
    let from = q.from_ns.unwrap_or(0.0);
    let to = q.to_ns.unwrap_or(duration);
    if !from.is_finite() || !to.is_finite() || to < from {
        return Err(ViewError::invalid(format!(
            "timeline: the window [{from}, {to}] is not a time range (ns since the first event)"
        )));
    }
    let width = q.w.unwrap_or(TIMELINE_WIDTH_DEFAULT).clamp(1, TIMELINE_WIDTH_MAX);
    let w = Window {
        from_ns: trace.origin_ns.saturating_add(from.floor() as i64),
        to_ns: trace.origin_ns.saturating_add(to.ceil() as i64),
        width_px: width as usize,
    };
    let lane_count = trace.trace.lanes().len() as u32;
    let l0 = q.l0.unwrap_or(0).min(lane_count);
    let l1 =
        q.l1.unwrap_or(l0 + TIMELINE_LANES_DEFAULT)
            .clamp(l0, (l0 + TIMELINE_LANES_MAX).min(lane_count));
    let max_depth = q.depth.unwrap_or(32).clamp(1, 1024) as usize;
    // Flagged names: profile events matched to trace names.
    let mut flagged_names = Vec::new();
    if let Some(list) = &q.flag {
        for &id in &list.0 {
            let p = profile.ok_or_else(|| ViewError::invalid("flag: the run did not load"))?;
            // A callpath flags its leaf routine.
            flagged_names.push(p.event(event_id(p.events().len(), id)?).leaf().to_string());
        }
    }
    let flagged: Vec<bool> = trace
        .names
        .iter()
        .map(|n| flagged_names.iter().any(|f| f == n))
        .collect();
    let occupancy = if flagged_names.is_empty() {
        Vec::new()
    } else {
        flagged_occupancy(&trace.trace, &trace.index, &flagged, &w)
    };
    // Lanes, with the names they use renumbered compactly.
    let mut names: Vec<String> = Vec::new();
    let mut renum: HashMap<u32, u32> = HashMap::new();
    let rel = |t: i64| (t - trace.origin_ns) as f64;
    let lanes = (l0..l1)
        .map(|l| {
            let lane = trace.trace.lane(l as usize);
            let index = &trace.index[l as usize];
            let th = &trace.trace.threads()[l as usize];
            let slices = lane_slices(lane, index, &w, max_depth);
            let mut out = TimelineLane {
                thread: th.id.to_string(),
                label: label(th),
                process: th.process_name.clone().unwrap_or_else(|| th.process.clone()),
                depths: index.depths() as u32,
                start: Vec::with_capacity(slices.len()),
                end: Vec::with_capacity(slices.len()),
                depth: Vec::with_capacity(slices.len()),
                name: Vec::with_capacity(slices.len()),
                merged: Vec::with_capacity(slices.len()),
            };
            for s in slices {
                let n = *renum.entry(s.name).or_insert_with(|| {
                    names.push(trace.names[s.name as usize].clone());
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
    let red = flow_lines(trace.trace.flows(), trace.longest_flow_ns, &w, l0..l1);
    let flows = TimelineFlows {
        from_lane: red.lines.iter().map(|f| f.from_lane).collect(),
        to_lane: red.lines.iter().map(|f| f.to_lane).collect(),
        from_ns: red
            .lines
            .iter()
            .map(|f| f.from_ns - trace.origin_ns as f64)
            .collect(),
        to_ns: red
            .lines
            .iter()
            .map(|f| f.to_ns - trace.origin_ns as f64)
            .collect(),
        count: red.lines.iter().map(|f| f.count).collect(),
        messages: red.messages as f64,
        reduced: (red.messages - red.lines.len() as u64) as f64,
        outside_lanes: red.outside_lanes as f64,
        total: trace.trace.flows().len() as f64,
    };
    Ok(TimelineResponse {
        activity: activity(&trace.trace, &trace.index, &w),
        flows,
        origin_ns: trace.origin_ns as f64,
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

/// `process_name / thread_name` as the trace names them, else `pid / tid`.
fn label(t: &TraceThread) -> String {
    let p = t.process_name.clone().unwrap_or_else(|| t.process.clone());
    let th = t.thread_name.clone().unwrap_or_else(|| t.thread.clone());
    format!("{p} / {th}")
}
