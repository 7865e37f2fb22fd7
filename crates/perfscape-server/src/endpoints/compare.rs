//! Runs side by side (`serve A B...`): `GET /api/diff`, `/api/diff/threads`, `/api/diff/matrix`
//! (the main run against a run served beside it, per event, per thread of one event, as a heat
//! map) and `GET /api/scaling` (a scaling study of all the served runs).

use crate::error::ApiError;
use crate::request::{DiffMatrixRequest, DiffRequest, DiffThreadsRequest, DiffTreeRequest, ScalingRequest};
use crate::state::ComparedRun;
use perfscape_analysis::answers::{
    DiffMatrixResponse, DiffParams, DiffResponse, DiffShow, DiffThreadsResponse, ScalingResponse,
    diff_matrix, diff_table, diff_threads, scaling_view,
};
use perfscape_analysis::answers::{DiffTreeResponse, diff_call_tree};
use perfscape_analysis::compare::diff::DiffSort;
use perfscape_analysis::compare::scaling::process_count;
use perfscape_analysis::params::Values;
use perfscape_model::{EventId, Profile};

/// Rows answered when the request names no `n`.
pub const DIFF_ROWS_DEFAULT: u32 = 500;

/// Run B of a request: `compared[run - 1]` and its match with `a`.
fn run_b<'a>(
    a: &Profile,
    compared: &'a [ComparedRun],
    run: Option<u32>,
) -> Result<(&'a Profile, &'a perfscape_analysis::compare::matching::RunMatch), ApiError> {
    let i = run.unwrap_or(1);
    let c = (i as usize)
        .checked_sub(1)
        .and_then(|k| compared.get(k))
        .ok_or_else(|| {
            ApiError::bad(format!(
                "run={i}: the server compares with {} run(s), numbered from 1 (serve A B... gives them)",
                compared.len()
            ))
        })?;
    if let Err(e) = &c.run {
        return Err(ApiError::unavailable(format!(
            "run {i} ({}) did not load: {e}",
            c.path
        )));
    }
    c.matched(a).map_err(ApiError::bad)
}

/// The table of `q`: run A against run `q.run`.
pub fn diff(a: &Profile, compared: &[ComparedRun], q: &DiffRequest) -> Result<DiffResponse, ApiError> {
    let (b, matched) = run_b(a, compared, q.run)?;
    let values = q.values(a.metrics())?;
    let params = DiffParams {
        metric: values.metric,
        kind: values.kind,
        normalize: q.normalize,
        callpaths: q.callpaths.unwrap_or(false),
        sort: q.sort.unwrap_or(DiffSort::AbsDelta),
        n: q.n.unwrap_or(DIFF_ROWS_DEFAULT) as usize,
    };
    Ok(diff_table(a, b, matched, params)?)
}

/// Event `q.event` of run A against run `q.run`, per thread.
pub fn threads(
    a: &Profile,
    compared: &[ComparedRun],
    q: &DiffThreadsRequest,
) -> Result<DiffThreadsResponse, ApiError> {
    let (b, matched) = run_b(a, compared, q.run)?;
    let values = q.values(a.metrics())?;
    Ok(diff_threads(
        a,
        b,
        matched,
        EventId(q.event),
        values.metric,
        values.kind,
    )?)
}

/// The diff heat map of `q`: run A against run `q.run`, events × common threads in bins.
pub fn matrix(
    a: &Profile,
    compared: &[ComparedRun],
    q: &DiffMatrixRequest,
) -> Result<DiffMatrixResponse, ApiError> {
    let (b, matched) = run_b(a, compared, q.run)?;
    let values = q.values(a.metrics())?;
    let rows = q.rows.unwrap_or(40);
    let w = q.w.unwrap_or(400);
    if rows == 0 || rows > 1000 {
        return Err(ApiError::bad(format!("rows={rows}: between 1 and 1000")));
    }
    if w == 0 || w > 8192 {
        return Err(ApiError::bad(format!("w={w}: between 1 and 8192")));
    }
    let params = DiffParams {
        metric: values.metric,
        kind: values.kind,
        normalize: None,
        callpaths: q.callpaths.unwrap_or(false),
        sort: DiffSort::AbsDelta,
        n: rows as usize,
    };
    Ok(diff_matrix(
        a,
        b,
        matched,
        params,
        q.show.unwrap_or(DiffShow::Delta),
        w as usize,
    )?)
}

/// The main run and the compared runs that loaded, each with its process count.
pub fn scaling_runs<'a>(a: &'a Profile, compared: &'a [ComparedRun]) -> Vec<(f64, &'a Profile)> {
    std::iter::once(a)
        .chain(
            compared
                .iter()
                .filter_map(|c| c.run.as_ref().ok().map(|r| &r.profile)),
        )
        .map(|p| (process_count(p) as f64, p))
        .collect()
}

/// The scaling study of the served runs.
pub fn scaling(
    a: &Profile,
    compared: &[ComparedRun],
    q: &ScalingRequest,
) -> Result<ScalingResponse, ApiError> {
    let values = q.values(a.metrics())?;
    let runs = scaling_runs(a, compared);
    Ok(scaling_view(
        &runs,
        values.metric,
        values.kind,
        q.callpaths.unwrap_or(false),
    )?)
}

/// The call trees of run A and run `q.run` as one.
pub fn calltree(
    a: &Profile,
    compared: &[ComparedRun],
    q: &DiffTreeRequest,
) -> Result<DiffTreeResponse, ApiError> {
    let (b, matched) = run_b(a, compared, q.run)?;
    let values = Values::new(a.metrics(), q.metric, None)?;
    let params = DiffParams {
        metric: values.metric,
        kind: values.kind,
        normalize: q.normalize,
        callpaths: true,
        sort: DiffSort::AbsDelta,
        n: usize::MAX,
    };
    Ok(diff_call_tree(a, b, matched, params)?)
}
