//! TAU snapshot files `snapshot.<node>.<context>.<thread>`: a thread's profile written again
//! and again while the program runs.
//!
//! Each file is a series of `<profile_xml>` documents appended over time (TAU's
//! `TauSnapshot.cpp`): the first declares the thread (`<thread id="N.C.T.PID">` with its
//! `<metadata>`) and defines the metrics, then every snapshot document may define new events
//! and user events (ids are process-wide and each file repeats the definitions it needs) and
//! holds one `<profile>` block: `<name>` (`iteration 40`, `final`), `<timestamp>` (µs since
//! the epoch) and the values accumulated since the program started, `id calls subrs (excl
//! incl)+` per timer and `id n max min mean sumsqr` per user event. With
//! `TAU_PROFILE_FORMAT=snapshot` TAU appends a block named `final` at exit.
//!
//! [`SnapshotStream`] reads a file incrementally (for live mode): feed it the bytes appended
//! to the file and it returns each complete snapshot once, as a [`ThreadSample`]; a block
//! still being written is kept until its end arrives. [`parse_snapshot`] reads a whole file;
//! [`FORMAT`]'s reader integrates a run directory into a [`SampleSeries`] and gives its final
//! state (each thread's last snapshot, as ParaProf's `paraprof -f snap` shows it) as the
//! profile.

use super::xml_doc::{Doc, ProfileBlock, ThreadDecl, parse_doc};
use super::xml_split::{DocSplitter, RawDoc};
use crate::error::{FileError, LoadError, LoadReport};
use crate::format::{self, FileScope, Format, OpenOptions, Opened, Parts, Probe};
use perfscape_model::{
    Integrator, IntegratorOptions, Metric, SampleSeries, ThreadId, ThreadSample, TimerDef, TimerSample,
    UserEventDef, UserEventSample,
};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// The thread address in a snapshot file name `snapshot.<node>.<context>.<thread>`.
pub fn snapshot_file_thread(name: &str) -> Option<ThreadId> {
    name.strip_prefix("snapshot.")?.parse().ok()
}

/// What one [`SnapshotStream::push`] produced.
#[derive(Debug, Default)]
pub struct Pushed {
    /// Snapshots completed by the bytes pushed, in file order.
    pub samples: Vec<ThreadSample>,
    /// Problems (each names the file, line and byte offset). A bad document is skipped; the
    /// documents after it are still read.
    pub errors: Vec<FileError>,
}

/// Incremental reader of one snapshot file; see the module documentation.
///
/// ```
/// use perfscape_formats::tau::snapshot::SnapshotStream;
/// let file = "<profile_xml>\n<thread id=\"0.0.0.9\" node=\"0\" context=\"0\" thread=\"0\">\n\
///   <metadata></metadata></thread>\n<definitions thread=\"0.0.0.9\">\n<metric id=\"0\">\
///   <name>TIME</name></metric></definitions>\n<definitions thread=\"0.0.0.9\">\n<event id=\"0\">\
///   <name>main </name><group>G</group></event></definitions>\n<profile thread=\"0.0.0.9\">\n\
///   <name>final</name><timestamp>1700000000000000</timestamp>\n<interval_data metrics=\"0 \">\n\
///   0 1 0 5 5 \n</interval_data>\n<atomic_data>\n</atomic_data>\n</profile>\n</profile_xml>\n";
/// let mut stream = SnapshotStream::new("snapshot.0.0.0");
/// let (a, b) = file.as_bytes().split_at(300); // the writer is in the middle of a block
/// assert!(stream.push(a).samples.is_empty());
/// let pushed = stream.push(b);
/// assert_eq!(pushed.samples.len(), 1);
/// assert_eq!(pushed.samples[0].name, "final");
/// assert_eq!(pushed.samples[0].timer_values, vec![5.0, 5.0]);
/// assert!(stream.finish().is_empty());
/// ```
#[derive(Debug)]
pub struct SnapshotStream {
    path: PathBuf,
    splitter: DocSplitter,
    decl: Option<ThreadDecl>,
    metadata: Option<Arc<Vec<(String, String)>>>,
    /// Metric names by id.
    metric_names: Vec<Option<String>>,
    /// The metric list of the last column layout seen.
    metric_cache: Option<(Vec<u32>, Arc<Vec<Metric>>)>,
    timers: Vec<Option<Arc<TimerDef>>>,
    user_events: Vec<Option<Arc<UserEventDef>>>,
    samples_read: usize,
}

/// Largest event id accepted (a guard against absurd ids allocating tables).
const MAX_ID: u32 = 1 << 24;

impl SnapshotStream {
    /// A reader for the file at `path` (used in error messages; nothing is read from it).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            splitter: DocSplitter::default(),
            decl: None,
            metadata: None,
            metric_names: Vec::new(),
            metric_cache: None,
            timers: Vec::new(),
            user_events: Vec::new(),
            samples_read: 0,
        }
    }

    /// The file this stream reads.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The thread, once its `<thread>` declaration was read.
    pub fn thread(&self) -> Option<ThreadId> {
        self.decl.as_ref().map(|d| d.thread)
    }

    /// The thread's metadata, once read.
    pub fn metadata(&self) -> Option<&Arc<Vec<(String, String)>>> {
        self.metadata.as_ref()
    }

    /// Snapshots returned so far.
    pub fn samples_read(&self) -> usize {
        self.samples_read
    }

    /// Bytes received so far (the file offset up to which the caller has read).
    pub fn bytes_seen(&self) -> u64 {
        self.splitter.bytes_seen()
    }

    /// Bytes of an incomplete document kept for the next push.
    pub fn buffered(&self) -> usize {
        self.splitter.buffered()
    }

    /// Feeds the bytes appended to the file since the last push (the whole file at once is
    /// fine too). Returns the snapshots completed by them and any problems.
    pub fn push(&mut self, bytes: &[u8]) -> Pushed {
        let (docs, split_errors) = self.splitter.push(bytes);
        let mut out = Pushed::default();
        out.errors
            .extend(split_errors.into_iter().map(|e| e.in_file(&self.path)));
        for raw in docs {
            if raw.lossy {
                out.errors.push(FileError {
                    path: self.path.clone(),
                    line: usize::try_from(raw.line).ok(),
                    byte_offset: Some(raw.offset),
                    message: "document is not valid UTF-8; invalid bytes read as U+FFFD".into(),
                });
            }
            match parse_doc(&raw.text) {
                Ok(doc) => self.take_doc(&raw, doc, &mut out),
                Err(e) => out.errors.push(raw.error_at(&self.path, e.offset, e.message)),
            }
        }
        out
    }

    /// The end of the file: reports an incomplete last document (truncated, or still being
    /// written) and trailing garbage.
    pub fn finish(self) -> Vec<FileError> {
        let path = self.path;
        self.splitter
            .finish()
            .into_iter()
            .map(|e| e.in_file(&path))
            .collect()
    }

    fn take_doc(&mut self, raw: &RawDoc, doc: Doc, out: &mut Pushed) {
        for t in doc.threads {
            match &self.decl {
                None => {
                    self.metadata = Some(Arc::new(t.metadata.clone()));
                    self.decl = Some(t);
                }
                Some(d) if d.id == t.id => {
                    // TAU's metadata-only block: keys not seen yet are added.
                    let mut md = self.metadata.as_deref().cloned().unwrap_or_default();
                    for (k, v) in t.metadata {
                        if !md.iter().any(|(k2, _)| *k2 == k) {
                            md.push((k, v));
                        }
                    }
                    self.metadata = Some(Arc::new(md));
                }
                Some(d) => out.errors.push(FileError {
                    path: self.path.clone(),
                    line: usize::try_from(raw.line).ok(),
                    byte_offset: Some(raw.offset),
                    message: format!(
                        "second thread declaration `{}` in the file of thread `{}`; ignored",
                        t.id, d.id
                    ),
                }),
            }
        }
        for d in doc.definitions {
            for (id, name) in d.metrics {
                set_def(&mut self.metric_names, id, name);
                self.metric_cache = None;
            }
            for (id, name, groups) in d.events {
                set_def(&mut self.timers, id, Arc::new(TimerDef { id, name, groups }));
            }
            for (id, name) in d.user_events {
                set_def(&mut self.user_events, id, Arc::new(UserEventDef { id, name }));
            }
        }
        for p in doc.profiles {
            match self.sample(&p) {
                Ok(s) => {
                    self.samples_read += 1;
                    out.samples.push(s);
                }
                Err(message) => out.errors.push(raw.error_at(&self.path, p.offset, message)),
            }
        }
        if !doc.derived.is_empty() {
            out.errors.push(FileError {
                path: self.path.clone(),
                line: usize::try_from(raw.line).ok(),
                byte_offset: Some(raw.offset),
                message:
                    "derived statistics blocks belong to merged tauprofile.xml files, not snapshots; ignored"
                        .into(),
            });
        }
    }

    fn metrics_for(&mut self, ids: &[u32]) -> Result<Arc<Vec<Metric>>, String> {
        if let Some((cached, m)) = &self.metric_cache
            && cached == ids
        {
            return Ok(m.clone());
        }
        let mut metrics = Vec::with_capacity(ids.len());
        for &id in ids {
            let name = self
                .metric_names
                .get(id as usize)
                .and_then(Option::as_ref)
                .ok_or_else(|| {
                    format!("metric id {id} of <interval_data metrics=...> is not defined in this file")
                })?;
            metrics.push(Metric::tau(name.trim()));
        }
        let m = Arc::new(metrics);
        self.metric_cache = Some((ids.to_vec(), m.clone()));
        Ok(m)
    }

    fn sample(&mut self, p: &ProfileBlock) -> Result<ThreadSample, String> {
        let Some(decl) = &self.decl else {
            return Err(format!(
                "<profile thread=\"{}\"> comes before the file's <thread> declaration",
                p.thread
            ));
        };
        if decl.id != p.thread {
            return Err(format!(
                "<profile thread=\"{}\"> in the file of thread `{}`",
                p.thread, decl.id
            ));
        }
        let thread = decl.thread;
        let Some(timestamp_us) = p.timestamp_us else {
            return Err("<profile> block without a <timestamp>".into());
        };
        let metrics = self.metrics_for(&p.data.metrics)?;
        let mut timers = Vec::with_capacity(p.data.timers.len());
        for &(id, calls, subcalls) in &p.data.timers {
            let def = self
                .timers
                .get(id as usize)
                .and_then(Option::as_ref)
                .ok_or_else(|| {
                    format!("interval row for event id {id}, which no <definitions> of this file defines")
                })?;
            timers.push(TimerSample {
                def: def.clone(),
                calls,
                subcalls,
            });
        }
        let mut user_events = Vec::with_capacity(p.data.user_events.len());
        for &(id, v) in &p.data.user_events {
            let def = self
                .user_events
                .get(id as usize)
                .and_then(Option::as_ref)
                .ok_or_else(|| {
                    format!("atomic row for user event id {id}, which no <definitions> of this file defines")
                })?;
            user_events.push(UserEventSample {
                def: def.clone(),
                count: v[0],
                max: v[1],
                min: v[2],
                mean: v[3],
                sum_squares: v[4],
            });
        }
        Ok(ThreadSample {
            thread,
            name: p.name.clone().unwrap_or_default(),
            timestamp_us,
            metrics,
            metadata: self.metadata.clone(),
            timers,
            timer_values: p.data.timer_values.clone(),
            user_events,
        })
    }
}

fn set_def<T>(table: &mut Vec<Option<T>>, id: u32, value: T) {
    if id >= MAX_ID {
        return;
    }
    let i = id as usize;
    if table.len() <= i {
        table.resize_with(i + 1, || None);
    }
    table[i] = Some(value);
}

/// A whole snapshot file, parsed.
#[derive(Debug)]
pub struct SnapshotFile {
    /// The thread declared by the file.
    pub thread: ThreadId,
    /// Its metadata.
    pub metadata: Vec<(String, String)>,
    /// The snapshots, in file order.
    pub samples: Vec<ThreadSample>,
    /// Problems in a file that still gave snapshots (a truncated last block, ...).
    pub warnings: Vec<FileError>,
}

/// Parses a whole snapshot file (`path` names it in messages). Errors when the file gives no
/// snapshot at all; otherwise problems are warnings and the valid snapshots are returned.
pub fn parse_snapshot(bytes: &[u8], path: &Path) -> Result<SnapshotFile, FileError> {
    let mut stream = SnapshotStream::new(path);
    let pushed = stream.push(bytes);
    let thread = stream.thread();
    let metadata = stream.metadata().map(|m| m.as_ref().clone()).unwrap_or_default();
    let mut warnings = pushed.errors;
    warnings.extend(stream.finish());
    match thread {
        Some(thread) if !pushed.samples.is_empty() => Ok(SnapshotFile {
            thread,
            metadata,
            samples: pushed.samples,
            warnings,
        }),
        _ => Err(warnings.into_iter().next().unwrap_or_else(|| {
            FileError::whole(
                path,
                if bytes.iter().all(|b| b.is_ascii_whitespace()) {
                    "the file is empty: no snapshot written yet".to_string()
                } else if thread.is_none() {
                    "no <thread> declaration: not a TAU snapshot file".to_string()
                } else {
                    "no <profile> block: the thread wrote no snapshot".to_string()
                },
            )
        })),
    }
}

/// The snapshot files of a directory, by thread.
pub fn list_snapshot_files(dir: &Path) -> Result<BTreeMap<ThreadId, PathBuf>, LoadError> {
    let io = |source| LoadError::Io {
        path: dir.to_path_buf(),
        source,
    };
    let mut files = BTreeMap::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let entry = entry.map_err(io)?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if let Some(t) = snapshot_file_thread(name)
            && entry.file_type().map(|t| !t.is_dir()).unwrap_or(false)
        {
            files.insert(t, entry.path());
        }
    }
    Ok(files)
}

/// Integrates snapshot files (a directory of `snapshot.N.C.T`, or one file) into a
/// [`SampleSeries`], aligning snapshots by name (see [`perfscape_model::Integrator`]).
/// Files are parsed in parallel; the result does not depend on the number of workers.
fn read_snapshot_series(
    path: &Path,
    opts: &OpenOptions<'_>,
) -> Result<(SampleSeries, LoadReport), LoadError> {
    let files: Vec<(Option<ThreadId>, PathBuf)> = if path.is_dir() {
        let found = list_snapshot_files(path)?;
        if found.is_empty() {
            return Err(LoadError::UnknownFormat {
                path: path.to_path_buf(),
                detail: "no TAU snapshot files here: expected snapshot.<node>.<context>.<thread> files"
                    .into(),
            });
        }
        found.into_iter().map(|(t, p)| (Some(t), p)).collect()
    } else {
        vec![(None, path.to_path_buf())]
    };
    opts.progress_start(files.len() as u64);
    let pool = opts.thread_pool(path)?;
    type Parsed = (PathBuf, Result<(SnapshotFile, u64), FileError>);
    let parsed: Vec<Parsed> = pool.install(|| {
        files
            .par_iter()
            .map(|(_, p)| {
                let r = std::fs::read(p)
                    .map_err(|e| FileError::whole(p, format!("cannot read: {e}")))
                    .and_then(|bytes| parse_snapshot(&bytes, p).map(|f| (f, bytes.len() as u64)));
                if let Some(sink) = opts.progress {
                    sink.advance(1);
                }
                (p.clone(), r)
            })
            .collect()
    });
    opts.progress_finish();
    let mut report = LoadReport {
        format: "tau-snapshot",
        ..LoadReport::default()
    };
    let mut integ = Integrator::new(IntegratorOptions::default());
    let now = Instant::now();
    let mut good: Vec<SnapshotFile> = Vec::new();
    for ((named, _), (p, r)) in files.iter().zip(parsed) {
        match r {
            Ok((f, bytes)) => {
                report.files_read += 1;
                report.bytes_read += bytes;
                report.warnings.extend(f.warnings.iter().cloned());
                if let Some(named) = named
                    && *named != f.thread
                {
                    report.warnings.push(FileError::whole(
                        &p,
                        format!(
                            "the file name says thread {named} but the file declares thread {}; read as {}",
                            f.thread, f.thread
                        ),
                    ));
                }
                good.push(f);
            }
            Err(e) => {
                if let Some(t) = named {
                    report.threads_skipped.push(*t);
                }
                report.bad_files.push(e);
            }
        }
    }
    if good.is_empty() {
        return Err(LoadError::NothingLoaded {
            path: path.to_path_buf(),
            errors: report.bad_files,
        });
    }
    good.sort_by_key(|f| f.thread);
    for f in &good {
        integ.expect_thread(f.thread);
    }
    for f in good {
        for s in f.samples {
            let (thread, name) = (s.thread, s.name.clone());
            if let Err(e) = integ.push(s, now) {
                report.warnings.push(FileError::whole(
                    path,
                    format!("thread {thread}: snapshot `{name}` not integrated: {e}"),
                ));
            }
        }
    }
    let (series, ireport) = integ.finish();
    integration_notes(&series, &ireport, path, &mut report);
    Ok((series, report))
}

/// Adds what the integration did to a load report.
pub(crate) fn integration_notes(
    series: &SampleSeries,
    ireport: &perfscape_model::IntegrationReport,
    path: &Path,
    report: &mut LoadReport,
) {
    for n in &ireport.notes {
        report.warnings.push(FileError::whole(path, n.clone()));
    }
    let incomplete: Vec<String> = series
        .samples()
        .iter()
        .filter(|s| !s.is_complete())
        .map(|s| {
            let missing: Vec<String> = s
                .missing_threads()
                .iter()
                .map(|t| series.threads()[t.index()].to_string())
                .collect();
            format!("`{}` (missing {})", s.name(), shorten(&missing))
        })
        .collect();
    let names: Vec<&str> = series.samples().iter().map(|s| s.name()).collect();
    report.notes.push(format!(
        "{} samples integrated from {} threads: {}",
        series.len(),
        series.threads().len(),
        shorten(&names)
    ));
    if !incomplete.is_empty() {
        report.notes.push(format!(
            "{} sample(s) were not written by every thread: {}",
            incomplete.len(),
            shorten(&incomplete)
        ));
    }
}

fn shorten<S: AsRef<str>>(items: &[S]) -> String {
    let shown: Vec<&str> = items.iter().take(6).map(AsRef::as_ref).collect();
    let mut s = shown.join(", ");
    if items.len() > 6 {
        s.push_str(&format!(", ... ({} in all)", items.len()));
    }
    s
}

/// TAU snapshots: `snapshot.N.C.T` files (a directory of them, or one), each a series of
/// cumulative timestamped `<profile_xml>` samples.
pub const FORMAT: Format = Format {
    name: "tau-snapshot",
    description: "TAU snapshots (snapshot.N.C.T files: their final state, or the series of samples)",
    example: "tau-real/mpi-stencil-np8-snapshot",
    sniff: |p| match p {
        Probe::Dir { names, .. } => names.iter().any(|n| snapshot_file_thread(n).is_some()),
        Probe::File { head, .. } => {
            p.text(4096).is_some_and(|t| t.starts_with("<profile_xml"))
                && !super::merged::is_merged_head(head)
        }
    },
    read: format::Read::Path(read_snapshots),
    gives: Parts {
        series: true,
        trace: false,
    },
    file_scope: FileScope::File,
};

/// Reads the snapshots of a run: the series of samples and, as the profile, its final state
/// (each thread's last snapshot).
fn read_snapshots(path: &Path, opts: &OpenOptions<'_>) -> Result<Opened, LoadError> {
    let (series, report) = read_snapshot_series(path, opts)?;
    crate::tau::series_opened(path, series, report)
}
