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

use super::layout::{Checked, Endian, check, header_string, header_string_list};
use super::records::{Rec, owned_record, panic_message};
use super::{Aggregator, address_frame, basename, id_part, layout};
use crate::format::{self, FileScope, Format, Parts};
use crate::problem::{Parsed, Problem};
use linux_perf_data::{Feature, PerfFileReader};
use perfscape_model::ThreadId;
use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeMap;
use std::io::Cursor;

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
                let thread = ThreadId::new(id_part(i64::from(pid)), 0, id_part(i64::from(tid)));
                if let Some(c) = cpu {
                    agg.cpu(thread, c);
                }
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
            "the samples name their CPU: each thread's CPUs are in its metadata `cpus` (threads are `pid.0.tid`)"
                .to_string(),
        );
    }
    agg.into_parsed(&metadata, warnings, partial, notes)
}

/// Binary perf.data files written by `perf record`.
pub const FORMAT: Format = Format {
    name: "perf-data",
    description: "Linux perf.data files (perf record)",
    example: "perf-data/perf-data-converter-quipper/perf.data.callgraph-3.8",
    sniff: |p| p.head().is_some_and(looks_like_perf_data),
    read: format::Read::Bytes(parse_perf_data),
    gives: Parts::PROFILE,
    file_scope: FileScope::File,
};
