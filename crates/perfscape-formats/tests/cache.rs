//! The cache of loaded profiles (`perfscape_formats::cache`): every corpus input round-trips
//! bit for bit through `Profile::encode`/`decode` and through the cache entry; a second load
//! comes from the cache with the same profile and report; touching, changing, removing or
//! adding a source file rebuilds it; damaged entries are detected and rebuilt; nothing is
//! written beside an input; the cache directory stays under its size limit (least recently
//! used entries removed) and `clear` removes perfscape's entries only.
//!
//! Every test copies the run it writes to into its own temporary directory (without cache
//! files) and uses its own temporary cache directory: no two tests share a writable directory,
//! and nothing is written into `../shared`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use perfscape_formats::cache::{self, ENTRY_SUFFIX, entry_path};
use perfscape_formats::{CacheMode, Detected, LoadReport, Loaded, OpenOptions, detect, load, load_as};
use perfscape_model::{AtomicEventId, Profile, ValueKind};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

fn corpus() -> PathBuf {
    let p = std::env::var_os("PERFSCAPE_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"));
    assert!(p.is_dir(), "the shared corpus is expected at {}", p.display());
    p
}

fn off() -> OpenOptions<'static> {
    OpenOptions {
        cache: CacheMode::Off,
        ..OpenOptions::default()
    }
}

/// The cache on (read a valid entry, else load and write it), as the CLI loads, in the cache
/// directory `dir` (with the default size limit, whatever the environment says).
fn with_dir(dir: &Path) -> OpenOptions<'_> {
    OpenOptions {
        cache: CacheMode::ReadWrite,
        cache_dir: Some(dir),
        cache_max_bytes: Some(cache::DEFAULT_MAX_BYTES),
        ..OpenOptions::default()
    }
}

/// Every `f64` compared by its bits (NaN payloads, -0.0), through the public accessors.
fn assert_same_bits(a: &Profile, b: &Profile, what: &str) {
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
        assert_eq!(b.event_by_name(&a.event(e).name), Some(e), "{what}");
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

fn is_supported(d: Detected) -> bool {
    !matches!(d, Detected::Unsupported(_))
}

/// Every loadable input of the corpus: directories detected as a supported format (TAU runs,
/// snapshot, merged and dump runs, HPCToolkit databases), and supported files outside them
/// (CUBE, ppk, Caliper, merged XML, pprof, Chrome traces, perf).
fn corpus_inputs() -> Vec<PathBuf> {
    fn visit(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<PathBuf> = fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                if detect(&p).is_ok_and(is_supported) {
                    out.push(p);
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
    ] {
        visit(&corpus().join(base), 0, &mut out);
    }
    out
}

fn without_cache_note(r: &LoadReport) -> LoadReport {
    let mut r = r.clone();
    let last = r.notes.pop().unwrap_or_default();
    assert!(last.starts_with("read from the cache "), "{last}");
    r
}

fn from_cache(l: &Loaded) -> bool {
    l.report
        .notes
        .last()
        .is_some_and(|n| n.starts_with("read from the cache "))
}

#[test]
fn every_corpus_input_round_trips_bit_for_bit() {
    let inputs = corpus_inputs();
    let mut loaded = 0;
    let mut tau_runs = 0;
    for input in &inputs {
        let l = load(input, &off()).unwrap_or_else(|e| panic!("{}: {e}", input.display()));
        loaded += 1;
        if l.report.format == "tau" {
            tau_runs += 1;
        }
        let bytes = l.profile.encode();
        let back = Profile::decode(&bytes).unwrap_or_else(|e| panic!("{}: {e}", input.display()));
        assert_same_bits(&l.profile, &back, &input.display().to_string());
        assert!(l.profile == back || has_nan(&l.profile), "{}", input.display());
        assert_eq!(back.encode(), bytes, "{}: re-encoding differs", input.display());
    }
    // tau/: 7 runs + 8 np* of the strong-scaling set; tau-real: 12 profile runs (one with
    // incremental dumps beside) + 8 ParaProf/trace2profile dumps of the trace run.
    assert_eq!(tau_runs, 35);
    // + 3 snapshot, 3 merged, 9 ppk, 14 CUBE, 2 HPCToolkit, 9 Caliper inputs, 14 pprof,
    // 20 Chrome traces (one in tau-real), 5 perf.data and 4 perf script files.
    assert_eq!(loaded, 118, "{} inputs", inputs.len());
}

fn has_nan(p: &Profile) -> bool {
    p.event_ids().any(|e| {
        ValueKind::ALL.iter().any(|&k| {
            p.metric_ids()
                .any(|m| p.interval(e).values(k, m).iter().any(|v| v.is_nan()))
        })
    })
}

/// Every name under `dir` (recursively, hidden files included) with its size and
/// modification time: what "nothing was written here" is checked against.
fn listing(dir: &Path) -> Vec<(PathBuf, u64, SystemTime)> {
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

#[test]
fn every_corpus_input_reopens_from_the_cache_with_the_same_profile_and_report() {
    let cache = tempfile::tempdir().unwrap();
    let mut reopened = 0;
    for input in corpus_inputs() {
        let beside = if input.is_dir() {
            input.clone()
        } else {
            input.parent().unwrap().to_path_buf()
        };
        let before = listing(&beside);
        let fresh = load(&input, &off()).unwrap();
        let first = load(&input, &with_dir(cache.path())).unwrap();
        assert!(!from_cache(&first), "{}", input.display());
        assert_eq!(first.report, fresh.report, "{}", input.display());
        let second = load(&input, &with_dir(cache.path())).unwrap();
        assert!(
            from_cache(&second),
            "{}: {:?}",
            input.display(),
            second.report.notes
        );
        assert_same_bits(&fresh.profile, &second.profile, &input.display().to_string());
        assert_eq!(
            without_cache_note(&second.report),
            fresh.report,
            "{}",
            input.display()
        );
        // The entry is in the cache directory; nothing was written beside the input.
        assert!(entry_path(&input, None, cache.path()).unwrap().is_file());
        assert_eq!(listing(&beside), before, "{}", input.display());
        reopened += 1;
    }
    assert_eq!(reopened, 118);
    assert_eq!(cache::entries(cache.path()).unwrap().len(), 118);
}

/// Copies a run directory (two levels) without any perfscape cache file, and sets every
/// file's modification time to one hour ago, so the cache does not treat the files as still
/// being written.
fn copy_run(src: &Path, dst: &Path) {
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

use std::os::unix::fs::PermissionsExt;

fn set_age(p: &Path, age: Duration) {
    let f = fs::File::options().write(true).open(p).unwrap();
    f.set_modified(SystemTime::now() - age).unwrap();
}

fn np4() -> PathBuf {
    corpus().join("tau-real/mpi-stencil-np4-callpath-commmatrix")
}

/// One test's own writable directories: `tmp` for copies of runs, `cache` for the cache.
struct Fixture {
    tmp: tempfile::TempDir,
    cache: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Self {
        Fixture {
            tmp: tempfile::tempdir().unwrap(),
            cache: tempfile::tempdir().unwrap(),
        }
    }

    /// A copy of the run `src` at `tmp/name`.
    fn copy(&self, src: &Path, name: &str) -> PathBuf {
        let run = self.tmp.path().join(name);
        copy_run(src, &run);
        run
    }

    /// Read-write, in this fixture's cache directory.
    fn rw(&self) -> OpenOptions<'_> {
        with_dir(self.cache.path())
    }

    /// The entry of `input` (format detected).
    fn entry(&self, input: &Path) -> PathBuf {
        entry_path(input, None, self.cache.path()).unwrap()
    }
}

/// A fixture with a copy of the np4 run and its first (entry-writing) load.
fn writable_np4() -> (Fixture, PathBuf, Loaded) {
    let f = Fixture::new();
    let run = f.copy(&np4(), "run");
    let before = listing(&run);
    let first = load(&run, &f.rw()).unwrap();
    assert!(!from_cache(&first));
    assert!(first.report.notes.is_empty(), "{:?}", first.report.notes);
    assert!(f.entry(&run).is_file());
    assert_eq!(listing(&run), before, "nothing is written beside the run");
    (f, run, first)
}

#[test]
fn a_run_reopens_from_its_entry_in_the_cache_directory() {
    let (f, run, first) = writable_np4();
    let second = load(&run, &f.rw()).unwrap();
    assert!(from_cache(&second));
    assert_eq!(
        second.report.notes.last().unwrap(),
        &format!("read from the cache {}", f.entry(&run).display())
    );
    assert_same_bits(&first.profile, &second.profile, "np4");
    assert_eq!(without_cache_note(&second.report), first.report);
    assert!(from_cache(&load(&run, &f.rw()).unwrap()));
}

#[test]
fn nothing_is_written_beside_a_directory_input_or_a_file_input() {
    let f = Fixture::new();
    let run = f.copy(&np4(), "run");
    let file = f.tmp.path().join("profile.cubex");
    fs::copy(corpus().join("cube/pycubexr-time-p4/profile.cubex"), &file).unwrap();
    set_age(&file, Duration::from_secs(3600));
    let before = listing(f.tmp.path());
    let refresh = OpenOptions {
        cache: CacheMode::Refresh,
        ..f.rw()
    };
    for input in [&run, &file] {
        assert!(!from_cache(&load(input, &f.rw()).unwrap()));
        assert!(from_cache(&load(input, &f.rw()).unwrap()));
        assert!(!from_cache(&load(input, &refresh).unwrap()));
        let named = if input == &run { "tau" } else { "cube" };
        assert!(!from_cache(&load_as(input, named, &f.rw()).unwrap()));
    }
    assert_eq!(listing(f.tmp.path()), before);
    // Two inputs, each detected and named: four entries, all in the cache directory.
    let entries = cache::entries(f.cache.path()).unwrap();
    assert_eq!(entries.len(), 4, "{entries:?}");
    assert!(entries.iter().all(|e| e.path.parent() == Some(f.cache.path())));
}

#[test]
fn cache_files_beside_an_input_are_ignored_and_never_sources() {
    let f = Fixture::new();
    let run = f.copy(&np4(), "run");
    // What older perfscape versions wrote beside their inputs (here: not even caches).
    fs::write(run.join(".perfscape-cache"), b"PSCACHE\0 an old cache").unwrap();
    fs::write(run.join(".perfscape-cache.tmp-12-34"), b"partial").unwrap();
    set_age(&run.join(".perfscape-cache"), Duration::from_secs(3600));
    let first = load(&run, &f.rw()).unwrap();
    assert!(!from_cache(&first));
    assert!(first.report.notes.is_empty(), "{:?}", first.report.notes);
    assert!(from_cache(&load(&run, &f.rw()).unwrap()));
    // Changing, adding or removing them does not make the entry stale.
    fs::write(run.join(".perfscape-cache"), b"changed, and now").unwrap();
    fs::write(run.join(".profile.0.0.0.perfscape-cache"), b"new").unwrap();
    fs::remove_file(run.join(".perfscape-cache.tmp-12-34")).unwrap();
    assert!(from_cache(&load(&run, &f.rw()).unwrap()));
}

fn rebuilt_because(l: &Loaded, why: &str) {
    assert!(!from_cache(l), "{:?}", l.report.notes);
    assert!(
        l.report.notes.iter().any(|n| n.contains("is out of date")
            && n.contains(why)
            && n.ends_with("the files were read instead")),
        "expected `{why}` in {:?}",
        l.report.notes
    );
}

#[test]
fn touching_a_profile_file_rebuilds_the_cache() {
    let (f, run, first) = writable_np4();
    set_age(&run.join("profile.2.0.0"), Duration::from_secs(1800));
    let second = load(&run, &f.rw()).unwrap();
    rebuilt_because(&second, "`profile.2.0.0` changed");
    assert_same_bits(&first.profile, &second.profile, "touched");
    // The rebuilt entry is used next time.
    assert!(from_cache(&load(&run, &f.rw()).unwrap()));
}

#[test]
fn changing_a_profile_file_rebuilds_the_cache_with_the_new_values() {
    let (f, run, first) = writable_np4();
    let p = run.join("profile.1.0.0");
    let text = fs::read_to_string(&p).unwrap();
    // Same size, different digit: only the modification time tells.
    let line = text.lines().find(|l| l.starts_with("\"MPI_Init()")).unwrap();
    let fields: Vec<&str> = line.rsplitn(7, ' ').collect();
    let excl = fields[fields.len() - 4];
    let digit = excl.chars().next().unwrap();
    let other = if digit == '1' { '2' } else { '1' };
    let new_excl = format!("{other}{}", &excl[1..]);
    let new_line = line.replacen(&format!(" {excl} "), &format!(" {new_excl} "), 1);
    assert_ne!(line, new_line);
    fs::write(&p, text.replacen(line, &new_line, 1)).unwrap();
    assert_eq!(fs::metadata(&p).unwrap().len(), text.len() as u64);
    set_age(&p, Duration::from_secs(600));
    let second = load(&run, &f.rw()).unwrap();
    rebuilt_because(&second, "`profile.1.0.0` changed");
    let e = second.profile.event_by_name("MPI_Init()").unwrap();
    let t = second.profile.thread_index("1.0.0".parse().unwrap()).unwrap();
    let m = perfscape_model::MetricId(0);
    assert_eq!(
        second.profile.value(e, t, ValueKind::Exclusive, m),
        Some(new_excl.parse::<f64>().unwrap())
    );
    assert_ne!(
        first.profile.value(e, t, ValueKind::Exclusive, m),
        second.profile.value(e, t, ValueKind::Exclusive, m)
    );
    let third = load(&run, &f.rw()).unwrap();
    assert!(from_cache(&third));
    assert_same_bits(&second.profile, &third.profile, "changed");
}

#[test]
fn removing_or_adding_a_profile_file_rebuilds_the_cache() {
    let (f, run, first) = writable_np4();
    fs::remove_file(run.join("profile.3.0.0")).unwrap();
    let fewer = load(&run, &f.rw()).unwrap();
    rebuilt_because(&fewer, "`profile.3.0.0` was removed");
    assert_eq!(fewer.profile.threads().len(), first.profile.threads().len() - 1);
    fs::copy(np4().join("profile.3.0.0"), run.join("profile.3.0.0")).unwrap();
    fs::copy(np4().join("profile.3.0.0"), run.join("profile.4.0.0")).unwrap();
    set_age(&run.join("profile.3.0.0"), Duration::from_secs(900));
    set_age(&run.join("profile.4.0.0"), Duration::from_secs(900));
    let more = load(&run, &f.rw()).unwrap();
    rebuilt_because(&more, "`profile.3.0.0` is new");
    assert_eq!(more.profile.threads().len(), first.profile.threads().len() + 1);
    let again = load(&run, &f.rw()).unwrap();
    assert!(from_cache(&again));
    assert_eq!(again.profile.threads().len(), 5);
}

#[test]
fn files_in_metric_directories_are_watched() {
    let f = Fixture::new();
    let run = f.copy(&corpus().join("tau-real/mpi-stencil-np8-multimetric"), "run");
    let first = load(&run, &f.rw()).unwrap();
    assert!(from_cache(&load(&run, &f.rw()).unwrap()));
    set_age(
        &run.join("MULTI__CPU_TIME/profile.5.0.0"),
        Duration::from_secs(100),
    );
    let second = load(&run, &f.rw()).unwrap();
    rebuilt_because(&second, "`MULTI__CPU_TIME/profile.5.0.0` changed");
    assert_same_bits(&first.profile, &second.profile, "multimetric");
}

#[test]
fn files_modified_just_now_are_not_cached() {
    let (f, run, first) = writable_np4();
    set_age(&run.join("profile.0.0.0"), Duration::ZERO);
    let second = load(&run, &f.rw()).unwrap();
    rebuilt_because(&second, "`profile.0.0.0` changed");
    assert!(
        second
            .report
            .notes
            .iter()
            .any(|n| n.starts_with("not cached: `profile.0.0.0` was modified less than 2 s before loading")),
        "{:?}",
        second.report.notes
    );
    assert_same_bits(&first.profile, &second.profile, "racy");
    // The stale entry stays stale: the next load reads the files again.
    assert!(!from_cache(&load(&run, &f.rw()).unwrap()));
}

fn rebuilt_after_damage(f: &Fixture, run: &Path, why: &str) {
    let l = load(run, &f.rw()).unwrap();
    assert!(!from_cache(&l), "{why}: {:?}", l.report.notes);
    assert!(
        l.report
            .notes
            .iter()
            .any(|n| n.contains(why) && n.ends_with("the files were read instead")),
        "expected `{why}` in {:?}",
        l.report.notes
    );
    let again = load(run, &f.rw()).unwrap();
    assert!(from_cache(&again), "{why}: the rebuilt entry is valid");
    assert_same_bits(&l.profile, &again.profile, why);
}

#[test]
fn damaged_truncated_or_foreign_entries_are_detected_and_rebuilt() {
    let (f, run, _first) = writable_np4();
    let entry = f.entry(&run);
    let good = fs::read(&entry).unwrap();
    let meta_len = u64::from_le_bytes(good[16..24].try_into().unwrap()) as usize;
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (Vec::new(), "is truncated"),
        (good[..20].to_vec(), "is truncated"),
        (good[..32 + meta_len / 2].to_vec(), "is truncated"),
        (good[..good.len() - 1].to_vec(), "is damaged"),
        (good[..good.len() / 2].to_vec(), "is damaged"),
        (
            b"garbage garbage garbage garbage garbage".to_vec(),
            "is not a perfscape cache file",
        ),
        (
            {
                let mut b = good.clone();
                b[40] ^= 0x10; // inside the metadata
                b
            },
            "metadata checksum mismatch",
        ),
        (
            {
                let mut b = good.clone();
                let i = good.len() - 100; // inside the profile's values
                b[i] ^= 0x01;
                b
            },
            "checksum mismatch",
        ),
        (
            {
                let mut b = good.clone();
                b[8] = 99; // layout version
                b
            },
            "has layout version 99",
        ),
    ];
    for (bytes, why) in cases {
        fs::write(&entry, &bytes).unwrap();
        rebuilt_after_damage(&f, &run, why);
    }
}

#[test]
fn another_inputs_entry_under_this_name_is_not_used() {
    let f = Fixture::new();
    let a = f.copy(&np4(), "a");
    let b = f.copy(&np4(), "b");
    load(&a, &f.rw()).unwrap();
    // An entry for `a` under `b`'s name (as a hash collision would put it).
    fs::copy(f.entry(&a), f.entry(&b)).unwrap();
    let l = load(&b, &f.rw()).unwrap();
    assert!(!from_cache(&l));
    let canonical_a = fs::canonicalize(&a).unwrap();
    assert!(
        l.report
            .notes
            .iter()
            .any(|n| n.contains(&format!("belongs to another input ({})", canonical_a.display()))),
        "{:?}",
        l.report.notes
    );
    assert!(from_cache(&load(&b, &f.rw()).unwrap()));
}

#[test]
fn a_read_only_run_directory_is_cached_in_the_cache_directory() {
    let f = Fixture::new();
    let run = f.copy(&np4(), "run");
    fs::set_permissions(&run, fs::Permissions::from_mode(0o555)).unwrap();
    let first = load(&run, &f.rw()).unwrap();
    let second = load(&run, &f.rw()).unwrap();
    fs::set_permissions(&run, fs::Permissions::from_mode(0o755)).unwrap();
    let entries = cache::entries(f.cache.path()).unwrap();
    assert_eq!(entries.len(), 1, "{entries:?}");
    let name = entries[0].path.file_name().unwrap().to_str().unwrap();
    assert!(name.starts_with("run-") && name.ends_with(ENTRY_SUFFIX), "{name}");
    assert_eq!(
        second.report.notes.last().unwrap(),
        &format!("read from the cache {}", entries[0].path.display())
    );
    assert_same_bits(&first.profile, &second.profile, "read-only");
    assert_eq!(without_cache_note(&second.report), first.report);
}

#[test]
fn a_cache_directory_that_cannot_be_written_only_adds_a_note() {
    let f = Fixture::new();
    let run = f.copy(&np4(), "run");
    // A file where the cache directory should be: creating it fails, even for root.
    let not_a_dir = f.cache.path().join("file");
    fs::write(&not_a_dir, "x").unwrap();
    let opts = with_dir(&not_a_dir);
    let l = load(&run, &opts).unwrap();
    assert_same_bits(&load(&run, &off()).unwrap().profile, &l.profile, "unwritable");
    assert!(
        l.report.notes.iter().any(|n| n.starts_with(&format!(
            "the cache could not be written in {}",
            not_a_dir.display()
        )) && n.ends_with("the next load reads the files again")),
        "{:?}",
        l.report.notes
    );
    assert!(!l.report.is_partial());
    assert_eq!(fs::read(&not_a_dir).unwrap(), b"x");
}

#[test]
fn the_same_input_named_another_way_reopens_with_its_paths_and_a_moved_run_is_read_again() {
    let f = Fixture::new();
    let run = f.copy(&np4(), "run");
    fs::write(
        run.join("profile.7.0.0"),
        "3 templated_functions\n# Name Calls\n\"x\" 1 0\n",
    )
    .unwrap();
    set_age(&run.join("profile.7.0.0"), Duration::from_secs(3600));
    let first = load(&run, &f.rw()).unwrap();
    assert_eq!(first.report.bad_files.len(), 1);
    assert_eq!(first.report.bad_files[0].path, run.join("profile.7.0.0"));
    // Through a symbolic link: the same canonical input, the same entry, the link's paths.
    let link = f.tmp.path().join("link");
    std::os::unix::fs::symlink(&run, &link).unwrap();
    let second = load(&link, &f.rw()).unwrap();
    assert!(from_cache(&second), "{:?}", second.report.notes);
    assert_eq!(second.report.bad_files.len(), 1);
    assert_eq!(second.report.bad_files[0].path, link.join("profile.7.0.0"));
    assert_eq!(
        second.report.bad_files[0].message,
        first.report.bad_files[0].message
    );
    assert_eq!(second.report.threads_skipped, first.report.threads_skipped);
    // Moved: another canonical path, another entry; the files are read and named anew.
    let moved = f.tmp.path().join("moved");
    fs::rename(&run, &moved).unwrap();
    let third = load(&moved, &f.rw()).unwrap();
    assert!(!from_cache(&third), "{:?}", third.report.notes);
    assert_eq!(third.report.bad_files[0].path, moved.join("profile.7.0.0"));
    assert!(from_cache(&load(&moved, &f.rw()).unwrap()));
    assert_eq!(cache::entries(f.cache.path()).unwrap().len(), 2);
}

#[test]
fn modes_and_named_formats() {
    let f = Fixture::new();
    let run = f.copy(&np4(), "run");
    // Off neither reads nor writes.
    let l = load(
        &run,
        &OpenOptions {
            cache: CacheMode::Off,
            ..f.rw()
        },
    )
    .unwrap();
    assert!(l.report.notes.is_empty());
    assert!(cache::entries(f.cache.path()).unwrap().is_empty());
    let first = load(&run, &f.rw()).unwrap();
    let entry = f.entry(&run);
    // Refresh reads the files and writes the entry even when it is valid.
    let written = fs::read(&entry).unwrap();
    fs::write(&entry, &written[..written.len() - 1]).unwrap();
    let refreshed = load(
        &run,
        &OpenOptions {
            cache: CacheMode::Refresh,
            ..f.rw()
        },
    )
    .unwrap();
    assert!(!from_cache(&refreshed));
    assert_eq!(
        refreshed.report.notes,
        [format!(
            "the files were read and the cache {} rewritten, as asked",
            entry.display()
        )]
    );
    assert_eq!(fs::read(&entry).unwrap().len(), written.len());
    assert_same_bits(&first.profile, &refreshed.profile, "refresh");
    // A named format has its own entry: the detected one is neither used nor replaced.
    let named = load_as(&run, "tau", &f.rw()).unwrap();
    assert!(!from_cache(&named));
    assert!(named.report.notes.is_empty(), "{:?}", named.report.notes);
    assert!(entry_path(&run, Some("tau"), f.cache.path()).unwrap().is_file());
    assert!(from_cache(&load_as(&run, "tau", &f.rw()).unwrap()));
    assert!(from_cache(&load(&run, &f.rw()).unwrap()));
    assert_eq!(cache::entries(f.cache.path()).unwrap().len(), 2);
    assert!(load_as(&run, "nosuch", &f.rw()).is_err());
}

#[test]
fn single_file_inputs_depend_on_the_file_only() {
    let f = Fixture::new();
    let file = f.tmp.path().join("profile.cubex");
    fs::copy(corpus().join("cube/pycubexr-time-p4/profile.cubex"), &file).unwrap();
    set_age(&file, Duration::from_secs(3600));
    let first = load(&file, &f.rw()).unwrap();
    assert!(f.entry(&file).is_file());
    let second = load(&file, &f.rw()).unwrap();
    assert!(from_cache(&second));
    assert_same_bits(&first.profile, &second.profile, "cube");
    // Another file beside it is not a source of this input.
    fs::write(f.tmp.path().join("notes.txt"), "x").unwrap();
    assert!(from_cache(&load(&file, &f.rw()).unwrap()));
    set_age(&file, Duration::from_secs(60));
    rebuilt_because(&load(&file, &f.rw()).unwrap(), "`profile.cubex` changed");
}

#[test]
fn hpctoolkit_database_files_watch_their_directory() {
    let f = Fixture::new();
    let db = f.copy(&corpus().join("hpctoolkit/hatchet-cpi-database"), "db");
    let xml = db.join("experiment.xml");
    let open = || load_as(&xml, "hpctoolkit", &f.rw()).unwrap();
    assert!(!from_cache(&open()));
    assert!(from_cache(&open()));
    let metric_db = fs::read_dir(&db)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "metric-db"))
        .unwrap();
    set_age(&metric_db, Duration::from_secs(60));
    let name = metric_db.file_name().unwrap().to_str().unwrap().to_string();
    rebuilt_because(&open(), &format!("`{name}` changed"));
}

/// Sets the last use (modification time) of a cache entry.
fn set_last_use(entry: &Path, ago: Duration) {
    set_age(entry, ago);
}

#[test]
fn the_least_recently_used_entries_go_when_the_cache_is_over_its_limit() {
    let f = Fixture::new();
    let (a, b, c) = (f.copy(&np4(), "a"), f.copy(&np4(), "b"), f.copy(&np4(), "c"));
    // Files that are not perfscape entries: never counted, never removed (the first is far
    // larger than the limit, the second is named like an entry but is not one).
    let other = f.cache.path().join("user-data.bin");
    fs::write(&other, vec![7u8; 1 << 20]).unwrap();
    let lookalike = f.cache.path().join("x-0123456789abcdef.perfscape-cache");
    fs::write(&lookalike, b"not a cache").unwrap();
    load(&a, &f.rw()).unwrap();
    load(&b, &f.rw()).unwrap();
    let size = |p: &Path| fs::metadata(p).unwrap().len();
    let (ea, eb, ec) = (f.entry(&a), f.entry(&b), f.entry(&c));
    // Room for two entries of this size, not three.
    let limit = size(&ea).max(size(&eb)) * 5 / 2;
    let small = OpenOptions {
        cache_max_bytes: Some(limit),
        ..f.rw()
    };
    // `a` was written first, then `b`; reading `a` makes it the most recently used.
    set_last_use(&ea, Duration::from_secs(7200));
    set_last_use(&eb, Duration::from_secs(3600));
    assert!(from_cache(&load(&a, &small).unwrap()));
    let third = load(&c, &small).unwrap();
    assert!(!from_cache(&third));
    assert!(
        third.report.notes.iter().any(|n| n.starts_with(&format!(
            "the cache directory {} was over its limit",
            f.cache.path().display()
        )) && n.contains("removed the 1 least recently used entries")),
        "{:?}",
        third.report.notes
    );
    assert!(ea.is_file(), "the recently read entry stays");
    assert!(!eb.exists(), "the least recently used entry goes");
    assert!(ec.is_file(), "the entry just written stays");
    assert_eq!(size(&other), 1 << 20);
    assert_eq!(fs::read(&lookalike).unwrap(), b"not a cache");
    let listed: u64 = cache::entries(f.cache.path())
        .unwrap()
        .iter()
        .map(|e| e.size)
        .sum();
    assert!(listed <= limit, "{listed} > {limit}");
    assert!(from_cache(&load(&a, &small).unwrap()));
    assert!(!from_cache(&load(&b, &small).unwrap()));
}

#[test]
fn an_entry_larger_than_the_limit_is_not_kept() {
    let f = Fixture::new();
    let run = f.copy(&np4(), "run");
    let tiny = OpenOptions {
        cache_max_bytes: Some(1000),
        ..f.rw()
    };
    let l = load(&run, &tiny).unwrap();
    assert!(
        l.report
            .notes
            .iter()
            .any(|n| n.starts_with("not cached: the cache of this input (")
                && n.ends_with(") is larger than the cache limit (1000 B)")),
        "{:?}",
        l.report.notes
    );
    assert!(cache::entries(f.cache.path()).unwrap().is_empty());
    assert!(!from_cache(&load(&run, &tiny).unwrap()));
}

#[test]
fn entries_list_input_request_format_size_and_last_use() {
    let f = Fixture::new();
    let run = f.copy(&np4(), "run");
    load(&run, &f.rw()).unwrap();
    load_as(&run, "tau", &f.rw()).unwrap();
    set_last_use(&f.entry(&run), Duration::from_secs(60));
    let entries = cache::entries(f.cache.path()).unwrap();
    assert_eq!(entries.len(), 2);
    let canonical = fs::canonicalize(&run).unwrap();
    // Most recently used first: the named entry, then the detected one (a minute ago).
    let requests: Vec<Option<String>> = entries
        .iter()
        .map(|e| e.about.as_ref().unwrap().request.clone())
        .collect();
    assert_eq!(requests, [Some("tau".to_string()), None]);
    for e in &entries {
        let about = e.about.as_ref().unwrap();
        assert_eq!(about.input, canonical);
        assert_eq!(about.format, "tau");
        assert!(about.current_build);
        assert_eq!(e.size, fs::metadata(&e.path).unwrap().len());
        assert_eq!(e.last_used, fs::metadata(&e.path).unwrap().modified().unwrap());
    }
    let minute_ago = SystemTime::now() - Duration::from_secs(60);
    assert!(entries[1].last_used <= minute_ago);
    // A damaged entry is listed with what is wrong.
    fs::write(f.entry(&run), b"PSCACHE\0 but nothing else").unwrap();
    let entries = cache::entries(f.cache.path()).unwrap();
    let damaged = entries.iter().find(|e| e.path == f.entry(&run)).unwrap();
    assert!(
        damaged.about.as_ref().unwrap_err().starts_with("is truncated"),
        "{:?}",
        damaged.about
    );
}

#[test]
fn clear_removes_perfscape_entries_only() {
    let f = Fixture::new();
    let run = f.copy(&np4(), "run");
    let file = f.tmp.path().join("profile.cubex");
    fs::copy(corpus().join("cube/pycubexr-time-p4/profile.cubex"), &file).unwrap();
    set_age(&file, Duration::from_secs(3600));
    load(&run, &f.rw()).unwrap();
    load(&file, &f.rw()).unwrap();
    let bytes: u64 = cache::entries(f.cache.path())
        .unwrap()
        .iter()
        .map(|e| e.size)
        .sum();
    let keep = [
        ("notes.txt", b"mine".as_slice()),
        ("x-0123456789abcdef.perfscape-cache", b"not a cache".as_slice()),
        (".perfscape-cache-write-fresh", b"a write under way".as_slice()),
    ];
    for (name, content) in keep {
        fs::write(f.cache.path().join(name), content).unwrap();
    }
    fs::create_dir(f.cache.path().join("sub")).unwrap();
    let abandoned = f.cache.path().join(".perfscape-cache-write-old");
    fs::write(&abandoned, b"left by a crash").unwrap();
    set_age(&abandoned, Duration::from_secs(2 * 3600));
    let cleared = cache::clear(f.cache.path()).unwrap();
    assert_eq!(
        cleared,
        cache::Cleared {
            entries: 2,
            bytes,
            abandoned_files: 1,
            abandoned_bytes: 15,
        }
    );
    assert!(cache::entries(f.cache.path()).unwrap().is_empty());
    for (name, content) in keep {
        assert_eq!(fs::read(f.cache.path().join(name)).unwrap(), content, "{name}");
    }
    assert!(f.cache.path().join("sub").is_dir());
    assert!(!abandoned.exists());
    assert!(!from_cache(&load(&run, &f.rw()).unwrap()));
    // A cache directory that does not exist is empty.
    assert_eq!(
        cache::clear(&f.cache.path().join("none")).unwrap(),
        cache::Cleared::default()
    );
}
