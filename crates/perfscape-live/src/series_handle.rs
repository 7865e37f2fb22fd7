//! [`SeriesHandle`]: shared read access to the series a live run is growing.

use perfscape_model::{IntegrationReport, Integrator, SampleSeries};
use std::ops::Deref;
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// The growing [`SampleSeries`] of a live run, shared between the watcher (the only writer)
/// and any number of readers (a server answering view requests, the CLI).
///
/// Cheap to clone (an `Arc`); `Send + Sync`. [`SeriesHandle::read`] takes a read lock: hold
/// the guard only for the duration of one query (the watcher waits for it to append the
/// next sample; it holds the write lock only to integrate, about 1 ms per 100 threads of a
/// sample, never while reading files or parsing).
#[derive(Clone, Debug)]
pub struct SeriesHandle {
    inner: Arc<RwLock<Integrator>>,
}

/// Read access to the series; see [`SeriesHandle::read`]. Dereferences to
/// [`SampleSeries`].
#[derive(Debug)]
pub struct SeriesGuard<'a> {
    guard: RwLockReadGuard<'a, Integrator>,
}

impl Deref for SeriesGuard<'_> {
    type Target = SampleSeries;

    fn deref(&self) -> &SampleSeries {
        self.guard.series()
    }
}

impl SeriesHandle {
    pub(crate) fn new(integrator: Integrator) -> Self {
        Self {
            inner: Arc::new(RwLock::new(integrator)),
        }
    }

    /// Read access to the series as it is now (samples keep being appended after the guard
    /// is dropped). A sample announced by a [`crate::LiveEvent`] is in it.
    pub fn read(&self) -> SeriesGuard<'_> {
        SeriesGuard {
            guard: self.inner.read().unwrap_or_else(PoisonError::into_inner),
        }
    }

    /// A copy of the series as it is now (costs the series' memory, see
    /// [`SampleSeries::heap_bytes`]; prefer [`SeriesHandle::read`]).
    pub fn snapshot(&self) -> SampleSeries {
        self.read().clone()
    }

    /// Number of samples integrated so far.
    pub fn len(&self) -> usize {
        self.read().len()
    }

    /// True when no sample was integrated yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// What the integration noted so far (samples amended, duplicate rows merged, ...).
    pub fn report(&self) -> IntegrationReport {
        self.inner
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .report()
            .clone()
    }

    pub(crate) fn pending(&self) -> usize {
        self.inner
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .pending()
    }

    pub(crate) fn write(&self) -> RwLockWriteGuard<'_, Integrator> {
        self.inner.write().unwrap_or_else(PoisonError::into_inner)
    }
}
