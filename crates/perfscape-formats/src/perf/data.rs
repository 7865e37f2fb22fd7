//! Binary `perf.data` files (`perf record`), read with the `linux-perf-data` crate.
//!
//! The file holds samples (pid, tid, CPU, period, call chain of instruction addresses when
//! recorded with `-g`), the memory mappings of each process (`MMAP`/`MMAP2`) and thread names
//! (`COMM`), but **no symbols**: `perf report`/`perf script` resolve addresses with the
//! binaries of the machine that recorded. So frames are named by address within their
//! mapped file, `0x11a6 (hot)` — the address `perf script` prints before the symbol — and a
//! note says so. See [`crate::perf`] for the mapping into the model.
//!
//! Before the crate sees the file, the header and the section table are checked against the
//! file size, so that a damaged file fails with the precise reason (and never makes the crate
//! allocate what the file does not hold): version 1 files (`PERFFILE`), a truncated header,
//! sections that point past the end of the file, impossible attribute sizes, an inconsistent
//! event description section. A file whose data section is cut short (perf killed, copy
//! interrupted) loads the records before the cut, reported as partial.

use super::{Aggregator, address_frame, basename, id_part, layout};
use crate::problem::{Parsed, Problem, nothing_loaded, read_bytes};
use crate::{LoadError, LoadOptions, Loaded};
use linux_perf_data::linux_perf_event_reader::{CpuMode, EventRecord, RecordType};
use linux_perf_data::{Feature, PerfFileReader, PerfFileRecord};
use perfscape_model::ThreadId;
use rustc_hash::FxHashMap as HashMap;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io::Cursor;
use std::path::Path;

/// Size of `struct perf_file_header` (magic, size, attr_size, three sections, feature bits).
const HEADER_SIZE: usize = 104;
/// Smallest `perf_event_attr` (`PERF_ATTR_SIZE_VER0`).
const ATTR_SIZE_VER0: u64 = 64;
/// Call chain entries at or above this value are context markers (`PERF_CONTEXT_MAX`).
const PERF_CONTEXT_MAX: u64 = u64::MAX - 4094;
/// `PERF_CONTEXT_KERNEL` (-128): the call chain entries that follow are kernel addresses.
const PERF_CONTEXT_KERNEL: u64 = (-128i64) as u64;
/// `PERF_CONTEXT_GUEST_KERNEL` (-2176).
const PERF_CONTEXT_GUEST_KERNEL: u64 = (-2176i64) as u64;

/// True when `head` starts with a perf.data magic number (file or pipe mode, either byte
/// order, or the unsupported version 1).
pub fn looks_like_perf_data(head: &[u8]) -> bool {
    head.starts_with(b"PERFILE2") || head.starts_with(b"2ELIFREP") || head.starts_with(b"PERFFILE")
}

struct Endian {
    big: bool,
}

impl Endian {
    fn u64(&self, b: &[u8], at: usize) -> Option<u64> {
        let s: [u8; 8] = b.get(at..at.checked_add(8)?)?.try_into().ok()?;
        Some(if self.big {
            u64::from_be_bytes(s)
        } else {
            u64::from_le_bytes(s)
        })
    }

    fn u32(&self, b: &[u8], at: usize) -> Option<u32> {
        let s: [u8; 4] = b.get(at..at.checked_add(4)?)?.try_into().ok()?;
        Some(if self.big {
            u32::from_be_bytes(s)
        } else {
            u32::from_le_bytes(s)
        })
    }

    fn put_u64(&self, b: &mut [u8], at: usize, v: u64) {
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
struct Checked<'a> {
    bytes: Cow<'a, [u8]>,
    pipe: bool,
    big_endian: bool,
    partial: Vec<Problem>,
    warnings: Vec<Problem>,
}

fn section(e: &Endian, b: &[u8], at: usize) -> (u64, u64) {
    (e.u64(b, at).unwrap_or(0), e.u64(b, at + 8).unwrap_or(0))
}

fn fits(offset: u64, size: u64, len: usize) -> bool {
    offset.checked_add(size).is_some_and(|end| end <= len as u64)
}

/// Walks the records of a data section (`start..end`): each has a header (type u32, misc u16,
/// size u16) of at least 8 bytes, and an `AUXTRACE` record (type 71) is followed by the
/// number of bytes its body's first u64 says. Returns where the complete, well-formed
/// records end and, if that is before `end`, why.
fn walk_records(b: &[u8], start: usize, end: usize, big: bool) -> (usize, Option<String>) {
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
fn check_event_desc(e: &Endian, s: &[u8]) -> Result<(), String> {
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
fn check(bytes: &[u8]) -> Result<Checked<'_>, Problem> {
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

/// A memory mapping: start, end, file offset, path.
#[derive(Clone)]
struct Mapping {
    end: u64,
    pgoff: u64,
    path: String,
    kernel: bool,
}

/// Mappings per process (`-1` = kernel), by start address.
#[derive(Default)]
struct Maps {
    by_pid: HashMap<i32, BTreeMap<u64, Mapping>>,
}

impl Maps {
    fn add(&mut self, pid: i32, start: u64, len: u64, pgoff: u64, path: String, kernel: bool) {
        let end = start.saturating_add(len);
        self.by_pid.entry(pid).or_default().insert(
            start,
            Mapping {
                end,
                pgoff,
                path,
                kernel,
            },
        );
    }

    /// The address `perf script` prints for `ip` and the mapped file, if a mapping covers it.
    /// `kernel` says whether the address is a kernel one (from the call chain's context
    /// markers or the sample's CPU mode); kernel addresses are looked up in the kernel's
    /// mappings, the others in the process's.
    fn resolve(&self, pid: i32, ip: u64, kernel: bool) -> Option<(u64, &str)> {
        let look = |pid: i32| -> Option<(u64, &Mapping)> {
            let m = self.by_pid.get(&pid)?;
            let (start, map) = m.range(..=ip).next_back()?;
            (ip < map.end).then_some((*start, map))
        };
        let (start, map) = if kernel { look(-1)? } else { look(pid)? };
        let addr = if map.kernel {
            ip
        } else {
            ip.wrapping_sub(start).wrapping_add(map.pgoff)
        };
        Some((addr, map.path.as_str()))
    }
}

/// A record copied out of the crate's buffers.
enum Rec {
    User,
    Bad(String),
    Lost(u64),
    LostSamples(u64),
    Mmap {
        pid: i32,
        start: u64,
        len: u64,
        pgoff: u64,
        path: String,
        kernel: bool,
    },
    Comm {
        pid: i32,
        tid: i32,
        name: String,
    },
    Sample {
        attr_index: usize,
        pid: Option<i32>,
        tid: Option<i32>,
        cpu: Option<u32>,
        period: Option<u64>,
        ip: Option<u64>,
        kernel_mode: bool,
        callchain: Vec<u64>,
    },
}

fn owned_record(rec: PerfFileRecord<'_>) -> Rec {
    let PerfFileRecord::EventRecord { attr_index, record } = rec else {
        return Rec::User;
    };
    if record.record_type == RecordType(13) {
        // PERF_RECORD_LOST_SAMPLES: u64 lost, in the file's byte order (the first 8 bytes
        // of the body; the byte order does not matter for a zero test, and perf writes the
        // count in native order, which the reader's endianness reflects).
        let body = record.data.as_slice();
        let n = body
            .get(..8)
            .and_then(|b| <[u8; 8]>::try_from(b).ok())
            .map(|b| {
                if record.parse_info.endian == linux_perf_data::Endianness::BigEndian {
                    u64::from_be_bytes(b)
                } else {
                    u64::from_le_bytes(b)
                }
            })
            .unwrap_or(0);
        return Rec::LostSamples(n);
    }
    if record.record_type == RecordType(9)
        && let Some(why) = callchain_overflow(&record)
    {
        return Rec::Bad(format!("(SAMPLE): {why}"));
    }
    match record.parse() {
        Err(err) => Rec::Bad(format!("({:?}): {err}", record.record_type)),
        Ok(EventRecord::Mmap(m)) => {
            let kernel = m.pid == -1 || m.cpu_mode == CpuMode::Kernel;
            Rec::Mmap {
                pid: m.pid,
                start: m.address,
                len: m.length,
                pgoff: m.page_offset,
                path: mapped_path(&m.path.as_slice(), kernel),
                kernel,
            }
        }
        Ok(EventRecord::Mmap2(m)) => {
            let kernel = m.pid == -1 || m.cpu_mode == CpuMode::Kernel;
            Rec::Mmap {
                pid: m.pid,
                start: m.address,
                len: m.length,
                pgoff: m.page_offset,
                path: mapped_path(&m.path.as_slice(), kernel),
                kernel,
            }
        }
        Ok(EventRecord::Comm(c)) => Rec::Comm {
            pid: c.pid,
            tid: c.tid,
            name: String::from_utf8_lossy(&c.name.as_slice()).into_owned(),
        },
        Ok(EventRecord::Lost(l)) => Rec::Lost(l.count),
        Ok(EventRecord::Sample(s)) => Rec::Sample {
            attr_index,
            pid: s.pid,
            tid: s.tid,
            cpu: s.cpu,
            period: s.period,
            ip: s.ip,
            kernel_mode: matches!(s.cpu_mode, CpuMode::Kernel | CpuMode::GuestKernel),
            callchain: s
                .callchain
                .map(|cc| (0..cc.len()).filter_map(|i| cc.get(i)).collect())
                .unwrap_or_default(),
        },
        Ok(_) => Rec::User,
    }
}

/// For a SAMPLE record whose call chain length does not fit the record, says so. The crate
/// multiplies that length by 8 unchecked (an overflow panic in builds with overflow checks),
/// so such records are rejected before it parses them. Offsets follow the crate's parse
/// order (linux-perf-event-reader 0.10 `SampleRecord::parse`).
fn callchain_overflow(
    record: &linux_perf_data::linux_perf_event_reader::RawEventRecord<'_>,
) -> Option<String> {
    use linux_perf_data::linux_perf_event_reader::{ReadFormat, SampleFormat};
    let info = &record.parse_info;
    let f = info.sample_format;
    if !f.contains(SampleFormat::CALLCHAIN) {
        return None;
    }
    let body = record.data.as_slice();
    let big = info.endian == linux_perf_data::Endianness::BigEndian;
    let u64_at = |at: usize| -> Option<u64> {
        let b: [u8; 8] = body.get(at..at.checked_add(8)?)?.try_into().ok()?;
        Some(if big {
            u64::from_be_bytes(b)
        } else {
            u64::from_le_bytes(b)
        })
    };
    let mut at = 0usize;
    for flag in [
        SampleFormat::IDENTIFIER,
        SampleFormat::IP,
        SampleFormat::TID,
        SampleFormat::TIME,
        SampleFormat::ADDR,
        SampleFormat::ID,
        SampleFormat::STREAM_ID,
        SampleFormat::CPU,
        SampleFormat::PERIOD,
    ] {
        if f.contains(flag) {
            at += 8;
        }
    }
    if f.contains(SampleFormat::READ) {
        let r = info.read_format;
        let extra = usize::from(r.contains(ReadFormat::TOTAL_TIME_ENABLED))
            + usize::from(r.contains(ReadFormat::TOTAL_TIME_RUNNING));
        if r.contains(ReadFormat::GROUP) {
            at += 8 * (1 + extra + usize::from(r.contains(ReadFormat::ID)));
        } else {
            let nr = u64_at(at)?;
            let entry = 8 * (1 + u64::from(r.contains(ReadFormat::ID)));
            let skip = nr.checked_mul(entry)?;
            at = at
                .checked_add(8 * (1 + extra))?
                .checked_add(usize::try_from(skip).ok()?)?;
        }
    }
    let nr = u64_at(at)?;
    let room = (body.len().saturating_sub(at + 8) / 8) as u64;
    (nr > room).then(|| format!("its call chain claims {nr} entries but the record has room for {room}"))
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "panic".to_string())
}

/// The path of a mapping as perf shows it: the kernel's `[kernel.kallsyms]_text` (or
/// `_stext`) is `[kernel.kallsyms]`, and a kernel module `/lib/modules/../usb-net.ko` is
/// `[usb_net]`.
fn mapped_path(raw: &[u8], kernel: bool) -> String {
    let p = String::from_utf8_lossy(raw);
    if p.starts_with("[kernel.kallsyms]") {
        return "[kernel.kallsyms]".to_string();
    }
    if kernel && !p.starts_with('[') {
        let base = p.rsplit('/').next().unwrap_or(&p);
        if let Some(i) = base.find(".ko") {
            return format!("[{}]", base[..i].replace('-', "_"));
        }
    }
    p.into_owned()
}

fn header_string(e: &Endian, s: &[u8]) -> Option<String> {
    let len = e.u32(s, 0)? as usize;
    let raw = s.get(4..4usize.checked_add(len)?)?;
    let end = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
    Some(String::from_utf8_lossy(&raw[..end]).trim().to_string())
}

fn header_string_list(e: &Endian, s: &[u8]) -> Option<Vec<String>> {
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

/// Parses a perf.data file into a profile (see the module documentation).
pub fn parse_perf_data(bytes: &[u8]) -> Result<Parsed, Problem> {
    let Checked {
        bytes: data,
        pipe,
        big_endian,
        mut partial,
        mut warnings,
    } = check(bytes)?;
    let e = Endian { big: big_endian };
    let reader = if pipe {
        PerfFileReader::parse_pipe(Cursor::new(&data[..]))
    } else {
        PerfFileReader::parse_file(Cursor::new(&data[..]))
    };
    let PerfFileReader {
        mut perf_file,
        mut record_iter,
    } = reader.map_err(|err| Problem::whole(format!("the perf.data header cannot be read: {err}")))?;
    let attrs = perf_file.event_attributes();
    let events: Vec<(String, bool)> = attrs
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let name = a.name().map_or_else(|| format!("event {i}"), str::to_string);
            let period = a
                .attributes()
                .sample_format
                .contains(linux_perf_data::linux_perf_event_reader::SampleFormat::PERIOD);
            (name, period)
        })
        .collect();
    let mut metadata: Vec<(String, String)> = vec![("Source format".into(), "perf.data".into())];
    for (f, key) in [
        (Feature::HOSTNAME, "perf hostname"),
        (Feature::OSRELEASE, "perf os release"),
        (Feature::VERSION, "perf version"),
        (Feature::ARCH, "perf arch"),
        (Feature::CPUDESC, "perf cpudesc"),
        (Feature::CPUID, "perf cpuid"),
    ] {
        if let Some(v) = perf_file
            .feature_section_data(f)
            .and_then(|s| header_string(&e, s))
        {
            metadata.push((key.into(), v));
        }
    }
    if let Some(v) = perf_file
        .feature_section_data(Feature::CMDLINE)
        .and_then(|s| header_string_list(&e, s))
    {
        metadata.push(("perf cmdline".into(), v.join(" ")));
    }
    if let Some(n) = perf_file
        .feature_section_data(Feature::NRCPUS)
        .and_then(|s| Some((e.u32(s, 0)?, e.u32(s, 4)?)))
    {
        metadata.push(("perf nrcpus online/available".into(), format!("{}/{}", n.1, n.0)));
    }
    metadata.push((
        "perf events".into(),
        events
            .iter()
            .map(|(n, _)| n.as_str())
            .collect::<Vec<_>>()
            .join(", "),
    ));
    let mut agg = Aggregator::new(layout(&events));
    let mut maps = Maps::default();
    let mut frame_cache: HashMap<(i32, u64), u32> = HashMap::default();
    let mut comms: HashMap<(i32, i32), String> = HashMap::default();
    let mut lost: u64 = 0;
    let mut bad_records = 0usize;
    let mut first_bad: Option<String> = None;
    let mut records = 0u64;
    let mut any_cpu = false;
    let mut no_tid = 0u64;
    let mut stack: Vec<u32> = Vec::new();
    let mut unmapped = 0u64;
    loop {
        // The crate can panic on corrupt input in builds with overflow checks (e.g. an
        // overflowing call chain length in linux-perf-event-reader 0.10's sample parser):
        // such a record ends the reading like an error, with the panic's message. Records are
        // copied out of the crate's buffers inside the guarded call.
        let next = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            record_iter
                .next_record(&mut perf_file)
                .map(|r| r.map(owned_record))
        }));
        let rec = match next {
            Ok(Ok(Some(r))) => r,
            Ok(Ok(None)) => break,
            Ok(Err(err)) => {
                partial.push(Problem::whole(format!(
                    "reading the records stopped after {records} records: {err}; the records before were read"
                )));
                break;
            }
            Err(panic) => {
                partial.push(Problem::whole(format!(
                    "the perf.data record decoder (linux-perf-data) failed after {records} records ({}); the records before were read",
                    panic_message(&*panic)
                )));
                break;
            }
        };
        records += 1;
        match rec {
            Rec::User => {}
            Rec::Bad(what) => {
                bad_records += 1;
                if first_bad.is_none() {
                    first_bad = Some(format!("record {records} {what}"));
                }
            }
            Rec::LostSamples(n) | Rec::Lost(n) => lost += n,
            Rec::Mmap {
                pid,
                start,
                len,
                pgoff,
                path,
                kernel,
            } => maps.add(if kernel { -1 } else { pid }, start, len, pgoff, path, kernel),
            Rec::Comm { pid, tid, name } => {
                comms.insert((pid, tid), name);
            }
            Rec::Sample {
                attr_index,
                pid: spid,
                tid: stid,
                cpu,
                period,
                ip,
                kernel_mode,
                callchain,
            } => {
                let pid = spid.unwrap_or(-1);
                let tid = stid.unwrap_or(-1);
                if stid.is_none() {
                    no_tid += 1;
                }
                any_cpu |= cpu.is_some();
                let thread =
                    ThreadId::new(id_part(i64::from(pid)), cpu.unwrap_or(0), id_part(i64::from(tid)));
                stack.clear();
                let mut push = |ip: u64, kernel: bool, agg: &mut Aggregator, unmapped: &mut u64| {
                    let id = *frame_cache
                        .entry((if kernel { -1 } else { pid }, ip))
                        .or_insert_with(|| match maps.resolve(pid, ip, kernel) {
                            Some((addr, path)) => agg
                                .frames
                                .intern(&address_frame(addr, Some(path)), basename(path)),
                            None => {
                                *unmapped += 1;
                                agg.frames.intern(&address_frame(ip, None), "")
                            }
                        });
                    stack.push(id);
                };
                if callchain.is_empty() {
                    if let Some(ip) = ip {
                        // As perf does: the sample's CPU mode picks kernel or process mappings
                        // (a skidded sample can name an address of the other side).
                        push(ip, kernel_mode, &mut agg, &mut unmapped);
                    }
                } else {
                    // Context markers say whose addresses follow.
                    let mut kernel = kernel_mode;
                    for ip in callchain {
                        if ip >= PERF_CONTEXT_MAX {
                            kernel = matches!(ip, PERF_CONTEXT_KERNEL | PERF_CONTEXT_GUEST_KERNEL);
                            continue;
                        }
                        push(ip, kernel, &mut agg, &mut unmapped);
                    }
                }
                if stack.is_empty() {
                    stack.push(agg.frames.intern("(no call chain)", ""));
                }
                stack.reverse();
                let event = attr_index.min(events.len().saturating_sub(1));
                agg.add(thread, event, period, &stack, None);
                if let Some(c) = comms.get(&(pid, tid)).or_else(|| comms.get(&(pid, pid))) {
                    agg.comm(thread, c);
                } else if pid == 0 {
                    // No COMM record names the idle task; perf calls it `swapper`.
                    agg.comm(thread, "swapper");
                }
            }
        }
    }
    if let Some(first) = first_bad {
        partial.push(Problem::whole(format!(
            "{bad_records} record(s) could not be decoded and were skipped (first: {first})"
        )));
    }
    let mut notes = vec![format!(
        "perf.data holds no symbols: frames are named by their address within the mapped file, e.g. `0x11a6 (hot)` (the address `perf script` prints); {} samples read",
        agg.samples
    )];
    if agg.samples == 0 {
        notes.push("the file has no samples".to_string());
    }
    if unmapped > 0 {
        notes.push(format!(
            "{unmapped} distinct addresses lie in no recorded memory mapping and are named by their absolute address"
        ));
    }
    if lost > 0 {
        warnings.push(Problem::whole(format!(
            "perf lost {lost} sample(s) while recording (LOST records): the profile undercounts"
        )));
    }
    if no_tid > 0 {
        notes.push(format!(
            "{no_tid} samples carry no pid/tid (recorded without PERF_SAMPLE_TID): they are on thread 4294967295.*.4294967295"
        ));
    }
    if any_cpu {
        notes.push(
            "the samples name their CPU: threads are `pid.cpu.tid`, the context being the CPU (a thread that migrated appears once per CPU)"
                .to_string(),
        );
    }
    if agg.cut_samples > 0 {
        warnings.push(Problem::whole(format!(
            "{} sample(s) have call chains deeper than {} frames: their middle frames were replaced by `{}`",
            agg.cut_samples,
            crate::stacks::MAX_DEPTH,
            crate::stacks::CUT_FRAME
        )));
    }
    let (profile, build) = agg.finish(&metadata)?;
    warnings.extend(build);
    Ok(Parsed {
        profile,
        warnings,
        partial,
        notes,
    })
}

/// Loads a perf.data file (see the module documentation).
pub fn read_perf_data(path: &Path, opts: &LoadOptions<'_>) -> Result<Loaded, LoadError> {
    if let Some(p) = opts.progress {
        p.start(1);
    }
    let bytes = read_bytes(path)?;
    let parsed = parse_perf_data(&bytes).map_err(|e| nothing_loaded(path, e))?;
    if let Some(p) = opts.progress {
        p.advance(1);
        p.finish();
    }
    Ok(parsed.into_loaded(path, "perf-data", bytes.len() as u64))
}
