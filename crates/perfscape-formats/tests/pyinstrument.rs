#![allow(clippy::unwrap_used, clippy::expect_used)]
//! pyinstrument JSON profiles against Hatchet (`tests/fixtures/hatchet/`, made with
//! `make_reference.py`: `GraphFrame.from_pyinstrument`), and malformed inputs.
//!
//! Hatchet names a node by its `function` and keeps `file` and `line` as columns; perfscape
//! names it `function [{file} {line}]` (the model's source location), so each Hatchet node's
//! perfscape callpath is built here from Hatchet's own name, file and line. Hatchet keeps
//! same-named siblings as separate nodes where perfscape's callpath model combines them into
//! one event: Hatchet's nodes are summed per callpath before comparing (a difference by
//! design; the totals agree either way).

mod common;
use common::{corpus, fields};
use perfscape_formats::pyinstrument::{parse_pyinstrument, sniff};
use perfscape_formats::stacks::{CUT_FRAME, MAX_DEPTH};
use perfscape_formats::{OpenOptions, detect, open};
use perfscape_model::{MetricId, Profile, ValueKind};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

fn input() -> PathBuf {
    corpus().join("pyinstrument/hatchet-pyinstrument/pyinstrument-hatchet-profile.json")
}

/// One node of Hatchet's table.
struct Node {
    parent: Option<usize>,
    name: String,
    file: String,
    line: String,
    exclusive: f64,
    inclusive: f64,
}

/// Hatchet's nodes (`node` rows give the tree and `type|name|file|line`, `value` rows the
/// exclusive `time` and inclusive `time (inc)`).
fn hatchet_nodes() -> Vec<Node> {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hatchet/pyinstrument-hatchet-profile.csv");
    let text = std::fs::read_to_string(path).unwrap();
    let mut nodes: Vec<Node> = Vec::new();
    let mut lines = text.lines();
    let header = fields(lines.next().unwrap());
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let (x, i) = (col("time"), col("time (inc)"));
    for line in lines {
        let f = fields(line);
        if f[0] == "node" {
            assert_eq!(f[1].parse::<usize>().unwrap(), nodes.len());
            let parts: Vec<&str> = f[3].split('|').collect();
            let n = parts.len();
            nodes.push(Node {
                parent: f[2].parse().ok(),
                name: parts[1..n - 2].join("|"),
                file: parts[n - 2].to_string(),
                line: parts[n - 1].to_string(),
                exclusive: f64::NAN,
                inclusive: f64::NAN,
            });
        } else {
            let node = &mut nodes[f[1].parse::<usize>().unwrap()];
            node.exclusive = f[x].parse().unwrap();
            node.inclusive = f[i].parse().unwrap();
        }
    }
    assert!(
        nodes
            .iter()
            .all(|n| n.exclusive.is_finite() && n.inclusive.is_finite())
    );
    nodes
}

/// The frame name perfscape gives a Hatchet node (the rule of the reader's documentation).
fn frame(n: &Node) -> String {
    if n.file.is_empty() {
        n.name.clone()
    } else {
        format!("{} [{{{}}} {{{}}}]", n.name, n.file, n.line)
    }
}

/// Each node's path of frames from the root.
fn paths(nodes: &[Node]) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = Vec::with_capacity(nodes.len());
    for n in nodes {
        let mut p = n.parent.map(|q| out[q].clone()).unwrap_or_default();
        p.push(frame(n));
        out.push(p);
    }
    out
}

fn value(p: &Profile, name: &str, kind: ValueKind) -> f64 {
    let e = p
        .event_by_name(name)
        .unwrap_or_else(|| panic!("no event `{name}`"));
    p.value(e, 0usize.into(), kind, MetricId(0)).unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs()) + 1e-15
}

#[test]
fn every_node_equals_hatchet() {
    let path = input();
    assert_eq!(detect(&path).unwrap().name, "pyinstrument");
    let opened = open(&path, &OpenOptions::default()).unwrap();
    assert!(!opened.report.is_partial(), "{:?}", opened.report);
    let p = &opened.profile;
    assert_eq!(p.threads().len(), 1);
    assert_eq!(p.metrics()[0].name, "time");
    assert_eq!(p.metrics()[0].unit, perfscape_model::Unit::Seconds);
    let nodes = hatchet_nodes();
    let paths = paths(&nodes);
    // Hatchet's nodes per perfscape callpath (same-named siblings summed).
    let mut per_path: HashMap<String, (f64, f64, usize)> = HashMap::new();
    for (n, path) in nodes.iter().zip(&paths) {
        let s = per_path.entry(path.join(" => ")).or_default();
        s.0 += n.exclusive;
        s.1 += n.inclusive;
        s.2 += 1;
    }
    let mut compared = 0;
    for (n, path) in nodes.iter().zip(&paths) {
        let name = path.join(" => ");
        let e = p
            .event_by_name(&name)
            .unwrap_or_else(|| panic!("no event `{name}`"));
        let ev = p.event(e);
        // File and line are the event's source location (none for frames without a file).
        match ev.source() {
            Some(s) => assert_eq!(
                (s.file, s.line.to_string()),
                (n.file.as_str(), n.line.clone()),
                "{name}"
            ),
            None => assert!(n.file.is_empty(), "{name}"),
        }
        if path.len() == 1 {
            continue; // the root is a flat event: compared below with the flat rule
        }
        assert!(ev.is_callpath(), "{name}");
        let (x, i, _) = per_path[&name];
        let (mx, mi) = (
            value(p, &name, ValueKind::Exclusive),
            value(p, &name, ValueKind::Inclusive),
        );
        assert!(close(mx, x), "{name}: exclusive perfscape {mx}, Hatchet {x}");
        assert!(close(mi, i), "{name}: inclusive perfscape {mi}, Hatchet {i}");
        compared += 1;
    }
    assert_eq!(compared + 1, nodes.len());
    // One callpath event per distinct non-root path, nothing else.
    let callpaths = p.event_ids().filter(|&e| p.event(e).is_callpath()).count();
    assert_eq!(callpaths, per_path.keys().filter(|k| k.contains(" => ")).count());
    // Flat events (the root's among them): exclusive = Hatchet's exclusive summed over the
    // routine's nodes; inclusive = Hatchet's inclusive summed over its nodes that have no
    // ancestor of the same routine.
    let mut flat: HashMap<&str, (f64, f64)> = HashMap::new();
    for (n, path) in nodes.iter().zip(&paths) {
        let leaf = path.last().unwrap().as_str();
        let s = flat.entry(leaf).or_default();
        s.0 += n.exclusive;
        if !path[..path.len() - 1].iter().any(|f| f == leaf) {
            s.1 += n.inclusive;
        }
    }
    for (name, (x, i)) in &flat {
        let (mx, mi) = (
            value(p, name, ValueKind::Exclusive),
            value(p, name, ValueKind::Inclusive),
        );
        assert!(
            close(mx, *x),
            "flat {name}: exclusive perfscape {mx}, Hatchet {x}"
        );
        assert!(
            close(mi, *i),
            "flat {name}: inclusive perfscape {mi}, Hatchet {i}"
        );
    }
    let flats = p.event_ids().filter(|&e| !p.event(e).is_callpath()).count();
    assert_eq!(flats, flat.len());
    // Totals: the exclusive times add up to the root's inclusive time on both sides.
    let root = &nodes[0];
    let hatchet_total: f64 = nodes.iter().map(|n| n.exclusive).sum();
    let mine_total: f64 = p
        .event_ids()
        .filter(|&e| !p.event(e).is_callpath())
        .map(|e| {
            p.value(e, 0usize.into(), ValueKind::Exclusive, MetricId(0))
                .unwrap()
        })
        .sum();
    assert!((hatchet_total - root.inclusive).abs() < 1e-12);
    assert!((mine_total - root.inclusive).abs() < 1e-12, "{mine_total}");
    assert!(close(
        value(p, &frame(root), ValueKind::Inclusive),
        root.inclusive
    ));
}

#[test]
fn run_metadata_is_kept() {
    let bytes = std::fs::read(input()).unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    let p = parse_pyinstrument(&bytes).unwrap().profile;
    for key in ["program", "start_time", "duration", "sample_count", "cpu_time"] {
        let v = &doc[key];
        let want = v.as_str().map_or_else(|| v.to_string(), str::to_string);
        let got = p.metadata().get_common(key).unwrap_or_else(|| panic!("no {key}"));
        match v.as_f64() {
            Some(x) => assert_eq!(got.parse::<f64>().unwrap(), x, "{key}"),
            None => assert_eq!(got, want, "{key}"),
        }
    }
}

/// The corpus file with `from` replaced by `to` once; and the 1-based line of the change.
fn damaged(from: &str, to: &str) -> (Vec<u8>, usize) {
    let text = std::fs::read_to_string(input()).unwrap();
    let at = text.find(from).unwrap_or_else(|| panic!("{from}"));
    let line = text[..at].matches('\n').count() + 1;
    (text.replacen(from, to, 1).into_bytes(), line)
}

#[test]
fn malformed_frames_say_where_and_what_was_expected() {
    // Each damage at a known line: the error names that line and what was expected.
    for (from, to, says) in [
        (
            "\"time\": 0.339553",
            "\"time\": \"0.339553\"",
            "`time` is a string",
        ),
        ("\"time\": 0.339553", "\"time\": -0.339553", "`time` is negative"),
        ("\"time\": 0.339553", "\"time\": 1e400", "too large"),
        (
            "\"time\": 0.339553",
            "\"time\": NaN",
            "`NaN` is not a JSON number",
        ),
        (
            "\"time\": 0.339553",
            "\"time\": Infinity",
            "`Infinity` is not a JSON number",
        ),
        (
            "\"time\": 0.339553",
            "\"time\": nan",
            "`nan` is not a JSON number",
        ),
        ("\"time\": 0.339553", "\"time\": null", "`time` is null"),
        ("\"line_no\": 9,", "\"line_no\": \"9\",", "`line_no` is a string"),
        ("\"line_no\": 9,", "\"line_no\": 9.5,", "a whole number"),
        ("\"line_no\": 9,", "\"line_no\": 99999999999,", "a whole number"),
        (
            "\"function\": \"<module>\",\n        \"file_path_short\": \"hatchet/__init__.py\"",
            "\"function\": 7,\n        \"file_path_short\": \"hatchet/__init__.py\"",
            "`function` is a number",
        ),
        (
            "\"file_path_short\": \"hatchet/__init__.py\"",
            "\"file_path_short\": [\"x\"]",
            "`file_path_short` is an array",
        ),
        (
            "\"time\": 0.339553,",
            "\"time\": 0.339553, \"time\": 1,",
            "a second `time`",
        ),
    ] {
        let (bytes, line) = damaged(from, to);
        let e = parse_pyinstrument(&bytes).unwrap_err();
        assert_eq!(e.line, Some(line), "{to}: {e}");
        assert!(e.message.contains(says), "{to}: {e}");
        assert!(e.message.contains("expected"), "{to}: {e}");
        assert!(e.message.starts_with("column "), "{to}: {e}");
        // The frame is named by its path (for damage inside a frame's fields).
        if to.contains("time\": ") || to.contains("line_no") || to.contains("file_path_short\": [") {
            assert!(
                e.message
                    .contains("frame `<module> [{examples.py} {1}] => <module>"),
                "{to}: {e}"
            );
        }
    }
    // A missing key, children that are not an array, a null root.
    let (bytes, _) = damaged("\"time\": 0.339553,", "");
    let e = parse_pyinstrument(&bytes).unwrap_err();
    assert!(e.message.contains("has no `time`") && e.line.is_some(), "{e}");
    let (bytes, line) = damaged(
        "\"children\": [\n          {\n            \"function\": \"<module>\",\n            \"file_path_short\": \"hatchet/graphframe.py\"",
        "\"children\": {\"a\": [\n          {\n            \"function\": \"<module>\",\n            \"file_path_short\": \"hatchet/graphframe.py\"",
    );
    let e = parse_pyinstrument(&bytes).unwrap_err();
    assert!(
        e.message.contains("an array of frame objects") && e.line.unwrap() >= line,
        "{e}"
    );
    let e = parse_pyinstrument(br#"{"start_time": 1.0, "duration": 0.0, "root_frame": null}"#).unwrap_err();
    assert!(e.message.contains("recorded no samples"), "{e}");
    let e = parse_pyinstrument(br#"{"start_time": 1.0, "frame_records": []}"#).unwrap_err();
    assert!(e.message.contains("no `root_frame`"), "{e}");
    let e = parse_pyinstrument(b"[1, 2]").unwrap_err();
    assert!(e.message.contains("expected a pyinstrument JSON profile"), "{e}");
    let e = parse_pyinstrument(b"{\"start_time\": 1,\n \"root_frame\": {\"time\": \xff}}").unwrap_err();
    assert_eq!(e.line, Some(2), "{e}");
    assert!(e.message.contains("not UTF-8"), "{e}");
    // Children with more time than their parent: the negative exclusive time is kept, with a
    // warning; the float noise of a parent equal to its children's sum is not warned about.
    let p = parse_pyinstrument(br#"{"start_time": 1, "root_frame": {"function": "a", "file_path_short": "", "line_no": 0, "time": 1, "children": [
        {"function": "b", "file_path_short": "", "line_no": 0, "time": 0.8},
        {"function": "c", "file_path_short": "", "line_no": 0, "time": 0.3, "children": [
            {"function": "d", "file_path_short": "", "line_no": 0, "time": 0.1},
            {"function": "e", "file_path_short": "", "line_no": 0, "time": 0.2}]}]}}"#)
    .unwrap();
    assert_eq!(value(&p.profile, "a", ValueKind::Exclusive), 1.0 - 0.8 - 0.3);
    assert!(value(&p.profile, "a => c", ValueKind::Exclusive) < 0.0);
    assert_eq!(value(&p.profile, "a => c", ValueKind::Exclusive), 0.3 - 0.1 - 0.2);
    assert_eq!(p.warnings.len(), 1, "{:?}", p.warnings);
    assert!(
        p.warnings[0]
            .message
            .starts_with("1 frame(s) have less time than their children")
            && p.warnings[0].message.contains("at `a`"),
        "{:?}",
        p.warnings
    );
    // Huge but finite times whose children overflow their parent's subtraction.
    let e = parse_pyinstrument(br#"{"start_time": 1, "root_frame": {"function": "a", "file_path_short": "", "line_no": 0, "time": 1e308, "children": [
        {"function": "b", "file_path_short": "", "line_no": 0, "time": 1.7e308},
        {"function": "c", "file_path_short": "", "line_no": 0, "time": 1.7e308}]}}"#)
    .unwrap_err();
    assert!(
        e.message.contains("frame `a`") && e.message.contains("not a finite number"),
        "{e}"
    );
}

#[test]
fn truncated_files_fail_with_the_line_never_panic() {
    let bytes = std::fs::read(input()).unwrap();
    let text = std::str::from_utf8(&bytes).unwrap();
    let cuts = (0..2000).chain((2000..bytes.len() - 1).step_by(61));
    for cut in cuts {
        let e = parse_pyinstrument(&bytes[..cut]).unwrap_err();
        let line = text[..cut].matches('\n').count() + 1;
        let line_found = e.line.unwrap_or_else(|| panic!("cut {cut}: {e}"));
        assert!(line_found <= line, "cut {cut}: {e}");
        if cut > 200 {
            assert!(
                e.message.contains("truncated") || e.message.contains("has no"),
                "cut {cut}: {e}"
            );
        }
    }
}

/// A chain of `depth` frames `f0 => f1 => ...`, each with 1 s of its own time.
fn chain(depth: usize) -> String {
    let mut s = String::from("{\"start_time\": 0, \"root_frame\": ");
    for d in 0..depth {
        s.push_str(&format!(
            "{{\"function\": \"f{d}\", \"file_path_short\": \"m.py\", \"line_no\": {d}, \"time\": {}, \"children\": [",
            depth - d
        ));
    }
    for _ in 0..depth {
        s.push_str("]}");
    }
    s.push('}');
    s
}

#[test]
fn deep_trees_load_whole_or_cut_at_the_limit_with_a_warning() {
    // Deeper than serde_json's nesting limit, within perfscape's: every frame is a node.
    for depth in [70, 1000, MAX_DEPTH - 1] {
        let p = parse_pyinstrument(chain(depth).as_bytes()).unwrap();
        assert!(p.warnings.is_empty(), "{depth}: {:?}", p.warnings);
        let prof = &p.profile;
        let deepest = prof.event_ids().map(|e| prof.event(e).depth).max().unwrap();
        assert_eq!(deepest as usize, depth);
        for d in [0, depth / 2, depth - 1] {
            let name = format!("f{d} [{{m.py}} {{{d}}}]");
            assert_eq!(value(prof, &name, ValueKind::Exclusive), 1.0, "{depth}: {name}");
            assert_eq!(
                value(prof, &name, ValueKind::Inclusive),
                (depth - d) as f64,
                "{depth}: {name}"
            );
        }
    }
    // Deeper than the limit: the frames from depth MAX_DEPTH down become one frame holding
    // their time; the totals stay.
    let depth = 3000;
    let p = parse_pyinstrument(chain(depth).as_bytes()).unwrap();
    let warning = p
        .warnings
        .iter()
        .map(|w| w.message.clone())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(warning.contains(&format!("deeper than {MAX_DEPTH}")), "{warning}");
    let prof = &p.profile;
    let deepest = prof.event_ids().map(|e| prof.event(e).depth).max().unwrap();
    assert_eq!(deepest as usize, MAX_DEPTH);
    assert_eq!(
        value(prof, CUT_FRAME, ValueKind::Exclusive),
        (depth - MAX_DEPTH + 1) as f64
    );
    let total: f64 = prof
        .event_ids()
        .filter(|&e| !prof.event(e).is_callpath())
        .map(|e| {
            prof.value(e, 0usize.into(), ValueKind::Exclusive, MetricId(0))
                .unwrap()
        })
        .sum();
    assert_eq!(total, depth as f64);
    // A damaged frame deep inside is found at its line and column.
    let text = chain(200).replacen("\"time\": 50,", "\"time\": -50,", 1);
    let e = parse_pyinstrument(text.as_bytes()).unwrap_err();
    let column = text.find("\"time\": -50").unwrap() + "\"time\": ".len() + 1;
    assert_eq!(e.line, Some(1));
    assert!(e.message.starts_with(&format!("column {column}: ")), "{e}");
    assert!(
        e.message.contains("f149 [{m.py} {149}] => f150 [{m.py} {150}]`")
            && e.message.contains("frames) ..."),
        "{e}"
    );
}

/// A profile in the form pyinstrument 5's JSON renderer writes (compact, key order,
/// `target_description`, `await_time`, `group_id`, `class_name`), with a frame whose
/// `file_path_short` is empty.
const MODERN: &str = r#"{"start_time": 1700000000.500000,"duration": 0.300000,"sample_count": 3,"target_description": "Program: x.py","cpu_time": 0.290000,"root_frame": {"function": "<module>","file_path_short": "x.py","file_path": "/p/x.py","line_no": 1,"time": 0.300000,"await_time": 0.000000,"is_application_code": true,"children": [{"function": "f","file_path_short": "x.py","file_path": "/p/x.py","line_no": 3,"time": 0.200000,"await_time": 0.000000,"is_application_code": true,"children": [{"function": "[self]","file_path_short": "","file_path": "","line_no": 0,"time": 0.200000,"await_time": 0.000000,"is_application_code": false,"children": []}],"class_name": "A","group_id": "g"}]}}
"#;

#[test]
fn sniffs_renderer_output_not_other_json() {
    assert!(sniff(MODERN.as_bytes()));
    assert!(sniff(b"{\n  \"start_time\": 1.0,\n  \"root_frame\": {}"));
    assert!(!sniff(b"{\"start_time\": 1.0, \"frame_records\": []}"));
    assert!(!sniff(b"{\"traceEvents\": [], \"root_frame\": 1}"));
    assert!(!sniff(b"[{\"start_time\": 1, \"root_frame\": 2}]"));
}

#[test]
fn modern_output_reads_with_its_metadata() {
    let p = parse_pyinstrument(MODERN.as_bytes()).unwrap();
    let prof = &p.profile;
    assert_eq!(
        prof.metadata().get_common("target_description"),
        Some("Program: x.py")
    );
    assert_eq!(prof.metadata().get_common("sample_count"), Some("3"));
    let e = prof
        .event_by_name("<module> [{x.py} {1}] => f [{x.py} {3}] => [self]")
        .unwrap();
    assert!(prof.event(e).source().is_none());
    let f = prof
        .event_by_name("<module> [{x.py} {1}] => f [{x.py} {3}]")
        .unwrap();
    let src = prof.event(f).source().unwrap();
    assert_eq!((src.file, src.line), ("x.py", 3));
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
}

#[test]
fn multibyte_characters_anywhere_never_panic() {
    // Found by the fuzz target: an error position inside a character.
    let mut boundaries: Vec<usize> = MODERN.char_indices().map(|(i, _)| i).collect();
    boundaries.push(MODERN.len());
    for i in boundaries {
        for c in ["\u{feff}", "é", "€", "\u{feff}{\n", "é\n", "€ x"] {
            let text = format!("{}{c}{}", &MODERN[..i], &MODERN[i..]);
            let _ = parse_pyinstrument(text.as_bytes());
            let _ = parse_pyinstrument(&text.as_bytes()[..i + 1]);
        }
    }
}
