//! `GET /api/comm`: the communication matrix (senders × receivers) of one path and statistic.

use super::View;
use crate::error::ApiError;
use crate::request::CommRequest;
use perfscape_analysis::answers::{CommResponse, comm_view};
use perfscape_analysis::comm::comm_matrix;

/// The matrix of `q`: the run's communication matrix (built once per profile, cached) binned
/// to the region and resolution asked for. 404 when the run has none or no such path.
pub fn get(v: View<'_>, q: &CommRequest) -> Result<CommResponse, ApiError> {
    let m = v.cache.comm(v.slot, || comm_matrix(v.profile))?;
    Ok(comm_view(&m, &q.params())?)
}
