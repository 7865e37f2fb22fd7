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

/// The top-level structure of a trace file.
#[derive(Default)]
pub(super) struct Top<'a> {
    /// The array form (`[ {...}, ... ]`).
    pub(super) array_form: bool,
    /// The events, raw.
    pub(super) events: Vec<&'a RawValue>,
    /// `displayTimeUnit`, if given.
    pub(super) display_time_unit: Option<String>,
    /// `samples`, if given.
    pub(super) samples: Option<&'a RawValue>,
    /// `stackFrames`, if given.
    pub(super) stack_frames: Option<&'a RawValue>,
    /// Other top-level keys with short scalar values (kept as metadata).
    pub(super) other: Vec<(String, String)>,
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

/// One event, converted.
pub(super) struct Ev<'a> {
    pub(super) seq: u64,
    pub(super) ph: u8,
    pub(super) name: Cow<'a, str>,
    pub(super) cat: Cow<'a, str>,
    pub(super) ts: Option<i64>,
    pub(super) dur: Option<i64>,
    pub(super) pid: Key,
    pub(super) tid: Key,
    pub(super) id: Option<String>,
    pub(super) scope: Cow<'a, str>,
    pub(super) instant_scope: Cow<'a, str>,
    pub(super) args: Option<&'a RawValue>,
    pub(super) line: usize,
}

/// Byte offset of `inner` (a slice of `text`) in `text`.
pub(super) fn offset_in(text: &str, inner: &str) -> usize {
    (inner.as_ptr() as usize).saturating_sub(text.as_ptr() as usize)
}

/// Counts problems of one kind, keeping the first example.
#[derive(Default)]
pub(super) struct Tally {
    /// Problems counted.
    pub(super) count: usize,
    /// The first one: line and message.
    pub(super) first: Option<(usize, String)>,
}

impl Tally {
    pub(super) fn add(&mut self, line: usize, msg: impl FnOnce() -> String) {
        self.count += 1;
        if self.first.is_none() {
            self.first = Some((line, msg()));
        }
    }

    pub(super) fn report(&self, what: &str, out: &mut Vec<Problem>) {
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

/// The 1-based line of byte `offset`, given the offsets where lines start.
pub(super) fn line_at(line_starts: &[usize], offset: usize) -> usize {
    line_starts.partition_point(|&s| s <= offset)
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

/// Reads the JSON structure of `text` and converts every event. Damage after the first
/// events (truncation, malformed events) is reported in `report`; errors when the text is not
/// a trace at all.
pub(super) fn decode_events<'a>(
    text: &'a str,
    report: &mut Report,
) -> Result<(Top<'a>, Vec<Ev<'a>>), Problem> {
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
            report.notes.push(
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
            report.partial.push(Problem::at_line(
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
    report.partial.extend(malformed);
    if evs.is_empty() && top.samples.is_none() && !top.events.is_empty() {
        return Err(Problem::whole(format!(
            "none of the {} events is a valid trace event: {}",
            top.events.len(),
            report
                .partial
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; ")
        )));
    }
    Ok((top, evs))
}
