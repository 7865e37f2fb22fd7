//! Runs observed over time: `GET /api/series`, `/api/trend`, `/api/kiviat` (views of the
//! series) and `/api/pointcloud` (a view of one sample's profile, or the run's).

use super::View;
use crate::error::ApiError;
use crate::request::{KiviatRequest, PointCloudRequest, TrendRequest};
use crate::series::SeriesState;
use perfscape_analysis::answers::{
    self, KiviatParams, KiviatResponse, PointCloudResponse, SeriesResponse, TrendResponse,
};
use perfscape_model::SampleMode;

/// `GET /api/series`: the samples (an empty list for runs without any).
pub fn samples(s: &SeriesState) -> SeriesResponse {
    let series = s.series().map(|x| x.read());
    answers::samples(series.as_ref().map(|g| &***g), s.is_live())
}

/// `GET /api/trend`. Errors: 400 without a series or an `event`, 404 for an unknown event.
pub fn trend(s: &SeriesState, q: &TrendRequest) -> Result<TrendResponse, ApiError> {
    let series = s.read()?;
    let values = q.values(series.metrics())?;
    let event = q
        .event
        .ok_or_else(|| ApiError::bad("trend: `event` is required"))?;
    Ok(answers::trend(
        &series,
        event,
        values,
        q.mode.unwrap_or(SampleMode::Cumulative),
    )?)
}

/// `GET /api/kiviat`. Errors: 400 without a series or for too many events or threads, 404 for
/// unknown ids.
pub fn kiviat(s: &SeriesState, q: &KiviatRequest) -> Result<KiviatResponse, ApiError> {
    let series = s.read()?;
    let params = KiviatParams {
        values: q.values(series.metrics())?,
        mode: q.mode.unwrap_or(SampleMode::Cumulative),
        events: q.events.clone(),
        threads: q.threads_list.clone(),
        thread: q.thread.map(|t| t.0),
    };
    Ok(answers::kiviat(&series, &params)?)
}

/// `GET /api/pointcloud`.
pub fn pointcloud(v: View<'_>, q: &PointCloudRequest) -> Result<PointCloudResponse, ApiError> {
    let values = q.values(v.profile.metrics())?;
    Ok(answers::point_cloud(
        v.profile,
        values,
        q.events.as_ref(),
        q.points_max,
    )?)
}
