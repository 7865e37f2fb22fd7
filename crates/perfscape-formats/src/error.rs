//! Errors and the load report: every problem names the file, the line (or byte offset) and
//! what was expected.

use perfscape_model::{BuildError, ThreadId};
use std::fmt;
use std::path::PathBuf;

/// A problem found in one input file. When it stops the file from loading it is listed in
/// [`LoadReport::bad_files`]; otherwise it is a warning in [`LoadReport::warnings`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileError {
    /// The file.
    pub path: PathBuf,
    /// 1-based line number, for text formats.
    pub line: Option<usize>,
    /// Byte offset from the start of the file, for binary formats.
    pub byte_offset: Option<u64>,
    /// What is wrong and what was expected.
    pub message: String,
}

impl FileError {
    /// A problem at a line of a text file.
    pub fn at_line(path: impl Into<PathBuf>, line: usize, message: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            line: Some(line),
            byte_offset: None,
            message: message.into(),
        }
    }

    /// A problem with a whole file (cannot be read, missing, ...).
    pub fn whole(path: impl Into<PathBuf>, message: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            line: None,
            byte_offset: None,
            message: message.into(),
        }
    }
}

impl fmt::Display for FileError {
    /// `path:line: message`, `path: byte N: message` or `path: message`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if let Some(off) = self.byte_offset {
            write!(f, ": byte {off}")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for FileError {}

/// A problem at a line of a text being parsed (the caller knows the file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong and what was expected.
    pub message: String,
}

impl LineError {
    /// A problem at `line`.
    pub fn new(line: usize, message: impl Into<String>) -> Self {
        Self {
            line,
            message: message.into(),
        }
    }

    /// Attaches the file the line belongs to.
    pub fn in_file(self, path: impl Into<PathBuf>) -> FileError {
        FileError::at_line(path, self.line, self.message)
    }
}

/// Why nothing could be loaded from a path.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// The path does not exist or cannot be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Content-based detection did not recognize the input.
    #[error("{}: {detail}\nperfscape reads: {supported}", path.display(), supported = crate::detect::SUPPORTED.join(", "))]
    UnknownFormat {
        /// The path.
        path: PathBuf,
        /// What was seen.
        detail: String,
    },
    /// The input was recognized but this version cannot read that format yet.
    #[error("{}: recognized as {format}, which this version of perfscape does not read yet\nperfscape reads: {supported}", path.display(), supported = crate::detect::SUPPORTED.join(", "))]
    UnsupportedFormat {
        /// The path.
        path: PathBuf,
        /// The format recognized.
        format: &'static str,
    },
    /// The format was named explicitly but is not one perfscape knows.
    #[error("unknown format name `{0}`; known: {known}", known = crate::detect::FORMAT_NAMES.join(", "))]
    UnknownFormatName(String),
    /// Every input file was bad: nothing to show.
    #[error("{}: no file could be loaded:\n{}", path.display(), errors.iter().map(|e| format!("  {e}")).collect::<Vec<_>>().join("\n"))]
    NothingLoaded {
        /// The run path.
        path: PathBuf,
        /// Why each file failed.
        errors: Vec<FileError>,
    },
    /// The model builder rejected the data (a reader bug, reported rather than hidden).
    #[error("{}: internal error while building the profile: {source}", path.display())]
    Build {
        /// The run path.
        path: PathBuf,
        /// The builder's error.
        source: BuildError,
    },
}

/// What happened while loading a run: which files were read, which were not and why, and
/// warnings about data that loaded but deserves attention.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoadReport {
    /// Name of the format read (see [`crate::detect::FORMAT_NAMES`]).
    pub format: &'static str,
    /// Number of files read successfully.
    pub files_read: usize,
    /// Total bytes of the files read.
    pub bytes_read: u64,
    /// Files that could not be loaded, with the reason. Their threads are not in the profile.
    pub bad_files: Vec<FileError>,
    /// Threads left out because one of their files was bad.
    pub threads_skipped: Vec<ThreadId>,
    /// Files that loaded only in part (truncated or damaged data, records skipped): each
    /// says what was left out. The profile holds what was read.
    pub partial_files: Vec<FileError>,
    /// Problems in files that did load (values kept as written; see each message).
    pub warnings: Vec<FileError>,
    /// Informational notes (other files present in the run directory, ...).
    pub notes: Vec<String>,
}

/// The `&'static` name of the known format `name` (one of [`crate::detect::FORMAT_NAMES`],
/// or `""` for none), for a [`LoadReport::format`] decoded from bytes (the cache); `None` for
/// any other name.
pub(crate) fn known_format(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        return Some("");
    }
    crate::detect::FORMAT_NAMES.iter().copied().find(|f| *f == name)
}

impl LoadReport {
    /// True when some input could not be loaded (the profile is incomplete).
    pub fn is_partial(&self) -> bool {
        !self.bad_files.is_empty() || !self.threads_skipped.is_empty() || !self.partial_files.is_empty()
    }
}
