//! The profile decoder: [`Profile::decode`], which checks every length, count and index before
//! it trusts it.

use super::{
    ARRAY_CONST, ARRAY_RAW, ARRAY_SAME, ARRAY_U32, DECODE_EXPANSION_LIMIT, DECODE_SLACK_BYTES, DecodeError,
    HEADER_LEN, PROFILE_END, PROFILE_FORMAT_VERSION, PROFILE_MAGIC, Reader, THREADS_LIST, THREADS_RANGE,
    TRAILER_LEN, checksum, kind_of,
};
use crate::columns::{AtomicColumn, IntervalColumns};
use crate::event::{AtomicEvent, Event};
use crate::event_index::EventIndex;
use crate::ids::{AtomicEventId, EventId, GroupId, ThreadId, ThreadIndex};
use crate::metadata::Metadata;
use crate::metric::{Combine, Metric, Unit};
use crate::profile::{CallTree, Profile};
use rustc_hash::FxHashMap as HashMap;

impl Profile {
    /// Decodes bytes written by [`Profile::encode`]: checks the magic, the version, the
    /// length and the CRC-32 first, then every count against the bytes that remain and every
    /// index against the table it points into. Never panics.
    pub fn decode(bytes: &[u8]) -> Result<Profile, DecodeError> {
        if bytes.len() < HEADER_LEN + TRAILER_LEN {
            return Err(DecodeError::at(
                0,
                format!(
                    "{} bytes is too short for an encoded profile ({} bytes of header and trailer)",
                    bytes.len(),
                    HEADER_LEN + TRAILER_LEN
                ),
            ));
        }
        if bytes[..8] != PROFILE_MAGIC {
            return Err(DecodeError::at(
                0,
                "not an encoded perfscape profile (magic `PSPROFIL` expected)",
            ));
        }
        let mut head = Reader::with_base(&bytes[8..HEADER_LEN], 8);
        let version = head.u32("version")?;
        if version != PROFILE_FORMAT_VERSION {
            return Err(DecodeError::at(
                8,
                format!(
                    "profile encoding version {version}; this perfscape reads version {PROFILE_FORMAT_VERSION}"
                ),
            ));
        }
        let flags = head.u32("flags")?;
        if flags != 0 {
            return Err(DecodeError::at(12, format!("unknown flags {flags:#x}")));
        }
        let trailer_at = bytes.len() - TRAILER_LEN;
        let mut tail = Reader::with_base(&bytes[trailer_at..], trailer_at as u64);
        let len = tail.u64("payload length")?;
        let crc = tail.u32("checksum")?;
        if tail.raw(4, "end magic")? != PROFILE_END {
            return Err(DecodeError::at(
                bytes.len() as u64 - 4,
                "end magic `PEND` missing (truncated or damaged)",
            ));
        }
        let payload = &bytes[HEADER_LEN..trailer_at];
        if len != payload.len() as u64 {
            return Err(DecodeError::at(
                trailer_at as u64,
                format!(
                    "payload length {len} recorded but {} bytes present (truncated or damaged)",
                    payload.len()
                ),
            ));
        }
        let actual = checksum(payload);
        if actual != crc {
            return Err(DecodeError::at(
                HEADER_LEN as u64,
                format!(
                    "checksum mismatch: CRC-32 {actual:#010x} of the payload, {crc:#010x} recorded (damaged)"
                ),
            ));
        }
        let budget = (bytes.len() as u64)
            .saturating_add(DECODE_SLACK_BYTES)
            .saturating_mul(DECODE_EXPANSION_LIMIT);
        let mut d = Decoder {
            r: Reader::with_base(payload, HEADER_LEN as u64),
            budget,
        };
        let profile = d.profile()?;
        if d.r.remaining() != 0 {
            return Err(d
                .r
                .error(format!("{} bytes after the end of the profile", d.r.remaining())));
        }
        Ok(profile)
    }
}

struct Decoder<'a> {
    r: Reader<'a>,
    /// Bytes the decoder may still materialize (see [`DECODE_EXPANSION_LIMIT`]).
    budget: u64,
}

impl Decoder<'_> {
    fn spend(&mut self, bytes: u64, what: &str) -> Result<(), DecodeError> {
        match self.budget.checked_sub(bytes) {
            Some(left) => {
                self.budget = left;
                Ok(())
            }
            None => Err(self.r.error(format!(
                "{what}: the data would expand beyond {DECODE_EXPANSION_LIMIT} times the input size (damaged?)"
            ))),
        }
    }

    fn index(&mut self, bound: usize, what: &str) -> Result<u32, DecodeError> {
        let at = self.r.offset();
        let v = self.r.u32(what)?;
        if v as usize >= bound {
            return Err(DecodeError::at(
                at,
                format!("{what} {v} out of range (the table has {bound} entries)"),
            ));
        }
        Ok(v)
    }

    fn threads(&mut self, n_threads: usize) -> Result<Vec<ThreadIndex>, DecodeError> {
        let at = self.r.offset();
        let n = self.r.u64("row count")?;
        let n = usize::try_from(n)
            .ok()
            .filter(|&n| n <= n_threads)
            .ok_or_else(|| DecodeError::at(at, format!("row count {n} exceeds the {n_threads} threads")))?;
        let tag_at = self.r.offset();
        match self.r.u8("thread encoding")? {
            THREADS_RANGE => {
                let start = self.r.u32("first thread")?;
                if start as usize + n > n_threads {
                    return Err(DecodeError::at(
                        tag_at,
                        format!(
                            "thread range {start}..{} exceeds the {n_threads} threads",
                            start as usize + n
                        ),
                    ));
                }
                self.spend(n as u64 * 4, "thread range")?;
                Ok((start..start + n as u32).map(ThreadIndex).collect())
            }
            THREADS_LIST => {
                let list = self.r.u32s(n, "thread indices")?;
                let mut prev: Option<u32> = None;
                for &t in &list {
                    if t as usize >= n_threads || prev.is_some_and(|p| p >= t) {
                        return Err(DecodeError::at(
                            tag_at,
                            format!("thread index {t} out of range or not ascending ({n_threads} threads)"),
                        ));
                    }
                    prev = Some(t);
                }
                self.spend(n as u64 * 4, "thread indices")?;
                Ok(list.into_iter().map(ThreadIndex).collect())
            }
            other => Err(DecodeError::at(
                tag_at,
                format!("unknown thread encoding {other}"),
            )),
        }
    }

    fn array(&mut self, n: usize, previous: Option<&[f64]>, what: &str) -> Result<Vec<f64>, DecodeError> {
        let at = self.r.offset();
        let tag = self.r.u8(what)?;
        self.spend(n as u64 * 8, what)?;
        match tag {
            ARRAY_RAW => self.r.f64s(n, what),
            ARRAY_U32 => Ok(self.r.u32s(n, what)?.into_iter().map(f64::from).collect()),
            ARRAY_CONST if n > 0 => {
                let v = self.r.f64(what)?;
                Ok(vec![v; n])
            }
            ARRAY_SAME if n > 0 => match previous {
                Some(p) if p.len() == n => Ok(p.to_vec()),
                _ => Err(DecodeError::at(
                    at,
                    format!("{what}: `same as previous` without a previous array"),
                )),
            },
            other => Err(DecodeError::at(
                at,
                format!("{what}: unknown array encoding {other} for {n} values"),
            )),
        }
    }

    fn profile(&mut self) -> Result<Profile, DecodeError> {
        let at = self.r.offset();
        let n_threads = self.r.count(12, "thread count")?;
        if u32::try_from(n_threads).is_err() {
            return Err(DecodeError::at(
                at,
                format!("{n_threads} threads: more than a u32 index can address"),
            ));
        }
        let n_metrics = self.r.count(5, "metric count")?;
        let n_groups = self.r.count(4, "group count")?;
        let n_events = self.r.count(22, "event count")?;
        let n_atomic = self.r.count(5, "user event count")?;
        let mut threads = Vec::with_capacity(n_threads);
        for _ in 0..n_threads {
            let at = self.r.offset();
            let t = ThreadId::new(self.r.u32("node")?, self.r.u32("context")?, self.r.u32("thread")?);
            if threads.last().is_some_and(|p| *p >= t) {
                return Err(DecodeError::at(
                    at,
                    format!("thread {t} is not in ascending order"),
                ));
            }
            threads.push(t);
        }
        let mut metrics = Vec::with_capacity(n_metrics);
        for _ in 0..n_metrics {
            let name = self.r.str("metric name")?;
            let at = self.r.offset();
            let unit = match self.r.u8("unit")? {
                0 => Unit::Seconds,
                1 => Unit::Microseconds,
                2 => Unit::Nanoseconds,
                3 => Unit::Cycles,
                4 => Unit::Bytes,
                5 => Unit::Count,
                6 => Unit::Other(self.r.str("unit name")?),
                other => return Err(DecodeError::at(at, format!("unknown unit tag {other}"))),
            };
            let at = self.r.offset();
            let tag = self.r.u8("combination rule")?;
            let combine = *Combine::ALL.get(usize::from(tag)).ok_or_else(|| {
                DecodeError::at(
                    at,
                    format!(
                        "unknown combination rule tag {tag} (0 sum, 1 min, 2 max, 3 mean, 4 not combinable)"
                    ),
                )
            })?;
            metrics.push(Metric { name, unit, combine });
        }
        let mut groups = Vec::with_capacity(n_groups);
        for _ in 0..n_groups {
            groups.push(self.r.str("group name")?);
        }
        let mut events = Vec::with_capacity(n_events);
        let mut event_at = Vec::with_capacity(n_events);
        let mut shared = crate::shared::Shared::default();
        for _ in 0..n_events {
            let at = self.r.offset();
            event_at.push(at);
            let frame = self.r.str("event frame")?;
            let n = self.r.count(4, "event group count")?;
            let mut eg = Vec::with_capacity(n);
            for _ in 0..n {
                eg.push(GroupId(self.index(n_groups, "group id")?));
            }
            let kat = self.r.offset();
            let kind = kind_of(self.r.u8("event kind")?)
                .ok_or_else(|| DecodeError::at(kat, "unknown event kind"))?;
            let flags = self.r.u8("event flags")?;
            // Bit 1 (a source location) is not written since version 4: it is derived from
            // the frame.
            if flags & !0b1101 != 0 {
                return Err(DecodeError::at(
                    kat + 1,
                    format!("unknown event flags {flags:#x}"),
                ));
            }
            let depth = self.r.u32("depth")?;
            let parent = if flags & 4 != 0 {
                Some(EventId(self.index(n_events, "parent event")?))
            } else {
                None
            };
            let routine = if flags & 8 != 0 {
                Some(EventId(self.index(n_events, "routine event")?))
            } else {
                None
            };
            events.push(Event::new(
                shared.frame(&frame),
                shared.groups(&eg),
                kind,
                flags & 1 != 0,
                depth,
                parent,
                routine,
            ));
        }
        let event_index = check_call_tree(&events, &event_at)?;
        let mut interval = IntervalColumns::new(n_metrics);
        interval.reserve(n_events, 0);
        for _ in 0..n_events {
            let threads_of = self.threads(n_threads)?;
            let n = threads_of.len();
            let calls = self.array(n, None, "calls")?;
            let subcalls = self.array(n, Some(&calls), "subcalls")?;
            let at = self.r.offset();
            let n_ex = self.r.u64("exclusive metric count")?;
            let n_in = self.r.u64("inclusive metric count")?;
            if n_ex != n_metrics as u64 || n_in != n_metrics as u64 {
                return Err(DecodeError::at(
                    at,
                    format!(
                        "a column has {n_ex}/{n_in} metric arrays but the profile has {n_metrics} metrics"
                    ),
                ));
            }
            let mut exclusive: Vec<Vec<f64>> = Vec::with_capacity(n_metrics);
            let mut inclusive: Vec<Vec<f64>> = Vec::with_capacity(n_metrics);
            for _ in 0..n_metrics {
                let prev = inclusive.last().unwrap_or(&subcalls);
                let x = self.array(n, Some(prev), "exclusive")?;
                let i = self.array(n, Some(&x), "inclusive")?;
                exclusive.push(x);
                inclusive.push(i);
            }
            interval.push(&threads_of, |k| match k {
                0 => &calls,
                1 => &subcalls,
                k if k % 2 == 0 => &exclusive[k / 2 - 1],
                k => &inclusive[k / 2 - 1],
            });
        }
        // Every event on every thread (a one-thread call tree): no threads or ranges stored.
        interval.compact();
        let mut atomic_events = Vec::with_capacity(n_atomic);
        let mut atomic_index: HashMap<String, AtomicEventId> = HashMap::default();
        atomic_index.reserve(n_atomic);
        for i in 0..n_atomic {
            let at = self.r.offset();
            let name = self.r.str("user event name")?;
            let fat = self.r.offset();
            let flags = self.r.u8("user event flags")?;
            if flags > 0b1111 {
                return Err(DecodeError::at(
                    fat,
                    format!("unknown user event flags {flags:#x}"),
                ));
            }
            let context = if flags & 1 != 0 {
                Some(EventId(self.index(n_events, "context event")?))
            } else {
                None
            };
            let context_path = if flags & 2 != 0 {
                Some(self.r.str("context path")?)
            } else {
                None
            };
            let base = if flags & 4 != 0 {
                Some(AtomicEventId(self.index(n_atomic, "base user event")?))
            } else {
                None
            };
            let base_name = if flags & 8 != 0 {
                Some(self.r.str("base name")?)
            } else {
                None
            };
            if atomic_index
                .insert(name.clone(), AtomicEventId::from(i))
                .is_some()
            {
                return Err(DecodeError::at(
                    at,
                    format!("user event name `{name}` appears twice"),
                ));
            }
            atomic_events.push(AtomicEvent {
                name,
                context,
                context_path,
                base,
                base_name,
            });
        }
        let mut atomic = Vec::with_capacity(n_atomic);
        for _ in 0..n_atomic {
            let threads_of = self.threads(n_threads)?;
            let n = threads_of.len();
            let count = self.array(n, None, "count")?;
            let max = self.array(n, Some(&count), "max")?;
            let min = self.array(n, Some(&max), "min")?;
            let mean = self.array(n, Some(&min), "mean")?;
            let sum_squares = self.array(n, Some(&mean), "sum of squares")?;
            atomic.push(AtomicColumn {
                threads: threads_of,
                count,
                max,
                min,
                mean,
                sum_squares,
            });
        }
        let n_common = self.r.count(8, "metadata key count")?;
        let mut common = Vec::with_capacity(n_common);
        for _ in 0..n_common {
            common.push((self.r.str("metadata key")?, self.r.str("metadata value")?));
        }
        let n_varying = self.r.count(12, "varying metadata key count")?;
        let mut varying = Vec::with_capacity(n_varying);
        for _ in 0..n_varying {
            let key = self.r.str("metadata key")?;
            let n = self.r.count(8, "metadata value count")?;
            let mut values = Vec::with_capacity(n);
            for _ in 0..n {
                let t = ThreadIndex(self.index(n_threads, "metadata thread")?);
                values.push((t, self.r.str("metadata value")?));
            }
            varying.push((key, values));
        }
        let n_attributes = self.r.count(12, "event attribute count")?;
        let mut event_attributes: Vec<(EventId, String, String)> = Vec::with_capacity(n_attributes);
        for _ in 0..n_attributes {
            let at = self.r.offset();
            let e = EventId(self.index(n_events, "event attribute's event")?);
            if event_attributes.last().is_some_and(|(p, ..)| *p > e) {
                return Err(DecodeError::at(
                    at,
                    "event attributes are not in ascending event order",
                ));
            }
            event_attributes.push((
                e,
                self.r.str("event attribute name")?,
                self.r.str("event attribute value")?,
            ));
        }
        let (mut totals, mut has_total) = (Vec::new(), Vec::new());
        let at = self.r.offset();
        match self.r.u8("thread totals flag")? {
            0 => {}
            1 => {
                totals.reserve(n_threads * n_metrics);
                for _ in 0..n_threads {
                    let at = self.r.offset();
                    has_total.push(match self.r.u8("thread total flag")? {
                        0 => false,
                        1 => true,
                        x => {
                            return Err(DecodeError::at(
                                at,
                                format!("thread total flag {x} (expected 0 or 1)"),
                            ));
                        }
                    });
                    totals.extend(self.r.f64s(n_metrics, "thread totals")?);
                }
            }
            x => {
                return Err(DecodeError::at(
                    at,
                    format!("thread totals flag {x} (expected 0 or 1)"),
                ));
            }
        }
        let call_tree = CallTree::build(&events);
        Ok(Profile {
            metadata: Metadata::from_parts(common, varying),
            threads,
            metrics,
            groups,
            events,
            event_index,
            interval,
            atomic_events,
            atomic_index,
            atomic,
            call_tree,
            event_attributes,
            totals,
            has_total,
        })
    }
}

/// Checks the call-tree links of decoded events and indexes them: each parent's depth plus the
/// frames of the event's own frame must give the event's depth (so parent chains end and
/// cannot loop), and no two events may share a (parent, frame) key. `event_at` holds each
/// event's byte offset, for errors.
fn check_call_tree(events: &[Event], event_at: &[u64]) -> Result<EventIndex, DecodeError> {
    for (i, e) in events.iter().enumerate() {
        let own = crate::event::callpath_frames(&e.frame).count() as u64;
        let base = e.parent().map_or(0, |p| u64::from(events[p.index()].depth));
        if u64::from(e.depth) != base + own {
            return Err(DecodeError::at(
                event_at[i],
                format!(
                    "event `{}` has depth {} but its parent's depth and its own frames give {}",
                    e.frame,
                    e.depth,
                    base + own
                ),
            ));
        }
    }
    let index = EventIndex::build(events);
    if index.len() != events.len() {
        let mut seen = EventIndex::default();
        for i in 0..events.len() {
            let id = EventId::from(i);
            if seen.get(events, events[i].parent(), &events[i].frame).is_some() {
                return Err(DecodeError::at(
                    event_at[i],
                    format!("event `{}` appears twice under the same parent", events[i].frame),
                ));
            }
            seen.insert(events, id);
        }
    }
    Ok(index)
}
