#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Caliper `.cali` and json-split files against Hatchet (`tests/fixtures/hatchet/`, made with
//! `make_reference.py`: `GraphFrame.from_caliperreader` for `.cali`,
//! `GraphFrame.from_caliper(..., node_ordering=False)` for JSON).
//!
//! Values are compared per call path (region names from the root) and rank. Source-line
//! detail of sampling profiles is attributed to the enclosing function on both sides:
//! Hatchet makes statement children only for functions sampled on several lines, perfscape
//! always adds `[SAMPLE]` line events.

mod common;
use common::fields;
use perfscape_formats::caliper::cali::parse_cali;
use perfscape_formats::caliper::json::parse_json_split;
use perfscape_formats::{OpenOptions, detect, open};
use perfscape_model::{Profile, ThreadId, ValueKind};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

fn corpus(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/corpus/caliper")
        .join(rel)
}

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hatchet")
        .join(rel)
}

/// Hatchet's table: metric columns, and per (function path, rank) the values, with
/// statement nodes folded into their function (paths are lists of region names).
type Sums = HashMap<(Vec<String>, u32), Vec<f64>>;

fn hatchet_sums(table: &str) -> (Vec<String>, Sums) {
    let text = std::fs::read_to_string(fixture(table)).unwrap();
    let mut header = Vec::new();
    let mut frames: Vec<(String, String)> = Vec::new();
    let mut parent: Vec<Option<usize>> = Vec::new();
    let mut sums: Sums = HashMap::new();
    for (i, line) in text.lines().enumerate() {
        let f = fields(line);
        if i == 0 {
            header = f[4..].to_vec();
            continue;
        }
        if f[0] == "node" {
            parent.push(f[2].parse().ok());
            let parts: Vec<&str> = f[3].split('|').collect();
            frames.push((parts[0].to_string(), parts[1].to_string()));
            continue;
        }
        let node: usize = f[1].parse().unwrap();
        let mut path = Vec::new();
        let mut q = Some(node);
        while let Some(x) = q {
            let (kind, name) = &frames[x];
            if kind != "statement" {
                // Hatchet numbers empty labels `UNKNOWN <n>`; perfscape calls them `UNKNOWN`.
                let name = if name.starts_with("UNKNOWN ") {
                    "UNKNOWN"
                } else {
                    name
                };
                path.push(name.to_string());
            }
            q = parent[x];
        }
        path.reverse();
        let rank = f[2].parse::<f64>().map(|r| r as u32).unwrap_or(0);
        let s = sums
            .entry((path, rank))
            .or_insert_with(|| vec![0.0; header.len()]);
        for (k, v) in f[4..].iter().enumerate() {
            s[k] += v.parse::<f64>().unwrap_or(0.0);
        }
    }
    (header, sums)
}

/// How a metric's values combine into a per-routine (flat) value.
fn combine(metric: &str) -> fn(f64, f64) -> f64 {
    if metric.starts_with("Min") || metric.starts_with("min#") {
        f64::min
    } else if metric.starts_with("Max") || metric.starts_with("max#") {
        f64::max
    } else {
        |a, b| a + b
    }
}

/// The flat value of `routine` on `rank` from Hatchet's nodes (the rule perfscape's flat
/// events follow): exclusive values of all its nodes combined; inclusive values of its nodes
/// without an ancestor of the same routine.
fn hatchet_flat(
    sums: &Sums,
    routine: &str,
    rank: u32,
    col: usize,
    metric: &str,
    kind: ValueKind,
) -> Option<f64> {
    let comb = combine(metric);
    let mut acc: Option<f64> = None;
    for ((path, r), vals) in sums {
        if *r != rank || path.last().map(String::as_str) != Some(routine) {
            continue;
        }
        if kind == ValueKind::Inclusive && path[..path.len() - 1].iter().any(|p| p == routine) {
            continue;
        }
        acc = Some(acc.map_or(vals[col], |a| comb(a, vals[col])));
    }
    acc
}

/// perfscape's values of the tree nodes (callpath events, and root events, which are flat)
/// whose path without `[SAMPLE]` frames is `path`, on rank `rank`, summed.
fn my_sum(p: &Profile, path: &str, rank: u32, metric: &str, kind: ValueKind) -> f64 {
    let m = p
        .metric_by_name(metric)
        .unwrap_or_else(|| panic!("no metric {metric}"));
    let Some(t) = p.thread_index(ThreadId::new(rank, 0, 0)) else {
        return 0.0;
    };
    p.event_ids()
        .filter(|&e| {
            let ev = p.event(e);
            let key: Vec<&str> = ev
                .name
                .split(" => ")
                .filter(|f| !f.starts_with("[SAMPLE] "))
                .collect();
            key.join(" => ") == path && (ev.is_callpath() || ev.depth == 1)
        })
        .filter_map(|e| p.value(e, t, kind, m))
        .sum()
}

fn check(file: &str, table: &str, mapping: &[(&str, &str, ValueKind)]) -> usize {
    let path = corpus(file);
    assert_eq!(detect(&path).unwrap().name, "caliper", "{file}");
    let loaded = open(&path, &OpenOptions::default()).unwrap();
    let p = &loaded.profile;
    let (header, sums) = hatchet_sums(table);
    let mut compared = 0;
    for ((key, rank), values) in &sums {
        // A root is represented by its routine's flat event: when the routine also occurs
        // deeper in the tree, compare with the flat rule applied to Hatchet's nodes.
        let routine_elsewhere = key.len() == 1
            && sums
                .keys()
                .any(|(other, _)| other.len() > 1 && other.iter().any(|f| f == &key[0]));
        for (col, metric, kind) in mapping {
            let k = header
                .iter()
                .position(|h| h == col)
                .unwrap_or_else(|| panic!("{table}: no column {col}"));
            let mine = my_sum(p, &key.join(" => "), *rank, metric, *kind);
            let theirs = if routine_elsewhere {
                hatchet_flat(&sums, &key[0], *rank, k, metric, *kind).unwrap_or(0.0)
            } else {
                values[k]
            };
            assert!(
                (mine - theirs).abs() <= 1e-9 * mine.abs().max(theirs.abs()) + 1e-12,
                "{file}: `{}` rank {rank} {col}: perfscape {mine}, Hatchet {theirs}",
                key.join(" => ")
            );
            compared += 1;
        }
    }
    compared
}

use ValueKind::{Exclusive as X, Inclusive as I};

#[test]
fn lulesh_cali_equals_hatchet() {
    let n = check(
        "hatchet-lulesh/lulesh-annotation-profile.cali",
        "caliper-lulesh-cali.csv",
        &[
            ("time", "sum#time.duration", X),
            ("count", "count", X),
            ("min#time.duration", "min#time.duration", X),
            ("max#time.duration", "max#time.duration", X),
            ("avg#time.duration", "avg#time.duration", X),
        ],
    );
    assert_eq!(n, 19 * 5);
}

#[test]
fn spot_region_profiles_equal_hatchet() {
    let mapping = [
        ("Min time/rank", "Min time/rank", X),
        ("Max time/rank", "Max time/rank", X),
        ("Avg time/rank", "Avg time/rank", X),
        ("Total time", "Total time", I),
    ];
    for (file, table) in [
        (
            "hatchet-ordered-mpi/230525-151723_1930647_FSY8b8cKSEEi.cali",
            "caliper-ordered-mpi-cali.csv",
        ),
        (
            "thicket-mpi-scaling/27_cores.cali",
            "caliper-mpi-scaling-27-cali.csv",
        ),
        (
            "thicket-mpi-scaling/343_cores.cali",
            "caliper-mpi-scaling-343-cali.csv",
        ),
    ] {
        assert!(check(file, table, &mapping) > 80, "{file}");
    }
    // The other scaling runs load too; min <= avg <= max per node.
    for cores in [64, 125, 216] {
        let loaded = open(
            &corpus(&format!("thicket-mpi-scaling/{cores}_cores.cali")),
            &OpenOptions::default(),
        )
        .unwrap();
        let p = &loaded.profile;
        let (mn, av, mx) = (
            p.metric_by_name("Min time/rank").unwrap(),
            p.metric_by_name("Avg time/rank").unwrap(),
            p.metric_by_name("Max time/rank").unwrap(),
        );
        for e in p.event_ids().filter(|&e| p.event(e).is_callpath()) {
            let col = p.interval(e);
            for r in 0..col.len() {
                assert!(
                    col.exclusive(mn)[r] <= col.exclusive(av)[r]
                        && col.exclusive(av)[r] <= col.exclusive(mx)[r]
                );
            }
        }
        // Run metadata (Caliper globals / Adiak) came through.
        assert_eq!(
            p.metadata().get_common("mpi.world.size"),
            Some(cores.to_string().as_str())
        );
        assert_eq!(
            p.metadata().get_common("jobsize"),
            Some(cores.to_string().as_str())
        );
    }
}

#[test]
fn json_split_equals_hatchet() {
    let n = check(
        "hatchet-lulesh/lulesh-annotation-profile.json",
        "caliper-lulesh-json.csv",
        &[
            ("time", "sum#time.duration", X),
            ("time (inc)", "sum#time.duration", I),
        ],
    );
    assert!(n > 300, "{n}");
    let n = check(
        "hatchet-cpi-json/cpi-callpath-profile.json",
        "caliper-cpi-json.csv",
        &[("time", "sum#time.duration", X), ("count", "count", X)],
    );
    assert!(n > 400, "{n}");
}

#[test]
fn the_same_run_as_cali_and_json_has_the_same_tree() {
    let cali = open(
        &corpus("hatchet-lulesh/lulesh-annotation-profile.cali"),
        &OpenOptions::default(),
    )
    .unwrap();
    let json = open(
        &corpus("hatchet-lulesh/lulesh-annotation-profile.json"),
        &OpenOptions::default(),
    )
    .unwrap();
    let names = |p: &Profile| {
        let mut v: Vec<String> = p
            .events()
            .iter()
            .filter(|e| !e.is_callpath())
            .map(|e| e.name.clone())
            .collect();
        v.sort();
        v
    };
    let (a, b) = (names(&cali.profile), names(&json.profile));
    assert!(a.iter().filter(|n| b.contains(n)).count() >= 15, "{a:?} vs {b:?}");
}

#[test]
fn malformed_input_never_panics_and_says_where() {
    let text = std::fs::read_to_string(corpus("hatchet-lulesh/lulesh-annotation-profile.cali")).unwrap();
    let full = parse_cali(&text).unwrap();
    assert_eq!(full.rows.len(), 19);
    for cut in 0..text.len() {
        if text.is_char_boundary(cut) {
            let _ = parse_cali(&text[..cut]);
        }
    }
    let bad = text.replacen("__rec=node,id=155,attr=20", "__rec=node,id=155,attr=x", 1);
    let (line, msg) = parse_cali(&bad).unwrap_err();
    assert!(line > 10 && msg.contains("not a node id"), "{line}: {msg}");
    let bad = text.replacen("data=0.000285=", "data=zero=", 1);
    let (_, msg) = parse_cali(&bad).unwrap_err();
    assert!(msg.contains("not a number"), "{msg}");
    let json = std::fs::read(corpus("hatchet-lulesh/lulesh-annotation-profile.json")).unwrap();
    assert!(parse_json_split(&json).is_ok());
    for cut in (0..json.len()).step_by(37) {
        assert!(parse_json_split(&json[..cut]).is_err());
    }
    let e = parse_json_split(br#"{"data": [[1, 0]], "columns": ["a", "path"], "column_metadata": [{"is_value": true}], "nodes": []}"#).unwrap_err();
    assert!(e.message.contains("column_metadata"), "{e}");
    let e = parse_json_split(br#"{"data": [[1, 5]], "columns": ["a", "path"], "column_metadata": [{"is_value": true}, {"is_value": false}], "nodes": []}"#).unwrap_err();
    assert!(e.message.contains("out of range"), "{e}");
    let e = parse_json_split(b"[1, 2]").unwrap_err();
    assert!(e.message.contains("no `data` array"), "{e}");
}
