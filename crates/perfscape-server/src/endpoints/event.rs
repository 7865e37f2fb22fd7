//! `GET /api/event/{id}`: one event across threads.

use super::View;
use crate::error::ApiError;
use crate::request::EventRequest;
use perfscape_analysis::answers::{EventDetail, event_detail};

/// Event `id` for `q`.
pub fn get(v: View<'_>, id: u32, q: &EventRequest) -> Result<EventDetail, ApiError> {
    let values = q.values(v.profile.metrics())?;
    Ok(event_detail(v.profile, id, values, q.bins, q.points)?)
}
