//! The JSON layer of the Chrome reader: the top-level structure (array or object form, read
//! element by element so that what precedes damage is kept), each event's fields kept raw and
//! converted leniently (strings or numbers), exact microsecond timestamps, pid/tid keys.

use super::Report;
use crate::problem::Problem;
use rustc_hash::FxHashMap as HashMap;
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

/// The top-level structure of a trace file, without its events (which are handed to the
/// caller one by one as they are read).
#[derive(Default)]
pub(super) struct Top<'a> {
    /// The array form (`[ {...}, ... ]`).
    pub(super) array_form: bool,
    /// The number of elements of the event array(s) read.
    pub(super) events: u64,
    /// The byte offset just after the last element read.
    pub(super) last_end: Option<usize>,
    /// `displayTimeUnit`, if given.
    pub(super) display_time_unit: Option<String>,
    /// `samples`, if given.
    pub(super) samples: Option<&'a RawValue>,
    /// `stackFrames`, if given.
    pub(super) stack_frames: Option<&'a RawValue>,
    /// Other top-level keys with short scalar values (kept as metadata).
    pub(super) other: Vec<(String, String)>,
}

/// Reads the top level and hands every element of the event array to `each`, in order.
struct TopSeed<'t, 'a, F> {
    top: &'t mut Top<'a>,
    text: &'a str,
    each: F,
}

impl<'de, 't, F: FnMut(u64, &'de RawValue)> DeserializeSeed<'de> for TopSeed<'t, 'de, F> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, 't, F: FnMut(u64, &'de RawValue)> Visitor<'de> for TopSeed<'t, 'de, F> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON array of trace events or an object with a `traceEvents` array")
    }
    fn visit_seq<A: SeqAccess<'de>>(mut self, seq: A) -> Result<(), A::Error> {
        self.top.array_form = true;
        EventsSeed {
            top: self.top,
            text: self.text,
            each: &mut self.each,
        }
        .visit_seq(seq)
    }
    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "traceEvents" => map.next_value_seed(EventsSeed {
                    top: &mut *self.top,
                    text: self.text,
                    each: &mut self.each,
                })?,
                "displayTimeUnit" => {
                    let v: &RawValue = map.next_value()?;
                    self.top.display_time_unit = Some(text_of(v).into_owned());
                }
                "samples" => self.top.samples = Some(map.next_value()?),
                "stackFrames" => self.top.stack_frames = Some(map.next_value()?),
                _ => {
                    let v: &RawValue = map.next_value()?;
                    let s = v.get();
                    if !s.starts_with('{') && !s.starts_with('[') && s.len() <= 200 {
                        self.top.other.push((key, text_of(v).into_owned()));
                    }
                }
            }
        }
        Ok(())
    }
}

/// Reads an event array element by element, handing each to `each` as soon as it is read
/// (only one element is held at a time).
struct EventsSeed<'t, 'a, 'f, F> {
    top: &'t mut Top<'a>,
    text: &'a str,
    each: &'f mut F,
}

impl<'de, 't, 'f, F: FnMut(u64, &'de RawValue)> DeserializeSeed<'de> for EventsSeed<'t, 'de, 'f, F> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, 't, 'f, F: FnMut(u64, &'de RawValue)> Visitor<'de> for EventsSeed<'t, 'de, 'f, F> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an array of trace events")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(v) = seq.next_element::<&'de RawValue>()? {
            let seq_no = self.top.events;
            self.top.events += 1;
            self.top.last_end = Some(offset_in(self.text, v.get()) + v.get().len());
            (self.each)(seq_no, v);
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
pub(super) fn text_of(v: &RawValue) -> Cow<'_, str> {
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
pub(super) enum Key {
    Num(i64),
    Str(String),
}

impl Key {
    pub(super) fn of(v: Option<&RawValue>) -> Key {
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

    pub(super) fn fits(&self) -> Option<u32> {
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
pub(super) fn number_keys<'k>(keys: impl Iterator<Item = &'k Key>) -> BTreeMap<Key, u32> {
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

/// One event, converted; borrowed from the text and handed on as soon as it is read.
pub(super) struct Ev<'a> {
    /// Position in the event array.
    pub(super) seq: u64,
    /// The phase's first byte.
    pub(super) ph: u8,
    pub(super) name: Cow<'a, str>,
    pub(super) cat: Cow<'a, str>,
    pub(super) ts: Option<i64>,
    pub(super) dur: Option<i64>,
    /// `pid`, raw (see [`Key::of`]).
    pub(super) pid: Option<&'a RawValue>,
    /// `tid`, raw (see [`Key::of`]).
    pub(super) tid: Option<&'a RawValue>,
    /// `id2` (as [`id2_key`]) or else `id`.
    pub(super) id: Option<Cow<'a, str>>,
    pub(super) scope: Cow<'a, str>,
    pub(super) instant_scope: Cow<'a, str>,
    pub(super) args: Option<&'a RawValue>,
    /// Byte offset of the event in the text.
    pub(super) offset: usize,
}

/// Byte offset of `inner` (a slice of `text`) in `text`.
pub(super) fn offset_in(text: &str, inner: &str) -> usize {
    (inner.as_ptr() as usize).saturating_sub(text.as_ptr() as usize)
}

/// The 1-based line of byte `offset` of `text`.
pub(super) fn line_of(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    1 + text.as_bytes()[..end].iter().filter(|&&b| b == b'\n').count()
}

/// The byte offset of 1-based `line`, `column` of `text` (as serde_json counts them).
fn offset_of(text: &str, line: usize, column: usize) -> usize {
    let start = if line <= 1 {
        0
    } else {
        text.bytes()
            .enumerate()
            .filter(|&(_, b)| b == b'\n')
            .nth(line - 2)
            .map_or(text.len(), |(i, _)| i + 1)
    };
    (start + column.saturating_sub(1)).min(text.len())
}

/// Counts problems of one kind, keeping the first example.
#[derive(Default)]
pub(super) struct Tally {
    /// Problems counted.
    pub(super) count: usize,
    /// The first one: byte offset in the text and message.
    pub(super) first: Option<(usize, String)>,
}

impl Tally {
    pub(super) fn add(&mut self, offset: usize, msg: impl FnOnce() -> String) {
        self.count += 1;
        if self.first.is_none() {
            self.first = Some((offset, msg()));
        }
    }

    /// The first problem, at its line of `text`, with the count of its kind.
    pub(super) fn report(&self, what: &str, text: &str, out: &mut Vec<Problem>) {
        if let Some((offset, msg)) = &self.first {
            let text_msg = if self.count > 1 {
                format!("{msg} ({} {what} in all)", self.count)
            } else {
                msg.clone()
            };
            out.push(Problem::at_line(line_of(text, *offset), text_msg));
        }
    }
}

/// The key of an `id2` object: `global:<id>` or `local:<id>`.
pub(super) fn id2_key(v: &RawValue) -> String {
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

/// Problems met while converting events.
#[derive(Default)]
struct Bad {
    event: Tally,
    ts: Tally,
}

/// Converts one element of the event array; `None` (counted in `bad`) when it is not a
/// usable event.
fn convert<'a>(text: &'a str, seq: u64, raw: &'a RawValue, bad: &mut Bad) -> Option<Ev<'a>> {
    let offset = offset_in(text, raw.get());
    let r: RawEvent<'_> = match serde_json::from_str(raw.get()) {
        Ok(r) => r,
        Err(e) => {
            bad.event.add(offset, || {
                if raw.get().trim_start().starts_with('{') {
                    format!("event {seq} is not a trace event ({e}); skipped")
                } else {
                    let shown: String = raw.get().chars().take(40).collect();
                    format!("event {seq} is not a JSON object (it is `{shown}`); skipped")
                }
            });
            return None;
        }
    };
    let ph = r.ph.map(text_of).unwrap_or_default();
    let Some(&phb) = ph.as_bytes().first() else {
        bad.event
            .add(offset, || format!("event {seq} has no `ph` (phase); skipped"));
        return None;
    };
    let ts = match r.ts.map(|v| parse_us_as_ns(v.get())).transpose() {
        Ok(t) => t.flatten(),
        Err(msg) => {
            bad.ts.add(offset, || format!("event {seq}: `ts` {msg}; skipped"));
            return None;
        }
    };
    let dur = match r.dur.map(|v| parse_us_as_ns(v.get())).transpose() {
        Ok(t) => t.flatten(),
        Err(msg) => {
            bad.ts
                .add(offset, || format!("event {seq}: `dur` {msg}; skipped"));
            return None;
        }
    };
    let id = match (r.id2, r.id) {
        (Some(id2), _) => Some(Cow::Owned(id2_key(id2))),
        (None, Some(id)) => Some(text_of(id)),
        (None, None) => None,
    };
    Some(Ev {
        seq,
        ph: phb,
        name: r.name.map(text_of).unwrap_or_default(),
        cat: r.cat.map(text_of).unwrap_or_default(),
        ts,
        dur,
        pid: r.pid,
        tid: r.tid,
        id,
        scope: r.scope.map(text_of).unwrap_or_default(),
        instant_scope: r.s.map(text_of).unwrap_or_default(),
        args: r.args,
        offset,
    })
}

/// Reads the JSON structure of `text`, converting every event as it is read and handing it
/// to `sink` (in file order; nothing of an event is kept here after that). Damage after the
/// first events (truncation, malformed events) is reported in `report`, at its line and
/// byte offset; errors when the text is not a trace at all.
pub(super) fn decode_events<'a>(
    text: &'a str,
    report: &mut Report,
    mut sink: impl FnMut(Ev<'a>),
) -> Result<Top<'a>, Problem> {
    let mut top = Top::default();
    let mut bad = Bad::default();
    let mut valid = 0u64;
    let mut de = serde_json::Deserializer::from_str(text);
    let seed = TopSeed {
        top: &mut top,
        text,
        each: |seq, raw| {
            if let Some(ev) = convert(text, seq, raw, &mut bad) {
                valid += 1;
                sink(ev);
            }
        },
    };
    let result = seed.deserialize(&mut de).and_then(|()| de.end());
    if let Err(e) = result {
        let remainder_ok = top.array_form
            && e.classify() == serde_json::error::Category::Eof
            && top.last_end.is_some_and(|end| {
                text.get(end..)
                    .is_some_and(|r| r.trim_matches(|c: char| c.is_whitespace() || c == ',').is_empty())
            });
        if remainder_ok {
            report.notes.push(
                "the JSON array is not closed with `]` (the trace event format allows this)".to_string(),
            );
        } else if top.events == 0 && top.samples.is_none() {
            return Err(Problem::at_line(
                e.line(),
                format!(
                    "not a Chrome trace: {e}; expected a JSON array of events or an object with a `traceEvents` array"
                ),
            ));
        } else {
            let mut p = Problem::at_line(
                e.line(),
                format!(
                    "the JSON is broken or truncated here ({e}); the {} events before this point were read",
                    top.events
                ),
            );
            p.offset = Some(offset_of(text, e.line(), e.column()) as u64);
            report.partial.push(p);
        }
    }
    if !top.array_form && top.events == 0 && top.samples.is_none() && top.stack_frames.is_none() {
        let has_key = text.contains("\"traceEvents\"");
        if !has_key {
            return Err(Problem::whole(
                "not a Chrome trace: the JSON object has no `traceEvents` array",
            ));
        }
    }
    let mut malformed = Vec::new();
    bad.event.report("malformed events", text, &mut malformed);
    bad.ts.report("events with bad timestamps", text, &mut malformed);
    report.partial.extend(malformed);
    if valid == 0 && top.samples.is_none() && top.events > 0 {
        return Err(Problem::whole(format!(
            "none of the {} events is a valid trace event: {}",
            top.events,
            report
                .partial
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; ")
        )));
    }
    Ok(top)
}
