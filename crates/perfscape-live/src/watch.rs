//! The watcher thread and the [`LiveRun`] handle.

use crate::engine::Engine;
use crate::event::{FinishReason, LiveEvent};
use crate::options::{LiveError, LiveOptions};
use crate::series_handle::SeriesHandle;
use notify::event::{AccessKind, AccessMode};
use notify::{EventKind, RecursiveMode, Watcher};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What wakes the watcher thread.
enum Msg {
    Fs(notify::Result<notify::Event>),
    Stop,
}

/// Stops a live run from anywhere (a Ctrl-C handler, a server shutting down). Cheap to
/// clone; `Send + Sync`.
#[derive(Clone)]
pub struct StopHandle {
    stop: Arc<dyn Fn() + Send + Sync>,
}

impl std::fmt::Debug for StopHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StopHandle")
    }
}

impl std::fmt::Debug for Msg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Msg::Fs(_) => f.write_str("Fs"),
            Msg::Stop => f.write_str("Stop"),
        }
    }
}

impl StopHandle {
    /// Asks the watcher to stop: it reads what the files hold now, integrates the samples
    /// that were waiting (threads that did not write them are missing), sends their events
    /// and [`crate::FinishReason::Stopped`]. Does nothing once the run finished.
    pub fn stop(&self) {
        (self.stop)();
    }

    /// A handle that calls `stop` (a streamed run's listener sets its flag).
    pub(crate) fn new(stop: impl Fn() + Send + Sync + 'static) -> Self {
        Self { stop: Arc::new(stop) }
    }
}

/// A watched run: a background thread follows the directory and integrates its samples.
///
/// Read the [`LiveEvent`]s with [`LiveRun::recv`] (or [`LiveRun::recv_timeout`],
/// [`LiveRun::try_recv`], [`LiveRun::events`]); read the growing series with
/// [`LiveRun::series`]. Events are delivered through an unbounded `std::sync::mpsc`
/// channel, so none is lost or repeated whatever the consumer's pace. `Send + Sync`: a
/// server keeps it in an `Arc`, forwards the events from one blocking task and answers view
/// requests from [`LiveRun::series`] at the same time. Dropping it stops the watcher and
/// waits for its thread (and removes a replay's temporary directory).
#[derive(Debug)]
pub struct LiveRun {
    dir: PathBuf,
    series: SeriesHandle,
    events: Mutex<Receiver<LiveEvent>>,
    stop: StopHandle,
    worker: Mutex<Option<JoinHandle<()>>>,
    finished: Arc<OnceLock<FinishReason>>,
    replay: Option<ReplayGuard>,
}

/// Starts watching the run directory `dir` (see the crate documentation). Errors when `dir`
/// is not a directory or the watcher thread cannot be started; a file-system notification
/// backend that cannot be used is reported as a [`LiveEvent::Notice`] and the directory is
/// then polled every [`LiveOptions::poll_interval`].
pub fn watch(dir: impl AsRef<Path>, opts: &LiveOptions) -> Result<LiveRun, LiveError> {
    start(dir.as_ref(), opts, None, None)
}

/// Starts watching `dir`; the samples grow `series` (emptied first) or a new series.
pub(crate) fn start(
    dir: &Path,
    opts: &LiveOptions,
    replay: Option<ReplayGuard>,
    series: Option<SeriesHandle>,
) -> Result<LiveRun, LiveError> {
    if !dir.is_dir() {
        return Err(LiveError::NotADirectory(dir.to_path_buf()));
    }
    // One spelling of every path: events and listings then name files the same way.
    let dir = dir.canonicalize().map_err(|source| LiveError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let (tx, rx) = mpsc::channel::<Msg>();
    let (etx, erx) = mpsc::channel::<LiveEvent>();
    let engine = Engine::new(dir.clone(), opts.clone(), Instant::now(), series);
    let series = engine.series().clone();
    let mut notices = Vec::new();
    let watcher = if opts.use_notify {
        let ftx = tx.clone();
        let made = notify::recommended_watcher(move |res| {
            let _ = ftx.send(Msg::Fs(res));
        })
        .and_then(|mut w| w.watch(&dir, RecursiveMode::NonRecursive).map(|()| w));
        match made {
            Ok(w) => Some(w),
            Err(e) => {
                notices.push(format!(
                    "file-system notifications are not available ({e}); polling the directory every {:?}",
                    opts.poll_interval
                ));
                None
            }
        }
    } else {
        None
    };
    let poll = opts.poll_interval.max(Duration::from_millis(1));
    let finished = Arc::new(OnceLock::new());
    let done = finished.clone();
    let worker = std::thread::Builder::new()
        .name("perfscape-live".into())
        .spawn(move || {
            for message in notices {
                let _ = etx.send(LiveEvent::Notice { message });
            }
            run(engine, &rx, &Emit { tx: etx, done }, poll);
            drop(watcher);
        })
        .map_err(LiveError::Thread)?;
    Ok(LiveRun {
        dir,
        series,
        events: Mutex::new(erx),
        stop: StopHandle::new(move || {
            let _ = tx.send(Msg::Stop);
        }),
        worker: Mutex::new(Some(worker)),
        finished,
        replay,
    })
}

/// Sends events; notes the end before the `Finished` event goes out.
struct Emit {
    tx: Sender<LiveEvent>,
    done: Arc<OnceLock<FinishReason>>,
}

impl Emit {
    fn send(&self, e: LiveEvent) {
        if let LiveEvent::Finished { reason } = &e {
            let _ = self.done.set(*reason);
        }
        // A dropped receiver is fine: the series may still be read through its handle.
        let _ = self.tx.send(e);
    }
}

/// The watcher thread's loop.
fn run(mut engine: Engine, rx: &Receiver<Msg>, events: &Emit, poll: Duration) {
    let mut next_scan = Instant::now();
    loop {
        let now = Instant::now();
        let mut rescan = now >= next_scan;
        let mut changed = Vec::new();
        let mut stop = false;
        let mut first = None;
        if !rescan {
            let mut wait = next_scan - now;
            if let Some(w) = engine.next_wakeup(now) {
                wait = wait.min(w);
            }
            match rx.recv_timeout(wait) {
                Ok(m) => first = Some(m),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => stop = true,
            }
        }
        // Everything queued meanwhile, in one round.
        for m in first.into_iter().chain(std::iter::from_fn(|| rx.try_recv().ok())) {
            match m {
                Msg::Stop => stop = true,
                Msg::Fs(Ok(ev)) => {
                    if ev.need_rescan() {
                        rescan = true;
                    }
                    match ev.kind {
                        EventKind::Access(AccessKind::Close(AccessMode::Write)) => {}
                        EventKind::Access(_) => continue,
                        EventKind::Remove(_) | EventKind::Modify(notify::event::ModifyKind::Name(_)) => {
                            rescan = true;
                        }
                        _ => {}
                    }
                    // The watch is not recursive: every path names a file of the directory.
                    changed.extend(
                        ev.paths
                            .iter()
                            .filter_map(|p| p.file_name().map(|n| engine.dir().join(n))),
                    );
                }
                Msg::Fs(Err(_)) => rescan = true,
            }
        }
        let now = Instant::now();
        if stop {
            for e in engine.stop(now) {
                events.send(e);
            }
            return;
        }
        if rescan {
            next_scan = now + poll;
        }
        for e in engine.step(changed, rescan, now) {
            events.send(e);
        }
        if engine.is_finished() {
            return;
        }
    }
}

impl LiveRun {
    /// A run driven by `worker` (a streamed run's engine thread): its events come from
    /// `events`, `stop` stops it, `finished` is set before its `Finished` event.
    pub(crate) fn from_parts(
        dir: PathBuf,
        series: SeriesHandle,
        events: Receiver<LiveEvent>,
        stop: StopHandle,
        worker: JoinHandle<()>,
        finished: Arc<OnceLock<FinishReason>>,
    ) -> Self {
        Self {
            dir,
            series,
            events: Mutex::new(events),
            stop,
            worker: Mutex::new(Some(worker)),
            finished,
            replay: None,
        }
    }

    /// The directory watched (for a replay: the directory the run is written into; for a
    /// streamed run: the address listened on, `tcp://HOST:PORT` or the socket's path).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The growing series (shared; see [`SeriesHandle`]).
    pub fn series(&self) -> &SeriesHandle {
        &self.series
    }

    /// Why the run finished, once it did (set before [`LiveEvent::Finished`] is sent);
    /// `None` while it is live.
    pub fn finished(&self) -> Option<FinishReason> {
        self.finished.get().copied()
    }

    /// A handle that stops the run from another thread.
    pub fn stop_handle(&self) -> StopHandle {
        self.stop.clone()
    }

    /// Stops the run (see [`StopHandle::stop`]); the remaining events, ending with
    /// [`LiveEvent::Finished`], can still be received.
    pub fn stop(&self) {
        self.stop.stop();
        if let Some(r) = &self.replay {
            r.stop();
        }
    }

    /// Stops the run and waits for its watcher thread to end: the series no longer changes
    /// afterwards (the remaining events can still be received).
    pub fn stop_and_wait(&self) {
        self.stop();
        let worker = self.worker.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(w) = worker {
            let _ = w.join();
        }
    }

    /// A replay started with [`crate::ReplayStart::hold_after_first_sample`]: writes the rest
    /// of the run from now on, at its pace. Does nothing otherwise, or once resumed.
    pub fn resume_replay(&self) {
        if let Some(r) = &self.replay {
            r.resume();
        }
    }

    /// The next event, waiting for it; `None` once the run finished and every event was
    /// received. Only one thread receives at a time (the others wait).
    pub fn recv(&self) -> Option<LiveEvent> {
        self.events
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .recv()
            .ok()
    }

    /// The next event, waiting at most `timeout`.
    pub fn recv_timeout(&self, timeout: Duration) -> Result<LiveEvent, RecvTimeoutError> {
        self.events
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .recv_timeout(timeout)
    }

    /// The next event if one is waiting.
    pub fn try_recv(&self) -> Result<LiveEvent, TryRecvError> {
        self.events
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .try_recv()
    }

    /// Iterates over the events until the run finished ([`LiveRun::recv`] in a loop).
    pub fn events(&self) -> impl Iterator<Item = LiveEvent> + '_ {
        std::iter::from_fn(|| self.recv())
    }
}

impl LiveRun {
    pub(crate) fn set_replay_writer(&self, writer: JoinHandle<()>) {
        if let Some(r) = &self.replay {
            r.set_writer(writer);
        }
    }
}

impl Drop for LiveRun {
    fn drop(&mut self) {
        self.stop();
        let worker = self.worker.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(w) = worker {
            let _ = w.join();
        }
        // The replay guard (writer thread, temporary directory) is dropped after this.
    }
}

/// What the writer of a replay is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WriterMsg {
    /// Stop writing.
    Stop,
    /// Go on after the first sample (a replay held there).
    Resume,
}

/// The writer of a replay; stops and joins its thread, then removes the temporary
/// directory, when dropped.
#[derive(Debug)]
pub(crate) struct ReplayGuard {
    tell: Sender<WriterMsg>,
    writer: Mutex<Option<JoinHandle<()>>>,
    _temp: Option<tempfile::TempDir>,
}

impl ReplayGuard {
    /// A guard that talks to the writer through `tell` and removes `temp` (the replay's own
    /// temporary directory, if it made one) when dropped.
    pub(crate) fn new(tell: Sender<WriterMsg>, temp: Option<tempfile::TempDir>) -> Self {
        Self {
            tell,
            writer: Mutex::new(None),
            _temp: temp,
        }
    }

    pub(crate) fn set_writer(&self, writer: JoinHandle<()>) {
        *self.writer.lock().unwrap_or_else(PoisonError::into_inner) = Some(writer);
    }

    pub(crate) fn stop(&self) {
        let _ = self.tell.send(WriterMsg::Stop);
    }

    pub(crate) fn resume(&self) {
        let _ = self.tell.send(WriterMsg::Resume);
    }
}

impl Drop for ReplayGuard {
    fn drop(&mut self) {
        self.stop();
        let writer = self.writer.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(w) = writer {
            let _ = w.join();
        }
    }
}
