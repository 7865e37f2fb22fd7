//! The cache of loaded profiles (`perfscape_formats::cache`): every corpus input round-trips
//! bit for bit through `Profile::encode`/`decode` and through the cache file; a second load
//! comes from the cache with the same profile and report; touching, changing, removing or
//! adding a source file rebuilds it; damaged caches are detected and rebuilt; read-only run
//! directories use the user cache directory.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use perfscape_formats::cache::{CACHE_FILE_NAME, cache_paths};
use perfscape_formats::{CacheMode, LoadReport, OpenOptions, Opened, Parts, detect, open, registry};
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

/// The profile only (what the cache holds), without the cache.
fn off() -> OpenOptions<'static> {
    OpenOptions {
        cache: CacheMode::Off,
        parts: Parts::PROFILE,
        ..OpenOptions::default()
    }
}

fn with_dir(dir: &Path) -> OpenOptions<'_> {
    OpenOptions {
        cache_dir: Some(dir),
        ..rw()
    }
}

/// The cache on (read a valid one, else load and write it), as the CLI loads the profile.
fn rw() -> OpenOptions<'static> {
    OpenOptions {
        cache: CacheMode::ReadWrite,
        parts: Parts::PROFILE,
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

fn is_supported(d: &perfscape_formats::Format) -> bool {
    !d.name.is_empty()
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

fn from_cache(l: &Opened) -> bool {
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
        let l = open(input, &off()).unwrap_or_else(|e| panic!("{}: {e}", input.display()));
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

#[test]
fn every_corpus_input_reopens_from_the_cache_with_the_same_profile_and_report() {
    let cache = tempfile::tempdir().unwrap();
    let mut reopened = 0;
    for input in corpus_inputs() {
        let fresh = open(&input, &off()).unwrap();
        let first = open(&input, &with_dir(cache.path())).unwrap();
        assert!(!from_cache(&first), "{}", input.display());
        assert_eq!(first.report, fresh.report, "{}", input.display());
        let second = open(&input, &with_dir(cache.path())).unwrap();
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
        // The corpus is read-only: the cache went to the user cache directory.
        let paths = cache_paths(&input, Some(cache.path())).unwrap();
        assert!(!paths.beside.exists(), "{}", paths.beside.display());
        assert!(paths.user.unwrap().is_file());
        reopened += 1;
    }
    assert_eq!(reopened, 118);
}

/// Copies a run directory (two levels) and sets every file's modification time to one hour
/// ago, so the cache does not treat the files as still being written.
fn copy_run(src: &Path, dst: &Path) {
    fs::create_dir_all(dst).unwrap();
    for e in fs::read_dir(src).unwrap() {
        let p = e.unwrap().path();
        let to = dst.join(p.file_name().unwrap());
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

/// A writable copy of the np4 run and its first (cache-writing) load.
fn writable_np4() -> (tempfile::TempDir, PathBuf, Opened) {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    copy_run(&np4(), &run);
    let first = open(&run, &rw()).unwrap();
    assert!(!from_cache(&first));
    assert!(first.report.notes.is_empty(), "{:?}", first.report.notes);
    assert!(run.join(CACHE_FILE_NAME).is_file());
    (tmp, run, first)
}

#[test]
fn a_writable_run_directory_holds_its_cache_and_reopens_from_it() {
    let (_tmp, run, first) = writable_np4();
    let second = open(&run, &rw()).unwrap();
    assert!(from_cache(&second));
    assert_eq!(
        second.report.notes.last().unwrap(),
        &format!("read from the cache {}", run.join(CACHE_FILE_NAME).display())
    );
    assert_same_bits(&first.profile, &second.profile, "np4");
    assert_eq!(without_cache_note(&second.report), first.report);
    // The cache file is not a source: writing it did not invalidate it.
    assert!(from_cache(&open(&run, &rw()).unwrap()));
}

fn rebuilt_because(l: &Opened, why: &str) {
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
    let (_tmp, run, first) = writable_np4();
    set_age(&run.join("profile.2.0.0"), Duration::from_secs(1800));
    let second = open(&run, &rw()).unwrap();
    rebuilt_because(&second, "`profile.2.0.0` changed");
    assert_same_bits(&first.profile, &second.profile, "touched");
    // The rebuilt cache is used next time.
    assert!(from_cache(&open(&run, &rw()).unwrap()));
}

#[test]
fn changing_a_profile_file_rebuilds_the_cache_with_the_new_values() {
    let (_tmp, run, first) = writable_np4();
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
    let second = open(&run, &rw()).unwrap();
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
    let third = open(&run, &rw()).unwrap();
    assert!(from_cache(&third));
    assert_same_bits(&second.profile, &third.profile, "changed");
}

#[test]
fn removing_or_adding_a_profile_file_rebuilds_the_cache() {
    let (_tmp, run, first) = writable_np4();
    fs::remove_file(run.join("profile.3.0.0")).unwrap();
    let fewer = open(&run, &rw()).unwrap();
    rebuilt_because(&fewer, "`profile.3.0.0` was removed");
    assert_eq!(fewer.profile.threads().len(), first.profile.threads().len() - 1);
    fs::copy(np4().join("profile.3.0.0"), run.join("profile.3.0.0")).unwrap();
    fs::copy(np4().join("profile.3.0.0"), run.join("profile.4.0.0")).unwrap();
    set_age(&run.join("profile.3.0.0"), Duration::from_secs(900));
    set_age(&run.join("profile.4.0.0"), Duration::from_secs(900));
    let more = open(&run, &rw()).unwrap();
    rebuilt_because(&more, "`profile.3.0.0` is new");
    assert_eq!(more.profile.threads().len(), first.profile.threads().len() + 1);
    let again = open(&run, &rw()).unwrap();
    assert!(from_cache(&again));
    assert_eq!(again.profile.threads().len(), 5);
}

#[test]
fn files_in_metric_directories_are_watched() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    copy_run(&corpus().join("tau-real/mpi-stencil-np8-multimetric"), &run);
    let first = open(&run, &rw()).unwrap();
    assert!(from_cache(&open(&run, &rw()).unwrap()));
    set_age(
        &run.join("MULTI__CPU_TIME/profile.5.0.0"),
        Duration::from_secs(100),
    );
    let second = open(&run, &rw()).unwrap();
    rebuilt_because(&second, "`MULTI__CPU_TIME/profile.5.0.0` changed");
    assert_same_bits(&first.profile, &second.profile, "multimetric");
}

#[test]
fn files_modified_just_now_are_not_cached() {
    let (_tmp, run, first) = writable_np4();
    set_age(&run.join("profile.0.0.0"), Duration::ZERO);
    let second = open(&run, &rw()).unwrap();
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
    // The stale cache stays stale: the next load reads the files again.
    assert!(!from_cache(&open(&run, &rw()).unwrap()));
}

fn rebuilt_after_damage(run: &Path, why: &str) {
    let l = open(run, &rw()).unwrap();
    assert!(!from_cache(&l), "{why}: {:?}", l.report.notes);
    assert!(
        l.report
            .notes
            .iter()
            .any(|n| n.contains(why) && n.ends_with("the files were read instead")),
        "expected `{why}` in {:?}",
        l.report.notes
    );
    let again = open(run, &rw()).unwrap();
    assert!(from_cache(&again), "{why}: the rebuilt cache is valid");
    assert_same_bits(&l.profile, &again.profile, why);
}

#[test]
fn damaged_truncated_or_foreign_caches_are_detected_and_rebuilt() {
    let (_tmp, run, _first) = writable_np4();
    let cache = run.join(CACHE_FILE_NAME);
    let good = fs::read(&cache).unwrap();
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
        fs::write(&cache, &bytes).unwrap();
        rebuilt_after_damage(&run, why);
    }
}

#[test]
fn a_read_only_run_directory_uses_the_user_cache_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    copy_run(&np4(), &run);
    fs::set_permissions(&run, fs::Permissions::from_mode(0o555)).unwrap();
    let user = tempfile::tempdir().unwrap();
    let first = open(&run, &with_dir(user.path())).unwrap();
    let second = open(&run, &with_dir(user.path())).unwrap();
    fs::set_permissions(&run, fs::Permissions::from_mode(0o755)).unwrap();
    assert!(!run.join(CACHE_FILE_NAME).exists());
    let cached: Vec<PathBuf> = fs::read_dir(user.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(cached.len(), 1, "{cached:?}");
    let name = cached[0].file_name().unwrap().to_str().unwrap().to_string();
    assert!(name.starts_with("run-") && name.ends_with(".cache"), "{name}");
    assert_eq!(
        second.report.notes.last().unwrap(),
        &format!("read from the cache {}", cached[0].display())
    );
    assert_same_bits(&first.profile, &second.profile, "read-only");
    assert_eq!(without_cache_note(&second.report), first.report);
}

#[test]
fn a_moved_run_directory_keeps_its_cache_and_reports_its_new_paths() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    copy_run(&np4(), &run);
    fs::write(
        run.join("profile.7.0.0"),
        "3 templated_functions\n# Name Calls\n\"x\" 1 0\n",
    )
    .unwrap();
    set_age(&run.join("profile.7.0.0"), Duration::from_secs(3600));
    let first = open(&run, &rw()).unwrap();
    assert_eq!(first.report.bad_files.len(), 1);
    assert_eq!(first.report.bad_files[0].path, run.join("profile.7.0.0"));
    let moved = tmp.path().join("moved");
    fs::rename(&run, &moved).unwrap();
    let second = open(&moved, &rw()).unwrap();
    assert!(from_cache(&second), "{:?}", second.report.notes);
    assert_eq!(second.report.bad_files.len(), 1);
    assert_eq!(second.report.bad_files[0].path, moved.join("profile.7.0.0"));
    assert_eq!(
        second.report.bad_files[0].message,
        first.report.bad_files[0].message
    );
    assert_eq!(second.report.threads_skipped, first.report.threads_skipped);
}

#[test]
fn modes_and_named_formats() {
    let (_tmp, run, first) = writable_np4();
    let cache = run.join(CACHE_FILE_NAME);
    // Off neither reads nor writes.
    fs::remove_file(&cache).unwrap();
    let l = open(&run, &off()).unwrap();
    assert!(l.report.notes.is_empty() && !cache.exists());
    // Refresh reads the files and writes the cache even when it is valid.
    open(&run, &rw()).unwrap();
    let written = fs::metadata(&cache).unwrap().modified().unwrap();
    std::thread::sleep(Duration::from_millis(20));
    let refreshed = open(
        &run,
        &OpenOptions {
            cache: CacheMode::Refresh,
            ..OpenOptions::default()
        },
    )
    .unwrap();
    assert!(!from_cache(&refreshed));
    assert!(fs::metadata(&cache).unwrap().modified().unwrap() > written);
    assert_same_bits(&first.profile, &refreshed.profile, "refresh");
    // A cache written for a detected format is not used for a named one, and vice versa.
    let named = open(
        &run,
        &OpenOptions {
            format: registry::named("tau"),
            ..rw()
        },
    )
    .unwrap();
    assert!(
        named
            .report
            .notes
            .iter()
            .any(|n| n.contains("holds a detected format but format `tau` was asked for")),
        "{:?}",
        named.report.notes
    );
    assert!(from_cache(
        &open(
            &run,
            &OpenOptions {
                format: registry::named("tau"),
                ..rw()
            }
        )
        .unwrap()
    ));
    assert!(registry::named_or_err("nosuch").is_err());
}

#[test]
fn single_file_inputs_are_cached_beside_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let src = corpus().join("cube/pycubexr-time-p4/profile.cubex");
    let file = tmp.path().join("profile.cubex");
    fs::copy(&src, &file).unwrap();
    set_age(&file, Duration::from_secs(3600));
    let first = open(&file, &rw()).unwrap();
    assert!(tmp.path().join(".profile.cubex.perfscape-cache").is_file());
    let second = open(&file, &rw()).unwrap();
    assert!(from_cache(&second));
    assert_same_bits(&first.profile, &second.profile, "cube");
    // Another file beside it is not a source of this input.
    fs::write(tmp.path().join("notes.txt"), "x").unwrap();
    assert!(from_cache(&open(&file, &rw()).unwrap()));
    set_age(&file, Duration::from_secs(60));
    rebuilt_because(&open(&file, &rw()).unwrap(), "`profile.cubex` changed");
}

#[test]
fn hpctoolkit_database_files_watch_their_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("db");
    copy_run(&corpus().join("hpctoolkit/hatchet-cpi-database"), &db);
    let xml = db.join("experiment.xml");
    let open = || {
        open(
            &xml,
            &OpenOptions {
                format: registry::named("hpctoolkit"),
                ..rw()
            },
        )
        .unwrap()
    };
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
