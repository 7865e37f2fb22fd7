//! The communication matrix view: ranks × ranks (senders top to bottom, receivers left to
//! right) of one path and one statistic, reduced to the screen with the heat map's `max` and
//! `sum` reductions.

use super::matrix::{BINS_MAX, Bin};
use crate::comm::{ALL_PATHS, CommCell, CommMatrix};
use crate::error::ViewError;
use crate::views::{Reduce, bins};
use serde::{Deserialize, Serialize};
use std::ops::Range;

/// Which number of a (sender, receiver) cell the view shows (the `stat` parameter).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum CommStat {
    /// Bytes sent (volume).
    #[default]
    Bytes,
    /// Messages sent.
    Calls,
    /// Mean message size, bytes.
    MeanBytes,
    /// Largest message, bytes.
    MaxBytes,
    /// Smallest message, bytes.
    MinBytes,
    /// Standard deviation of the message sizes, bytes (the true one, from the sums of squares).
    StddevBytes,
}

impl CommStat {
    /// The value of a cell.
    pub fn of(self, c: &CommCell) -> f64 {
        match self {
            Self::Bytes => c.volume_bytes,
            Self::Calls => c.calls,
            Self::MeanBytes => c.mean_bytes(),
            Self::MaxBytes => c.max_bytes,
            Self::MinBytes => c.min_bytes,
            Self::StddevBytes => c.stddev_bytes(),
        }
    }

    /// True for the statistics that add up over cells (bytes, calls): the only ones `sum` fits.
    pub fn adds_up(self) -> bool {
        matches!(self, Self::Bytes | Self::Calls)
    }
}

/// What the communication matrix view asks: a path, a statistic, a reduction and a region of
/// senders (`r0..r1`) × receivers (`c0..c1`) in at most `h` × `w` bins.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CommParams {
    /// The path (a callpath element, or `All Paths`, the default; the first path when the run
    /// has no `All Paths` matrix).
    pub path: Option<String>,
    /// The statistic (default bytes).
    pub stat: CommStat,
    /// How the cells of a bin combine (default max; sum only for bytes and calls).
    pub reduce: Reduce,
    /// First sender rank (default 0).
    pub r0: Option<u32>,
    /// End sender rank, exclusive (default all).
    pub r1: Option<u32>,
    /// First receiver rank (default 0).
    pub c0: Option<u32>,
    /// End receiver rank, exclusive (default all).
    pub c1: Option<u32>,
    /// Most sender bins (default 256; 1..=4096).
    pub h: Option<u32>,
    /// Most receiver bins (default 256; 1..=4096).
    pub w: Option<u32>,
}

/// One path of the matrix with its totals.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct CommPathJson {
    /// The callpath element or `All Paths`.
    pub name: String,
    /// Pairs (sender, receiver) with messages.
    pub pairs: u32,
    /// Messages.
    pub calls: f64,
    /// Bytes.
    pub bytes: f64,
}

/// The communication matrix at the resolution asked for.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct CommResponse {
    /// Ranks of the run (the matrix is ranks × ranks).
    pub ranks: u32,
    /// The path shown.
    pub path: String,
    /// The statistic shown.
    pub stat: CommStat,
    /// The reduction used.
    pub reduce: Reduce,
    /// Sender bins, top to bottom (`thread` = `N.0.0` for a single rank).
    pub rows: Vec<Bin>,
    /// Receiver bins, left to right.
    pub cols: Vec<Bin>,
    /// Cell values row-major (`rows.len() * cols.len()`), `null` = no message.
    pub values: Vec<Option<f64>>,
    /// Smallest cell value.
    pub min: Option<f64>,
    /// Largest cell value.
    pub max: Option<f64>,
    /// Per sender bin, the bytes its ranks sent on this path to every receiver (not only the
    /// region's).
    pub sent_bytes: Vec<f64>,
    /// Per receiver bin, the bytes its ranks received on this path from every sender.
    pub received_bytes: Vec<f64>,
    /// Every path with its totals, `All Paths` first.
    pub paths: Vec<CommPathJson>,
    /// Comm-matrix rows left out because they name a node not in the run.
    pub out_of_range_rows: u64,
}

fn clamp(a: Option<u32>, b: Option<u32>, n: usize) -> Range<usize> {
    let s = (a.unwrap_or(0) as usize).min(n);
    let e = b.map_or(n, |b| (b as usize).min(n)).max(s);
    s..e
}

fn rank_bins(bs: &[Range<usize>]) -> Vec<Bin> {
    bs.iter()
        .map(|b| Bin {
            first: b.start as u32,
            last: (b.end - 1) as u32,
            label: if b.len() == 1 {
                format!("rank {}", b.start)
            } else {
                format!("ranks {} – {}", b.start, b.end - 1)
            },
            event: None,
            thread: (b.len() == 1).then(|| format!("{}.0.0", b.start)),
        })
        .collect()
}

/// The bin of position `x` in `range` cut into bins of `per` positions.
fn bin_of(x: usize, range: &Range<usize>, per: usize) -> Option<usize> {
    range.contains(&x).then(|| (x - range.start) / per)
}

/// The communication matrix view of `m` for `p` (see [`CommParams`]). Cost: O(cells of the
/// path + bins), whatever the number of ranks: the sparse cells are binned directly.
///
/// # Errors
/// [`ViewError::NotFound`] when the run has no communication matrix or no path `p.path`;
/// [`ViewError::Invalid`] for `reduce=sum` over a statistic that does not add up.
pub fn comm_view(m: &CommMatrix, p: &CommParams) -> Result<CommResponse, ViewError> {
    if m.is_empty() {
        return Err(ViewError::not_found(
            "this run has no communication matrix (no `Message size sent to node N` user events: run with TAU_COMM_MATRIX=1)",
        ));
    }
    let path = match &p.path {
        Some(name) => m.path(name).ok_or_else(|| {
            let names: Vec<&str> = m.paths.iter().map(|x| x.name.as_str()).collect();
            ViewError::not_found(format!("path: no path {name:?}; the run has {names:?}"))
        })?,
        None => m.path(ALL_PATHS).unwrap_or(&m.paths[0]),
    };
    if p.reduce == Reduce::Sum && !p.stat.adds_up() {
        return Err(ViewError::invalid(format!(
            "reduce: sum does not fit stat={:?} (only bytes and calls add up); use reduce=max",
            p.stat
        )));
    }
    let n = m.ranks as usize;
    let rr = clamp(p.r0, p.r1, n);
    let cr = clamp(p.c0, p.c1, n);
    let h = p.h.unwrap_or(256).clamp(1, BINS_MAX) as usize;
    let w = p.w.unwrap_or(256).clamp(1, BINS_MAX) as usize;
    let row_bins = bins(rr.clone(), h);
    let col_bins = bins(cr.clone(), w);
    let per_r = rr.len().div_ceil(h).max(1);
    let per_c = cr.len().div_ceil(w).max(1);
    let (nr, nc) = (row_bins.len(), col_bins.len());
    let mut values: Vec<Option<f64>> = vec![None; nr * nc];
    let mut sent = vec![0.0; nr];
    let mut received = vec![0.0; nc];
    for c in &path.cells {
        let (br, bc) = (
            bin_of(c.sender as usize, &rr, per_r),
            bin_of(c.receiver as usize, &cr, per_c),
        );
        if let Some(i) = br {
            sent[i] += c.volume_bytes;
        }
        if let Some(j) = bc {
            received[j] += c.volume_bytes;
        }
        if let (Some(i), Some(j)) = (br, bc) {
            let v = p.stat.of(c);
            let slot = &mut values[i * nc + j];
            *slot = Some(match (p.reduce, *slot) {
                (_, None) => v,
                (Reduce::Max, Some(a)) => a.max(v),
                (Reduce::Sum, Some(a)) => a + v,
            });
        }
    }
    let min = values.iter().flatten().copied().reduce(f64::min);
    let max = values.iter().flatten().copied().reduce(f64::max);
    Ok(CommResponse {
        ranks: m.ranks,
        path: path.name.clone(),
        stat: p.stat,
        reduce: p.reduce,
        rows: rank_bins(&row_bins),
        cols: rank_bins(&col_bins),
        values,
        min,
        max,
        sent_bytes: sent,
        received_bytes: received,
        paths: m
            .paths
            .iter()
            .map(|x| CommPathJson {
                name: x.name.clone(),
                pairs: x.cells.len() as u32,
                calls: x.calls(),
                bytes: x.volume_bytes(),
            })
            .collect(),
        out_of_range_rows: m.skipped.out_of_range_rows,
    })
}
