//! Where view computations run: on tokio's blocking pool, at most one per core at a time
//! ([`Slots`], [`blocking`]), their answers serialized there too; and `GET /api/memory`, what the server
//! keeps against its budget and how many computations run and wait ([`memory`]).
//! A computation whose client goes away stops at its next stage ([`crate::cancel`]).

use crate::api::MemoryInfo;
use crate::cache::CacheStats;
use crate::cancel::{RaiseOnDrop, Watching};
use crate::error::ApiError;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// The view computations that may run at once: one per core. More would only share the cores
/// while each holds its working memory, which the cache's budget does not see (a clustering, a
/// row set, the answer and its JSON). Requests beyond wait in arrival order (the semaphore is
/// fair); one whose client goes away while it waits is dropped without running. Cheap to
/// clone (one per server, shared).
#[derive(Clone)]
pub(crate) struct Slots(Arc<Inner>);

struct Inner {
    semaphore: tokio::sync::Semaphore,
    size: u32,
    /// Requests waiting for a slot, and computations running.
    waiting: AtomicU32,
    running: AtomicU32,
}

impl Slots {
    /// One slot per core of the machine.
    pub(crate) fn per_core() -> Self {
        let cores = std::thread::available_parallelism().map_or(2, std::num::NonZeroUsize::get);
        Slots(Arc::new(Inner {
            semaphore: tokio::sync::Semaphore::new(cores),
            size: u32::try_from(cores).unwrap_or(u32::MAX),
            waiting: AtomicU32::new(0),
            running: AtomicU32::new(0),
        }))
    }
}

/// Decrements its counter when dropped (also when the request is dropped while it waits).
struct Count<'a>(&'a AtomicU32);

impl<'a> Count<'a> {
    fn new(c: &'a AtomicU32) -> Self {
        c.fetch_add(1, Ordering::Relaxed);
        Count(c)
    }
}

impl Drop for Count<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Runs `f` on the blocking pool once one of the `slots` is free, and answers its value as
/// JSON (serialized in the slot), or its error.
///
/// The answer says how it was made (headers, read by `bench/soak.mjs` to tell hits from
/// misses): `Server-Timing: wait;dur=MS, compute;dur=MS` (the time spent waiting for a slot,
/// and on the blocking pool) and `X-Perfscape-Cache`: `hit` when every cached stage the view
/// asked for was in the cache (or computed at the same time for another request), `miss`
/// when this request computed at least one, `direct` when the view has no cached stage.
pub(crate) async fn blocking<T: serde::Serialize + Send + 'static>(
    slots: &Slots,
    f: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Response {
    let asked = std::time::Instant::now();
    let waiting = Count::new(&slots.0.waiting);
    let Ok(_slot) = slots.0.semaphore.acquire().await else {
        return ApiError::internal("the server is shutting down").into_response();
    };
    drop(waiting);
    let started = std::time::Instant::now();
    let _running = Count::new(&slots.0.running);
    let gone = Arc::new(AtomicBool::new(false));
    let mut raise = RaiseOnDrop::armed(gone.clone());
    let stages = Arc::new(AtomicU32::new(0));
    let seen = stages.clone();
    let mut answer = json_on_pool(move || {
        let _watching = Watching::new(gone);
        crate::cancel::reset_stages();
        let v = f();
        seen.store(crate::cancel::stages_code(), Ordering::Relaxed);
        v
    })
    .await;
    // Answered: nothing to stop.
    raise.disarm();
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    let timing = format!(
        "wait;dur={:.1}, compute;dur={:.1}",
        ms(started - asked),
        ms(started.elapsed())
    );
    let cache = match stages.load(Ordering::Relaxed) {
        0 => "direct",
        1 => "hit",
        _ => "miss",
    };
    let headers = answer.headers_mut();
    if let Ok(v) = axum::http::HeaderValue::from_str(&timing) {
        headers.insert("server-timing", v);
    }
    headers.insert("x-perfscape-cache", axum::http::HeaderValue::from_static(cache));
    answer
}

/// Runs `f` on the blocking pool at once (for SQL, which has its own time and memory limits
/// and must not hold the views' slots) and answers its value as JSON, or its error.
pub(crate) async fn json_on_pool<T: serde::Serialize + Send + 'static>(
    f: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Response {
    let run = move || {
        let v = f()?;
        serde_json::to_vec(&v)
            .map_err(|e| ApiError::internal(format!("cannot write the answer as JSON: {e}")))
    };
    match tokio::task::spawn_blocking(run).await {
        Ok(Ok(body)) => ([(axum::http::header::CONTENT_TYPE, "application/json")], body).into_response(),
        Ok(Err(e)) => e.into_response(),
        Err(e) => ApiError::internal(e.to_string()).into_response(),
    }
}

/// The process's resident memory in bytes (Linux: `VmRSS` of `/proc/self/status`, in kB
/// whatever the page size); `None` elsewhere.
pub(crate) fn rss_bytes() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: f64 = line
        .trim_start_matches("VmRSS:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kb * 1024.0)
}

/// The answer of `GET /api/memory` for the server's `budget` with the `loaded` runs' bytes,
/// the cache's `stats` and the computation `slots`.
pub(crate) fn memory((budget, loaded): (u64, u64), stats: CacheStats, slots: &Slots) -> MemoryInfo {
    MemoryInfo {
        budget_bytes: budget as f64,
        loaded_bytes: loaded as f64,
        cache_budget_bytes: stats.budget as f64,
        held_bytes: stats.bytes as f64,
        entries: stats.entries as f64,
        building_bytes: stats.building as f64,
        computations: stats.computations as f64,
        slots: slots.0.size,
        computing: slots.0.running.load(Ordering::Relaxed),
        waiting: slots.0.waiting.load(Ordering::Relaxed),
        rss_bytes: rss_bytes(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cancel::check;
    use std::sync::mpsc;

    /// Sends on its channel when dropped: the computation ended, however.
    struct Ended(mpsc::Sender<()>);
    impl Drop for Ended {
        fn drop(&mut self) {
            let _ = self.0.send(());
        }
    }

    /// A computation of two stages: the first waits for `go`; the second records that it ran.
    /// With `leave`, the request is dropped (its client went away) during the first stage.
    async fn two_stages(leave: bool) -> bool {
        let slots = Slots::per_core();
        let (started_tx, started_rx) = mpsc::channel();
        let (go_tx, go_rx) = mpsc::channel::<()>();
        let (ended_tx, ended_rx) = mpsc::channel();
        let second = Arc::new(AtomicBool::new(false));
        let ran = second.clone();
        let request = tokio::spawn(async move {
            blocking(&slots, move || {
                let _ended = Ended(ended_tx);
                check()?;
                started_tx.send(()).unwrap();
                go_rx.recv().unwrap();
                check()?;
                ran.store(true, Ordering::Relaxed);
                Ok(1u32)
            })
            .await
            .status()
        });
        tokio::task::spawn_blocking(move || started_rx.recv().unwrap())
            .await
            .unwrap();
        if leave {
            request.abort();
            assert!(request.await.unwrap_err().is_cancelled());
            go_tx.send(()).unwrap();
        } else {
            go_tx.send(()).unwrap();
            assert_eq!(request.await.unwrap(), 200);
        }
        tokio::task::spawn_blocking(move || ended_rx.recv().unwrap())
            .await
            .unwrap();
        second.load(Ordering::Relaxed)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_computation_whose_client_left_starts_no_new_stage() {
        assert!(two_stages(false).await, "with its client there, both stages run");
        assert!(
            !two_stages(true).await,
            "the client left in stage 1: stage 2 never starts"
        );
        // Outside a request nothing is ever cancelled.
        assert!(check().is_ok());
    }
}
