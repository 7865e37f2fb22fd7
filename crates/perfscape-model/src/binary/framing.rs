//! Byte framing shared by the profile codec and the cache file of `perfscape-formats`: a
//! buffered little-endian [`Writer`] with a running CRC-32, a bounds-checked [`Reader`], and
//! the [`DecodeError`] both report.

use std::fmt;
use std::io::{self, Write};

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
