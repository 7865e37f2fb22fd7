//! `GET /api/findings` and `GET /api/architecture`: what is wrong with the run, and its
//! processes with the channels between them. Both split time by the server's category rules.

use super::View;
use crate::error::ApiError;
use crate::request::{ArchitectureRequest, FindingsRequest};
use perfscape_analysis::answers::{
    ArchitectureResponse, CategoryJson, FindingsResponse, RankChannel, architecture, findings_view,
};
use perfscape_analysis::categories::{RuleSet, categorize};
use perfscape_analysis::comm::ALL_PATHS;
use perfscape_analysis::findings::FindingOptions;
use perfscape_analysis::params::Values;

/// The findings of `q` (categories by `rules`: which events are useful work), with the wait
/// states of `trace` (the run's trace, if it is one).
pub fn findings(
    v: View<'_>,
    trace: Option<&perfscape_model::Trace>,
    q: &FindingsRequest,
    rules: &RuleSet,
) -> Result<FindingsResponse, ApiError> {
    let m = Values::new(v.profile.metrics(), q.metric, None)?.metric;
    let mut opts = FindingOptions::default();
    if let Some(r) = q.straggler_ratio {
        if !(r.is_finite() && r > 1.0) {
            return Err(ApiError::bad(format!(
                "straggler_ratio `{r}`: expected a number above 1"
            )));
        }
        opts.straggler_ratio = r;
    }
    if let Some(x) = q.imbalance_min {
        if !(x.is_finite() && x >= 0.0) {
            return Err(ApiError::bad(format!(
                "imbalance_min `{x}`: expected a number of 0 or more"
            )));
        }
        opts.imbalance_min = x;
    }
    if let Some(n) = q.n {
        opts.max_per_kind = n.clamp(1, 1000) as usize;
    }
    // A metric that does not add up has no categories: its findings are the stragglers.
    let cat = categorize(v.profile, m, rules).ok();
    Ok(findings_view(v.profile, m, cat.as_ref(), &opts, trace))
}

/// The architecture view of `q`: category times by `rules`, channels from the TAU
/// communication matrix, or the messages of `trace` (all paths; the server's cached one,
/// built once per profile: [`super::comm::matrix`]).
pub fn architecture_view(
    v: View<'_>,
    trace: Option<&perfscape_model::Trace>,
    q: &ArchitectureRequest,
    rules: &RuleSet,
) -> Result<ArchitectureResponse, ApiError> {
    let m = Values::new(v.profile.metrics(), q.metric, None)?.metric;
    let cat = categorize(v.profile, m, rules)?;
    // The same cached matrix `/api/comm` reads.
    let comm = super::comm::matrix(v, trace)?;
    let channels: Vec<RankChannel> = comm
        .path(ALL_PATHS)
        .map(|p| {
            p.cells
                .iter()
                .map(|c| RankChannel {
                    sender: c.sender,
                    receiver: c.receiver,
                    messages: c.calls,
                    bytes: c.volume_bytes,
                    min_bytes: c.min_bytes,
                    max_bytes: c.max_bytes,
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(architecture(
        v.profile,
        cat.categories
            .iter()
            .map(|c| CategoryJson {
                name: c.name.clone(),
                class: c.class,
                useful: c.class.is_useful(),
            })
            .collect(),
        v.profile.metric(m).unit.symbol().to_string(),
        &cat.thread_times,
        &channels,
    ))
}
