//! pyinstrument JSON profiles: what the Python sampling profiler's JSON renderer writes
//! (`pyinstrument -r json -o out.json script.py`, or `pyinstrument --load SESSION -r json`).
//!
//! ```text
//! { "start_time": 1601984370.032729, "duration": 0.478172, "sample_count": 432,
//!   "program": "examples.py",             (pyinstrument 5 writes "target_description")
//!   "cpu_time": 1.194035,
//!   "root_frame": { "function": "<module>", "file_path_short": "examples.py",
//!                   "file_path": "/home/.../examples.py", "line_no": 1, "time": 0.47815,
//!                   "is_application_code": true, "children": [ {frame}, ... ] } }
//! ```
//!
//! Mapping into the model (checked against Hatchet's `GraphFrame.from_pyinstrument`,
//! `hatchet/readers/pyinstrument_reader.py`; see `calltree` for callpath and flat events):
//! - **Thread**: one, `0.0.0` (pyinstrument samples one thread).
//! - **Metric**: `time`, in seconds, sampled time that adds up (combines by sum). A frame's
//!   `time` is inclusive (the frame and everything it called). Its exclusive time is its `time` minus the `time` of each child, subtracted
//!   in the order of the file, as Hatchet computes it. A frame whose children add up to more
//!   than its own time (the file rounds every time to 6 decimals) keeps its negative
//!   exclusive time, with a warning when it is below -[`NOISE`] times its own time (or
//!   -[`NOISE`] s for frames under a second: subtracting decimal fractions in binary leaves
//!   differences such as -7e-18 s).
//! - **Call tree**: one node per frame, named by its `function` (Hatchet's `name`) followed by
//!   TAU's source-location suffix `[{file_path_short} {line_no}]` (Hatchet's `file` and
//!   `line`), which the model reads as the event's source location; the suffix also keeps
//!   apart frames of one function name in different files (the many `<module>` frames of an
//!   import tree). A frame with an empty `file_path_short` has no suffix. (pyinstrument 5
//!   writes its `[self]` frames with their caller's `file_path_short` and `line_no` 0.)
//!   Callpath events are these names joined by ` => `; a flat event per name. Same-named
//!   siblings (same function, file and line: pyinstrument merges those itself, so a file
//!   rarely has them) are combined into one callpath event, with a warning; Hatchet keeps
//!   them as separate nodes.
//! - **Calls**: pyinstrument records no call counts: calls and subcalls are 0 (noted).
//! - **Metadata**: every top-level entry but `root_frame`, under its own name: `program` or
//!   `target_description`, `start_time` (Unix time, s), `duration` (s), `sample_count`,
//!   `cpu_time` (s); strings as they are, numbers as written in the file.
//! - **Not kept**: a frame's absolute `file_path`, `is_application_code`, `await_time`,
//!   `group_id` (pyinstrument's display grouping) and `class_name` (Hatchet's reader keeps
//!   `is_application_code` as a column and ignores the others). Other frame keys are named
//!   in a note.
//! - **Depth**: the tree is kept to at most [`MAX_DEPTH`] frames (a callpath's whole name,
//!   built when a view shows it, holds every frame above it): the frames at
//!   depth [`MAX_DEPTH`] and below are replaced by one frame [`CUT_FRAME`] holding their
//!   time, with a warning; only the `time` of the frames at depth [`MAX_DEPTH`] is read, the
//!   frames below them are checked as JSON only. (Hatchet cannot read a tree of 600 frames
//!   with Python's default recursion limit: `json.load` raises `RecursionError`.)
//!
//! Errors name the JSON line and column and the frame (its path of frame names), and say
//! what was expected. The JSON is read without recursion limit other than [`MAX_DEPTH`]:
//! deep frame trees are read in bands of [`BAND`] frames, each band's children kept as raw
//! JSON and read after it.

use crate::calltree::{Layout, ThreadValues, Tree, finish, thread_data};
use crate::format::{self, FileScope, Format, Parts};
use crate::problem::{Parsed, Problem};
use crate::stacks::{CUT_FRAME, MAX_DEPTH};
use perfscape_model::{Combine, Metric, ProfileBuilder, ThreadId, Unit};
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use std::collections::{BTreeSet, VecDeque};
use std::fmt;

/// The pyinstrument format: a JSON profile with a `root_frame` tree.
pub const FORMAT: Format = Format {
    name: "pyinstrument",
    description: "pyinstrument JSON profiles (pyinstrument -r json: a frame tree with inclusive seconds)",
    example: "pyinstrument/hatchet-pyinstrument/pyinstrument-hatchet-profile.json",
    sniff: |p| p.head().is_some_and(sniff),
    read: format::Read::Bytes(parse_pyinstrument),
    gives: Parts::PROFILE,
    file_scope: FileScope::File,
};

/// The relative floating-point noise of an exclusive time (its frame's time minus its
/// children's) below which a negative exclusive time is not worth a warning.
pub const NOISE: f64 = 1e-9;

/// Frames read in one pass of the JSON parser; the children of the last frame of a band are
/// kept as raw JSON and read afterwards (serde_json stops at 128 nested arrays and objects,
/// and a frame is two: its object and its `children` array).
pub const BAND: usize = 32;

/// True when a file's first bytes look like a pyinstrument JSON profile: a JSON object whose
/// first key is `"start_time"` (the JSON renderer writes it first) and that has a
/// `"root_frame"`. pyinstrument's own session files (`.pyisession`) start the same way but
/// hold `frame_records` instead of a frame tree.
pub fn sniff(head: &[u8]) -> bool {
    let t = String::from_utf8_lossy(head);
    let Some(rest) = t
        .trim_start_matches(['\u{feff}', ' ', '\t', '\r', '\n'])
        .strip_prefix('{')
    else {
        return false;
    };
    rest.trim_start().starts_with("\"start_time\"") && t.contains("\"root_frame\"")
}

/// The name of a frame's node: `function [{file} {line}]`, or `function` without a file.
pub fn frame_name(function: &str, file: &str, line: u32) -> String {
    if file.is_empty() {
        function.to_string()
    } else {
        format!("{function} [{{{file}}} {{{line}}}]")
    }
}

/// Frame keys that are read or deliberately not kept (see the module documentation).
const KNOWN_FRAME_KEYS: &[&str] = &[
    "function",
    "file_path_short",
    "file_path",
    "line_no",
    "time",
    "await_time",
    "is_application_code",
    "children",
    "group_id",
    "class_name",
];

/// What the reader gathers: the tree, each node's inclusive time, run metadata.
struct Reader<'de> {
    /// The whole text (positions in errors count in it).
    text: &'de str,
    tree: Tree,
    /// `time` of each node (inclusive seconds).
    time: Vec<f64>,
    /// `children` arrays of the last frames of a band, read after it: (parent node, depth of
    /// the children, the array).
    deferred: VecDeque<(usize, usize, &'de RawValue)>,
    /// Frames replaced by [`CUT_FRAME`]: count, and the first frame above them.
    cut: (usize, Option<usize>),
    metadata: Vec<(String, String)>,
    other_keys: BTreeSet<String>,
    /// The frames being read, outermost first (the last one is where a syntax error is).
    open: Vec<usize>,
    /// The error that stopped the parse, with its position (serde's error only stops it).
    error: Option<Problem>,
}

impl<'de> Reader<'de> {
    /// Records a problem at the start of `at` (a slice of the text) and returns the error
    /// that stops the parse.
    fn fail<E: de::Error>(&mut self, at: &str, message: String) -> E {
        let (line, column) = line_column(self.text, offset_in(self.text, at));
        self.error = Some(Problem::at_line(line, format!("column {column}: {message}")));
        E::custom("stopped")
    }

    /// The path of frame names from the root to `node` (long paths shortened).
    fn path(&self, node: usize) -> String {
        let mut names = Vec::new();
        let mut q = Some(node);
        while let Some(n) = q {
            let f = &self.tree.frame[n];
            names.push(if f.is_empty() { "(frame)" } else { f.as_str() });
            q = self.tree.parent[n];
        }
        names.reverse();
        if names.len() > 7 {
            let hidden = names.len() - 5;
            let mut short: Vec<String> = names[..2].iter().map(|s| s.to_string()).collect();
            short.push(format!("... ({hidden} frames) ..."));
            short.extend(names[names.len() - 3..].iter().map(|s| s.to_string()));
            return short.join(" => ");
        }
        names.join(" => ")
    }
}

/// Byte offset of `part` (a slice of `text`) in `text`.
fn offset_in(text: &str, part: &str) -> usize {
    (part.as_ptr() as usize)
        .saturating_sub(text.as_ptr() as usize)
        .min(text.len())
}

/// 1-based line and column (in bytes) of byte `offset` of `text`.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text.as_bytes()[..offset.min(text.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let start = before.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    (line, offset - start + 1)
}

/// Byte offset of serde_json's 1-based `line` and `column` in `part`.
fn offset_of(part: &str, line: usize, column: usize) -> usize {
    let mut start = 0;
    for _ in 1..line {
        match part[start..].find('\n') {
            Some(i) => start += i + 1,
            None => break,
        }
    }
    (start + column.saturating_sub(1)).min(part.len())
}

/// A JSON value's text, shortened for a message.
fn shown(raw: &RawValue) -> String {
    let s = raw.get();
    match s.char_indices().nth(60) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_string(),
    }
}

/// What kind of JSON value `raw` is, for messages.
fn kind(raw: &RawValue) -> &'static str {
    match raw.get().as_bytes().first() {
        Some(b'"') => "a string",
        Some(b'{') => "an object",
        Some(b'[') => "an array",
        Some(b't' | b'f') => "a boolean",
        Some(b'n') => "null",
        _ => "a number",
    }
}

/// A frame's `time`: a finite number of seconds, at least 0.
fn seconds<E: de::Error>(r: &mut Reader<'_>, raw: &RawValue, frame: &str) -> Result<f64, E> {
    let v = match serde_json::from_str::<f64>(raw.get()) {
        Ok(v) if v.is_finite() && v >= 0.0 => return Ok(v),
        Ok(v) if v < 0.0 => format!("is negative ({v})"),
        Ok(_) => "is not finite".to_string(),
        Err(_) if kind(raw) == "a number" => "is too large for a number".to_string(),
        Err(_) => format!("is {} ({})", kind(raw), shown(raw)),
    };
    Err(r.fail(
        raw.get(),
        format!("{frame}: `time` {v}; expected the frame's inclusive time, a number of seconds >= 0"),
    ))
}

/// Names node `me` from what its frame gave so far (the name is complete once `function`,
/// `file_path_short` and `line_no` are read; messages about it or its children show it).
fn name_frame(
    r: &mut Reader<'_>,
    me: usize,
    function: &Option<String>,
    file: &Option<String>,
    line: Option<u32>,
) {
    if let Some(f) = function {
        r.tree.frame[me] = match (file, line) {
            (Some(file), Some(line)) => frame_name(f, file, line),
            _ => f.clone(),
        };
    }
}

/// The frame a message is about, by its path (`(frame)` for a frame whose `function` is not
/// read yet).
fn frame_label(r: &Reader<'_>, node: usize) -> String {
    format!("frame `{}`", r.path(node))
}

/// Reads one frame object (a node of the tree) and, in its band, its children.
struct FrameSeed<'r, 'de> {
    r: &'r mut Reader<'de>,
    parent: Option<usize>,
    /// Depth of this frame (the root is 1).
    depth: usize,
    /// Depth of the first frame of the current band.
    band_start: usize,
}

impl<'de> DeserializeSeed<'de> for FrameSeed<'_, 'de> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        // `any`, so that `null` reaches `visit_unit` and gets its own message.
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for FrameSeed<'_, 'de> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a frame object (`function`, `file_path_short`, `line_no`, `time`, `children`)")
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Err(E::custom(if self.parent.is_none() {
            "`root_frame` is null; expected the root frame object (pyinstrument writes null when it recorded no samples)"
        } else {
            "a frame is null; expected a frame object"
        }))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let r = self.r;
        let me = r.tree.push(self.parent, String::new(), String::new());
        r.time.push(0.0);
        r.open.push(me);
        let (mut function, mut file, mut line, mut time) = (None, None, None, None);
        let mut children = false;
        while let Some(key) = map.next_key::<&'de RawValue>()? {
            let name: String = serde_json::from_str(key.get()).unwrap_or_default();
            let seen = match name.as_str() {
                "function" => function.is_some(),
                "file_path_short" => file.is_some(),
                "line_no" => line.is_some(),
                "time" => time.is_some(),
                "children" => children,
                _ => false,
            };
            if seen {
                let at = frame_label(r, me);
                return Err(r.fail(
                    key.get(),
                    format!("{at}: a second `{name}`; expected each key once"),
                ));
            }
            match name.as_str() {
                "function" | "file_path_short" => {
                    let raw: &'de RawValue = map.next_value()?;
                    let Ok(s) = serde_json::from_str::<String>(raw.get()) else {
                        let at = frame_label(r, me);
                        let msg = format!(
                            "{at}: `{name}` is {} ({}); expected a string",
                            kind(raw),
                            shown(raw)
                        );
                        return Err(r.fail(raw.get(), msg));
                    };
                    if name == "function" {
                        function = Some(s);
                    } else {
                        file = Some(s);
                    }
                    name_frame(r, me, &function, &file, line);
                }
                "line_no" => {
                    let raw: &'de RawValue = map.next_value()?;
                    let Ok(l) = serde_json::from_str::<u32>(raw.get()) else {
                        let at = frame_label(r, me);
                        let msg = format!(
                            "{at}: `line_no` is {} ({}); expected a line number, a whole number from 0 to {}",
                            kind(raw),
                            shown(raw),
                            u32::MAX
                        );
                        return Err(r.fail(raw.get(), msg));
                    };
                    line = Some(l);
                    name_frame(r, me, &function, &file, line);
                }
                "time" => {
                    let raw: &'de RawValue = map.next_value()?;
                    let at = frame_label(r, me);
                    time = Some(seconds(r, raw, &at)?);
                }
                "children" => {
                    children = true;
                    let depth = self.depth + 1;
                    if depth >= MAX_DEPTH {
                        let mut sum = 0.0;
                        let before = r.cut.0;
                        map.next_value_seed(CutSeed {
                            r: &mut *r,
                            above: me,
                            sum: &mut sum,
                        })?;
                        if r.cut.0 > before {
                            r.tree.push(Some(me), CUT_FRAME.to_string(), String::new());
                            r.time.push(sum);
                            r.cut.1.get_or_insert(me);
                        }
                    } else if depth - self.band_start >= BAND {
                        let raw: &'de RawValue = map.next_value()?;
                        r.deferred.push_back((me, depth, raw));
                    } else {
                        map.next_value_seed(ChildrenSeed {
                            r: &mut *r,
                            parent: me,
                            depth,
                            band_start: self.band_start,
                        })?;
                    }
                }
                other => {
                    if !KNOWN_FRAME_KEYS.contains(&other) {
                        r.other_keys.insert(other.to_string());
                    }
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let missing: Vec<&str> = [
            ("function", function.is_none()),
            ("file_path_short", file.is_none()),
            ("line_no", line.is_none()),
            ("time", time.is_none()),
        ]
        .into_iter()
        .filter_map(|(k, m)| m.then_some(k))
        .collect();
        if !missing.is_empty() {
            let at = frame_label(r, me);
            let msg = format!(
                "{at} has no `{}`; expected every frame to have `function`, `file_path_short`, `line_no` and `time`",
                missing.join("`, `")
            );
            // The position is the end of the frame object (serde's error carries it).
            return Err(de::Error::custom(msg));
        }
        r.time[me] = time.unwrap_or_default();
        r.open.pop();
        Ok(())
    }
}

/// Reads a `children` array: one [`FrameSeed`] per element.
struct ChildrenSeed<'r, 'de> {
    r: &'r mut Reader<'de>,
    parent: usize,
    depth: usize,
    band_start: usize,
}

impl<'de> DeserializeSeed<'de> for ChildrenSeed<'_, 'de> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for ChildrenSeed<'_, 'de> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("`children`: an array of frame objects")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq
            .next_element_seed(FrameSeed {
                r: &mut *self.r,
                parent: Some(self.parent),
                depth: self.depth,
                band_start: self.band_start,
            })?
            .is_some()
        {}
        Ok(())
    }
}

/// Reads the `children` of a frame at depth `MAX_DEPTH - 1`: only each child's `time`
/// (added to `sum`); everything below is checked as JSON only.
struct CutSeed<'r, 'de> {
    r: &'r mut Reader<'de>,
    above: usize,
    sum: &'r mut f64,
}

impl<'de> DeserializeSeed<'de> for CutSeed<'_, 'de> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for CutSeed<'_, 'de> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("`children`: an array of frame objects")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(frame) = seq.next_element::<std::collections::BTreeMap<String, &'de RawValue>>()? {
            let at = format!("frame below `{}`", self.r.path(self.above));
            let Some(raw) = frame.get("time") else {
                return Err(de::Error::custom(format!(
                    "{at} has no `time`; expected every frame to have one"
                )));
            };
            *self.sum += seconds::<A::Error>(self.r, raw, &at)?;
            self.r.cut.0 += 1;
        }
        Ok(())
    }
}

/// Reads the top-level object.
struct TopSeed<'r, 'de>(&'r mut Reader<'de>);

impl<'de> DeserializeSeed<'de> for TopSeed<'_, 'de> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for TopSeed<'_, 'de> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a pyinstrument JSON profile: an object with `start_time`, `duration`, `root_frame`, ...")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let r = self.0;
        let mut root = false;
        while let Some(key) = map.next_key::<String>()? {
            if key != "root_frame" {
                let raw: &'de RawValue = map.next_value()?;
                let value =
                    serde_json::from_str::<String>(raw.get()).unwrap_or_else(|_| raw.get().to_string());
                r.metadata.push((key, value));
                continue;
            }
            if root {
                return Err(de::Error::custom("a second `root_frame`; expected one"));
            }
            root = true;
            map.next_value_seed(FrameSeed {
                r: &mut *r,
                parent: None,
                depth: 1,
                band_start: 1,
            })?;
        }
        if !root {
            return Err(de::Error::custom(
                "no `root_frame`; expected a pyinstrument JSON profile (written by `pyinstrument -r json`)",
            ));
        }
        Ok(())
    }
}

/// The problem of a serde_json error `e` met while parsing `part` (a slice of the text): the
/// reader's own problem when it recorded one, else serde's message at its position in the
/// whole text.
fn problem(r: &mut Reader<'_>, part: &str, e: &serde_json::Error) -> Problem {
    if let Some(p) = r.error.take() {
        return p;
    }
    let at = offset_in(r.text, part) + offset_of(part, e.line(), e.column());
    let (line, column) = line_column(r.text, at);
    let text = e.to_string();
    let bare = match text.rfind(" at line ") {
        Some(i) => &text[..i],
        None => &text,
    };
    // Bytes, not `str` slices: serde's columns count bytes, which may fall inside a character.
    let bytes = r.text.as_bytes();
    let near: &[u8] = &bytes[at.saturating_sub(1).min(bytes.len())..];
    let near = &near[near
        .iter()
        .position(|b| !b":, [".contains(b))
        .unwrap_or(near.len())..];
    let rest_len = bytes[at.min(bytes.len())..]
        .iter()
        .filter(|b| !b.is_ascii_whitespace())
        .count();
    let message = if [&b"NaN"[..], b"nan", b"Infinity", b"-Infinity", b"inf", b"-inf"]
        .iter()
        .any(|t| near.starts_with(t))
    {
        let token: Vec<u8> = near
            .iter()
            .copied()
            .take_while(|b| b.is_ascii_alphanumeric() || *b == b'-')
            .collect();
        format!(
            "`{}` is not a JSON number (Python writes it for a float that is not finite); expected a finite number",
            String::from_utf8_lossy(&token)
        )
    } else if e.classify() == serde_json::error::Category::Eof || rest_len <= 1 {
        format!("the JSON ends here (the file is truncated): {bare}")
    } else if e.classify() == serde_json::error::Category::Syntax {
        format!("the JSON is malformed: {bare}")
    } else {
        bare.to_string()
    };
    // serde's own messages (syntax, types) get the frame being read; the reader's name it.
    let frame = match r.open.last() {
        Some(&n) if !message.contains("frame `") => format!("in {}: ", frame_label(r, n)),
        _ => String::new(),
    };
    Problem::at_line(line, format!("column {column}: {frame}{message}"))
}

/// Parses a pyinstrument JSON profile (see the module documentation).
///
/// # Errors
/// When the input is not UTF-8 JSON, not a pyinstrument profile, or a frame lacks one of
/// `function`, `file_path_short`, `line_no`, `time` or has one of the wrong type (a time
/// that is negative, not finite or too large): the problem names the line and column and the
/// frame.
pub fn parse_pyinstrument(bytes: &[u8]) -> Result<Parsed, Problem> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let at = e.valid_up_to();
        let valid = std::str::from_utf8(&bytes[..at]).unwrap_or_default();
        let (line, column) = line_column(valid, at);
        Problem::at_line(
            line,
            format!("column {column}: byte {at} is not UTF-8; expected a UTF-8 JSON text"),
        )
    })?;
    let body = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut r = Reader {
        text,
        tree: Tree::default(),
        time: Vec::new(),
        deferred: VecDeque::new(),
        cut: (0, None),
        metadata: Vec::new(),
        other_keys: BTreeSet::new(),
        open: Vec::new(),
        error: None,
    };
    let mut de = serde_json::Deserializer::from_str(body);
    if let Err(e) = TopSeed(&mut r).deserialize(&mut de).and_then(|()| de.end()) {
        return Err(problem(&mut r, body, &e));
    }
    while let Some((parent, depth, raw)) = r.deferred.pop_front() {
        r.open.clear();
        let mut de = serde_json::Deserializer::from_str(raw.get());
        let seed = ChildrenSeed {
            r: &mut r,
            parent,
            depth,
            band_start: depth,
        };
        if let Err(e) = seed.deserialize(&mut de).and_then(|()| de.end()) {
            return Err(problem(&mut r, raw.get(), &e));
        }
    }
    build(r)
}

/// Builds the profile from what was read.
fn build(r: Reader<'_>) -> Result<Parsed, Problem> {
    let n = r.tree.len();
    // Exclusive = own time minus each child's, in file order (children of a node have
    // increasing indices in file order: a band's deferred arrays are read first in, first out).
    let mut exclusive = r.time.clone();
    for (c, parent) in r.tree.parent.iter().enumerate() {
        if let Some(p) = *parent {
            exclusive[p] -= r.time[c];
        }
    }
    if let Some(i) = exclusive.iter().position(|x| !x.is_finite()) {
        return Err(Problem::whole(format!(
            "frame `{}`: its own time minus its children's is not a finite number; expected times that add up",
            r.path(i)
        )));
    }
    let mut warnings = Vec::new();
    let negative: Vec<usize> = (0..n)
        .filter(|&i| exclusive[i] < -NOISE * r.time[i].max(1.0))
        .collect();
    if let Some(&worst) = negative
        .iter()
        .min_by(|&&a, &&b| exclusive[a].total_cmp(&exclusive[b]))
    {
        warnings.push(Problem::whole(format!(
            "{} frame(s) have less time than their children together, so a negative exclusive time (kept, as Hatchet keeps it); the largest difference is {:e} s at `{}`",
            negative.len(),
            -exclusive[worst],
            r.path(worst)
        )));
    }
    if let (count, Some(above)) = r.cut {
        warnings.push(Problem::whole(format!(
            "the frame tree is deeper than {MAX_DEPTH} frames: {count} frame(s) at depth {MAX_DEPTH} (and the frames they called) were replaced by `{CUT_FRAME}` holding their time, first below `{}`",
            r.path(above)
        )));
    }
    let (mut layout, renamed) = Layout::new(&r.tree);
    if renamed > 0 {
        warnings.push(Problem::whole(format!(
            "{renamed} frame name(s) contain `=>`; written as `= >`"
        )));
    }
    let mut values = ThreadValues::new(n, 1);
    values.present = vec![true; n];
    values.exclusive = exclusive;
    values.inclusive = r.time;
    let mut builder = ProfileBuilder::new(vec![Metric::new("time", Unit::Seconds)]);
    let data = thread_data(
        &mut layout,
        &mut builder,
        &[Combine::Sum],
        &values,
        &r.metadata,
        true,
    );
    builder
        .add_thread(ThreadId::new(0, 0, 0), data)
        .map_err(|e| Problem::whole(format!("thread 0.0.0: {e}")))?;
    let profile = finish(
        builder,
        &layout,
        "frame(s) (same function, file and line)",
        &mut warnings,
    );
    let mut notes = vec!["pyinstrument records no call counts: calls and subcalls are 0".to_string()];
    if !r.other_keys.is_empty() {
        let keys: Vec<String> = r.other_keys.into_iter().collect();
        notes.push(format!("frame keys not read: {}", keys.join(", ")));
    }
    Ok(Parsed {
        profile,
        trace: None,
        warnings,
        partial: Vec::new(),
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_in_the_whole_text() {
        let text = "ab\ncd\nef";
        assert_eq!(line_column(text, 4), (2, 2));
        assert_eq!(offset_of(&text[3..], 2, 1), 3);
        assert_eq!(offset_in(text, &text[6..]), 6);
    }
}
