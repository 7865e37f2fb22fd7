//! [`Format`]: what a format module gives the registry — its name, how its inputs are
//! recognized, how they are read, what they hold beside a profile — and [`Opened`], what
//! reading gives.
//!
//! In the manner of inferno's `Collapse` trait + `guess` module: every format module declares
//! one `pub const FORMAT: Format` (TAU declares four), and [`crate::registry::FORMATS`] lists
//! them; detection, `--input-format`, help texts, error messages and the cache's scope are all
//! derived from that one table.

use crate::error::{LoadError, LoadReport};
use crate::options::{CacheMode, ProgressSink};
use crate::problem::{Parsed, Problem};
use perfscape_model::{Profile, SampleSeries, Trace};
use std::path::Path;

/// One input format perfscape reads.
pub struct Format {
    /// The name `--input-format` takes and [`LoadReport::format`] gives (`tau`, `cube`, ...).
    pub name: &'static str,
    /// What the format is and what inputs of it look like, in one line (help texts and the
    /// "perfscape reads: …" list of errors).
    pub description: &'static str,
    /// An input of this format, relative to the corpus (`../shared/corpus`); the registry's
    /// tests open every example.
    pub example: &'static str,
    /// Recognizes an input of this format from a directory's file names or a file's first
    /// bytes (decompressed). Formats are tried in the order of [`crate::registry::FORMATS`].
    pub sniff: fn(&Probe<'_>) -> bool,
    /// Reads an input of this format.
    pub read: Read,
    /// What inputs of this format hold beside the profile. An [`crate::open`] that asks for
    /// one of these parts is not answered from the cache (which holds profiles only).
    pub gives: Parts,
    /// Which files a cached profile of a *file* input depends on: the file itself, or every
    /// file of its directory (an HPCToolkit `experiment.xml` names the database files beside
    /// it). A directory input depends on every file in it.
    pub file_scope: FileScope,
}

impl std::fmt::Debug for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Format")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl PartialEq for Format {
    /// Formats are equal when their names are (names are unique in the registry).
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for Format {}

/// How a format's inputs are read.
pub enum Read {
    /// A single file, read whole and decompressed by [`crate::open`]
    /// ([`crate::input::decompress`]), then parsed by a pure function of its bytes.
    Bytes(fn(&[u8]) -> Result<Parsed, Problem>),
    /// Like [`Read::Bytes`], but the parser takes the (decompressed) bytes and may free them
    /// before it is done (the Chrome reader frees a trace's text once its events are read,
    /// before it derives the profile).
    OwnedBytes(fn(Vec<u8>) -> Result<Parsed, Problem>),
    /// A directory or a file the module reads itself (many files, parallel parsing, streams).
    /// Single files it reads whole go through [`crate::input::read_file`] and
    /// [`crate::input::decompress`] too.
    Path(fn(&Path, &OpenOptions<'_>) -> Result<Opened, LoadError>),
}

/// Which files a cached profile of a file input depends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileScope {
    /// The input file only.
    File,
    /// Every file of the input file's directory.
    Directory,
}

/// What format detection looks at.
#[derive(Debug, Clone, Copy)]
pub enum Probe<'a> {
    /// A directory: its path and the names of the entries in it (not recursive).
    Dir {
        /// The directory.
        path: &'a Path,
        /// Names of its entries (files and directories), in no particular order.
        names: &'a [String],
    },
    /// A file: its path and up to [`crate::input::HEAD_BYTES`] of its first bytes,
    /// decompressed when the file is compressed.
    File {
        /// The file.
        path: &'a Path,
        /// Its first bytes (decompressed).
        head: &'a [u8],
    },
}

impl<'a> Probe<'a> {
    /// The first bytes of a file probe; `None` for a directory.
    pub fn head(&self) -> Option<&'a [u8]> {
        match self {
            Probe::File { head, .. } => Some(head),
            Probe::Dir { .. } => None,
        }
    }

    /// The entry names of a directory probe; `None` for a file.
    pub fn names(&self) -> Option<&'a [String]> {
        match self {
            Probe::Dir { names, .. } => Some(names),
            Probe::File { .. } => None,
        }
    }

    /// The head of a file probe as text (invalid UTF-8 replaced), up to `n` bytes, with
    /// leading white space removed.
    pub fn text(&self, n: usize) -> Option<std::borrow::Cow<'a, str>> {
        self.head().map(|h| {
            let t = String::from_utf8_lossy(&h[..h.len().min(n)]);
            match t {
                std::borrow::Cow::Borrowed(b) => std::borrow::Cow::Borrowed(b.trim_start()),
                std::borrow::Cow::Owned(o) => std::borrow::Cow::Owned(o.trim_start().to_string()),
            }
        })
    }
}

/// An opened run: the profile, the samples over time and the trace when the input has them
/// (and [`OpenOptions::parts`] asked for them), and the report of what was read.
#[derive(Debug)]
pub struct Opened {
    /// The integrated profile. For a run observed over time it is the series' final state
    /// (each thread's last sample), with the series' event ids.
    pub profile: Profile,
    /// The samples over time (TAU snapshots, incremental dumps), when asked for and present.
    pub series: Option<SampleSeries>,
    /// The trace (Chrome Trace Event JSON), when asked for and present.
    pub trace: Option<Trace>,
    /// Files read, files rejected with reasons, files loaded in part, warnings, notes.
    pub report: LoadReport,
}

impl Opened {
    /// A profile and its report, with neither samples over time nor a trace.
    pub fn profile(profile: Profile, report: LoadReport) -> Self {
        Opened {
            profile,
            series: None,
            trace: None,
            report,
        }
    }
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
    /// The entries of the input directory as the format detection listed them, so that the
    /// reader does not list a large run directory a second time. Set by [`crate::open`] for
    /// the directory it opens, after detecting its format; read only by a reader of that same
    /// directory (the TAU run directory's `profile.N.C.T` files). Leave it `None` (default).
    pub listing: Option<&'a [std::fs::DirEntry]>,
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

    /// The parse workers: a pool of [`OpenOptions::threads`] threads of its own, or rayon's
    /// global pool (one thread per core) when `None`, so that the analysis after a load finds
    /// its workers started and spread over the cores (a pool made per load was dropped with
    /// its threads at the load's end, and the analysis then started new ones: `summary` of
    /// 4,096 ranks took 2.2 and 3.9 ms more, medians of two runs of 40 paired rounds).
    /// `input` names the run in the error when a pool cannot be made.
    pub(crate) fn thread_pool(&self, input: &Path) -> Result<Workers, LoadError> {
        let Some(n) = self.threads else {
            return Ok(Workers::Global);
        };
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .map(Workers::Own)
            .map_err(|e| LoadError::Io {
                path: input.to_path_buf(),
                source: std::io::Error::other(e),
            })
    }

    /// Reports that loading is over.
    pub(crate) fn progress_finish(&self) {
        if let Some(p) = self.progress {
            p.finish();
        }
    }
}

/// Where a reader's parallel work runs (see [`OpenOptions::thread_pool`]).
pub(crate) enum Workers {
    /// Rayon's global pool (one thread per core unless `RAYON_NUM_THREADS` says otherwise),
    /// or the pool of the calling thread when it is a rayon worker.
    Global,
    /// A pool of its own, whose threads stop when it is dropped.
    Own(rayon::ThreadPool),
}

impl Workers {
    /// Runs `f`, whose parallel iterators use these workers (rayon's `ThreadPool::install`).
    pub(crate) fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        match self {
            Workers::Global => f(),
            Workers::Own(pool) => pool.install(f),
        }
    }

    /// The number of worker threads.
    pub(crate) fn current_num_threads(&self) -> usize {
        match self {
            Workers::Global => rayon::current_num_threads(),
            Workers::Own(pool) => pool.current_num_threads(),
        }
    }
}
