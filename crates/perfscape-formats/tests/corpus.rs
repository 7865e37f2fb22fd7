//! Every input of `../shared/corpus` loads, or fails with a clear reason: this walks the whole
//! corpus (`<format>/<dataset>/...`, skipping `oracle/` directories and documentation) and
//! loads every dataset directory that is detected as a run, else every file in it. Formats
//! perfscape reads must load (a file loaded in part is reported as such); the others must be
//! refused with an error that names the file and says what it is.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::corpus;
use perfscape_formats::{OpenOptions, detect, open};
use std::path::{Path, PathBuf};

/// Corpus format directories perfscape reads (issue: every listed format loads).
const READ: &[&str] = &[
    "tau",
    "tau-real",
    "tau-snapshot",
    "tau-xml",
    "tau-ppk",
    "cube",
    "hpctoolkit",
    "caliper",
    "pyinstrument",
    "pprof",
    "chrome-trace",
    "perf-data",
    "perf-script",
    "otf2",
];

fn is_doc(p: &Path) -> bool {
    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
    // Documentation and reference outputs beside the data (TAU's pprof.txt, the program's
    // stdout.txt, pycubexr's csvs, oracle/), not inputs.
    name.ends_with(".md")
        || name.ends_with(".csv")
        || name == "pprof.txt"
        || name == "stdout.txt"
        || name == "oracle"
}

/// The inputs of a dataset: the directory itself when it is a run, else its files (and runs)
/// below it.
fn inputs(dir: &Path, out: &mut Vec<PathBuf>) {
    if dir.is_dir() && detect(dir).is_ok() {
        out.push(dir.to_path_buf());
        return;
    }
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if is_doc(&p) {
            continue;
        }
        if p.is_dir() {
            inputs(&p, out);
        } else {
            out.push(p);
        }
    }
}

#[test]
fn every_corpus_input_loads_or_is_refused_with_a_reason() {
    let mut formats: Vec<PathBuf> = std::fs::read_dir(corpus())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir() && !is_doc(p))
        .collect();
    formats.sort();
    let (mut loaded, mut refused, mut failed) = (0, Vec::new(), Vec::new());
    for fmt in &formats {
        let fname = fmt.file_name().unwrap().to_str().unwrap().to_string();
        let mut datasets: Vec<PathBuf> = std::fs::read_dir(fmt)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| !is_doc(p) && p.is_dir() && !p.ends_with("src"))
            .collect();
        datasets.sort();
        for ds in datasets {
            let mut list = Vec::new();
            inputs(&ds, &mut list);
            let mut loaded_here = 0;
            for input in list {
                let d = detect(&input);
                match open(&input, &OpenOptions::default()) {
                    Ok(_) => {
                        loaded += 1;
                        loaded_here += 1;
                    }
                    Err(e) => {
                        let msg = e.to_string();
                        assert!(
                            msg.contains(&*input.file_name().unwrap().to_string_lossy()),
                            "{}: the error names the input: {msg}",
                            input.display()
                        );
                        // Refused for what it is (not a format perfscape reads, or a side file of
                        // a run such as scorep.cfg or a source file): fine, with the reason. A
                        // file detected as a format perfscape reads must load.
                        match d {
                            Err(_) => refused.push((input, msg)),
                            Ok(_) => failed.push((input, msg)),
                        }
                    }
                }
            }
            // Every dataset of a format perfscape reads gives at least one profile.
            assert!(
                !READ.contains(&fname.as_str()) || loaded_here > 0,
                "{}: nothing loaded",
                ds.display()
            );
        }
    }
    for (p, m) in &refused {
        println!("refused {}: {m}", p.display());
    }
    assert!(
        failed.is_empty(),
        "inputs of formats perfscape reads failed: {failed:#?}"
    );
    // The formats not read yet (Projections, cProfile, gprof DOT, TAU traces and pprof
    // text dumps, timemory) are refused, each with a reason.
    for kind in ["projections", "cprofile", "gprof-dot", "timemory"] {
        assert!(
            refused
                .iter()
                .any(|(p, _)| p.to_string_lossy().contains(&format!("/{kind}/"))),
            "{kind} is refused"
        );
    }
    // Messages say what perfscape reads.
    assert!(
        refused.iter().all(|(_, m)| m.contains("perfscape reads")),
        "{refused:#?}"
    );
    // 112 inputs of the formats read (runs and files; the ParaProf dumps under `oracle/` are
    // not walked here).
    assert_eq!(loaded, 112, "inputs loaded");
}

/// The registry's table is true: every format's example is detected as that format (or, for a
/// run directory that also holds files of a format tried before it, as that one: the np4
/// dump run holds the final profiles too), and opens with the format named, giving what the
/// table says it gives.
#[test]
fn every_registered_format_detects_and_opens_its_example() {
    let formats = perfscape_formats::registry::FORMATS;
    let position = |name: &str| formats.iter().position(|f| f.name == name).unwrap();
    for f in formats {
        let input = corpus().join(f.example);
        let detected = detect(&input).unwrap_or_else(|e| panic!("{}: {e}", f.name));
        assert!(
            detected.name == f.name || (input.is_dir() && position(detected.name) < position(f.name)),
            "{}: detected as {}",
            input.display(),
            detected.name
        );
        let named = OpenOptions {
            format: Some(f),
            ..OpenOptions::default()
        };
        let o = open(&input, &named).unwrap_or_else(|e| panic!("{}: {e}", f.name));
        assert_eq!(o.report.format, f.name);
        assert!(!o.profile.threads().is_empty(), "{}", f.name);
        assert_eq!(o.series.is_some(), f.gives.series, "{}", f.name);
        assert_eq!(o.trace.is_some(), f.gives.trace, "{}", f.name);
    }
}
