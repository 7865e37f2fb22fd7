//! Readers for the profile formats perfscape understands, with content-based detection.
//!
//! ```no_run
//! use perfscape_formats::{load, OpenOptions};
//! let loaded = load("run-dir".as_ref(), &OpenOptions::default()).unwrap();
//! println!("{} threads, {} events", loaded.profile.threads().len(), loaded.profile.events().len());
//! for bad in &loaded.report.bad_files {
//!     eprintln!("not loaded: {bad}");
//! }
//! ```
//!
//! # Design constraints
//! - Bad input never panics and is never silently dropped: a file that cannot be read is
//!   listed in [`LoadReport::bad_files`] with its line and the reason, the other files still
//!   load, and [`LoadReport::is_partial`] tells a partial load from a full one.
//! - Parsing is parallel, and the result is identical for 1 and N worker threads.
//! - Parsers take bytes (`&[u8]`) and return values or errors; only the `read_*`/`load`
//!   functions touch the file system.

pub mod cache;
pub mod caliper;
mod calltree;
pub mod chrome;
mod compression;
pub mod cube;
pub mod detect;
mod error;
pub mod hpctoolkit;
mod open;
pub mod perf;
pub mod ppk;
pub mod pprof;
mod problem;
pub mod stacks;
pub mod tau;
pub mod trace_profile;
mod xml;

pub use cache::{CacheMode, CacheScope};
pub use detect::{Detected, detect};
pub use error::{FileError, LineError, LoadError, LoadReport};
pub use open::{Opened, open};
use perfscape_model::{Profile, SampleSeries};
pub use problem::{Parsed, Problem};
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

/// Options of [`load`].
#[derive(Default, Clone, Copy)]
pub struct OpenOptions<'a> {
    /// Worker threads for parsing; `None` uses one per core.
    pub threads: Option<usize>,
    /// Where to report progress, if anywhere.
    pub progress: Option<&'a dyn ProgressSink>,
    /// Whether [`load`] and [`load_as`] read and write the cache of loaded profiles (see
    /// [`cache`]; default: off).
    pub cache: CacheMode,
    /// The cache directory (default: `$PERFSCAPE_CACHE_DIR`, else `perfscape/` in the user's
    /// cache directory, e.g. `~/.cache/perfscape`; see [`cache::cache_dir`]). Nothing is
    /// written beside the input.
    pub cache_dir: Option<&'a Path>,
    /// The size limit of the cache directory's entries together, in bytes; the least recently
    /// used entries are removed after a write beyond it (default:
    /// `$PERFSCAPE_CACHE_MAX_BYTES`, else 2 GiB; see [`cache::cache_limit`]).
    pub cache_max_bytes: Option<u64>,
    /// Read the input as this format (one of [`detect::FORMAT_NAMES`]) instead of detecting
    /// it from the content. Default: detect.
    pub format: Option<&'a str>,
    /// What [`open`] returns beside the profile. Default: everything the input has
    /// ([`Parts::ALL`]).
    pub parts: Parts,
}

/// What [`open`] returns beside the profile: the samples over time and the trace cost memory
/// and time, and a cached profile has neither, so a caller that shows only the profile asks
/// for [`Parts::PROFILE`].
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
}

impl Default for Parts {
    /// [`Parts::ALL`].
    fn default() -> Self {
        Parts::ALL
    }
}

impl std::fmt::Debug for OpenOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenOptions")
            .field("threads", &self.threads)
            .field("cache", &self.cache)
            .field("cache_dir", &self.cache_dir)
            .field("cache_max_bytes", &self.cache_max_bytes)
            .field("format", &self.format)
            .field("parts", &self.parts)
            .finish_non_exhaustive()
    }
}

/// A loaded profile and the report of what was (and was not) loaded.
#[derive(Debug)]
pub struct Loaded {
    /// The integrated profile.
    pub profile: Profile,
    /// Files read, files rejected with reasons, warnings.
    pub report: LoadReport,
}

/// A series of samples (a run observed over time) and the report of what was loaded.
#[derive(Debug)]
pub struct LoadedSeries {
    /// The integrated samples.
    pub series: SampleSeries,
    /// Files read, files rejected with reasons, warnings, notes about the integration.
    pub report: LoadReport,
}

/// Loads a profile from a file or directory, detecting its format from its content.
///
/// Errors when the path cannot be read, its format is not recognized or not supported, or
/// no file of it could be loaded. A run where only some files are bad loads, with those
/// files in [`LoadReport::bad_files`].
///
/// With [`OpenOptions::cache`] on (default: off), a valid cache entry of an earlier load of the
/// same files is read instead, and a new one is written in the cache directory after a load
/// (see [`cache`]).
pub fn load(path: &Path, opts: &OpenOptions<'_>) -> Result<Loaded, LoadError> {
    let scope = cache_scope(path, None, opts);
    cache::load_with_cache(path, None, scope, opts, || load_detected(path, opts))
}

/// Which files the cache of `path` depends on: its directory's files for a directory, the
/// database directory's files for HPCToolkit (named or detected), else the file itself. Not
/// worked out (no detection) when the cache is off.
fn cache_scope(path: &Path, request: Option<&str>, opts: &OpenOptions<'_>) -> CacheScope {
    if opts.cache == CacheMode::Off {
        CacheScope::File // unused
    } else if path.is_dir() {
        CacheScope::Dir
    } else if request == Some("hpctoolkit")
        || (request.is_none() && detect(path).ok() == Some(Detected::Hpctoolkit))
    {
        CacheScope::ParentDir
    } else {
        CacheScope::File
    }
}

fn load_detected(path: &Path, opts: &OpenOptions<'_>) -> Result<Loaded, LoadError> {
    match detect(path)? {
        Detected::TauRunDirectory => tau::read_run(path, opts),
        Detected::TauProfileFile => tau::read_single_file(path, opts),
        Detected::Cube => cube::read_cubex(path, opts),
        Detected::Ppk => ppk::read_ppk(path, opts),
        Detected::Hpctoolkit => hpctoolkit::read_database(path, opts),
        Detected::Caliper => caliper::read_caliper(path, opts),
        Detected::TauSnapshotRun | Detected::TauSnapshotFile => tau::read_snapshot_run(path, opts),
        Detected::TauMerged => tau::merged::read_merged(path, opts),
        Detected::TauDumps => tau::dumps::read_dumps_run(path, opts),
        Detected::Pprof => pprof::read_pprof(path, opts),
        Detected::ChromeTrace => chrome::read_chrome(path, opts),
        Detected::PerfScript => perf::script::read_perf_script(path, opts),
        Detected::PerfData => perf::data::read_perf_data(path, opts),
        Detected::Unsupported(format) => Err(LoadError::UnsupportedFormat {
            path: path.to_path_buf(),
            format,
        }),
    }
}

/// Loads a run observed over time (a series of samples): TAU snapshot files (a directory of
/// `snapshot.N.C.T`, also when `profile.N.C.T` files are beside them, or one file) or TAU
/// incremental dumps (`dump__<time>__.N.C.T`). Errors for inputs without samples.
pub fn load_series(path: &Path, opts: &OpenOptions<'_>) -> Result<LoadedSeries, LoadError> {
    if path.is_dir() {
        let names: Vec<String> = std::fs::read_dir(path)
            .map_err(|source| LoadError::Io {
                path: path.to_path_buf(),
                source,
            })?
            .filter_map(|e| e.ok().and_then(|e| e.file_name().to_str().map(str::to_string)))
            .collect();
        if names
            .iter()
            .any(|n| tau::snapshot::snapshot_file_thread(n).is_some())
        {
            return tau::read_snapshot_series(path, opts);
        }
        if names.iter().any(|n| tau::dumps::dump_file_parts(n).is_some()) {
            return tau::dumps::read_dumps_series(path, opts);
        }
    } else if detect(path)? == Detected::TauSnapshotFile {
        return tau::read_snapshot_series(path, opts);
    }
    Err(LoadError::UnknownFormat {
        path: path.to_path_buf(),
        detail: "no series of samples here: perfscape reads samples from TAU snapshot files (snapshot.N.C.T) and TAU incremental dumps (dump__<time>__.N.C.T)".into(),
    })
}

/// Loads a series in the named format: `tau-snapshot` or `tau-dumps`.
pub fn load_series_as(path: &Path, format: &str, opts: &OpenOptions<'_>) -> Result<LoadedSeries, LoadError> {
    match format {
        "tau-snapshot" => tau::read_snapshot_series(path, opts),
        "tau-dumps" => tau::dumps::read_dumps_series(path, opts),
        other => Err(LoadError::UnknownFormatName(other.to_string())),
    }
}

/// Loads a profile in the named format (one of [`detect::FORMAT_NAMES`]), skipping detection.
/// Uses the cache like [`load`].
pub fn load_as(path: &Path, format: &str, opts: &OpenOptions<'_>) -> Result<Loaded, LoadError> {
    if !detect::FORMAT_NAMES.contains(&format) {
        return Err(LoadError::UnknownFormatName(format.to_string()));
    }
    let scope = cache_scope(path, Some(format), opts);
    cache::load_with_cache(path, Some(format), scope, opts, || load_named(path, format, opts))
}

fn load_named(path: &Path, format: &str, opts: &OpenOptions<'_>) -> Result<Loaded, LoadError> {
    match format {
        "tau" => {
            if path.is_dir() {
                tau::read_run(path, opts)
            } else {
                tau::read_single_file(path, opts)
            }
        }
        "cube" => cube::read_cubex(path, opts),
        "ppk" => ppk::read_ppk(path, opts),
        "hpctoolkit" => hpctoolkit::read_database(path, opts),
        "caliper" => caliper::read_caliper(path, opts),
        "tau-snapshot" => tau::read_snapshot_run(path, opts),
        "tau-merged" => tau::merged::read_merged(path, opts),
        "tau-dumps" => tau::dumps::read_dumps_run(path, opts),
        "pprof" => pprof::read_pprof(path, opts),
        "chrome" => chrome::read_chrome(path, opts),
        "perf-script" => perf::script::read_perf_script(path, opts),
        "perf-data" => perf::data::read_perf_data(path, opts),
        other => Err(LoadError::UnknownFormatName(other.to_string())),
    }
}
