//! `GET /api/comm`: the communication matrix (senders × receivers) of one path and statistic.

use super::View;
use crate::cache::Slot;
use crate::error::ApiError;
use crate::request::CommRequest;
use crate::state::AppState;
use perfscape_analysis::answers::{CommResponse, comm_view};
use perfscape_analysis::comm::{CommMatrix, comm_matrix, comm_matrix_from_trace};
use perfscape_model::Trace;
use std::sync::Arc;

/// The trace of the profile in `slot`: the run's trace for the run's own profile, none for a
/// sample's.
pub fn trace_of(s: &AppState, slot: Slot) -> Option<&Trace> {
    match slot {
        Slot::Run => s.trace.as_ref().map(|t| t.trace()),
        _ => None,
    }
}

/// The communication matrix of `v` (built once per profile, cached): the TAU comm-matrix
/// events' when the profile has them, else the messages of `trace` (the run's trace, if it
/// is one).
pub fn matrix(v: View<'_>, trace: Option<&Trace>) -> Result<Arc<CommMatrix>, ApiError> {
    v.cache.comm(v.slot, || {
        let m = comm_matrix(v.profile);
        match trace {
            Some(t) if m.is_empty() => comm_matrix_from_trace(t),
            _ => m,
        }
    })
}

/// The matrix of `q` (see [`matrix`]) binned to the region and resolution asked for. 404
/// when the run has none or no such path.
pub fn get(v: View<'_>, trace: Option<&Trace>, q: &CommRequest) -> Result<CommResponse, ApiError> {
    let m = matrix(v, trace)?;
    Ok(comm_view(&m, &q.params())?)
}
