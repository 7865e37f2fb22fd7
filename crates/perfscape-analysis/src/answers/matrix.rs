//! The matrix views: the rows (`/api/rows`), the heat map (`/api/matrix`), seed 000's
//! overview (`/api/overview`) and the 3-D terrain (`/api/terrain`), each read from the
//! max/sum [`Pyramid`] of its rows × thread axis.

use crate::axis::AxisInfo;
use crate::error::ViewError;
use crate::params::Values;
use crate::pyramid::{ProfileMatrix, Pyramid, RowWindow};
use crate::views::{OverviewParams, Reduce, RowKind, RowOrder, RowSet, ThreadAxis};
use perfscape_model::{Profile, ThreadId};
use serde::Serialize;
use std::ops::Range;

/// A bin of rows or of threads in a matrix answer.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Bin {
    /// First position covered.
    pub first: u32,
    /// Last position covered (inclusive).
    pub last: u32,
    /// Label: the row's label or `first – last` labels.
    pub label: String,
    /// The event of a single-event row bin (for selection), if any.
    pub event: Option<u32>,
    /// The thread of a single-thread column bin (for selection), if any.
    pub thread: Option<String>,
}

/// `GET /api/matrix`: rows × threads reduced to at most h × w cells.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct MatrixResponse {
    /// Total rows in the row space (events or lines).
    pub row_count: u32,
    /// Total threads on the thread axis.
    pub thread_count: u32,
    /// Row bins, top to bottom.
    pub rows: Vec<Bin>,
    /// Thread bins, left to right.
    pub cols: Vec<Bin>,
    /// Cell values row-major (`rows.len() * cols.len()`), `null` = no data.
    pub values: Vec<Option<f64>>,
    /// Smallest cell value.
    pub min: Option<f64>,
    /// Largest cell value.
    pub max: Option<f64>,
    /// How cells were reduced: `max` or `sum`.
    pub reduce: String,
    /// Unit of the values.
    pub unit: String,
    /// Thread axis: `id`, `value` (by the value of `by_event`) or `cluster`; with `subset`.
    pub thread_order: String,
    /// Position on the thread axis of the `thread` asked about, if it is shown.
    pub thread_position: Option<u32>,
    /// With `threads=cluster`: the position where each cluster starts.
    pub cluster_starts: Vec<u32>,
    /// Size of the pyramid level the columns came from (bin width `2^level` threads).
    pub level: u32,
    /// The colour range of the whole run (asked for with `wh`, `ww`), else `null`.
    pub run: Option<RunRange>,
}

/// The values of the un-zoomed matrix (all rows × the whole thread axis, at `wh` × `ww` bins,
/// the same `reduce`), for colours that keep their meaning when the heat map zooms.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RunRange {
    /// Smallest cell of the whole matrix at `wh` × `ww` bins.
    pub min: Option<f64>,
    /// Largest cell of the whole matrix at `wh` × `ww` bins.
    pub max: Option<f64>,
    /// Per row bin of the answer: its largest cell over the whole thread axis at `ww` bins
    /// (per-event colours), `null` for a row without data.
    pub row_max: Vec<Option<f64>>,
}

/// One row of the overview.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct OverviewRowJson {
    /// First row position covered.
    pub first: u32,
    /// Last row position covered.
    pub last: u32,
    /// Label of the first row.
    pub label: String,
    /// Empty rows skipped just before this row.
    pub skipped_before: u32,
    /// Values per thread bin.
    pub values: Vec<Option<f64>>,
}

/// `GET /api/overview`: the seed's reduced overview in strips.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct OverviewResponse {
    /// Total rows in the row space.
    pub row_count: u32,
    /// Total threads.
    pub thread_count: u32,
    /// Thread bins.
    pub cols: Vec<Bin>,
    /// Strips side by side, each top to bottom.
    pub strips: Vec<Vec<OverviewRowJson>>,
    /// Empty rows in the row space.
    pub empty_rows: u32,
    /// Rows skipped in long empty runs.
    pub skipped_rows: u32,
    /// Largest value.
    pub max: Option<f64>,
    /// Unit of the values.
    pub unit: String,
    /// With `threads=cluster`: the position where each cluster starts.
    pub cluster_starts: Vec<u32>,
}

/// A labelled terrain peak.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PeakJson {
    /// Row bin index in the grid.
    pub row_bin: u32,
    /// Column bin index in the grid.
    pub col_bin: u32,
    /// Event id.
    pub event: u32,
    /// Event name.
    pub name: String,
    /// Thread.
    pub thread: String,
    /// Value.
    pub value: f64,
}

/// `GET /api/terrain`: a grid for a 3-D surface plus the k largest peaks.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct TerrainResponse {
    /// The grid (rows = events, cols = threads), reduced by MAX.
    pub grid: MatrixResponse,
    /// Largest cells, at most one per event, largest first.
    pub peaks: Vec<PeakJson>,
    /// Per grid cell (row-major, as `grid.values`): the event and thread of its largest
    /// value (the value it shows, as the grid is reduced by MAX), so that a click on a cell
    /// that covers many events or threads selects the one that makes its height. `None` for
    /// an empty cell.
    pub picks: Vec<Option<CellPick>>,
}

/// The event and thread of a terrain cell's largest value (the first in row and axis order on
/// ties).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct CellPick {
    /// Event id (the row's first event).
    pub event: u32,
    /// Thread (`N.C.T`).
    pub thread: String,
}

/// One row of the row space (events or source lines).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RowJson {
    /// Label.
    pub label: String,
    /// Events whose values the row holds.
    pub events: Vec<u32>,
}

/// `GET /api/rows`: the rows of the matrix views in display order (positions index this).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RowsResponse {
    /// `events` or `lines`.
    pub rows_kind: String,
    /// Rows.
    pub rows: Vec<RowJson>,
}

/// The rows of a matrix view, fully specified (the key their [`RowSet`] is cached under).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RowSpec {
    /// The metric and value kind (event rows are ranked by them).
    pub values: Values,
    /// Events or source lines.
    pub rows: RowKind,
    /// Callpath events as rows too.
    pub callpaths: bool,
    /// The order of event rows.
    pub order: RowOrder,
}

impl RowSpec {
    /// The same rows under one key: source-line rows depend neither on `callpaths` nor on
    /// `order` ([`RowSet::lines`]), so those are set to their defaults (a cache keyed by the
    /// spec then holds one row set and one pyramid per metric, kind and axis for them, not six).
    pub fn canonical(self) -> RowSpec {
        match self.rows {
            RowKind::Events => self,
            RowKind::Lines => RowSpec {
                callpaths: false,
                order: RowOrder::default(),
                ..self
            },
        }
    }

    /// The rows of `profile` this spec names.
    pub fn build(&self, profile: &Profile) -> RowSet {
        match self.rows {
            RowKind::Events => RowSet::events(
                profile,
                self.values.metric,
                self.values.kind,
                self.callpaths,
                self.order,
            ),
            RowKind::Lines => RowSet::lines(profile),
        }
    }
}

/// `GET /api/rows`: the rows in display order.
pub fn rows(set: &RowSet, kind: RowKind) -> RowsResponse {
    RowsResponse {
        rows_kind: match kind {
            RowKind::Events => "events".into(),
            RowKind::Lines => "lines".into(),
        },
        rows: set
            .rows
            .iter()
            .map(|row| RowJson {
                label: row.label.clone(),
                events: row.events.iter().map(|e| e.0).collect(),
            })
            .collect(),
    }
}

/// What a matrix view reads: the profile's `values` on `rows` × the thread axis, and the
/// pyramid built over them by [`build_pyramid`].
#[derive(Clone, Copy)]
pub struct MatrixInput<'a> {
    /// The profile.
    pub profile: &'a Profile,
    /// The metric and value kind.
    pub values: Values,
    /// The rows.
    pub rows: &'a RowSet,
    /// The thread axis.
    pub axis: &'a AxisInfo,
    /// The pyramid of `rows` × `axis` ([`build_pyramid`]), or of a window of the rows
    /// starting at `first_row` ([`build_window_pyramid`]: for [`matrix`] without the whole
    /// run's range only, over a region within the window).
    pub pyramid: &'a Pyramid,
    /// The first row the pyramid covers: 0 for a pyramid of all rows.
    pub first_row: usize,
}

impl<'a> MatrixInput<'a> {
    /// True when the pyramid covers every row.
    fn whole(&self) -> bool {
        self.first_row == 0 && self.pyramid.rows() == self.rows.len()
    }

    fn source(&self) -> ProfileMatrix<'a> {
        profile_matrix(self.profile, self.values, self.rows, self.axis)
    }
}

/// The cells a pyramid of `values` on `rows` × `axis` is built from (and reads its finest
/// blocks from): `values`' kind and metric of the profile, rows in `rows`' order, threads in
/// `axis`' order.
pub(crate) fn profile_matrix<'a>(
    profile: &'a Profile,
    values: Values,
    rows: &'a RowSet,
    axis: &'a AxisInfo,
) -> ProfileMatrix<'a> {
    ProfileMatrix {
        profile,
        rows,
        axis: &axis.axis,
        kind: values.kind,
        metric: values.metric,
    }
}

/// The max/sum pyramid of `values` on `rows` × `axis`, storing levels of at most
/// `level_cells` cells ([`crate::pyramid::DEFAULT_LEVEL_CELLS`] unless memory is short; the
/// answers are the same for any budget, finer blocks are then read from the profile).
pub fn build_pyramid(
    profile: &Profile,
    values: Values,
    rows: &RowSet,
    axis: &AxisInfo,
    level_cells: usize,
) -> Pyramid {
    let src = profile_matrix(profile, values, rows, axis);
    Pyramid::build(&src, level_cells)
}

/// The rows `region` reads of a matrix of `rows` rows (its `r0`..`r1`, clamped): the window a
/// pyramid for [`matrix`] must cover.
pub fn region_rows(region: &Region, rows: usize) -> Range<usize> {
    clamp_range(region.r0, region.r1, rows)
}

/// The pyramid of the rows `window` only (see [`build_pyramid`]): reads `window.len()` rows ×
/// the axis instead of every row, for a [`matrix`] request over a region within the window
/// while the whole pyramid is not at hand. Use it with `first_row: window.start`.
pub fn build_window_pyramid(
    profile: &Profile,
    values: Values,
    rows: &RowSet,
    axis: &AxisInfo,
    window: Range<usize>,
    level_cells: usize,
) -> Pyramid {
    let src = profile_matrix(profile, values, rows, axis);
    let window = window.start.min(rows.len())..window.end.min(rows.len());
    Pyramid::build(
        &RowWindow {
            src: &src,
            rows: window,
        },
        level_cells,
    )
}

/// A region of the matrix and the resolution asked for (the `r0`, `r1`, `t0`, `t1`, `h`, `w`
/// parameters). Positions beyond the matrix are clamped; an empty or reversed range is empty.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Region {
    /// First row position (default 0).
    pub r0: Option<u32>,
    /// End row position, exclusive (default all).
    pub r1: Option<u32>,
    /// First thread position (default 0).
    pub t0: Option<u32>,
    /// End thread position, exclusive (default all).
    pub t1: Option<u32>,
    /// Most row bins (default 200 for the heat map, 40 for the terrain; 1..=4096).
    pub h: Option<u32>,
    /// Most thread bins (default 400 for the heat map, 64 for the terrain; 1..=4096).
    pub w: Option<u32>,
}

/// Most bins along either side of a matrix answer.
pub const BINS_MAX: u32 = 4096;

fn clamp_range(a: Option<u32>, b: Option<u32>, n: usize) -> Range<usize> {
    let s = (a.unwrap_or(0) as usize).min(n);
    let e = b.map_or(n, |b| (b as usize).min(n)).max(s);
    s..e
}

fn thread_bin_label(profile: &Profile, axis: &ThreadAxis, b: &Range<usize>) -> String {
    let first = profile.thread(axis.order[b.start]);
    if b.len() == 1 {
        first.to_string()
    } else {
        format!("{first} – {}", profile.thread(axis.order[b.end - 1]))
    }
}

fn col_bins_json(profile: &Profile, axis: &ThreadAxis, bins: &[Range<usize>]) -> Vec<Bin> {
    bins.iter()
        .map(|b| Bin {
            first: b.start as u32,
            last: (b.end - 1) as u32,
            label: thread_bin_label(profile, axis, b),
            event: None,
            thread: (b.len() == 1).then(|| profile.thread(axis.order[b.start]).to_string()),
        })
        .collect()
}

fn reduce_name(r: Reduce) -> String {
    match r {
        Reduce::Max => "max".into(),
        Reduce::Sum => "sum".into(),
    }
}

fn matrix_with(
    m: &MatrixInput<'_>,
    region: &Region,
    reduce: Reduce,
    thread: Option<ThreadId>,
    (h_default, w_default): (u32, u32),
) -> MatrixResponse {
    let (p, rows, axis) = (m.profile, m.rows, &m.axis.axis);
    let src = m.source();
    let rr = clamp_range(region.r0, region.r1, rows.len());
    let tr = clamp_range(region.t0, region.t1, axis.len());
    let h = region.h.unwrap_or(h_default).clamp(1, BINS_MAX) as usize;
    let w = region.w.unwrap_or(w_default).clamp(1, BINS_MAX) as usize;
    let g = if m.whole() {
        m.pyramid.grid(&src, rr, tr, h, w, reduce)
    } else {
        // A window pyramid: the region in the window's rows, the row bins back in the matrix's.
        let first = m.first_row;
        debug_assert!(rr.start >= first && rr.end <= first + m.pyramid.rows() || rr.is_empty());
        let window = RowWindow {
            src: &src,
            rows: first..first + m.pyramid.rows(),
        };
        let local = rr.start.saturating_sub(first)..rr.end.saturating_sub(first);
        let mut g = m.pyramid.grid(&window, local, tr, h, w, reduce);
        for b in &mut g.row_bins {
            *b = b.start + first..b.end + first;
        }
        g
    };
    let min = g.values.iter().flatten().copied().reduce(f64::min);
    let max = g.values.iter().flatten().copied().reduce(f64::max);
    let thread_position = thread
        .and_then(|id| p.thread_index(id))
        .and_then(|ti| axis.position(ti))
        .map(|x| x as u32);
    MatrixResponse {
        row_count: rows.len() as u32,
        thread_count: axis.len() as u32,
        rows: g
            .row_bins
            .iter()
            .map(|b| Bin {
                first: b.start as u32,
                last: (b.end - 1) as u32,
                label: if b.len() == 1 {
                    rows.rows[b.start].label.clone()
                } else {
                    format!("{} (+{} more)", rows.rows[b.start].label, b.len() - 1)
                },
                event: if b.len() == 1 && rows.rows[b.start].events.len() == 1 {
                    Some(rows.rows[b.start].events[0].0)
                } else {
                    None
                },
                thread: None,
            })
            .collect(),
        cols: col_bins_json(p, axis, &g.col_bins),
        min,
        max,
        values: g.values,
        reduce: reduce_name(reduce),
        unit: m.values.unit(p.metrics()),
        thread_order: m.axis.label.clone(),
        thread_position,
        cluster_starts: m.axis.cluster_starts.clone(),
        level: g.level,
        run: None,
    }
}

/// The resolution of the whole-run colour range (`wh`, `ww`: the heat map's un-zoomed bins).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunResolution {
    /// Most row bins of the un-zoomed matrix (1..=4096).
    pub h: u32,
    /// Most thread bins of the un-zoomed matrix (1..=4096).
    pub w: u32,
}

/// The [`RunRange`] of the whole matrix at `res` for the answer `g` (whose row bins it gives
/// the per-row maxima of).
fn run_range(m: &MatrixInput<'_>, g: &MatrixResponse, res: RunResolution, reduce: Reduce) -> RunRange {
    let src = m.source();
    let (rows, cols) = (m.rows.len(), m.axis.axis.len());
    let h = res.h.clamp(1, BINS_MAX) as usize;
    let w = res.w.clamp(1, BINS_MAX) as usize;
    let whole = m.pyramid.grid(&src, 0..rows, 0..cols, h, w, reduce);
    let min = whole.values.iter().flatten().copied().reduce(f64::min);
    let max = whole.values.iter().flatten().copied().reduce(f64::max);
    // Each row bin of the answer over the whole thread axis.
    let row_max = g
        .rows
        .iter()
        .map(|b| {
            let rb = b.first as usize..b.last as usize + 1;
            let row = m.pyramid.grid(&src, rb, 0..cols, 1, w, reduce);
            row.values.iter().flatten().copied().reduce(f64::max)
        })
        .collect();
    RunRange { min, max, row_max }
}

/// `GET /api/matrix`: the region at the resolution asked for (default 200 × 400 bins), each
/// cell the `reduce` of its bin's cells that have data; `thread`'s position on the axis; with
/// `run`, the colour range of the whole matrix at that resolution ([`RunRange`]).
///
/// # Errors
/// [`ViewError::Invalid`] for `reduce=sum` over a metric that does not add up
/// ([`Values::check_reduce`]).
pub fn matrix(
    m: &MatrixInput<'_>,
    region: &Region,
    reduce: Reduce,
    thread: Option<ThreadId>,
    run: Option<RunResolution>,
) -> Result<MatrixResponse, ViewError> {
    let reduce = m.values.check_reduce(m.profile.metrics(), reduce)?;
    if run.is_some() && !m.whole() {
        return Err(ViewError::invalid(
            "the whole run's colour range needs the pyramid of every row, not of a window",
        ));
    }
    let mut g = matrix_with(m, region, reduce, thread, (200, 400));
    g.run = run.map(|res| run_range(m, &g, res, reduce));
    Ok(g)
}

/// The overview's parameters as given (`skip`, `bin`, `strips`, `w`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OverviewOptions {
    /// Skip runs of more than this many empty rows (default 10).
    pub skip: Option<u32>,
    /// Rows per overview row (default 1).
    pub bin: Option<u32>,
    /// Strips (default 1, at most 64).
    pub strips: Option<u32>,
    /// Thread bins (default 64, at most 4096).
    pub w: Option<u32>,
}

/// `GET /api/overview`: seed 000's overview of all rows × all threads of the axis. `m.pyramid`
/// must cover every row ([`build_pyramid`], not a window).
///
/// # Errors
/// [`ViewError::Invalid`] for `reduce=sum` over a metric that does not add up
/// ([`Values::check_reduce`]).
pub fn overview(
    m: &MatrixInput<'_>,
    options: &OverviewOptions,
    reduce: Reduce,
) -> Result<OverviewResponse, ViewError> {
    let reduce = m.values.check_reduce(m.profile.metrics(), reduce)?;
    let src = m.source();
    let params = OverviewParams {
        skip_empty_over: options.skip.unwrap_or(10) as usize,
        bin: options.bin.unwrap_or(1).max(1) as usize,
        reduce,
        strips: options.strips.unwrap_or(1).clamp(1, 64) as usize,
        max_cols: options.w.unwrap_or(64).clamp(1, BINS_MAX) as usize,
    };
    let ov = m.pyramid.overview(&src, params);
    Ok(OverviewResponse {
        row_count: m.rows.len() as u32,
        thread_count: m.axis.axis.len() as u32,
        cols: col_bins_json(m.profile, &m.axis.axis, &ov.col_bins),
        strips: ov
            .strips
            .iter()
            .map(|s| {
                s.iter()
                    .map(|row| OverviewRowJson {
                        first: row.first as u32,
                        last: row.last as u32,
                        label: m.rows.rows[row.first].label.clone(),
                        skipped_before: row.skipped_before as u32,
                        values: row.values.clone(),
                    })
                    .collect()
            })
            .collect(),
        empty_rows: ov.empty_rows as u32,
        skipped_rows: ov.skipped_rows as u32,
        max: ov.max,
        unit: m.values.unit(m.profile.metrics()),
        cluster_starts: m.axis.cluster_starts.clone(),
    })
}

/// Most labelled terrain peaks.
pub const PEAKS_MAX: u32 = 50;

/// `GET /api/terrain`: a MAX grid (default 40 event bins × 64 thread bins) and the `peaks`
/// (default 5, at most 50) largest cells, at most one per event, largest first (seed 001's
/// TerrainDenotator). `m.pyramid` must have been built over all of `m`'s rows and its axis
/// ([`build_pyramid`], not a window).
pub fn terrain(
    m: &MatrixInput<'_>,
    region: &Region,
    peaks: Option<u32>,
    thread: Option<ThreadId>,
) -> TerrainResponse {
    let grid = matrix_with(m, region, Reduce::Max, thread, (40, 64));
    let k = peaks.unwrap_or(5).min(PEAKS_MAX) as usize;
    // The largest cell of each row (from the pyramid), largest first.
    let mut best: Vec<(usize, usize, f64)> = (0..m.rows.len())
        .filter_map(|row| m.pyramid.row_max(row).map(|(pos, v)| (row, pos, v)))
        .collect();
    best.sort_by(|a, b| b.2.total_cmp(&a.2).then(a.0.cmp(&b.0)));
    let row_bin_of = |row: usize| {
        grid.rows
            .iter()
            .position(|b| (b.first as usize..=b.last as usize).contains(&row))
    };
    let col_bin_of = |col: usize| {
        grid.cols
            .iter()
            .position(|b| (b.first as usize..=b.last as usize).contains(&col))
    };
    let peaks = best
        .into_iter()
        .filter_map(|(row, pos, value)| {
            let e = *m.rows.rows[row].events.first()?;
            Some(PeakJson {
                row_bin: row_bin_of(row)? as u32,
                col_bin: col_bin_of(pos)? as u32,
                event: e.0,
                name: m.rows.rows[row].label.clone(),
                thread: m.profile.thread(m.axis.axis.order[pos]).to_string(),
                value,
            })
        })
        .take(k)
        .collect();
    let picks = cell_picks(m, &grid);
    TerrainResponse { grid, peaks, picks }
}

/// The argmax of every cell of `grid` (see [`TerrainResponse::picks`]), found from the
/// pyramid's MAX blocks ([`Pyramid::max_picks`]): per cell, the rows of its bin up to the
/// first one whose MAX over the bin's threads is the cell's value, then a descent through that
/// row's blocks to the first thread holding it. The same picks as a scan of every cell of the
/// covered rows (first in row order, then axis order, on ties), without reading them all.
fn cell_picks(m: &MatrixInput<'_>, grid: &MatrixResponse) -> Vec<Option<CellPick>> {
    let src = m.source();
    let first = m.first_row;
    let window = RowWindow {
        src: &src,
        rows: first..first + m.pyramid.rows(),
    };
    let row_bins: Vec<Range<usize>> = grid
        .rows
        .iter()
        .map(|b| (b.first as usize).saturating_sub(first)..(b.last as usize + 1).saturating_sub(first))
        .collect();
    let col_bins: Vec<Range<usize>> = grid
        .cols
        .iter()
        .map(|b| b.first as usize..b.last as usize + 1)
        .collect();
    m.pyramid
        .max_picks(&window, &row_bins, &col_bins, &grid.values)
        .into_iter()
        .map(|c| {
            let (r, p) = c?;
            Some(CellPick {
                event: m.rows.rows[r + first].events.first()?.0,
                thread: m.profile.thread(*m.axis.axis.order.get(p)?).to_string(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use perfscape_model::{Metric, MetricId, ProfileBuilder, ThreadData, ThreadId, ValueKind};

    /// Line rows are the same rows whatever `callpaths` and `order` say, so they share one
    /// key; event rows keep theirs.
    #[test]
    fn line_rows_of_every_order_share_one_key() {
        let mut b = ProfileBuilder::new(vec![Metric::tau("TIME")]);
        for t in 0..3 {
            let mut d = ThreadData::new(1);
            for (i, name) in [
                "[SAMPLE] b [{x.c} {12}]",
                "[SAMPLE] a [{x.c} {10}]",
                "main",
                "main => f",
            ]
            .iter()
            .enumerate()
            {
                let v = f64::from(t * 3 + i as u32);
                d.push_timer(name, "G", 1.0, 0.0, &[v], &[v]).unwrap();
            }
            b.add_thread(ThreadId::new(t, 0, 0), d).unwrap();
        }
        let p = b.finish().0;
        let values = Values {
            metric: MetricId(0),
            kind: ValueKind::Exclusive,
        };
        let spec = |rows, callpaths, order| RowSpec {
            values,
            rows,
            callpaths,
            order,
        };
        let base = spec(RowKind::Lines, false, RowOrder::Rank);
        for callpaths in [false, true] {
            for order in [RowOrder::Rank, RowOrder::Name, RowOrder::File] {
                let s = spec(RowKind::Lines, callpaths, order);
                assert_eq!(s.canonical(), base);
                assert_eq!(s.build(&p), base.build(&p));
                let e = spec(RowKind::Events, callpaths, order);
                assert_eq!(e.canonical(), e);
            }
        }
        let lines: Vec<String> = base.build(&p).rows.into_iter().map(|r| r.label).collect();
        assert_eq!(lines, ["x.c:10", "x.c:11", "x.c:12"]);
    }
}
