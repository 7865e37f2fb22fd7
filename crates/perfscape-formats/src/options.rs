//! [`OpenOptions`]: how [`crate::open`] reads a run (format, parts, workers, progress, cache).

use crate::format::Format;
use std::path::Path;

/// Receives progress while a run loads (implemented by the CLI's progress bar). Called from
/// worker threads.
pub trait ProgressSink: Sync {
    /// Loading starts; `total_files` files will be read.
    fn start(&self, total_files: u64);
    /// `files` more files were read.
    fn advance(&self, files: u64);
    /// Loading is over.
    fn finish(&self);
}

/// Whether [`crate::open`] uses the cache of loaded profiles (see [`crate::cache`]). The
/// library default is [`CacheMode::Off`] (a program, or a test, that opens the same files
/// twice gets two real loads); the `perfscape` CLI uses [`CacheMode::ReadWrite`] unless told
/// `--no-cache`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CacheMode {
    /// Read a valid cache; otherwise load the files and write the cache.
    ReadWrite,
    /// Load the files and (re)write the cache, whatever is cached.
    Refresh,
    /// Neither read nor write a cache (the default).
    #[default]
    Off,
}

/// What [`crate::open`] returns beside the profile: the samples over time and the trace cost
/// memory and time, and a cached profile has neither, so a caller that shows only the profile
/// asks for [`Parts::PROFILE`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Parts {
    /// The samples over time of a run observed over time (TAU snapshots, incremental dumps).
    pub series: bool,
    /// The trace of a trace input (Chrome Trace Event JSON).
    pub trace: bool,
}

impl Parts {
    /// The profile only (the cache can answer).
    pub const PROFILE: Parts = Parts {
        series: false,
        trace: false,
    };
    /// The profile and whatever else the input has.
    pub const ALL: Parts = Parts {
        series: true,
        trace: true,
    };

    /// True when `self` asks for something `available` has.
    pub fn wants_any_of(self, available: Parts) -> bool {
        (self.series && available.series) || (self.trace && available.trace)
    }
}

impl Default for Parts {
    /// [`Parts::ALL`].
    fn default() -> Self {
        Parts::ALL
    }
}

/// Options of [`crate::open`]. `OpenOptions::default()` detects the format, returns every
/// part the input has, parses with one worker per core, reports no progress and does not use
/// the cache.
#[derive(Default, Clone, Copy)]
pub struct OpenOptions<'a> {
    /// Read the input as this format (an entry of [`crate::registry::FORMATS`], e.g. from
    /// [`crate::registry::named`]) instead of detecting it from the content. Default: detect.
    pub format: Option<&'static Format>,
    /// What [`crate::open`] returns beside the profile. Default: everything the input has
    /// ([`Parts::ALL`]).
    pub parts: Parts,
    /// Worker threads for parsing; `None` (default) uses one per core.
    pub threads: Option<usize>,
    /// Where to report progress, if anywhere. Default: nowhere.
    pub progress: Option<&'a dyn ProgressSink>,
    /// Whether the cache of loaded profiles is read and written. Default: [`CacheMode::Off`].
    pub cache: CacheMode,
    /// The cache directory (default: `$PERFSCAPE_CACHE_DIR`, else `perfscape/` in the user's
    /// cache directory, e.g. `~/.cache/perfscape`; see [`crate::cache::cache_dir`]). Nothing is
    /// written beside the input.
    pub cache_dir: Option<&'a Path>,
    /// The size limit of the cache directory's entries together, in bytes; the least recently
    /// used entries are removed after a write beyond it (default: `$PERFSCAPE_CACHE_MAX_BYTES`,
    /// else 2 GiB; see [`crate::cache::cache_limit`]).
    pub cache_max_bytes: Option<u64>,
}

impl std::fmt::Debug for OpenOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenOptions")
            .field("format", &self.format.map(|f| f.name))
            .field("parts", &self.parts)
            .field("threads", &self.threads)
            .field("cache", &self.cache)
            .field("cache_dir", &self.cache_dir)
            .field("cache_max_bytes", &self.cache_max_bytes)
            .finish_non_exhaustive()
    }
}

impl OpenOptions<'_> {
    /// Reports that `n` files will be read (to the progress sink, if any).
    pub(crate) fn progress_start(&self, n: u64) {
        if let Some(p) = self.progress {
            p.start(n);
        }
    }

    /// Reports that `n` more files were read.
    pub(crate) fn progress_advance(&self, n: u64) {
        if let Some(p) = self.progress {
            p.advance(n);
        }
    }

    /// Reports that loading is over.
    pub(crate) fn progress_finish(&self) {
        if let Some(p) = self.progress {
            p.finish();
        }
    }
}
