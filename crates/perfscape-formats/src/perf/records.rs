//! Records of a perf.data file, copied out of linux-perf-data's buffers (inside a panic guard)
//! after a check that the crate's sample parser will not overflow on them.

use linux_perf_data::PerfFileRecord;
use linux_perf_data::linux_perf_event_reader::{CpuMode, EventRecord, RecordType};

/// A record copied out of the crate's buffers.
pub(super) enum Rec {
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

pub(super) fn owned_record(rec: PerfFileRecord<'_>) -> Rec {
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
        Ok(EventRecord::Mmap(m)) => mmap(
            m.pid,
            m.address,
            m.length,
            m.page_offset,
            m.cpu_mode,
            &m.path.as_slice(),
        ),
        Ok(EventRecord::Mmap2(m)) => mmap(
            m.pid,
            m.address,
            m.length,
            m.page_offset,
            m.cpu_mode,
            &m.path.as_slice(),
        ),
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

/// A mapping record (`MMAP` or `MMAP2`): kernel mappings (pid -1 or kernel CPU mode) are
/// marked so, paths named as perf shows them.
fn mmap(pid: i32, start: u64, len: u64, pgoff: u64, mode: CpuMode, path: &[u8]) -> Rec {
    let kernel = pid == -1 || mode == CpuMode::Kernel;
    Rec::Mmap {
        pid,
        start,
        len,
        pgoff,
        path: mapped_path(path, kernel),
        kernel,
    }
}

/// For a SAMPLE record whose call chain length does not fit the record, says so. The crate
/// multiplies that length by 8 unchecked (an overflow panic in builds with overflow checks),
/// so such records are rejected before it parses them. Offsets follow the crate's parse
/// order (linux-perf-event-reader 0.10 `SampleRecord::parse`).
pub(super) fn callchain_overflow(
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

pub(super) fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "panic".to_string())
}

/// The path of a mapping as perf shows it: the kernel's `[kernel.kallsyms]_text` (or
/// `_stext`) is `[kernel.kallsyms]`, and a kernel module `/lib/modules/../usb-net.ko` is
/// `[usb_net]`.
pub(super) fn mapped_path(raw: &[u8], kernel: bool) -> String {
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
