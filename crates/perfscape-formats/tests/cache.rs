//! The cache of loaded profiles (`perfscape_formats::cache`), when an entry is valid: every
//! corpus input round-trips bit for bit through `Profile::encode`/`decode` and through its
//! cache entry; a second load comes from the cache with the same profile and report;
//! touching, changing, removing or adding a source file rebuilds it; damaged entries are
//! detected and rebuilt; cache files beside an input are never sources. `cache_dir.rs`: where
//! the entries live, the size limit, `entries` and `clear`.
//!
//! Every test copies the run it writes to into its own temporary directory (without cache
//! files) and uses its own temporary cache directory: no two tests share a writable directory,
//! and nothing is written into `../shared`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod cache_support;
mod common;

use cache_support::*;
use perfscape_formats::cache::{self, entry_path};
use perfscape_formats::{CacheMode, OpenOptions, open, registry};
use perfscape_model::{Profile, ValueKind};
use std::fs;
use std::path::Path;
use std::time::Duration;

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
    // 20 Chrome traces (one in tau-real), 5 perf.data and 4 perf script files, 1 TAU trace
    // run and 1 OTF2 archive.
    assert_eq!(loaded, 120, "{} inputs", inputs.len());
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
        let beside = if input.is_dir() {
            input.clone()
        } else {
            input.parent().unwrap().to_path_buf()
        };
        let before = listing(&beside);
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
        // The entry is in the cache directory; nothing was written beside the input.
        assert!(entry_path(&input, None, cache.path()).unwrap().is_file());
        assert_eq!(listing(&beside), before, "{}", input.display());
        reopened += 1;
    }
    assert_eq!(reopened, 120);
    assert_eq!(cache::entries(cache.path()).unwrap().len(), 120);
}

#[test]
fn a_run_reopens_from_its_entry_in_the_cache_directory() {
    let (f, run, first) = writable_np4();
    let second = open(&run, &f.rw()).unwrap();
    assert!(from_cache(&second));
    assert_eq!(
        second.report.notes.last().unwrap(),
        &format!("read from the cache {}", f.entry(&run).display())
    );
    assert_same_bits(&first.profile, &second.profile, "np4");
    assert_eq!(without_cache_note(&second.report), first.report);
    assert!(from_cache(&open(&run, &f.rw()).unwrap()));
}

#[test]
fn cache_files_beside_an_input_are_ignored_and_never_sources() {
    let f = Fixture::new();
    let run = f.copy(&np4(), "run");
    // What older perfscape versions wrote beside their inputs (here: not even caches).
    fs::write(run.join(".perfscape-cache"), b"PSCACHE\0 an old cache").unwrap();
    fs::write(run.join(".perfscape-cache.tmp-12-34"), b"partial").unwrap();
    set_age(&run.join(".perfscape-cache"), Duration::from_secs(3600));
    let first = open(&run, &f.rw()).unwrap();
    assert!(!from_cache(&first));
    assert!(first.report.notes.is_empty(), "{:?}", first.report.notes);
    assert!(from_cache(&open(&run, &f.rw()).unwrap()));
    // Changing, adding or removing them does not make the entry stale.
    fs::write(run.join(".perfscape-cache"), b"changed, and now").unwrap();
    fs::write(run.join(".profile.0.0.0.perfscape-cache"), b"new").unwrap();
    fs::remove_file(run.join(".perfscape-cache.tmp-12-34")).unwrap();
    assert!(from_cache(&open(&run, &f.rw()).unwrap()));
}

#[test]
fn touching_a_profile_file_rebuilds_the_cache() {
    let (f, run, first) = writable_np4();
    set_age(&run.join("profile.2.0.0"), Duration::from_secs(1800));
    let second = open(&run, &f.rw()).unwrap();
    rebuilt_because(&second, "`profile.2.0.0` changed");
    assert_same_bits(&first.profile, &second.profile, "touched");
    // The rebuilt entry is used next time.
    assert!(from_cache(&open(&run, &f.rw()).unwrap()));
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
    let second = open(&run, &f.rw()).unwrap();
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
    let third = open(&run, &f.rw()).unwrap();
    assert!(from_cache(&third));
    assert_same_bits(&second.profile, &third.profile, "changed");
}

#[test]
fn removing_or_adding_a_profile_file_rebuilds_the_cache() {
    let (f, run, first) = writable_np4();
    fs::remove_file(run.join("profile.3.0.0")).unwrap();
    let fewer = open(&run, &f.rw()).unwrap();
    rebuilt_because(&fewer, "`profile.3.0.0` was removed");
    assert_eq!(fewer.profile.threads().len(), first.profile.threads().len() - 1);
    fs::copy(np4().join("profile.3.0.0"), run.join("profile.3.0.0")).unwrap();
    fs::copy(np4().join("profile.3.0.0"), run.join("profile.4.0.0")).unwrap();
    set_age(&run.join("profile.3.0.0"), Duration::from_secs(900));
    set_age(&run.join("profile.4.0.0"), Duration::from_secs(900));
    let more = open(&run, &f.rw()).unwrap();
    rebuilt_because(&more, "`profile.3.0.0` is new");
    assert_eq!(more.profile.threads().len(), first.profile.threads().len() + 1);
    let again = open(&run, &f.rw()).unwrap();
    assert!(from_cache(&again));
    assert_eq!(again.profile.threads().len(), 5);
}

#[test]
fn files_in_metric_directories_are_watched() {
    let f = Fixture::new();
    let run = f.copy(&corpus().join("tau-real/mpi-stencil-np8-multimetric"), "run");
    let first = open(&run, &f.rw()).unwrap();
    assert!(from_cache(&open(&run, &f.rw()).unwrap()));
    set_age(
        &run.join("MULTI__CPU_TIME/profile.5.0.0"),
        Duration::from_secs(100),
    );
    let second = open(&run, &f.rw()).unwrap();
    rebuilt_because(&second, "`MULTI__CPU_TIME/profile.5.0.0` changed");
    assert_same_bits(&first.profile, &second.profile, "multimetric");
}

#[test]
fn files_modified_just_now_are_not_cached() {
    let (f, run, first) = writable_np4();
    set_age(&run.join("profile.0.0.0"), Duration::ZERO);
    let second = open(&run, &f.rw()).unwrap();
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
    assert!(!from_cache(&open(&run, &f.rw()).unwrap()));
}

fn rebuilt_after_damage(f: &Fixture, run: &Path, why: &str) {
    let l = open(run, &f.rw()).unwrap();
    assert!(!from_cache(&l), "{why}: {:?}", l.report.notes);
    assert!(
        l.report
            .notes
            .iter()
            .any(|n| n.contains(why) && n.ends_with("the files were read instead")),
        "expected `{why}` in {:?}",
        l.report.notes
    );
    let again = open(run, &f.rw()).unwrap();
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
    open(&a, &f.rw()).unwrap();
    // An entry for `a` under `b`'s name (as a hash collision would put it).
    fs::copy(f.entry(&a), f.entry(&b)).unwrap();
    let l = open(&b, &f.rw()).unwrap();
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
    assert!(from_cache(&open(&b, &f.rw()).unwrap()));
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
    let first = open(&run, &f.rw()).unwrap();
    assert_eq!(first.report.bad_files.len(), 1);
    assert_eq!(first.report.bad_files[0].path, run.join("profile.7.0.0"));
    // Through a symbolic link: the same canonical input, the same entry, the link's paths.
    let link = f.tmp.path().join("link");
    std::os::unix::fs::symlink(&run, &link).unwrap();
    let second = open(&link, &f.rw()).unwrap();
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
    let third = open(&moved, &f.rw()).unwrap();
    assert!(!from_cache(&third), "{:?}", third.report.notes);
    assert_eq!(third.report.bad_files[0].path, moved.join("profile.7.0.0"));
    assert!(from_cache(&open(&moved, &f.rw()).unwrap()));
    assert_eq!(cache::entries(f.cache.path()).unwrap().len(), 2);
}

#[test]
fn modes_and_named_formats() {
    let f = Fixture::new();
    let run = f.copy(&np4(), "run");
    // Off neither reads nor writes.
    let l = open(
        &run,
        &OpenOptions {
            cache: CacheMode::Off,
            ..f.rw()
        },
    )
    .unwrap();
    assert!(l.report.notes.is_empty());
    assert!(cache::entries(f.cache.path()).unwrap().is_empty());
    let first = open(&run, &f.rw()).unwrap();
    let entry = f.entry(&run);
    // Refresh reads the files and writes the entry even when it is valid.
    let written = fs::read(&entry).unwrap();
    fs::write(&entry, &written[..written.len() - 1]).unwrap();
    let refreshed = open(
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
    let named = open(
        &run,
        &OpenOptions {
            format: registry::named("tau"),
            ..f.rw()
        },
    )
    .unwrap();
    assert!(!from_cache(&named));
    assert!(named.report.notes.is_empty(), "{:?}", named.report.notes);
    assert!(entry_path(&run, Some("tau"), f.cache.path()).unwrap().is_file());
    assert!(from_cache(
        &open(
            &run,
            &OpenOptions {
                format: registry::named("tau"),
                ..f.rw()
            }
        )
        .unwrap()
    ));
    assert!(from_cache(&open(&run, &f.rw()).unwrap()));
    assert_eq!(cache::entries(f.cache.path()).unwrap().len(), 2);
    assert!(registry::named_or_err("nosuch").is_err());
}

#[test]
fn single_file_inputs_depend_on_the_file_only() {
    let f = Fixture::new();
    let file = f.tmp.path().join("profile.cubex");
    fs::copy(corpus().join("cube/pycubexr-time-p4/profile.cubex"), &file).unwrap();
    set_age(&file, Duration::from_secs(3600));
    let first = open(&file, &f.rw()).unwrap();
    assert!(f.entry(&file).is_file());
    let second = open(&file, &f.rw()).unwrap();
    assert!(from_cache(&second));
    assert_same_bits(&first.profile, &second.profile, "cube");
    // Another file beside it is not a source of this input.
    fs::write(f.tmp.path().join("notes.txt"), "x").unwrap();
    assert!(from_cache(&open(&file, &f.rw()).unwrap()));
    set_age(&file, Duration::from_secs(60));
    rebuilt_because(&open(&file, &f.rw()).unwrap(), "`profile.cubex` changed");
}

#[test]
fn hpctoolkit_database_files_watch_their_directory() {
    let f = Fixture::new();
    let db = f.copy(&corpus().join("hpctoolkit/hatchet-cpi-database"), "db");
    let xml = db.join("experiment.xml");
    let open = || {
        open(
            &xml,
            &OpenOptions {
                format: registry::named("hpctoolkit"),
                ..f.rw()
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
