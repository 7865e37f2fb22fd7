//! Replay: a finished run written again, progressively, into a directory that is watched
//! like a live run, so that the consumer cannot tell a replay from a live run.
//!
//! Snapshot files are cut into their `<profile_xml>` documents; every document is written
//! (appended to its file, one `write`) at the moment given by its `<timestamp>` relative to
//! the run's first one, divided by the speed (a document without a timestamp, such as the
//! thread's metadata, goes with the next one of its file; a file's documents keep their
//! order). Incremental dumps are written whole, at the end of the second their name gives,
//! through a temporary name and a rename as TAU does; `profile.N.C.T` files last, the same
//! way.

use crate::files::FileKind;
use crate::options::{LiveError, LiveOptions};
use crate::series_handle::SeriesHandle;
use crate::watch::LiveRun;
use crate::watch::{ReplayGuard, WriterMsg, start};
use std::collections::BTreeMap;
use std::fs::OpenOptions;
use std::io::Write;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, TryRecvError};
use std::time::{Duration, Instant};

/// Options of [`replay`].
#[derive(Clone, Debug)]
pub struct ReplayOptions {
    /// How fast: 1 = the run's own pace (its timestamps), 10 = ten times faster, 0 = as
    /// fast as possible (no pauses). Default 1.
    pub speed: f64,
    /// Where to write the run. Default: a new temporary directory, removed when the
    /// [`LiveRun`] is dropped. A given directory is created if needed and must not hold TAU
    /// files already.
    pub into: Option<PathBuf>,
    /// How the written directory is watched. `expected_threads` defaults to the number of
    /// threads of the replayed run (samples wait for threads whose first file comes late,
    /// at most `max_wait`, as the batch load of the finished files does); `Some(0)` replays
    /// exactly what a watcher that knows nothing in advance would see.
    pub live: LiveOptions,
}

impl Default for ReplayOptions {
    fn default() -> Self {
        Self {
            speed: 1.0,
            into: None,
            live: LiveOptions::default(),
        }
    }
}

/// How a replay begins (see [`replay_plan_with`]); the default is [`replay_plan`]'s: a new
/// series, written from the start at the run's pace.
#[derive(Clone, Debug, Default)]
pub struct ReplayStart {
    /// Grow this series (emptied first) instead of a new one: a replay started again from the
    /// beginning keeps the series its readers hold.
    pub series: Option<SeriesHandle>,
    /// Write the run's first sample (every thread's first snapshot or dump), then wait until
    /// [`LiveRun::resume_replay`] before writing the rest (`serve --replay --wait-for-page`).
    pub hold_after_first_sample: bool,
}

/// One file of a replay and how it is written.
#[derive(Debug, Clone)]
struct PlanFile {
    name: String,
    bytes: Vec<u8>,
    /// Written whole through a temporary name and a rename (dumps, profiles), else appended
    /// piece by piece (snapshots).
    atomic: bool,
}

/// One write of a replay.
#[derive(Debug, Clone)]
struct PlannedWrite {
    file: usize,
    range: Range<usize>,
    timestamp_us: i64,
    /// Part of its thread's first sample.
    first: bool,
}

/// What a replay writes, and when: built from a run directory ([`ReplayPlan::from_dir`]) or
/// from files in memory ([`ReplayPlan::from_files`], e.g. a synthetic large run).
#[derive(Debug, Clone)]
pub struct ReplayPlan {
    files: Vec<PlanFile>,
    writes: Vec<PlannedWrite>,
    threads: usize,
    /// The writes (a prefix of `writes`) that make every thread's first sample.
    first_sample_writes: usize,
}

/// The `<timestamp>` of a snapshot document, if it has one.
fn doc_timestamp(doc: &[u8]) -> Option<i64> {
    const TAG: &[u8] = b"<timestamp>";
    let at = doc.windows(TAG.len()).position(|w| w == TAG)? + TAG.len();
    let digits: Vec<u8> = doc[at..]
        .iter()
        .copied()
        .skip_while(u8::is_ascii_whitespace)
        .take_while(|b| b.is_ascii_digit() || *b == b'-')
        .collect();
    std::str::from_utf8(&digits).ok()?.parse().ok()
}

/// Byte ranges of the `<profile_xml>` documents of a snapshot file (each with the line
/// breaks after it; bytes after the last document are a range of their own).
fn doc_ranges(bytes: &[u8]) -> Vec<Range<usize>> {
    const END: &[u8] = b"</profile_xml>";
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i + END.len() <= bytes.len() {
        if &bytes[i..i + END.len()] == END {
            let mut end = i + END.len();
            while end < bytes.len() && (bytes[end] == b'\n' || bytes[end] == b'\r') {
                end += 1;
            }
            out.push(start..end);
            start = end;
            i = end;
        } else {
            i += 1;
        }
    }
    if start < bytes.len() {
        out.push(start..bytes.len());
    }
    out
}

impl ReplayPlan {
    /// The plan of a finished run directory: its `snapshot.N.C.T`, `dump__*` and
    /// `profile.N.C.T` files (other files are not replayed). Errors when the directory
    /// cannot be read or holds neither snapshots nor dumps.
    pub fn from_dir(dir: &Path) -> Result<ReplayPlan, LiveError> {
        let io = |source| LiveError::Io {
            path: dir.to_path_buf(),
            source,
        };
        let mut files = Vec::new();
        for entry in std::fs::read_dir(dir).map_err(io)? {
            let entry = entry.map_err(io)?;
            let Some(name) = entry.file_name().to_str().map(str::to_string) else {
                continue;
            };
            if FileKind::of_name(&name).is_none() || entry.file_type().map_err(io)?.is_dir() {
                continue;
            }
            let path = entry.path();
            let bytes = std::fs::read(&path).map_err(|source| LiveError::Io { path, source })?;
            files.push((name, bytes));
        }
        files.sort();
        Self::from_files(files).map_err(|e| match e {
            LiveError::NoSeries { detail, .. } => LiveError::NoSeries {
                path: dir.to_path_buf(),
                detail,
            },
            other => other,
        })
    }

    /// The plan of files given by name (`snapshot.N.C.T`, `dump__<time>__.N.C.T`,
    /// `profile.N.C.T`; other names are ignored) and content.
    pub fn from_files(files: Vec<(String, Vec<u8>)>) -> Result<ReplayPlan, LiveError> {
        let mut plan_files = Vec::new();
        let mut writes = Vec::new();
        let mut threads = std::collections::BTreeSet::new();
        let mut profiles = Vec::new();
        // Per thread with dumps: its earliest dump (time, position in `writes`).
        let mut first_dump = BTreeMap::new();
        for (name, bytes) in files {
            let Some(kind) = FileKind::of_name(&name) else {
                continue;
            };
            let file = plan_files.len();
            match kind {
                FileKind::Snapshot(t) => {
                    threads.insert(t);
                    let ranges = doc_ranges(&bytes);
                    let stamps: Vec<Option<i64>> =
                        ranges.iter().map(|r| doc_timestamp(&bytes[r.clone()])).collect();
                    // A document without a timestamp goes with the next one that has one
                    // (or the previous, at the end); times never go back within a file.
                    let mut next: Option<i64> = None;
                    let mut filled = vec![None; stamps.len()];
                    for i in (0..stamps.len()).rev() {
                        if stamps[i].is_some() {
                            next = stamps[i];
                        }
                        filled[i] = next;
                    }
                    let mut last = i64::MIN;
                    // The first sample: the documents up to the first with a timestamp.
                    let first_doc = stamps.iter().position(Option::is_some).unwrap_or(0);
                    for (i, (r, ts)) in ranges.into_iter().zip(filled).enumerate() {
                        let ts = ts.unwrap_or(last).max(last);
                        last = ts;
                        writes.push(PlannedWrite {
                            file,
                            range: r,
                            timestamp_us: ts,
                            first: i <= first_doc,
                        });
                    }
                    plan_files.push(PlanFile {
                        name,
                        bytes,
                        atomic: false,
                    });
                }
                FileKind::Dump(t, time) => {
                    threads.insert(t);
                    let at = writes.len();
                    let earliest = first_dump.entry(t).or_insert((time, at));
                    if time < earliest.0 {
                        *earliest = (time, at);
                    }
                    writes.push(PlannedWrite {
                        file,
                        range: 0..bytes.len(),
                        // The name gives the second the dump was written in: replayed at
                        // the end of it, never before what the program wrote before it.
                        timestamp_us: time
                            .map_or(i64::MIN, |s| s.saturating_mul(1_000_000).saturating_add(999_999)),
                        first: false,
                    });
                    plan_files.push(PlanFile {
                        name,
                        bytes,
                        atomic: true,
                    });
                }
                FileKind::Profile(_) => {
                    profiles.push(file);
                    plan_files.push(PlanFile {
                        name,
                        bytes,
                        atomic: true,
                    });
                }
            }
        }
        if writes.is_empty() {
            return Err(LiveError::NoSeries {
                path: PathBuf::new(),
                detail: "no TAU snapshot files (snapshot.N.C.T) or incremental dumps (dump__<time>__.N.C.T) to replay"
                    .into(),
            });
        }
        for &(_, at) in first_dump.values() {
            writes[at].first = true;
        }
        // Dumps whose name gives no time: with the first write.
        let first = writes
            .iter()
            .map(|w| w.timestamp_us)
            .filter(|&t| t != i64::MIN)
            .min()
            .unwrap_or(0);
        for w in &mut writes {
            if w.timestamp_us == i64::MIN {
                w.timestamp_us = first;
            }
        }
        // Stable: a file's writes keep their order (their times never go back).
        writes.sort_by_key(|w| w.timestamp_us);
        let first_sample_writes = writes.iter().rposition(|w| w.first).map_or(0, |i| i + 1);
        let end = writes.last().map_or(0, |w| w.timestamp_us);
        for file in profiles {
            writes.push(PlannedWrite {
                file,
                range: 0..plan_files[file].bytes.len(),
                timestamp_us: end,
                first: false,
            });
        }
        Ok(ReplayPlan {
            files: plan_files,
            writes,
            threads: threads.len(),
            first_sample_writes,
        })
    }

    /// Number of threads (snapshot files, or threads with dumps).
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Number of writes.
    pub fn writes(&self) -> usize {
        self.writes.len()
    }

    /// Time from the first write to the last at speed 1, in µs (the run's own clock).
    pub fn duration_us(&self) -> i64 {
        match (self.writes.first(), self.writes.last()) {
            (Some(a), Some(b)) => b.timestamp_us - a.timestamp_us,
            _ => 0,
        }
    }
}

/// Replays the finished run in `source` (see the module documentation): returns a
/// [`LiveRun`] watching the directory the run is being written into.
pub fn replay(source: &Path, opts: &ReplayOptions) -> Result<LiveRun, LiveError> {
    replay_plan(ReplayPlan::from_dir(source)?, opts)
}

/// Replays a plan (see [`replay`]).
pub fn replay_plan(plan: ReplayPlan, opts: &ReplayOptions) -> Result<LiveRun, LiveError> {
    replay_plan_with(plan, opts, ReplayStart::default())
}

/// Replays a plan (see [`replay`]) into the series of `begin`, held after its first sample
/// when `begin` says so.
pub fn replay_plan_with(
    plan: ReplayPlan,
    opts: &ReplayOptions,
    begin: ReplayStart,
) -> Result<LiveRun, LiveError> {
    if !(opts.speed >= 0.0 && opts.speed.is_finite()) {
        return Err(LiveError::BadSpeed(opts.speed));
    }
    let (dir, temp) = match &opts.into {
        Some(d) => {
            std::fs::create_dir_all(d).map_err(|source| LiveError::Io {
                path: d.clone(),
                source,
            })?;
            let busy = std::fs::read_dir(d)
                .map_err(|source| LiveError::Io {
                    path: d.clone(),
                    source,
                })?
                .flatten()
                .any(|e| e.file_name().to_str().and_then(FileKind::of_name).is_some());
            if busy {
                return Err(LiveError::NotEmpty(d.clone()));
            }
            (d.clone(), None)
        }
        None => {
            let t = tempfile::Builder::new()
                .prefix("perfscape-replay-")
                .tempdir()
                .map_err(|source| LiveError::Io {
                    path: std::env::temp_dir(),
                    source,
                })?;
            (t.path().to_path_buf(), Some(t))
        }
    };
    let mut live = opts.live.clone();
    if live.expected_threads.is_none() {
        live.expected_threads = Some(plan.threads);
    }
    let (tell, told) = mpsc::channel::<WriterMsg>();
    // The watcher first, so that it sees the files appear.
    let guard = ReplayGuard::new(tell, temp);
    let run = start(&dir, &live, Some(guard), begin.series)?;
    let target = run.dir().to_path_buf();
    let speed = opts.speed;
    let hold = begin.hold_after_first_sample;
    let writer = std::thread::Builder::new()
        .name("perfscape-replay".into())
        .spawn(move || write_plan(&plan, &target, speed, hold, &told))
        .map_err(LiveError::Thread)?;
    run.set_replay_writer(writer);
    Ok(run)
}

/// What the writer was told so far.
struct Told<'a> {
    rx: &'a Receiver<WriterMsg>,
    resumed: bool,
}

impl Told<'_> {
    /// Waits until `at` (`None`: until resumed); false when told to stop (or the run is gone).
    fn wait(&mut self, at: Option<Instant>) -> bool {
        loop {
            let msg = match at {
                None if self.resumed => return true,
                None => self.rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
                Some(at) => {
                    let wait = at.saturating_duration_since(Instant::now());
                    if wait.is_zero() {
                        return true;
                    }
                    self.rx.recv_timeout(wait)
                }
            };
            match msg {
                Ok(WriterMsg::Resume) => self.resumed = true,
                Err(RecvTimeoutError::Timeout) => return true,
                Ok(WriterMsg::Stop) | Err(RecvTimeoutError::Disconnected) => return false,
            }
        }
    }

    /// False when told to stop meanwhile.
    fn go_on(&mut self) -> bool {
        loop {
            match self.rx.try_recv() {
                Ok(WriterMsg::Resume) => self.resumed = true,
                Ok(WriterMsg::Stop) => return false,
                Err(TryRecvError::Empty | TryRecvError::Disconnected) => return true,
            }
        }
    }
}

/// Writes the plan into `dir` at its pace (with `hold`, waits after the first sample until
/// resumed); stops early when told to.
fn write_plan(plan: &ReplayPlan, dir: &Path, speed: f64, hold: bool, rx: &Receiver<WriterMsg>) {
    let mut told = Told { rx, resumed: false };
    let mut t0 = Instant::now();
    let ts0 = plan.writes.first().map_or(0, |w| w.timestamp_us);
    for (i, w) in plan.writes.iter().enumerate() {
        if hold && i > 0 && i == plan.first_sample_writes {
            // Held: the rest follows the pace from the moment it is resumed.
            let paused = Instant::now();
            if !told.wait(None) {
                return;
            }
            t0 += paused.elapsed();
        }
        if speed > 0.0 {
            let at = t0 + Duration::from_secs_f64(((w.timestamp_us - ts0).max(0) as f64 / 1e6) / speed);
            if !told.wait(Some(at)) {
                return;
            }
        }
        if !told.go_on() {
            return;
        }
        let f = &plan.files[w.file];
        let bytes = &f.bytes[w.range.clone()];
        let path = dir.join(&f.name);
        // A failed write shows as a missing sample or thread in the watched run.
        let _ = if f.atomic {
            let tmp = dir.join(format!(".{}.replay-tmp", f.name));
            std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, &path))
        } else {
            OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .and_then(|mut file| file.write_all(bytes))
        };
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn documents_and_timestamps_are_found() {
        let file = b"<profile_xml>\n<thread/>\n</profile_xml>\n<profile_xml>\n<profile><timestamp>17</timestamp></profile>\n</profile_xml>\n\n<profile_xml>\n<timestamp> 20</timestamp></profile_xml>\npartial";
        let r = doc_ranges(file);
        assert_eq!(r.len(), 4);
        assert_eq!(r.iter().map(|r| r.len()).sum::<usize>(), file.len());
        assert_eq!(&file[r[3].clone()], b"partial");
        let ts: Vec<_> = r.iter().map(|r| doc_timestamp(&file[r.clone()])).collect();
        assert_eq!(ts, vec![None, Some(17), Some(20), None]);
        let plan = ReplayPlan::from_files(vec![("snapshot.0.0.0".into(), file.to_vec())]).unwrap();
        let times: Vec<i64> = plan.writes.iter().map(|w| w.timestamp_us).collect();
        assert_eq!(times, vec![17, 17, 20, 20]);
        assert_eq!(plan.duration_us(), 3);
        // The first sample: the metadata document and the first with a timestamp.
        assert_eq!(plan.first_sample_writes, 2);
        assert!(ReplayPlan::from_files(vec![("README".into(), vec![])]).is_err());
    }

    #[test]
    fn dump_names_order_the_dumps() {
        let plan = ReplayPlan::from_files(vec![
            ("dump__Sat-Nov-21-19:41:52-2026__.0.0.0".into(), b"b".to_vec()),
            ("dump__Sat-Nov-21-19:41:49-2026__.0.0.0".into(), b"a".to_vec()),
            ("profile.0.0.0".into(), b"p".to_vec()),
        ])
        .unwrap();
        let order: Vec<&str> = plan
            .writes
            .iter()
            .map(|w| plan.files[w.file].name.as_str())
            .collect();
        assert_eq!(
            order,
            [
                "dump__Sat-Nov-21-19:41:49-2026__.0.0.0",
                "dump__Sat-Nov-21-19:41:52-2026__.0.0.0",
                "profile.0.0.0"
            ]
        );
        assert_eq!(plan.duration_us(), 3_000_000);
        // The thread's first sample is its earliest dump (listed second).
        assert_eq!(plan.first_sample_writes, 1);
        assert!(perfscape_formats::tau::dumps::dump_file_parts(&plan.files[0].name).is_some());
    }
}
