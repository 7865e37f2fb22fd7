//! [`LiveOptions`]: how a run directory is watched; [`LiveError`]: why watching could not start.

use std::path::PathBuf;
use std::time::{Duration, Instant};

/// How a run directory is watched.
#[derive(Clone, Debug, PartialEq)]
pub struct LiveOptions {
    /// How long a sample waits for threads that have neither written nor passed it,
    /// counted from when its first part arrived; then it is announced with those threads
    /// missing (their parts are added later if they come). The same wait ends the run's
    /// wait for threads that wrote no `final` snapshot: once the `final` sample went out,
    /// threads still running after another `max_wait` without any change in the directory
    /// are ended (each reported as a [`crate::LiveEvent::FileError`]) and the run finishes.
    /// `None` waits until the threads end. Default 10 s.
    pub max_wait: Option<Duration>,
    /// How often the directory is listed in full, in addition to (or, without
    /// notifications, instead of) file-system notifications. Default 500 ms.
    pub poll_interval: Duration,
    /// Use file-system notifications (inotify, FSEvents, ...). Default true; false polls
    /// only (e.g. on NFS, where inotify does not see other hosts' writes).
    pub use_notify: bool,
    /// With `profile.N.C.T` files in the directory, the run is finished after this long
    /// without change; a dump file that does not parse is given up after this long
    /// unchanged. Default 2 s.
    pub quiet: Duration,
    /// The number of threads the run will have, if known: samples are not integrated
    /// before that many threads appeared (at most `max_wait`), and the run does not finish
    /// before. Default none.
    pub expected_threads: Option<usize>,
    /// After a thread's first file appeared, samples are not integrated for this long, so
    /// that threads starting at about the same time are all waited for (otherwise the first
    /// sample could go out with only the earliest threads, the others added later as
    /// amendments). Only delays samples right after a thread appears. Default 200 ms.
    pub thread_grace: Duration,
    /// Keep the values of at most this many samples: beyond, older samples are thinned
    /// (kept at an even spacing that doubles as the run grows, the newest half of the window
    /// kept whole; see
    /// `perfscape_model::IntegratorOptions::window`), so a run followed for hours holds flat
    /// memory. `None` keeps every sample. Default [`DEFAULT_SAMPLE_WINDOW`].
    pub sample_window: Option<usize>,
}

/// Default [`LiveOptions::sample_window`]: 512 samples (at one sample a second, the last
/// 256 s whole and the run before at coarser spacing). A sample costs 8 bytes per thread and
/// value kind of each event it holds (1,024 threads × 12 timers × 4 kinds ≈ 0.4 MB).
pub const DEFAULT_SAMPLE_WINDOW: usize = 512;

impl Default for LiveOptions {
    fn default() -> Self {
        Self {
            max_wait: Some(Duration::from_secs(10)),
            poll_interval: Duration::from_millis(500),
            use_notify: true,
            quiet: Duration::from_secs(2),
            expected_threads: None,
            thread_grace: Duration::from_millis(200),
            sample_window: Some(DEFAULT_SAMPLE_WINDOW),
        }
    }
}

impl LiveOptions {
    /// True while new samples are held back rather than integrated: within
    /// [`LiveOptions::thread_grace`] of the last thread appearing (`last_appeared`), or while
    /// fewer than [`LiveOptions::expected_threads`] are `known`, for at most
    /// [`LiveOptions::max_wait`] from `held_since` (no time yet: held). Shared by the watcher
    /// and the stream listener.
    pub(crate) fn holding(
        &self,
        last_appeared: Option<Instant>,
        known: usize,
        held_since: Option<Instant>,
        now: Instant,
    ) -> bool {
        if last_appeared.is_some_and(|t| now.saturating_duration_since(t) < self.thread_grace) {
            return true;
        }
        if self.expected_threads.is_some_and(|n| known < n) {
            return match (held_since, self.max_wait) {
                (Some(since), Some(w)) => now.saturating_duration_since(since) < w,
                _ => true,
            };
        }
        false
    }
}

/// Why a live run could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LiveError {
    /// The path to watch is not a directory.
    #[error(
        "{0}: not a directory; perfscape watches the directory a program writes its snapshot.N.C.T files into"
    )]
    NotADirectory(PathBuf),
    /// Reading or creating a directory failed.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// Nothing to replay.
    #[error("{path}: {detail}")]
    NoSeries {
        /// The directory.
        path: PathBuf,
        /// What was expected.
        detail: String,
    },
    /// A replay target directory already holds TAU files.
    #[error("{0}: the directory already holds TAU files; replay into an empty directory")]
    NotEmpty(PathBuf),
    /// A replay speed that is negative or not a number.
    #[error("replay speed {0} is not a number >= 0 (1 = the run's own pace, 0 = as fast as possible)")]
    BadSpeed(f64),
    /// The watcher or writer thread could not be started.
    #[error("cannot start a thread: {0}")]
    Thread(std::io::Error),
}
