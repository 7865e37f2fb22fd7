//! `GET /api/timeline`: the lanes of a trace at screen resolution.

use crate::error::ApiError;
use crate::request::TimelineRequest;
use perfscape_analysis::answers::{TimelineResponse, TraceIndex, timeline};
use perfscape_model::Profile;

/// The timeline of `trace` for `q` (flags matched against `profile`'s events). Errors: 400
/// for a run that is not a trace or a window that is not a range, 404 for an unknown flagged
/// event.
pub fn get(
    trace: Option<&TraceIndex>,
    profile: Option<&Profile>,
    q: &TimelineRequest,
) -> Result<TimelineResponse, ApiError> {
    let trace = trace.ok_or_else(|| {
        ApiError::bad("this run is not a trace: the timeline shows Chrome traces (Chrome Trace Event JSON)")
    })?;
    Ok(timeline(trace, profile, q)?)
}
