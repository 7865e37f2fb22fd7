//! The layout of a perf.data file, checked before linux-perf-data reads it: the header, the
//! sections against the file size, the records of the data section (sizes, AUXTRACE
//! lengths), the event description section. Damage gives a precise error, or a repaired copy
//! of the bytes (data section cut after the last good record, damaged feature entries
//! dropped) and a report of what was left out.

use crate::problem::Problem;
use std::borrow::Cow;

/// Size of `struct perf_file_header` (magic, size, attr_size, three sections, feature bits).
pub(super) const HEADER_SIZE: usize = 104;
/// Smallest `perf_event_attr` (`PERF_ATTR_SIZE_VER0`).
pub(super) const ATTR_SIZE_VER0: u64 = 64;
/// The byte order of a file.
pub(super) struct Endian {
    /// Big-endian (`2ELIFREP`).
    pub(super) big: bool,
}

impl Endian {
    pub(super) fn u64(&self, b: &[u8], at: usize) -> Option<u64> {
        let s: [u8; 8] = b.get(at..at.checked_add(8)?)?.try_into().ok()?;
        Some(if self.big {
            u64::from_be_bytes(s)
        } else {
            u64::from_le_bytes(s)
        })
    }

    pub(super) fn u32(&self, b: &[u8], at: usize) -> Option<u32> {
        let s: [u8; 4] = b.get(at..at.checked_add(4)?)?.try_into().ok()?;
        Some(if self.big {
            u32::from_be_bytes(s)
        } else {
            u32::from_le_bytes(s)
        })
    }

    pub(super) fn put_u64(&self, b: &mut [u8], at: usize, v: u64) {
        let bytes = if self.big {
            v.to_be_bytes()
        } else {
            v.to_le_bytes()
        };
        if let Some(dst) = b.get_mut(at..at + 8) {
            dst.copy_from_slice(&bytes);
        }
    }
}

/// What the header check found: the bytes to give the crate (repaired when the data section
/// is cut short or an optional section is damaged) and the problems met.
pub(super) struct Checked<'a> {
    pub(super) bytes: Cow<'a, [u8]>,
    pub(super) pipe: bool,
    pub(super) big_endian: bool,
    pub(super) partial: Vec<Problem>,
    pub(super) warnings: Vec<Problem>,
}

pub(super) fn section(e: &Endian, b: &[u8], at: usize) -> (u64, u64) {
    (e.u64(b, at).unwrap_or(0), e.u64(b, at + 8).unwrap_or(0))
}

pub(super) fn fits(offset: u64, size: u64, len: usize) -> bool {
    offset.checked_add(size).is_some_and(|end| end <= len as u64)
}

/// Walks the records of a data section (`start..end`): each has a header (type u32, misc u16,
/// size u16) of at least 8 bytes, and an `AUXTRACE` record (type 71) is followed by the
/// number of bytes its body's first u64 says. Returns where the complete, well-formed
/// records end and, if that is before `end`, why.
pub(super) fn walk_records(b: &[u8], start: usize, end: usize, big: bool) -> (usize, Option<String>) {
    let e = Endian { big };
    let mut at = start;
    while at < end {
        let (Some(ty), Some(size)) = (e.u32(b, at), b.get(at + 6..at + 8)) else {
            return (at, Some(format!("the record at byte {at} is cut short")));
        };
        let size = usize::from(if big {
            u16::from_be_bytes([size[0], size[1]])
        } else {
            u16::from_le_bytes([size[0], size[1]])
        });
        if size < 8 {
            return (
                at,
                Some(format!(
                    "the record at byte {at} declares {size} bytes, fewer than its 8-byte header"
                )),
            );
        }
        let mut next = at + size;
        if ty == 71 {
            let aux = e.u64(b, at + 8).unwrap_or(u64::MAX);
            match usize::try_from(aux).ok().and_then(|a| next.checked_add(a)) {
                Some(n) => next = n,
                None => {
                    return (
                        at,
                        Some(format!(
                            "the AUXTRACE record at byte {at} announces {aux} bytes of trace data"
                        )),
                    );
                }
            }
        }
        if next > end {
            return (
                at,
                Some(format!(
                    "the record at byte {at} ({size} bytes) runs past the end of the data"
                )),
            );
        }
        at = next;
    }
    (at, None)
}

/// Walks the `HEADER_EVENT_DESC` feature section; `Err` says what is inconsistent.
pub(super) fn check_event_desc(e: &Endian, s: &[u8]) -> Result<(), String> {
    let nr = e.u32(s, 0).ok_or("it is shorter than its 8-byte count fields")? as usize;
    let attr_size = e.u32(s, 4).ok_or("it is shorter than its 8-byte count fields")? as usize;
    if (attr_size as u64) < ATTR_SIZE_VER0 {
        return Err(format!(
            "its attribute size {attr_size} is below the 64 bytes of the oldest perf_event_attr"
        ));
    }
    let mut at = 8usize;
    for i in 0..nr {
        let fail = || {
            format!(
                "event {i} of {nr} does not fit in the section ({} bytes)",
                s.len()
            )
        };
        let size_field = e.u32(s, at + 4).ok_or_else(fail)? as usize;
        if size_field > attr_size {
            // (0 means the original 64-byte layout)
            return Err(format!(
                "event {i}: its attribute says {size_field} bytes, more than the section's attribute size {attr_size}"
            ));
        }
        at = at.checked_add(attr_size).ok_or_else(fail)?;
        let nr_ids = e.u32(s, at).ok_or_else(fail)? as usize;
        at += 4;
        let len = e.u32(s, at).ok_or_else(fail)? as usize;
        at = at.checked_add(4 + len).ok_or_else(fail)?;
        at = nr_ids
            .checked_mul(8)
            .and_then(|n| at.checked_add(n))
            .ok_or_else(fail)?;
        if at > s.len() {
            return Err(fail());
        }
    }
    Ok(())
}

/// Checks the header and sections of a perf.data file (see the module documentation).
pub(super) fn check(bytes: &[u8]) -> Result<Checked<'_>, Problem> {
    let len = bytes.len();
    if bytes.starts_with(b"PERFFILE") {
        return Err(Problem::at_offset(
            0,
            "this is a version 1 perf.data file (magic PERFFILE, written by perf before Linux 2.6.38); only version 2 (PERFILE2) is supported: convert it by running `perf report`/`perf inject` of a newer perf on it",
        ));
    }
    let big = if bytes.starts_with(b"PERFILE2") {
        false
    } else if bytes.starts_with(b"2ELIFREP") {
        true
    } else {
        let shown: String = bytes
            .iter()
            .take(8)
            .map(|b| if b.is_ascii_graphic() { *b as char } else { '.' })
            .collect();
        return Err(Problem::at_offset(
            0,
            format!("not a perf.data file: it starts with `{shown}`, expected the magic PERFILE2"),
        ));
    };
    let e = Endian { big };
    let Some(header_size) = e.u64(bytes, 8) else {
        return Err(Problem::at_offset(
            8,
            format!("the file is truncated inside its header ({len} bytes)"),
        ));
    };
    if header_size == 16 {
        // Pipe mode: records follow the 16-byte header up to the end of the file.
        let (valid_end, damage) = walk_records(bytes, 16, len, big);
        let mut partial = Vec::new();
        if let Some(why) = damage {
            partial.push(Problem::at_offset(
                valid_end as u64,
                format!("{why}: the records before it are read"),
            ));
        }
        return Ok(Checked {
            bytes: Cow::Owned(bytes[..valid_end].to_vec()),
            pipe: true,
            big_endian: big,
            partial,
            warnings: Vec::new(),
        });
    }
    if header_size < HEADER_SIZE as u64 {
        return Err(Problem::at_offset(
            8,
            format!(
                "the header declares {header_size} bytes, fewer than the {HEADER_SIZE} of a perf_file_header (or the 16 of a pipe-mode header)"
            ),
        ));
    }
    if len < HEADER_SIZE || header_size > len as u64 {
        return Err(Problem::at_offset(
            len as u64,
            format!(
                "the file is truncated inside its header: it has {len} bytes, the header needs {}",
                header_size.max(HEADER_SIZE as u64)
            ),
        ));
    }
    let attr_size = e.u64(bytes, 16).unwrap_or(0);
    let (attrs_off, attrs_size) = section(&e, bytes, 24);
    let (data_off, data_size) = section(&e, bytes, 40);
    let (types_off, types_size) = section(&e, bytes, 56);
    let mut out = bytes.to_vec();
    let mut partial = Vec::new();
    let mut warnings = Vec::new();
    if attrs_size > 0 {
        if !fits(attrs_off, attrs_size, len) {
            return Err(Problem::at_offset(
                24,
                format!(
                    "the attribute section (offset {attrs_off}, {attrs_size} bytes) extends past the end of the file ({len} bytes)"
                ),
            ));
        }
        if !(ATTR_SIZE_VER0..=4096).contains(&attr_size) {
            return Err(Problem::at_offset(
                16,
                format!(
                    "the header's attribute size is {attr_size} bytes; a perf_event_attr has 64 to a few hundred"
                ),
            ));
        }
        // Each entry: perf_event_attr (attr_size) + ids section (16 bytes).
        let entry = attr_size + 16;
        let mut at = attrs_off;
        while at + entry <= attrs_off + attrs_size {
            // The attribute's own size (0 means the original 64-byte layout).
            let own = e.u32(bytes, at as usize + 4).unwrap_or(0);
            if u64::from(own) > attr_size {
                return Err(Problem::at_offset(
                    at + 4,
                    format!(
                        "an event attribute declares {own} bytes, more than the header's attribute size {attr_size}"
                    ),
                ));
            }
            at += entry;
        }
    }
    if data_off < header_size {
        return Err(Problem::at_offset(
            40,
            format!("the data section starts at byte {data_off}, inside the {header_size}-byte header"),
        ));
    }
    if data_off > len as u64 {
        return Err(Problem::at_offset(
            40,
            format!(
                "the data section starts at byte {data_off}, past the end of the file ({len} bytes): truncated before any record"
            ),
        ));
    }
    // Data section: keep the complete, well-formed records.
    let intact = fits(data_off, data_size, len);
    let data_end = if intact { data_off + data_size } else { len as u64 };
    let (valid_end, damage) = walk_records(bytes, data_off as usize, data_end as usize, big);
    let new_size = valid_end as u64 - data_off;
    if !intact {
        partial.push(Problem::at_offset(
            valid_end as u64,
            format!(
                "the file ends {} bytes into its {data_size}-byte data section (truncated): the {new_size} bytes of complete records before the cut are read; the feature sections (host, command line, event names) are lost",
                len as u64 - data_off
            ),
        ));
    } else if let Some(why) = &damage {
        partial.push(Problem::at_offset(
            valid_end as u64,
            format!(
                "{why}: the records before it are read, the {} bytes after it are not",
                data_end - valid_end as u64
            ),
        ));
    }
    e.put_u64(&mut out, 48, new_size);
    if types_size > 0 {
        let ok = fits(types_off, types_size, len) && {
            let entry = attr_size + 16;
            let mut at = types_off;
            let mut ok = entry > 16;
            while ok && at + entry <= types_off + types_size {
                let (ids_off, ids_size) = section(&e, bytes, (at + attr_size) as usize);
                ok = fits(ids_off, ids_size, len);
                at += entry;
            }
            ok
        };
        if !ok {
            warnings.push(Problem::at_offset(
                56,
                "the (legacy) event types section points outside the file; it was ignored",
            ));
            e.put_u64(&mut out, 64, 0);
        }
    }
    // Feature sections: a table of (offset, size) right after the data section, one entry
    // per set bit, in bit order. The table is rewritten right after the records kept, with
    // the entries that point inside the file (and a consistent event description); the bits
    // of the others are cleared.
    let bit_set = |b: &[u8], bit: u32| {
        e.u64(b, 72 + (bit / 64) as usize * 8)
            .is_some_and(|w| w >> (bit % 64) & 1 == 1)
    };
    let bits: Vec<u32> = (0..256u32).filter(|&b| bit_set(bytes, b)).collect();
    let mut kept: Vec<(u32, u64, u64)> = Vec::new();
    if !bits.is_empty() && intact {
        let table_at = data_off + data_size;
        if !fits(table_at, bits.len() as u64 * 16, len) {
            warnings.push(Problem::at_offset(
                table_at,
                "the feature section table after the data section is cut short; host, command line and event names are not available",
            ));
        } else {
            for (k, &bit) in bits.iter().enumerate() {
                let entry_at = table_at + k as u64 * 16;
                let (off, size) = section(&e, bytes, entry_at as usize);
                if !fits(off, size, len) {
                    warnings.push(Problem::at_offset(
                        entry_at,
                        format!("feature section {bit} (offset {off}, {size} bytes) extends past the end of the file; it was ignored"),
                    ));
                    continue;
                }
                if bit == 12 {
                    let sec = &bytes[off as usize..(off + size) as usize];
                    if let Err(why) = check_event_desc(&e, sec) {
                        warnings.push(Problem::at_offset(
                            off,
                            format!("the event description section is inconsistent ({why}); event names come from the attribute section"),
                        ));
                        continue;
                    }
                }
                kept.push((bit, off, size));
            }
        }
    }
    for w in 0..4 {
        e.put_u64(&mut out, 72 + w * 8, 0);
    }
    let mut table = Vec::with_capacity(kept.len() * 16);
    for (bit, off, size) in &kept {
        let word = 72 + (bit / 64) as usize * 8;
        let w = e.u64(&out, word).unwrap_or(0) | (1u64 << (bit % 64));
        e.put_u64(&mut out, word, w);
        let mut entry = [0u8; 16];
        e.put_u64(&mut entry, 0, *off);
        e.put_u64(&mut entry, 8, *size);
        table.extend_from_slice(&entry);
    }
    // Write the table right after the records kept (over the damaged tail or the old
    // table); the sections it points to keep their offsets in the original bytes.
    let at = valid_end;
    if out.len() < at + table.len() {
        out.resize(at + table.len(), 0);
    }
    out[at..at + table.len()].copy_from_slice(&table);
    Ok(Checked {
        bytes: Cow::Owned(out),
        pipe: false,
        big_endian: big,
        partial,
        warnings,
    })
}

pub(super) fn header_string(e: &Endian, s: &[u8]) -> Option<String> {
    let len = e.u32(s, 0)? as usize;
    let raw = s.get(4..4usize.checked_add(len)?)?;
    let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
    Some(String::from_utf8_lossy(&raw[..end]).trim().to_string())
}

pub(super) fn header_string_list(e: &Endian, s: &[u8]) -> Option<Vec<String>> {
    let n = e.u32(s, 0)? as usize;
    let mut at = 4usize;
    let mut out = Vec::new();
    for _ in 0..n.min(4096) {
        let len = e.u32(s, at)? as usize;
        out.push(header_string(e, s.get(at..)?)?);
        at = at.checked_add(4 + len)?;
    }
    Some(out)
}
