//! The cache directory (`perfscape_formats::cache`): nothing is written beside an input
//! (directory or file, read-only or not); a cache directory that cannot be written only adds a
//! note; the entries stay under the size limit, the least recently used removed first;
//! `entries` lists them; `clear` removes perfscape's entries and nothing else.
//!
//! Every test uses its own run copies and its own temporary cache directory.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod cache_support;
mod common;

use cache_support::*;
use perfscape_formats::cache::{self, ENTRY_SUFFIX};
use perfscape_formats::{CacheMode, OpenOptions, open, registry};
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, SystemTime};

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
        assert!(!from_cache(&open(input, &f.rw()).unwrap()));
        assert!(from_cache(&open(input, &f.rw()).unwrap()));
        assert!(!from_cache(&open(input, &refresh).unwrap()));
        let named = if input == &run { "tau" } else { "cube" };
        let as_named = OpenOptions {
            format: registry::named(named),
            ..f.rw()
        };
        assert!(!from_cache(&open(input, &as_named).unwrap()));
    }
    assert_eq!(listing(f.tmp.path()), before);
    // Two inputs, each detected and named: four entries, all in the cache directory.
    let entries = cache::entries(f.cache.path()).unwrap();
    assert_eq!(entries.len(), 4, "{entries:?}");
    assert!(entries.iter().all(|e| e.path.parent() == Some(f.cache.path())));
}

#[test]
fn a_read_only_run_directory_is_cached_in_the_cache_directory() {
    let f = Fixture::new();
    let run = f.copy(&np4(), "run");
    fs::set_permissions(&run, fs::Permissions::from_mode(0o555)).unwrap();
    let first = open(&run, &f.rw()).unwrap();
    let second = open(&run, &f.rw()).unwrap();
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
    let l = open(&run, &opts).unwrap();
    assert_same_bits(&open(&run, &off()).unwrap().profile, &l.profile, "unwritable");
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
    open(&a, &f.rw()).unwrap();
    open(&b, &f.rw()).unwrap();
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
    assert!(from_cache(&open(&a, &small).unwrap()));
    let third = open(&c, &small).unwrap();
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
    assert!(from_cache(&open(&a, &small).unwrap()));
    assert!(!from_cache(&open(&b, &small).unwrap()));
}

#[test]
fn an_entry_larger_than_the_limit_is_not_kept() {
    let f = Fixture::new();
    let run = f.copy(&np4(), "run");
    let tiny = OpenOptions {
        cache_max_bytes: Some(1000),
        ..f.rw()
    };
    let l = open(&run, &tiny).unwrap();
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
    assert!(!from_cache(&open(&run, &tiny).unwrap()));
}

#[test]
fn entries_list_input_request_format_size_and_last_use() {
    let f = Fixture::new();
    let run = f.copy(&np4(), "run");
    open(&run, &f.rw()).unwrap();
    open(
        &run,
        &OpenOptions {
            format: registry::named("tau"),
            ..f.rw()
        },
    )
    .unwrap();
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
    open(&run, &f.rw()).unwrap();
    open(&file, &f.rw()).unwrap();
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
    assert!(!from_cache(&open(&run, &f.rw()).unwrap()));
    // A cache directory that does not exist is empty.
    assert_eq!(
        cache::clear(&f.cache.path().join("none")).unwrap(),
        cache::Cleared::default()
    );
}
