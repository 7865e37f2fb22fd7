//! [`Problem`]: something wrong in an input found by a pure parser (which does not know the
//! file), at a line (text) or a byte offset (binary); and [`Parsed`], a parser's result.

use crate::Loaded;
use crate::error::{FileError, LoadReport};
use perfscape_model::Profile;
use std::path::{Path, PathBuf};

/// A problem found while parsing, at a line or byte offset when one is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// 1-based line, for text inputs.
    pub line: Option<usize>,
    /// Byte offset, for binary inputs. For compressed inputs the message says whether it
    /// counts in the compressed file or in the decompressed data.
    pub offset: Option<u64>,
    /// What is wrong and what was expected.
    pub message: String,
}

impl Problem {
    /// A problem at byte `offset`.
    pub fn at_offset(offset: u64, message: impl Into<String>) -> Self {
        Self {
            line: None,
            offset: Some(offset),
            message: message.into(),
        }
    }

    /// A problem at 1-based `line`.
    pub fn at_line(line: usize, message: impl Into<String>) -> Self {
        Self {
            line: Some(line),
            offset: None,
            message: message.into(),
        }
    }

    /// A problem with the input as a whole.
    pub fn whole(message: impl Into<String>) -> Self {
        Self {
            line: None,
            offset: None,
            message: message.into(),
        }
    }

    /// Attaches the file the input came from.
    pub fn in_file(self, path: impl Into<PathBuf>) -> FileError {
        FileError {
            path: path.into(),
            line: self.line,
            byte_offset: self.offset,
            message: self.message,
        }
    }
}

impl std::fmt::Display for Problem {
    /// `line N: message`, `byte N: message` or `message`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(l) = self.line {
            write!(f, "line {l}: ")?;
        }
        if let Some(o) = self.offset {
            write!(f, "byte {o}: ")?;
        }
        write!(f, "{}", self.message)
    }
}

impl std::error::Error for Problem {}

/// What a pure parser made of one input: the profile, warnings about data that loaded but
/// deserves attention (partial input, skipped records), and informational notes.
#[derive(Debug)]
pub struct Parsed {
    /// The profile.
    pub profile: Profile,
    /// Problems that did not stop the input from loading.
    pub warnings: Vec<Problem>,
    /// Problems that left data out (truncation, damaged or skipped records): the profile
    /// holds only part of the input. Reported as [`LoadReport::partial_files`].
    pub partial: Vec<Problem>,
    /// Informational notes (how the input was mapped into the model).
    pub notes: Vec<String>,
}

impl Parsed {
    /// The load result for one file of `bytes` bytes read as `format`.
    pub(crate) fn into_loaded(self, path: &Path, format: &'static str, bytes: u64) -> Loaded {
        Loaded {
            profile: self.profile,
            report: LoadReport {
                format,
                files_read: 1,
                bytes_read: bytes,
                warnings: self.warnings.into_iter().map(|w| w.in_file(path)).collect(),
                partial_files: self.partial.into_iter().map(|w| w.in_file(path)).collect(),
                notes: self.notes,
                ..LoadReport::default()
            },
        }
    }
}

/// Loads one file with a pure parser: reads it, reports progress, and turns the parser's
/// result into a [`Loaded`] (or, when nothing could be parsed, a
/// [`crate::LoadError::NothingLoaded`] naming the file).
pub(crate) fn load_single_file(
    path: &Path,
    opts: &crate::OpenOptions<'_>,
    format: &'static str,
    parse: impl FnOnce(&[u8]) -> Result<Parsed, Problem>,
) -> Result<Loaded, crate::LoadError> {
    if let Some(p) = opts.progress {
        p.start(1);
    }
    let bytes = read_bytes(path)?;
    let parsed = parse(&bytes).map_err(|e| nothing_loaded(path, e))?;
    if let Some(p) = opts.progress {
        p.advance(1);
        p.finish();
    }
    Ok(parsed.into_loaded(path, format, bytes.len() as u64))
}

/// Reads a whole file, mapping failure to a [`crate::LoadError`].
pub(crate) fn read_bytes(path: &Path) -> Result<Vec<u8>, crate::LoadError> {
    std::fs::read(path).map_err(|source| crate::LoadError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// The error for a file that failed to parse: nothing could be loaded from it.
pub(crate) fn nothing_loaded(path: &Path, problem: Problem) -> crate::LoadError {
    crate::LoadError::NothingLoaded {
        path: path.to_path_buf(),
        errors: vec![problem.in_file(path)],
    }
}
