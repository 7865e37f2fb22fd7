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
use perfscape_model::{Combine, Combiner, Profile, ThreadId, Unit, ValueKind};
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

/// The flat value of `routine` on `rank` from Hatchet's nodes (the rule perfscape's flat
/// events follow): exclusive values of all its nodes combined under the metric's rule (`rule`,
/// which `metric_rules_units_and_pairs_equal_hatchets_columns` checks); inclusive values of
/// its nodes without an ancestor of the same routine.
fn hatchet_flat(
    sums: &Sums,
    routine: &str,
    rank: u32,
    col: usize,
    rule: Combine,
    kind: ValueKind,
) -> Option<f64> {
    let mut acc = Combiner::new(rule);
    for ((path, r), vals) in sums {
        if *r != rank || path.last().map(String::as_str) != Some(routine) {
            continue;
        }
        if kind == ValueKind::Inclusive && path[..path.len() - 1].iter().any(|p| p == routine) {
            continue;
        }
        acc.push(vals[col]);
    }
    acc.finish()
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
            let name = p.event_name(e);
            let key: Vec<&str> = name
                .split(" => ")
                .filter(|f| !f.starts_with("[SAMPLE] "))
                .collect();
            key.join(" => ") == path && (ev.is_callpath() || ev.depth == 1)
        })
        .filter_map(|e| p.value(e, t, kind, m))
        .sum()
}

/// A Caliper file named as in `caliper-metrics.csv`: under the corpus, or `fixtures/<name>` for
/// the files of `tests/fixtures/caliper` (made by `make_examples.py` there).
fn input(file: &str) -> PathBuf {
    match file.strip_prefix("fixtures/") {
        Some(name) => Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/caliper")
            .join(name),
        None => corpus(file),
    }
}

fn check(file: &str, table: &str, mapping: &[(&str, &str, ValueKind)]) -> usize {
    let path = input(file);
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
                let rule = p.metric(p.metric_by_name(metric).unwrap()).combine;
                hatchet_flat(&sums, &key[0], *rank, k, rule, *kind).unwrap_or(0.0)
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

/// RAJAPerf's layout (`tests/fixtures/caliper/rajaperf-style.cali`): the inclusive statistics
/// and their ` (exc)` twins are one metric each, with Hatchet's values on both sides; the
/// region counts are metrics; `ProblemSize`, `Reps`, `BlockSize` are per-node attributes with
/// Hatchet's values. The CUPTI layout: host time exclusive and inclusive as one metric.
#[test]
fn rajaperf_and_cupti_layouts_equal_hatchet() {
    let n = check(
        "fixtures/rajaperf-style.cali",
        "caliper-rajaperf-style-cali.csv",
        &[
            ("Min time/rank", "Min time/rank", I),
            ("Min time/rank (exc)", "Min time/rank", X),
            ("Max time/rank", "Max time/rank", I),
            ("Max time/rank (exc)", "Max time/rank", X),
            ("Avg time/rank", "Avg time/rank", I),
            ("Avg time/rank (exc)", "Avg time/rank", X),
            ("Total time", "Total time", I),
            ("Total time (exc)", "Total time", X),
            ("Calls/rank (min)", "Calls/rank (min)", X),
            ("Calls/rank (avg)", "Calls/rank (avg)", X),
            ("Calls/rank (max)", "Calls/rank (max)", X),
            ("Calls (total)", "Calls (total)", X),
        ],
    );
    assert_eq!(n, 9 * 12);
    let p = open(&input("fixtures/rajaperf-style.cali"), &OpenOptions::default())
        .unwrap()
        .profile;
    let (header, sums) = hatchet_sums("caliper-rajaperf-style-cali.csv");
    let mut attributes = 0;
    for ((path, _), values) in &sums {
        let e = p.event_by_name(&path.join(" => ")).unwrap();
        let mine: HashMap<&str, &str> = p.event_attributes(e).collect();
        for key in ["ProblemSize", "Reps", "BlockSize"] {
            let k = header.iter().position(|h| h == key).unwrap();
            // Hatchet fills the nodes without the attribute with NaN (summed here as 0).
            let theirs = values[k];
            match mine.get(key) {
                Some(v) => {
                    assert_eq!(v.parse::<f64>().unwrap(), theirs, "{path:?} {key}");
                    attributes += 1;
                }
                None => assert_eq!(theirs, 0.0, "{path:?} {key}"),
            }
        }
    }
    assert_eq!(attributes, 5 * 3);
    let n = check(
        "fixtures/cupti-style.cali",
        "caliper-cupti-style-cali.csv",
        &[
            ("sum#cupti.host.duration", "sum#cupti.host.duration", X),
            ("inclusive#sum#cupti.host.duration", "sum#cupti.host.duration", I),
            ("sum#cupti.activity.duration", "sum#cupti.activity.duration", X),
            ("count", "count", X),
        ],
    );
    assert_eq!(n, 2 * 4 * 4);
}

/// Which metrics a Caliper file has, how their columns pair into exclusive and inclusive
/// values, their units and rules, against every metric column Hatchet lists for every Caliper
/// file (`caliper-metrics.csv`: Hatchet's column, its `exc`/`inc`, and the Caliper attribute,
/// alias and unit behind it as caliper-reader reads them).
///
/// Expected, column by column: an `any#` attribute is a per-node attribute, not a metric; an
/// inclusive attribute (`inclusive#`, `iscale#`, ...) is the inclusive side of the metric named
/// by its alias, or by its exclusive twin's name; a column aliased `X (exc)` is the exclusive
/// side of `X`; any other column is the exclusive side of the metric named by its alias or
/// attribute. Hatchet's `exc`/`inc` agrees except where it looks at an alias that hides the
/// attribute's `inclusive#` (`Min time/rank`): those are counted. Units: the recorded unit
/// (`sec`, `count`); CUPTI durations without one are nanoseconds. Rules: the outermost
/// operator (`min#` minimum, `max#` maximum, `avg#` mean, `ratio#` not combinable, else sum).
#[test]
fn metric_rules_units_and_pairs_equal_hatchets_columns() {
    let text = std::fs::read_to_string(fixture("caliper-metrics.csv")).unwrap();
    let mut by_file: Vec<(String, Vec<Vec<String>>)> = Vec::new();
    for line in text.lines().skip(1) {
        let f = fields(line);
        match by_file.last_mut() {
            Some((file, rows)) if *file == f[0] => rows.push(f),
            _ => by_file.push((f[0].clone(), vec![f])),
        }
    }
    let (mut columns, mut alias_inclusive, mut node_attributes) = (0, 0, 0);
    for (file, rows) in &by_file {
        let p = open(&input(file), &OpenOptions::default()).unwrap().profile;
        let mut sides: HashMap<String, Vec<ValueKind>> = HashMap::new();
        for f in rows {
            let (column, hatchet_kind, attribute, alias, unit) = (&f[1], &f[2], &f[3], &f[4], &f[5]);
            columns += 1;
            if attribute.starts_with("any#") {
                assert!(
                    p.metric_by_name(column).is_none(),
                    "{file}: {column} is not a metric"
                );
                assert!(
                    p.event_ids()
                        .any(|e| p.event_attributes(e).any(|(k, _)| k == alias)),
                    "{file}: no node has attribute {alias}"
                );
                node_attributes += 1;
                continue;
            }
            let inclusive = ["inclusive#", "iscale#", "iratio#", "ipercent_total#"]
                .iter()
                .any(|op| attribute.contains(op));
            let (metric, kind) = if let Some(base) = alias.strip_suffix(" (exc)") {
                (base.to_string(), X)
            } else if !alias.is_empty() {
                (alias.clone(), if inclusive { I } else { X })
            } else if inclusive {
                (attribute.replacen("inclusive#", "", 1), I)
            } else {
                (attribute.clone(), X)
            };
            // Hatchet's own rule looks at its column name; where it says inclusive, so does
            // perfscape; it says exclusive for an alias that hides `inclusive#`.
            let hatchet_inclusive = hatchet_kind == "inc";
            assert_eq!(
                hatchet_inclusive,
                column.contains("inclusive") || column.contains("(inc)")
            );
            if hatchet_inclusive {
                assert_eq!(kind, I, "{file}: {column}");
            } else if kind == I {
                assert!(
                    !alias.is_empty() && attribute.contains("inclusive#"),
                    "{file}: {column}"
                );
                alias_inclusive += 1;
            }
            let m = p
                .metric_by_name(&metric)
                .unwrap_or_else(|| panic!("{file}: no metric {metric} for column {column}"));
            sides.entry(metric.clone()).or_default().push(kind);
            let want_unit = match unit.as_str() {
                "sec" => Unit::Seconds,
                "count" => Unit::Count,
                "" if attribute.contains("cupti.")
                    && attribute.ends_with("duration")
                    && !attribute.starts_with("ratio#") =>
                {
                    Unit::Nanoseconds
                }
                "" if attribute.starts_with("ratio#") => Unit::Other("ratio".into()),
                "" if attribute.contains("time") => Unit::Other("unit not recorded".into()),
                "" => Unit::Count,
                other => panic!("{file}: unit {other} not expected"),
            };
            let want_rule = match attribute.split('#').next().unwrap() {
                "min" => Combine::Min,
                "max" => Combine::Max,
                "avg" => Combine::Mean,
                "ratio" => Combine::NotCombinable,
                _ => Combine::Sum,
            };
            let metric_def = p.metric(m);
            assert_eq!(
                (&metric_def.unit, metric_def.combine),
                (&want_unit, want_rule),
                "{file}: {metric}"
            );
        }
        // Every perfscape metric is one of Hatchet's columns (or a pair of them), each side once.
        let mut names: Vec<&str> = p.metrics().iter().map(|m| m.name.as_str()).collect();
        let mut expected: Vec<&str> = sides.keys().map(String::as_str).collect();
        names.sort_unstable();
        expected.sort_unstable();
        assert_eq!(names, expected, "{file}");
        for (metric, kinds) in &sides {
            assert!(
                kinds.len() <= 2 && (kinds.len() == 1 || kinds[0] != kinds[1]),
                "{file}: {metric} {kinds:?}"
            );
        }
    }
    assert_eq!(by_file.len(), 11);
    assert_eq!((columns, alias_inclusive, node_attributes), (53, 28, 3));
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
            .map(|e| e.frame.to_string())
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
