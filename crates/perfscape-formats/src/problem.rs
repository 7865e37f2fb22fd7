//! [`Problem`]: something wrong in an input found by a pure parser (which does not know the
//! file), at a line (text) or a byte offset (binary); and [`Parsed`], a parser's result.

use crate::error::FileError;
use perfscape_model::{Profile, Trace};
use std::path::PathBuf;

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

/// What a pure parser made of one input: the profile (and the trace, for trace formats),
/// warnings about data that loaded but deserves attention (partial input, skipped records),
/// and informational notes.
#[derive(Debug)]
pub struct Parsed {
    /// The profile.
    pub profile: Profile,
    /// The trace the profile was derived from, for trace formats.
    pub trace: Option<Trace>,
    /// Problems that did not stop the input from loading.
    pub warnings: Vec<Problem>,
    /// Problems that left data out (truncation, damaged or skipped records): the profile
    /// holds only part of the input. Reported as [`crate::LoadReport::partial_files`].
    pub partial: Vec<Problem>,
    /// Informational notes (how the input was mapped into the model).
    pub notes: Vec<String>,
}
