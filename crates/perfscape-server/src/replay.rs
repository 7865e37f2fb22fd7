//! A finished run served as a live run (`serve RUN --replay`): the replay that feeds the
//! served series, held after its first sample until a page connects (`--wait-for-page`), and
//! started again from its first sample when a page asks (`POST /api/replay`).
//!
//! Every start writes into the same [`perfscape_live::SeriesHandle`] (emptied first), so the
//! server's [`crate::series::SeriesState`] keeps reading one series; each start is a new
//! *generation*: the events of a replay that was replaced are not pushed to the pages, its
//! end does not mark the series finished, and sample profiles are cached per generation
//! ([`crate::series::SeriesState::new_epoch`]).

use crate::error::ApiError;
use crate::series::SeriesState;
use crate::share::{Hub, ServerMessage};
use perfscape_live::{LiveEvent, LiveRun, ReplayOptions, ReplayPlan, ReplayStart, SeriesHandle};
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use ts_rs::TS;

/// The server a replay feeds: its series state (live or finished, warnings, cache epochs) and
/// the hub its events are pushed through (implemented by [`crate::AppState`]).
pub trait ReplayTarget: Send + Sync + 'static {
    /// The series state.
    fn series_state(&self) -> &SeriesState;
    /// The hub of the pages.
    fn pages(&self) -> &Hub;
}

/// One event of a live run: noted in the series state, pushed to every page.
pub(crate) fn on_live_event(series: &SeriesState, hub: &Hub, event: &LiveEvent) {
    match event {
        LiveEvent::FileError(e) => series.warn(e.to_string()),
        LiveEvent::Notice { message } => series.warn(message.clone()),
        LiveEvent::ProducerError {
            producer,
            offset,
            message,
        } => {
            // The server's log names every refused record (a connection reports at most 20
            // one by one, then a count).
            let line = format!("{producer}: record at byte {offset}: {message}");
            eprintln!("perfscape: {line}");
            series.warn(line);
        }
        LiveEvent::Finished { .. } => series.set_live(false),
        _ => {}
    }
    if let Ok(v) = serde_json::to_value(event) {
        hub.broadcast(&ServerMessage::Event { event: v });
    }
}

/// What a page asks of the replay (`POST /api/replay`, JSON body).
#[derive(Debug, Clone, Deserialize, TS)]
#[ts(export)]
#[serde(deny_unknown_fields)]
pub struct ReplayRequest {
    /// `"restart"`: write the run again from its first sample (every page follows).
    pub action: ReplayAction,
}

/// An action of [`ReplayRequest`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, TS)]
#[ts(export)]
#[serde(rename_all = "snake_case")]
pub enum ReplayAction {
    /// Start again from the first sample.
    Restart,
}

/// The replay's state (`POST /api/replay` answers it).
#[derive(Debug, Clone, Serialize, TS)]
#[ts(export)]
pub struct ReplayStatus {
    /// How many times the replay was started (1 for the first start).
    pub generation: u32,
    /// Held after its first sample until a page connects (`--wait-for-page`).
    pub held: bool,
}

#[derive(Default)]
struct Current {
    run: Option<Arc<LiveRun>>,
    follower: Option<JoinHandle<()>>,
    held: bool,
}

/// The replay of a served run (see the module documentation).
pub struct Replay {
    plan: ReplayPlan,
    opts: ReplayOptions,
    series: SeriesHandle,
    generation: Arc<AtomicU32>,
    current: Mutex<Current>,
}

impl std::fmt::Debug for Replay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Replay")
            .field("generation", &self.generation())
            .finish_non_exhaustive()
    }
}

impl Replay {
    /// Starts replaying `plan` with `opts`; with `wait_for_page`, the replay writes the run's
    /// first sample and holds until [`Replay::page_connected`]. Nothing is pushed to pages
    /// before [`Replay::follow`].
    ///
    /// # Errors
    /// When the replay cannot start (its directory, its watcher).
    pub fn start(
        plan: ReplayPlan,
        opts: ReplayOptions,
        wait_for_page: bool,
    ) -> Result<Arc<Self>, perfscape_live::LiveError> {
        let begin = ReplayStart {
            series: None,
            hold_after_first_sample: wait_for_page,
        };
        let run = perfscape_live::replay_plan_with(plan.clone(), &opts, begin)?;
        let series = run.series().clone();
        Ok(Arc::new(Self {
            plan,
            opts,
            series,
            generation: Arc::new(AtomicU32::new(1)),
            current: Mutex::new(Current {
                run: Some(Arc::new(run)),
                follower: None,
                held: wait_for_page,
            }),
        }))
    }

    /// The series every start of the replay grows.
    pub fn series(&self) -> &SeriesHandle {
        &self.series
    }

    /// How many times the replay was started.
    pub fn generation(&self) -> u32 {
        self.generation.load(Ordering::SeqCst)
    }

    /// The directory the replay under way writes into.
    pub fn dir(&self) -> Option<std::path::PathBuf> {
        let cur = self.current.lock().unwrap_or_else(PoisonError::into_inner);
        cur.run.as_ref().map(|r| r.dir().to_path_buf())
    }

    /// The replay's state now.
    pub fn status(&self) -> ReplayStatus {
        let held = self.current.lock().unwrap_or_else(PoisonError::into_inner).held;
        ReplayStatus {
            generation: self.generation(),
            held,
        }
    }

    /// Pushes the current replay's events to every page of `state` (call once, after making
    /// the state; [`Replay::restart`] follows its new replay itself).
    pub fn follow(&self, state: Arc<dyn ReplayTarget>) {
        let mut cur = self.current.lock().unwrap_or_else(PoisonError::into_inner);
        if cur.follower.is_none()
            && let Some(run) = &cur.run
        {
            cur.follower = Some(follow(state, run.clone(), self.generation.clone()));
        }
    }

    /// A page connected: a replay held after its first sample goes on.
    pub fn page_connected(&self) {
        let mut cur = self.current.lock().unwrap_or_else(PoisonError::into_inner);
        if cur.held {
            cur.held = false;
            if let Some(run) = &cur.run {
                run.resume_replay();
            }
        }
    }

    /// Starts the replay again from the run's first sample: the replay under way stops, the
    /// series is emptied and grows again, and every page is told
    /// (`{"event": "restarted", "generation": g}`) before the new samples arrive.
    ///
    /// # Errors
    /// 500 when the new replay cannot start.
    pub fn restart(&self, state: Arc<dyn ReplayTarget>) -> Result<ReplayStatus, ApiError> {
        let mut cur = self.current.lock().unwrap_or_else(PoisonError::into_inner);
        // From now on the old replay's events are not pushed.
        let generation = self.generation.fetch_add(1, Ordering::SeqCst) + 1;
        if let Some(old) = cur.run.take() {
            old.stop_and_wait();
        }
        if let Some(f) = cur.follower.take() {
            let _ = f.join();
        }
        let begin = ReplayStart {
            series: Some(self.series.clone()),
            hold_after_first_sample: false,
        };
        let run = perfscape_live::replay_plan_with(self.plan.clone(), &self.opts, begin)
            .map_err(|e| ApiError::internal(format!("the replay did not start again: {e}")))?;
        // Sample profiles of the old replay are not read again.
        state.series_state().new_epoch();
        state.series_state().set_live(true);
        let event = serde_json::json!({ "event": "restarted", "generation": generation });
        state.pages().broadcast(&ServerMessage::Event { event });
        let run = Arc::new(run);
        cur.follower = Some(follow(state, run.clone(), self.generation.clone()));
        cur.run = Some(run);
        cur.held = false;
        Ok(ReplayStatus {
            generation,
            held: false,
        })
    }

    /// Stops the replay under way and waits for its follower (the server is shutting down).
    pub fn stop(&self) {
        let mut cur = self.current.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(run) = &cur.run {
            run.stop();
        }
        if let Some(f) = cur.follower.take() {
            let _ = f.join();
        }
    }
}

/// Follows one start of the replay: its events go to every page while it is the current
/// generation (see [`crate::follow_live`]).
fn follow(state: Arc<dyn ReplayTarget>, run: Arc<LiveRun>, generation: Arc<AtomicU32>) -> JoinHandle<()> {
    let mine = generation.load(Ordering::SeqCst);
    std::thread::spawn(move || {
        let current = || generation.load(Ordering::SeqCst) == mine;
        while let Some(event) = run.recv() {
            if current() {
                on_live_event(state.series_state(), state.pages(), &event);
            }
        }
        if current() {
            state.series_state().set_live(false);
        }
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn requests_parse() {
        let r: super::ReplayRequest =
            serde_json::from_str(r#"{"action":"restart"}"#).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(r.action, super::ReplayAction::Restart);
        assert!(serde_json::from_str::<super::ReplayRequest>(r#"{"action":"rewind"}"#).is_err());
    }
}
