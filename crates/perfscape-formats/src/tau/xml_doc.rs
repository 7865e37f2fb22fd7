//! TAU's `<profile_xml>` documents: splitting a byte stream into documents, and parsing one.
//!
//! Snapshot files (`snapshot.N.C.T`) are documents appended one after the other (no root
//! element); the merged `tauprofile.xml` separates them with NUL bytes. Both are read here.
//!
//! [`DocSplitter`] is incremental: it is fed bytes as a file grows and returns each complete
//! document once; a document still being written stays buffered (never parsed half) and is
//! completed by later bytes. It tracks `<![CDATA[ ... ]]>` so an end tag inside a name does
//! not end the document.
//!
//! [`parse_doc`] turns one document into its parts (thread declarations with metadata,
//! definitions of metrics / events / user events, profile blocks with their data rows, and
//! TAU's derived statistics blocks), with ids as written; resolving ids is up to the
//! snapshot and merged readers. Format source: TAU's `TauSnapshot.cpp` (writer) and
//! ParaProf's `SnapshotXMLHandler.java` (reader); `../shared/FORMATS.md`.

use perfscape_model::ThreadId;
use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};

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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Between,
    InDoc { start: usize, in_cdata: bool },
}

/// Cuts a growing byte stream into `<profile_xml>` documents; see the module documentation.
///
/// ```
/// use perfscape_formats::tau::xml_doc::DocSplitter;
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

/// A problem inside one document: byte offset within the document text and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocError {
    /// Byte offset in the document text.
    pub offset: usize,
    /// What is wrong and what was expected.
    pub message: String,
}

/// `<thread id="N.C.T.PID" node= context= thread=>` with its metadata.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadDecl {
    /// The `id` attribute (TAU: `node.context.thread.pid`), used by `<profile thread=...>`.
    pub id: String,
    /// Node, context and thread attributes.
    pub thread: ThreadId,
    /// `<metadata>` attributes, in order.
    pub metadata: Vec<(String, String)>,
}

/// A `<definitions thread=...>` block.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Definitions {
    /// The `thread` attribute (`*` for the merged format's global definitions).
    pub thread: String,
    /// `<metric id><name>` pairs.
    pub metrics: Vec<(u32, String)>,
    /// `<event id><name><group>` triples (name as written, usually ending with a space).
    pub events: Vec<(u32, String, String)>,
    /// `<userevent id><name>` pairs.
    pub user_events: Vec<(u32, String)>,
}

/// Data rows of a profile or derived block, ids as written.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DataRows {
    /// Metric ids of the `metrics="0 1 "` attribute, in column order.
    pub metrics: Vec<u32>,
    /// Timer rows: `(event id, calls, subcalls)`.
    pub timers: Vec<(u32, f64, f64)>,
    /// Per timer row, exclusive and inclusive per metric column: `2 × metrics.len()` each.
    pub timer_values: Vec<f64>,
    /// User event rows: `(id, [count, max, min, mean, sumsqr])`.
    pub user_events: Vec<(u32, [f64; 5])>,
}

/// A `<profile thread=...>` block: one thread's values at one moment.
#[derive(Debug, Clone, PartialEq)]
pub struct ProfileBlock {
    /// The `thread` attribute (matches a [`ThreadDecl::id`]).
    pub thread: String,
    /// `<name>` (snapshots; the merged format has none).
    pub name: Option<String>,
    /// `<timestamp>`, µs since the epoch.
    pub timestamp_us: Option<i64>,
    /// The values.
    pub data: DataRows,
    /// Byte offset of `<profile` in the document.
    pub offset: usize,
}

/// A block of TAU's own derived statistics in a merged file (`total`, `mean_all`, ...).
#[derive(Debug, Clone, PartialEq)]
pub struct DerivedBlock {
    /// The `derivedentity` attribute: `total`, `mean_all`, `mean_no_null`, `stddev_all`,
    /// `stddev_no_null`, `min_no_null`, `max_no_null`.
    pub entity: String,
    /// The values (event ids of the global definitions).
    pub data: DataRows,
}

/// The parts of one `<profile_xml>` document, in document order per kind.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Doc {
    /// Thread declarations.
    pub threads: Vec<ThreadDecl>,
    /// Definition blocks.
    pub definitions: Vec<Definitions>,
    /// Profile blocks.
    pub profiles: Vec<ProfileBlock>,
    /// Derived statistics blocks.
    pub derived: Vec<DerivedBlock>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tag {
    ProfileXml,
    Thread,
    Metadata,
    Attribute,
    Name,
    Value,
    Definitions,
    Metric,
    Units,
    Event,
    Group,
    UserEvent,
    Profile,
    Timestamp,
    IntervalData,
    AtomicData,
    DerivedEntity,
    DerivedProfile,
    Other,
}

impl Tag {
    fn of(name: &str) -> Tag {
        match name {
            "profile_xml" => Tag::ProfileXml,
            "thread" => Tag::Thread,
            "metadata" => Tag::Metadata,
            "attribute" => Tag::Attribute,
            "name" => Tag::Name,
            "value" => Tag::Value,
            "definitions" => Tag::Definitions,
            "metric" => Tag::Metric,
            "units" => Tag::Units,
            "event" => Tag::Event,
            "group" => Tag::Group,
            "userevent" => Tag::UserEvent,
            "profile" => Tag::Profile,
            "timestamp" => Tag::Timestamp,
            "interval_data" | "derivedinterval_data" => Tag::IntervalData,
            "atomic_data" | "derivedatomic_data" => Tag::AtomicData,
            "derivedentity" => Tag::DerivedEntity,
            n if n.ends_with("derivedprofile") => Tag::DerivedProfile,
            _ => Tag::Other,
        }
    }

    fn collects_text(self) -> bool {
        matches!(
            self,
            Tag::Name
                | Tag::Value
                | Tag::Group
                | Tag::Units
                | Tag::Timestamp
                | Tag::IntervalData
                | Tag::AtomicData
        )
    }
}

fn attr(e: &BytesStart<'_>, key: &str, offset: usize) -> Result<Option<String>, DocError> {
    match e.try_get_attribute(key) {
        Ok(Some(a)) => a
            .normalized_value(quick_xml::XmlVersion::Implicit1_0)
            .map(|v| Some(v.into_owned()))
            .map_err(|err| DocError {
                offset,
                message: format!("attribute `{key}` of <{}>: {err}", e.name().as_ref()),
            }),
        Ok(None) => Ok(None),
        Err(err) => Err(DocError {
            offset,
            message: format!("attributes of <{}>: {err}", e.name().as_ref()),
        }),
    }
}

fn required_attr(e: &BytesStart<'_>, key: &str, offset: usize) -> Result<String, DocError> {
    attr(e, key, offset)?.ok_or_else(|| DocError {
        offset,
        message: format!("<{}> has no `{key}` attribute", e.name().as_ref()),
    })
}

fn u32_attr(e: &BytesStart<'_>, key: &str, offset: usize) -> Result<u32, DocError> {
    let v = required_attr(e, key, offset)?;
    v.trim().parse().map_err(|_| DocError {
        offset,
        message: format!(
            "attribute `{key}` of <{}> is `{v}`, expected an unsigned integer",
            e.name().as_ref()
        ),
    })
}

fn metric_list(v: &str, offset: usize) -> Result<Vec<u32>, DocError> {
    v.split_ascii_whitespace()
        .map(|t| {
            t.parse::<u32>().map_err(|_| DocError {
                offset,
                message: format!("metrics=\"{v}\": `{t}` is not a metric id"),
            })
        })
        .collect()
}

fn number(tok: &str, what: &str, offset: usize) -> Result<f64, DocError> {
    match tok.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(_) => Err(DocError {
            offset,
            message: format!("{what} is `{tok}`, not a finite number"),
        }),
        Err(_) => Err(DocError {
            offset,
            message: format!("{what} is `{tok}`, expected a number"),
        }),
    }
}

fn id(tok: &str, offset: usize) -> Result<u32, DocError> {
    tok.parse::<u32>().map_err(|_| DocError {
        offset,
        message: format!("row id is `{tok}`, expected an unsigned integer"),
    })
}

/// Parses `id calls subrs (excl incl){n}` rows; `start` is the text's offset in the document.
fn parse_interval_rows(text: &str, start: usize, out: &mut DataRows) -> Result<(), DocError> {
    let n = out.metrics.len();
    let mut pos = start;
    for line in text.split_inclusive('\n') {
        let off = pos;
        pos += line.len();
        let toks: Vec<&str> = line.split_ascii_whitespace().collect();
        if toks.is_empty() {
            continue;
        }
        if toks.len() != 3 + 2 * n {
            return Err(DocError {
                offset: off,
                message: format!(
                    "interval row `{}` has {} fields, expected {} (id calls subrs, then exclusive and inclusive for each of the {n} metric(s))",
                    line.trim(),
                    toks.len(),
                    3 + 2 * n
                ),
            });
        }
        let e = id(toks[0], off)?;
        let calls = number(toks[1], "calls", off)?;
        let subrs = number(toks[2], "subrs", off)?;
        out.timers.push((e, calls, subrs));
        for (k, t) in toks[3..].iter().enumerate() {
            let what = if k % 2 == 0 {
                "exclusive value"
            } else {
                "inclusive value"
            };
            out.timer_values.push(number(t, what, off)?);
        }
    }
    Ok(())
}

/// Parses `id n max min mean sumsqr` rows.
fn parse_atomic_rows(text: &str, start: usize, out: &mut DataRows) -> Result<(), DocError> {
    let mut pos = start;
    for line in text.split_inclusive('\n') {
        let off = pos;
        pos += line.len();
        let toks: Vec<&str> = line.split_ascii_whitespace().collect();
        if toks.is_empty() {
            continue;
        }
        if toks.len() != 6 {
            return Err(DocError {
                offset: off,
                message: format!(
                    "user event row `{}` has {} fields, expected 6 (id count max min mean sumsqr)",
                    line.trim(),
                    toks.len()
                ),
            });
        }
        let e = id(toks[0], off)?;
        let mut v = [0.0; 5];
        for (k, name) in ["count", "max", "min", "mean", "sumsqr"].iter().enumerate() {
            v[k] = number(toks[k + 1], name, off)?;
        }
        out.user_events.push((e, v));
    }
    Ok(())
}

#[derive(Default)]
struct Pending {
    id: u32,
    name: Option<String>,
    value: Option<String>,
    group: Option<String>,
}

/// Parses one `<profile_xml>` document (see the module documentation). Errors give the
/// byte offset in `text` and what was expected.
pub fn parse_doc(text: &str) -> Result<Doc, DocError> {
    let mut reader = Reader::from_str(text);
    reader.config_mut().check_end_names = true;
    let mut doc = Doc::default();
    let mut stack: Vec<Tag> = Vec::new();
    let mut buf_text = String::new();
    let mut text_start = 0usize;
    let mut pending = Pending::default();
    let mut thread: Option<ThreadDecl> = None;
    let mut defs: Option<Definitions> = None;
    let mut profile: Option<ProfileBlock> = None;
    let mut derived: Option<DerivedBlock> = None;
    let mut derived_entity: Option<String> = None;
    let mut data_metrics: Vec<u32> = Vec::new();
    let mut seen_root = false;
    loop {
        let pos = usize::try_from(reader.buffer_position()).unwrap_or(usize::MAX);
        let ev = reader.read_event().map_err(|e| DocError {
            offset: usize::try_from(reader.error_position()).unwrap_or(pos),
            message: format!("malformed XML: {e}"),
        })?;
        match ev {
            Event::Start(e) => {
                let tag = Tag::of(e.name().as_ref());
                if stack.is_empty() {
                    if tag != Tag::ProfileXml || seen_root {
                        return Err(DocError {
                            offset: pos,
                            message: format!(
                                "expected one <profile_xml> element, found <{}>",
                                e.name().as_ref()
                            ),
                        });
                    }
                    seen_root = true;
                }
                match tag {
                    Tag::Thread => {
                        let t = ThreadId::new(
                            u32_attr(&e, "node", pos)?,
                            u32_attr(&e, "context", pos)?,
                            u32_attr(&e, "thread", pos)?,
                        );
                        thread = Some(ThreadDecl {
                            id: required_attr(&e, "id", pos)?,
                            thread: t,
                            metadata: Vec::new(),
                        });
                    }
                    Tag::Attribute => pending = Pending::default(),
                    Tag::Definitions => {
                        defs = Some(Definitions {
                            thread: attr(&e, "thread", pos)?.unwrap_or_default(),
                            ..Definitions::default()
                        });
                    }
                    Tag::Metric | Tag::Event | Tag::UserEvent => {
                        pending = Pending {
                            id: u32_attr(&e, "id", pos)?,
                            ..Pending::default()
                        };
                    }
                    Tag::Profile => {
                        profile = Some(ProfileBlock {
                            thread: required_attr(&e, "thread", pos)?,
                            name: None,
                            timestamp_us: None,
                            data: DataRows::default(),
                            offset: pos,
                        });
                    }
                    Tag::DerivedEntity => derived_entity = attr(&e, "id", pos)?,
                    Tag::DerivedProfile => {
                        derived = Some(DerivedBlock {
                            entity: attr(&e, "derivedentity", pos)?
                                .or_else(|| derived_entity.clone())
                                .unwrap_or_default(),
                            data: DataRows::default(),
                        });
                    }
                    Tag::IntervalData => {
                        data_metrics = metric_list(&attr(&e, "metrics", pos)?.unwrap_or_default(), pos)?;
                    }
                    _ => {}
                }
                if tag.collects_text() {
                    buf_text.clear();
                    text_start = usize::try_from(reader.buffer_position()).unwrap_or(pos);
                }
                stack.push(tag);
            }
            Event::Empty(e) => {
                let tag = Tag::of(e.name().as_ref());
                if stack.is_empty() {
                    return Err(DocError {
                        offset: pos,
                        message: format!("expected <profile_xml>, found <{}/>", e.name().as_ref()),
                    });
                }
                let parent = stack.last().copied();
                match (tag, parent) {
                    (Tag::Value, Some(Tag::Attribute)) => pending.value = Some(String::new()),
                    (Tag::Name, _) => pending.name = Some(String::new()),
                    (Tag::Group, _) => pending.group = Some(String::new()),
                    (Tag::Timestamp, _) => {
                        return Err(DocError {
                            offset: pos,
                            message: "empty <timestamp/>, expected microseconds since the epoch".into(),
                        });
                    }
                    _ => {}
                }
            }
            Event::Text(t) if stack.last().is_some_and(|t| t.collects_text()) => {
                buf_text.push_str(&t.xml10_content());
            }
            Event::CData(t) if stack.last().is_some_and(|t| t.collects_text()) => {
                buf_text.push_str(&t.xml10_content());
            }
            Event::GeneralRef(r) if stack.last().is_some_and(|t| t.collects_text()) => {
                if let Ok(Some(ch)) = r.resolve_char_ref() {
                    buf_text.push(ch);
                } else {
                    let ent = r.xml10_content();
                    match quick_xml::escape::resolve_predefined_entity(&ent) {
                        Some(s) => buf_text.push_str(s),
                        None => {
                            return Err(DocError {
                                offset: pos,
                                message: format!("unknown entity `&{ent};`"),
                            });
                        }
                    }
                }
            }
            Event::End(_) => {
                let Some(tag) = stack.pop() else {
                    return Err(DocError {
                        offset: pos,
                        message: "closing tag without an opening tag".into(),
                    });
                };
                let parent = stack.last().copied();
                match tag {
                    Tag::Name => {
                        let s = std::mem::take(&mut buf_text);
                        match parent {
                            Some(Tag::Profile) => {
                                if let Some(p) = profile.as_mut() {
                                    p.name = Some(s);
                                }
                            }
                            _ => pending.name = Some(s),
                        }
                    }
                    Tag::Value => pending.value = Some(std::mem::take(&mut buf_text)),
                    Tag::Group => pending.group = Some(std::mem::take(&mut buf_text)),
                    Tag::Timestamp => {
                        let s = buf_text.trim();
                        let ts = s.parse::<i64>().map_err(|_| DocError {
                            offset: text_start,
                            message: format!(
                                "<timestamp> is `{s}`, expected microseconds since the epoch (an integer)"
                            ),
                        })?;
                        if let Some(p) = profile.as_mut() {
                            p.timestamp_us = Some(ts);
                        }
                    }
                    Tag::Attribute => {
                        let p = std::mem::take(&mut pending);
                        let Some(name) = p.name else {
                            return Err(DocError {
                                offset: pos,
                                message: "metadata <attribute> without a <name>".into(),
                            });
                        };
                        if let Some(t) = thread.as_mut() {
                            t.metadata.push((name, p.value.unwrap_or_default()));
                        }
                    }
                    Tag::Metric | Tag::Event | Tag::UserEvent => {
                        let p = std::mem::take(&mut pending);
                        let what = match tag {
                            Tag::Metric => "metric",
                            Tag::Event => "event",
                            _ => "userevent",
                        };
                        let Some(name) = p.name else {
                            return Err(DocError {
                                offset: pos,
                                message: format!("<{what} id=\"{}\"> without a <name>", p.id),
                            });
                        };
                        let Some(d) = defs.as_mut() else {
                            return Err(DocError {
                                offset: pos,
                                message: format!("<{what}> outside <definitions>"),
                            });
                        };
                        match tag {
                            Tag::Metric => d.metrics.push((p.id, name)),
                            Tag::Event => d.events.push((p.id, name, p.group.unwrap_or_default())),
                            _ => d.user_events.push((p.id, name)),
                        }
                    }
                    Tag::Thread => {
                        if let Some(t) = thread.take() {
                            doc.threads.push(t);
                        }
                    }
                    Tag::Definitions => {
                        if let Some(d) = defs.take() {
                            doc.definitions.push(d);
                        }
                    }
                    Tag::IntervalData | Tag::AtomicData => {
                        let target = match parent {
                            Some(Tag::Profile) => profile.as_mut().map(|p| &mut p.data),
                            Some(Tag::DerivedProfile) => derived.as_mut().map(|d| &mut d.data),
                            _ => None,
                        };
                        if let Some(data) = target {
                            if tag == Tag::IntervalData {
                                data.metrics = std::mem::take(&mut data_metrics);
                                parse_interval_rows(&buf_text, text_start, data)?;
                            } else {
                                parse_atomic_rows(&buf_text, text_start, data)?;
                            }
                        }
                        buf_text.clear();
                    }
                    Tag::Profile => {
                        if let Some(p) = profile.take() {
                            doc.profiles.push(p);
                        }
                    }
                    Tag::DerivedProfile => {
                        if let Some(d) = derived.take() {
                            doc.derived.push(d);
                        }
                    }
                    _ => {}
                }
            }
            Event::Eof => {
                if let Some(open) = stack.last() {
                    return Err(DocError {
                        offset: text.len(),
                        message: format!("document ends inside an unclosed element ({open:?})"),
                    });
                }
                if !seen_root {
                    return Err(DocError {
                        offset: 0,
                        message: "empty document: expected <profile_xml>".into(),
                    });
                }
                break;
            }
            _ => {}
        }
    }
    Ok(doc)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "<profile_xml>\n<thread id=\"0.0.1.77\" node=\"0\" context=\"0\" thread=\"1\">\n<metadata>\n<attribute>\n<name>CWD</name>\n<value>/a &amp; b</value>\n</attribute>\n</metadata>\n</thread>\n<definitions thread=\"0.0.1.77\">\n<metric id=\"0\"><name>TIME</name>\n<units>unknown</units>\n</metric>\n</definitions>\n<definitions thread=\"0.0.1.77\">\n<event id=\"0\"><name>.TAU application </name><group>TAU_DEFAULT</group></event>\n<event id=\"1\"><name>a =&gt; b </name><group>TAU_CALLPATH</group></event>\n<event id=\"2\"><name><![CDATA[f<int> ]]]]><![CDATA[> </profile_xml>]]> </name><group>G</group></event>\n<userevent id=\"0\"><name>bytes</name></userevent>\n</definitions>\n<profile thread=\"0.0.1.77\">\n<name>iteration 1</name>\n<timestamp>1795290105252906</timestamp>\n<interval_data metrics=\"0 \">\n0 1 2 10 100 \n2 3 0 1.5E+2 2e2 \n</interval_data>\n<atomic_data>\n0 4 8 1 5 120\n</atomic_data>\n</profile>\n</profile_xml>";

    #[test]
    fn parses_every_part_of_a_snapshot_document() {
        let d = parse_doc(DOC).unwrap();
        assert_eq!(d.threads.len(), 1);
        assert_eq!(d.threads[0].thread, ThreadId::new(0, 0, 1));
        assert_eq!(
            d.threads[0].metadata,
            vec![("CWD".to_string(), "/a & b".to_string())]
        );
        assert_eq!(d.definitions[0].metrics, vec![(0, "TIME".to_string())]);
        let ev = &d.definitions[1].events;
        assert_eq!(ev[1].1, "a => b ");
        assert_eq!(ev[2].1, "f<int> ]]> </profile_xml> ");
        let p = &d.profiles[0];
        assert_eq!(p.name.as_deref(), Some("iteration 1"));
        assert_eq!(p.timestamp_us, Some(1795290105252906));
        assert_eq!(p.data.timers, vec![(0, 1.0, 2.0), (2, 3.0, 0.0)]);
        assert_eq!(p.data.timer_values, vec![10.0, 100.0, 150.0, 200.0]);
        assert_eq!(p.data.user_events, vec![(0, [4.0, 8.0, 1.0, 5.0, 120.0])]);
    }

    #[test]
    fn splits_documents_at_every_chunking_and_ignores_end_tags_in_cdata() {
        let stream = format!("{DOC}\n{DOC}\n\0 {DOC}");
        let bytes = stream.as_bytes();
        for chunk in [1usize, 2, 3, 7, 13, 64, 1000, bytes.len()] {
            let mut s = DocSplitter::default();
            let mut docs = Vec::new();
            for c in bytes.chunks(chunk) {
                let (d, e) = s.push(c);
                assert!(e.is_empty(), "chunk {chunk}: {e:?}");
                docs.extend(d);
            }
            assert!(s.finish().is_empty());
            assert_eq!(docs.len(), 3, "chunk {chunk}");
            for d in &docs {
                assert_eq!(d.text, DOC);
            }
            assert_eq!(docs[1].offset as usize, DOC.len() + 1);
            assert_eq!(docs[1].line as usize, DOC.lines().count() + 1);
            assert_eq!(docs[2].offset as usize, 2 * DOC.len() + 4);
        }
    }

    #[test]
    fn reports_garbage_cut_documents_and_truncation() {
        let mut s = DocSplitter::default();
        let cut = &DOC[..200];
        let input = format!("junk\n{DOC}\n{cut}{DOC}\nmore junk");
        let (docs, errors) = s.push(input.as_bytes());
        assert_eq!(docs.len(), 2);
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert_eq!((errors[0].offset, errors[0].line), (0, 1));
        assert!(errors[0].message.contains("unexpected content"));
        assert_eq!(errors[1].offset as usize, 5 + DOC.len() + 1);
        assert!(errors[1].message.contains("cut off"));
        let end = s.finish();
        assert_eq!(end.len(), 1);
        assert!(end[0].message.contains("unexpected content"), "{end:?}");
        let mut s = DocSplitter::default();
        let _ = s.push(&DOC.as_bytes()[..DOC.len() - 3]);
        let end = s.finish();
        assert!(end[0].message.contains("incomplete"), "{end:?}");
        assert_eq!(end[0].offset, 0);
    }

    #[test]
    fn malformed_documents_name_the_offset() {
        let bad = DOC.replace("</definitions>\n<profile", "</definitionz>\n<profile");
        let e = parse_doc(&bad).unwrap_err();
        assert!(e.message.contains("malformed XML"), "{e:?}");
        assert!(e.offset > 0 && e.offset < bad.len());
        let bad = DOC.replace("2 3 0 1.5E+2 2e2", "2 3 0 1.5E+2");
        let e = parse_doc(&bad).unwrap_err();
        assert!(e.message.contains("has 4 fields, expected 5"), "{e:?}");
        assert_eq!(&bad[e.offset..e.offset + 5], "2 3 0");
        let bad = DOC.replace("2 3 0 1.5E+2 2e2", "2 3 0 NaN 2e2");
        assert!(
            parse_doc(&bad)
                .unwrap_err()
                .message
                .contains("not a finite number")
        );
        let bad = DOC.replace("<timestamp>1795290105252906", "<timestamp>17x");
        assert!(
            parse_doc(&bad)
                .unwrap_err()
                .message
                .contains("<timestamp> is `17x`")
        );
        let bad = DOC.replace("<event id=\"1\">", "<event>");
        assert!(parse_doc(&bad).unwrap_err().message.contains("no `id` attribute"));
        // Truncated at every point: an error, never a panic.
        for cut in 0..DOC.len() {
            if DOC.is_char_boundary(cut) {
                assert!(parse_doc(&DOC[..cut]).is_err(), "cut at {cut}");
            }
        }
    }
}
