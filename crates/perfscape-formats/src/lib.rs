//! Readers for the profile formats perfscape understands, with content-based detection.
//!
//! ```no_run
//! use perfscape_formats::{load, LoadOptions};
//! let loaded = load("run-dir".as_ref(), &LoadOptions::default()).unwrap();
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

pub mod chrome;
mod compression;
pub mod detect;
mod error;
pub mod perf;
pub mod pprof;
mod problem;
pub mod stacks;
pub mod tau;
pub mod trace_profile;

pub use detect::{Detected, detect};
pub use error::{FileError, LineError, LoadError, LoadReport};
use perfscape_model::Profile;
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
pub struct LoadOptions<'a> {
    /// Worker threads for parsing; `None` uses one per core.
    pub threads: Option<usize>,
    /// Where to report progress, if anywhere.
    pub progress: Option<&'a dyn ProgressSink>,
}

impl std::fmt::Debug for LoadOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadOptions")
            .field("threads", &self.threads)
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

/// Loads a profile from a file or directory, detecting its format from its content.
///
/// Errors when the path cannot be read, its format is not recognized or not supported, or
/// no file of it could be loaded. A run where only some files are bad loads, with those
/// files in [`LoadReport::bad_files`].
pub fn load(path: &Path, opts: &LoadOptions<'_>) -> Result<Loaded, LoadError> {
    match detect(path)? {
        Detected::TauRunDirectory => tau::read_run(path, opts),
        Detected::TauProfileFile => tau::read_single_file(path, opts),
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

/// Loads a profile in the named format (one of [`detect::FORMAT_NAMES`]), skipping detection.
pub fn load_as(path: &Path, format: &str, opts: &LoadOptions<'_>) -> Result<Loaded, LoadError> {
    match format {
        "tau" => {
            if path.is_dir() {
                tau::read_run(path, opts)
            } else {
                tau::read_single_file(path, opts)
            }
        }
        "pprof" => pprof::read_pprof(path, opts),
        "chrome" => chrome::read_chrome(path, opts),
        "perf-script" => perf::script::read_perf_script(path, opts),
        "perf-data" => perf::data::read_perf_data(path, opts),
        other => Err(LoadError::UnknownFormatName(other.to_string())),
    }
}
