//! View computations: the events-or-lines × threads matrix reduced to screen resolution.
//!
//! The browser never receives a raw matrix: it asks for a region (a range of rows and of
//! threads) at a resolution (at most `max_rows` × `max_cols` cells) and gets each cell reduced
//! by MAX (so no hot spot disappears when zoomed out, the complaint of seed 000 about
//! subsampling) or by SUM.
//!
//! Rows are either the profile's events (flat ones, optionally callpaths too) or, for sampled
//! profiles, source lines: every line of every file that has `[SAMPLE]` events, from the first
//! to the last sampled line, so that unsampled lines are empty rows as in seed 000's
//! per-line × per-processor tick-count array.

use crate::stats::{event_stats, larger_first};
use perfscape_model::{EventId, EventKind, MetricId, Profile, ThreadIndex, ValueKind};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::ops::Range;

/// How rows of the matrix are formed.
///
/// The `rows` parameter of the HTTP API; default `events`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum RowKind {
    /// One row per event.
    #[default]
    Events,
    /// One row per source line of the files that have `[SAMPLE]` events.
    Lines,
}

/// Order of event rows.
///
/// The `order` parameter of the HTTP API; default `rank`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum RowOrder {
    /// Largest total of the chosen value kind first (the ranked table's order).
    #[default]
    Rank,
    /// Order of first appearance in the input (file order).
    File,
    /// Alphabetical by name.
    Name,
}

/// One row of the matrix.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    /// Label shown for the row (event name, or `file:line`).
    pub label: String,
    /// The events whose values the row holds: one for event rows, the `[SAMPLE]` events of the
    /// line for line rows (empty for an unsampled line).
    pub events: Vec<EventId>,
    /// Source file of a line row.
    pub file: Option<String>,
    /// Line number of a line row.
    pub line: Option<u32>,
}

/// The rows of a matrix view, in display order.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RowSet {
    /// Rows in order.
    pub rows: Vec<Row>,
}

impl RowSet {
    /// Event rows: flat events (and callpath events when `callpaths`) that have data, ordered.
    pub fn events(profile: &Profile, m: MetricId, kind: ValueKind, callpaths: bool, order: RowOrder) -> Self {
        let mut ids: Vec<EventId> = profile
            .event_ids()
            .filter(|&e| (callpaths || !profile.event(e).is_callpath()) && !profile.interval(e).is_empty())
            .collect();
        match order {
            RowOrder::File => {}
            RowOrder::Name => ids.sort_by_cached_key(|e| profile.event_name(*e)),
            RowOrder::Rank => {
                let totals: Vec<(EventId, f64)> = ids
                    .iter()
                    .map(|&e| (e, event_stats(profile, e, m).get(kind).total))
                    .collect();
                let mut t = totals;
                t.sort_by(|a, b| larger_first(a.1, b.1).then(a.0.cmp(&b.0)));
                ids = t.into_iter().map(|(e, _)| e).collect();
            }
        }
        RowSet {
            rows: ids
                .into_iter()
                .map(|e| Row {
                    label: profile.event_name(e),
                    events: vec![e],
                    file: None,
                    line: None,
                })
                .collect(),
        }
    }

    /// Line rows: for every file with flat `[SAMPLE]` events, one row per line from its first to
    /// its last sampled line; files in name order.
    pub fn lines(profile: &Profile) -> Self {
        let mut files: BTreeMap<&str, BTreeMap<u32, Vec<EventId>>> = BTreeMap::new();
        for e in profile.event_ids() {
            let ev = profile.event(e);
            if ev.kind != EventKind::Sample || ev.is_callpath() {
                continue;
            }
            if let Some(src) = ev.source() {
                files
                    .entry(src.file)
                    .or_default()
                    .entry(src.line)
                    .or_default()
                    .push(e);
            }
        }
        let mut rows = Vec::new();
        for (file, lines) in files {
            let (Some(&first), Some(&last)) = (lines.keys().next(), lines.keys().next_back()) else {
                continue;
            };
            for line in first..=last {
                rows.push(Row {
                    label: format!("{file}:{line}"),
                    events: lines.get(&line).cloned().unwrap_or_default(),
                    file: Some(file.to_string()),
                    line: Some(line),
                });
            }
        }
        RowSet { rows }
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Approximate heap bytes held (for cache budgets).
    pub fn heap_bytes(&self) -> usize {
        self.rows
            .iter()
            .map(|r| {
                std::mem::size_of::<Row>()
                    + r.label.capacity()
                    + r.events.capacity() * 4
                    + r.file.as_ref().map_or(0, String::capacity)
            })
            .sum()
    }
}

/// How the cells of a bin are combined.
///
/// The `reduce` parameter of the HTTP API; default `max`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum Reduce {
    /// The largest value (peaks are kept).
    #[default]
    Max,
    /// The sum of the values.
    Sum,
}

impl Reduce {
    pub(crate) fn combine(self, acc: Option<f64>, v: f64) -> Option<f64> {
        Some(match (self, acc) {
            (_, None) => v,
            (Reduce::Max, Some(a)) => a.max(v),
            (Reduce::Sum, Some(a)) => a + v,
        })
    }
}

/// Splits `range` into at most `max_bins` consecutive bins of equal size (the last may be
/// shorter); each bin covers `ceil(len / max_bins)` items.
pub fn bins(range: Range<usize>, max_bins: usize) -> Vec<Range<usize>> {
    let n = range.len();
    if n == 0 {
        return Vec::new();
    }
    let per = n.div_ceil(max_bins.max(1));
    (0..n.div_ceil(per))
        .map(|i| range.start + i * per..(range.start + (i + 1) * per).min(range.end))
        .collect()
}

/// A reduced matrix: `values[r * cols + c]` reduces the rows `row_bins[r]` × the threads
/// `col_bins[c]` (positions in the thread order used). `None` = no thread of the bin has any
/// event of the bin.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Grid {
    /// Number of row bins.
    pub rows: usize,
    /// Number of column (thread) bins.
    pub cols: usize,
    /// Row bins, as ranges of row positions in the row set.
    pub row_bins: Vec<Range<usize>>,
    /// Column bins, as ranges of positions in the thread order.
    pub col_bins: Vec<Range<usize>>,
    /// Cell values, row-major.
    pub values: Vec<Option<f64>>,
}

impl Grid {
    /// Largest cell value (None if every cell is empty).
    pub fn max(&self) -> Option<f64> {
        self.values.iter().flatten().copied().reduce(f64::max)
    }

    /// Smallest cell value (None if every cell is empty).
    pub fn min(&self) -> Option<f64> {
        self.values.iter().flatten().copied().reduce(f64::min)
    }
}

/// The thread axis of a view: which threads, in which order. `positions[t]` is the display
/// position of thread index `t` (or `u32::MAX` when hidden).
#[derive(Clone, Debug, PartialEq)]
pub struct ThreadAxis {
    /// Thread indices in display order.
    pub order: Vec<ThreadIndex>,
    positions: Vec<u32>,
}

impl ThreadAxis {
    /// All threads of the profile in id order.
    pub fn identity(profile: &Profile) -> Self {
        Self::from_order(
            profile.threads().len(),
            (0..profile.threads().len()).map(ThreadIndex::from).collect(),
        )
    }

    /// A given order over a profile of `n_threads` threads (threads not listed are hidden).
    pub fn from_order(n_threads: usize, order: Vec<ThreadIndex>) -> Self {
        let mut positions = vec![u32::MAX; n_threads];
        for (p, t) in order.iter().enumerate() {
            if let Some(slot) = positions.get_mut(t.index()) {
                *slot = u32::try_from(p).unwrap_or(u32::MAX);
            }
        }
        Self { order, positions }
    }

    /// Number of threads shown.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// True when no thread is shown.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// Display position of thread `t`, if shown.
    pub fn position(&self, t: ThreadIndex) -> Option<usize> {
        self.positions
            .get(t.index())
            .copied()
            .filter(|&p| p != u32::MAX)
            .map(|p| p as usize)
    }
}

/// Reduces rows `row_range` of `rows` × thread positions `col_range` of `axis` to at most
/// `max_rows` × `max_cols` cells.
///
/// Cost: proportional to the number of stored cells of the events in the row range (each
/// event column is scanned once); independent of the output size.
#[allow(clippy::too_many_arguments)]
pub fn grid(
    profile: &Profile,
    rows: &RowSet,
    row_range: Range<usize>,
    axis: &ThreadAxis,
    col_range: Range<usize>,
    max_rows: usize,
    max_cols: usize,
    kind: ValueKind,
    m: MetricId,
    reduce: Reduce,
) -> Grid {
    let row_range = row_range.start.min(rows.len())..row_range.end.min(rows.len());
    let col_range = col_range.start.min(axis.len())..col_range.end.min(axis.len());
    let row_bins = bins(row_range, max_rows);
    let col_bins = bins(col_range.clone(), max_cols);
    let (nr, nc) = (row_bins.len(), col_bins.len());
    let mut values = vec![None; nr * nc];
    if nc == 0 {
        return Grid {
            rows: nr,
            cols: nc,
            row_bins,
            col_bins,
            values,
        };
    }
    let col_per = col_bins[0].len();
    for (r, rb) in row_bins.iter().enumerate() {
        for row in &rows.rows[rb.clone()] {
            for &e in &row.events {
                let col = profile.interval(e);
                for (t, &v) in col.threads().iter().zip(col.values(kind, m)) {
                    let Some(p) = axis.position(*t) else { continue };
                    if !col_range.contains(&p) {
                        continue;
                    }
                    let c = (p - col_range.start) / col_per;
                    let cell = &mut values[r * nc + c];
                    *cell = reduce.combine(*cell, v);
                }
            }
        }
    }
    Grid {
        rows: nr,
        cols: nc,
        row_bins,
        col_bins,
        values,
    }
}

/// Parameters of the overview (seed 000, section 2.2.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OverviewParams {
    /// Runs of MORE than this many consecutive empty rows are skipped.
    pub skip_empty_over: usize,
    /// Consecutive kept rows reduced into one overview row.
    pub bin: usize,
    /// How rows and threads are combined.
    pub reduce: Reduce,
    /// Number of strips the long array is cut into (shown side by side).
    pub strips: usize,
    /// Thread bins per overview row.
    pub max_cols: usize,
}

/// One row of the overview: a bin of consecutive kept rows.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OverviewRow {
    /// Row positions (in the row set) covered: first..=last (empty rows inside included).
    pub first: usize,
    /// Last row position covered.
    pub last: usize,
    /// Number of empty rows skipped just before this row (0 when none).
    pub skipped_before: usize,
    /// Values per thread bin (None = no data).
    pub values: Vec<Option<f64>>,
}

/// The overview: strips of reduced rows.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Overview {
    /// Strips, each a list of overview rows (a contiguous piece of the reduced array).
    pub strips: Vec<Vec<OverviewRow>>,
    /// Thread bins (positions in the thread axis).
    pub col_bins: Vec<Range<usize>>,
    /// Rows of the row set that are empty (no value or only zeros on every thread).
    pub empty_rows: usize,
    /// Rows skipped as parts of long empty runs.
    pub skipped_rows: usize,
    /// Largest value over the whole overview.
    pub max: Option<f64>,
}

/// Builds the overview of `rows` × all threads of `axis`.
pub fn overview(
    profile: &Profile,
    rows: &RowSet,
    axis: &ThreadAxis,
    kind: ValueKind,
    m: MetricId,
    p: OverviewParams,
) -> Overview {
    // One full-resolution pass over rows with threads reduced to max_cols bins.
    let full = grid(
        profile,
        rows,
        0..rows.len(),
        axis,
        0..axis.len(),
        rows.len().max(1),
        p.max_cols,
        kind,
        m,
        p.reduce,
    );
    let nc = full.cols;
    let row = |r: usize| &full.values[r * nc..(r + 1) * nc];
    let empty: Vec<bool> = (0..full.rows)
        .map(|r| row(r).iter().all(|v| v.is_none_or(|x| x == 0.0)))
        .collect();
    Overview::assemble(&empty, &p, full.col_bins.clone(), |first, last| {
        let mut values = vec![None; nc];
        for r in first..=last {
            for (c, v) in row(r).iter().enumerate() {
                if let Some(v) = v {
                    values[c] = p.reduce.combine(values[c], *v);
                }
            }
        }
        values
    })
}

impl Overview {
    /// The overview of the rows whose emptiness `empty` gives (one flag per row of the row
    /// set): runs of more than `p.skip_empty_over` empty rows are skipped
    /// ([`kept_segments`]), the kept rows are cut into bins of `p.bin` consecutive rows,
    /// `values(first, last)` reduces rows `first..=last` per thread bin of `col_bins`, and the
    /// list is cut into `p.strips` strips. How [`overview`] and
    /// [`crate::pyramid::Pyramid::overview`] both assemble it.
    pub(crate) fn assemble(
        empty: &[bool],
        p: &OverviewParams,
        col_bins: Vec<Range<usize>>,
        mut values: impl FnMut(usize, usize) -> Vec<Option<f64>>,
    ) -> Overview {
        let (segments, skipped_rows) = kept_segments(empty, p.skip_empty_over);
        let mut out_rows: Vec<OverviewRow> = Vec::new();
        for (skip, seg) in segments {
            // A segment's rows are consecutive (its short empty runs stay in it).
            for (i, chunk) in seg.chunks(p.bin.max(1)).enumerate() {
                let (first, last) = (chunk[0], chunk[chunk.len() - 1]);
                out_rows.push(OverviewRow {
                    first,
                    last,
                    skipped_before: if i == 0 { skip } else { 0 },
                    values: values(first, last),
                });
            }
        }
        let max = out_rows
            .iter()
            .flat_map(|r| r.values.iter().flatten())
            .copied()
            .reduce(f64::max);
        let per_strip = out_rows.len().div_ceil(p.strips.max(1)).max(1);
        Overview {
            strips: out_rows.chunks(per_strip).map(<[OverviewRow]>::to_vec).collect(),
            col_bins,
            empty_rows: empty.iter().filter(|e| **e).count(),
            skipped_rows,
            max,
        }
    }
}

/// Splits rows into segments of kept rows: runs of more than `skip_empty_over` consecutive
/// empty rows are dropped, shorter runs stay inside their segment, and the empty rows after
/// the last non-empty row are always dropped. Returns (rows skipped before the segment, the
/// segment's rows) per segment and the number of rows skipped in all.
pub(crate) fn kept_segments(empty: &[bool], skip_empty_over: usize) -> (Vec<(usize, Vec<usize>)>, usize) {
    let mut segments: Vec<(usize, Vec<usize>)> = Vec::new();
    let mut current: Vec<usize> = Vec::new();
    let mut pending_empty: Vec<usize> = Vec::new();
    let mut skipped_rows = 0;
    let mut skipped_before = 0;
    for (r, &is_empty) in empty.iter().enumerate() {
        if is_empty {
            pending_empty.push(r);
            continue;
        }
        if pending_empty.len() > skip_empty_over {
            if !current.is_empty() {
                segments.push((skipped_before, std::mem::take(&mut current)));
            }
            skipped_before = pending_empty.len();
            skipped_rows += pending_empty.len();
        } else {
            current.append(&mut pending_empty);
        }
        pending_empty.clear();
        current.push(r);
    }
    if !current.is_empty() {
        segments.push((skipped_before, current));
    }
    skipped_rows += pending_empty.len(); // trailing empty rows
    (segments, skipped_rows)
}

/// One labelled peak of the terrain (seed 001's TerrainDenotator).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Peak {
    /// Row position of the peak in the row set.
    pub row: usize,
    /// Display position of the thread.
    pub col: usize,
    /// The thread.
    pub thread: ThreadIndex,
    /// The value.
    pub value: f64,
}

/// The `k` largest cells of rows × threads, at most one per row (so the legend names `k`
/// different events), largest first.
pub fn peaks(
    profile: &Profile,
    rows: &RowSet,
    axis: &ThreadAxis,
    kind: ValueKind,
    m: MetricId,
    k: usize,
) -> Vec<Peak> {
    let mut best: Vec<Peak> = Vec::new();
    for (r, row) in rows.rows.iter().enumerate() {
        let mut top: Option<Peak> = None;
        for &e in &row.events {
            let col = profile.interval(e);
            for (t, &v) in col.threads().iter().zip(col.values(kind, m)) {
                let Some(p) = axis.position(*t) else { continue };
                if top.as_ref().is_none_or(|b| v > b.value) {
                    top = Some(Peak {
                        row: r,
                        col: p,
                        thread: *t,
                        value: v,
                    });
                }
            }
        }
        best.extend(top);
    }
    best.sort_by(|a, b| b.value.total_cmp(&a.value).then(a.row.cmp(&b.row)));
    best.truncate(k);
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use perfscape_model::{Metric, ProfileBuilder, ThreadData, ThreadId};

    /// A profile from a dense matrix `m[event][thread]` (NaN = thread lacks the event).
    fn profile(m: &[Vec<f64>]) -> Profile {
        let mut b = ProfileBuilder::new(vec![Metric::tau("TIME")]);
        let n_threads = m.first().map_or(0, Vec::len);
        for t in 0..n_threads {
            let mut d = ThreadData::new(1);
            for (e, row) in m.iter().enumerate() {
                if !row[t].is_nan() {
                    d.push_timer(&format!("e{e}"), "G", 1.0, 0.0, &[row[t]], &[row[t]])
                        .unwrap();
                }
            }
            b.add_thread(ThreadId::new(t as u32, 0, 0), d).unwrap();
        }
        b.finish().0
    }

    fn brute(m: &[Vec<f64>], rb: &Range<usize>, cb: &Range<usize>, reduce: Reduce) -> Option<f64> {
        let mut acc = None;
        for row in &m[rb.clone()] {
            for &v in &row[cb.clone()] {
                if !v.is_nan() {
                    acc = reduce.combine(acc, v);
                }
            }
        }
        acc
    }

    #[test]
    fn bins_cover_the_range_exactly() {
        assert_eq!(bins(0..10, 3), vec![0..4, 4..8, 8..10]);
        assert_eq!(bins(5..6, 100), vec![5..6]);
        assert!(bins(3..3, 4).is_empty());
    }

    proptest::proptest! {
        #[test]
        fn grid_equals_brute_force(
            m in proptest::collection::vec(proptest::collection::vec(proptest::prop_oneof![3 => 0.0f64..1e6, 1 => proptest::strategy::Just(f64::NAN)], 7), 1..12),
            max_rows in 1usize..8, max_cols in 1usize..8, r0 in 0usize..4, c0 in 0usize..4, sum in proptest::bool::ANY,
        ) {
            let p = profile(&m);
            let rows = RowSet::events(&p, MetricId(0), ValueKind::Exclusive, false, RowOrder::File);
            // The row set holds the events with data, in the order the builder met them.
            let kept: Vec<Vec<f64>> = rows.rows.iter().map(|r| m[r.label[1..].parse::<usize>().unwrap()].clone()).collect();
            let reduce = if sum { Reduce::Sum } else { Reduce::Max };
            let axis = ThreadAxis::identity(&p);
            let rr = r0.min(kept.len())..kept.len();
            let cr = c0.min(7)..7;
            let g = grid(&p, &rows, rr, &axis, cr, max_rows, max_cols, ValueKind::Exclusive, MetricId(0), reduce);
            for (r, rb) in g.row_bins.iter().enumerate() {
                for (c, cb) in g.col_bins.iter().enumerate() {
                    let expect = brute(&kept, rb, cb, reduce);
                    let got = g.values[r * g.cols + c];
                    match (expect, got) {
                        (None, None) => {}
                        (Some(a), Some(b)) => proptest::prop_assert!((a - b).abs() <= 1e-9 * a.abs().max(1.0)),
                        _ => proptest::prop_assert!(false, "cell {r},{c}: {expect:?} vs {got:?}"),
                    }
                }
            }
        }
    }

    #[test]
    fn overview_skips_long_empty_runs_and_bins() {
        // rows: 0 hot, 1..=5 empty (5 > 3: skipped), 6 hot, 7 empty (kept), 8 hot
        let mut m = vec![vec![0.0; 3]; 9];
        m[0] = vec![5.0, 1.0, 0.0];
        m[6] = vec![1.0, 9.0, 2.0];
        m[8] = vec![0.0, 0.0, 4.0];
        let p = profile(&m);
        let rows = RowSet::events(&p, MetricId(0), ValueKind::Exclusive, false, RowOrder::File);
        let axis = ThreadAxis::identity(&p);
        let ov = overview(
            &p,
            &rows,
            &axis,
            ValueKind::Exclusive,
            MetricId(0),
            OverviewParams {
                skip_empty_over: 3,
                bin: 2,
                reduce: Reduce::Max,
                strips: 2,
                max_cols: 3,
            },
        );
        let all: Vec<&OverviewRow> = ov.strips.iter().flatten().collect();
        assert_eq!(ov.skipped_rows, 5);
        assert_eq!(ov.empty_rows, 6);
        assert_eq!((all[0].first, all[0].last, all[0].skipped_before), (0, 0, 0));
        assert_eq!((all[1].first, all[1].last, all[1].skipped_before), (6, 7, 5));
        assert_eq!(all[1].values, vec![Some(1.0), Some(9.0), Some(2.0)]);
        assert_eq!((all[2].first, all[2].last), (8, 8));
        assert_eq!(ov.strips.len(), 2);
        assert_eq!(ov.max, Some(9.0));
    }

    #[test]
    fn peaks_are_distinct_rows_largest_first() {
        let m = vec![vec![1.0, 50.0, 2.0], vec![40.0, 45.0, 3.0], vec![7.0, 8.0, 9.0]];
        let p = profile(&m);
        let rows = RowSet::events(&p, MetricId(0), ValueKind::Exclusive, false, RowOrder::File);
        let pk = peaks(
            &p,
            &rows,
            &ThreadAxis::identity(&p),
            ValueKind::Exclusive,
            MetricId(0),
            2,
        );
        assert_eq!(pk.len(), 2);
        assert_eq!((pk[0].row, pk[0].col, pk[0].value), (0, 1, 50.0));
        assert_eq!((pk[1].row, pk[1].col, pk[1].value), (1, 1, 45.0));
    }
}
