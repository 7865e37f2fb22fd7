//! TAU's own traces: per process and thread a binary `tautrace.N.C.T.trc` with its event
//! definitions `events.N.edf` (what TAU writes with `TAU_TRACE=1`), merged over the ranks
//! into one [`Trace`] and the profile derived from it.
//!
//! Format (TAU source `include/Profile/TauTrace.h`, `src/Profile/TauTrace.cpp`, and the
//! trace reader `utils/TAU_tf/src/TAU_tf.cpp`):
//! - a `.trc` file is a sequence of 24-byte records `{ev: i32, nid: u16, tid: u16, par: i64,
//!   ti: u64}` in the writing machine's byte order (found from the first record, which is
//!   always `EV_INIT` = 60000); `ti` is a wall-clock time in microseconds;
//! - an `.edf` file: a line `N dynamic_trace_events`, a comment line, then per event
//!   `id group tag "name" kind` with kind `EntryExit` (a timer: `par` is 1 on entry, -1 on
//!   exit), `TriggerValue` (a user event: `par` is the value), `par` or `none` (TAU's own
//!   events: 60000 `EV_INIT`, 60001 `FLUSH`, 60003 `FLUSH_CLOSE`, 60004 `FLUSH_INITM`, 60005
//!   `WALL_CLOCK`, 60006 `CONT_EVENT`, 60007 `MESSAGE_SEND`, 60008 `MESSAGE_RECV`);
//! - a message's `par` packs (TAU `TauTraceMsg`): length bits 0-15 in bits 0-15 and bits
//!   16-25 in bits 32-41, tag bits 0-7 in 16-23 and 8-15 in 48-55, the other rank's bits 0-7
//!   in 24-31 and 8-15 in 56-63, communicator bits 0-5 in 42-47.
//!
//! Mapping (as TAU's `tau_trace2json -chrome` does): a thread per (`nid`, context from the
//! file name, `tid`); times in nanoseconds since the earliest record of all files; timers
//! as nested intervals (category: the event's group); messages as flows from the send to
//! the receive of the same sender, receiver, tag and communicator in order; user events as
//! counter series of their process. TAU's own events are counted, not kept. A message's
//! bytes are the length packed in its send record (26 bits: lengths of 64 MiB and more are
//! cut to their low 26 bits, as TAU writes them).

use crate::error::{FileError, LoadError, LoadReport};
use crate::format::{self, FileScope, Format, OpenOptions, Opened, Parts, Probe};
use crate::problem::Problem;
use perfscape_model::trace::TraceThread;
use perfscape_model::{ThreadId, Trace, TraceBuilder};
use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Bytes per trace record.
pub const RECORD_BYTES: usize = 24;
const EV_INIT: i32 = 60000;
const MESSAGE_SEND: i32 = 60007;
const MESSAGE_RECV: i32 = 60008;

/// One event definition of an `.edf` file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventDef {
    /// The event's group (`MPI`, `TAU_USER`, ...).
    pub group: String,
    /// Its name.
    pub name: String,
    /// `EntryExit`, `TriggerValue`, `par` or `none`.
    pub kind: String,
}

/// Parses an `.edf` file: event id → definition.
///
/// # Errors
/// A line that is not `id group tag "name" kind`, with its line number.
pub fn parse_edf(text: &str) -> Result<HashMap<i32, EventDef>, Problem> {
    let mut out = HashMap::default();
    let mut lines = text.lines().enumerate();
    match lines.next() {
        Some((_, l)) if l.trim_end().ends_with("dynamic_trace_events") => {}
        _ => return Err(Problem::at_line(1, "expected `N dynamic_trace_events`")),
    }
    for (i, line) in lines {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = || {
            Problem::at_line(
                i + 1,
                format!("expected `id group tag \"name\" kind`, found `{line}`"),
            )
        };
        let (open, close) = match (line.find('"'), line.rfind('"')) {
            (Some(a), Some(b)) if b > a => (a, b),
            _ => return Err(bad()),
        };
        let mut head = line[..open].split_whitespace();
        let id: i32 = head.next().and_then(|s| s.parse().ok()).ok_or_else(bad)?;
        let group = head.next().ok_or_else(bad)?.to_string();
        let name = line[open + 1..close].to_string();
        let kind = line[close + 1..].trim().to_string();
        out.insert(id, EventDef { group, name, kind });
    }
    Ok(out)
}

/// One record of a `.trc` file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    /// Event id (an `.edf` id).
    pub ev: i32,
    /// Node (rank).
    pub nid: u16,
    /// Thread.
    pub tid: u16,
    /// Parameter: 1/-1 for entry/exit, a user event's value, a packed message.
    pub par: i64,
    /// Time, microseconds.
    pub ti: u64,
}

/// Parses a `.trc` file's records. A file whose length is not a multiple of 24 gives the
/// whole records and a problem at the first incomplete one.
///
/// # Errors
/// The first record is not `EV_INIT` in either byte order (not a TAU trace).
pub fn parse_trc(data: &[u8]) -> Result<(Vec<Record>, Option<Problem>), Problem> {
    let first = data.get(..RECORD_BYTES).ok_or_else(|| {
        Problem::at_offset(
            0,
            format!(
                "expected a 24-byte EV_INIT record, the file has {} bytes",
                data.len()
            ),
        )
    })?;
    let le = i32::from_le_bytes([first[0], first[1], first[2], first[3]]);
    let be = i32::from_be_bytes([first[0], first[1], first[2], first[3]]);
    let little = if le == EV_INIT {
        true
    } else if be == EV_INIT {
        false
    } else {
        return Err(Problem::at_offset(
            0,
            format!("expected the EV_INIT record (event 60000) first, found event {le}"),
        ));
    };
    let n = data.len() / RECORD_BYTES;
    let mut out = Vec::with_capacity(n);
    for c in data.chunks_exact(RECORD_BYTES) {
        let b = |r: std::ops::Range<usize>| -> [u8; 8] {
            let mut a = [0u8; 8];
            a[..r.len()].copy_from_slice(&c[r]);
            a
        };
        let (ev, nid, tid, par, ti) = if little {
            (
                i32::from_le_bytes([c[0], c[1], c[2], c[3]]),
                u16::from_le_bytes([c[4], c[5]]),
                u16::from_le_bytes([c[6], c[7]]),
                i64::from_le_bytes(b(8..16)),
                u64::from_le_bytes(b(16..24)),
            )
        } else {
            (
                i32::from_be_bytes([c[0], c[1], c[2], c[3]]),
                u16::from_be_bytes([c[4], c[5]]),
                u16::from_be_bytes([c[6], c[7]]),
                i64::from_be_bytes(b(8..16)),
                u64::from_be_bytes(b(16..24)),
            )
        };
        out.push(Record {
            ev,
            nid,
            tid,
            par,
            ti,
        });
    }
    let rest = data.len() % RECORD_BYTES;
    let problem = (rest != 0).then(|| {
        Problem::at_offset(
            (n * RECORD_BYTES) as u64,
            format!("truncated: the last record has {rest} of its 24 bytes"),
        )
    });
    Ok((out, problem))
}

/// A message's fields from its packed parameter: (other rank, tag, length in bytes,
/// communicator).
pub fn unpack_message(par: i64) -> (u32, u32, u64, u32) {
    let p = par as u64;
    let other = ((p >> 24) & 0xff) | (((p >> 56) & 0xff) << 8);
    let tag = ((p >> 16) & 0xff) | (((p >> 48) & 0xff) << 8);
    let length = (p & 0xffff) | (((p >> 32) & 0x3ff) << 16);
    let comm = (p >> 42) & 0x3f;
    (other as u32, tag as u32, length, comm as u32)
}

/// The trace files of a directory: (path, node, context, thread) of every
/// `tautrace.N.C.T.trc`, sorted.
fn trace_files(dir: &Path) -> Result<Vec<(PathBuf, u32, u32, u32)>, LoadError> {
    let io = |source| LoadError::Io {
        path: dir.to_path_buf(),
        source,
    };
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).map_err(io)? {
        let e = e.map_err(io)?;
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(mid) = name
            .strip_prefix("tautrace.")
            .and_then(|s| s.strip_suffix(".trc"))
        else {
            continue;
        };
        let nums: Vec<u32> = mid.split('.').filter_map(|s| s.parse().ok()).collect();
        if let [n, c, t] = nums[..] {
            out.push((e.path(), n, c, t));
        }
    }
    out.sort_by_key(|f| (f.1, f.2, f.3));
    Ok(out)
}

/// A thread's events, decoded: (record, its file's context).
struct ThreadRecords {
    id: ThreadId,
    records: Vec<Record>,
    edf: HashMap<i32, EventDef>,
}

/// Reads a directory of TAU traces (`tautrace.N.C.T.trc` + `events.N.edf`).
///
/// # Errors
/// No trace file could be read ([`LoadError::NothingLoaded`] with each file's reason).
pub fn read(path: &Path, opts: &OpenOptions<'_>) -> Result<Opened, LoadError> {
    let dir = if path.is_dir() {
        path
    } else {
        path.parent().unwrap_or(Path::new("."))
    };
    let files = trace_files(dir)?;
    let mut report = LoadReport {
        format: FORMAT.name,
        ..LoadReport::default()
    };
    let mut edfs: HashMap<u32, HashMap<i32, EventDef>> = HashMap::default();
    let mut threads = Vec::new();
    opts.progress_start(files.len() as u64);
    for (trc, node, context, thread) in &files {
        opts.progress_advance(1);
        let edf_path = dir.join(format!("events.{node}.edf"));
        if !edfs.contains_key(node) {
            let text = crate::input::read_member(&edf_path).and_then(|b| {
                report.files_read += 1;
                report.bytes_read += b.len() as u64;
                parse_edf(&String::from_utf8_lossy(&b)).map_err(|p| p.in_file(&edf_path))
            });
            match text {
                Ok(d) => {
                    edfs.insert(*node, d);
                }
                Err(e) => {
                    report.bad_files.push(e);
                    report.bad_files.push(FileError::whole(
                        trc,
                        format!(
                            "not read: its event definitions {} could not be read",
                            edf_path.display()
                        ),
                    ));
                    continue;
                }
            }
        }
        let bytes = match crate::input::read_member(trc) {
            Ok(b) => b,
            Err(e) => {
                report.bad_files.push(e);
                continue;
            }
        };
        report.files_read += 1;
        report.bytes_read += bytes.len() as u64;
        match parse_trc(&bytes) {
            Ok((records, problem)) => {
                report.partial_files.extend(problem.map(|p| p.in_file(trc)));
                threads.push(ThreadRecords {
                    id: ThreadId {
                        node: *node,
                        context: *context,
                        thread: *thread,
                    },
                    records,
                    edf: edfs.get(node).cloned().unwrap_or_default(),
                });
            }
            Err(p) => report.bad_files.push(p.in_file(trc)),
        }
    }
    opts.progress_finish();
    if threads.is_empty() {
        return Err(LoadError::NothingLoaded {
            path: path.to_path_buf(),
            errors: if report.bad_files.is_empty() {
                vec![FileError::whole(dir, "no tautrace.N.C.T.trc file")]
            } else {
                report.bad_files
            },
        });
    }
    let trace = build_trace(path, &threads, &mut report);
    let (profile, notes) =
        crate::trace_profile::derive_profile(&trace, "TAU trace", "TAU").map_err(|source| {
            LoadError::Build {
                path: path.to_path_buf(),
                source,
            }
        })?;
    report.warnings.extend(
        notes
            .into_iter()
            .map(|n| FileError::whole(path, format!("thread {}: {}", n.thread, n.message))),
    );
    Ok(Opened {
        profile,
        series: None,
        trace: opts.parts.trace.then_some(trace),
        report,
    })
}

/// Parses a run given as bytes, without the file system (for fuzzing and tests): per
/// thread its id, its rank's `.edf` text and its `.trc` bytes. Problems name the usual file
/// names (`events.N.edf`, `tautrace.N.C.T.trc`).
///
/// # Errors
/// No thread could be read (the first problem).
pub fn parse_run(
    threads: &[(ThreadId, &[u8], &[u8])],
) -> Result<(Trace, perfscape_model::Profile, LoadReport), Problem> {
    let mut report = LoadReport {
        format: FORMAT.name,
        ..LoadReport::default()
    };
    let mut read = Vec::new();
    let mut first: Option<Problem> = None;
    for (id, edf, trc) in threads {
        let trc_name = format!("tautrace.{}.{}.{}.trc", id.node, id.context, id.thread);
        let edf = match parse_edf(&String::from_utf8_lossy(edf)) {
            Ok(d) => d,
            Err(p) => {
                report
                    .bad_files
                    .push(p.clone().in_file(format!("events.{}.edf", id.node)));
                first.get_or_insert(p);
                continue;
            }
        };
        match parse_trc(trc) {
            Ok((records, problem)) => {
                report.partial_files.extend(problem.map(|p| p.in_file(&trc_name)));
                read.push(ThreadRecords {
                    id: *id,
                    records,
                    edf,
                });
            }
            Err(p) => {
                report.bad_files.push(p.clone().in_file(&trc_name));
                first.get_or_insert(p);
            }
        }
    }
    if read.is_empty() {
        return Err(first.unwrap_or_else(|| Problem::whole("no thread")));
    }
    let path = Path::new("tautrace");
    let trace = build_trace(path, &read, &mut report);
    let (profile, notes) = crate::trace_profile::derive_profile(&trace, "TAU trace", "TAU")
        .map_err(|e| Problem::whole(format!("internal error: {e}")))?;
    report.warnings.extend(
        notes
            .into_iter()
            .map(|n| FileError::whole(path, format!("thread {}: {}", n.thread, n.message))),
    );
    Ok((trace, profile, report))
}

/// A message end point: (sender node, receiver node, tag, communicator).
type Channel = (u32, u32, u32, u32);

fn build_trace(path: &Path, threads: &[ThreadRecords], report: &mut LoadReport) -> Trace {
    let origin = threads
        .iter()
        .flat_map(|t| t.records.iter().map(|r| r.ti))
        .min()
        .unwrap_or(0);
    // Clamped to 2^62 ns (146 years), so that differences of two times never overflow.
    let ns = |ti: u64| ti.saturating_sub(origin).saturating_mul(1000).min(1 << 62) as i64;
    let mut tb = TraceBuilder::new();
    let mut sends: BTreeMap<Channel, Vec<(u32, i64, u64)>> = BTreeMap::new();
    let mut recvs: BTreeMap<Channel, Vec<(u32, i64)>> = BTreeMap::new();
    let (mut tau_events, mut unknown, mut mismatched, mut unclosed) = (0u64, 0u64, 0u64, 0u64);
    for t in threads {
        let h = tb.thread(TraceThread {
            id: t.id,
            process: t.id.node.to_string(),
            thread: t.id.thread.to_string(),
            process_name: None,
            thread_name: None,
        });
        let mut names: HashMap<i32, (u32, u32)> = HashMap::default();
        let mut stack: Vec<(i32, i64, u64)> = Vec::new();
        let mut last = 0i64;
        for (seq, r) in t.records.iter().enumerate() {
            let seq = seq as u64;
            let time = ns(r.ti);
            last = time;
            match r.ev {
                MESSAGE_SEND | MESSAGE_RECV => {
                    let (other, tag, len, comm) = unpack_message(r.par);
                    if r.ev == MESSAGE_SEND {
                        sends
                            .entry((t.id.node, other, tag, comm))
                            .or_default()
                            .push((h, time, len));
                    } else {
                        recvs
                            .entry((other, t.id.node, tag, comm))
                            .or_default()
                            .push((h, time));
                    }
                    continue;
                }
                ev if ev >= EV_INIT => {
                    tau_events += 1;
                    continue;
                }
                _ => {}
            }
            let Some(def) = t.edf.get(&r.ev) else {
                unknown += 1;
                continue;
            };
            match def.kind.as_str() {
                "EntryExit" if r.par == 1 => stack.push((r.ev, time, seq)),
                "EntryExit" => match stack.pop() {
                    Some((ev, start, start_seq)) => {
                        if ev != r.ev {
                            mismatched += 1;
                        }
                        let def = &t.edf[&ev];
                        let (name, cat) = *names
                            .entry(ev)
                            .or_insert_with(|| (tb.name(&def.name), tb.category(&def.group)));
                        tb.add_interval(h, start, time, name, cat, start_seq, seq);
                    }
                    None => mismatched += 1,
                },
                "TriggerValue" => tb.add_counter_value(t.id.node, &def.name, &def.name, time, r.par as f64),
                _ => tau_events += 1,
            }
        }
        let end_seq = t.records.len() as u64;
        while let Some((ev, start, start_seq)) = stack.pop() {
            unclosed += 1;
            let def = &t.edf[&ev];
            let (name, cat) = (tb.name(&def.name), tb.category(&def.group));
            tb.add_interval(h, start, last, name, cat, start_seq, end_seq);
        }
    }
    let warn = |n: u64, what: &str, report: &mut LoadReport| {
        if n > 0 {
            report
                .warnings
                .push(FileError::whole(path, format!("{n} {what}")));
        }
    };
    warn(
        unknown,
        "record(s) of events not defined in their events.N.edf; not kept",
        report,
    );
    warn(
        mismatched,
        "exit record(s) that did not match the innermost entered timer; it was closed",
        report,
    );
    warn(
        unclosed,
        "timer(s) still entered at the end of their thread; closed at its last record",
        report,
    );
    let name = tb.name("MPI");
    let category = tb.category("Message");
    let (mut flows, mut unmatched) = (0u64, 0u64);
    for (key, s) in &sends {
        let r = recvs.remove(key).unwrap_or_default();
        unmatched += s.len().abs_diff(r.len()) as u64;
        for (i, (&(fh, ft, len), &(th, tt))) in s.iter().zip(&r).enumerate() {
            tb.add_message(
                fh,
                ft,
                th,
                tt,
                name,
                category,
                &format!("{}>{} tag {} comm {} #{i}", key.0, key.1, key.2, key.3),
                Some(len),
            );
            flows += 1;
        }
    }
    unmatched += recvs.values().map(|v| v.len() as u64).sum::<u64>();
    warn(
        unmatched,
        "message send(s) or receive(s) without their other side; not drawn",
        report,
    );
    report.notes.push(format!(
        "TAU trace: {} threads, {flows} messages, {tau_events} records of TAU's own events (EV_INIT, WALL_CLOCK, ...) not kept",
        threads.len()
    ));
    let (trace, notes) = tb.finish();
    for n in notes {
        report.warnings.push(FileError::whole(
            path,
            format!("thread {}: {}", n.thread, n.message),
        ));
    }
    trace
}

/// TAU traces.
pub const FORMAT: Format = Format {
    name: "tau-trace",
    description: "TAU traces: a directory of tautrace.N.C.T.trc files with their events.N.edf definitions (TAU_TRACE=1)",
    example: "tau-real/mpi-stencil-np4-trace",
    sniff: |p| match p {
        Probe::Dir { names, .. } => {
            names
                .iter()
                .any(|n| n.starts_with("tautrace.") && n.ends_with(".trc"))
                && names
                    .iter()
                    .any(|n| n.starts_with("events.") && n.ends_with(".edf"))
        }
        Probe::File { .. } => false,
    },
    read: format::Read::Path(read),
    gives: Parts {
        series: false,
        trace: true,
    },
    file_scope: FileScope::Directory,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_unpack_as_tau_packs_them() {
        // TAU's example: type 0xAABB, other 0xCCDD, length 0xDEADBEEF (26 bits kept).
        let (xtype, xother, xlength, xcomm) = (0xAABBu64, 0xCCDDu64, 0x02AD_BEEFu64, 5u64);
        let par = (xlength >> 16 << 54 >> 22)
            | ((xtype >> 8 & 0xFF) << 48)
            | ((xother >> 8 & 0xFF) << 56)
            | (xlength & 0xFFFF)
            | ((xtype & 0xFF) << 16)
            | ((xother & 0xFF) << 24)
            | (xcomm << 58 >> 16);
        assert_eq!(unpack_message(par as i64), (0xCCDD, 0xAABB, 0x02AD_BEEF, 5));
    }

    #[test]
    fn edf_lines() {
        let d = parse_edf("2 dynamic_trace_events\n# FunctionId Group Tag \"Name Type\" Parameters\n4 TAU_DEFAULT 0 \"main int (int, char **)\" EntryExit\n60007 TAU_MESSAGE -7 \"MESSAGE_SEND\" par\n").unwrap();
        assert_eq!(d[&4].name, "main int (int, char **)");
        assert_eq!(d[&4].group, "TAU_DEFAULT");
        assert_eq!(d[&60007].kind, "par");
        assert_eq!(
            parse_edf("2 dynamic_trace_events\n4 X 0 main EntryExit\n")
                .unwrap_err()
                .line,
            Some(2)
        );
    }

    #[test]
    fn times_centuries_apart_do_not_overflow() {
        // A fuzz finding: records 2^64 us apart; times are clamped to 2^62 ns and the
        // derived profile's sums saturate.
        let rec = |ev: i32, par: i64, ti: u64| {
            let mut b = Vec::new();
            b.extend(ev.to_le_bytes());
            b.extend([0u8; 4]);
            b.extend(par.to_le_bytes());
            b.extend(ti.to_le_bytes());
            b
        };
        let mut trc = rec(EV_INIT, 3, 0);
        for _ in 0..4 {
            trc.extend(rec(4, 1, 0));
            trc.extend(rec(4, -1, u64::MAX));
        }
        let edf = b"1 dynamic_trace_events\n4 TAU_USER 0 \"main\" EntryExit\n";
        let id = ThreadId {
            node: 0,
            context: 0,
            thread: 0,
        };
        let (trace, profile, _) = parse_run(&[(id, &edf[..], &trc[..])]).unwrap();
        assert_eq!(trace.lane(0).end_ns()[0], 1 << 62);
        assert_eq!(profile.threads().len(), 1);
    }
}
