//! Readers for the profile formats perfscape understands, with content-based detection, and
//! the one way to open a run: [`open`].
//!
//! ```no_run
//! use perfscape_formats::{open, OpenOptions};
//! let run = open("run-dir".as_ref(), &OpenOptions::default()).unwrap();
//! println!("{} threads, {} events", run.profile.threads().len(), run.profile.events().len());
//! for bad in &run.report.bad_files {
//!     eprintln!("not loaded: {bad}");
//! }
//! ```
//!
//! # Layout
//! - [`registry`]: the table of formats ([`registry::FORMATS`]) and detection.
//! - [`mod@format`]: what a format module declares ([`Format`]) and what reading gives
//!   ([`Opened`]); [`options`]: [`OpenOptions`]; [`input`]: reading a file whole and
//!   decompressing it (gzip, zstd, xz), in front of every reader.
//! - One module per format (`tau`, `cube`, `ppk`, `hpctoolkit`, `caliper`, `pyinstrument`,
//!   `pprof`, `chrome`, `perf`, `otf2`), each declaring its `FORMAT`; shared pieces (`calltree`,
//!   `stacks`, `trace_profile`, `xml`).
//! - [`cache`]: the on-disk cache of opened profiles.
//!
//! Modules import downward only: format modules use `error`, `problem`, `options`, `format`,
//! `input` and the shared pieces, never `registry`, `open` or `cache`.
//!
//! # Design constraints
//! - Bad input never panics and is never silently dropped: a file that cannot be read is
//!   listed in [`LoadReport::bad_files`] with its line and the reason, the other files still
//!   load, and [`LoadReport::is_partial`] tells a partial load from a full one.
//! - Parsing is parallel, and the result is identical for 1 and N worker threads.
//! - Parsers take bytes (`&[u8]`) and return values or errors; only the readers' path
//!   functions and [`input`] touch the file system, and nothing is ever written beside an
//!   input.

pub mod cache;
pub mod caliper;
mod calltree;
pub mod chrome;
pub mod cube;
mod error;
pub mod format;
pub mod hpctoolkit;
pub mod input;
mod open;
pub mod options;
pub mod otf2;
pub mod perf;
pub mod ppk;
pub mod pprof;
mod problem;
pub mod pyinstrument;
pub mod registry;
pub mod stacks;
pub mod tau;
pub mod trace_profile;
mod xml;

pub use cache::CacheScope;
pub use error::{FileError, LoadError, LoadReport};
pub use format::{Format, Opened};
pub use format::{OpenOptions, Parts};
pub use open::open;
pub use options::{CacheMode, ProgressSink};
pub use problem::{Parsed, Problem};
pub use registry::detect;
