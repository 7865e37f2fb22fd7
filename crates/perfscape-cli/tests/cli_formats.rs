//! The `perfscape` binary on the pprof, Chrome trace and perf inputs: detection, machine
//! output checked against the readers' reference sums, `--input-format`, and the exit status
//! of a truncated file (loaded in part: 3).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::corpus;
use std::process::Output;

/// Runs the binary without its profile cache (each run reads the files, so runs with and
/// without `--input-format` are compared on what the readers produce); other commands get a
/// temporary cache directory of this call alone, never the user's.
fn perfscape(args: &[&str]) -> Output {
    match args.split_first() {
        Some((&cmd, rest)) if matches!(cmd, "summary" | "top" | "stats") => {
            common::perfscape(&[&[cmd, "--no-cache"], rest].concat())
        }
        _ => common::perfscape(args),
    }
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

#[test]
fn every_new_format_is_detected_and_summarized() {
    let c = corpus();
    for (path, format) in [
        ("pprof/google-pprof-testdata/sample.cpu.pb.gz", "pprof"),
        ("tau-real/mpi-stencil-np4-trace/trace.chrome.json", "chrome"),
        (
            "chrome-trace/hta-pytorch-kineto-2rank/sampled_rank-0.json.gz",
            "chrome",
        ),
        (
            "perf-script/speedscope-linux-perf/forks.linux-perf.txt",
            "perf-script",
        ),
        (
            "perf-data/perf-data-converter-quipper/perf.data.callgraph-3.8",
            "perf-data",
        ),
    ] {
        let f = c.join(path);
        let o = perfscape(&["summary", f.to_str().unwrap(), "--format", "json"]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{path}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let doc = json(&o);
        assert_eq!(doc["format"], format, "{path}");
        assert!(doc["threads"].as_u64().unwrap() >= 1, "{path}");
        // Forcing the format gives the same summary.
        let o2 = perfscape(&[
            "summary",
            f.to_str().unwrap(),
            "--format",
            "json",
            "--input-format",
            format,
        ]);
        assert_eq!(json(&o2), doc, "{path}");
    }
}

#[test]
fn tau_trace_top_equals_trace2profile() {
    // `top` on the Chrome conversion of TAU's trace and on TAU's trace2profile profiles of the
    // same trace give the same exclusive sums (the reader tests compare every cell).
    let d = corpus().join("tau-real/mpi-stencil-np4-trace");
    let a = perfscape(&[
        "top",
        d.join("trace.chrome.json").to_str().unwrap(),
        "--format",
        "json",
        "-n",
        "5",
    ]);
    let b = perfscape(&[
        "top",
        d.join("oracle/trace2profile").to_str().unwrap(),
        "--format",
        "json",
        "-n",
        "5",
    ]);
    assert_eq!(a.status.code(), Some(0));
    let (a, b) = (json(&a), json(&b));
    let rows = |v: &serde_json::Value| -> Vec<(String, f64)> {
        v.as_array()
            .or_else(|| v["events"].as_array())
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["event"].as_str().unwrap().to_string(),
                    r["sum"].as_f64().unwrap(),
                )
            })
            .collect()
    };
    assert_eq!(rows(&a), rows(&b));
}

#[test]
fn a_truncated_file_exits_with_3_and_says_where() {
    let f = corpus().join("tau-real/mpi-stencil-np4-trace/trace.chrome.json");
    let text = std::fs::read(&f).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("cut.json");
    std::fs::write(&cut, &text[..text.len() / 3]).unwrap();
    let o = perfscape(&["summary", cut.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(3));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("loaded only in part"), "{err}");
    assert!(err.contains("cut.json:"), "{err}");
    let unknown = perfscape(&["summary", f.to_str().unwrap(), "--input-format", "nope"]);
    assert_eq!(unknown.status.code(), Some(2), "a usage error");
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("perf-data"));
}

/// README's "Supported input" table names every format of the registry (the recipe for a new
/// format says to add its row).
#[test]
fn the_readme_lists_every_registered_format() {
    let readme =
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"))
            .unwrap();
    let table = &readme[readme.find("## Supported input").unwrap()..];
    for f in perfscape_formats::registry::FORMATS {
        assert!(
            table.contains(&format!("| `{}` |", f.name)),
            "README lacks a row for `{}`",
            f.name
        );
    }
}
