//! OTF2's byte encoding: chunks, records and compressed integers (OTF2 source
//! `src/OTF2_Buffer.c`, `src/OTF2_Buffer.h`).
//!
//! - A file is a sequence of *chunks* of a fixed size (the anchor file gives the size for
//!   event files and for definition files); the last chunk of a file may be shorter. Every
//!   chunk starts with a header: the byte `0x03`, the byte order (`0x42` little endian,
//!   `0x23` big endian) and, in chunked files (definitions and events, not the anchor file),
//!   the numbers of the chunk's first and last event (8 bytes each, uncompressed).
//! - Then records: a type byte, a length byte (or `0xff` and the length in the next 8 bytes)
//!   and the record's fields. Readers skip the bytes of a record beyond the fields they know
//!   (fields added by later versions). Internal records: `0x00` end of chunk (the next record
//!   is in the next chunk), `0x01` end of buffer, `0x02` end of file, `0x05` timestamp (8
//!   bytes, uncompressed; it holds for every following event until the next one) and `0x06`
//!   an attribute list (length-prefixed, skipped here).
//! - Event records with a single compressed field (enter, leave, isend complete, irecv
//!   request, request test/cancelled, OpenMP fork and task records) have no length byte: the
//!   compressed field's size byte stands for it (OTF2 `otf2_evt_reader_skip`).
//! - Compressed unsigned integers (32 and 64 bit): a size byte `n` (0 ..= 4 or 8), then the
//!   `n` low-order bytes of the value in the file's byte order; `0` is the value 0 and `0xff`
//!   the value with all bits set (OTF2's "undefined"). Signed 64-bit integers are the same
//!   bytes read as two's complement. `uint8` values are one plain byte; strings end with a
//!   NUL byte.

use crate::problem::Problem;

/// Chunk header byte.
const CHUNK_HEADER: u8 = 0x03;
/// Byte order markers of a chunk header.
const LITTLE_ENDIAN: u8 = 0x42;
const BIG_ENDIAN: u8 = 0x23;
/// Internal record types.
const END_OF_CHUNK: u8 = 0x00;
const END_OF_BUFFER: u8 = 0x01;
const END_OF_FILE: u8 = 0x02;
const TIMESTAMP: u8 = 0x05;
const ATTRIBUTE_LIST: u8 = 0x06;

/// Event record types written without a length byte (a single compressed field).
const SINGLETON_EVENTS: [u8; 10] = [12, 13, 16, 17, 20, 21, 24, 28, 29, 30];

/// A reader of compressed values within one record's bytes.
#[derive(Debug, Clone)]
pub(crate) struct Fields<'a> {
    data: &'a [u8],
    pos: usize,
    /// Offset of `data[0]` in the file, for errors.
    base: usize,
    big_endian: bool,
}

impl<'a> Fields<'a> {
    /// The fields in `data`, which starts at byte `base` of the file.
    pub(crate) fn new(data: &'a [u8], base: usize, big_endian: bool) -> Self {
        Fields {
            data,
            pos: 0,
            base,
            big_endian,
        }
    }

    /// The file offset of the next field.
    pub(crate) fn offset(&self) -> usize {
        self.base + self.pos
    }

    fn short(&self, what: &str) -> Problem {
        Problem::at_offset(
            self.offset() as u64,
            format!("record ends before its field {what}"),
        )
    }

    /// One plain byte.
    pub(crate) fn u8(&mut self, what: &str) -> Result<u8, Problem> {
        let b = *self.data.get(self.pos).ok_or_else(|| self.short(what))?;
        self.pos += 1;
        Ok(b)
    }

    /// A compressed unsigned 64-bit integer.
    pub(crate) fn u64(&mut self, what: &str) -> Result<u64, Problem> {
        let at = self.offset();
        let n = self.u8(what)?;
        match n {
            0 => Ok(0),
            0xff => Ok(u64::MAX),
            1..=8 => {
                let n = usize::from(n);
                let bytes = self
                    .data
                    .get(self.pos..self.pos + n)
                    .ok_or_else(|| self.short(what))?;
                self.pos += n;
                Ok(self.int_of(bytes))
            }
            _ => Err(Problem::at_offset(
                at as u64,
                format!("{what}: a compressed integer's size byte must be 0-8 or 0xff, found {n}"),
            )),
        }
    }

    /// A compressed unsigned 32-bit integer (`0xff` is `u32::MAX`).
    pub(crate) fn u32(&mut self, what: &str) -> Result<u32, Problem> {
        let at = self.offset();
        let v = self.u64(what)?;
        if v == u64::MAX {
            return Ok(u32::MAX);
        }
        u32::try_from(v)
            .map_err(|_| Problem::at_offset(at as u64, format!("{what}: {v} does not fit a 32-bit field")))
    }

    /// A compressed signed 64-bit integer.
    pub(crate) fn i64(&mut self, what: &str) -> Result<i64, Problem> {
        Ok(self.u64(what)? as i64)
    }

    /// An uncompressed 64-bit unsigned integer.
    pub(crate) fn u64_full(&mut self, what: &str) -> Result<u64, Problem> {
        let bytes = self
            .data
            .get(self.pos..self.pos + 8)
            .ok_or_else(|| self.short(what))?;
        self.pos += 8;
        Ok(self.int_of(bytes))
    }

    /// A NUL-terminated string (invalid UTF-8 replaced).
    pub(crate) fn string(&mut self, what: &str) -> Result<String, Problem> {
        let rest = self.data.get(self.pos..).unwrap_or_default();
        let end = memchr::memchr(0, rest).ok_or_else(|| {
            Problem::at_offset(
                self.offset() as u64,
                format!("{what}: string without its terminating NUL byte"),
            )
        })?;
        let s = String::from_utf8_lossy(&rest[..end]).into_owned();
        self.pos += end + 1;
        Ok(s)
    }

    fn int_of(&self, bytes: &[u8]) -> u64 {
        let mut v = 0u64;
        if self.big_endian {
            for &b in bytes {
                v = (v << 8) | u64::from(b);
            }
        } else {
            for &b in bytes.iter().rev() {
                v = (v << 8) | u64::from(b);
            }
        }
        v
    }
}

/// One record of a file.
#[derive(Debug, Clone)]
pub(crate) struct Record<'a> {
    /// Its type byte.
    pub(crate) kind: u8,
    /// Offset of the type byte in the file.
    pub(crate) offset: usize,
    /// The current timestamp (event files; 0 in definition files), in ticks.
    pub(crate) time: u64,
    /// Its fields.
    pub(crate) fields: Fields<'a>,
}

/// The records of a chunked OTF2 file (definitions or events), in order.
#[derive(Debug)]
pub(crate) struct Records<'a> {
    data: &'a [u8],
    pos: usize,
    chunk_start: usize,
    chunk_size: usize,
    events: bool,
    big_endian: bool,
    time: u64,
    done: bool,
}

impl<'a> Records<'a> {
    /// The records of `data`, a file of chunks of `chunk_size` bytes; `events` for an event
    /// file (timestamps, records without a length byte). Reads the first chunk header.
    pub(crate) fn new(data: &'a [u8], chunk_size: u64, events: bool) -> Result<Self, Problem> {
        let mut r = Records {
            data,
            pos: 0,
            chunk_start: 0,
            chunk_size: usize::try_from(chunk_size).unwrap_or(usize::MAX).max(1),
            events,
            big_endian: false,
            time: 0,
            done: false,
        };
        r.chunk_header(true)?;
        Ok(r)
    }

    /// Reads the header of the chunk at `self.pos` (`chunked`: with event numbers).
    fn chunk_header(&mut self, chunked: bool) -> Result<(), Problem> {
        let at = self.pos;
        let head = self.data.get(at..at + 2).ok_or_else(|| {
            Problem::at_offset(
                at as u64,
                "file ends where a chunk header (0x03 + byte order) was expected",
            )
        })?;
        if head[0] != CHUNK_HEADER {
            return Err(Problem::at_offset(
                at as u64,
                format!("expected a chunk header (byte 0x03), found 0x{:02x}", head[0]),
            ));
        }
        self.big_endian = match head[1] {
            LITTLE_ENDIAN => false,
            BIG_ENDIAN => true,
            b => {
                return Err(Problem::at_offset(
                    (at + 1) as u64,
                    format!("expected a byte order marker (0x42 or 0x23), found 0x{b:02x}"),
                ));
            }
        };
        self.pos = at + 2;
        if chunked {
            if self.data.len() < self.pos + 16 {
                return Err(Problem::at_offset(
                    self.pos as u64,
                    "file ends inside a chunk header (expected the first and last event numbers, 16 bytes)",
                ));
            }
            self.pos += 16;
        }
        Ok(())
    }

    /// The next record, `None` at the end-of-file record.
    ///
    /// # Errors
    /// A truncated or damaged file: the offset and what was expected there. Records before
    /// it were returned.
    pub(crate) fn next_record(&mut self) -> Result<Option<Record<'a>>, Problem> {
        loop {
            if self.done {
                return Ok(None);
            }
            let at = self.pos;
            let Some(&kind) = self.data.get(at) else {
                return Err(Problem::at_offset(
                    at as u64,
                    "file ends without its end-of-file record (0x02): truncated",
                ));
            };
            match kind {
                END_OF_FILE | END_OF_BUFFER => {
                    self.done = true;
                    return Ok(None);
                }
                END_OF_CHUNK => {
                    self.chunk_start = self.chunk_start.saturating_add(self.chunk_size);
                    self.pos = self.chunk_start;
                    if self.pos >= self.data.len() {
                        return Err(Problem::at_offset(
                            at as u64,
                            format!(
                                "end of chunk, but the file ends before the next chunk (expected at byte {}): truncated",
                                self.pos
                            ),
                        ));
                    }
                    self.chunk_header(true)?;
                    continue;
                }
                TIMESTAMP if self.events => {
                    let mut f = Fields::new(&self.data[at + 1..], at + 1, self.big_endian);
                    self.time = f.u64_full("timestamp").map_err(|_| {
                        Problem::at_offset(
                            at as u64,
                            "file ends inside a timestamp record (expected 8 bytes)",
                        )
                    })?;
                    self.pos = at + 9;
                    continue;
                }
                _ => {}
            }
            let (start, end) = if self.events && SINGLETON_EVENTS.contains(&kind) {
                let n = *self.data.get(at + 1).ok_or_else(|| truncated(at, kind))?;
                let len = match n {
                    0 | 0xff => 0,
                    n => usize::from(n),
                };
                (at + 1, at + 2 + len)
            } else {
                let n = *self.data.get(at + 1).ok_or_else(|| truncated(at, kind))?;
                if n == 0xff {
                    let mut f = Fields::new(
                        self.data.get(at + 2..).unwrap_or_default(),
                        at + 2,
                        self.big_endian,
                    );
                    let len = f.u64_full("record length").map_err(|_| truncated(at, kind))?;
                    let len = usize::try_from(len).unwrap_or(usize::MAX);
                    (at + 10, (at + 10).saturating_add(len))
                } else {
                    (at + 2, at + 2 + usize::from(n))
                }
            };
            let chunk_end = self.chunk_start.saturating_add(self.chunk_size);
            if end > self.data.len() || end > chunk_end {
                return Err(truncated(at, kind));
            }
            self.pos = end;
            if kind == ATTRIBUTE_LIST && self.events {
                continue;
            }
            return Ok(Some(Record {
                kind,
                offset: at,
                time: self.time,
                fields: Fields::new(&self.data[start..end], start, self.big_endian),
            }));
        }
    }
}

fn truncated(at: usize, kind: u8) -> Problem {
    Problem::at_offset(
        at as u64,
        format!("record of type {kind} is cut off (its length runs past the end of the file or chunk)"),
    )
}

/// The fields of an anchor file (`traces.otf2`) that reading needs (OTF2 source
/// `src/otf2_archive_int.c`, anchor file layout of trace format 2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Anchor {
    /// OTF2 version that wrote the archive, `major.minor.bugfix`.
    pub(crate) version: (u8, u8, u8),
    /// Chunk size of event files, bytes.
    pub(crate) chunk_size_events: u64,
    /// Chunk size of definition files, bytes.
    pub(crate) chunk_size_defs: u64,
    /// Number of locations.
    pub(crate) locations: u64,
    /// The creator (e.g. `Score-P 7.1`).
    pub(crate) creator: String,
}

/// Reads an anchor file.
///
/// Layout: chunk header (`0x03`, byte order), the string `OTF2`, anchor file version,
/// trace format, OTF2 version major/minor/bugfix (bytes), chunk sizes of events and of
/// definitions (8 bytes each), file substrate (1 = POSIX), compression (1 = none), number of
/// locations and of global definitions (8 bytes each), machine name, creator, description
/// (strings), then properties, trace id and snapshot/thumbnail counts (not needed here).
pub(crate) fn anchor(data: &[u8]) -> Result<Anchor, Problem> {
    let mut r = Records {
        data,
        pos: 0,
        chunk_start: 0,
        chunk_size: usize::MAX,
        events: false,
        big_endian: false,
        time: 0,
        done: false,
    };
    r.chunk_header(false)?;
    let mut f = Fields::new(&data[2..], 2, r.big_endian);
    let magic = f.string("magic")?;
    if magic != "OTF2" {
        return Err(Problem::at_offset(
            2,
            format!("expected the magic string `OTF2`, found `{magic}`"),
        ));
    }
    let _anchor_version = f.u8("anchor file version")?;
    let _trace_format = f.u8("trace format")?;
    let version = (
        f.u8("major version")?,
        f.u8("minor version")?,
        f.u8("bugfix version")?,
    );
    let chunk_size_events = f.u64_full("event chunk size")?;
    let chunk_size_defs = f.u64_full("definition chunk size")?;
    let substrate_at = f.offset();
    let substrate = f.u8("file substrate")?;
    let compression = f.u8("compression")?;
    if substrate != 1 {
        return Err(Problem::at_offset(
            substrate_at as u64,
            format!("file substrate {substrate}: only POSIX files (1) are read; SIONlib containers are not"),
        ));
    }
    if compression > 1 {
        return Err(Problem::at_offset(
            substrate_at as u64 + 1,
            format!("compression {compression}: only uncompressed archives (1) are read"),
        ));
    }
    let locations = f.u64_full("number of locations")?;
    let _definitions = f.u64_full("number of global definitions")?;
    let _machine = f.string("machine name")?;
    let creator = f.string("creator")?;
    for (what, size) in [
        ("event chunk size", chunk_size_events),
        ("definition chunk size", chunk_size_defs),
    ] {
        if size < 32 {
            return Err(Problem::at_offset(
                12,
                format!("{what} {size} is too small to hold a chunk"),
            ));
        }
    }
    Ok(Anchor {
        version,
        chunk_size_events,
        chunk_size_defs,
        locations,
        creator,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compressed_integers_little_and_big_endian() {
        let mut f = Fields::new(&[0, 1, 7, 2, 0x01, 0x02, 0xff, 3, 1, 2, 3], 0, false);
        assert_eq!(f.u64("a").unwrap(), 0);
        assert_eq!(f.u64("b").unwrap(), 7);
        assert_eq!(f.u64("c").unwrap(), 0x0201);
        assert_eq!(f.u32("d").unwrap(), u32::MAX);
        assert_eq!(f.u32("e").unwrap(), 0x030201);
        let mut f = Fields::new(&[2, 0x01, 0x02], 0, true);
        assert_eq!(f.u64("f").unwrap(), 0x0102);
        let mut f = Fields::new(&[9, 1], 5, false);
        let e = f.u64("g").unwrap_err();
        assert_eq!(e.offset, Some(5));
        let mut f = Fields::new(&[3, 1], 5, false);
        assert_eq!(f.u64("h").unwrap_err().offset, Some(6));
    }

    #[test]
    fn records_timestamps_singletons_and_end_of_file() {
        let mut file = vec![0x03, 0x42];
        file.extend([0u8; 16]);
        file.push(0x05);
        file.extend(1000u64.to_le_bytes());
        file.extend([12, 1, 3]); // enter region 3, no length byte
        file.extend([14, 4, 1, 1, 0, 0]); // a record with a length byte
        file.push(0x02);
        let mut r = Records::new(&file, 1 << 20, true).unwrap();
        let a = r.next_record().unwrap().unwrap();
        assert_eq!((a.kind, a.time, a.offset), (12, 1000, 27));
        assert_eq!(a.fields.clone().u32("region").unwrap(), 3);
        let b = r.next_record().unwrap().unwrap();
        assert_eq!((b.kind, b.offset), (14, 30));
        assert!(r.next_record().unwrap().is_none());
        // The same file cut before its end-of-file record.
        let cut = &file[..file.len() - 3];
        let mut r = Records::new(cut, 1 << 20, true).unwrap();
        r.next_record().unwrap();
        let e = r.next_record().unwrap_err();
        assert_eq!(e.offset, Some(30));
    }

    #[test]
    fn records_continue_in_the_next_chunk() {
        let chunk = |first: u64| {
            let mut c = vec![0x03, 0x42];
            c.extend(first.to_le_bytes());
            c.extend(0u64.to_le_bytes());
            c
        };
        let mut file = chunk(1);
        file.push(0x05);
        file.extend(10u64.to_le_bytes());
        file.extend([12, 1, 3]); // enter region 3
        file.push(0x00); // end of chunk; the rest of the chunk is unused
        file.resize(64, 0xee);
        file.extend(chunk(2));
        file.push(0x05);
        file.extend(20u64.to_le_bytes());
        file.extend([13, 1, 3]); // leave region 3
        file.push(0x02);
        let mut r = Records::new(&file, 64, true).unwrap();
        let a = r.next_record().unwrap().unwrap();
        assert_eq!((a.kind, a.time), (12, 10));
        let b = r.next_record().unwrap().unwrap();
        assert_eq!((b.kind, b.time, b.offset), (13, 20, 64 + 18 + 9));
        assert!(r.next_record().unwrap().is_none());
        // Cut inside the second chunk's header.
        let mut r = Records::new(&file[..70], 64, true).unwrap();
        r.next_record().unwrap();
        assert_eq!(r.next_record().unwrap_err().offset, Some(66));
        // Cut at the chunk boundary.
        let mut r = Records::new(&file[..64], 64, true).unwrap();
        r.next_record().unwrap();
        let e = r.next_record().unwrap_err();
        assert_eq!(e.offset, Some(30));
        assert!(e.message.contains("next chunk"), "{}", e.message);
    }
}
