//! Reading a TAU run directory: `profile.N.C.T` files, or one `MULTI__<METRIC>/` directory
//! per metric, merged into one [`perfscape_model::Profile`].
//!
//! Files are parsed in parallel (rayon) in chunks of at most 256 threads
//! (`chunk_lengths`), and each chunk is merged into the [`ProfileBuilder`] in thread order,
//! so the result is identical for any number of worker threads and memory stays bounded by
//! three chunks of parsed threads (one being merged, one waiting, one being parsed).
//!
//! Semantics follow ParaProf (TAU's `perfdmf` `TauDataSource`) so that every number agrees
//! with TAU's own tools:
//! - a timer line with zero calls does not count as the thread having the event (the event is
//!   still listed); if such a line carries non-zero values a warning says they were left out;
//! - a name listed twice in one file is summed;
//! - calls, subcalls, user events and metadata come from the first metric's file;
//! - the metric name is the `Metric Name` metadata value, else the `_MULTI_<METRIC>` of line 1,
//!   else the `MULTI__<METRIC>` directory name, else `Time`.
//!
//! Unlike ParaProf, negative values are kept as written (ParaProf replaces them by 0) and a
//! warning names the file and line.

use super::metadata::BlockTemplate;
use super::profile_text::{
    Marks, ProfileFile, TimerTemplate, decode_text, file_warnings, parse_profile_text_by,
    profile_text_metric_name,
};
use crate::error::{FileError, LoadError, LoadReport};
use crate::format::{self, FileScope, Format, OpenOptions, Opened, Parts, Probe};
use perfscape_model::{EventId, MetadataTemplate, Metric, MetricValue, ProfileBuilder, ThreadData, ThreadId};
use rayon::prelude::*;
use rustc_hash::FxHashMap as HashMap;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Threads parsed per parallel chunk before merging (at most; see [`chunk_lengths`]).
const CHUNK_THREADS: usize = 256;

/// The fewest threads in a chunk, unless fewer are left.
const CHUNK_THREADS_MIN: usize = 32;

/// The lengths of the chunks `n` threads are parsed and merged in: [`CHUNK_THREADS`] each,
/// then, over the last `2 * CHUNK_THREADS`, half of what is left each time (down to
/// [`CHUNK_THREADS_MIN`]). The last chunk's merge runs after every parse is done, with one
/// core idle, so it is kept short: 256, ..., 256, 128, 64, 32, 32 rather than a last 256 (at
/// 4,096 ranks a merge of 256 threads took about 3 ms).
fn chunk_lengths(n: usize) -> impl Iterator<Item = usize> {
    let mut left = n;
    std::iter::from_fn(move || {
        if left == 0 {
            return None;
        }
        let len = if left > 2 * CHUNK_THREADS {
            CHUNK_THREADS
        } else {
            (left / 2).max(CHUNK_THREADS_MIN).min(left)
        };
        left -= len;
        Some(len)
    })
}

/// The thread address in a TAU profile file name `profile.<node>.<context>.<thread>`, or
/// `None` if `name` is not exactly of that form.
pub fn profile_file_thread(name: &str) -> Option<ThreadId> {
    name.strip_prefix("profile.")?.parse().ok()
}

/// The profile files of one metric: a directory and its `profile.N.C.T` files by thread.
#[derive(Debug, Clone)]
pub(crate) struct MetricSet {
    /// Directory label for messages: `""` for the run directory, else `MULTI__<METRIC>`.
    label: String,
    /// The profile files, by thread.
    files: BTreeMap<ThreadId, PathBuf>,
    /// The threads whose file is listed as a link, not as a regular file: read after
    /// checking what the link points to ([`crate::input::read_member_into`]), the others
    /// read as listed ([`crate::input::read_listed_file_into`]).
    links: BTreeSet<ThreadId>,
}

/// The `profile.N.C.T` files of `dir` (regular files and links), the threads of those that
/// are links, and the names of the other entries.
type Listing = (BTreeMap<ThreadId, PathBuf>, BTreeSet<ThreadId>, Vec<String>);

/// Lists `dir`, or takes its entries from `listed` (the format detection's listing of it).
fn list_profile_files(dir: &Path, listed: Option<&[std::fs::DirEntry]>) -> Result<Listing, std::io::Error> {
    let mut files = BTreeMap::new();
    let mut links = BTreeSet::new();
    let mut others = Vec::new();
    let mut add = |entry: &std::fs::DirEntry| {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { return };
        if let Some(t) = profile_file_thread(name) {
            let Ok(kind) = entry.file_type() else { return };
            if kind.is_file() || kind.is_symlink() {
                files.insert(t, entry.path());
                if !kind.is_file() {
                    links.insert(t);
                }
            }
        } else {
            others.push(name.to_string());
        }
    };
    match listed {
        Some(entries) => entries.iter().for_each(&mut add),
        None => {
            for entry in std::fs::read_dir(dir)? {
                add(&entry?);
            }
        }
    }
    Ok((files, links, others))
}

/// TAU text profiles: a run directory of `profile.N.C.T` files (or `MULTI__<metric>/`
/// directories holding them), or one such file.
pub const FORMAT: Format = Format {
    name: "tau",
    description: "TAU profiles (a run directory of profile.N.C.T files or MULTI__<metric>/ directories, or one profile.N.C.T file)",
    example: "tau-real/mpi-stencil-np64-callpath-commmatrix",
    sniff: |p| match p {
        Probe::Dir { path, names } => {
            names.iter().any(|n| profile_file_thread(n).is_some())
                || (names.iter().any(|n| n.starts_with("MULTI__")) && looks_like_run(path))
        }
        Probe::File { .. } => p.text(4096).is_some_and(|t| {
            let mut words = t.lines().next().unwrap_or("").split_whitespace();
            words.next().is_some_and(|w| w.parse::<u64>().is_ok())
                && words.next().is_some_and(|w| w.starts_with("templated_functions"))
        }),
    },
    read: format::Read::Path(read),
    gives: Parts::PROFILE,
    file_scope: FileScope::File,
};

/// Reads a run directory or one profile file.
fn read(path: &Path, opts: &OpenOptions<'_>) -> Result<Opened, LoadError> {
    if path.is_dir() {
        read_run_listed(path, opts.listing, opts)
    } else {
        read_single_file(path, opts)
    }
}

/// True when `dir` holds TAU profile files directly or in `MULTI__*` sub-directories.
fn looks_like_run(dir: &Path) -> bool {
    discover(dir, None)
        .map(|(sets, _)| !sets.is_empty())
        .unwrap_or(false)
}

/// Finds the metric sets of a run directory and notes about other files present; `listed`,
/// when given, is the listing of `dir` itself (the `MULTI__*` sub-directories are listed here).
pub(crate) fn discover(
    dir: &Path,
    listed: Option<&[std::fs::DirEntry]>,
) -> Result<(Vec<MetricSet>, Vec<String>), LoadError> {
    let io = |source| LoadError::Io {
        path: dir.to_path_buf(),
        source,
    };
    let (top, top_links, others) = list_profile_files(dir, listed).map_err(io)?;
    let mut multi: Vec<MetricSet> = Vec::new();
    for name in &others {
        if name.starts_with("MULTI__") {
            let sub = dir.join(name);
            if sub.is_dir() {
                let (files, links, _) = list_profile_files(&sub, None).map_err(|source| LoadError::Io {
                    path: sub.clone(),
                    source,
                })?;
                if !files.is_empty() {
                    multi.push(MetricSet {
                        label: name.clone(),
                        files,
                        links,
                    });
                }
            }
        }
    }
    let mut notes = Vec::new();
    let count = |prefix: &str| others.iter().filter(|n| n.starts_with(prefix)).count();
    let (snap, dump) = (count("snapshot."), count("dump__"));
    if snap > 0 {
        notes.push(format!("{snap} TAU snapshot files (snapshot.N.C.T) are also present; this load reads the final profiles only (`--input-format tau-snapshot` reads the samples over time)"));
    }
    if dump > 0 {
        notes.push(format!("{dump} TAU incremental dumps (dump__<time>__.N.C.T) are also present; this load reads the final profiles only (`--input-format tau-dumps` reads the samples over time)"));
    }
    if !multi.is_empty() {
        if !top.is_empty() {
            notes.push(format!(
                "{} profile.N.C.T files in the run directory itself were not read: the MULTI__<metric> directories hold the run's metrics",
                top.len()
            ));
        }
        // TIME first (the metric users expect by default), then by name.
        multi.sort_by(|a, b| (a.label != "MULTI__TIME", &a.label).cmp(&(b.label != "MULTI__TIME", &b.label)));
        return Ok((multi, notes));
    }
    if top.is_empty() {
        return Ok((Vec::new(), notes));
    }
    Ok((
        vec![MetricSet {
            label: String::new(),
            files: top,
            links: top_links,
        }],
        notes,
    ))
}

/// The metric name one file gives ([`ProfileFile::metric_name`]), from its first two lines:
/// the rest is not read here (the file's thread reads and parses it once, with the others).
fn read_metric_name(path: &Path) -> Result<Option<String>, FileError> {
    let bytes = crate::input::read_member_lines(path, 2)?;
    let (text, _) = decode_text(&bytes);
    profile_text_metric_name(&text).map_err(|e| e.in_file(path))
}

struct ThreadResult {
    data: ThreadData,
    warnings: Vec<FileError>,
    /// Files of the thread read only in part (see [`ProfileFile::partial`]).
    partial: Vec<FileError>,
    bytes: u64,
    files: usize,
}

impl ThreadResult {
    /// Counts the thread's files and bytes and moves its warnings into `report`; returns its
    /// data, to be added to the builder.
    fn into_report(self, report: &mut LoadReport) -> ThreadData {
        report.files_read += self.files;
        report.bytes_read += self.bytes;
        report.warnings.extend(self.warnings);
        report.partial_files.extend(self.partial);
        self.data
    }
}

/// The timer lines of the run's first thread (its first metric's file), with the events the
/// builder gave them when that thread was added: the files of one run list nearly the same
/// lines, so a later thread's line that the parser finds to be a template line (same raw
/// name and group text, [`TimerTemplate`]) is given its event by id, without normalizing,
/// storing or comparing its name again in the merge. The result is the same: that name
/// interns to that event, and its group text was added already.
struct Template {
    /// The first file's timer lines, which later files are read against.
    timers: TimerTemplate,
    /// Per timer line, its event (`None` for a line with zero calls, which the first thread
    /// did not count).
    events: Vec<Option<EventId>>,
    /// The metadata pairs of the file: a later file's metadata block is read against them,
    /// and its pairs equal to one of them are added from `metadata` (the same pairs, shared
    /// by every thread) instead of copied into each thread's text.
    block: BlockTemplate,
    metadata: MetadataTemplate,
}

/// A [`Template`] before its events: what the first thread's first-metric file gives, taken
/// by [`load_thread`] while it has that file parsed (so the file is parsed once).
struct TemplateDraft {
    timers: TimerTemplate,
    /// Per timer line, whether its calls are not 0 (a line the thread counts).
    counted: Vec<bool>,
    block: BlockTemplate,
    metadata: MetadataTemplate,
}

impl TemplateDraft {
    /// The template parts of `file`.
    fn new(file: &ProfileFile<'_>) -> Self {
        let block = BlockTemplate::new(file.metadata.iter().map(|(k, v)| (k.as_ref(), v.as_ref())));
        let metadata = block.pairs().into();
        Self {
            timers: TimerTemplate::new(&file.timers),
            counted: file.timers.iter().map(|t| t.calls != 0.0).collect(),
            block,
            metadata,
        }
    }
}

impl Template {
    /// The template of `draft` (the first thread's first-metric file, whose thread is
    /// already added to `builder`), with the events of its lines.
    fn new(draft: TemplateDraft, builder: &mut ProfileBuilder) -> Self {
        let events = draft
            .timers
            .lines()
            .zip(&draft.counted)
            .map(|((name, groups), &counted)| counted.then(|| builder.declare_event(name, groups)))
            .collect();
        Self {
            timers: draft.timers,
            events,
            block: draft.block,
            metadata: draft.metadata,
        }
    }
}

/// Reads and parses the files of `thread` (one per metric set, into `bufs`) and gives its
/// data, its lines read against `template` when given. With `draft` (the run's first thread)
/// it also puts there the template parts of the thread's first-metric file, parsed once for
/// both. With `builder` (the only thread of a one-metric run; ignored for more metrics) its
/// timers are interned there and its rows name their events, not their names. Errors: every
/// file of the thread that is missing, unreadable or fails to parse (then nothing is
/// interned).
fn load_thread(
    sets: &[MetricSet],
    thread: ThreadId,
    metric_names: &[String],
    bufs: &mut [Vec<u8>],
    template: Option<&Template>,
    draft: Option<&mut Option<TemplateDraft>>,
    mut builder: Option<&mut ProfileBuilder>,
) -> Result<ThreadResult, Vec<FileError>> {
    let mut errors = Vec::new();
    let mut bytes = 0;
    let mut paths: Vec<&Path> = Vec::with_capacity(sets.len());
    for (set, buf) in sets.iter().zip(bufs.iter_mut()) {
        match set.files.get(&thread) {
            None => errors.push(FileError::whole(
                Path::new(&set.label).join(format!("profile.{thread}")),
                format!("missing: thread {thread} has profile files for other metrics but not for this one"),
            )),
            Some(path) => match if set.links.contains(&thread) {
                crate::input::read_member_into(path, buf)
            } else {
                crate::input::read_listed_file_into(path, buf)
            } {
                Ok(()) => {
                    bytes += buf.len() as u64;
                    paths.push(path);
                }
                Err(e) => errors.push(e),
            },
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let decoded: Vec<_> = bufs.iter().map(|b| decode_text(b)).collect();
    let mut parsed: Vec<ProfileFile<'_>> = Vec::with_capacity(sets.len());
    // What the first metric's file has equal to the template's.
    let mut same = Marks::default();
    for ((path, (text, utf8_warnings)), _) in paths.iter().zip(&decoded).zip(sets) {
        match parse_profile_text_by(text, template.map(|t| &t.block), template.map(|t| &t.timers)) {
            Ok((mut f, marks)) => {
                f.warnings.splice(0..0, utf8_warnings.iter().cloned());
                if parsed.is_empty() {
                    same = marks;
                }
                parsed.push(f);
            }
            Err(e) => errors.push(e.in_file(*path)),
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let (mut warnings, mut partial) = (Vec::new(), Vec::new());
    let n_metrics = sets.len();
    for (m, (path, f)) in paths.iter().zip(&parsed).enumerate() {
        file_warnings(path, f, &mut warnings, &mut partial);
        if let Some(name) = f.metric_name()
            && name != metric_names[m]
        {
            warnings.push(FileError::whole(
                *path,
                format!("file says its metric is `{name}` but the other files of this directory say `{}`; read as `{}`", metric_names[m], metric_names[m]),
            ));
        }
    }
    let (base_path, base) = (paths[0], &parsed[0]);
    if let Some(draft) = draft {
        *draft = Some(TemplateDraft::new(base));
    }
    // A one-thread run of one metric interns its timers in `builder` here, while the file is
    // parsed, instead of copying every name into the thread's data (a 457 MB file of 10^6
    // callpaths held its bytes and that copy at once): the timers with zero calls first, then
    // the others in line order, the order `add_thread` would intern them in.
    if n_metrics > 1 {
        builder = None;
    }
    if let Some(b) = builder.as_deref_mut() {
        // Room for every line's event at once: no rehash of the event index (of every
        // event's frame text) at each doubling, 11% of a 10^6-line file's load.
        b.reserve_events(base.timers.len());
        for t in base.timers.iter().filter(|t| t.calls == 0.0) {
            b.declare_event(&t.name, &t.groups);
        }
    }
    // The names stored: those of every timer line, or with a template (or a builder) only
    // those of the lines it does not have, and the user events' (metadata equal to the
    // template's is not copied).
    let text_bytes: usize = match (template, &builder) {
        (None, None) => base.timers.iter().map(|t| t.name.len() + t.groups.len()).sum(),
        _ => 0,
    } + base.user_events.iter().map(|u| u.name.len()).sum::<usize>()
        + 4096;
    let mut data = ThreadData::with_capacity(n_metrics, base.timers.len(), text_bytes);
    // Rows of metric 0; `row_of_line` maps each base line to its ThreadData row.
    let mut row_of_line: Vec<Option<usize>> = Vec::with_capacity(base.timers.len());
    for (i, t) in base.timers.iter().enumerate() {
        if t.calls == 0.0 {
            if builder.is_none() {
                data.declare_timer(&t.name, &t.groups);
            }
            row_of_line.push(None);
            continue;
        }
        row_of_line.push(Some(data.timer_count()));
        let value = MetricValue {
            metric: 0,
            exclusive: t.exclusive,
            inclusive: t.inclusive,
        };
        let at = same.timers.get(i).copied().flatten();
        let event = match builder.as_deref_mut() {
            Some(b) => Some(b.declare_event(&t.name, &t.groups)),
            None => template.zip(at).and_then(|(tp, at)| tp.events[at as usize]),
        };
        match event {
            Some(e) => data.push_event_for_metric(e, t.calls, t.subcalls, value),
            None => data.push_timer_for_metric(&t.name, &t.groups, t.calls, t.subcalls, value),
        }
    }
    if n_metrics > 1 {
        let by_name: HashMap<&str, usize> = base
            .timers
            .iter()
            .enumerate()
            .map(|(i, t)| (t.name.as_ref(), i))
            .collect();
        for (m, (path, f)) in paths.iter().zip(&parsed).enumerate().skip(1) {
            let mut calls_differ = None;
            let mut found = vec![false; base.timers.len()];
            for (pos, t) in f.timers.iter().enumerate() {
                let base_line = match base.timers.get(pos) {
                    Some(b) if b.name == t.name => Some(pos),
                    _ => by_name.get(t.name.as_ref()).copied(),
                };
                match base_line {
                    Some(bl) => {
                        found[bl] = true;
                        if let Some(row) = row_of_line[bl] {
                            data.set_metric_values(row, m, t.exclusive, t.inclusive);
                            if calls_differ.is_none() && data.timer_calls(row) != t.calls {
                                calls_differ = Some(t);
                            }
                        }
                    }
                    None if t.calls == 0.0 => data.declare_timer(&t.name, &t.groups),
                    None => {
                        data.push_timer_for_metric(
                            &t.name,
                            &t.groups,
                            t.calls,
                            t.subcalls,
                            MetricValue {
                                metric: m,
                                exclusive: t.exclusive,
                                inclusive: t.inclusive,
                            },
                        );
                        warnings.push(FileError::at_line(
                            *path,
                            t.line,
                            format!(
                                "timer `{}` is not in the first metric's file {}; its other metrics are 0",
                                t.name.trim(),
                                base_path.display()
                            ),
                        ));
                    }
                }
            }
            if let Some(t) = calls_differ {
                warnings.push(FileError::at_line(
                    *path,
                    t.line,
                    format!(
                        "calls of `{}` differ from the first metric's file; calls are taken from {}",
                        t.name.trim(),
                        base_path.display()
                    ),
                ));
            }
            if let Some(missing) = found.iter().position(|f| !f)
                && row_of_line[missing].is_some()
            {
                warnings.push(FileError::whole(
                    *path,
                    format!(
                        "timer `{}` (and maybe others) of {} is missing here; its value for this metric is 0",
                        base.timers[missing].name.trim(),
                        base_path.display()
                    ),
                ));
            }
        }
    }
    data.reserve_atomics(base.user_events.len());
    for u in &base.user_events {
        if u.count != 0.0 {
            data.push_atomic(&u.name, u.count, u.max, u.min, u.mean, u.sum_squares);
        }
    }
    if let Some(t) = template {
        data.set_metadata_template(t.metadata.clone());
    }
    for (i, (k, v)) in base.metadata.iter().enumerate() {
        if k != "Metric Name" {
            match same.metadata.get(i).copied().flatten() {
                Some(j) if data.push_metadata_from_template(j as usize) => {}
                _ => data.push_metadata(k, v),
            }
        }
    }
    Ok(ThreadResult {
        data,
        warnings,
        partial,
        bytes,
        files: parsed.len(),
    })
}

/// Loads a TAU run directory (see the module documentation).
pub fn read_run(dir: &Path, opts: &OpenOptions<'_>) -> Result<Opened, LoadError> {
    read_run_listed(dir, None, opts)
}

/// [`read_run`] with `listed`, the entries of `dir` when the caller has listed it already.
fn read_run_listed(
    dir: &Path,
    listed: Option<&[std::fs::DirEntry]>,
    opts: &OpenOptions<'_>,
) -> Result<Opened, LoadError> {
    let (sets, notes) = discover(dir, listed)?;
    if sets.is_empty() {
        return Err(LoadError::UnknownFormat {
            path: dir.to_path_buf(),
            detail: "no TAU profile files here: expected profile.<node>.<context>.<thread> files or MULTI__<metric>/ directories holding them".into(),
        });
    }
    let threads: Vec<ThreadId> = {
        let mut all: Vec<ThreadId> = sets.iter().flat_map(|s| s.files.keys().copied()).collect();
        all.sort_unstable();
        all.dedup();
        all
    };
    let metric_names: Vec<String> = sets
        .iter()
        .map(|s| {
            s.files
                .values()
                .take(16)
                .find_map(|p| read_metric_name(p).ok().flatten())
                .or_else(|| s.label.strip_prefix("MULTI__").map(str::to_string))
                .unwrap_or_else(|| "Time".to_string())
        })
        .collect();
    let mut builder = ProfileBuilder::new(metric_names.iter().map(Metric::tau).collect());
    builder.expect_threads(threads.len());
    let mut report = LoadReport {
        format: "tau",
        notes,
        ..LoadReport::default()
    };
    let total_files: usize = sets.iter().map(|s| s.files.len()).sum();
    opts.progress_start(total_files as u64);
    // The first thread is added here, and its lines become the template of the others' (when
    // there are others: the template copies every name of the file).
    let first = threads[0];
    let mut draft = None;
    // Its file buffers are freed here, before its thread is added.
    let first_result = load_thread(
        &sets,
        first,
        &metric_names,
        &mut vec![Vec::new(); sets.len()],
        None,
        (threads.len() > 1).then_some(&mut draft),
        (threads.len() == 1).then_some(&mut builder),
    );
    let (template, rest) = match first_result {
        Ok(tr) => {
            opts.progress_advance(sets.len() as u64);
            builder
                .add_thread(first, tr.into_report(&mut report))
                .map_err(|source| LoadError::Build {
                    path: dir.to_path_buf(),
                    source,
                })?;
            let template = draft.take().map(|d| Template::new(d, &mut builder));
            (template, &threads[1..])
        }
        // Read again with the others, whose merge reports it.
        Err(_) => (None, &threads[..]),
    };
    let template = template.as_ref();
    let pool = opts.thread_pool(dir)?;
    // Parse chunk k+1 on the pool while this thread's helper merges chunk k: the merge is
    // sequential (interning, column appends), the parse is parallel.
    type ChunkResults = Vec<(ThreadId, Result<ThreadResult, Vec<FileError>>)>;
    let (tx, rx) = std::sync::mpsc::sync_channel::<ChunkResults>(1);
    let merged = std::thread::scope(|scope| {
        let merger = scope.spawn(
            move || -> Result<(ProfileBuilder, LoadReport, Vec<FileError>), LoadError> {
                let mut all_errors = Vec::new();
                for results in rx {
                    // The chunk's threads read whole, added at once (a thread that failed
                    // is skipped: the others keep their order).
                    let mut read = Vec::with_capacity(results.len());
                    for (t, r) in results {
                        match r {
                            Ok(tr) => read.push((t, tr.into_report(&mut report))),
                            Err(errors) => {
                                report.threads_skipped.push(t);
                                all_errors.extend(errors);
                            }
                        }
                    }
                    builder.add_threads(read).map_err(|source| LoadError::Build {
                        path: dir.to_path_buf(),
                        source,
                    })?;
                }
                Ok((builder, report, all_errors))
            },
        );
        let mut rest = rest;
        for len in chunk_lengths(rest.len()) {
            let (chunk, later) = rest.split_at(len);
            rest = later;
            let results: ChunkResults = pool.install(|| {
                chunk
                    .par_iter()
                    .map_init(
                        || vec![Vec::new(); sets.len()],
                        |bufs, &t| {
                            let r = load_thread(&sets, t, &metric_names, bufs, template, None, None);
                            opts.progress_advance(sets.len() as u64);
                            (t, r)
                        },
                    )
                    .collect()
            });
            if tx.send(results).is_err() {
                break; // the merger stopped on an error; it reports it below
            }
        }
        drop(tx);
        merger.join()
    });
    let (builder, mut report, all_errors) = match merged {
        Ok(r) => r?,
        Err(panic) => std::panic::resume_unwind(panic),
    };
    opts.progress_finish();
    if builder.thread_count() == 0 {
        return Err(LoadError::NothingLoaded {
            path: dir.to_path_buf(),
            errors: all_errors,
        });
    }
    report.bad_files = all_errors;
    let (profile, build_notes) = builder.finish();
    for n in build_notes {
        let set = &sets[0];
        let path = set
            .files
            .get(&n.thread)
            .cloned()
            .unwrap_or_else(|| dir.to_path_buf());
        report.warnings.push(FileError::whole(path, n.message));
    }
    Ok(Opened::profile(profile, report))
}

/// Loads a single TAU profile file as a one-thread run. The thread address comes from the
/// file name (`profile.N.C.T`, or an incremental dump `dump__<time>__.N.C.T`), or is `0.0.0`
/// for any other name.
pub fn read_single_file(path: &Path, opts: &OpenOptions<'_>) -> Result<Opened, LoadError> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let thread = profile_file_thread(name)
        .or_else(|| super::dumps::dump_file_parts(name).map(|(_, t)| t))
        .unwrap_or(ThreadId::new(0, 0, 0));
    let metric = read_metric_name(path)
        .map_err(|e| LoadError::NothingLoaded {
            path: path.to_path_buf(),
            errors: vec![e],
        })?
        .unwrap_or_else(|| "Time".to_string());
    let set = MetricSet {
        label: String::new(),
        files: BTreeMap::from([(thread, path.to_path_buf())]),
        // Not listed: read after checking what the path is.
        links: BTreeSet::from([thread]),
    };
    opts.progress_start(1);
    let mut builder = ProfileBuilder::new(vec![Metric::tau(metric.clone())]);
    let tr = load_thread(
        std::slice::from_ref(&set),
        thread,
        std::slice::from_ref(&metric),
        &mut [Vec::new()],
        None,
        None,
        Some(&mut builder),
    )
    .map_err(|errors| LoadError::NothingLoaded {
        path: path.to_path_buf(),
        errors,
    })?;
    opts.progress_advance(1);
    opts.progress_finish();
    let mut report = LoadReport {
        format: "tau",
        files_read: 1,
        bytes_read: tr.bytes,
        warnings: tr.warnings,
        partial_files: tr.partial,
        ..LoadReport::default()
    };
    builder
        .add_thread(thread, tr.data)
        .map_err(|source| LoadError::Build {
            path: path.to_path_buf(),
            source,
        })?;
    let (profile, notes) = builder.finish();
    report
        .warnings
        .extend(notes.into_iter().map(|n| FileError::whole(path, n.message)));
    Ok(Opened::profile(profile, report))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_every_thread_once_and_shrink_at_the_end() {
        for n in 0..3000 {
            let lens: Vec<usize> = chunk_lengths(n).collect();
            assert_eq!(lens.iter().sum::<usize>(), n, "n = {n}: {lens:?}");
            assert!(
                lens.iter().all(|&l| (1..=CHUNK_THREADS).contains(&l)),
                "n = {n}: {lens:?}"
            );
            // Never growing, and never smaller than the minimum but for the last.
            assert!(lens.windows(2).all(|w| w[1] <= w[0]), "n = {n}: {lens:?}");
            assert!(
                lens.iter().rev().skip(1).all(|&l| l >= CHUNK_THREADS_MIN),
                "n = {n}: {lens:?}"
            );
            if n > 2 * CHUNK_THREADS {
                let last = *lens.last().unwrap();
                assert!(last <= CHUNK_THREADS_MIN, "n = {n}: the last chunk is {last}");
            }
        }
        assert_eq!(
            chunk_lengths(4095).collect::<Vec<_>>()[14..],
            [255, 128, 64, 32, 32]
        );
    }
}
