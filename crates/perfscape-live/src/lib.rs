//! Live mode: follow a program's TAU output while it runs, integrate each sample as soon as
//! every thread wrote it, and tell the consumer.
//!
//! [`watch`] starts a background thread that watches a run directory (inotify and the like
//! through the `notify` crate, plus a rescan every [`LiveOptions::poll_interval`] because
//! notifications can be missed on network and some container file systems). It finds the
//! `snapshot.N.C.T` files as they appear (or, for runs without snapshots, the incremental
//! dumps `dump__<time>__.N.C.T`), reads **only the bytes appended** since the last read
//! (an offset per file), feeds them to one
//! [`SnapshotStream`](perfscape_formats::tau::snapshot::SnapshotStream) per file (a block
//! still being written stays buffered until its end arrives: it is never parsed half and
//! never lost) and the thread samples to one [`perfscape_model::Integrator`]. Every
//! integrated sample is announced once, in order, as a [`LiveEvent::Sample`]; parts that
//! arrive after their sample went out (a thread later than [`LiveOptions::max_wait`]) are
//! added to it and announced as [`LiveEvent::Amended`].
//!
//! [`replay`] writes a finished run into a directory at its own pace (or faster) and
//! watches that directory the same way: a replay is a live run for the consumer.
//!
//! ```no_run
//! use perfscape_live::{LiveEvent, LiveOptions, watch};
//! let run = watch("run-dir", &LiveOptions::default())?;
//! for event in run.events() {
//!     if let LiveEvent::Sample(s) = event {
//!         let series = run.series().read(); // the sample is in it
//!         println!("{} {} {}/{}", s.id.0, s.name, s.threads_present, series.threads().len());
//!     }
//! }
//! # Ok::<(), perfscape_live::LiveError>(())
//! ```
//!
//! # Files, truncation, rewrites
//! A file that shrinks, is replaced by a new file (another inode) or whose first 256 bytes
//! change is read again from its start with a new stream; snapshots identical (name and
//! timestamp) to those already integrated are skipped, so a rewrite with the same content
//! changes nothing ([`LiveEvent::Notice`]); different content (a new run in the same
//! directory) is reported as a [`LiveEvent::FileError`] and integrated as further samples.
//! `profile.N.C.T` files (TAU writes them at exit) end their thread. A file name whose
//! thread differs from the thread the file declares is reported.
//!
//! # When the run is finished
//! [`LiveEvent::Finished`] comes last: when every thread ended (wrote its `final`
//! snapshot or its `profile.N.C.T` appeared; in the latter case after a quarter of
//! [`LiveOptions::quiet`] without change, as the snapshot file may still be flushed) and a
//! last look at the directory found nothing new; or when the directory has `profile.N.C.T`
//! files and nothing changed for [`LiveOptions::quiet`]; or when the caller stopped the run.
//! A thread that never writes a sample is never waited for longer than
//! [`LiveOptions::max_wait`]: the sample goes out with the thread listed as missing.
//!
//! Threads are known from their first file. A thread whose file appears late (TAU creates
//! it at the thread's first snapshot; a main thread that snapshots only at the end) is not
//! expected by the samples integrated before it appeared: they are complete without it.
//! [`LiveOptions::expected_threads`] tells the watcher how many threads to wait for (a replay
//! sets it to the replayed run's thread count, so that its samples and completeness equal
//! the batch load of the finished files; `Some(0)` turns that off).
//!
//! # TAU's buffered writes
//! TAU writes snapshot files with buffered stdio (`fprintf` to a file opened once per
//! thread), so the bytes reach the file in pieces of the buffer size (4 KiB), not per
//! snapshot, and the newest block of a thread can stay in the program's buffer until the
//! next pieces or exit. The watcher copes: the part of a block that arrived is kept until
//! the rest comes; the sample waits for that thread at most `max_wait`, is then announced
//! without it, and completed ([`LiveEvent::Amended`]) when the block arrives. Latency is
//! therefore bounded by the program's flushing, not by the watcher (see the crate's
//! `live_latency` example for the watcher's own share).
//!
//! # Using it from a server
//! [`LiveRun`] is `Send + Sync`. Keep it in an `Arc`; forward its events from one blocking
//! task (`tokio::task::spawn_blocking(move || while let Some(e) = run.recv() { tx.send(e) })`
//! into a `tokio::sync::broadcast` for the WebSocket clients); answer view requests from
//! [`LiveRun::series`] (a read lock on the growing [`perfscape_model::SampleSeries`];
//! [`perfscape_model::SampleSeries::profile_at`] gives the `Profile` of a sample for the
//! existing views). A client that joins late (or lags behind the broadcast) reads the series
//! first and ignores events for samples it already has (`id` < the series length it read).
//! Events are [`serde::Serialize`] (tagged with `event`).

mod engine;
mod event;
mod files;
mod options;
mod replay;
mod series_handle;
pub mod stream;
mod summary;
pub mod synthetic;
mod watch;

pub use event::{AmendedEvent, FinishReason, LiveEvent, SampleEvent};
pub use options::{DEFAULT_SAMPLE_WINDOW, LiveError, LiveOptions};
pub use replay::{ReplayOptions, ReplayPlan, ReplayStart, replay, replay_plan, replay_plan_with};
pub use series_handle::{SeriesGuard, SeriesHandle};
pub use stream::{ListenAddr, StreamOptions, listen};
pub use summary::{TopChange, top_changes};
pub use watch::{LiveRun, StopHandle, watch};

#[cfg(test)]
mod tests {
    /// A server keeps these in shared state and moves them between tasks.
    #[test]
    fn handles_are_send_and_sync() {
        fn shareable<T: Send + Sync>() {}
        shareable::<crate::LiveRun>();
        shareable::<crate::SeriesHandle>();
        shareable::<crate::StopHandle>();
        shareable::<crate::LiveEvent>();
    }
}
