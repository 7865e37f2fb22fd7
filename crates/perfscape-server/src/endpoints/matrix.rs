//! The matrix views: `GET /api/rows`, `/api/matrix`, `/api/overview`, `/api/terrain` and the
//! thread axis `/api/threads`.

use super::View;
use crate::error::ApiError;
use crate::request::{MatrixRequest, OverviewRequest, RowsRequest, TerrainRequest, ThreadsRequest};
use perfscape_analysis::answers::{
    self, MatrixResponse, OverviewResponse, RowsResponse, RunResolution, TerrainResponse, ThreadsResponse,
};

/// `GET /api/rows`.
pub fn rows(v: View<'_>, q: &RowsRequest) -> Result<RowsResponse, ApiError> {
    let spec = q.row_spec(q.values(v.profile.metrics())?);
    let set = v.rows(spec)?;
    Ok(answers::rows(&set, spec.rows))
}

/// `GET /api/matrix`, with the whole run's colour range when `wh` and `ww` are given. A `reduce=sum` over a metric that does not add up is refused (400)
/// before anything is built.
pub fn matrix(v: View<'_>, q: &MatrixRequest) -> Result<MatrixResponse, ApiError> {
    let values = q.values(v.profile.metrics())?;
    let reduce = values.check_reduce(v.profile.metrics(), q.reduce.unwrap_or_default())?;
    let run = q.wh.zip(q.ww).map(|(h, w)| RunResolution { h, w });
    let region = q.region();
    let parts = if run.is_some() {
        v.matrix_input(q.row_spec(values), q.axis())?
    } else {
        v.matrix_region_input(q.row_spec(values), q.axis(), &region)?
    };
    Ok(answers::matrix(
        &parts.input(v.profile),
        &region,
        reduce,
        q.thread.map(|t| t.0),
        run,
    )?)
}

/// `GET /api/overview`. A `reduce=sum` over a metric that does not add up is refused (400)
/// before anything is built.
pub fn overview(v: View<'_>, q: &OverviewRequest) -> Result<OverviewResponse, ApiError> {
    let values = q.values(v.profile.metrics())?;
    let reduce = values.check_reduce(v.profile.metrics(), q.reduce.unwrap_or_default())?;
    let parts = v.matrix_input(q.row_spec(values), q.axis())?;
    Ok(answers::overview(&parts.input(v.profile), &q.options(), reduce)?)
}

/// `GET /api/terrain`.
pub fn terrain(v: View<'_>, q: &TerrainRequest) -> Result<TerrainResponse, ApiError> {
    let parts = v.matrix_input(q.row_spec(q.values(v.profile.metrics())?), q.axis())?;
    Ok(answers::terrain(
        &parts.input(v.profile),
        &q.region(),
        q.peaks,
        q.thread.map(|t| t.0),
    ))
}

/// `GET /api/threads`.
pub fn threads(v: View<'_>, q: &ThreadsRequest) -> Result<ThreadsResponse, ApiError> {
    let values = q.values(v.profile.metrics())?;
    let info = v.axis(q.axis(), values)?;
    Ok(answers::threads(v.profile, &info, values.metric))
}
