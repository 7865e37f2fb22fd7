//! Chrome Trace Event Format JSON (chrome://tracing, Perfetto, catapult, PyTorch/Kineto,
//! Hermes, TAU's `tau_trace2json -chrome`), plain or gzip-compressed.
//!
//! Specification: "Trace Event Format" (Google, the document linked from catapult's
//! `docs/trace-event-format.md`). Both the JSON array form (`[ {...}, ... ]`, whose closing
//! `]` the format makes optional) and the object form (`{"traceEvents": [...], ...}`) are read.
//!
//! # What is read
//! - `B`/`E` (begin/end, matched per thread in timestamp order, file order at equal times; an
//!   `E` whose name differs from the open `B` still closes it, with a warning) and `X`
//!   (complete, `ts` + `dur`): the thread's intervals. A `B` never closed is closed at the last
//!   timestamp seen on its thread, with a warning.
//! - `i`/`I` (instant, scope `s` = `t`/`p`/`g`), `n`, `T`, `p` (async steps): instants.
//! - `C` (counter): one series per `args` key, per process (the `id`, when given, is appended
//!   to the counter name in brackets).
//! - `b`/`e` (nestable async, keyed by category and `id`/`id2`, per process for local ids)
//!   and the legacy `S`/`F`: async spans.
//! - `s`/`t`/`f` (flow): arrows between threads, matched by category, `id` (or `id2`) and
//!   `scope`, first in first out (so repeated ids — TAU writes the destination rank as the id
//!   and the message tag as the scope — pair the n-th send with the n-th receive).
//! - `M` (metadata): `process_name`, `thread_name` (and labels, sort indices) name the threads.
//! - `samples` + `stackFrames` (object form; Linux perf in catapult, Hermes): sampled call
//!   stacks per thread, as callpath and flat events with the metrics `samples` (1 per sample)
//!   and `sample weight` (the `weight` field) when present.
//! - Other phases (`P`, `O`, `N`, `D`, `R`, `c`, `V`, `v`, `(`, `)`) are counted in a note and
//!   not used.
//!
//! # Time
//! `ts` and `dur` are microseconds whatever `displayTimeUnit` says (it only sets how viewers
//! display them; it is kept in the metadata). They are read from the JSON text as exact
//! decimals (numbers or numeric strings) and stored as integer **nanoseconds** in the
//! [`Trace`]; the derived profile's `TIME` metric is in microseconds, TAU's unit.
//!
//! # Threads
//! A thread is a (`pid`, `tid`) pair. The node is the `pid` and the thread number the `tid`
//! when they are integers that fit `u32` (numeric strings count as integers); any other value
//! (negative, too large, a name such as `"Spans"`) gets a number after the largest such pid
//! (or tid within its process), in sorted order. The values as written are kept in the
//! trace's threads and in each profile thread's metadata (`Chrome pid`, `Chrome tid`), with
//! the process and thread names.
//!
//! # Derived profile
//! See [`crate::trace_profile`]: per thread and event, calls, subcalls, inclusive time (union
//! of the event's intervals) and exclusive time (minus the direct children), flat and per
//! callpath. Threads without intervals or samples are in the trace but not in the profile.

use crate::compression::maybe_gunzip;
use crate::problem::{Parsed, Problem, nothing_loaded, read_bytes};
use crate::stacks::{FrameTable, StackTree};
use crate::trace_profile::emit_lane;
use crate::{LoadError, LoadOptions, Loaded};
use perfscape_model::trace::InstantScope;
use perfscape_model::{Metric, ProfileBuilder, ThreadData, ThreadId, Trace, TraceBuilder, TraceThread, Unit};
use rustc_hash::FxHashMap as HashMap;
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::Path;

/// A Chrome trace read into the trace model and the derived profile.
#[derive(Debug)]
pub struct ParsedTrace {
    /// The trace: intervals per thread, instants, counters, async spans, flows.
    pub trace: Trace,
    /// The profile derived from the intervals (and samples), with warnings and notes.
    pub parsed: Parsed,
}

/// True when `head` (the first bytes of a decompressed file) looks like a Chrome trace: a JSON
/// object with a `traceEvents` key (or a Kineto header), or a JSON array whose first element
/// has a `ph` key.
pub fn looks_like_chrome_trace(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(head);
    let t = text.trim_start_matches(['\u{feff}', ' ', '\t', '\r', '\n']);
    if t.starts_with('{') {
        return t.contains("\"traceEvents\"")
            || (t.contains("\"schemaVersion\"") && t.contains("\"deviceProperties\""));
    }
    if let Some(rest) = t.strip_prefix('[') {
        let rest = rest.trim_start();
        if rest.is_empty() || rest.starts_with(']') {
            return true;
        }
        if rest.starts_with('{') {
            let head: String = rest.chars().take(4096).collect();
            return head.contains("\"ph\"");
        }
    }
    false
}

// ------------------------------------------------------------------ JSON structure

#[derive(Default)]
struct Top<'a> {
    array_form: bool,
    events: Vec<&'a RawValue>,
    display_time_unit: Option<String>,
    samples: Option<&'a RawValue>,
    stack_frames: Option<&'a RawValue>,
    other: Vec<(String, String)>,
}

struct TopSeed<'t, 'a>(&'t mut Top<'a>);

impl<'de, 't> DeserializeSeed<'de> for TopSeed<'t, 'de> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, 't> Visitor<'de> for TopSeed<'t, 'de> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON array of trace events or an object with a `traceEvents` array")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<(), A::Error> {
        self.0.array_form = true;
        EventsSeed(&mut self.0.events).visit_seq(seq)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "traceEvents" => map.next_value_seed(EventsSeed(&mut self.0.events))?,
                "displayTimeUnit" => {
                    let v: &RawValue = map.next_value()?;
                    self.0.display_time_unit = Some(text_of(v).into_owned());
                }
                "samples" => self.0.samples = Some(map.next_value()?),
                "stackFrames" => self.0.stack_frames = Some(map.next_value()?),
                _ => {
                    let v: &RawValue = map.next_value()?;
                    let s = v.get();
                    if !s.starts_with('{') && !s.starts_with('[') && s.len() <= 200 {
                        self.0.other.push((key, text_of(v).into_owned()));
                    }
                }
            }
        }
        Ok(())
    }
}

struct EventsSeed<'t, 'a>(&'t mut Vec<&'a RawValue>);

impl<'de, 't> DeserializeSeed<'de> for EventsSeed<'t, 'de> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, 't> Visitor<'de> for EventsSeed<'t, 'de> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an array of trace events")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(v) = seq.next_element::<&'de RawValue>()? {
            self.0.push(v);
        }
        Ok(())
    }
}

/// One event's fields, borrowed from the text; values are kept raw and converted leniently.
#[derive(serde::Deserialize)]
struct RawEvent<'a> {
    #[serde(borrow, default)]
    name: Option<&'a RawValue>,
    #[serde(borrow, default)]
    cat: Option<&'a RawValue>,
    #[serde(borrow, default)]
    ph: Option<&'a RawValue>,
    #[serde(borrow, default)]
    ts: Option<&'a RawValue>,
    #[serde(borrow, default)]
    dur: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pid: Option<&'a RawValue>,
    #[serde(borrow, default)]
    tid: Option<&'a RawValue>,
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    id2: Option<&'a RawValue>,
    #[serde(borrow, default)]
    scope: Option<&'a RawValue>,
    #[serde(borrow, default)]
    s: Option<&'a RawValue>,
    #[serde(borrow, default)]
    args: Option<&'a RawValue>,
}

/// The text of a JSON scalar: a string unescaped, anything else as written (`null` gives "").
fn text_of(v: &RawValue) -> Cow<'_, str> {
    let s = v.get().trim();
    if s.starts_with('"') {
        if let Ok(b) = serde_json::from_str::<&str>(s) {
            return Cow::Borrowed(b);
        }
        if let Ok(o) = serde_json::from_str::<String>(s) {
            return Cow::Owned(o);
        }
    }
    if s == "null" {
        return Cow::Borrowed("");
    }
    Cow::Borrowed(s)
}

/// A microsecond value (JSON number or numeric string) as integer nanoseconds, exactly
/// (rounded half away from zero below a nanosecond). `Ok(None)` for `null` or "".
pub fn parse_us_as_ns(text: &str) -> Result<Option<i64>, String> {
    let t = text.trim().trim_matches('"').trim();
    if t.is_empty() || t == "null" {
        return Ok(None);
    }
    let (neg, body) = match t.as_bytes()[0] {
        b'-' => (true, &t[1..]),
        b'+' => (false, &t[1..]),
        _ => (false, t),
    };
    let (mantissa, exp) = match body.find(['e', 'E']) {
        Some(i) => (
            &body[..i],
            body[i + 1..]
                .parse::<i32>()
                .map_err(|_| format!("`{t}` is not a number"))?,
        ),
        None => (body, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if (int.is_empty() && frac.is_empty())
        || !int.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
    {
        return Err(format!("`{t}` is not a number"));
    }
    let digits: String = format!("{int}{frac}").trim_start_matches('0').to_string();
    // value = digits * 10^(exp - frac.len()) microseconds = digits * 10^(shift) ns
    let shift = i64::from(exp) - frac.len() as i64 + 3;
    if digits.is_empty() {
        return Ok(Some(0));
    }
    let out_of_range = || format!("`{t}` µs is outside the range of 64-bit nanoseconds");
    let ns: i128 = if shift >= 0 {
        if digits.len() as i64 + shift > 20 {
            return Err(out_of_range());
        }
        let m: i128 = digits.parse().map_err(|_| out_of_range())?;
        m * 10i128.pow(u32::try_from(shift).map_err(|_| out_of_range())?)
    } else {
        let cut = -shift;
        let keep = digits.len() as i64 - cut; // digits left of the nanosecond point
        if keep > 20 {
            return Err(out_of_range());
        }
        if keep < 0 {
            0
        } else {
            let (whole, rest) = digits.split_at(keep as usize);
            let w: i128 = if whole.is_empty() {
                0
            } else {
                whole.parse().map_err(|_| out_of_range())?
            };
            if rest.as_bytes().first().is_some_and(|&b| b >= b'5') {
                w + 1
            } else {
                w
            }
        }
    };
    let ns = if neg { -ns } else { ns };
    i64::try_from(ns).map(Some).map_err(|_| out_of_range())
}

/// A pid or tid value.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Key {
    Num(i64),
    Str(String),
}

impl Key {
    fn of(v: Option<&RawValue>) -> Key {
        let Some(v) = v else {
            return Key::Str(String::new());
        };
        let t = text_of(v);
        match t.trim().parse::<i64>() {
            Ok(n) => Key::Num(n),
            Err(_) => match t.trim().parse::<f64>() {
                Ok(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Key::Num(f as i64),
                _ => Key::Str(t.into_owned()),
            },
        }
    }

    fn fits(&self) -> Option<u32> {
        match self {
            Key::Num(n) => u32::try_from(*n).ok(),
            Key::Str(_) => None,
        }
    }
}

impl std::fmt::Display for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Key::Num(n) => write!(f, "{n}"),
            Key::Str(s) => write!(f, "{s}"),
        }
    }
}

/// Numbers for keys: those that fit `u32` keep their value, the others follow the largest.
fn number_keys<'k>(keys: impl Iterator<Item = &'k Key>) -> BTreeMap<Key, u32> {
    let distinct: BTreeSet<&Key> = keys.collect();
    let mut next = distinct
        .iter()
        .filter_map(|k| k.fits())
        .max()
        .map_or(0, |m| m.saturating_add(1));
    let mut out = BTreeMap::new();
    for k in distinct {
        let n = match k.fits() {
            Some(n) => n,
            None => {
                let n = next;
                next = next.saturating_add(1);
                n
            }
        };
        out.insert(k.clone(), n);
    }
    out
}

/// An open span or flow point: (thread handle, time ns, name id, category id).
type OpenPoint = (u32, i64, u32, u32);

/// One event, converted.
struct Ev<'a> {
    seq: u64,
    ph: u8,
    name: Cow<'a, str>,
    cat: Cow<'a, str>,
    ts: Option<i64>,
    dur: Option<i64>,
    pid: Key,
    tid: Key,
    id: Option<String>,
    scope: Cow<'a, str>,
    instant_scope: Cow<'a, str>,
    args: Option<&'a RawValue>,
    line: usize,
}

/// Byte offset of `inner` (a slice of `text`) in `text`.
fn offset_in(text: &str, inner: &str) -> usize {
    (inner.as_ptr() as usize).saturating_sub(text.as_ptr() as usize)
}

/// Counts problems of one kind, keeping the first example.
#[derive(Default)]
struct Tally {
    count: usize,
    first: Option<(usize, String)>,
}

impl Tally {
    fn add(&mut self, line: usize, msg: impl FnOnce() -> String) {
        self.count += 1;
        if self.first.is_none() {
            self.first = Some((line, msg()));
        }
    }

    fn report(&self, what: &str, out: &mut Vec<Problem>) {
        if let Some((line, msg)) = &self.first {
            let text = if self.count > 1 {
                format!("{msg} ({} {what} in all)", self.count)
            } else {
                msg.clone()
            };
            out.push(Problem::at_line(*line, text));
        }
    }
}

fn line_at(line_starts: &[usize], offset: usize) -> usize {
    line_starts.partition_point(|&s| s <= offset)
}

/// Parses a Chrome trace (JSON, plain or gzip) into the trace model and a derived profile.
/// Errors when the input is not a trace at all; damage after the first events (truncation,
/// a malformed event) loads what is valid, reported in [`Parsed::partial`].
pub fn parse_trace(bytes: &[u8]) -> Result<ParsedTrace, Problem> {
    let (data, gz) = maybe_gunzip(bytes);
    let mut partial: Vec<Problem> = Vec::new();
    let mut warnings: Vec<Problem> = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    if let Some(m) = gz {
        partial.push(Problem::whole(m));
    }
    let text = match std::str::from_utf8(&data) {
        Ok(t) => t,
        Err(e) => {
            let valid = e.valid_up_to();
            partial.push(Problem::at_offset(
                valid as u64,
                "invalid UTF-8: the JSON text was read up to this byte",
            ));
            // Safe: `valid_up_to` bytes are valid UTF-8.
            std::str::from_utf8(&data[..valid]).unwrap_or("")
        }
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim().is_empty() {
        return Err(Problem::whole(
            "the file is empty: expected a Chrome trace (a JSON array of events or an object with `traceEvents`)",
        ));
    }
    let line_starts: Vec<usize> = std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    let mut top = Top::default();
    let mut de = serde_json::Deserializer::from_str(text);
    let result = TopSeed(&mut top).deserialize(&mut de).and_then(|()| de.end());
    if let Err(e) = result {
        let remainder_ok = top.array_form
            && e.classify() == serde_json::error::Category::Eof
            && top.events.last().is_some_and(|last| {
                let end = offset_in(text, last.get()) + last.get().len();
                text.get(end..)
                    .is_some_and(|r| r.trim_matches(|c: char| c.is_whitespace() || c == ',').is_empty())
            });
        if remainder_ok {
            notes.push(
                "the JSON array is not closed with `]` (the trace event format allows this)".to_string(),
            );
        } else if top.events.is_empty() && top.samples.is_none() {
            return Err(Problem::at_line(
                e.line(),
                format!(
                    "not a Chrome trace: {e}; expected a JSON array of events or an object with a `traceEvents` array"
                ),
            ));
        } else {
            partial.push(Problem::at_line(
                e.line(),
                format!(
                    "the JSON is broken or truncated here ({e}); the {} events before this point were read",
                    top.events.len()
                ),
            ));
        }
    }
    if !top.array_form && top.events.is_empty() && top.samples.is_none() && top.stack_frames.is_none() {
        let has_key = text.contains("\"traceEvents\"");
        if !has_key {
            return Err(Problem::whole(
                "not a Chrome trace: the JSON object has no `traceEvents` array",
            ));
        }
    }
    // ---------------------------------------------------------------- convert events
    let mut bad_event = Tally::default();
    let mut bad_ts = Tally::default();
    let mut evs: Vec<Ev<'_>> = Vec::with_capacity(top.events.len());
    for (seq, raw) in top.events.iter().enumerate() {
        let line = line_at(&line_starts, offset_in(text, raw.get()));
        let r: RawEvent<'_> = match serde_json::from_str(raw.get()) {
            Ok(r) => r,
            Err(e) => {
                bad_event.add(line, || {
                    if raw.get().trim_start().starts_with('{') {
                        format!("event {seq} is not a trace event ({e}); skipped")
                    } else {
                        let shown: String = raw.get().chars().take(40).collect();
                        format!("event {seq} is not a JSON object (it is `{shown}`); skipped")
                    }
                });
                continue;
            }
        };
        let ph = r.ph.map(text_of).unwrap_or_default();
        let Some(&phb) = ph.as_bytes().first() else {
            bad_event.add(line, || format!("event {seq} has no `ph` (phase); skipped"));
            continue;
        };
        let ts = match r.ts.map(|v| parse_us_as_ns(v.get())).transpose() {
            Ok(t) => t.flatten(),
            Err(msg) => {
                bad_ts.add(line, || format!("event {seq}: `ts` {msg}; skipped"));
                continue;
            }
        };
        let dur = match r.dur.map(|v| parse_us_as_ns(v.get())).transpose() {
            Ok(t) => t.flatten(),
            Err(msg) => {
                bad_ts.add(line, || format!("event {seq}: `dur` {msg}; skipped"));
                continue;
            }
        };
        let id = match (r.id2, r.id) {
            (Some(id2), _) => Some(id2_key(id2)),
            (None, Some(id)) => Some(text_of(id).into_owned()),
            (None, None) => None,
        };
        evs.push(Ev {
            seq: seq as u64,
            ph: phb,
            name: r.name.map(text_of).unwrap_or_default(),
            cat: r.cat.map(text_of).unwrap_or_default(),
            ts,
            dur,
            pid: Key::of(r.pid),
            tid: Key::of(r.tid),
            id,
            scope: r.scope.map(text_of).unwrap_or_default(),
            instant_scope: r.s.map(text_of).unwrap_or_default(),
            args: r.args,
            line,
        });
    }
    let mut malformed = Vec::new();
    bad_event.report("malformed events", &mut malformed);
    bad_ts.report("events with bad timestamps", &mut malformed);
    partial.extend(malformed);
    if evs.is_empty() && top.samples.is_none() && !top.events.is_empty() {
        return Err(Problem::whole(format!(
            "none of the {} events is a valid trace event: {}",
            top.events.len(),
            partial
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; ")
        )));
    }
    // ---------------------------------------------------------------- samples
    let samples = match top.samples {
        Some(s) => read_samples(s, top.stack_frames, &mut warnings),
        None => Vec::new(),
    };
    // ---------------------------------------------------------------- threads
    let metadata_phase = |e: &Ev<'_>| e.ph == b'M';
    let process_scoped = |e: &Ev<'_>| matches!(e.ph, b'C' | b'M');
    let mut thread_keys: BTreeSet<(Key, Key)> = evs
        .iter()
        .filter(|e| !process_scoped(e))
        .map(|e| (e.pid.clone(), e.tid.clone()))
        .collect();
    // Samples without a pid take the process of the trace thread with that tid, if unique.
    let mut tid_to_pids: HashMap<Key, Vec<Key>> = HashMap::default();
    for (p, t) in &thread_keys {
        tid_to_pids.entry(t.clone()).or_default().push(p.clone());
    }
    let mut unplaced_samples = 0usize;
    let sample_keys: Vec<(Key, Key)> = samples
        .iter()
        .map(|s| match &s.pid {
            Some(p) => (p.clone(), s.tid.clone()),
            None => match tid_to_pids.get(&s.tid).map(Vec::as_slice) {
                Some([p]) => (p.clone(), s.tid.clone()),
                _ => {
                    unplaced_samples += 1;
                    (Key::Str("(samples)".into()), s.tid.clone())
                }
            },
        })
        .collect();
    thread_keys.extend(sample_keys.iter().cloned());
    if unplaced_samples > 0 {
        notes.push(format!(
            "{unplaced_samples} samples name a thread (tid) but no process, and no trace event has that tid in exactly one process: they are listed under process `(samples)`"
        ));
    }
    let all_pids: Vec<Key> = evs
        .iter()
        .map(|e| e.pid.clone())
        .chain(thread_keys.iter().map(|(p, _)| p.clone()))
        .collect();
    let node_of = number_keys(all_pids.iter());
    let mut tids_per_pid: BTreeMap<&Key, Vec<&Key>> = BTreeMap::new();
    for (p, t) in &thread_keys {
        tids_per_pid.entry(p).or_default().push(t);
    }
    let mut thread_of: HashMap<(Key, Key), ThreadId> = HashMap::default();
    let mut renumbered = 0usize;
    for (p, tids) in &tids_per_pid {
        let numbers = number_keys(tids.iter().copied());
        let node = node_of.get(*p).copied().unwrap_or(0);
        if p.fits().is_none() {
            renumbered += 1;
        }
        for (t, n) in numbers {
            if t.fits().is_none() {
                renumbered += 1;
            }
            thread_of.insert(((*p).clone(), t), ThreadId::new(node, 0, n));
        }
    }
    if renumbered > 0 {
        notes.push(format!(
            "{renumbered} pid/tid values are not integers fitting 32 bits (e.g. names or negative numbers) and were numbered after the largest one; the values as written are in the threads' metadata (`Chrome pid`, `Chrome tid`)"
        ));
    }
    // Names from metadata events.
    let mut process_names: HashMap<Key, String> = HashMap::default();
    let mut thread_names: HashMap<(Key, Key), String> = HashMap::default();
    let mut process_labels: HashMap<Key, String> = HashMap::default();
    let mut other_metadata = 0usize;
    for e in evs.iter().filter(|e| metadata_phase(e)) {
        let arg = |k: &str| -> Option<String> {
            let args: HashMap<String, &RawValue> = e.args.and_then(|a| serde_json::from_str(a.get()).ok())?;
            args.get(k).map(|v| text_of(v).into_owned())
        };
        match e.name.as_ref() {
            "process_name" => {
                if let Some(n) = arg("name") {
                    process_names.insert(e.pid.clone(), n);
                }
            }
            "thread_name" => {
                if let Some(n) = arg("name") {
                    thread_names.insert((e.pid.clone(), e.tid.clone()), n);
                }
            }
            "process_labels" => {
                if let Some(n) = arg("labels") {
                    process_labels.insert(e.pid.clone(), n);
                }
            }
            "process_sort_index" | "thread_sort_index" => {}
            _ => other_metadata += 1,
        }
    }
    if other_metadata > 0 {
        notes.push(format!(
            "{other_metadata} metadata (`M`) events other than process/thread names, labels and sort indices were not used"
        ));
    }
    let mut tb = TraceBuilder::new();
    let mut handle: HashMap<(Key, Key), u32> = HashMap::default();
    for key in &thread_keys {
        let Some(&id) = thread_of.get(key) else { continue };
        let pname = match (process_names.get(&key.0), process_labels.get(&key.0)) {
            (Some(n), Some(l)) => Some(format!("{n} ({l})")),
            (Some(n), None) => Some(n.clone()),
            (None, Some(l)) => Some(l.clone()),
            (None, None) => None,
        };
        let h = tb.thread(TraceThread {
            id,
            process: key.0.to_string(),
            thread: key.1.to_string(),
            process_name: pname,
            thread_name: thread_names.get(key).cloned(),
        });
        handle.insert(key.clone(), h);
    }
    // ---------------------------------------------------------------- phases
    let mut last_ts: HashMap<u32, i64> = HashMap::default();
    let mut see = |h: u32, t: i64| {
        let e = last_ts.entry(h).or_insert(t);
        *e = (*e).max(t);
    };
    for e in &evs {
        if process_scoped(e) {
            continue;
        }
        if let (Some(&h), Some(ts)) = (handle.get(&(e.pid.clone(), e.tid.clone())), e.ts) {
            see(h, ts.saturating_add(e.dur.unwrap_or(0).max(0)));
        }
    }
    let mut missing_ts = Tally::default();
    let mut x_no_dur = Tally::default();
    let mut x_negative = Tally::default();
    let mut e_unmatched = Tally::default();
    let mut e_name_mismatch = Tally::default();
    let mut async_unmatched = Tally::default();
    let mut flow_unmatched = Tally::default();
    let mut counter_bad = Tally::default();
    let mut ignored_phases: BTreeMap<char, usize> = BTreeMap::new();
    let mut be: BTreeMap<u32, Vec<&Ev<'_>>> = BTreeMap::new();
    let mut async_open: HashMap<(Option<Key>, String, String), Vec<OpenPoint>> = HashMap::default();
    let mut legacy_open: HashMap<(Key, String, String), OpenPoint> = HashMap::default();
    let mut flows_open: HashMap<(String, String, String), VecDeque<OpenPoint>> = HashMap::default();
    let mut counters = 0usize;
    let mut ordered: Vec<&Ev<'_>> = Vec::new();
    for e in &evs {
        let key = (e.pid.clone(), e.tid.clone());
        let h = handle.get(&key).copied();
        let needs_ts = !matches!(e.ph, b'M');
        if needs_ts && e.ts.is_none() {
            missing_ts.add(e.line, || {
                format!(
                    "event {} (`{}`, phase {}) has no `ts`; skipped",
                    e.seq, e.name, e.ph as char
                )
            });
            continue;
        }
        let ts = e.ts.unwrap_or(0);
        match e.ph {
            b'B' | b'E' => {
                if let Some(h) = h {
                    be.entry(h).or_default().push(e);
                }
            }
            b'X' => {
                let Some(h) = h else { continue };
                let dur = match e.dur {
                    Some(d) if d < 0 => {
                        x_negative.add(e.line, || {
                            format!("complete event `{}` has a negative `dur`; read as 0", e.name)
                        });
                        0
                    }
                    Some(d) => d,
                    None => {
                        x_no_dur.add(e.line, || {
                            format!("complete event `{}` has no `dur`; read as 0", e.name)
                        });
                        0
                    }
                };
                let name = tb.name(&e.name);
                let cat = tb.category(&e.cat);
                tb.add_interval(h, ts, ts.saturating_add(dur), name, cat, e.seq, e.seq);
            }
            b'i' | b'I' => {
                let Some(h) = h else { continue };
                let scope = match e.instant_scope.as_ref() {
                    "g" => InstantScope::Global,
                    "p" => InstantScope::Process,
                    _ => InstantScope::Thread,
                };
                let name = tb.name(&e.name);
                let cat = tb.category(&e.cat);
                tb.add_instant(h, ts, name, cat, scope);
            }
            b'n' | b'T' | b'p' => {
                let Some(h) = h else { continue };
                let name = tb.name(&e.name);
                let cat = tb.category(&e.cat);
                tb.add_instant(h, ts, name, cat, InstantScope::Async);
            }
            b'b' | b'e' | b'S' | b'F' | b's' | b't' | b'f' => ordered.push(e),
            b'C' => {
                let node = node_of.get(&e.pid).copied().unwrap_or(0);
                let name = match &e.id {
                    Some(id) => format!("{}[{id}]", e.name),
                    None => e.name.to_string(),
                };
                let args: Option<BTreeMap<String, &RawValue>> =
                    e.args.and_then(|a| serde_json::from_str(a.get()).ok());
                let Some(args) = args else {
                    counter_bad.add(e.line, || {
                        format!("counter `{name}` has no `args` object; skipped")
                    });
                    continue;
                };
                for (series, v) in args {
                    match text_of(v).trim().parse::<f64>() {
                        Ok(x) if x.is_finite() => {
                            tb.add_counter_value(node, &name, &series, ts, x);
                            counters += 1;
                        }
                        _ => counter_bad.add(e.line, || {
                            format!(
                                "counter `{name}` series `{series}` has the non-numeric value {}; skipped",
                                v.get()
                            )
                        }),
                    }
                }
            }
            b'M' => {}
            other => *ignored_phases.entry(other as char).or_default() += 1,
        }
    }
    // Async spans and flows are matched in time order (file order at equal times): producers
    // such as Kineto write them grouped by kind, not by time.
    ordered.sort_by_key(|e| e.ts.unwrap_or(0));
    for e in ordered {
        let h = handle.get(&(e.pid.clone(), e.tid.clone())).copied();
        let ts = e.ts.unwrap_or(0);
        match e.ph {
            b'b' | b'e' => {
                let Some(h) = h else { continue };
                let id = e.id.clone().unwrap_or_default();
                let process = if id.starts_with("global:") {
                    None
                } else {
                    Some(e.pid.clone())
                };
                let k = (process, e.cat.to_string(), id.clone());
                let name = tb.name(&e.name);
                let cat = tb.category(&e.cat);
                if e.ph == b'b' {
                    async_open.entry(k).or_default().push((h, ts, name, cat));
                } else {
                    let open = async_open.entry(k).or_default();
                    // An end names the span it ends; an end without a name ends the innermost.
                    let pos = if e.name.is_empty() {
                        open.len().checked_sub(1)
                    } else {
                        open.iter().rposition(|o| o.2 == name)
                    };
                    match pos {
                        Some(p) => {
                            let (bh, bts, bname, bcat) = open.remove(p);
                            tb.add_async_span(bh, bts, ts, bname, bcat, &id);
                        }
                        None => async_unmatched.add(e.line, || {
                            format!("async end `{}` (id {id}) has no matching begin; skipped", e.name)
                        }),
                    }
                }
            }
            b'S' | b'F' => {
                let Some(h) = h else { continue };
                let id = e.id.clone().unwrap_or_default();
                let k = (e.pid.clone(), e.cat.to_string(), id.clone());
                let name = tb.name(&e.name);
                let cat = tb.category(&e.cat);
                if e.ph == b'S' {
                    legacy_open.insert(k, (h, ts, name, cat));
                } else {
                    match legacy_open.remove(&k) {
                        Some((bh, bts, bname, bcat)) => tb.add_async_span(bh, bts, ts, bname, bcat, &id),
                        None => async_unmatched.add(e.line, || {
                            format!(
                                "async finish `{}` (id {id}) has no matching start; skipped",
                                e.name
                            )
                        }),
                    }
                }
            }
            b's' | b't' | b'f' => {
                let Some(h) = h else { continue };
                let id = e.id.clone().unwrap_or_default();
                let k = (e.cat.to_string(), id.clone(), e.scope.to_string());
                let name = tb.name(&e.name);
                let cat = tb.category(&e.cat);
                let queue = flows_open.entry(k).or_default();
                match e.ph {
                    b's' => queue.push_back((h, ts, name, cat)),
                    b't' => match queue.front_mut() {
                        Some(f) => {
                            tb.add_flow(f.0, f.1, h, ts, f.2, f.3, &id);
                            f.0 = h;
                            f.1 = ts;
                        }
                        None => flow_unmatched.add(e.line, || {
                            format!("flow step `{}` (id {id}) has no flow start; skipped", e.name)
                        }),
                    },
                    _ => match queue.pop_front() {
                        Some(f) => tb.add_flow(f.0, f.1, h, ts, f.2, f.3, &id),
                        None => flow_unmatched.add(e.line, || {
                            format!("flow end `{}` (id {id}) has no flow start; skipped", e.name)
                        }),
                    },
                }
            }
            _ => {}
        }
    }
    // B/E per thread in time order (file order at equal times).
    let mut unclosed = 0usize;
    let mut unclosed_threads = 0usize;
    for (h, mut list) in be {
        list.sort_by_key(|e| e.ts.unwrap_or(0));
        let mut stack: Vec<&Ev<'_>> = Vec::new();
        for e in list {
            if e.ph == b'B' {
                stack.push(e);
                continue;
            }
            match stack.pop() {
                Some(b) => {
                    if !e.name.is_empty() && e.name != b.name {
                        e_name_mismatch.add(e.line, || {
                            format!(
                                "end event `{}` closes the open begin event `{}` (line {}); the names differ",
                                e.name, b.name, b.line
                            )
                        });
                    }
                    let name = tb.name(&b.name);
                    let cat = tb.category(&b.cat);
                    tb.add_interval(h, b.ts.unwrap_or(0), e.ts.unwrap_or(0), name, cat, b.seq, e.seq);
                }
                None => e_unmatched.add(e.line, || {
                    format!(
                        "end event `{}` has no open begin event on its thread; skipped",
                        e.name
                    )
                }),
            }
        }
        if !stack.is_empty() {
            unclosed += stack.len();
            unclosed_threads += 1;
            let end = last_ts.get(&h).copied().unwrap_or(0);
            for b in stack.into_iter().rev() {
                let name = tb.name(&b.name);
                let cat = tb.category(&b.cat);
                tb.add_interval(h, b.ts.unwrap_or(0), end, name, cat, b.seq, u64::MAX);
            }
        }
    }
    if unclosed > 0 {
        warnings.push(Problem::whole(format!(
            "{unclosed} begin (`B`) event(s) on {unclosed_threads} thread(s) were never ended; each was closed at the last timestamp of its thread"
        )));
    }
    let open_async: usize = async_open.values().map(Vec::len).sum::<usize>() + legacy_open.len();
    if open_async > 0 {
        warnings.push(Problem::whole(format!(
            "{open_async} async span(s) were begun but never ended; they are left out of the async spans"
        )));
    }
    let open_flows: usize = flows_open.values().map(VecDeque::len).sum();
    if open_flows > 0 {
        warnings.push(Problem::whole(format!(
            "{open_flows} flow(s) were started but never finished; they are left out of the flows"
        )));
    }
    missing_ts.report("events without `ts`", &mut partial);
    x_no_dur.report("complete events without `dur`", &mut warnings);
    x_negative.report("complete events with a negative `dur`", &mut warnings);
    e_unmatched.report("unmatched end events", &mut warnings);
    e_name_mismatch.report("end events with another name", &mut warnings);
    async_unmatched.report("unmatched async events", &mut warnings);
    flow_unmatched.report("unmatched flow events", &mut warnings);
    counter_bad.report("bad counter values", &mut warnings);
    if !ignored_phases.is_empty() {
        notes.push(format!(
            "events of phases not used by perfscape were left out: {}",
            ignored_phases
                .iter()
                .map(|(p, n)| format!("{n} × `{p}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if let Some(u) = &top.display_time_unit {
        tb.push_metadata("displayTimeUnit", u);
        notes.push(format!(
            "displayTimeUnit is `{u}`: it only sets how viewers display times; `ts`/`dur` are microseconds as the format defines"
        ));
    }
    for (k, v) in &top.other {
        tb.push_metadata(k, v);
    }
    let (trace, trace_notes) = tb.finish();
    for n in trace_notes {
        warnings.push(Problem::whole(format!("thread {}: {}", n.thread, n.message)));
    }
    // ---------------------------------------------------------------- profile
    let has_weight = samples.iter().any(|s| s.weight.is_some());
    let mut metrics = vec![Metric {
        name: "TIME".into(),
        unit: Unit::Microseconds,
    }];
    if !samples.is_empty() {
        metrics.push(Metric {
            name: "samples".into(),
            unit: Unit::Count,
        });
        if has_weight {
            metrics.push(Metric {
                name: "sample weight".into(),
                unit: Unit::Count,
            });
        }
    }
    let n_metrics = metrics.len();
    let mut frames = FrameTable::default();
    let mut trees: BTreeMap<ThreadId, StackTree> = BTreeMap::new();
    let mut cut_samples = 0u64;
    for (s, key) in samples.iter().zip(&sample_keys) {
        let Some(&id) = thread_of.get(key) else { continue };
        let tree = trees.entry(id).or_insert_with(|| StackTree::new(n_metrics));
        let stack: Vec<u32> = s
            .frames
            .iter()
            .rev()
            .map(|(name, cat)| frames.intern(name, cat))
            .collect();
        let stack = if stack.is_empty() {
            vec![frames.intern("(no stack)", "")]
        } else {
            stack
        };
        let mut values = vec![0.0; n_metrics];
        values[1] = 1.0;
        if has_weight {
            values[2] = s.weight.unwrap_or(1.0);
        }
        let cut = frames.intern(crate::stacks::CUT_FRAME, "");
        if tree.add_sample(&stack, &values, cut) {
            cut_samples += 1;
        }
    }
    let mut builder = ProfileBuilder::new(metrics);
    for (t, th) in trace.threads().iter().enumerate() {
        let lane = trace.lane(t);
        let tree = trees.get(&th.id);
        if lane.is_empty() && tree.is_none() {
            continue;
        }
        let mut data = ThreadData::new(n_metrics);
        emit_lane(&trace, lane, &mut data, 0, &mut frames);
        if let Some(tree) = tree {
            tree.emit(&frames, &mut data, "TAU_SAMPLE");
        }
        data.push_metadata("Source format", "Chrome Trace Event Format");
        data.push_metadata("Chrome pid", &th.process);
        data.push_metadata("Chrome tid", &th.thread);
        if let Some(n) = &th.process_name {
            data.push_metadata("Chrome process name", n);
        }
        if let Some(n) = &th.thread_name {
            data.push_metadata("Chrome thread name", n);
        }
        for (k, v) in trace.metadata() {
            data.push_metadata(k, v);
        }
        builder
            .add_thread(th.id, data)
            .map_err(|e| Problem::whole(format!("internal error: {e}")))?;
    }
    if cut_samples > 0 {
        warnings.push(Problem::whole(format!(
            "{cut_samples} sample(s) have stacks deeper than {} frames: their middle frames were replaced by `{}`",
            crate::stacks::MAX_DEPTH,
            crate::stacks::CUT_FRAME
        )));
    }
    if builder.thread_count() == 0 {
        notes.push("the trace has no intervals or samples, so the profile has no threads".into());
    }
    if frames.rewritten_separators > 0 {
        notes.push(format!(
            "{} event name(s) contained `=>`, perfscape's callpath separator; it was written `= >`",
            frames.rewritten_separators
        ));
    }
    notes.push(format!(
        "trace: {} threads, {} intervals, {} instants, {} counter values, {} async spans, {} flows{}",
        trace.threads().len(),
        trace.interval_count(),
        trace.instants().len(),
        counters,
        trace.async_spans().len(),
        trace.flows().len(),
        if samples.is_empty() {
            String::new()
        } else {
            format!(", {} samples", samples.len())
        }
    ));
    let (profile, build_notes) = builder.finish();
    // With samples, a name can be both a trace interval and a sampled frame on one thread:
    // the builder then combines the two rows. Say so once instead of once per name.
    let (combined, other): (Vec<_>, Vec<_>) = build_notes
        .into_iter()
        .partition(|n| !samples.is_empty() && n.message.contains("is listed more than once"));
    if let Some(first) = combined.first() {
        let threads: BTreeSet<ThreadId> = combined.iter().map(|n| n.thread).collect();
        let example = first.message.split('`').nth(1).unwrap_or_default().to_string();
        notes.push(format!(
            "{} event name(s) on {} thread(s) are both trace intervals and sampled stack frames (e.g. `{example}`); their rows were combined: TIME comes from the intervals, the sample metrics from the sampled stacks, and calls add up both",
            combined.len(),
            threads.len()
        ));
    }
    warnings.extend(
        other
            .into_iter()
            .map(|n| Problem::whole(format!("thread {}: {}", n.thread, n.message))),
    );
    Ok(ParsedTrace {
        trace,
        parsed: Parsed {
            profile,
            warnings,
            partial,
            notes,
        },
    })
}

/// The key of an `id2` object: `global:<id>` or `local:<id>`.
fn id2_key(v: &RawValue) -> String {
    let map: Option<HashMap<String, &RawValue>> = serde_json::from_str(v.get()).ok();
    match map {
        Some(m) => {
            if let Some(g) = m.get("global") {
                format!("global:{}", text_of(g))
            } else if let Some(l) = m.get("local") {
                format!("local:{}", text_of(l))
            } else {
                v.get().to_string()
            }
        }
        None => text_of(v).into_owned(),
    }
}

/// One sample of the object form's `samples` array, with its stack resolved (leaf first).
struct Sample {
    pid: Option<Key>,
    tid: Key,
    weight: Option<f64>,
    frames: Vec<(String, String)>,
}

#[derive(serde::Deserialize)]
struct RawSample<'a> {
    #[serde(borrow, default)]
    pid: Option<&'a RawValue>,
    #[serde(borrow, default)]
    tid: Option<&'a RawValue>,
    #[serde(borrow, default)]
    sf: Option<&'a RawValue>,
    #[serde(borrow, default)]
    weight: Option<&'a RawValue>,
}

#[derive(serde::Deserialize)]
struct RawFrame<'a> {
    #[serde(borrow, default)]
    name: Option<&'a RawValue>,
    #[serde(borrow, default)]
    category: Option<&'a RawValue>,
    #[serde(borrow, default)]
    parent: Option<&'a RawValue>,
}

fn read_samples(
    samples: &RawValue,
    stack_frames: Option<&RawValue>,
    warnings: &mut Vec<Problem>,
) -> Vec<Sample> {
    let list: Vec<RawSample<'_>> = match serde_json::from_str(samples.get()) {
        Ok(l) => l,
        Err(e) => {
            warnings.push(Problem::whole(format!(
                "`samples` is not an array of sample objects ({e}); samples were not read"
            )));
            return Vec::new();
        }
    };
    let frames: HashMap<String, RawFrame<'_>> = match stack_frames.map(|s| serde_json::from_str(s.get())) {
        Some(Ok(f)) => f,
        Some(Err(e)) => {
            warnings.push(Problem::whole(format!(
                "`stackFrames` is not an object of frames ({e}); samples have no stacks"
            )));
            HashMap::default()
        }
        None => HashMap::default(),
    };
    let mut missing = Tally::default();
    let mut out = Vec::with_capacity(list.len());
    for (i, s) in list.iter().enumerate() {
        let mut stack = Vec::new();
        let mut next = s.sf.map(|v| text_of(v).into_owned());
        let mut guard = 0;
        while let Some(id) = next.take() {
            if id.is_empty() {
                break;
            }
            guard += 1;
            if guard > 100_000 {
                missing.add(0, || {
                    format!("sample {i}: the stack frames form a cycle; the stack was cut")
                });
                break;
            }
            match frames.get(&id) {
                Some(f) => {
                    stack.push((
                        f.name.map(text_of).unwrap_or_default().into_owned(),
                        f.category.map(text_of).unwrap_or_default().into_owned(),
                    ));
                    next = f.parent.map(|p| text_of(p).into_owned());
                }
                None => {
                    missing.add(0, || format!("sample {i} refers to stack frame `{id}`, which `stackFrames` does not define; its stack is cut there"));
                    break;
                }
            }
        }
        out.push(Sample {
            pid: s.pid.map(|p| Key::of(Some(p))),
            tid: Key::of(s.tid),
            weight: s.weight.and_then(|w| text_of(w).trim().parse::<f64>().ok()),
            frames: stack,
        });
    }
    if let Some((_, msg)) = &missing.first {
        warnings.push(Problem::whole(if missing.count > 1 {
            format!("{msg} ({} samples with broken stacks in all)", missing.count)
        } else {
            msg.clone()
        }));
    }
    out
}

/// Parses a Chrome trace and returns the derived profile (see [`parse_trace`]).
pub fn parse_chrome(bytes: &[u8]) -> Result<Parsed, Problem> {
    parse_trace(bytes).map(|t| t.parsed)
}

/// Loads a Chrome trace file as a profile (see the module documentation).
pub fn read_chrome(path: &Path, opts: &LoadOptions<'_>) -> Result<Loaded, LoadError> {
    read_trace(path, opts).map(|(_, l)| l)
}

/// Loads a Chrome trace file as a [`Trace`] (for timeline views) and the derived profile with
/// the load report.
pub fn read_trace(path: &Path, opts: &LoadOptions<'_>) -> Result<(Trace, Loaded), LoadError> {
    if let Some(p) = opts.progress {
        p.start(1);
    }
    let bytes = read_bytes(path)?;
    let t = parse_trace(&bytes).map_err(|e| nothing_loaded(path, e))?;
    if let Some(p) = opts.progress {
        p.advance(1);
        p.finish();
    }
    Ok((t.trace, t.parsed.into_loaded(path, "chrome", bytes.len() as u64)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn microseconds_parse_exactly_to_nanoseconds() {
        assert_eq!(parse_us_as_ns("0"), Ok(Some(0)));
        assert_eq!(parse_us_as_ns("3.011"), Ok(Some(3011)));
        assert_eq!(parse_us_as_ns("\"807167.000000\""), Ok(Some(807_167_000)));
        assert_eq!(
            parse_us_as_ns("1712195495519695.8"),
            Ok(Some(1_712_195_495_519_695_800))
        );
        assert_eq!(parse_us_as_ns("63.813"), Ok(Some(63_813)));
        assert_eq!(parse_us_as_ns("0.0004"), Ok(Some(0)));
        assert_eq!(parse_us_as_ns("0.0005"), Ok(Some(1)));
        assert_eq!(parse_us_as_ns("-2.5"), Ok(Some(-2500)));
        assert_eq!(parse_us_as_ns("1.5e3"), Ok(Some(1_500_000)));
        assert_eq!(parse_us_as_ns("1E-3"), Ok(Some(1)));
        assert_eq!(parse_us_as_ns("null"), Ok(None));
        assert!(parse_us_as_ns("1e300").is_err());
        assert!(parse_us_as_ns("99999999999999999999").is_err());
        assert!(parse_us_as_ns("abc").is_err());
        assert!(parse_us_as_ns("1.2.3").is_err());
        assert!(parse_us_as_ns("-").is_err());
    }

    #[test]
    fn sniffs_both_forms() {
        assert!(looks_like_chrome_trace(b"[{\"name\":\"a\",\"ph\":\"B\"}"));
        assert!(looks_like_chrome_trace(b"{\"traceEvents\": []}"));
        assert!(looks_like_chrome_trace(b"[\n]"));
        assert!(!looks_like_chrome_trace(b"{\"data\": [], \"columns\": []}"));
        assert!(!looks_like_chrome_trace(b"[1, 2, 3]"));
    }
}
