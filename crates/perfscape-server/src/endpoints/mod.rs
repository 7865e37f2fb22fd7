//! The endpoints, one file per view: each turns its typed request into the cached
//! intermediates it needs and asks one [`perfscape_analysis::answers`] function.
//!
//! A view endpoint runs on the blocking pool against a [`View`]: the profile the request's
//! `sample`/`mode` name (the run's or a sample's) and the server's cache.

pub mod calltree;
pub mod compare;
pub mod event;
pub mod events;
pub mod matrix;
pub mod run;
pub mod series;
#[cfg(feature = "sql")]
pub mod sql;
pub mod timeline;

use crate::cache::{Slot, ViewCache};
use crate::error::ApiError;
use perfscape_analysis::answers::{MatrixInput, RowSpec, build_pyramid};
use perfscape_analysis::axis::{AxisInfo, AxisParams, AxisSpec, build_axis};
use perfscape_analysis::params::Values;
use perfscape_analysis::pyramid::Pyramid;
use perfscape_analysis::views::RowSet;
use perfscape_model::Profile;
use std::sync::Arc;

/// The profile a request reads and the cache of the server.
#[derive(Clone, Copy)]
pub struct View<'a> {
    /// The profile (the run's or a sample's).
    pub profile: &'a Profile,
    /// Which one it is (cache entries are kept per slot).
    pub slot: Slot,
    /// The server's cache.
    pub cache: &'a ViewCache,
}

/// A matrix view's cached inputs (see [`View::matrix_input`]).
pub struct MatrixParts {
    values: Values,
    rows: Arc<RowSet>,
    axis: Arc<AxisInfo>,
    pyramid: Arc<Pyramid>,
}

impl MatrixParts {
    /// The inputs of the analysis' matrix views.
    pub fn input<'a>(&'a self, profile: &'a Profile) -> MatrixInput<'a> {
        MatrixInput {
            profile,
            values: self.values,
            rows: &self.rows,
            axis: &self.axis,
            pyramid: &self.pyramid,
        }
    }
}

impl<'a> View<'a> {
    /// A view of the profile in `slot`.
    pub fn new(profile: &'a Profile, slot: Slot, cache: &'a ViewCache) -> Self {
        Self { profile, slot, cache }
    }

    /// The rows `spec` names (cached).
    pub fn rows(&self, spec: RowSpec) -> Result<Arc<RowSet>, ApiError> {
        self.cache.rows(self.slot, spec, || spec.build(self.profile))
    }

    /// The thread axis of `params` for `values` (cached).
    pub fn axis(&self, params: AxisParams, values: Values) -> Result<Arc<AxisInfo>, ApiError> {
        self.axis_of(params.resolve(self.profile, values)?)
    }

    fn axis_of(&self, spec: AxisSpec) -> Result<Arc<AxisInfo>, ApiError> {
        self.cache
            .axis(self.slot, spec, || build_axis(self.profile, &spec))
    }

    /// The rows, the thread axis and their pyramid (each cached).
    pub fn matrix_input(&self, rows: RowSpec, axis: AxisParams) -> Result<MatrixParts, ApiError> {
        let values = rows.values;
        let spec = axis.resolve(self.profile, values)?;
        let set = self.rows(rows)?;
        let info = self.axis_of(spec)?;
        let pyramid = self
            .cache
            .pyramid(self.slot, (rows, set.len()), (spec, info.axis.len()), |cells| {
                build_pyramid(self.profile, values, &set, &info, cells)
            })?;
        Ok(MatrixParts {
            values,
            rows: set,
            axis: info,
            pyramid,
        })
    }
}
