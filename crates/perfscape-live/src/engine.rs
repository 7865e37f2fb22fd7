//! The watcher's core, without threads or file-system notifications: "these files may have
//! changed" in, [`LiveEvent`]s out. [`crate::watch`] drives it from a background thread.

use crate::event::{AmendedEvent, FinishReason, LiveEvent, SampleEvent};
use crate::files::{FileKind, Tail, TailRead, list};
use crate::options::LiveOptions;
use crate::series_handle::SeriesHandle;
use perfscape_formats::FileError;
use perfscape_formats::tau::dumps::parse_dump;
use perfscape_formats::tau::snapshot::SnapshotStream;
use perfscape_model::{Alignment, Integrated, Integrator, IntegratorOptions, ThreadId, ThreadSample};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

mod ending;

/// Which kind of series the directory holds (decided by the first series file seen; TAU
/// snapshot files win when both kinds are there, as in the registry's detection order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Snapshots,
    Dumps,
}

/// A snapshot file being read.
#[derive(Debug)]
struct SnapFile {
    path: PathBuf,
    /// The thread of the file name.
    thread: ThreadId,
    stream: SnapshotStream,
    tail: Tail,
    /// `(name, timestamp)` of the snapshots integrated, in file order (to skip them when
    /// the file is rewritten with the same content).
    delivered: Vec<(String, i64)>,
    /// Snapshots the current stream produced.
    produced: usize,
    /// The current stream's content differs from what was delivered before a rewrite.
    diverged: bool,
    /// The `<thread>` declaration was compared with the file name.
    decl_checked: bool,
    /// The last read failed: the message (reported once) and the file's size then (the
    /// file is tried again when its size changes, or when it is reported changed).
    failed: Option<(String, u64)>,
}

/// The incremental dumps of one thread.
#[derive(Debug, Default)]
struct DumpThread {
    /// Dumps integrated (or given up), i.e. the position of the next one.
    done: usize,
    /// Files integrated or given up.
    seen: BTreeSet<PathBuf>,
    /// Files not integrated yet, in order: `(time from the name, path)`.
    waiting: BTreeSet<(Option<i64>, PathBuf)>,
    /// The first waiting file failed to parse: since when, at which size, why.
    failing: Option<(Instant, u64, FileError)>,
}

/// The core of a live run; see the module documentation.
#[derive(Debug)]
pub(crate) struct Engine {
    dir: PathBuf,
    opts: LiveOptions,
    series: SeriesHandle,
    mode: Option<Mode>,
    /// Snapshot files by file name.
    snaps: BTreeMap<String, SnapFile>,
    /// Threads ended, counted (to skip the full check while some are running).
    ended_known: usize,
    dumps: BTreeMap<ThreadId, DumpThread>,
    /// Threads known (a file of theirs appeared).
    known: BTreeSet<ThreadId>,
    /// Threads that ended, and whether by a `final` block (else by a profile file).
    ended: BTreeMap<ThreadId, bool>,
    /// Threads with a `profile.N.C.T` file.
    profiles: BTreeSet<ThreadId>,
    /// Paths whose reading must continue (a read stopped at the size limit).
    more: BTreeSet<PathBuf>,
    last_change: Instant,
    /// When the last thread appeared.
    last_appeared: Option<Instant>,
    /// When a sample was first pushed while fewer than `expected_threads` were known.
    held_since: Option<Instant>,
    ignored_notice: bool,
    last_scan_error: Option<String>,
    /// When the `final` sample was announced (threads still running are given up
    /// `max_wait` after it; see the `ending` module).
    final_announced: Option<Instant>,
    finished: bool,
}

impl Engine {
    /// An engine for `dir`; it grows `series` (emptied first: a replay started again from
    /// the beginning keeps the series its readers hold), or a new one.
    pub(crate) fn new(dir: PathBuf, opts: LiveOptions, now: Instant, series: Option<SeriesHandle>) -> Self {
        let integrator = Integrator::new(IntegratorOptions {
            alignment: Alignment::ByName,
            max_wait: opts.max_wait,
            window: opts.sample_window,
        });
        let series = match series {
            Some(s) => {
                *s.write() = integrator;
                s
            }
            None => SeriesHandle::new(integrator),
        };
        Self {
            dir,
            opts,
            series,
            mode: None,
            snaps: BTreeMap::new(),
            ended_known: 0,
            dumps: BTreeMap::new(),
            known: BTreeSet::new(),
            ended: BTreeMap::new(),
            profiles: BTreeSet::new(),
            more: BTreeSet::new(),
            last_change: now,
            last_appeared: None,
            held_since: None,
            ignored_notice: false,
            last_scan_error: None,
            final_announced: None,
            finished: false,
        }
    }

    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    pub(crate) fn series(&self) -> &SeriesHandle {
        &self.series
    }

    pub(crate) fn is_finished(&self) -> bool {
        self.finished
    }

    /// One round: reads the files in `changed` (paths reported by the file system), and all
    /// files of the directory that changed when `rescan` is set; integrates; decides whether
    /// the run is finished.
    pub(crate) fn step(&mut self, changed: Vec<PathBuf>, rescan: bool, now: Instant) -> Vec<LiveEvent> {
        let mut out = Vec::new();
        if self.finished {
            return out;
        }
        let mut paths = changed;
        paths.extend(std::mem::take(&mut self.more));
        if rescan {
            paths.extend(self.scan(&mut out));
        }
        self.read_paths(paths, now, &mut out);
        self.give_up_on_failing_dumps(now, &mut out);
        if !self.holding(now) {
            self.poll(now, &mut out);
        }
        self.note_final_announced(&out, now);
        self.end_stalled(now, &mut out);
        self.maybe_finish(now, &mut out);
        out
    }

    /// Ends the run now: threads that have not ended are ended, waiting samples are
    /// integrated (with those threads missing), incomplete blocks are reported.
    pub(crate) fn stop(&mut self, now: Instant) -> Vec<LiveEvent> {
        let mut out = Vec::new();
        if !self.finished {
            // Whatever arrived meanwhile first.
            let mut paths: Vec<PathBuf> = std::mem::take(&mut self.more).into_iter().collect();
            paths.extend(self.scan(&mut out));
            self.read_paths(paths, now, &mut out);
            self.finish(FinishReason::Stopped, now, &mut out);
        }
        out
    }

    /// When the caller should call [`Engine::step`] again at the latest even if no file
    /// changes (a sample waiting for `max_wait`, a dump being retried, the quiet period).
    pub(crate) fn next_wakeup(&self, now: Instant) -> Option<Duration> {
        if self.finished {
            return None;
        }
        if !self.more.is_empty() {
            return Some(Duration::ZERO);
        }
        let mut next: Option<Duration> = None;
        let mut at = |d: Duration| next = Some(next.map_or(d, |n| n.min(d)));
        let pending = self.series.pending() > 0;
        if pending && let Some(w) = self.opts.max_wait {
            at((w / 5).clamp(Duration::from_millis(1), Duration::from_millis(50)));
        }
        if pending && let Some(t) = self.last_appeared {
            let left = self
                .opts
                .thread_grace
                .saturating_sub(now.saturating_duration_since(t));
            if !left.is_zero() {
                at(left);
            }
        }
        if self.dumps.values().any(|d| d.failing.is_some()) || !self.profiles.is_empty() || self.all_ended() {
            at(Duration::from_millis(100));
        }
        if let Some(left) = self.stall_deadline(now) {
            at(left.max(Duration::from_millis(1)));
        }
        next
    }

    fn all_ended(&self) -> bool {
        !self.known.is_empty()
            && self.ended_known >= self.known.len()
            && self.known.iter().all(|t| self.ended.contains_key(t))
    }

    /// Records that `t` ended (by a `final` block or not); false if it had already.
    fn mark_ended(&mut self, t: ThreadId, by_final: bool) -> bool {
        if self.ended.contains_key(&t) {
            return false;
        }
        self.ended.insert(t, by_final);
        if self.known.contains(&t) {
            self.ended_known += 1;
        }
        true
    }

    /// Lists the directory; registers new files; returns the series files that changed.
    fn scan(&mut self, out: &mut Vec<LiveEvent>) -> Vec<PathBuf> {
        let listed = match list(&self.dir) {
            Ok(l) => {
                self.last_scan_error = None;
                l
            }
            Err(e) => {
                let msg = format!("cannot list the directory: {e}");
                if self.last_scan_error.as_ref() != Some(&msg) {
                    out.push(LiveEvent::FileError(FileError::whole(&self.dir, msg.clone())));
                    self.last_scan_error = Some(msg);
                }
                return Vec::new();
            }
        };
        let mut changed = Vec::new();
        // Snapshot files read before and not listed now were removed: reading them tells
        // (also when notifications are off or missed the removal).
        for (name, f) in &self.snaps {
            let listed_now = listed.iter().any(|l| file_name(&l.path) == Some(name.as_str()));
            if !listed_now && !self.ended.contains_key(&f.thread) {
                changed.push(f.path.clone());
            }
        }
        for l in listed {
            let differs = match l.kind {
                FileKind::Snapshot(_) if self.mode == Some(Mode::Dumps) => false,
                FileKind::Dump(..) if self.mode == Some(Mode::Snapshots) => false,
                FileKind::Snapshot(_) => file_name(&l.path)
                    .and_then(|n| self.snaps.get(n))
                    .is_none_or(|s| match &s.failed {
                        Some((_, size)) => l.meta.len() != *size,
                        None => s.tail.differs(&l.meta),
                    }),
                FileKind::Dump(t, _) => self.dumps.get(&t).is_none_or(|d| !d.seen.contains(&l.path)),
                FileKind::Profile(t) => !self.profiles.contains(&t),
            };
            if differs {
                changed.push(l.path);
            }
        }
        changed
    }

    fn read_paths(&mut self, paths: Vec<PathBuf>, now: Instant, out: &mut Vec<LiveEvent>) {
        let mut samples: Vec<ThreadSample> = Vec::new();
        // Each file once, snapshot files in thread order.
        let mut snaps = BTreeMap::new();
        let (mut dumps, mut profiles) = (BTreeSet::new(), BTreeSet::new());
        for path in paths {
            match FileKind::of_path(&path) {
                Some(FileKind::Snapshot(t)) => {
                    snaps.insert((t, path.file_name().map(ToOwned::to_owned)), path);
                }
                Some(FileKind::Dump(t, time)) => {
                    dumps.insert((path, t, time));
                }
                Some(FileKind::Profile(t)) => {
                    profiles.insert((path, t));
                }
                None => {}
            }
        }
        let snaps: Vec<(PathBuf, ThreadId)> = snaps.into_iter().map(|((t, _), p)| (p, t)).collect();
        // Snapshot files first: they decide the mode when both kinds appear at once.
        for (path, t) in snaps {
            if self.accept(Mode::Snapshots, &path, out) {
                self.read_snapshot(path, t, now, &mut samples, out);
            }
        }
        let mut dump_threads = BTreeSet::new();
        for (path, t, time) in dumps {
            if path.exists() && self.accept(Mode::Dumps, &path, out) {
                self.register(t, &path, now, out);
                let d = self.dumps.entry(t).or_default();
                if !d.seen.contains(&path) {
                    d.waiting.insert((time, path));
                    dump_threads.insert(t);
                }
            }
        }
        for t in dump_threads {
            self.read_dumps(t, now, &mut samples, out);
        }
        self.push(samples, now, out);
        for (path, t) in profiles {
            if path.exists() && self.profiles.insert(t) {
                self.last_change = now;
            }
        }
        // A profile file ends its thread (TAU writes it at exit), after the thread's
        // snapshots of this round were integrated.
        let to_end: Vec<ThreadId> = self
            .profiles
            .iter()
            .filter(|t| self.known.contains(t) && !self.ended.contains_key(t))
            .copied()
            .collect();
        for t in to_end {
            self.series.write().end_thread(t);
            self.mark_ended(t, false);
            out.push(LiveEvent::ThreadEnded { thread: t });
        }
    }

    /// Decides the mode with the first series file; false for files of the other kind.
    fn accept(&mut self, mode: Mode, path: &Path, out: &mut Vec<LiveEvent>) -> bool {
        match self.mode {
            None if mode == Mode::Dumps && self.has_snapshot_files() => {
                // Snapshot files win, also when a dump is seen first (TAU creates the
                // snapshot file at the first snapshot, maybe still empty, before the dump).
                self.accept(Mode::Snapshots, path, out);
                self.accept(mode, path, out)
            }
            None => {
                self.mode = Some(mode);
                let alignment = match mode {
                    Mode::Snapshots => Alignment::ByName,
                    Mode::Dumps => Alignment::ByPosition,
                };
                *self.series.write() = Integrator::new(IntegratorOptions {
                    alignment,
                    max_wait: self.opts.max_wait,
                    window: self.opts.sample_window,
                });
                out.push(LiveEvent::Notice {
                    message: match mode {
                        Mode::Snapshots => "reading TAU snapshot files (snapshot.N.C.T); samples are matched by name".into(),
                        Mode::Dumps => "reading TAU incremental dumps (dump__<time>__.N.C.T); the k-th dump of every thread is sample k".into(),
                    },
                });
                true
            }
            Some(m) if m == mode => true,
            Some(_) => {
                if !self.ignored_notice {
                    self.ignored_notice = true;
                    out.push(LiveEvent::Notice {
                        message: format!(
                            "{} is ignored: this run is read from its {} (watch a directory with one kind of series to read the other)",
                            path.display(),
                            if self.mode == Some(Mode::Snapshots) { "snapshot files" } else { "incremental dumps" }
                        ),
                    });
                }
                false
            }
        }
    }

    /// True while samples are not integrated yet: a thread appeared less than
    /// [`LiveOptions::thread_grace`] ago (others may follow), or fewer than
    /// [`LiveOptions::expected_threads`] are known (at most `max_wait`).
    fn holding(&self, now: Instant) -> bool {
        self.opts
            .holding(self.last_appeared, self.known.len(), self.held_since, now)
    }

    fn has_snapshot_files(&self) -> bool {
        list(&self.dir).is_ok_and(|l| l.iter().any(|f| matches!(f.kind, FileKind::Snapshot(_))))
    }

    fn register(&mut self, t: ThreadId, path: &Path, now: Instant, out: &mut Vec<LiveEvent>) {
        if self.known.insert(t) {
            if self.ended.contains_key(&t) {
                self.ended_known += 1;
            }
            self.last_appeared = Some(now);
            self.series.write().expect_thread(t);
            out.push(LiveEvent::ThreadAppeared {
                thread: t,
                path: path.to_path_buf(),
            });
        }
    }

    fn read_snapshot(
        &mut self,
        path: PathBuf,
        t: ThreadId,
        now: Instant,
        samples: &mut Vec<ThreadSample>,
        out: &mut Vec<LiveEvent>,
    ) {
        let Some(name) = file_name(&path).map(str::to_string) else {
            return;
        };
        if !self.snaps.contains_key(&name) {
            if !path.exists() {
                return;
            }
            self.register(t, &path, now, out);
            self.snaps.insert(
                name.clone(),
                SnapFile {
                    path: path.clone(),
                    thread: t,
                    stream: SnapshotStream::new(&path),
                    tail: Tail::default(),
                    delivered: Vec::new(),
                    produced: 0,
                    diverged: false,
                    decl_checked: false,
                    failed: None,
                },
            );
        }
        let Some(f) = self.snaps.get_mut(&name) else {
            return;
        };
        let (bytes, more) = match f.tail.read(&path) {
            Ok(TailRead::Gone) => {
                let (t, read) = (f.thread, f.delivered.len());
                self.snapshot_removed(&path, t, read, out);
                return;
            }
            Ok(TailRead::Appended { bytes, more }) => (bytes, more),
            Ok(TailRead::Rewritten { why, bytes, more }) => {
                let dropped = f.stream.buffered();
                f.stream = SnapshotStream::new(&path);
                f.produced = 0;
                f.diverged = false;
                out.push(LiveEvent::Notice {
                    message: format!(
                        "{}: {why}; reading it again from the start (the {} snapshot(s) already integrated are not delivered twice{})",
                        path.display(),
                        f.delivered.len(),
                        if dropped > 0 {
                            format!("; {dropped} bytes of an unfinished block were discarded")
                        } else {
                            String::new()
                        }
                    ),
                });
                (bytes, more)
            }
            Err(e) => {
                let message = format!("cannot read: {e} (tried again when the file changes)");
                // As the directory listing sees it (not following a link).
                let size = std::fs::symlink_metadata(&path).map_or(0, |m| m.len());
                if f.failed.as_ref().is_none_or(|(m, _)| *m != message) {
                    out.push(LiveEvent::FileError(FileError::whole(&path, message.clone())));
                }
                f.failed = Some((message, size));
                return;
            }
        };
        f.failed = None;
        if bytes.is_empty() {
            return;
        }
        let pushed = f.stream.push(&bytes);
        let mut mismatch = None;
        if !f.decl_checked
            && let Some(declared) = f.stream.thread()
        {
            f.decl_checked = true;
            if declared != f.thread {
                mismatch = Some((f.thread, declared));
            }
        }
        let mut fresh = Vec::new();
        for s in pushed.samples {
            let i = f.produced;
            f.produced += 1;
            if i < f.delivered.len() && !f.diverged {
                if f.delivered[i] == (s.name.clone(), s.timestamp_us) {
                    continue; // integrated before the file was rewritten
                }
                f.diverged = true;
                out.push(LiveEvent::FileError(FileError::whole(
                    &f.path,
                    format!(
                        "rewritten with different content: snapshot {} is `{}` at {} µs where `{}` at {} µs was read before (a new run in the same directory?); its snapshots from here on are integrated as further samples of thread {}",
                        i + 1,
                        s.name,
                        s.timestamp_us,
                        f.delivered[i].0,
                        f.delivered[i].1,
                        s.thread
                    ),
                )));
            }
            f.delivered.push((s.name.clone(), s.timestamp_us));
            fresh.push(s);
        }
        self.last_change = now;
        if more {
            self.more.insert(path.clone());
        }
        out.extend(pushed.errors.into_iter().map(LiveEvent::FileError));
        if let Some((named, declared)) = mismatch {
            out.push(LiveEvent::FileError(FileError::whole(
                &path,
                format!(
                    "the file name says thread {named} but the file declares thread {declared}; its snapshots are integrated as {declared} and thread {named} is not waited for"
                ),
            )));
            self.series.write().end_thread(named);
            self.mark_ended(named, false);
            self.register(declared, &path, now, out);
        }
        samples.extend(fresh);
    }

    fn read_dumps(
        &mut self,
        t: ThreadId,
        now: Instant,
        samples: &mut Vec<ThreadSample>,
        out: &mut Vec<LiveEvent>,
    ) {
        let Some(d) = self.dumps.get_mut(&t) else {
            return;
        };
        while let Some((time, path)) = d.waiting.first().cloned() {
            let bytes = match std::fs::read(&path) {
                Ok(b) => b,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    d.waiting.pop_first();
                    d.failing = None;
                    continue;
                }
                Err(e) => {
                    let err = FileError::whole(&path, format!("cannot read: {e}"));
                    d.failing.get_or_insert((now, 0, err));
                    break;
                }
            };
            self.last_change = now;
            // A file whose timers are complete but whose tail is cut may still be being
            // written: waited for like an unreadable one.
            let parsed = parse_dump(&bytes, &path, t, d.done + 1, time).and_then(|f| {
                match f.partial.into_iter().next() {
                    Some(cut) => Err(cut),
                    None => Ok((f.sample, f.warnings)),
                }
            });
            match parsed {
                Ok((sample, warnings)) => {
                    out.extend(warnings.into_iter().map(LiveEvent::FileError));
                    d.waiting.pop_first();
                    d.seen.insert(path);
                    d.failing = None;
                    d.done += 1;
                    samples.push(sample);
                }
                Err(e) => {
                    // Still being written (TAU renames finished files into place, but other
                    // writers may not): retried when it changes, given up after `quiet`.
                    let size = bytes.len() as u64;
                    match &mut d.failing {
                        Some((_, s, err)) if *s == size => *err = e,
                        _ => d.failing = Some((now, size, e)),
                    }
                    break;
                }
            }
        }
    }

    fn give_up_on_failing_dumps(&mut self, now: Instant, out: &mut Vec<LiveEvent>) {
        let mut samples = Vec::new();
        let stuck: Vec<ThreadId> = self
            .dumps
            .iter()
            .filter(|(_, d)| {
                d.failing
                    .as_ref()
                    .is_some_and(|(since, _, _)| now.saturating_duration_since(*since) >= self.opts.quiet)
            })
            .map(|(t, _)| *t)
            .collect();
        for t in stuck {
            let Some(d) = self.dumps.get_mut(&t) else {
                continue;
            };
            let Some((_, _, err)) = d.failing.take() else {
                continue;
            };
            let k = d.done + 1;
            if let Some((_, path)) = d.waiting.pop_first() {
                d.seen.insert(path);
            }
            d.done += 1;
            self.series.write().skip_sample(t);
            out.push(LiveEvent::FileError(FileError {
                message: format!(
                    "{} (dump {k} of thread {t}, unchanged for {:?}: given up; that sample will miss this thread)",
                    err.message, self.opts.quiet
                ),
                ..err
            }));
            self.read_dumps(t, now, &mut samples, out);
        }
        self.push(samples, now, out);
    }

    /// Integrates thread samples and reports what the integrator did.
    fn push(&mut self, samples: Vec<ThreadSample>, now: Instant, out: &mut Vec<LiveEvent>) {
        if samples.is_empty() {
            return;
        }
        if self.held_since.is_none() && self.opts.expected_threads.is_some_and(|n| self.known.len() < n) {
            self.held_since = Some(now);
        }
        let mut finals = Vec::new();
        {
            let mut integ = self.series.write();
            for s in samples {
                let (thread, name) = (s.thread, s.name.clone());
                let is_final = self.mode == Some(Mode::Snapshots) && name == "final";
                if let Err(e) = integ.push(s, now) {
                    out.push(LiveEvent::FileError(FileError::whole(
                        &self.dir,
                        format!("thread {thread}: sample `{name}` not integrated: {e}"),
                    )));
                }
                if is_final && !self.ended.contains_key(&thread) {
                    integ.end_thread(thread);
                    finals.push(thread);
                }
            }
        }
        for thread in finals {
            if self.mark_ended(thread, true) {
                out.push(LiveEvent::ThreadEnded { thread });
            }
        }
    }

    fn poll(&mut self, now: Instant, out: &mut Vec<LiveEvent>) {
        let mut integ = self.series.write();
        Self::report(&mut integ, now, out);
    }

    fn report(integ: &mut Integrator, now: Instant, out: &mut Vec<LiveEvent>) {
        for done in integ.poll(now) {
            let series = integ.series();
            match done {
                Integrated::Sample(id) => {
                    let Some(info) = series.sample(id) else { continue };
                    let mut threads_missing: Vec<ThreadId> = info
                        .missing_threads()
                        .into_iter()
                        .filter_map(|t| series.threads().get(t.index()).copied())
                        .collect();
                    threads_missing.sort();
                    out.push(LiveEvent::Sample(SampleEvent {
                        id,
                        name: info.name().to_string(),
                        timestamp_us: info.timestamp_us(),
                        threads_present: info.present_count(),
                        threads_expected: info.expected_threads(),
                        threads_missing,
                        complete: info.is_complete(),
                    }));
                }
                Integrated::Amended { sample, thread } => {
                    let Some(info) = series.sample(sample) else {
                        continue;
                    };
                    let Some(&thread) = series.threads().get(thread.index()) else {
                        continue;
                    };
                    out.push(LiveEvent::Amended(AmendedEvent {
                        id: sample,
                        thread,
                        threads_present: info.present_count(),
                        complete: info.is_complete(),
                    }));
                }
            }
        }
    }

    fn maybe_finish(&mut self, now: Instant, out: &mut Vec<LiveEvent>) {
        let quiet_for = now.saturating_duration_since(self.last_change);
        let enough_threads = self.opts.expected_threads.is_none_or(|n| self.known.len() >= n);
        if self.all_ended() && enough_threads {
            let waiting = self.series.pending() > 0
                || self.snaps.values().any(|f| f.stream.buffered() > 0)
                || self.dumps.values().any(|d| !d.waiting.is_empty())
                || !self.more.is_empty();
            // Threads ended by a profile file may still flush snapshot bytes (stdio buffers
            // are written at exit): give them a moment.
            let by_profile = self.ended.values().any(|by_final| !by_final);
            let settled = !by_profile || quiet_for >= self.opts.quiet / 4;
            if (!waiting && settled) || quiet_for >= self.opts.quiet {
                // A last look: files that appeared or grew meanwhile are read first.
                let mut more = Vec::new();
                let changed = self.scan(&mut more);
                if changed.is_empty() {
                    out.append(&mut more);
                    self.finish(FinishReason::AllThreadsEnded, now, out);
                    return;
                }
                out.append(&mut more);
                self.read_paths(changed, now, out);
                self.poll(now, out);
                return;
            }
        }
        if !self.profiles.is_empty() && enough_threads && quiet_for >= self.opts.quiet {
            self.finish(FinishReason::Quiet, now, out);
        }
    }

    fn finish(&mut self, reason: FinishReason, now: Instant, out: &mut Vec<LiveEvent>) {
        {
            let mut integ = self.series.write();
            for &t in &self.known {
                integ.end_thread(t);
            }
            Self::report(&mut integ, now, out);
        }
        for (_, f) in std::mem::take(&mut self.snaps) {
            if f.stream.buffered() > 0 {
                for e in f.stream.finish() {
                    out.push(if reason == FinishReason::Stopped {
                        // Not a damaged file: the program was still writing the block.
                        LiveEvent::Notice {
                            message: format!("stopped while a block was being written: {e}"),
                        }
                    } else {
                        LiveEvent::FileError(e)
                    });
                }
            }
        }
        for (t, d) in &self.dumps {
            for (_, p) in &d.waiting {
                out.push(LiveEvent::FileError(FileError::whole(
                    p,
                    format!("dump of thread {t} not integrated: the run finished before it could be read"),
                )));
            }
        }
        out.push(LiveEvent::Finished { reason });
        self.finished = true;
    }
}

/// Reports what the integrator integrated since the last call, as events (shared with the
/// streamed run's engine).
pub(crate) fn report_integrated(integ: &mut Integrator, now: Instant, out: &mut Vec<LiveEvent>) {
    Engine::report(integ, now, out);
}

fn file_name(path: &Path) -> Option<&str> {
    path.file_name()?.to_str()
}
