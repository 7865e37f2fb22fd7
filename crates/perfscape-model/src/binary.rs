//! A compact binary encoding of a whole [`Profile`], for the on-disk cache of
//! `perfscape-formats` (the byte layout is documented in `CACHE.md` at the repository root).
//!
//! [`Profile::encode`] / [`Profile::encode_to`] write the profile; [`Profile::decode`] reads it
//! back, bit for bit (`decode(encode(p)) == p`, every `f64` with its exact bits). The name and
//! id indices and the call tree are rebuilt on decode from the events they are derived from.
//!
//! Layout in one line: a 16-byte header (`PSPROFIL`, format version, flags), the payload, and
//! a 16-byte trailer (payload length, CRC-32 of the payload, `PEND`). Value arrays are written
//! as little-endian blocks, each with a one-byte encoding tag so that common shapes stay small
//! (all values equal, small integers, identical to the previous array, every thread present).
//!
//! Decoding never panics and never allocates from a length it has not checked against the
//! bytes that remain: a damaged or truncated input gives a [`DecodeError`] naming the byte
//! offset and what was expected.
//!
//! The primitives ([`Writer`], [`Reader`], [`checksum`]) are public so the cache file of
//! `perfscape-formats` can frame its own sections the same way.

use crate::columns::{AtomicColumn, IntervalColumn};
use crate::event::{AtomicEvent, Event, EventKind, SourceLocation};
use crate::ids::{AtomicEventId, EventId, GroupId, ThreadId, ThreadIndex};
use crate::metadata::Metadata;
use crate::metric::{Metric, Unit};
use crate::profile::{CallTree, Profile};
use rustc_hash::FxHashMap as HashMap;
use std::fmt;
use std::io::{self, Write};

/// First 8 bytes of an encoded profile.
pub const PROFILE_MAGIC: [u8; 8] = *b"PSPROFIL";
/// Last 4 bytes of an encoded profile.
pub const PROFILE_END: [u8; 4] = *b"PEND";
/// Version of the profile encoding; bumped whenever the layout changes (old caches are then
/// rebuilt, never misread).
pub const PROFILE_FORMAT_VERSION: u32 = 1;
/// Bytes of the header: magic, version, flags.
pub const HEADER_LEN: usize = 16;
/// Bytes of the trailer: payload length, CRC-32, end magic.
pub const TRAILER_LEN: usize = 16;

/// How many bytes the decoder may materialize per input byte (plus a fixed allowance of
/// [`DECODE_SLACK_BYTES`]): the compact encodings (constant arrays, thread ranges) expand, and
/// this bounds what a crafted input can make the decoder allocate.
pub const DECODE_EXPANSION_LIMIT: u64 = 256;
/// Fixed allowance added to the input length before applying [`DECODE_EXPANSION_LIMIT`].
pub const DECODE_SLACK_BYTES: u64 = 64 * 1024;

/// CRC-32 (IEEE, as in gzip and PNG) of `bytes`, via `crc32fast` (SIMD where available).
pub fn checksum(bytes: &[u8]) -> u32 {
    crc32fast::hash(bytes)
}

/// Why bytes could not be decoded: the byte offset (from the start of the input given to the
/// decoder) and what was expected there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    /// Byte offset from the start of the decoded input.
    pub offset: u64,
    /// What is wrong and what was expected.
    pub message: String,
}

impl DecodeError {
    /// An error at byte `offset`.
    pub fn at(offset: u64, message: impl Into<String>) -> Self {
        Self {
            offset,
            message: message.into(),
        }
    }
}

impl fmt::Display for DecodeError {
    /// `byte N: message`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "byte {}: {}", self.offset, self.message)
    }
}

impl std::error::Error for DecodeError {}

const WRITE_BUFFER: usize = 1 << 20;

/// A buffered little-endian writer over any [`Write`] sink that counts the bytes written and
/// keeps a running CRC-32 of them.
///
/// Scalars are written little-endian; `str`/`bytes` are a `u32` length followed by the bytes;
/// arrays are raw blocks (`f64s`, `u32s`) whose length the caller writes.
#[derive(Debug)]
pub struct Writer<W: Write> {
    inner: W,
    buf: Vec<u8>,
    crc: crc32fast::Hasher,
    written: u64,
}

impl<W: Write> Writer<W> {
    /// A writer into `inner`.
    pub fn new(inner: W) -> Self {
        Self {
            inner,
            buf: Vec::with_capacity(WRITE_BUFFER),
            crc: crc32fast::Hasher::new(),
            written: 0,
        }
    }

    fn flush_buf(&mut self) -> io::Result<()> {
        if !self.buf.is_empty() {
            self.crc.update(&self.buf);
            self.inner.write_all(&self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }

    /// Makes room for `n` more bytes in the buffer.
    fn reserve(&mut self, n: usize) -> io::Result<()> {
        if self.buf.len() + n > WRITE_BUFFER {
            self.flush_buf()?;
        }
        Ok(())
    }

    /// Writes raw bytes (no length).
    pub fn raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.written += bytes.len() as u64;
        if bytes.len() > WRITE_BUFFER / 2 {
            self.flush_buf()?;
            self.crc.update(bytes);
            return self.inner.write_all(bytes);
        }
        self.reserve(bytes.len())?;
        self.buf.extend_from_slice(bytes);
        Ok(())
    }

    /// Writes one byte.
    pub fn u8(&mut self, v: u8) -> io::Result<()> {
        self.raw(&[v])
    }

    /// Writes a `u32`, little-endian.
    pub fn u32(&mut self, v: u32) -> io::Result<()> {
        self.raw(&v.to_le_bytes())
    }

    /// Writes a `u64`, little-endian.
    pub fn u64(&mut self, v: u64) -> io::Result<()> {
        self.raw(&v.to_le_bytes())
    }

    /// Writes an `i64`, little-endian two's complement.
    pub fn i64(&mut self, v: i64) -> io::Result<()> {
        self.raw(&v.to_le_bytes())
    }

    /// Writes an `f64` as its IEEE-754 bits, little-endian.
    pub fn f64(&mut self, v: f64) -> io::Result<()> {
        self.raw(&v.to_le_bytes())
    }

    /// Writes a count of items (`usize` as `u64`), read back by [`Reader::count`].
    pub fn count(&mut self, n: usize) -> io::Result<()> {
        self.u64(n as u64)
    }

    /// Writes a byte string: `u32` length, then the bytes. Errors if longer than `u32::MAX`.
    pub fn bytes(&mut self, b: &[u8]) -> io::Result<()> {
        let n = u32::try_from(b.len())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "string longer than 4 GiB"))?;
        self.u32(n)?;
        self.raw(b)
    }

    /// Writes a UTF-8 string: `u32` length, then the bytes.
    pub fn str(&mut self, s: &str) -> io::Result<()> {
        self.bytes(s.as_bytes())
    }

    /// Writes a block of `f64`s (8 bytes each, little-endian), without a length.
    pub fn f64s(&mut self, values: &[f64]) -> io::Result<()> {
        self.written += values.len() as u64 * 8;
        for chunk in values.chunks(WRITE_BUFFER / 16) {
            self.reserve(chunk.len() * 8)?;
            for v in chunk {
                self.buf.extend_from_slice(&v.to_le_bytes());
            }
        }
        Ok(())
    }

    /// Writes a block of `u32`s (4 bytes each, little-endian), without a length.
    pub fn u32s(&mut self, values: impl ExactSizeIterator<Item = u32>) -> io::Result<()> {
        self.written += values.len() as u64 * 4;
        let mut room = 0usize;
        for v in values {
            if room == 0 {
                self.reserve(WRITE_BUFFER / 4)?;
                room = WRITE_BUFFER / 16;
            }
            self.buf.extend_from_slice(&v.to_le_bytes());
            room -= 1;
        }
        Ok(())
    }

    /// Bytes written so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Flushes the buffer; returns the CRC-32 of every byte written since the writer was made
    /// (or since the last [`Writer::reset_checksum`]).
    pub fn checksum(&mut self) -> io::Result<u32> {
        self.flush_buf()?;
        Ok(self.crc.clone().finalize())
    }

    /// Flushes the buffer and restarts the running checksum and byte count.
    pub fn reset_checksum(&mut self) -> io::Result<()> {
        self.flush_buf()?;
        self.crc = crc32fast::Hasher::new();
        self.written = 0;
        Ok(())
    }

    /// Flushes and returns the sink.
    pub fn finish(mut self) -> io::Result<W> {
        self.flush_buf()?;
        self.inner.flush()?;
        Ok(self.inner)
    }
}

/// A bounds-checked little-endian reader over a byte slice. Every read checks the bytes that
/// remain and fails with a [`DecodeError`] naming the offset (relative to `base`, the offset
/// of the slice in the whole input).
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    base: u64,
}

impl<'a> Reader<'a> {
    /// A reader over `bytes`; error offsets are counted from the start of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        Self::with_base(bytes, 0)
    }

    /// A reader over `bytes` that sit at offset `base` of a larger input (for error offsets).
    pub fn with_base(bytes: &'a [u8], base: u64) -> Self {
        Self { bytes, pos: 0, base }
    }

    /// Offset of the next byte, counted from the start of the whole input.
    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    /// An error at the current offset.
    pub fn error(&self, message: impl Into<String>) -> DecodeError {
        DecodeError::at(self.offset(), message)
    }

    /// The next `n` bytes.
    pub fn raw(&mut self, n: usize, what: &str) -> Result<&'a [u8], DecodeError> {
        if n > self.remaining() {
            return Err(self.error(format!(
                "{what}: {n} bytes expected but only {} remain (truncated?)",
                self.remaining()
            )));
        }
        let s = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N], DecodeError> {
        let s = self.raw(N, what)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    /// One byte.
    pub fn u8(&mut self, what: &str) -> Result<u8, DecodeError> {
        Ok(self.array::<1>(what)?[0])
    }

    /// A little-endian `u32`.
    pub fn u32(&mut self, what: &str) -> Result<u32, DecodeError> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }

    /// A little-endian `u64`.
    pub fn u64(&mut self, what: &str) -> Result<u64, DecodeError> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }

    /// A little-endian `i64`.
    pub fn i64(&mut self, what: &str) -> Result<i64, DecodeError> {
        Ok(i64::from_le_bytes(self.array(what)?))
    }

    /// An `f64` from its little-endian bits.
    pub fn f64(&mut self, what: &str) -> Result<f64, DecodeError> {
        Ok(f64::from_le_bytes(self.array(what)?))
    }

    /// A count of items that take at least `min_item_bytes` bytes each: errors unless that
    /// many bytes remain, so the count can be used to reserve memory.
    pub fn count(&mut self, min_item_bytes: usize, what: &str) -> Result<usize, DecodeError> {
        let at = self.offset();
        let n = self.u64(what)?;
        let need = n.checked_mul(min_item_bytes.max(1) as u64);
        match (usize::try_from(n), need) {
            (Ok(n), Some(need)) if need <= self.remaining() as u64 => Ok(n),
            _ => Err(DecodeError::at(
                at,
                format!(
                    "{what}: count {n} needs at least {} bytes but only {} remain",
                    n.saturating_mul(min_item_bytes.max(1) as u64),
                    self.remaining()
                ),
            )),
        }
    }

    /// A byte string written by [`Writer::bytes`].
    pub fn bytes(&mut self, what: &str) -> Result<&'a [u8], DecodeError> {
        let n = self.u32(what)? as usize;
        self.raw(n, what)
    }

    /// A UTF-8 string written by [`Writer::str`].
    pub fn str(&mut self, what: &str) -> Result<String, DecodeError> {
        let at = self.offset();
        let b = self.bytes(what)?;
        match std::str::from_utf8(b) {
            Ok(s) => Ok(s.to_string()),
            Err(e) => Err(DecodeError::at(at, format!("{what}: not UTF-8 ({e})"))),
        }
    }

    /// `n` little-endian `f64`s.
    pub fn f64s(&mut self, n: usize, what: &str) -> Result<Vec<f64>, DecodeError> {
        let len = n
            .checked_mul(8)
            .ok_or_else(|| self.error(format!("{what}: {n} values overflow")))?;
        let s = self.raw(len, what)?;
        Ok(s.chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap_or_default()))
            .collect())
    }

    /// `n` little-endian `u32`s.
    pub fn u32s(&mut self, n: usize, what: &str) -> Result<Vec<u32>, DecodeError> {
        let len = n
            .checked_mul(4)
            .ok_or_else(|| self.error(format!("{what}: {n} values overflow")))?;
        let s = self.raw(len, what)?;
        Ok(s.chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap_or_default()))
            .collect())
    }
}

// Encoding tags of value arrays (`f64` columns).
const ARRAY_RAW: u8 = 0;
const ARRAY_CONST: u8 = 1;
const ARRAY_U32: u8 = 2;
const ARRAY_SAME: u8 = 3;
// Encoding tags of thread-index arrays.
const THREADS_LIST: u8 = 0;
const THREADS_RANGE: u8 = 1;

fn same_bits(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

/// True when `v` is exactly a `u32` converted to `f64` (this excludes -0.0, NaN, fractions).
fn is_u32_exact(v: f64) -> bool {
    v >= 0.0 && v <= f64::from(u32::MAX) && f64::from(v as u32).to_bits() == v.to_bits()
}

fn write_array<W: Write>(w: &mut Writer<W>, values: &[f64], previous: Option<&[f64]>) -> io::Result<()> {
    if let Some(first) = values.first() {
        if previous.is_some_and(|p| same_bits(p, values)) {
            return w.u8(ARRAY_SAME);
        }
        if values.iter().all(|v| v.to_bits() == first.to_bits()) {
            w.u8(ARRAY_CONST)?;
            return w.f64(*first);
        }
        if values.iter().all(|&v| is_u32_exact(v)) {
            w.u8(ARRAY_U32)?;
            return w.u32s(values.iter().map(|&v| v as u32));
        }
    }
    w.u8(ARRAY_RAW)?;
    w.f64s(values)
}

fn write_threads<W: Write>(w: &mut Writer<W>, threads: &[ThreadIndex]) -> io::Result<()> {
    w.count(threads.len())?;
    let first = threads.first().map_or(0, |t| t.0);
    let contiguous = threads
        .iter()
        .enumerate()
        .all(|(i, t)| u64::from(t.0) == u64::from(first) + i as u64);
    if contiguous {
        w.u8(THREADS_RANGE)?;
        w.u32(first)
    } else {
        w.u8(THREADS_LIST)?;
        w.u32s(threads.iter().map(|t| t.0))
    }
}

fn opt_u32<W: Write>(w: &mut Writer<W>, v: Option<u32>) -> io::Result<()> {
    if let Some(v) = v {
        w.u32(v)?;
    }
    Ok(())
}

fn opt_str<W: Write>(w: &mut Writer<W>, v: Option<&str>) -> io::Result<()> {
    if let Some(v) = v {
        w.str(v)?;
    }
    Ok(())
}

fn kind_tag(k: EventKind) -> u8 {
    match k {
        EventKind::Timer => 0,
        EventKind::Sample => 1,
        EventKind::SampleContext => 2,
        EventKind::Intermediate => 3,
        EventKind::Summary => 4,
        EventKind::Unwind => 5,
    }
}

fn kind_of(tag: u8) -> Option<EventKind> {
    Some(match tag {
        0 => EventKind::Timer,
        1 => EventKind::Sample,
        2 => EventKind::SampleContext,
        3 => EventKind::Intermediate,
        4 => EventKind::Summary,
        5 => EventKind::Unwind,
        _ => return None,
    })
}

impl Profile {
    /// The profile encoded as bytes (layout in `CACHE.md`; see the [module](crate::binary)).
    pub fn encode(&self) -> Vec<u8> {
        // Writing into a Vec cannot fail, so the empty default is never taken.
        self.encode_to(Vec::new()).unwrap_or_default()
    }

    /// Streams the encoding into `sink` (through a 1 MiB buffer, so a file need not be
    /// buffered) and returns the sink. Errors only when the sink fails.
    pub fn encode_to<W: Write>(&self, sink: W) -> io::Result<W> {
        let mut w = Writer::new(sink);
        w.raw(&PROFILE_MAGIC)?;
        w.u32(PROFILE_FORMAT_VERSION)?;
        w.u32(0)?; // flags, reserved
        w.reset_checksum()?;
        self.encode_payload(&mut w)?;
        let len = w.written();
        let crc = w.checksum()?;
        w.u64(len)?;
        w.u32(crc)?;
        w.raw(&PROFILE_END)?;
        w.finish()
    }

    fn encode_payload<W: Write>(&self, w: &mut Writer<W>) -> io::Result<()> {
        w.count(self.threads.len())?;
        w.count(self.metrics.len())?;
        w.count(self.groups.len())?;
        w.count(self.events.len())?;
        w.count(self.atomic_events.len())?;
        for t in &self.threads {
            w.u32(t.node)?;
            w.u32(t.context)?;
            w.u32(t.thread)?;
        }
        for m in &self.metrics {
            w.str(&m.name)?;
            match &m.unit {
                Unit::Seconds => w.u8(0)?,
                Unit::Microseconds => w.u8(1)?,
                Unit::Nanoseconds => w.u8(2)?,
                Unit::Cycles => w.u8(3)?,
                Unit::Bytes => w.u8(4)?,
                Unit::Count => w.u8(5)?,
                Unit::Other(s) => {
                    w.u8(6)?;
                    w.str(s)?;
                }
            }
        }
        for g in &self.groups {
            w.str(g)?;
        }
        for e in &self.events {
            w.str(&e.name)?;
            w.count(e.groups.len())?;
            w.u32s(e.groups.iter().map(|g| g.0))?;
            w.u8(kind_tag(e.kind))?;
            let flags = u8::from(e.throttled)
                | u8::from(e.source.is_some()) << 1
                | u8::from(e.parent.is_some()) << 2
                | u8::from(e.routine.is_some()) << 3;
            w.u8(flags)?;
            w.u32(e.depth)?;
            if let Some(s) = &e.source {
                w.str(&s.file)?;
                w.u32(s.line)?;
                let mask = u8::from(s.column.is_some())
                    | u8::from(s.end_line.is_some()) << 1
                    | u8::from(s.end_column.is_some()) << 2;
                w.u8(mask)?;
                opt_u32(w, s.column)?;
                opt_u32(w, s.end_line)?;
                opt_u32(w, s.end_column)?;
            }
            opt_u32(w, e.parent.map(|p| p.0))?;
            opt_u32(w, e.routine.map(|r| r.0))?;
        }
        for c in &self.interval {
            write_threads(w, &c.threads)?;
            write_array(w, &c.calls, None)?;
            write_array(w, &c.subcalls, Some(&c.calls))?;
            w.count(c.exclusive.len())?;
            w.count(c.inclusive.len())?;
            let mut previous: &[f64] = &c.subcalls;
            for m in 0..c.exclusive.len().max(c.inclusive.len()) {
                if let Some(x) = c.exclusive.get(m) {
                    write_array(w, x, Some(previous))?;
                    previous = x;
                }
                if let Some(i) = c.inclusive.get(m) {
                    write_array(w, i, Some(previous))?;
                    previous = i;
                }
            }
        }
        for a in &self.atomic_events {
            w.str(&a.name)?;
            let flags = u8::from(a.context.is_some())
                | u8::from(a.context_path.is_some()) << 1
                | u8::from(a.base.is_some()) << 2
                | u8::from(a.base_name.is_some()) << 3;
            w.u8(flags)?;
            opt_u32(w, a.context.map(|c| c.0))?;
            opt_str(w, a.context_path.as_deref())?;
            opt_u32(w, a.base.map(|b| b.0))?;
            opt_str(w, a.base_name.as_deref())?;
        }
        for c in &self.atomic {
            write_threads(w, &c.threads)?;
            write_array(w, &c.count, None)?;
            write_array(w, &c.max, Some(&c.count))?;
            write_array(w, &c.min, Some(&c.max))?;
            write_array(w, &c.mean, Some(&c.min))?;
            write_array(w, &c.sum_squares, Some(&c.mean))?;
        }
        let md = &self.metadata;
        w.count(md.common().len())?;
        for (k, v) in md.common() {
            w.str(k)?;
            w.str(v)?;
        }
        w.count(md.varying().len())?;
        for (k, values) in md.varying() {
            w.str(k)?;
            w.count(values.len())?;
            for (t, v) in values {
                w.u32(t.0)?;
                w.str(v)?;
            }
        }
        Ok(())
    }

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
            metrics.push(Metric { name, unit });
        }
        let mut groups = Vec::with_capacity(n_groups);
        for _ in 0..n_groups {
            groups.push(self.r.str("group name")?);
        }
        let mut events = Vec::with_capacity(n_events);
        let mut event_index: HashMap<String, EventId> = HashMap::default();
        event_index.reserve(n_events);
        for i in 0..n_events {
            let at = self.r.offset();
            let name = self.r.str("event name")?;
            let n = self.r.count(4, "event group count")?;
            let mut eg = Vec::with_capacity(n);
            for _ in 0..n {
                eg.push(GroupId(self.index(n_groups, "group id")?));
            }
            let kat = self.r.offset();
            let kind = kind_of(self.r.u8("event kind")?)
                .ok_or_else(|| DecodeError::at(kat, "unknown event kind"))?;
            let flags = self.r.u8("event flags")?;
            if flags > 0b1111 {
                return Err(DecodeError::at(
                    kat + 1,
                    format!("unknown event flags {flags:#x}"),
                ));
            }
            let depth = self.r.u32("depth")?;
            let source = if flags & 2 != 0 {
                let file = self.r.str("source file")?;
                let line = self.r.u32("source line")?;
                let mask = self.r.u8("source fields")?;
                let mut opt = |bit: u8, what: &str| -> Result<Option<u32>, DecodeError> {
                    if mask & bit != 0 {
                        self.r.u32(what).map(Some)
                    } else {
                        Ok(None)
                    }
                };
                Some(SourceLocation {
                    file,
                    line,
                    column: opt(1, "source column")?,
                    end_line: opt(2, "source end line")?,
                    end_column: opt(4, "source end column")?,
                })
            } else {
                None
            };
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
            if event_index.insert(name.clone(), EventId::from(i)).is_some() {
                return Err(DecodeError::at(at, format!("event name `{name}` appears twice")));
            }
            events.push(Event {
                name,
                groups: eg,
                kind,
                source,
                throttled: flags & 1 != 0,
                depth,
                parent,
                routine,
            });
        }
        let mut interval = Vec::with_capacity(n_events);
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
            interval.push(IntervalColumn {
                threads: threads_of,
                calls,
                subcalls,
                exclusive,
                inclusive,
            });
        }
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
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ProfileBuilder, ThreadData};

    fn sample() -> Profile {
        let mut b = ProfileBuilder::new(vec![Metric::tau("TIME"), Metric::tau("PAPI_FP_INS")]);
        for (k, node) in [0u32, 1, 3].into_iter().enumerate() {
            let mut t = ThreadData::new(2);
            t.push_metadata("host", "vm");
            t.push_metadata("pid", &format!("{}", 100 + k));
            let x = k as f64;
            t.push_timer(
                ".TAU application",
                "TAU_DEFAULT",
                1.0,
                2.0,
                &[10.5 + x, 7.0],
                &[100.0, 9.0],
            )
            .unwrap();
            t.push_timer(
                ".TAU application => main() [{m.c} {3,1}-{9,1}]",
                "TAU_CALLPATH|TAU_DEFAULT",
                1.0,
                0.0,
                &[-0.0, f64::NAN],
                &[f64::INFINITY, 1e300],
            )
            .unwrap();
            if k != 1 {
                t.push_timer(
                    "main() [{m.c} {3,1}-{9,1}]",
                    "TAU_DEFAULT",
                    1.0,
                    0.0,
                    &[3.0, 3.0],
                    &[3.0, 3.0],
                )
                .unwrap();
            }
            t.push_atomic("Message size", 2.0, 8.0, 4.0, 6.0, 80.0);
            t.push_atomic(
                "Message size : main() [{m.c} {3,1}-{9,1}]",
                1.0,
                8.0,
                8.0,
                8.0,
                64.0,
            );
            b.add_thread(ThreadId::new(node, 0, 0), t).unwrap();
        }
        b.finish().0
    }

    fn assert_bitwise_equal(a: &Profile, b: &Profile) {
        assert_eq!(a.events, b.events);
        assert_eq!(a.threads, b.threads);
        assert_eq!(a.metadata, b.metadata);
        assert_eq!(a.call_tree, b.call_tree);
        assert_eq!(a.event_index, b.event_index);
        assert_eq!(a.atomic_index, b.atomic_index);
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        for (x, y) in a.interval.iter().zip(&b.interval) {
            assert_eq!(x.threads, y.threads);
            assert_eq!(bits(&x.calls), bits(&y.calls));
            assert_eq!(bits(&x.subcalls), bits(&y.subcalls));
            for m in 0..x.exclusive.len() {
                assert_eq!(bits(&x.exclusive[m]), bits(&y.exclusive[m]));
                assert_eq!(bits(&x.inclusive[m]), bits(&y.inclusive[m]));
            }
        }
        assert_eq!(a.atomic, b.atomic);
    }

    #[test]
    fn round_trips_bit_for_bit_including_nan_and_negative_zero() {
        let p = sample();
        let bytes = p.encode();
        let q = Profile::decode(&bytes).unwrap();
        assert_bitwise_equal(&p, &q);
        assert_eq!(q.encode(), bytes, "re-encoding is stable");
        assert_eq!(q.call_tree().roots().len(), 1);
        assert_eq!(q.metadata().get(ThreadIndex(2), "pid"), Some("102"));
    }

    #[test]
    fn every_truncation_and_every_flipped_byte_is_an_error() {
        let bytes = sample().encode();
        for n in 0..bytes.len() {
            let e = Profile::decode(&bytes[..n]).unwrap_err();
            assert!(!e.message.is_empty());
        }
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0x41;
            assert!(Profile::decode(&b).is_err(), "flip at {i} not detected");
        }
    }

    #[test]
    fn compact_encodings_are_used_and_decode_exactly() {
        // One event on 1000 threads: calls all 1 (constant), subcalls all 0 (constant),
        // exclusive small integers (u32 block), inclusive equal to exclusive (same).
        let mut b = ProfileBuilder::new(vec![Metric::tau("TIME")]);
        for k in 0..1000u32 {
            let mut t = ThreadData::new(1);
            let v = f64::from(k * 7 + 3);
            t.push_timer("main()", "TAU_DEFAULT", 1.0, 0.0, &[v], &[v])
                .unwrap();
            b.add_thread(ThreadId::new(k, 0, 0), t).unwrap();
        }
        let p = b.finish().0;
        let bytes = p.encode();
        // header 16 + counts 40 + threads 12000 + metric `TIME` 9 + group 15 + event 32 (name
        // 10, group list 12, kind, flags, depth 4, routine 4) + column:
        // rows 8 + range 5 + calls 9 + subcalls 9 + metric counts 16 + exclusive 1+4000 +
        // inclusive 1 + metadata counts 16 + trailer 16.
        assert_eq!(
            bytes.len(),
            16 + 40 + 12_000 + 9 + 15 + 32 + 8 + 5 + 9 + 9 + 16 + 4001 + 1 + 16 + 16
        );
        let q = Profile::decode(&bytes).unwrap();
        assert_bitwise_equal(&p, &q);
        let e = q.event_by_name("main()").unwrap();
        assert_eq!(q.interval(e).exclusive(crate::MetricId(0))[999], 6996.0);
    }

    #[test]
    fn lengths_are_checked_before_allocating() {
        // A valid envelope around a payload that claims 2^40 threads.
        let mut payload = Vec::new();
        payload.extend_from_slice(&(1u64 << 40).to_le_bytes());
        payload.extend_from_slice(&[0u8; 32]);
        let mut bytes = Vec::new();
        bytes.extend_from_slice(&PROFILE_MAGIC);
        bytes.extend_from_slice(&PROFILE_FORMAT_VERSION.to_le_bytes());
        bytes.extend_from_slice(&0u32.to_le_bytes());
        bytes.extend_from_slice(&payload);
        bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        bytes.extend_from_slice(&checksum(&payload).to_le_bytes());
        bytes.extend_from_slice(&PROFILE_END);
        let e = Profile::decode(&bytes).unwrap_err();
        assert_eq!(e.offset, 16);
        assert!(e.message.contains("thread count: count 1099511627776"), "{e}");
    }
}
