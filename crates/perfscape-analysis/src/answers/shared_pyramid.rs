//! One pyramid of event rows per value kind and thread axis, shared by every row order and
//! `callpaths` choice, and by the first `n` threads of the axis: the pyramid a matrix view
//! reads is cut from it ([`derived_pyramid`]) instead of built, when that gives the same
//! answers.
//!
//! The event rows of any [`RowSpec`] are some of the rows of [`RowSpec::shared`] (every event
//! with data, callpaths too, in file order), each with the same cells; the first `n` threads
//! of an axis ([`crate::axis::AxisSubset::Top`]) have the same positions as the whole axis up
//! to `n`. See [`Pyramid::select_rows`] and [`Pyramid::first_cols`].

use super::matrix::{RowSpec, profile_matrix};
use crate::axis::AxisInfo;
use crate::params::Values;
use crate::pyramid::{Pyramid, rows_with_cells, same_first_level};
use crate::views::{RowKind, RowOrder, RowSet};
use perfscape_model::{EventId, Profile};
use std::collections::HashMap;
use std::ops::Deref;

impl RowSpec {
    /// The rows whose pyramid this spec's pyramid can be cut from: for event rows, every
    /// event with data, callpaths too, in file order (of the same values); `None` for source
    /// lines (one row set whatever the order: [`RowSpec::canonical`]).
    pub fn shared(self) -> Option<RowSpec> {
        match self.rows {
            RowKind::Events => Some(RowSpec {
                callpaths: true,
                order: RowOrder::File,
                ..self
            }),
            RowKind::Lines => None,
        }
    }
}

/// The pyramid of `values` on `rows` × `axis`, cut from the pyramid of the same values on
/// `base_rows` × `base_axis` ([`super::build_pyramid`] with `level_cells`), which `base`
/// gives (built or cached) only once the cut is known to apply: its rows are the base's rows
/// with the same events, its levels the base's (shared). Cost `O(rows + threads)`.
///
/// `Ok(None)` — build it instead — when a row of `rows` is not one of `base_rows`, when `axis`
/// is not the first threads of `base_axis`, or when a pyramid built directly would store
/// another first level (its sums would be added in another order): whenever `Some`, every
/// answer equals that of the pyramid built directly, bit for bit. Errors: `base`'s.
pub fn derived_pyramid<P, E>(
    profile: &Profile,
    values: Values,
    (base_rows, base_axis): (&RowSet, &AxisInfo),
    base: impl FnOnce() -> Result<P, E>,
    (rows, axis): (&RowSet, &AxisInfo),
    level_cells: usize,
) -> Result<Option<Pyramid>, E>
where
    P: Deref<Target = Pyramid>,
{
    let n = axis.axis.len();
    let whole = base_axis.axis.len();
    if n > whole || axis.axis.order[..] != base_axis.axis.order[..n] {
        return Ok(None);
    }
    let stored = rows_with_cells(profile, &rows.rows);
    let base_stored = rows_with_cells(profile, &base_rows.rows);
    if !same_first_level((base_stored, whole), (stored, n), level_cells) {
        return Ok(None);
    }
    let slot: HashMap<&[EventId], usize> = base_rows
        .rows
        .iter()
        .enumerate()
        .map(|(i, row)| (&row.events[..], i))
        .collect();
    let Some(map) = rows
        .rows
        .iter()
        .map(|row| slot.get(&row.events[..]).copied())
        .collect::<Option<Vec<usize>>>()
    else {
        return Ok(None);
    };
    let base = base()?;
    if base.rows() != base_rows.len() || base.cols() != whole {
        return Ok(None);
    }
    let Some(selected) = base.select_rows(&map) else {
        return Ok(None);
    };
    if n == whole {
        return Ok(Some(selected));
    }
    Ok(selected.first_cols(&profile_matrix(profile, values, rows, axis), n))
}

#[cfg(test)]
mod tests;
