//! Stopping computations whose client went away. Each cached intermediate of a view (row set,
//! thread axis, pyramid, sample profile) is a stage; [`check`] before each one finds the
//! request's flag raised when the request was dropped (`compute::blocking` arms a
//! [`RaiseOnDrop`] for the request and sets the flag for the computation's thread with
//! [`Watching`]). A stage already running finishes and is cached — another request may be
//! waiting for it — but no new one starts for a client that left.

use crate::error::ApiError;
use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

thread_local! {
    /// The flag of the request whose computation runs on this thread, raised when its client
    /// goes away.
    static GONE: RefCell<Option<Arc<AtomicBool>>> = const { RefCell::new(None) };
}

/// Before a stage of a computation: an error when the request it runs for was dropped (its
/// client went away). Outside a computation `compute::blocking` runs, always `Ok`.
///
/// # Errors
/// 499 "client closed request" (nginx's code; nobody reads it: the client is gone).
pub(crate) fn check() -> Result<(), ApiError> {
    let gone = GONE.with(|g| g.borrow().as_ref().is_some_and(|f| f.load(Ordering::Relaxed)));
    if gone {
        return Err(ApiError {
            status: 499,
            message: "the client went away: the computation stopped".into(),
        });
    }
    Ok(())
}

/// Raises its flag when dropped armed: when the request future holding it is dropped before
/// the computation ended.
pub(crate) struct RaiseOnDrop(Option<Arc<AtomicBool>>);

impl RaiseOnDrop {
    /// Raises `flag` when dropped, unless [`RaiseOnDrop::disarm`]ed first.
    pub(crate) fn armed(flag: Arc<AtomicBool>) -> Self {
        RaiseOnDrop(Some(flag))
    }

    /// The computation ended: nothing to raise.
    pub(crate) fn disarm(&mut self) {
        self.0 = None;
    }
}

impl Drop for RaiseOnDrop {
    fn drop(&mut self) {
        if let Some(flag) = &self.0 {
            flag.store(true, Ordering::Relaxed);
        }
    }
}

/// Sets this thread's [`GONE`] flag for its lifetime (also when the computation panics).
pub(crate) struct Watching;

impl Watching {
    pub(crate) fn new(flag: Arc<AtomicBool>) -> Self {
        GONE.with(|g| *g.borrow_mut() = Some(flag));
        Watching
    }
}

impl Drop for Watching {
    fn drop(&mut self) {
        GONE.with(|g| *g.borrow_mut() = None);
    }
}

/// The cached stages a computation asked for on this thread (see [`stage`]).
#[derive(Clone, Copy, Default)]
struct Stages {
    asked: u32,
    computed: u32,
}

impl Stages {
    /// 0: no stage asked; 1: every stage found; 2: at least one computed.
    fn code(self) -> u32 {
        match (self.asked, self.computed) {
            (0, _) => 0,
            (_, 0) => 1,
            _ => 2,
        }
    }
}

thread_local! {
    static STAGES: std::cell::Cell<Stages> = const { std::cell::Cell::new(Stages { asked: 0, computed: 0 }) };
}

/// Notes that the computation on this thread asked the cache for a stage, and whether it
/// `computed` it (for the `X-Perfscape-Cache` header of `compute::blocking`).
pub(crate) fn stage(computed: bool) {
    STAGES.with(|s| {
        let mut v = s.get();
        v.asked += 1;
        v.computed += u32::from(computed);
        s.set(v);
    });
}

/// Forgets the stages noted on this thread (a new computation starts).
pub(crate) fn reset_stages() {
    STAGES.with(|s| s.set(Stages::default()));
}

/// The stages noted on this thread since [`reset_stages`]: 0 when none was asked for, 1 when
/// every one was found, 2 when at least one was computed.
pub(crate) fn stages_code() -> u32 {
    STAGES.with(|s| s.get()).code()
}
