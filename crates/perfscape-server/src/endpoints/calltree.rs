//! `GET /api/calltree`: the call tree in a scope.

use super::View;
use crate::error::ApiError;
use crate::request::CallTreeRequest;
use perfscape_analysis::answers::{CallTreeResponse, call_tree_table};

/// The call tree for `q`.
pub fn get(v: View<'_>, q: &CallTreeRequest) -> Result<CallTreeResponse, ApiError> {
    let values = perfscape_analysis::params::Values::new(v.profile.metrics(), q.metric, None)?;
    Ok(call_tree_table(
        v.profile,
        values.metric,
        q.scope.unwrap_or_default(),
    )?)
}
