//! The endpoints, one file per view: each turns its typed request into the cached
//! intermediates it needs and asks one [`perfscape_analysis::answers`] function.
//!
//! A view endpoint runs on the blocking pool against a [`View`]: the profile the request's
//! `sample`/`mode` name (the run's or a sample's) and the server's cache.

pub mod calltree;
pub mod categories;
pub mod comm;
pub mod compare;
pub mod event;
pub mod events;
pub mod findings;
pub mod matrix;
pub mod run;
pub mod series;
pub mod source;
#[cfg(feature = "sql")]
pub mod sql;
pub mod timeline;
pub mod user_events;

use crate::cache::{Slot, ViewCache};
use crate::error::ApiError;
use perfscape_analysis::answers::{
    MatrixInput, Region, RowSpec, build_pyramid, build_window_pyramid, derived_pyramid, region_rows,
};
use perfscape_analysis::axis::{AxisInfo, AxisParams, AxisSpec, AxisSubset, order_axis, subset_axis};
use perfscape_analysis::params::Values;
use perfscape_analysis::pyramid::{Pyramid, rows_with_cells};
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
    first_row: usize,
}

/// A matrix request over at most one row in this many is answered from a pyramid of its own
/// rows when the whole pyramid is not cached (see [`View::matrix_region_input`]).
const WINDOW_SHARE: usize = 4;

impl MatrixParts {
    /// The inputs of the analysis' matrix views.
    pub fn input<'a>(&'a self, profile: &'a Profile) -> MatrixInput<'a> {
        MatrixInput {
            profile,
            values: self.values,
            rows: &self.rows,
            axis: &self.axis,
            pyramid: &self.pyramid,
            first_row: self.first_row,
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

    /// The axis of `spec`, cached. A subset is cut from its order's whole axis, itself cached,
    /// so that the first 8, 9, ... 512 threads of one clustering cluster the threads once.
    fn axis_of(&self, spec: AxisSpec) -> Result<Arc<AxisInfo>, ApiError> {
        let whole = AxisSpec {
            order: spec.order,
            subset: AxisSubset::All,
        };
        let full = self
            .cache
            .axis(self.slot, whole, || order_axis(self.profile, spec.order))?;
        if spec.subset == AxisSubset::All {
            return Ok(full);
        }
        self.cache.axis(self.slot, spec, || {
            subset_axis(self.profile, &full, spec.order, spec.subset)
        })
    }

    /// The rows, the thread axis and their pyramid (each cached).
    pub fn matrix_input(&self, rows: RowSpec, axis: AxisParams) -> Result<MatrixParts, ApiError> {
        let spec = axis.resolve(self.profile, rows.values)?;
        let set = self.rows(rows)?;
        let info = self.axis_of(spec)?;
        self.whole_pyramid(rows, spec, set, info)
    }

    /// The inputs of a `GET /api/matrix` over `region` (without the whole run's range): the
    /// rows and the thread axis (cached), and the whole pyramid when it is cached or the region
    /// reads more than a quarter of the rows (then built and cached); else a pyramid of the
    /// region's rows alone, built for this request and not kept — a zoomed heat map of 60 of
    /// 5,000 source lines reads 60 rows, not 5,000. The answers are the same either way.
    pub fn matrix_region_input(
        &self,
        rows: RowSpec,
        axis: AxisParams,
        region: &Region,
    ) -> Result<MatrixParts, ApiError> {
        let values = rows.values;
        let spec = axis.resolve(self.profile, values)?;
        let set = self.rows(rows)?;
        let info = self.axis_of(spec)?;
        let window = region_rows(region, set.len());
        let (shared_rows, shared_axis) = shared_key(rows, spec);
        if window.len().saturating_mul(WINDOW_SHARE) > set.len()
            || self.cache.has_pyramid(self.slot, rows, spec)
            || self.cache.has_pyramid(self.slot, shared_rows, shared_axis)
        {
            return self.whole_pyramid(rows, spec, set, info);
        }
        let pyramid = self.cache.window_pyramid(
            (
                window.len(),
                rows_with_cells(self.profile, &set.rows[window.clone()]),
                info.axis.len(),
            ),
            |cells| build_window_pyramid(self.profile, values, &set, &info, window.clone(), cells),
        )?;
        Ok(MatrixParts {
            values,
            rows: set,
            axis: info,
            pyramid: Arc::new(pyramid),
            first_row: window.start,
        })
    }

    /// The whole pyramid of `rows` × `spec` (cached) and its inputs.
    fn whole_pyramid(
        &self,
        rows: RowSpec,
        spec: AxisSpec,
        set: Arc<RowSet>,
        info: Arc<AxisInfo>,
    ) -> Result<MatrixParts, ApiError> {
        let values = rows.values;
        let pyramid = match self.shared_pyramid(rows, spec, &set, &info)? {
            Some(cut) => cut,
            None => self.cache.pyramid(
                self.slot,
                (rows, set.len(), rows_with_cells(self.profile, &set.rows)),
                (spec, info.axis.len()),
                |cells| build_pyramid(self.profile, values, &set, &info, cells),
            )?,
        };
        Ok(MatrixParts {
            values,
            rows: set,
            axis: info,
            pyramid,
            first_row: 0,
        })
    }

    /// The pyramid of `rows` × `spec` cut from the pyramid of [`shared_key`] (the cut is not
    /// kept: it costs `O(rows + threads)`): every order and `callpaths` choice of event rows
    /// reads one pyramid (built and cached when missing), and the first `n` threads of an axis
    /// read the whole axis's pyramid when it is held. `None` when it is its own shared pyramid or when a cut would not answer as a
    /// pyramid built for it ([`derived_pyramid`]; a tight level budget): build it then.
    fn shared_pyramid(
        &self,
        rows: RowSpec,
        spec: AxisSpec,
        set: &RowSet,
        info: &AxisInfo,
    ) -> Result<Option<Arc<Pyramid>>, ApiError> {
        let (shared_rows, mut shared_axis) = shared_key(rows, spec);
        if shared_axis != spec && !self.cache.has_pyramid(self.slot, shared_rows, shared_axis) {
            // The whole axis's pyramid costs up to `threads / n` times the first n threads'
            // own: cut from it only when it is held.
            shared_axis = spec;
        }
        if (shared_rows, shared_axis) == (rows, spec) {
            return Ok(None);
        }
        let base_set = self.rows(shared_rows)?;
        let base_info = self.axis_of(shared_axis)?;
        let values = rows.values;
        // The shared pyramid is built (or found) only when the cut applies (`derived_pyramid`
        // checks first): a tight level budget would otherwise build one that is not read.
        let base = || {
            self.cache.pyramid(
                self.slot,
                (
                    shared_rows,
                    base_set.len(),
                    rows_with_cells(self.profile, &base_set.rows),
                ),
                (shared_axis, base_info.axis.len()),
                |cells| build_pyramid(self.profile, values, &base_set, &base_info, cells),
            )
        };
        let cut = derived_pyramid(
            self.profile,
            values,
            (&base_set, &base_info),
            base,
            (set, info),
            self.cache.level_cells(),
        )?;
        Ok(cut.map(Arc::new))
    }
}

/// The rows and axis of the pyramid the pyramid of `rows` × `spec` is cut from: every event
/// row ([`RowSpec::shared`]), and the whole axis of the first `n` threads.
fn shared_key(rows: RowSpec, spec: AxisSpec) -> (RowSpec, AxisSpec) {
    let axis = match spec.subset {
        AxisSubset::Top(_) => AxisSpec {
            order: spec.order,
            subset: AxisSubset::All,
        },
        _ => spec,
    };
    (rows.shared().unwrap_or(rows), axis)
}
