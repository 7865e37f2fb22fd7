#![allow(clippy::unwrap_used, clippy::expect_used)]
//! HPCToolkit databases against Hatchet (`tests/fixtures/hatchet/`, made with
//! `make_reference.py`; see its README): the classic cpi database per rank and node, the
//! sparse ping-pong database per node summed over threads (Hatchet's per-thread mode crashes
//! on it, so its summary profile is the reference).

mod common;
use common::fields;
use perfscape_formats::hpctoolkit::experiment::{metric_db_thread, parse_experiment, parse_metric_db};
use perfscape_formats::hpctoolkit::sparse::{parse_meta, parse_profiles};
use perfscape_formats::{OpenOptions, detect, open};
use perfscape_model::{EventId, MetricId, Profile, ThreadId, ValueKind};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

fn corpus(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/corpus/hpctoolkit")
        .join(rel)
}

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hatchet")
        .join(rel)
}

/// A Hatchet table: node frames (type, name, file, line) with parents, and value rows.
struct Table {
    frames: Vec<[String; 4]>,
    parent: Vec<Option<usize>>,
    metrics: Vec<String>,
    /// (node, rank, values) with NaN for empty fields.
    values: Vec<(usize, Option<u32>, Vec<f64>)>,
}

fn read_table(name: &str) -> Table {
    let text = std::fs::read_to_string(fixture(name)).unwrap();
    let mut t = Table {
        frames: Vec::new(),
        parent: Vec::new(),
        metrics: Vec::new(),
        values: Vec::new(),
    };
    for (i, line) in text.lines().enumerate() {
        let f = fields(line);
        if i == 0 {
            t.metrics = f[4..].to_vec();
            continue;
        }
        match f[0].as_str() {
            "node" => {
                assert_eq!(f[1].parse::<usize>().unwrap(), t.frames.len());
                t.parent.push(f[2].parse().ok());
                let parts: Vec<String> = f[3].split('|').map(str::to_string).collect();
                t.frames.push([
                    parts[0].clone(),
                    parts[1].clone(),
                    parts[2].clone(),
                    parts[3].clone(),
                ]);
            }
            "value" => {
                let rank = f[2].parse::<f64>().ok().map(|r| r as u32);
                let vals = f[4..].iter().map(|v| v.parse().unwrap_or(f64::NAN)).collect();
                t.values.push((f[1].parse().unwrap(), rank, vals));
            }
            other => panic!("row kind {other}"),
        }
    }
    t
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()) + 1e-12
}

/// Classic database: Hatchet's frame -> perfscape's frame name. Procedures lose Hatchet's
/// `<call line>:` prefix; statements become `[SAMPLE] <procedure> [{file} {line}]` with the
/// file of the enclosing procedure. (Hatchet gives a statement the file of the procedure it
/// parsed last, a global variable in its reader: for statement i=60 of experiment.xml, a
/// child of an `<unknown file>` procedure that follows a sibling subtree in `interp.c`, it
/// says `interp.c`; the XML says the statement is in its parent's file.)
fn classic_frame(t: &Table, node: usize) -> String {
    let [kind, name, _, line] = &t.frames[node];
    match kind.as_str() {
        "function" => match name.split_once(':') {
            Some((l, rest)) if l.chars().all(|c| c.is_ascii_digit()) => rest.to_string(),
            _ => name.clone(),
        },
        "statement" => {
            let mut p = t.parent[node];
            let mut procedure = String::new();
            let mut file = String::new();
            while let Some(q) = p {
                if t.frames[q][0] == "function" {
                    procedure = classic_frame(t, q);
                    file = t.frames[q][2].clone();
                    break;
                }
                p = t.parent[q];
            }
            format!("[SAMPLE] {procedure} [{{{file}}} {{{line}}}]")
        }
        "loop" => format!("Loop [{{{}}} {{{line}}}]", t.frames[node][2]),
        other => panic!("frame type {other}"),
    }
}

fn path_of(t: &Table, node: usize, frame: &dyn Fn(&Table, usize) -> String) -> String {
    let mut parts = vec![frame(t, node)];
    let mut p = t.parent[node];
    while let Some(q) = p {
        parts.push(frame(t, q));
        p = t.parent[q];
    }
    parts.reverse();
    parts.join(" => ")
}

#[test]
fn classic_cpi_database_equals_hatchet_per_rank() {
    let dir = corpus("hatchet-cpi-database");
    assert_eq!(detect(&dir).unwrap().name, "hpctoolkit");
    let loaded = open(&dir, &OpenOptions::default()).unwrap();
    assert!(loaded.report.bad_files.is_empty());
    let p = &loaded.profile;
    // One metric for Hatchet's two columns `time` (exclusive) and `time (inc)`, named without
    // the unit hpcrun appends (`CPUTIME (usec)`): the unit is the metric's, shown once.
    assert_eq!(p.metrics().len(), 1);
    assert_eq!(p.metrics()[0].name, "CPUTIME");
    assert_eq!(p.metrics()[0].unit, perfscape_model::Unit::Microseconds);
    // experiment.xml: <MetricFormula t="combine" frm="sum($2, $2)"/>.
    assert_eq!(p.metrics()[0].combine, perfscape_model::Combine::Sum);
    let ids: Vec<String> = p.threads().iter().map(|t| t.to_string()).collect();
    assert_eq!(ids, ["0.0.0", "1.0.0", "2.0.0", "3.0.0"]);
    let t = read_table("hpctoolkit-cpi.csv");
    assert_eq!(t.metrics, ["time", "time (inc)"]);
    // Hatchet's nodes with the same perfscape callpath (unresolved procedures called from one
    // place) are one perfscape event: sum them per rank.
    let mut sums: HashMap<(String, u32), [f64; 2]> = HashMap::new();
    for (node, rank, vals) in &t.values {
        let key = path_of(&t, *node, &classic_frame);
        let s = sums.entry((key, rank.unwrap())).or_default();
        s[0] += vals[0];
        s[1] += vals[1];
    }
    let m = MetricId(0);
    let mut compared = 0;
    for ((key, rank), [excl, incl]) in &sums {
        let e = p.event_by_name(key).unwrap_or_else(|| panic!("no event `{key}`"));
        let thread = p.thread_index(ThreadId::new(*rank, 0, 0)).unwrap();
        match (
            p.value(e, thread, ValueKind::Exclusive, m),
            p.value(e, thread, ValueKind::Inclusive, m),
        ) {
            (Some(x), Some(i)) => {
                assert!(
                    close(x, *excl),
                    "{key} rank {rank}: exclusive {x} vs Hatchet {excl}"
                );
                assert!(
                    close(i, *incl),
                    "{key} rank {rank}: inclusive {i} vs Hatchet {incl}"
                );
                compared += 1;
            }
            _ => assert!(
                *excl == 0.0 && *incl == 0.0,
                "{key} rank {rank}: absent but Hatchet has {excl}/{incl}"
            ),
        }
    }
    assert!(compared >= 4 * 12, "{compared}");
    // Events no rank measured are still listed (call tree complete), without values.
    let init = p.event_by_name("<program root> => main => MPI_Init").unwrap();
    assert!(p.interval(init).is_empty());
    // Totals: the root's inclusive time = the sum of all exclusive time, per rank.
    let root = p.event_by_name("<program root>").unwrap();
    for (ti, _) in p.threads().iter().enumerate() {
        let ti = perfscape_model::ThreadIndex::from(ti);
        let total: f64 = p
            .event_ids()
            .filter(|&e| !p.event(e).is_callpath())
            .filter_map(|e| p.value(e, ti, ValueKind::Exclusive, m))
            .sum();
        assert!(close(total, p.value(root, ti, ValueKind::Inclusive, m).unwrap()));
    }
}

/// Hatchet's name truncation in `hpctoolkit_reader_latest._parse_function`.
fn hatchet_function_name(name: &str) -> String {
    let mut name = name.to_string();
    let bytes = name.as_bytes();
    let is_mpi = name.starts_with("MPI_") || name.starts_with("PMPI_");
    if is_mpi {
        let start = if name.starts_with('P') { 5 } else { 4 };
        let end = start
            + bytes[start..]
                .iter()
                .take_while(|c| c.is_ascii_alphabetic() || **c == b'_')
                .count();
        if end > start {
            name.truncate(end);
        }
    }
    for item in [" [", ".", "@", "(", "<"] {
        if let Some(i) = name.find(item)
            && !name.starts_with(item)
        {
            name.truncate(i);
        }
    }
    name
}

/// Sparse database: perfscape's frame -> Hatchet's node name.
fn hatchet_name(frame: &str) -> String {
    if frame == "main thread" {
        return "entry".into();
    }
    let loc = |f: &str| {
        let start = f.rfind("[{").unwrap();
        let inner = &f[start + 2..f.len() - 2];
        let (file, line) = inner.split_once("} {").unwrap();
        format!("{file}:{line}")
    };
    if frame.starts_with("[SAMPLE] ") {
        format!("line {}", loc(frame))
    } else if frame.starts_with("Loop [{") {
        format!("loop {}", loc(frame))
    } else {
        format!("function: {}", hatchet_function_name(frame))
    }
}

#[test]
fn sparse_ping_pong_database_equals_hatchet_summary() {
    let dir = corpus("pipit-ping-pong-hpctoolkit-db");
    assert_eq!(detect(&dir).unwrap().name, "hpctoolkit");
    assert_eq!(detect(&dir.join("meta.db")).unwrap().name, "hpctoolkit");
    let loaded = open(&dir, &OpenOptions::default()).unwrap();
    let p = &loaded.profile;
    let m = MetricId(0);
    // `CPUTIME (sec)` in meta.db: the metric CPUTIME in seconds (one metric for Hatchet's
    // `time` and `time (inc)`), combined across threads by sum (the `$$` execution summary's
    // combine code 0, as metrics/default.yaml says: `combine: sum`).
    assert_eq!(p.metrics().len(), 1);
    assert_eq!(p.metrics()[0].name, "CPUTIME");
    assert_eq!(p.metrics()[0].unit, perfscape_model::Unit::Seconds);
    assert_eq!(p.metrics()[0].combine, perfscape_model::Combine::Sum);
    assert_eq!(p.threads().len(), 2);
    // Every perfscape event, keyed by Hatchet's path of names, summed over threads:
    // inclusive directly, Hatchet's exclusive (`function` scope) as the event's exclusive
    // value plus that of its loops and lines (not of the functions they call).
    let children = |e: EventId| p.call_tree().children(e).to_vec();
    fn fscope(p: &Profile, e: EventId, m: MetricId, kids: &dyn Fn(EventId) -> Vec<EventId>) -> f64 {
        let own: f64 = p.interval(e).exclusive(m).iter().sum();
        own + kids(e)
            .into_iter()
            .filter(|&c| {
                let leaf = p.event(c).leaf();
                leaf.starts_with("[SAMPLE] ") || leaf.starts_with("Loop [{")
            })
            .map(|c| fscope(p, c, m, kids))
            .sum::<f64>()
    }
    let mut mine: HashMap<String, [f64; 2]> = HashMap::new();
    for e in p.event_ids() {
        let ev = p.event(e);
        let name = p.event_name(e);
        if !ev.is_callpath() && name != "main thread" {
            continue; // flat routine events; the root `main thread` is the tree's root node
        }
        let key: Vec<String> = name.split(" => ").map(hatchet_name).collect();
        let s = mine.entry(key.join(" ;; ")).or_default();
        s[0] += fscope(p, e, m, &children);
        s[1] += p.interval(e).inclusive(m).iter().sum::<f64>();
    }
    let t = read_table("hpctoolkit-ping-pong-summary.csv");
    let hatchet_path = |node: usize| {
        let mut parts = vec![t.frames[node][1].clone()];
        let mut q = t.parent[node];
        while let Some(x) = q {
            parts.push(t.frames[x][1].clone());
            q = t.parent[x];
        }
        parts.reverse();
        parts.join(" ;; ")
    };
    let mut theirs: HashMap<String, [f64; 2]> = HashMap::new();
    for (node, _, vals) in &t.values {
        let s = theirs.entry(hatchet_path(*node)).or_default();
        let z = |v: f64| if v.is_nan() { 0.0 } else { v };
        s[0] += z(vals[0]);
        s[1] += z(vals[1]);
    }
    assert_eq!(mine.len(), theirs.len(), "same number of distinct paths");
    for (key, [x, i]) in &theirs {
        let [mx, mi] = mine
            .get(key)
            .unwrap_or_else(|| panic!("no perfscape event for Hatchet path {key}"));
        assert!(close(*mi, *i), "{key}: inclusive {mi} vs Hatchet {i}");
        assert!(
            close(*mx, *x),
            "{key}: exclusive (function scope) {mx} vs Hatchet {x}"
        );
    }
    assert!(theirs.len() > 100);
}

#[test]
fn malformed_databases_never_panic_and_say_where() {
    // experiment.xml cut anywhere: an error with a line, never a panic.
    let xml = std::fs::read_to_string(corpus("hatchet-cpi-database/experiment.xml")).unwrap();
    let full = parse_experiment(&xml).unwrap();
    assert_eq!(full.scopes.len(), 34);
    for cut in (0..xml.len()).step_by(97) {
        if !xml.is_char_boundary(cut) {
            continue;
        }
        if let Err((line, msg)) = parse_experiment(&xml[..cut]) {
            assert!(line >= 1 && !msg.is_empty());
        }
    }
    let (line, msg) = parse_experiment(&xml.replacen("<PF i=\"4\"", "<PF i=\"four\"", 1)).unwrap_err();
    assert!(msg.contains("node id") && line > 290, "{line}: {msg}");
    // metric-db: header and size checks.
    let db = std::fs::read(corpus(
        "hatchet-cpi-database/1.cpi-000000-000-a8c00270-160443-0.metric-db",
    ))
    .unwrap();
    assert_eq!(parse_metric_db(&db).unwrap().nodes, 60);
    for cut in 0..db.len() {
        assert!(parse_metric_db(&db[..cut]).is_err());
    }
    assert_eq!(
        metric_db_thread("1.cpi-000002-000-a8c00270-160445-0.metric-db"),
        Some(ThreadId::new(2, 0, 0))
    );
    // meta.db / profile.db cut or corrupted: errors, never panics.
    let meta = std::fs::read(corpus("pipit-ping-pong-hpctoolkit-db/meta.db")).unwrap();
    let prof = std::fs::read(corpus("pipit-ping-pong-hpctoolkit-db/profile.db")).unwrap();
    assert!(parse_meta(&meta).unwrap().contexts.len() > 100);
    assert_eq!(parse_profiles(&prof).unwrap().len(), 2);
    for cut in (0..meta.len()).step_by(13) {
        let _ = parse_meta(&meta[..cut]);
    }
    for cut in (0..prof.len()).step_by(13) {
        let _ = parse_profiles(&prof[..cut]);
    }
    let mut x: u64 = 0x1234_5678_9abc_def1;
    for _ in 0..1500 {
        let (mut a, mut b) = (meta.clone(), prof.clone());
        for _ in 0..3 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let i = (x % a.len() as u64) as usize;
            a[i] = (x >> 20) as u8;
            let j = (x % b.len() as u64) as usize;
            b[j] = (x >> 28) as u8;
        }
        if let (Ok(m), Ok(ps)) = (parse_meta(&a), parse_profiles(&b)) {
            let _ = perfscape_formats::hpctoolkit::sparse::build_sparse(&m, &ps);
        }
    }
    let e = parse_meta(b"HPCTOOLKITprof\x04\x00").unwrap_err();
    assert!(e.message.contains("expected `meta`"), "{e}");
    let e = parse_profiles(&prof[..40]).unwrap_err();
    assert!(e.offset.is_some() && e.message.contains("profile.db"), "{e}");
}
