//! Helpers shared by the cache tests (`cache.rs`, `cache_dir.rs`): corpus inputs, run copies
//! without cache files, one fixture per test (its own run copies and cache directory),
//! bit-for-bit profile comparison.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use perfscape_formats::cache::{self, ENTRY_SUFFIX, entry_path};
use perfscape_formats::{CacheMode, LoadReport, OpenOptions, Opened, Parts, detect, open};
use perfscape_model::{AtomicEventId, Profile, ValueKind};
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

pub use crate::common::corpus;

pub fn off() -> OpenOptions<'static> {
    OpenOptions {
        cache: CacheMode::Off,
        parts: Parts::PROFILE,
        ..OpenOptions::default()
    }
}

/// The cache on (read a valid entry, else load and write it), as the CLI loads, in the cache
/// directory `dir` (with the default size limit, whatever the environment says).
pub fn with_dir(dir: &Path) -> OpenOptions<'_> {
    OpenOptions {
        cache: CacheMode::ReadWrite,
        cache_dir: Some(dir),
        cache_max_bytes: Some(cache::DEFAULT_MAX_BYTES),
        parts: Parts::PROFILE,
        ..OpenOptions::default()
    }
}

/// Every `f64` compared by its bits (NaN payloads, -0.0), through the public accessors.
pub fn assert_same_bits(a: &Profile, b: &Profile, what: &str) {
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<u64>>();
    assert_eq!(a.threads(), b.threads(), "{what}");
    assert_eq!(a.metrics(), b.metrics(), "{what}");
    assert_eq!(a.groups(), b.groups(), "{what}");
    assert_eq!(a.events(), b.events(), "{what}");
    assert_eq!(a.atomic_events(), b.atomic_events(), "{what}");
    assert_eq!(a.metadata(), b.metadata(), "{what}");
    assert_eq!(a.call_tree(), b.call_tree(), "{what}");
    for e in a.event_ids() {
        let (x, y) = (a.interval(e), b.interval(e));
        assert_eq!(x.threads(), y.threads(), "{what}");
        for kind in ValueKind::ALL {
            for m in a.metric_ids() {
                assert_eq!(
                    bits(x.values(kind, m)),
                    bits(y.values(kind, m)),
                    "{what}: {kind:?}"
                );
            }
        }
        assert_eq!(b.event_by_name(&a.event_name(e)), Some(e), "{what}");
    }
    for i in 0..a.atomic_events().len() {
        let id = AtomicEventId::from(i);
        let (x, y) = (a.atomic(id), b.atomic(id));
        assert_eq!(x.threads(), y.threads(), "{what}");
        for (p, q) in [
            (x.count(), y.count()),
            (x.max(), y.max()),
            (x.min(), y.min()),
            (x.mean(), y.mean()),
            (x.sum_squares(), y.sum_squares()),
        ] {
            assert_eq!(bits(p), bits(q), "{what}");
        }
    }
}

pub fn is_supported(d: &perfscape_formats::Format) -> bool {
    !d.name.is_empty()
}

/// Every loadable input of the corpus: directories detected as a supported format (TAU runs,
/// snapshot, merged and dump runs, HPCToolkit databases), and supported files outside them
/// (CUBE, ppk, Caliper, merged XML, pprof, Chrome traces, perf).
pub fn corpus_inputs() -> Vec<PathBuf> {
    pub fn visit(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<PathBuf> = fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                let format = detect(&p).ok().filter(|f| is_supported(f));
                if let Some(f) = format {
                    out.push(p.clone());
                    // A TAU trace run also holds TAU's conversions of it (trace.chrome.json,
                    // trace2profile and ParaProf dumps under oracle/): inputs of their own.
                    if f.name == "tau-trace" && depth < 3 {
                        visit(&p, depth + 1, out);
                    }
                } else if depth < 3 {
                    visit(&p, depth + 1, out);
                }
            } else if detect(&p).is_ok_and(is_supported) {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    for base in [
        "tau",
        "tau-real",
        "tau-snapshot",
        "tau-xml",
        "tau-ppk",
        "cube",
        "hpctoolkit",
        "caliper",
        "pprof",
        "chrome-trace",
        "perf-data",
        "perf-script",
        "otf2",
    ] {
        visit(&corpus().join(base), 0, &mut out);
    }
    out
}

pub fn without_cache_note(r: &LoadReport) -> LoadReport {
    let mut r = r.clone();
    let last = r.notes.pop().unwrap_or_default();
    assert!(last.starts_with("read from the cache "), "{last}");
    r
}

pub fn from_cache(l: &Opened) -> bool {
    l.report
        .notes
        .last()
        .is_some_and(|n| n.starts_with("read from the cache "))
}

/// Every name under `dir` (recursively, hidden files included) with its size and
/// modification time: what "nothing was written here" is checked against.
pub fn listing(dir: &Path) -> Vec<(PathBuf, u64, SystemTime)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let m = fs::symlink_metadata(&p).unwrap();
            if m.is_dir() {
                stack.push(p.clone());
            }
            out.push((p, m.len(), m.modified().unwrap()));
        }
    }
    out.sort();
    out
}

/// Copies a run directory (two levels) without any perfscape cache file, and sets every
/// file's modification time to one hour ago, so the cache does not treat the files as still
/// being written.
pub fn copy_run(src: &Path, dst: &Path) {
    fs::create_dir_all(dst).unwrap();
    for e in fs::read_dir(src).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap();
        if name.to_string_lossy().contains(ENTRY_SUFFIX) {
            continue;
        }
        let to = dst.join(name);
        if p.is_dir() {
            copy_run(&p, &to);
        } else {
            fs::copy(&p, &to).unwrap();
            fs::set_permissions(&to, fs::Permissions::from_mode(0o644)).unwrap();
            set_age(&to, Duration::from_secs(3600));
        }
    }
}

pub fn set_age(p: &Path, age: Duration) {
    let f = fs::File::options().write(true).open(p).unwrap();
    f.set_modified(SystemTime::now() - age).unwrap();
}

pub fn np4() -> PathBuf {
    corpus().join("tau-real/mpi-stencil-np4-callpath-commmatrix")
}

/// One test's own writable directories: `tmp` for copies of runs, `cache` for the cache.
pub struct Fixture {
    pub tmp: tempfile::TempDir,
    pub cache: tempfile::TempDir,
}

impl Fixture {
    pub fn new() -> Self {
        Fixture {
            tmp: tempfile::tempdir().unwrap(),
            cache: tempfile::tempdir().unwrap(),
        }
    }

    /// A copy of the run `src` at `tmp/name`.
    pub fn copy(&self, src: &Path, name: &str) -> PathBuf {
        let run = self.tmp.path().join(name);
        copy_run(src, &run);
        run
    }

    /// Read-write, in this fixture's cache directory.
    pub fn rw(&self) -> OpenOptions<'_> {
        with_dir(self.cache.path())
    }

    /// The entry of `input` (format detected).
    pub fn entry(&self, input: &Path) -> PathBuf {
        entry_path(input, None, self.cache.path()).unwrap()
    }
}

/// A fixture with a copy of the np4 run and its first (entry-writing) load.
pub fn writable_np4() -> (Fixture, PathBuf, Opened) {
    let f = Fixture::new();
    let run = f.copy(&np4(), "run");
    let before = listing(&run);
    let first = open(&run, &f.rw()).unwrap();
    assert!(!from_cache(&first));
    assert!(first.report.notes.is_empty(), "{:?}", first.report.notes);
    assert!(f.entry(&run).is_file());
    assert_eq!(listing(&run), before, "nothing is written beside the run");
    (f, run, first)
}

pub fn rebuilt_because(l: &Opened, why: &str) {
    assert!(!from_cache(l), "{:?}", l.report.notes);
    assert!(
        l.report.notes.iter().any(|n| n.contains("is out of date")
            && n.contains(why)
            && n.ends_with("the files were read instead")),
        "expected `{why}` in {:?}",
        l.report.notes
    );
}
