//! `GET /api/userevents` and `GET /api/userevent/{id}`: user (atomic) events.

use super::View;
use crate::error::ApiError;
use crate::request::{UserEventRequest, UserEventsRequest};
use perfscape_analysis::answers::{UserEventDetail, UserEventsResponse, user_event_detail, user_events};

/// Every user event, with the statistics of `q.thread` when given.
pub fn list(v: View<'_>, q: &UserEventsRequest) -> Result<UserEventsResponse, ApiError> {
    let thread = match &q.thread {
        Some(a) => Some(
            v.profile
                .thread_index(a.0)
                .ok_or_else(|| ApiError::not_found(format!("no thread {}", a.0)))?,
        ),
        None => None,
    };
    Ok(user_events(v.profile, thread))
}

/// User event `id` on every thread.
pub fn detail(v: View<'_>, id: u32, q: &UserEventRequest) -> Result<UserEventDetail, ApiError> {
    Ok(user_event_detail(v.profile, id, q.points)?)
}
