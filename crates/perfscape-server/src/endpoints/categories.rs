//! `GET /api/categories`: time per category and POP's efficiency metrics.

use super::View;
use crate::error::ApiError;
use crate::request::CategoriesRequest;
use perfscape_analysis::answers::{CategoriesResponse, categories_view};
use perfscape_analysis::categories::RuleSet;
use perfscape_analysis::params::Values;

/// The categories of `q` under `rules` (the defaults, or `serve --rules FILE` before them).
pub fn get(v: View<'_>, q: &CategoriesRequest, rules: &RuleSet) -> Result<CategoriesResponse, ApiError> {
    let values = Values::new(v.profile.metrics(), q.metric, None)?;
    Ok(categories_view(
        v.profile,
        values.metric,
        rules,
        q.sort,
        q.points,
        q.thread.map(|t| t.0),
    )?)
}
