//! Runs observed over time: where the samples come from ([`SeriesSource`]: a finished run's
//! [`SampleSeries`] or a live run's growing one) and which profile a view reads
//! ([`SeriesState::pick`]: the run's own, or a sample's, made by [`SampleSeries::profile_at`]
//! and kept in the server's [`ViewCache`] under the sample's [`Slot`]).
//!
//! Event ids of every sample profile equal the series' (and the run's when the run's profile
//! is the series' final profile). The views across samples (trend, Kiviat tube) are
//! [`perfscape_analysis::answers`] functions of the series.

use crate::cache::{Slot, ViewCache};
use crate::error::ApiError;
use crate::request::At;
use perfscape_model::{Profile, SampleId, SampleMode, SampleSeries};
use std::ops::Deref;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, RwLock};

/// Which profile a request is answered from.
pub enum Picked {
    /// The run's own profile.
    Run,
    /// A sample's profile, and the slot its cache entries are kept under.
    Sample(Arc<Profile>, Slot),
}

/// Where the samples come from: a finished run's series, or a live run's growing one.
pub trait SeriesSource: Send + Sync {
    /// Read access to the series as it is now (a live source holds its read lock while the
    /// returned guard lives; keep it short).
    fn read(&self) -> Box<dyn Deref<Target = SampleSeries> + '_>;
}

impl SeriesSource for SampleSeries {
    fn read(&self) -> Box<dyn Deref<Target = SampleSeries> + '_> {
        Box::new(self)
    }
}

impl SeriesSource for RwLock<SampleSeries> {
    fn read(&self) -> Box<dyn Deref<Target = SampleSeries> + '_> {
        Box::new(RwLock::read(self).unwrap_or_else(std::sync::PoisonError::into_inner))
    }
}

impl SeriesSource for perfscape_live::SeriesHandle {
    fn read(&self) -> Box<dyn Deref<Target = SampleSeries> + '_> {
        Box::new(perfscape_live::SeriesHandle::read(self))
    }
}

/// Most live-run warnings kept.
const WARNINGS_KEPT: usize = 1000;

/// The series of a run (if it has one), whether it still grows, and its live warnings.
pub struct SeriesState {
    series: Option<Arc<dyn SeriesSource>>,
    warnings: Mutex<Vec<String>>,
    live: AtomicBool,
    epoch: AtomicU32,
}

impl SeriesState {
    /// A state for `series` (none for runs without samples); `live` while it grows.
    pub fn new(series: Option<Arc<dyn SeriesSource>>, live: bool) -> Self {
        Self {
            series,
            warnings: Mutex::new(Vec::new()),
            live: AtomicBool::new(live),
            epoch: AtomicU32::new(0),
        }
    }

    /// Number of samples (0 without a series).
    pub fn len(&self) -> usize {
        self.series.as_ref().map(|s| s.read().len()).unwrap_or(0)
    }

    /// True without samples.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// True while samples keep arriving.
    pub fn is_live(&self) -> bool {
        self.live.load(Ordering::Relaxed)
    }

    /// Marks the series finished (the live run ended) or growing again.
    pub fn set_live(&self, live: bool) {
        self.live.store(live, Ordering::Relaxed);
    }

    /// The series was emptied and grows again (a replay started again): the profiles of its
    /// old samples are not read again (their cache entries are left to age out).
    pub fn new_epoch(&self) {
        self.epoch.fetch_add(1, Ordering::SeqCst);
    }

    /// The shared series, if any (a live engine appends to it under the write lock).
    pub fn series(&self) -> Option<&Arc<dyn SeriesSource>> {
        self.series.as_ref()
    }

    /// Read access to the series.
    ///
    /// # Errors
    /// 400 for a run without samples.
    pub fn read(&self) -> Result<Box<dyn Deref<Target = SampleSeries> + '_>, ApiError> {
        Ok(self
            .series
            .as_ref()
            .ok_or_else(|| ApiError::bad("the run has no samples over time"))?
            .read())
    }

    /// Notes a problem of a live run (a file that could not be read, a notice), shown with the
    /// run's warnings. Kept: the first 1,000.
    pub fn warn(&self, message: String) {
        if let Ok(mut w) = self.warnings.lock()
            && w.len() < WARNINGS_KEPT
        {
            w.push(message);
        }
    }

    /// The live run's warnings so far.
    pub fn warnings(&self) -> Vec<String> {
        self.warnings.lock().map(|w| w.clone()).unwrap_or_default()
    }

    /// The profile for `at`. Without a sample: the run's own profile when the run is finished
    /// and the mode cumulative; the newest sample otherwise (a live run, or deltas, which only
    /// samples have). Sample profiles are kept in `cache`. Errors: 400 when the run has no
    /// samples but one is asked for; 404 for a sample beyond the series; 410 for a sample
    /// thinned out of a live run's window (`--sample-window`), naming the nearest kept ones;
    /// 503 when a live run has no sample yet and no profile loaded.
    pub fn pick(&self, cache: &ViewCache, at: At, run: Option<&Profile>) -> Result<Picked, ApiError> {
        let (sample, mode) = (at.sample, at.mode);
        let Some(series) = &self.series else {
            return match (sample, mode) {
                (None, SampleMode::Cumulative) => Ok(Picked::Run),
                _ => Err(ApiError::bad(
                    "the run has no samples over time (sample/mode apply to snapshot and dump runs)",
                )),
            };
        };
        let series = series.read();
        let n = series.len();
        let s = match sample {
            Some(s) if s as usize >= n => {
                return Err(ApiError::not_found(format!("no sample {s} (the run has {n})")));
            }
            Some(s) if series.sample(SampleId(s)).is_some_and(|i| i.is_thinned()) => {
                let before = series.kept_samples().rev().find(|k| k.0 < s);
                let after = series.kept_samples().find(|k| k.0 > s);
                let near: Vec<String> = before
                    .iter()
                    .chain(after.iter())
                    .map(|k| k.0.to_string())
                    .collect();
                return Err(ApiError::gone(format!(
                    "sample {s} was thinned to keep the run within its window of samples (--sample-window); \
                     its interval is in the deltas of the next kept sample; nearest kept: {}",
                    near.join(", ")
                )));
            }
            Some(s) => s,
            None if mode == SampleMode::Cumulative && !self.is_live() && run.is_some() => {
                return Ok(Picked::Run);
            }
            None if n == 0 => {
                return if run.is_some() {
                    Ok(Picked::Run)
                } else {
                    Err(ApiError::unavailable("no sample has arrived yet"))
                };
            }
            None => (n - 1) as u32,
        };
        let slot = Slot::Sample {
            epoch: self.epoch.load(Ordering::SeqCst),
            seq: s,
            mode,
            timers: series.timer_count(),
        };
        let profile = cache.profile(slot, || {
            series
                .profile_at(SampleId(s), mode)
                .map_err(|e| ApiError::internal(format!("sample {s}: {e}")))
        })?;
        Ok(Picked::Sample(profile, slot))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_without_series_refuse_samples() {
        let st = SeriesState::new(None, false);
        let cache = ViewCache::new(1 << 20);
        let at = |sample, mode| At { sample, mode };
        assert!(matches!(
            st.pick(&cache, at(None, SampleMode::Cumulative), None),
            Ok(Picked::Run)
        ));
        let status = |r: Result<Picked, ApiError>| r.err().map(|e| e.status);
        assert_eq!(
            status(st.pick(&cache, at(Some(0), SampleMode::Cumulative), None)),
            Some(400)
        );
        assert_eq!(
            status(st.pick(&cache, at(None, SampleMode::Delta), None)),
            Some(400)
        );
        assert_eq!(st.read().err().map(|e| e.status), Some(400));
    }
}
