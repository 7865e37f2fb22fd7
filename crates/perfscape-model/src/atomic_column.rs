//! The values of user (atomic) events: [`AtomicColumn`].

use crate::ids::ThreadIndex;
use serde::{Deserialize, Serialize};

/// The summary of one user (atomic) event on every thread that has it, as TAU records it:
/// number of samples, maximum, minimum, mean and sum of squares of the sampled values.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AtomicColumn {
    pub(crate) threads: Vec<ThreadIndex>,
    pub(crate) count: Vec<f64>,
    pub(crate) max: Vec<f64>,
    pub(crate) min: Vec<f64>,
    pub(crate) mean: Vec<f64>,
    pub(crate) sum_squares: Vec<f64>,
}

impl AtomicColumn {
    /// The same column with only the rows whose thread `map` keeps, renumbered (as
    /// [`IntervalColumn`]'s).
    pub(crate) fn with_threads(self, map: &[Option<ThreadIndex>]) -> Self {
        let keep: Vec<usize> = (0..self.threads.len())
            .filter(|&r| map.get(self.threads[r].index()).copied().flatten().is_some())
            .collect();
        let pick = |v: &[f64]| keep.iter().map(|&r| v[r]).collect::<Vec<f64>>();
        Self {
            threads: keep
                .iter()
                .filter_map(|&r| map[self.threads[r].index()])
                .collect(),
            count: pick(&self.count),
            max: pick(&self.max),
            min: pick(&self.min),
            mean: pick(&self.mean),
            sum_squares: pick(&self.sum_squares),
        }
    }
}

impl AtomicColumn {
    /// Number of threads that have the event.
    pub fn len(&self) -> usize {
        self.threads.len()
    }

    /// True when no thread has the event.
    pub fn is_empty(&self) -> bool {
        self.threads.is_empty()
    }

    /// The threads that have the event, ascending.
    pub fn threads(&self) -> &[ThreadIndex] {
        &self.threads
    }

    /// Number of samples per row.
    pub fn count(&self) -> &[f64] {
        &self.count
    }

    /// Largest sampled value per row.
    pub fn max(&self) -> &[f64] {
        &self.max
    }

    /// Smallest sampled value per row.
    pub fn min(&self) -> &[f64] {
        &self.min
    }

    /// Mean sampled value per row.
    pub fn mean(&self) -> &[f64] {
        &self.mean
    }

    /// Sum of the squares of the sampled values per row.
    pub fn sum_squares(&self) -> &[f64] {
        &self.sum_squares
    }

    /// Row of `thread`, if it has the event.
    pub fn row_of(&self, thread: ThreadIndex) -> Option<usize> {
        self.threads.binary_search(&thread).ok()
    }

    /// Population standard deviation of the sampled values of row `row`:
    /// `sqrt(max(0, sumsqr/n - mean^2))`, the formula of TAU's `pprof` ("Std. Dev." column of
    /// USER EVENTS). 0 when the row has no samples or does not exist.
    pub fn stddev(&self, row: usize) -> f64 {
        match (self.count.get(row), self.mean.get(row), self.sum_squares.get(row)) {
            (Some(&n), Some(&mean), Some(&ss)) if n > 0.0 => (ss / n - mean * mean).max(0.0).sqrt(),
            _ => 0.0,
        }
    }

    pub(crate) fn shrink_to_fit(&mut self) {
        for v in [
            &mut self.count,
            &mut self.max,
            &mut self.min,
            &mut self.mean,
            &mut self.sum_squares,
        ] {
            v.shrink_to_fit();
        }
        self.threads.shrink_to_fit();
    }

    /// Bytes of heap memory held by the column.
    pub fn heap_bytes(&self) -> usize {
        self.threads.capacity() * 4
            + (self.count.capacity()
                + self.max.capacity()
                + self.min.capacity()
                + self.mean.capacity()
                + self.sum_squares.capacity())
                * 8
    }
}
