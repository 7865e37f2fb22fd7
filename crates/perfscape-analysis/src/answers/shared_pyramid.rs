//! One pyramid of event rows per value kind and thread axis, shared by every row order and
//! `callpaths` choice, and by the first `n` threads of the axis: the pyramid a matrix view
//! reads is cut from it ([`derived_pyramid`]) instead of built, when that gives the same
//! answers.
//!
//! The event rows of any [`RowSpec`] are some of the rows of [`RowSpec::shared`] (every event
//! with data, callpaths too, in file order), each with the same cells; the first `n` threads
//! of an axis ([`crate::axis::AxisSubset::Top`]) have the same positions as the whole axis up
//! to `n`. See [`Pyramid::select_rows`] and [`Pyramid::first_cols`].

use super::matrix::RowSpec;
use crate::axis::AxisInfo;
use crate::params::Values;
use crate::pyramid::{ProfileMatrix, Pyramid, rows_with_cells, same_first_level};
use crate::views::{RowKind, RowOrder, RowSet};
use perfscape_model::{EventId, Profile};
use std::collections::HashMap;

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

/// The pyramid of `values` on `rows` × `axis`, cut from `base`, the pyramid of the same values
/// on `base_rows` × `base_axis` ([`super::build_pyramid`] with `level_cells`): its rows are
/// `base`'s rows with the same events, its levels `base`'s (shared). Cost `O(rows + threads)`.
///
/// `None` — build it instead — when a row of `rows` is not one of `base_rows`, when `axis`
/// is not the first threads of `base_axis`, or when a pyramid built directly would store
/// another first level (its sums would be added in another order): whenever `Some`, every
/// answer equals that of the pyramid built directly, bit for bit.
pub fn derived_pyramid(
    profile: &Profile,
    values: Values,
    (base_rows, base_axis, base): (&RowSet, &AxisInfo, &Pyramid),
    (rows, axis): (&RowSet, &AxisInfo),
    level_cells: usize,
) -> Option<Pyramid> {
    let n = axis.axis.len();
    let whole = base_axis.axis.len();
    if base.rows() != base_rows.len() || base.cols() != whole || n > whole {
        return None;
    }
    if axis.axis.order[..] != base_axis.axis.order[..n] {
        return None;
    }
    let stored = rows_with_cells(profile, &rows.rows);
    let base_stored = rows_with_cells(profile, &base_rows.rows);
    if !same_first_level((base_stored, whole), (stored, n), level_cells) {
        return None;
    }
    let slot: HashMap<&[EventId], usize> = base_rows
        .rows
        .iter()
        .enumerate()
        .map(|(i, row)| (&row.events[..], i))
        .collect();
    let map: Vec<usize> = rows
        .rows
        .iter()
        .map(|row| slot.get(&row.events[..]).copied())
        .collect::<Option<_>>()?;
    let selected = base.select_rows(&map)?;
    if n == whole {
        return Some(selected);
    }
    let src = ProfileMatrix {
        profile,
        rows,
        axis: &axis.axis,
        kind: values.kind,
        metric: values.metric,
    };
    selected.first_cols(&src, n)
}

#[cfg(test)]
mod tests;
