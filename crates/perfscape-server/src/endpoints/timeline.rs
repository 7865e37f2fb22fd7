//! `GET /api/timeline`: the lanes of a trace at screen resolution.

use crate::error::ApiError;
use crate::request::{TimelineRequest, TimelineSearchRequest};
use perfscape_analysis::answers::{
    TimelineResponse, TimelineSearchResponse, TraceIndex, timeline, timeline_search,
};
use perfscape_model::Profile;

/// The timeline of `trace` for `q` (flags matched against `profile`'s events). Errors: 400
/// for a run that is not a trace or a window that is not a range, 404 for an unknown flagged
/// event.
pub fn get(
    trace: Option<&TraceIndex>,
    profile: Option<&Profile>,
    q: &TimelineRequest,
) -> Result<TimelineResponse, ApiError> {
    Ok(timeline(not_a_trace(trace)?, profile, q)?)
}

/// `GET /api/timeline/search`: the slice after or before the current one whose name contains
/// `q.q`, with the count of matches. Errors: 400 for a run that is not a trace or no `q`.
pub fn search(
    trace: Option<&TraceIndex>,
    q: &TimelineSearchRequest,
) -> Result<TimelineSearchResponse, ApiError> {
    Ok(timeline_search(not_a_trace(trace)?, q)?)
}

fn not_a_trace(trace: Option<&TraceIndex>) -> Result<&TraceIndex, ApiError> {
    trace.ok_or_else(|| {
        ApiError::bad("this run is not a trace: the timeline shows traces (Chrome, OTF2, TAU traces)")
    })
}
