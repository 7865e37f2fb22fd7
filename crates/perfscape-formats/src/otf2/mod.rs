//! OTF2 trace archives (Score-P, also written by TAU, Extrae and others): the anchor file
//! `traces.otf2`, the global definitions `traces.def`, and per location `traces/N.def`
//! (mapping tables, clock offsets) and `traces/N.evt` (events). Written from the OTF2
//! format's source and documentation (OTF2 3.x: `src/OTF2_Buffer.c` for the encoding,
//! `src/otf2_global_definitions_int.h`, `src/otf2_events_int.h` for the records); checked
//! against the `otf2` Python bindings (`tests/fixtures/otf2/make_reference.py`).
//!
//! Mapping:
//! - **threads**: one per location, in definition order; `node` = the location group (an
//!   MPI rank's process), `context` 0, `thread` = the location's position among the
//!   locations of its group. The process name is the group's (`MPI Rank 0`), the thread
//!   name the location's (`Master thread`).
//! - **times**: ticks on the location's clock, corrected to the global clock with the
//!   location's clock offsets (linear interpolation, as OTF2's reader does), then
//!   nanoseconds since the clock properties' global offset:
//!   `ns = round_half_up((tick - global_offset) * 1e9 / timer_resolution)`.
//! - **intervals**: enter/leave pairs per location, named by their region; a leave that does
//!   not match the innermost open region closes it anyway (warned), regions still open at the
//!   end of a location are closed at its last event (warned).
//! - **flows**: MPI point-to-point messages: each send (`MpiSend`, `MpiIsend`) matched with
//!   the receive (`MpiRecv`, or the `MpiIrecv` completion) of the same sender, receiver,
//!   communicator and tag in order (MPI's non-overtaking rule); from the send's time to the
//!   receive's, with the send record's message length as the flow's bytes. Ranks are
//!   resolved through the communicator's group to locations.
//! - **profile**: derived from the intervals ([`crate::trace_profile`]): per location and
//!   region calls, inclusive and exclusive time (`TIME`, microseconds), flat and callpath.
//! - **counters**: metric samples, per process (location group) a counter per metric member,
//!   a series per location (its id).
//! - **collectives**: each `MpiCollectiveBegin` with its `MpiCollectiveEnd` (nested pairs
//!   matched innermost first): the operation, the communicator (id and name), the root (for
//!   the rooted operations bcast, gather(v), scatter(v) and reduce, when defined), the bytes
//!   sent and received, begin and end, one row per location.
//! - Not kept: parameters,
//!   RMA, I/O and thread events: every record type not read is skipped by its length and
//!   counted in the notes, never an error. Not read: SIONlib containers and compressed
//!   archives (refused with the reason).
//!
//! A truncated or damaged file loads what comes before the damage; the report's partial
//! files name the file, the byte offset and what was expected there.

mod buffer;
mod defs;
mod events;

use crate::error::{FileError, LoadError, LoadReport};
use crate::format::{self, FileScope, Format, OpenOptions, Opened, Parts, Probe};
use crate::problem::Problem;
use defs::GlobalDefs;
use events::LocationEvents;
use perfscape_model::trace::{Collective, CollectiveOp, TraceThread};
use perfscape_model::{Profile, ThreadId, Trace, TraceBuilder};
use rayon::prelude::*;
use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// True when `head` starts like an OTF2 anchor file: a chunk header and the string `OTF2`.
pub fn looks_like_anchor(head: &[u8]) -> bool {
    head.len() >= 7 && head[0] == 0x03 && (head[1] == 0x42 || head[1] == 0x23) && &head[2..7] == b"OTF2\0"
}

/// The anchor file of `path`: the file itself, or the one `*.otf2` file of a directory.
fn anchor_of(path: &Path) -> Result<PathBuf, LoadError> {
    if !path.is_dir() {
        return Ok(path.to_path_buf());
    }
    let io = |source| LoadError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut found: Vec<PathBuf> = std::fs::read_dir(path)
        .map_err(io)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "otf2") && p.is_file())
        .collect();
    found.sort();
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err(LoadError::UnknownFormat {
            path: path.to_path_buf(),
            detail: "no OTF2 anchor file (*.otf2) in the directory".into(),
        }),
        _ => Err(LoadError::UnknownFormat {
            path: path.to_path_buf(),
            detail: format!(
                "{} OTF2 anchor files in the directory; open one of them: {}",
                found.len(),
                found
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }),
    }
}

/// What reading one location gave.
struct LocationRead {
    events: LocationEvents,
    local: defs::LocalDefs,
    problems: Vec<FileError>,
    bad: Option<FileError>,
    bytes: u64,
    files: usize,
}

/// Reads an OTF2 archive (a directory holding one anchor file, or the anchor file).
///
/// # Errors
/// The anchor file or the global definitions cannot be read at all ([`LoadError`] naming
/// the file and the byte offset). A location's damaged files do not stop the others: they
/// are reported as partial or bad files.
pub fn read(path: &Path, opts: &OpenOptions<'_>) -> Result<Opened, LoadError> {
    let anchor_path = anchor_of(path)?;
    let whole = |p: &Path, e: Problem| LoadError::NothingLoaded {
        path: path.to_path_buf(),
        errors: vec![e.in_file(p)],
    };
    let anchor_bytes = crate::input::read_file(&anchor_path)?;
    let anchor = buffer::anchor(&anchor_bytes).map_err(|e| whole(&anchor_path, e))?;
    let stem = anchor_path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let dir = anchor_path.parent().unwrap_or(Path::new(".")).to_path_buf();
    let def_path = dir.join(format!("{stem}.def"));
    let def_bytes = crate::input::read_file(&def_path)?;
    let mut report = LoadReport {
        format: FORMAT.name,
        files_read: 2,
        bytes_read: (anchor_bytes.len() + def_bytes.len()) as u64,
        ..LoadReport::default()
    };
    let (defs, def_problem) = defs::global(&def_bytes, anchor.chunk_size_defs);
    if let Some(p) = def_problem {
        if defs.timer_resolution == 0 || defs.locations.is_empty() {
            return Err(whole(&def_path, p));
        }
        report.partial_files.push(p.in_file(&def_path));
    }
    let loc_dir = dir.join(&stem);
    opts.progress_start(defs.locations.len() as u64);
    let pool = opts.thread_pool(path)?;
    // A batch of a few locations per thread is read in parallel, then nested and dropped
    // before the next (see `build_trace`).
    let batch = pool.current_num_threads().max(1) * 2;
    let mut read_batch = |range: std::ops::Range<usize>| -> Vec<LocationRead> {
        pool.install(|| {
            defs.locations[range]
                .par_iter()
                .map(|l| {
                    let r = read_location(&loc_dir, l.id, &anchor);
                    opts.progress_advance(1);
                    r
                })
                .collect()
        })
    };
    let built = assemble(path, &anchor, &defs, batch, &mut read_batch, &mut report);
    opts.progress_finish();
    let (trace, profile) = built.map_err(|source| LoadError::Build {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(Opened {
        profile,
        series: None,
        trace: opts.parts.trace.then_some(trace),
        report,
    })
}

/// Reads the locations `range` of the global definitions' list, in that order.
type ReadBatch<'a> = dyn FnMut(std::ops::Range<usize>) -> Vec<LocationRead> + 'a;

/// The trace and profile of the archive whose locations `read_batch` reads (`batch` at a
/// time), with the notes; the files read and their problems go into `report`.
fn assemble(
    path: &Path,
    anchor: &buffer::Anchor,
    defs: &GlobalDefs,
    batch: usize,
    read_batch: &mut ReadBatch<'_>,
    report: &mut LoadReport,
) -> Result<(Trace, Profile), perfscape_model::BuildError> {
    let (trace, reads) = build_trace(path, defs, batch, read_batch, report);
    let profile = derive_profile(path, &trace, report)?;
    report.notes.insert(
        0,
        format!(
            "OTF2 {}.{}.{} archive written by {}: {} locations (the anchor file says {})",
            anchor.version.0,
            anchor.version.1,
            anchor.version.2,
            if anchor.creator.is_empty() {
                "an unnamed tool"
            } else {
                &anchor.creator
            },
            defs.locations.len(),
            anchor.locations
        ),
    );
    report.notes.extend(skipped_note(defs, &reads));
    Ok((trace, profile))
}

/// One location's files as bytes: its local definitions and its event file (`None`: absent).
pub type LocationBytes<'a> = (Option<&'a [u8]>, Option<&'a [u8]>);

/// Parses an archive given as bytes, without the file system (for fuzzing and tests): the
/// anchor file, the global definitions, and per location in the order the definitions list
/// them its local definitions (if any) and its event file (a missing one: `None`). Problems
/// name the archive's usual file names (`traces.def`, `traces/N.evt`).
///
/// # Errors
/// The anchor file or the global definitions cannot be read at all.
pub fn parse_archive(
    anchor: &[u8],
    global_defs: &[u8],
    locations: &[LocationBytes<'_>],
) -> Result<(Trace, Profile, LoadReport), Problem> {
    let anchor = buffer::anchor(anchor)?;
    let mut report = LoadReport {
        format: FORMAT.name,
        ..LoadReport::default()
    };
    let (defs, def_problem) = defs::global(global_defs, anchor.chunk_size_defs);
    if let Some(p) = def_problem {
        if defs.timer_resolution == 0 || defs.locations.is_empty() {
            return Err(p);
        }
        report.partial_files.push(p.in_file("traces.def"));
    }
    let mut read_batch = |range: std::ops::Range<usize>| -> Vec<LocationRead> {
        range
            .map(|i| {
                let l = &defs.locations[i];
                let (def, evt) = locations.get(i).copied().unwrap_or((None, None));
                let dir = Path::new("traces");
                let mut r = parse_location(dir, l.id, &anchor, def);
                match evt {
                    Some(evt) => parse_events(&mut r, dir, l.id, &anchor, evt),
                    None => r.bad = Some(FileError::whole(dir.join(format!("{}.evt", l.id)), "missing")),
                }
                r
            })
            .collect()
    };
    let (trace, profile) = assemble(
        Path::new("traces.otf2"),
        &anchor,
        &defs,
        1,
        &mut read_batch,
        &mut report,
    )
    .map_err(|e| Problem::whole(format!("internal error: {e}")))?;
    // The byte sizes of files given as bytes are not counted as files read.
    report.files_read = 0;
    report.bytes_read = 0;
    Ok((trace, profile, report))
}

/// A location's local definitions from their bytes (`None`: the location has none).
fn parse_location(dir: &Path, id: u64, anchor: &buffer::Anchor, def: Option<&[u8]>) -> LocationRead {
    let mut out = LocationRead {
        events: LocationEvents::default(),
        local: defs::LocalDefs::default(),
        problems: Vec::new(),
        bad: None,
        bytes: 0,
        files: 0,
    };
    if let Some(bytes) = def {
        out.files += 1;
        out.bytes += bytes.len() as u64;
        let (local, problem) = defs::local(bytes, anchor.chunk_size_defs);
        out.problems
            .extend(problem.map(|p| p.in_file(dir.join(format!("{id}.def")))));
        out.local = local;
    }
    out
}

/// A location's events from the bytes of its event file.
fn parse_events(out: &mut LocationRead, dir: &Path, id: u64, anchor: &buffer::Anchor, evt: &[u8]) {
    out.files += 1;
    out.bytes += evt.len() as u64;
    let (events, problem) = events::read(evt, anchor.chunk_size_events, &out.local);
    out.events = events;
    out.problems
        .extend(problem.map(|p| p.in_file(dir.join(format!("{id}.evt")))));
}

/// Reads location `id`'s local definitions (optional) and events.
fn read_location(dir: &Path, id: u64, anchor: &buffer::Anchor) -> LocationRead {
    let def_path = dir.join(format!("{id}.def"));
    let (def, def_error) = if def_path.exists() {
        match crate::input::read_member(&def_path) {
            Ok(bytes) => (Some(bytes), None),
            Err(e) => (None, Some(e)),
        }
    } else {
        (None, None)
    };
    let mut out = parse_location(dir, id, anchor, def.as_deref());
    out.problems.extend(def_error);
    match crate::input::read_member(&dir.join(format!("{id}.evt"))) {
        Ok(bytes) => parse_events(&mut out, dir, id, anchor, &bytes),
        Err(e) => out.bad = Some(e),
    }
    out
}

/// The largest time kept, ns (see [`to_ns`]).
const MAX_NS: i128 = 1 << 62;

/// Nanoseconds since the global offset of global tick `tick` (see the module documentation).
fn to_ns(tick: u64, defs: &GlobalDefs) -> i64 {
    let d = i128::from(tick) - i128::from(defs.global_offset);
    let res = i128::from(defs.timer_resolution);
    let ns = (2 * d * 1_000_000_000 + res).div_euclid(2 * res);
    // Clamped to ±2^62 ns (±146 years), so that differences of two times never overflow.
    ns.clamp(-MAX_NS, MAX_NS) as i64
}

/// The trace: a lane per location, its regions as intervals, messages as flows. The
/// locations are read `batch` at a time by `read_batch`; each location's regions are nested
/// into its lane ([`TraceBuilder::finish_lane`]) and dropped before the next batch is read, so
/// that no more than a batch of locations' events is held besides the lanes. Returns the
/// trace and what was read of each location, its regions dropped (its messages, collectives
/// and metric samples were added to the trace; the counts are kept for the notes).
fn build_trace(
    archive: &Path,
    defs: &GlobalDefs,
    batch: usize,
    read_batch: &mut ReadBatch<'_>,
    report: &mut LoadReport,
) -> (Trace, Vec<LocationRead>) {
    let mut tb = TraceBuilder::new();
    let mut handle_of: HashMap<u64, u32> = HashMap::default();
    let mut per_group: HashMap<u32, u32> = HashMap::default();
    for l in &defs.locations {
        let n = per_group.entry(l.group).or_default();
        let group_name = defs.location_groups.get(&l.group).map(|g| g.name.clone());
        let h = tb.thread(TraceThread {
            id: ThreadId {
                node: l.group,
                context: 0,
                thread: *n,
            },
            process: l.group.to_string(),
            thread: l.id.to_string(),
            process_name: group_name,
            thread_name: Some(l.name.clone()),
        });
        *n += 1;
        handle_of.insert(l.id, h);
    }
    let mut regions = Regions {
        empty: tb.category(""),
        ..Regions::default()
    };
    let mut messages = Messages::default();
    let mut reads: Vec<LocationRead> = Vec::with_capacity(defs.locations.len());
    let n = defs.locations.len();
    let mut start = 0;
    while start < n {
        let end = (start + batch.max(1)).min(n);
        for r in read_batch(start..end) {
            report.files_read += r.files;
            report.bytes_read += r.bytes;
            report.partial_files.extend(r.problems.iter().cloned());
            report.bad_files.extend(r.bad.iter().cloned());
            reads.push(r);
        }
        for (l, r) in defs.locations[start..end].iter().zip(&mut reads[start..end]) {
            let h = handle_of[&l.id];
            add_regions(defs, r, h, &mut tb, &mut regions);
            tb.finish_lane(h);
            r.events.regions = Vec::new();
            messages.take_location(l, r, Some(h), &mut tb, defs);
            r.local = defs::LocalDefs::default();
        }
        start = end;
    }
    let Regions {
        mismatched, unclosed, ..
    } = regions;
    if mismatched > 0 {
        report.warnings.push(FileError::whole(
            archive,
            format!("{mismatched} leave event(s) did not match the innermost entered region; the innermost region was closed"),
        ));
    }
    if unclosed > 0 {
        report.warnings.push(FileError::whole(
            archive,
            format!("{unclosed} region(s) were still entered at the end of their location's events; closed at its last event"),
        ));
    }
    messages.finish(archive, &mut tb, defs, &handle_of, report);
    add_metrics(archive, &mut tb, defs, &mut reads, report);
    let (trace, notes) = tb.finish();
    for n in notes {
        report.warnings.push(FileError::whole(
            archive,
            format!("thread {}: {}", n.thread, n.message),
        ));
    }
    (trace, reads)
}

/// What nesting the regions of the locations keeps: the empty category, the trace name of
/// each region, and the counts for the warnings.
#[derive(Default)]
struct Regions {
    empty: u32,
    names: HashMap<u32, u32>,
    mismatched: u64,
    unclosed: u64,
}

/// Adds the enter/leave pairs of location read `r` as intervals of thread handle `h`.
fn add_regions(defs: &GlobalDefs, r: &LocationRead, h: u32, tb: &mut TraceBuilder, g: &mut Regions) {
    let empty = g.empty;
    let region_names = &mut g.names;
    let mut stack: Vec<(u32, i64, u64)> = Vec::new();
    let mut last = 0i64;
    for (seq, e) in r.events.regions.iter().enumerate() {
        let t = to_ns(e.time, defs);
        last = t;
        let seq = seq as u64;
        if e.enter {
            let name = *region_names.entry(e.region).or_insert_with(|| {
                let n = defs
                    .region_name(e.region)
                    .unwrap_or_else(|| format!("<region {}>", e.region));
                tb.name(&n)
            });
            stack.push((name, t, seq));
        } else if let Some((name, start, start_seq)) = stack.pop() {
            if region_names.get(&e.region) != Some(&name) {
                g.mismatched += 1;
            }
            tb.add_interval(h, start, t, name, empty, start_seq, seq);
        } else {
            g.mismatched += 1;
        }
    }
    let end_seq = r.events.regions.len() as u64;
    while let Some((name, start, start_seq)) = stack.pop() {
        g.unclosed += 1;
        tb.add_interval(h, start, last, name, empty, start_seq, end_seq);
    }
}

/// Metric samples as counter series: per process (location group), counter = the metric
/// member's name, series = the location's id.
fn add_metrics(
    archive: &Path,
    tb: &mut TraceBuilder,
    defs: &GlobalDefs,
    reads: &mut [LocationRead],
    report: &mut LoadReport,
) {
    let mut undefined = 0u64;
    for (l, r) in defs.locations.iter().zip(reads.iter_mut()) {
        let series = l.id.to_string();
        for m in &std::mem::take(&mut r.events.metrics) {
            let members = defs
                .metric_members(m.metric)
                .filter(|ms| ms.len() == m.values.len());
            let Some(members) = members else {
                undefined += 1;
                continue;
            };
            let t = to_ns(m.time, defs);
            for (member, &(kind, bits)) in members.iter().zip(&m.values) {
                // OTF2_Type: 1-4 unsigned, 5-8 signed, 9 float and 10 double (as a double's bits).
                let value = match kind {
                    5..=8 => bits as i64 as f64,
                    9 | 10 => f64::from_bits(bits),
                    _ => bits as f64,
                };
                tb.add_counter_value(l.group, &member.name, &series, t, value);
            }
        }
    }
    if undefined > 0 {
        report.warnings.push(FileError::whole(
            archive,
            format!("{undefined} metric sample(s) of an undefined metric, or with a different number of values than its members; not kept"),
        ));
    }
}

/// A message's end point: (sender location, receiver location, communicator, tag).
type Channel = (u64, u64, u32, u32);

/// The messages of the locations read so far, by channel, waiting to be matched
/// ([`Messages::take_location`], then [`Messages::finish`]).
#[derive(Default)]
struct Messages {
    /// Per channel, each send's time (ns) and bytes, in order.
    sends: BTreeMap<Channel, Vec<(i64, u64)>>,
    /// Per channel, each receive's time (ns), in order.
    recvs: BTreeMap<Channel, Vec<i64>>,
    unresolved: u64,
    n_sent: u64,
    bytes_sent: u64,
    collectives: u64,
    comm_names: HashMap<u32, u32>,
}

impl Messages {
    /// Takes location `l`'s messages (into the channels) and collectives (into `tb`, thread
    /// handle `h`) out of its read `r`, freeing them there.
    fn take_location(
        &mut self,
        l: &defs::Location,
        r: &mut LocationRead,
        h: Option<u32>,
        tb: &mut TraceBuilder,
        defs: &GlobalDefs,
    ) {
        let Messages {
            sends,
            recvs,
            unresolved,
            n_sent,
            bytes_sent,
            collectives,
            comm_names,
        } = self;
        for s in &std::mem::take(&mut r.events.sends) {
            *n_sent += 1;
            *bytes_sent = bytes_sent.saturating_add(s.bytes);
            match defs.rank_location(s.comm, s.peer, l.id) {
                Some(to) => sends
                    .entry((l.id, to, s.comm, s.tag))
                    .or_default()
                    .push((to_ns(s.time, defs), s.bytes)),
                None => *unresolved += 1,
            }
        }
        for m in &std::mem::take(&mut r.events.recvs) {
            match defs.rank_location(m.comm, m.peer, l.id) {
                Some(from) => recvs
                    .entry((from, l.id, m.comm, m.tag))
                    .or_default()
                    .push(to_ns(m.time, defs)),
                None => *unresolved += 1,
            }
        }
        *collectives += r.events.collectives.len() as u64;
        if let Some(h) = h {
            for c in &std::mem::take(&mut r.events.collectives) {
                let op = CollectiveOp::from_otf2(c.op);
                let rooted = matches!(
                    op,
                    CollectiveOp::Bcast
                        | CollectiveOp::Gather
                        | CollectiveOp::Gatherv
                        | CollectiveOp::Scatter
                        | CollectiveOp::Scatterv
                        | CollectiveOp::Reduce
                );
                let communicator_name = *comm_names
                    .entry(c.comm)
                    .or_insert_with(|| tb.name(&defs.comm_name(c.comm)));
                tb.add_collective(Collective {
                    thread: h,
                    op,
                    communicator: c.comm,
                    communicator_name,
                    root: (rooted && c.root != u32::MAX).then_some(c.root),
                    bytes_sent: c.bytes_sent,
                    bytes_received: c.bytes_received,
                    begin_ns: to_ns(c.begin, defs),
                    end_ns: to_ns(c.end, defs),
                });
            }
        }
    }

    /// Matches the sends with the receives of each channel and adds them as flows, with the
    /// notes and warnings.
    fn finish(
        self,
        archive: &Path,
        tb: &mut TraceBuilder,
        defs: &GlobalDefs,
        handle_of: &HashMap<u64, u32>,
        report: &mut LoadReport,
    ) {
        let Messages {
            mut sends,
            mut recvs,
            mut unresolved,
            n_sent,
            bytes_sent,
            collectives,
            ..
        } = self;
        let name = tb.name("MPI message");
        let category = tb.category("MPI");
        // At most one flow per send matched with a receive.
        let matched: usize = sends
            .iter()
            .map(|(k, s)| s.len().min(recvs.get(k).map_or(0, Vec::len)))
            .sum();
        tb.reserve_flows(matched);
        let (mut flows, mut unmatched) = (0u64, 0u64);
        while let Some((key, s)) = sends.pop_first() {
            let key = &key;
            let r = recvs.remove(key).unwrap_or_default();
            unmatched += s.len().abs_diff(r.len()) as u64;
            let (Some(&from), Some(&to)) = (handle_of.get(&key.0), handle_of.get(&key.1)) else {
                unresolved += s.len() as u64;
                continue;
            };
            for (i, (&(a, bytes), &b)) in s.iter().zip(&r).enumerate() {
                let comm = defs.comm_name(key.2);
                tb.add_message(
                    from,
                    a,
                    to,
                    b,
                    name,
                    category,
                    &format!("{comm} tag {} #{i}", key.3),
                    Some(bytes),
                );
                flows += 1;
            }
        }
        unmatched += recvs.values().map(|v| v.len() as u64).sum::<u64>();
        report.notes.push(format!(
        "{n_sent} MPI messages sent ({bytes_sent} bytes), {flows} matched with their receive; {collectives} MPI collective operations"
    ));
        if unmatched + unresolved > 0 {
            report.warnings.push(FileError::whole(
            archive,
            format!("{unmatched} MPI send(s) or receive(s) without their other side, {unresolved} whose peer rank names no location of its communicator; not drawn"),
        ));
        }
    }
}

/// The profile of the trace ([`crate::trace_profile`]): `TIME` in microseconds.
fn derive_profile(
    archive: &Path,
    trace: &Trace,
    report: &mut LoadReport,
) -> Result<Profile, perfscape_model::BuildError> {
    let (profile, notes) = crate::trace_profile::derive_profile(trace, "OTF2", "OTF2")?;
    report.warnings.extend(
        notes
            .into_iter()
            .map(|n| FileError::whole(archive, format!("thread {}: {}", n.thread, n.message))),
    );
    Ok(profile)
}

/// "skipped record types" notes.
fn skipped_note(defs: &GlobalDefs, reads: &[LocationRead]) -> Vec<String> {
    let mut out = Vec::new();
    let fmt = |m: &BTreeMap<u8, u64>| {
        m.iter()
            .map(|(k, n)| format!("type {k}: {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let d: BTreeMap<u8, u64> = defs.skipped.iter().map(|(&k, &v)| (k, v)).collect();
    if !d.is_empty() {
        out.push(format!(
            "global definition records not read (skipped): {}",
            fmt(&d)
        ));
    }
    let mut e: BTreeMap<u8, u64> = BTreeMap::new();
    for r in reads {
        for (&k, &v) in &r.events.skipped {
            *e.entry(k).or_default() += v;
        }
    }
    if !e.is_empty() {
        out.push(format!("event records not read (skipped): {}", fmt(&e)));
    }
    out
}

/// OTF2 trace archives.
pub const FORMAT: Format = Format {
    name: "otf2",
    description: "OTF2 trace archives (Score-P: a directory with traces.otf2 + traces.def + traces/, or the traces.otf2 anchor file)",
    example: "otf2/pipit-ping-pong-otf2-2rank",
    sniff: |p| match p {
        Probe::Dir { names, .. } => {
            names.iter().any(|n| n.ends_with(".otf2")) && names.iter().any(|n| n.ends_with(".def"))
        }
        Probe::File { head, .. } => looks_like_anchor(head),
    },
    read: format::Read::Path(read),
    gives: Parts {
        series: false,
        trace: true,
    },
    file_scope: FileScope::Directory,
};
