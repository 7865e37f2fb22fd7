//! Cutting a growing byte stream into TAU `<profile_xml>` documents.
//!
//! Snapshot files (`snapshot.N.C.T`) are documents appended one after the other (no root
//! element); the merged `tauprofile.xml` separates them with NUL bytes. [`DocSplitter`] is
//! incremental: it is fed bytes as a file grows and returns each complete document once; a
//! document still being written stays buffered (never parsed half) and is completed by later
//! bytes. It tracks `<![CDATA[ ... ]]>` so an end tag inside a name does not end the
//! document. [`super::xml_doc::parse_doc`] parses the documents.

use crate::error::FileError;
use std::path::Path;

const OPEN: &[u8] = b"<profile_xml";
const CLOSE: &[u8] = b"</profile_xml>";
const CDATA_OPEN: &[u8] = b"<![CDATA[";
const CDATA_CLOSE: &[u8] = b"]]>";

/// One complete `<profile_xml>...</profile_xml>` document cut from a stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawDoc {
    /// Byte offset of `<profile_xml` in the stream (file).
    pub offset: u64,
    /// 1-based line of `<profile_xml` in the stream.
    pub line: u64,
    /// The document text (invalid UTF-8 replaced by U+FFFD, see `lossy`).
    pub text: String,
    /// True when the bytes were not valid UTF-8.
    pub lossy: bool,
}

impl RawDoc {
    /// A problem at byte `offset` of this document, as a [`FileError`] naming `path`, the
    /// line and the byte offset in the file.
    pub fn error_at(&self, path: &Path, offset: usize, message: impl Into<String>) -> FileError {
        let prefix = self.text.get(..offset).unwrap_or(&self.text);
        FileError {
            path: path.to_path_buf(),
            line: Some(self.line as usize + prefix.bytes().filter(|&b| b == b'\n').count()),
            byte_offset: Some(self.offset + offset as u64),
            message: message.into(),
        }
    }
}

/// Something in the stream that is not a document: garbage between documents or a document
/// cut off by the start of another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitError {
    /// Byte offset where the problem starts.
    pub offset: u64,
    /// 1-based line where the problem starts.
    pub line: u64,
    /// What is wrong.
    pub message: String,
}

impl SplitError {
    /// This problem as a [`FileError`] naming `path`.
    pub fn in_file(self, path: &Path) -> FileError {
        FileError {
            path: path.to_path_buf(),
            line: usize::try_from(self.line).ok(),
            byte_offset: Some(self.offset),
            message: self.message,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Between,
    InDoc { start: usize, in_cdata: bool },
}

/// Cuts a growing byte stream into `<profile_xml>` documents; see the module documentation.
///
/// ```
/// use perfscape_formats::tau::xml_split::DocSplitter;
/// let mut s = DocSplitter::default();
/// let (docs, errors) = s.push(b"<profile_xml><a/></profi");
/// assert!(docs.is_empty() && errors.is_empty());
/// let (docs, _) = s.push(b"le_xml>\n<profile_xml>");
/// assert_eq!(docs.len(), 1);
/// assert_eq!(docs[0].text, "<profile_xml><a/></profile_xml>");
/// assert_eq!(s.buffered(), "<profile_xml>".len());
/// ```
#[derive(Debug, Clone)]
pub struct DocSplitter {
    buf: Vec<u8>,
    /// Stream offset of `buf[0]`.
    base: u64,
    /// Line number of `buf[0]`.
    base_line: u64,
    /// Lines counted up to `counted` (a position in `buf`).
    counted: usize,
    counted_line: u64,
    scan: usize,
    state: State,
    /// Start of garbage seen between documents, not reported yet.
    garbage: Option<(u64, u64)>,
}

impl Default for DocSplitter {
    fn default() -> Self {
        Self {
            buf: Vec::new(),
            base: 0,
            base_line: 1,
            counted: 0,
            counted_line: 1,
            scan: 0,
            state: State::Between,
            garbage: None,
        }
    }
}

impl DocSplitter {
    /// Bytes received but not yet returned in a document (a document being written).
    pub fn buffered(&self) -> usize {
        self.buf.len()
    }

    /// Total bytes received.
    pub fn bytes_seen(&self) -> u64 {
        self.base + self.buf.len() as u64
    }

    fn line_at(&mut self, pos: usize) -> u64 {
        if pos < self.counted {
            self.counted = 0;
            self.counted_line = self.base_line;
        }
        let n = self.buf[self.counted..pos]
            .iter()
            .filter(|&&b| b == b'\n')
            .count();
        self.counted = pos;
        self.counted_line += n as u64;
        self.counted_line
    }

    fn flush_garbage(&mut self, end: usize, errors: &mut Vec<SplitError>) {
        if let Some((offset, line)) = self.garbage.take() {
            let len = self.base + end as u64 - offset;
            errors.push(SplitError {
                offset,
                line,
                message: format!(
                    "{len} byte(s) of unexpected content between <profile_xml> documents (expected `<profile_xml>` or whitespace); skipped"
                ),
            });
        }
    }

    /// Feeds the next bytes of the stream; returns the documents completed by them, and
    /// problems found (garbage between documents, documents cut off).
    pub fn push(&mut self, bytes: &[u8]) -> (Vec<RawDoc>, Vec<SplitError>) {
        self.buf.extend_from_slice(bytes);
        let mut docs = Vec::new();
        let mut errors = Vec::new();
        let len = self.buf.len();
        loop {
            match self.state {
                State::Between => {
                    let mut i = self.scan;
                    while i < len && (self.buf[i].is_ascii_whitespace() || self.buf[i] == 0) {
                        i += 1;
                    }
                    self.scan = i;
                    if i >= len {
                        break;
                    }
                    // Look for the next `<profile_xml` from i.
                    match find_open(&self.buf, i) {
                        Found::At(p) => {
                            if p > i && self.garbage.is_none() {
                                let line = self.line_at(i);
                                self.garbage = Some((self.base + i as u64, line));
                            }
                            self.flush_garbage(p, &mut errors);
                            self.state = State::InDoc {
                                start: p,
                                in_cdata: false,
                            };
                            self.scan = p + OPEN.len();
                        }
                        Found::Partial(p) => {
                            if p > i && self.garbage.is_none() {
                                let line = self.line_at(i);
                                self.garbage = Some((self.base + i as u64, line));
                            }
                            self.scan = p;
                            break;
                        }
                    }
                }
                State::InDoc { start, in_cdata } => match scan_doc(&self.buf, self.scan, in_cdata) {
                    DocScan::End(end) => {
                        let line = self.line_at(start);
                        let bytes = &self.buf[start..end];
                        let (text, lossy) = match std::str::from_utf8(bytes) {
                            Ok(s) => (s.to_string(), false),
                            Err(_) => (String::from_utf8_lossy(bytes).into_owned(), true),
                        };
                        docs.push(RawDoc {
                            offset: self.base + start as u64,
                            line,
                            text,
                            lossy,
                        });
                        self.state = State::Between;
                        self.scan = end;
                    }
                    DocScan::NewStart(p) => {
                        let line = self.line_at(start);
                        errors.push(SplitError {
                            offset: self.base + start as u64,
                            line,
                            message: format!(
                                "<profile_xml> document is cut off after {} byte(s): another document starts before its `</profile_xml>`; the incomplete document is skipped",
                                p - start
                            ),
                        });
                        self.state = State::InDoc {
                            start: p,
                            in_cdata: false,
                        };
                        self.scan = p + OPEN.len();
                    }
                    DocScan::More { resume, in_cdata } => {
                        self.scan = resume;
                        self.state = State::InDoc { start, in_cdata };
                        break;
                    }
                },
            }
        }
        // Drop what is done.
        let keep_from = match self.state {
            State::Between => self.scan,
            State::InDoc { start, .. } => start,
        };
        if keep_from > 0 {
            let line = self.line_at(keep_from);
            self.buf.drain(..keep_from);
            self.base += keep_from as u64;
            self.base_line = line;
            self.counted = 0;
            self.counted_line = line;
            self.scan -= keep_from;
            if let State::InDoc { start, in_cdata } = self.state {
                self.state = State::InDoc {
                    start: start - keep_from,
                    in_cdata,
                };
            }
        }
        (docs, errors)
    }

    /// The end of the stream: reports a document that never ended (a file truncated, or
    /// still being written) and trailing garbage.
    pub fn finish(mut self) -> Vec<SplitError> {
        let mut errors = Vec::new();
        let len = self.buf.len();
        match self.state {
            State::InDoc { start, .. } => {
                self.flush_garbage(start, &mut errors);
                let line = self.line_at(start);
                errors.push(SplitError {
                    offset: self.base + start as u64,
                    line,
                    message: format!(
                        "incomplete <profile_xml> document at the end ({} byte(s) without `</profile_xml>`: the file was truncated or is still being written); not read",
                        len - start
                    ),
                });
            }
            State::Between => {
                let rest = &self.buf[self.scan..];
                if self.garbage.is_none() && rest.iter().any(|b| !b.is_ascii_whitespace() && *b != 0) {
                    let line = self.line_at(self.scan);
                    self.garbage = Some((self.base + self.scan as u64, line));
                }
                self.flush_garbage(len, &mut errors);
            }
        }
        errors
    }
}

enum Found {
    /// `<profile_xml` starts here.
    At(usize),
    /// Not found; bytes from here on could still begin one.
    Partial(usize),
}

fn is_open_at(buf: &[u8], p: usize) -> Option<bool> {
    let rest = &buf[p..];
    if rest.len() <= OPEN.len() {
        return if OPEN.starts_with(rest) { None } else { Some(false) };
    }
    Some(rest.starts_with(OPEN) && matches!(rest[OPEN.len()], b'>' | b' ' | b'\t' | b'\r' | b'\n'))
}

fn find_open(buf: &[u8], from: usize) -> Found {
    let mut i = from;
    while let Some(off) = buf[i..].iter().position(|&b| b == b'<') {
        let p = i + off;
        match is_open_at(buf, p) {
            Some(true) => return Found::At(p),
            None => return Found::Partial(p),
            Some(false) => i = p + 1,
        }
    }
    Found::Partial(buf.len())
}

enum DocScan {
    End(usize),
    NewStart(usize),
    More { resume: usize, in_cdata: bool },
}

fn scan_doc(buf: &[u8], from: usize, mut in_cdata: bool) -> DocScan {
    let mut i = from;
    let len = buf.len();
    loop {
        if in_cdata {
            match buf[i..].windows(CDATA_CLOSE.len()).position(|w| w == CDATA_CLOSE) {
                Some(off) => {
                    i += off + CDATA_CLOSE.len();
                    in_cdata = false;
                }
                None => {
                    return DocScan::More {
                        resume: len.saturating_sub(CDATA_CLOSE.len() - 1).max(i),
                        in_cdata: true,
                    };
                }
            }
        }
        let Some(off) = buf[i..].iter().position(|&b| b == b'<') else {
            return DocScan::More {
                resume: len,
                in_cdata: false,
            };
        };
        let p = i + off;
        let rest = &buf[p..];
        if rest.starts_with(CLOSE) {
            return DocScan::End(p + CLOSE.len());
        }
        if rest.starts_with(CDATA_OPEN) {
            in_cdata = true;
            i = p + CDATA_OPEN.len();
            continue;
        }
        match is_open_at(buf, p) {
            Some(true) => return DocScan::NewStart(p),
            None => {
                return DocScan::More {
                    resume: p,
                    in_cdata: false,
                };
            }
            Some(false) => {}
        }
        // Too short to tell whether this is `</profile_xml>` or `<![CDATA[`: wait for more.
        let prefix_of = |pat: &[u8]| rest.len() < pat.len() && pat.starts_with(rest);
        if prefix_of(CLOSE) || prefix_of(CDATA_OPEN) {
            return DocScan::More {
                resume: p,
                in_cdata: false,
            };
        }
        i = p + 1;
    }
}
