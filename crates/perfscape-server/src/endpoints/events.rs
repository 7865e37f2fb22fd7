//! `GET /api/events`: the ranked event table.

use super::View;
use crate::error::ApiError;
use crate::request::EventsRequest;
use perfscape_analysis::answers::{EventsResponse, events};
use std::sync::Arc;

/// The ranked table of `q`'s metric and kind (cached per metric, kind and callpaths).
pub fn get(v: View<'_>, q: &EventsRequest) -> Result<Arc<EventsResponse>, ApiError> {
    let values = q.values(v.profile.metrics())?;
    let callpaths = q.callpaths.unwrap_or(false);
    v.cache
        .events(v.slot, values, callpaths, || events(v.profile, values, callpaths))
}
