#![allow(clippy::unwrap_used, clippy::expect_used)]
//! ParaProf packed profiles (`.ppk`) on every corpus file.
//!
//! What the numbers are checked against (there is no ParaProf output for these files in the
//! corpus, and TAU is not installed here):
//! 1. `tests/fixtures/ppk/*.csv`, written by `PpkDump.java`: the files decoded by the JDK's
//!    own `DataInputStream` (the class ParaProf reads them with) in the order of ParaProf's
//!    `PackedProfileDataSource`; per-thread totals for every file, per-function totals for
//!    mpas (5 metrics), per-user-event totals for all.
//! 2. Invariants TAU's measurement guarantees, computed here from the loaded values: the
//!    thread's top-level inclusive value bounds every event; exclusive <= inclusive; for
//!    callpath profiles every call of a routine is in exactly one callpath, so a flat event's
//!    calls and exclusive time equal the sums over the callpaths ending in it; instruction
//!    counters nest (PAPI_FP_INS <= PAPI_TOT_INS); user events have min <= mean <= max.

mod common;
use common::fields;
use perfscape_formats::ppk::parse_ppk;
use perfscape_formats::{OpenOptions, detect, open};
use perfscape_model::{MetricId, Profile, ThreadIndex, Unit, ValueKind};
use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};

fn corpus(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/corpus/tau-ppk")
        .join(rel)
}

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/ppk")
        .join(rel)
}

fn load_ppk(rel: &str) -> Profile {
    let path = corpus(rel);
    assert_eq!(detect(&path).unwrap().name, "ppk", "{rel}");
    let loaded = open(&path, &OpenOptions::default()).unwrap();
    assert!(
        loaded.report.warnings.is_empty(),
        "{rel}: {:?}",
        loaded.report.warnings
    );
    assert_eq!(loaded.report.format, "ppk");
    loaded.profile
}

fn near(a: f64, b: f64) -> bool {
    a == b || (a - b).abs() <= 1e-12 * a.abs().max(b.abs())
}

/// Compares a profile with a `PpkDump.java` table; returns the number of rows compared.
fn compare_with_java(p: &Profile, table: &str) -> usize {
    let text = std::fs::read_to_string(fixture(table)).unwrap();
    let thread_of: HashMap<String, ThreadIndex> = p
        .threads()
        .iter()
        .enumerate()
        .map(|(i, t)| (t.to_string(), ThreadIndex::from(i)))
        .collect();
    let mut rows = 0;
    for line in text.lines() {
        let f = fields(line);
        let num = |i: usize| f[i].parse::<f64>().unwrap();
        match f[0].as_str() {
            "thread" => {
                let t = thread_of[&f[1]];
                let m = p.metric_by_name(&f[2]).unwrap();
                let (mut n, mut calls, mut sub, mut excl, mut max_incl) = (0usize, 0.0, 0.0, 0.0, f64::MIN);
                for e in p.event_ids() {
                    let col = p.interval(e);
                    if let Some(r) = col.row_of(t) {
                        n += 1;
                        calls += col.calls()[r];
                        sub += col.subcalls()[r];
                        excl += col.exclusive(m)[r];
                        max_incl = max_incl.max(col.inclusive(m)[r]);
                    }
                }
                assert_eq!(n as f64, num(3), "{table}: events of thread {}", f[1]);
                for (what, mine, java) in [
                    ("calls", calls, num(4)),
                    ("subcalls", sub, num(5)),
                    ("exclusive", excl, num(6)),
                ] {
                    assert!(
                        near(mine, java),
                        "{table} thread {} {}: {what} {mine} vs {java}",
                        f[1],
                        f[2]
                    );
                }
                assert_eq!(max_incl, num(7), "{table} thread {} max inclusive", f[1]);
            }
            "function" => {
                let e = p
                    .event_by_name(&f[1])
                    .unwrap_or_else(|| panic!("no event {}", f[1]));
                let m = p.metric_by_name(&f[2]).unwrap();
                let col = p.interval(e);
                assert_eq!(col.len() as f64, num(3), "{}", f[1]);
                let sum = |v: &[f64]| v.iter().sum::<f64>();
                assert!(near(sum(col.calls()), num(4)), "{} calls", f[1]);
                assert!(near(sum(col.subcalls()), num(5)), "{} subcalls", f[1]);
                assert!(near(sum(col.exclusive(m)), num(6)), "{} {} exclusive", f[1], f[2]);
                assert!(near(sum(col.inclusive(m)), num(7)), "{} {} inclusive", f[1], f[2]);
            }
            "userevent" => {
                let a = p
                    .atomic_event_by_name(&f[1])
                    .unwrap_or_else(|| panic!("no user event {}", f[1]));
                let col = p.atomic(a);
                assert_eq!(col.len() as f64, num(3));
                assert_eq!(col.count().iter().sum::<f64>(), num(4));
                assert_eq!(col.min().iter().copied().fold(f64::INFINITY, f64::min), num(5));
                assert_eq!(
                    col.max().iter().copied().fold(f64::NEG_INFINITY, f64::max),
                    num(6)
                );
                assert!(near(col.sum_squares().iter().sum::<f64>(), num(7)));
            }
            other => panic!("unknown row kind {other}"),
        }
        rows += 1;
    }
    rows
}

/// Invariants every TAU profile satisfies (see the module documentation).
fn check_invariants(p: &Profile, name: &str) {
    for m in p.metric_ids() {
        for t in 0..p.threads().len() {
            let t = ThreadIndex::from(t);
            let top = p
                .event_ids()
                .filter_map(|e| p.value(e, t, ValueKind::Inclusive, m))
                .fold(f64::MIN, f64::max);
            for e in p.event_ids() {
                if let (Some(x), Some(i)) = (
                    p.value(e, t, ValueKind::Exclusive, m),
                    p.value(e, t, ValueKind::Inclusive, m),
                ) {
                    assert!(i <= top, "{name}: {} above the top-level value", p.event_name(e));
                    assert!(
                        x <= i * (1.0 + 1e-9) + 1e-6,
                        "{name}: exclusive > inclusive in {}",
                        p.event_name(e)
                    );
                }
            }
        }
    }
    for a in 0..p.atomic_events().len() {
        let col = p.atomic(perfscape_model::AtomicEventId::from(a));
        for r in 0..col.len() {
            if col.count()[r] > 0.0 {
                let (min, mean, max) = (col.min()[r], col.mean()[r], col.max()[r]);
                assert!(
                    min <= mean * (1.0 + 1e-12) && mean <= max * (1.0 + 1e-12),
                    "{name}: user event {a}"
                );
                assert!(col.sum_squares()[r] >= col.count()[r] * mean * mean * (1.0 - 1e-9));
            }
        }
    }
}

/// For callpath profiles: a routine's flat calls and exclusive value equal the sums over the
/// callpaths that end in it. Returns the number of (routine, thread) pairs checked.
fn check_callpaths_add_up(p: &Profile, name: &str) -> usize {
    let m = MetricId(0);
    let mut sums: HashMap<(usize, ThreadIndex), (f64, f64)> = HashMap::new();
    for e in p.event_ids() {
        let ev = p.event(e);
        if !ev.is_callpath() {
            continue;
        }
        let routine = ev
            .routine()
            .unwrap_or_else(|| panic!("{name}: no flat event for {}", p.event_name(e)));
        let col = p.interval(e);
        for (r, &t) in col.threads().iter().enumerate() {
            let s = sums.entry((routine.index(), t)).or_default();
            s.0 += col.calls()[r];
            s.1 += col.exclusive(m)[r];
        }
    }
    for (&(routine, t), &(calls, excl)) in &sums {
        let e = perfscape_model::EventId::from(routine);
        let flat_calls = p.value(e, t, ValueKind::Calls, m).unwrap();
        let flat_excl = p.value(e, t, ValueKind::Exclusive, m).unwrap();
        assert_eq!(flat_calls, calls, "{name}: calls of {}", p.event_name(e));
        assert!(
            (flat_excl - excl).abs() <= 1e-9 * flat_excl.abs().max(1.0),
            "{name}: exclusive of {}: {flat_excl} vs {excl}",
            p.event_name(e)
        );
    }
    sums.len()
}

#[test]
fn gromacs_strong_scaling_equals_the_java_decoding() {
    for n in [2u32, 4, 8, 16, 32, 64] {
        let p = load_ppk(&format!("tau224-loadimbalance-gromacs/{n}.ppk"));
        let ids: Vec<u32> = p.threads().iter().map(|t| t.node).collect();
        assert_eq!(ids, (0..n).collect::<Vec<_>>());
        assert_eq!(p.metrics().len(), 1);
        assert_eq!(p.metric(MetricId(0)).unit, Unit::Microseconds);
        let rows = compare_with_java(&p, &format!("gromacs-{n}.csv"));
        assert_eq!(rows, n as usize + 5, "{n}: threads + 5 user events");
        check_invariants(&p, &format!("gromacs {n}"));
        // Groups and metadata came through.
        let e = p.event_by_name("MPI_Sendrecv()").unwrap();
        assert_eq!(p.event_groups_joined(e), "MPI");
        assert_eq!(
            p.metadata()
                .get_common("TAU Version")
                .map(|v| v.starts_with("2.18")),
            Some(true)
        );
        assert!(p.metadata().get(ThreadIndex(0), "pid").is_some());
        // Strong scaling: the same total work is spread over more ranks, so the slowest
        // rank's time (top-level inclusive) drops from 2 to 64 ranks.
    }
    let top = |n: u32| {
        let p = load_ppk(&format!("tau224-loadimbalance-gromacs/{n}.ppk"));
        perfscape_analysis_free_top(&p)
    };
    assert!(top(64) < top(2) / 5.0);
}

/// The largest inclusive TIME of any thread (no dependency on the analysis crate).
fn perfscape_analysis_free_top(p: &Profile) -> f64 {
    p.event_ids()
        .flat_map(|e| p.interval(e).inclusive(MetricId(0)).to_vec())
        .fold(0.0, f64::max)
}

#[test]
fn mpas_five_metrics_equal_the_java_decoding() {
    let p = load_ppk("tau224-mpas-papi-multimetric/mpas.ppk");
    let names: Vec<&str> = p.metrics().iter().map(|m| m.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "PAPI_BR_MSP",
            "PAPI_FP_INS",
            "PAPI_L1_DCM",
            "PAPI_TOT_INS",
            "TIME"
        ]
    );
    assert_eq!(p.metric(MetricId(4)).unit, Unit::Microseconds);
    assert_eq!(p.metric(MetricId(0)).unit, Unit::Count);
    assert_eq!(p.threads().len(), 128);
    let rows = compare_with_java(&p, "mpas.csv");
    assert!(rows > 390, "{rows}");
    check_invariants(&p, "mpas");
    // Floating-point instructions are a subset of all instructions, in every cell.
    let (fp, tot) = (MetricId(1), MetricId(3));
    let mut cells = 0;
    for e in p.event_ids() {
        let col = p.interval(e);
        for (a, b) in col.inclusive(fp).iter().zip(col.inclusive(tot)) {
            assert!(a <= b, "{}", p.event_name(e));
            cells += 1;
        }
    }
    assert!(cells > 9000);
    // Context user events are linked to their callpath text.
    let a = p
        .atomic_event_by_name("MPI-IO Bytes Read : initialize => MPI_File_read_all()")
        .unwrap();
    assert_eq!(
        p.atomic_events()[a.index()].base_name.as_deref(),
        Some("MPI-IO Bytes Read")
    );
}

#[test]
fn wrf_callpath_and_phases_add_up() {
    let p = load_ppk("tau224-wrf-callpath/wrf-callpath.ppk");
    assert_eq!(compare_with_java(&p, "wrf-callpath.csv"), 16 + 4);
    check_invariants(&p, "wrf");
    assert!(!p.call_tree().is_empty());
    assert!(check_callpaths_add_up(&p, "wrf") > 1000);
    // Names with TAU's odd callpath spacing are normalized (`A   => B`).
    assert!(p.event_by_name("CALL_PKG_AND_DIST [{module_io.f90} {21989,1}-{22095,32}] => CALL_PKG_AND_DIST_INT [{module_io.f90} {22225,1}-{22279,36}]").is_some());

    let p = load_ppk("tau224-phases/phases.ppk");
    assert_eq!(compare_with_java(&p, "phases.csv"), 1);
    check_invariants(&p, "phases");
    let e = p.event_by_name("Iteration 0 => IO Phase").unwrap();
    assert!(p.event_groups_joined(e).contains("TAU_CALLPATH"));
    assert!(check_callpaths_add_up(&p, "phases") > 10);
}

fn inflate(path: &Path) -> Vec<u8> {
    let mut raw = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_end(&mut raw)
        .unwrap();
    raw
}

#[test]
fn malformed_input_never_panics_and_says_where() {
    let raw = inflate(&corpus("tau224-loadimbalance-gromacs/2.ppk"));
    let full = parse_ppk(&raw).unwrap();
    assert_eq!(full.profile.threads().len(), 2);
    // Cut anywhere: an error naming the decompressed byte, or (after the first thread) a
    // partial profile with a warning.
    for cut in (0..raw.len()).step_by(61) {
        match parse_ppk(&raw[..cut]) {
            Ok(p) => {
                assert_eq!(p.profile.threads().len(), 1, "cut {cut}");
                assert!(
                    p.warnings.iter().any(|w| w.message.contains("1 of 2 threads")),
                    "cut {cut}"
                );
            }
            Err(e) => assert!(
                e.message.contains("decompressed byte") || e.message.contains("no complete thread"),
                "cut {cut}: {e}"
            ),
        }
    }
    // Corrupted bytes (deterministic positions and values).
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    for _ in 0..2000 {
        let mut bad = raw.clone();
        for _ in 0..3 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let pos = (x % bad.len() as u64) as usize;
            bad[pos] = (x >> 24) as u8;
        }
        let _ = parse_ppk(&bad);
    }
    // A truncated .ppk file (gzip cut short) loads the complete threads, reported as
    // loaded in part.
    let file = std::fs::read(corpus("tau224-loadimbalance-gromacs/2.ppk")).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let cut_file = tmp.path().join("cut.ppk");
    std::fs::write(&cut_file, &file[..file.len() * 95 / 100]).unwrap();
    let p = open(&cut_file, &OpenOptions::default()).unwrap();
    assert_eq!(p.profile.threads().len(), 1);
    assert!(p.report.is_partial());
    assert!(
        p.report
            .partial_files
            .iter()
            .any(|w| w.message.contains("gzip data is corrupt or truncated")),
        "{:?}",
        p.report.partial_files
    );
    // Not a ppk, a newer incompatible version.
    assert!(parse_ppk(b"hello").unwrap_err().message.contains("PPK"));
    assert!(parse_ppk(b"\0X\0Y\0Z").unwrap_err().message.contains("magic"));
    let mut newer = raw.clone();
    newer[10..14].copy_from_slice(&3i32.to_be_bytes());
    assert!(
        parse_ppk(&newer)
            .unwrap_err()
            .message
            .contains("versions up to 2")
    );
    // An out-of-range function index names its byte.
    let mut bad = raw.clone();
    let pos = find_first_thread_function_index(&raw);
    bad[pos..pos + 4].copy_from_slice(&100_000i32.to_be_bytes());
    let e = parse_ppk(&bad).unwrap_err();
    assert!(
        e.message.contains(&format!(
            "decompressed byte {pos}: a function index 100000 is out of range"
        )),
        "{e}"
    );
}

/// Byte offset of the first function index of the first thread of 2.ppk's stream, found
/// by walking the layout with plain reads.
fn find_first_thread_function_index(raw: &[u8]) -> usize {
    let i32_at = |o: usize| i32::from_be_bytes([raw[o], raw[o + 1], raw[o + 2], raw[o + 3]]) as usize;
    let mut o = 6 + 8;
    let meta = i32_at(o);
    o += 4 + meta;
    let utf = |o: &mut usize| {
        let n = u16::from_be_bytes([raw[*o], raw[*o + 1]]) as usize;
        *o += 2 + n;
    };
    let nm = i32_at(o);
    o += 4;
    for _ in 0..nm {
        utf(&mut o);
    }
    let ng = i32_at(o);
    o += 4;
    for _ in 0..ng {
        utf(&mut o);
    }
    let nf = i32_at(o);
    o += 4;
    for _ in 0..nf {
        utf(&mut o);
        let k = i32_at(o);
        o += 4 + 4 * k;
    }
    let nu = i32_at(o);
    o += 4;
    for _ in 0..nu {
        utf(&mut o);
    }
    o + 4 + 12 + 4
}
