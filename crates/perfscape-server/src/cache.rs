//! [`ViewCache`]: one memory budget for everything the server keeps between requests — sample
//! profiles, ranked event tables, row sets, thread axes and pyramids — in two concurrent
//! `moka` caches: one for profiles and pyramids (large), one for tables, row sets and axes
//! (small but dear to compute: a sixteenth of the budget), so that a stream of new pyramids
//! does not evict the clusterings they are drawn over. Entries are weighed by their approximate
//! heap bytes; when a part's total passes its share the least recently used are evicted. Each
//! key is computed once: concurrent requests missing the same key wait for the one computation
//! (`try_get_with`).
//!
//! The cache's budget (the server's budget less the loaded runs: see
//! [`crate::AppState`]) covers what is kept and what is being built: the cache holds at most
//! half of it, and pyramids being built (the large computations) at most a quarter — a build
//! that would pass that waits for the others to finish (one build always runs); the last
//! quarter is left to the answers being computed and the allocator's own pages, so that the
//! process's resident memory stays within the server's budget. A
//! pyramid's levels are sized so that a whole pyramid fits that quarter (finer blocks are read
//! from the profile, the answers are the same); one that could not be kept even then is
//! refused with a 503 before it is built.

use crate::error::ApiError;
use perfscape_analysis::answers::{EventsResponse, RowSpec};
use perfscape_analysis::axis::{AxisInfo, AxisSpec};
use perfscape_analysis::comm::CommMatrix;
use perfscape_analysis::params::Values;
use perfscape_analysis::pyramid::{DEFAULT_LEVEL_CELLS, Pyramid};
use perfscape_analysis::views::RowSet;
use perfscape_model::{Profile, SampleMode};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};

/// The share of the budget kept for event tables, row sets and thread axes: one part in this.
const INDEX_SHARE: u64 = 16;

/// The smallest budget (bytes): below it nothing useful fits.
pub const MIN_BUDGET: u64 = 1 << 16;
/// The default budget's floor: 1 GiB.
pub const DEFAULT_BUDGET_FLOOR: u64 = 1 << 30;

/// The default budget for a run whose profile takes `profile_bytes`: 4 times that, or 1 GiB,
/// whichever is larger.
pub fn default_budget(profile_bytes: u64) -> u64 {
    profile_bytes.saturating_mul(4).max(DEFAULT_BUDGET_FLOOR)
}

/// Approximate heap bytes of a profile: its value columns, names and threads.
pub fn profile_bytes(p: &Profile) -> u64 {
    let names: usize = p.events().iter().map(|e| e.frame.len() + 96).sum();
    (p.value_heap_bytes() + names) as u64
}

/// Which profile an entry was computed from: the run's own, or one sample's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Slot {
    /// The run's profile.
    Run,
    /// The profile of sample `seq` in `mode`, made when the series had `timers` timers (a live
    /// series that gained events makes new ones).
    Sample {
        /// The series' epoch (a replay started again empties its series: see
        /// [`crate::series::SeriesState::new_epoch`]).
        epoch: u32,
        /// Sequence number.
        seq: u32,
        /// Cumulative or delta.
        mode: SampleMode,
        /// Timers of the series then.
        timers: usize,
    },
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Key {
    Profile(Slot),
    Events(Slot, Values, bool),
    Rows(Slot, RowSpec),
    Axis(Slot, AxisSpec),
    Pyramid(Slot, RowSpec, AxisSpec),
    Comm(Slot),
}

#[derive(Clone)]
enum Entry {
    Profile(Arc<Profile>),
    Events(Arc<EventsResponse>),
    Rows(Arc<RowSet>),
    Axis(Arc<AxisInfo>),
    Pyramid(Arc<Pyramid>),
    Comm(Arc<CommMatrix>),
}

impl Entry {
    fn bytes(&self) -> u64 {
        let b = match self {
            Entry::Profile(p) => return profile_bytes(p),
            Entry::Events(e) => e.heap_bytes(),
            Entry::Rows(r) => r.heap_bytes(),
            Entry::Axis(a) => a.heap_bytes(),
            Entry::Pyramid(p) => p.heap_bytes(),
            Entry::Comm(m) => m.heap_bytes(),
        };
        b as u64
    }
}

/// What the cache holds and has done (see [`ViewCache::stats`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheStats {
    /// The budget (bytes).
    pub budget: u64,
    /// Approximate bytes held.
    pub bytes: u64,
    /// Entries held.
    pub entries: u64,
    /// Computations run since the start (one per key missed, however many requests wanted it
    /// at once).
    pub computations: u64,
    /// Bytes of the pyramids being built now.
    pub building: u64,
}

/// Bytes reserved by the pyramids being built, and a signal when some are released.
#[derive(Default)]
struct Building {
    bytes: Mutex<u64>,
    released: Condvar,
}

/// A reservation of [`Building`] bytes, released when dropped.
struct Reservation<'a> {
    pool: &'a Building,
    bytes: u64,
}

impl Building {
    /// Reserves `bytes`, waiting while other builds hold so much that `limit` would be passed
    /// (a build alone may pass it).
    fn reserve(&self, bytes: u64, limit: u64) -> Reservation<'_> {
        let mut held = self
            .bytes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        while *held > 0 && *held + bytes > limit {
            held = self
                .released
                .wait(held)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        *held += bytes;
        Reservation { pool: self, bytes }
    }

    fn held(&self) -> u64 {
        *self
            .bytes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        let mut held = self
            .pool
            .bytes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *held -= self.bytes;
        self.pool.released.notify_all();
    }
}

/// The server's cache (see the module documentation).
pub struct ViewCache {
    /// Profiles and pyramids: large, and cheap for their size.
    bulk: moka::sync::Cache<Key, Entry>,
    /// Event tables, row sets and thread axes: small, and dear for their size (a clustering of
    /// the threads takes tens of milliseconds for a few kilobytes); kept apart so that a stream
    /// of new pyramids does not evict them.
    index: moka::sync::Cache<Key, Entry>,
    budget: u64,
    computations: AtomicU64,
    building: Building,
}

impl std::fmt::Debug for ViewCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ViewCache")
            .field("budget", &self.budget)
            .finish_non_exhaustive()
    }
}

impl ViewCache {
    /// A cache of `budget` bytes (at least [`MIN_BUDGET`]).
    pub fn new(budget: u64) -> Self {
        let budget = budget.max(MIN_BUDGET);
        let part = |bytes: u64| {
            moka::sync::Cache::builder()
                .max_capacity(bytes)
                .weigher(|_: &Key, v: &Entry| u32::try_from(v.bytes()).unwrap_or(u32::MAX))
                .eviction_policy(moka::policy::EvictionPolicy::lru())
                .build()
        };
        Self {
            bulk: part(budget / 2 - budget / INDEX_SHARE),
            index: part(budget / INDEX_SHARE),
            budget,
            computations: AtomicU64::new(0),
            building: Building::default(),
        }
    }

    /// The budget in bytes.
    pub fn budget(&self) -> u64 {
        self.budget
    }

    /// The bytes the cache keeps at most for profiles and pyramids: half the budget less the
    /// sixteenth kept for event tables, row sets and thread axes.
    pub fn capacity(&self) -> u64 {
        self.budget / 2 - self.budget / INDEX_SHARE
    }

    /// The part of the cache `key` lives in.
    fn part(&self, key: &Key) -> &moka::sync::Cache<Key, Entry> {
        match key {
            Key::Profile(_) | Key::Pyramid(..) => &self.bulk,
            Key::Events(..) | Key::Rows(..) | Key::Axis(..) | Key::Comm(..) => &self.index,
        }
    }

    /// Cells per stored pyramid level: at most an eighth of the budget at 16 bytes a cell (a
    /// pyramid's levels together take about twice their first level: a quarter), and at most
    /// [`DEFAULT_LEVEL_CELLS`] (reached with a 2 GiB budget).
    pub fn level_cells(&self) -> usize {
        usize::try_from(self.budget / 128)
            .unwrap_or(usize::MAX)
            .clamp(1 << 10, DEFAULT_LEVEL_CELLS)
    }

    /// The sizes held and the computations run so far (pending evictions are done first).
    pub fn stats(&self) -> CacheStats {
        self.bulk.run_pending_tasks();
        self.index.run_pending_tasks();
        CacheStats {
            budget: self.budget,
            bytes: self.bulk.weighted_size() + self.index.weighted_size(),
            entries: self.bulk.entry_count() + self.index.entry_count(),
            computations: self.computations.load(Ordering::Relaxed),
            building: self.building.held(),
        }
    }

    /// The entry of `key`, computed by `f` once if missing (concurrent callers wait for it).
    fn get<T>(
        &self,
        key: Key,
        wrap: fn(Arc<T>) -> Entry,
        unwrap: fn(Entry) -> Option<Arc<T>>,
        f: impl FnOnce() -> Result<T, ApiError>,
    ) -> Result<Arc<T>, ApiError> {
        // A client that went away starts no new stage (see `cancel`).
        crate::cancel::check()?;
        let mut computed = false;
        let part = self.part(&key);
        let entry = part
            .try_get_with(key, || {
                computed = true;
                self.computations.fetch_add(1, Ordering::Relaxed);
                f().map(|v| wrap(Arc::new(v)))
            })
            .map_err(|e| (*e).clone())?;
        crate::cancel::stage(computed);
        if computed {
            // moka evicts in batches; a burst of new large entries would pass the budget
            // until the next batch: evict now.
            part.run_pending_tasks();
        }
        unwrap(entry).ok_or_else(|| ApiError::internal("a cache entry of the wrong kind"))
    }

    /// The profile of a sample, made by `f` when missing.
    pub fn profile(
        &self,
        slot: Slot,
        f: impl FnOnce() -> Result<Profile, ApiError>,
    ) -> Result<Arc<Profile>, ApiError> {
        self.get(
            Key::Profile(slot),
            Entry::Profile,
            |e| match e {
                Entry::Profile(p) => Some(p),
                _ => None,
            },
            f,
        )
    }

    /// The ranked event table of `values` (and callpaths) of the profile in `slot`.
    pub fn events(
        &self,
        slot: Slot,
        values: Values,
        callpaths: bool,
        f: impl FnOnce() -> EventsResponse,
    ) -> Result<Arc<EventsResponse>, ApiError> {
        self.get(
            Key::Events(slot, values, callpaths),
            Entry::Events,
            |e| match e {
                Entry::Events(x) => Some(x),
                _ => None,
            },
            || Ok(f()),
        )
    }

    /// The communication matrix of the profile in `slot` (`perfscape_analysis::comm`).
    pub fn comm(&self, slot: Slot, f: impl FnOnce() -> CommMatrix) -> Result<Arc<CommMatrix>, ApiError> {
        self.get(
            Key::Comm(slot),
            Entry::Comm,
            |e| match e {
                Entry::Comm(x) => Some(x),
                _ => None,
            },
            || Ok(f()),
        )
    }

    /// The rows `spec` names for the profile in `slot`.
    pub fn rows(
        &self,
        slot: Slot,
        spec: RowSpec,
        f: impl FnOnce() -> RowSet,
    ) -> Result<Arc<RowSet>, ApiError> {
        self.get(
            Key::Rows(slot, spec),
            Entry::Rows,
            |e| match e {
                Entry::Rows(x) => Some(x),
                _ => None,
            },
            || Ok(f()),
        )
    }

    /// The thread axis `spec` names for the profile in `slot`.
    pub fn axis(
        &self,
        slot: Slot,
        spec: AxisSpec,
        f: impl FnOnce() -> AxisInfo,
    ) -> Result<Arc<AxisInfo>, ApiError> {
        self.get(
            Key::Axis(slot, spec),
            Entry::Axis,
            |e| match e {
                Entry::Axis(x) => Some(x),
                _ => None,
            },
            || Ok(f()),
        )
    }

    /// The pyramid of `rows` (`rows_n` of them, `stored` with cells:
    /// [`perfscape_analysis::pyramid::rows_with_cells`]) × `axis` (`cols` threads) of the
    /// profile in `slot`, built by `f` with [`ViewCache::level_cells`].
    ///
    /// The build waits while other pyramid builds hold a quarter of the budget.
    ///
    /// # Errors
    /// 503 when the pyramid could not be kept (more than [`ViewCache::capacity`]).
    pub fn pyramid(
        &self,
        slot: Slot,
        (rows, rows_n, stored): (RowSpec, usize, usize),
        (axis, cols): (AxisSpec, usize),
        f: impl FnOnce(usize) -> Pyramid,
    ) -> Result<Arc<Pyramid>, ApiError> {
        let cells = self.level_cells();
        let need = self.affordable(rows_n, stored, cols, cells)?;
        self.get(
            Key::Pyramid(slot, rows, axis),
            Entry::Pyramid,
            |e| match e {
                Entry::Pyramid(x) => Some(x),
                _ => None,
            },
            || {
                let _reserved = self.building.reserve(need, self.budget / 4);
                Ok(f(cells))
            },
        )
    }

    /// The bytes a pyramid of `rows_n` (`stored` with cells) × `cols` with `cells` per level
    /// takes.
    ///
    /// # Errors
    /// 503 when that is more than [`ViewCache::capacity`].
    fn affordable(&self, rows_n: usize, stored: usize, cols: usize, cells: usize) -> Result<u64, ApiError> {
        let need = Pyramid::estimated_heap_bytes(rows_n, stored, cols, cells) as u64;
        if need > self.capacity() {
            return Err(ApiError::unavailable(format!(
                "this view of {rows_n} rows × {cols} threads needs about {:.1} MiB of memory, more \
                 than the {:.1} MiB the server's cache keeps: start perfscape serve with a larger \
                 --cache-memory",
                need as f64 / f64::from(1 << 20),
                self.capacity() as f64 / f64::from(1 << 20)
            )));
        }
        Ok(need)
    }

    /// True when the pyramid of `rows` × `axis` of the profile in `slot` is held now.
    pub fn has_pyramid(&self, slot: Slot, rows: RowSpec, axis: AxisSpec) -> bool {
        self.bulk.contains_key(&Key::Pyramid(slot, rows, axis))
    }

    /// A pyramid of `rows_n` rows (`stored` with cells) × `cols` threads built by `f` with
    /// [`ViewCache::level_cells`] for one request and not kept: it counts as a computation and
    /// as memory being built while it is made (waiting like [`ViewCache::pyramid`]).
    ///
    /// # Errors
    /// 503 when it would need more than [`ViewCache::capacity`].
    pub fn window_pyramid(
        &self,
        (rows_n, stored, cols): (usize, usize, usize),
        f: impl FnOnce(usize) -> Pyramid,
    ) -> Result<Pyramid, ApiError> {
        crate::cancel::check()?;
        let cells = self.level_cells();
        let need = self.affordable(rows_n, stored, cols, cells)?;
        self.computations.fetch_add(1, Ordering::Relaxed);
        crate::cancel::stage(true);
        let _reserved = self.building.reserve(need, self.budget / 4);
        Ok(f(cells))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use perfscape_analysis::views::{RowKind, RowOrder};
    use perfscape_model::{MetricId, ValueKind};

    #[test]
    fn a_pyramid_larger_than_the_budget_is_refused_before_it_is_built() {
        let cache = ViewCache::new(MIN_BUDGET);
        let rows = RowSpec {
            values: Values {
                metric: MetricId(0),
                kind: ValueKind::Exclusive,
            },
            rows: RowKind::Events,
            callpaths: false,
            order: RowOrder::Rank,
        };
        let e = cache
            .pyramid(
                Slot::Run,
                (rows, 1_000_000, 1_000_000),
                (AxisSpec::ID, 4096),
                |_| unreachable!("not built"),
            )
            .unwrap_err();
        assert_eq!(e.status, 503);
        assert!(e.message.contains("--cache-memory"), "{}", e.message);
        assert_eq!(cache.stats().computations, 0);
    }

    #[test]
    fn builds_wait_while_others_hold_a_quarter_of_the_budget() {
        let pool = Building::default();
        let a = pool.reserve(60, 100);
        assert_eq!(pool.held(), 60);
        std::thread::scope(|s| {
            let waiter = s.spawn(|| {
                // 60 + 50 > 100: waits until `a` is released.
                let _b = pool.reserve(50, 100);
                pool.held()
            });
            std::thread::sleep(std::time::Duration::from_millis(50));
            assert_eq!(pool.held(), 60, "the second build waits");
            drop(a);
            assert_eq!(waiter.join().unwrap(), 50);
        });
        // Alone, a build larger than the limit runs.
        let big = pool.reserve(500, 100);
        assert_eq!(pool.held(), 500);
        drop(big);
        assert_eq!(pool.held(), 0);
    }

    #[test]
    fn the_default_budget_is_four_profiles_or_a_gibibyte() {
        assert_eq!(default_budget(10 << 20), 1 << 30);
        assert_eq!(default_budget(1 << 30), 4 << 30);
        assert_eq!(ViewCache::new(2 << 30).level_cells(), DEFAULT_LEVEL_CELLS);
        assert_eq!(ViewCache::new(1 << 30).capacity(), (1 << 29) - (1 << 26));
        assert_eq!(ViewCache::new(0).budget(), MIN_BUDGET);
    }
}
