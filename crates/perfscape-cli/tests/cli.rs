//! The `perfscape` binary as a user runs it: every command on every real run, machine
//! output checked against ParaProf's numbers, exit statuses, bad input.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{corpus, perfscape, stderr, stdout};
use std::fs;
use std::path::{Path, PathBuf};

fn profile_runs() -> Vec<PathBuf> {
    let mut runs = Vec::new();
    for base in ["tau", "tau-real"] {
        for e in fs::read_dir(corpus().join(base)).unwrap() {
            let p = e.unwrap().path();
            let has_profiles = |d: &Path| {
                fs::read_dir(d).unwrap().any(|f| {
                    let n = f.unwrap().file_name().into_string().unwrap();
                    n.starts_with("profile.") || n.starts_with("MULTI__")
                })
            };
            if p.is_dir() && has_profiles(&p) {
                runs.push(p);
            } else if p.is_dir() {
                for s in fs::read_dir(&p).unwrap() {
                    let s = s.unwrap().path();
                    if s.is_dir() && s.file_name().unwrap().to_str().unwrap().starts_with("np") {
                        runs.push(s);
                    }
                }
            }
        }
    }
    runs.sort();
    runs
}

#[test]
fn every_command_runs_on_every_real_run() {
    let runs = profile_runs();
    assert!(runs.len() >= 27);
    for run in &runs {
        let r = run.to_str().unwrap();
        for args in [
            vec!["summary", r],
            vec!["top", r],
            vec!["stats", r],
            vec!["summary", r, "--format", "json"],
            vec!["top", r, "--format", "csv"],
        ] {
            let o = perfscape(&args);
            assert!(o.status.success(), "{args:?}: {}", stderr(&o));
            assert!(!o.stdout.is_empty());
        }
    }
}

#[test]
fn summary_names_what_matters() {
    let run = corpus().join("tau-real/mpi-stencil-np64-callpath-commmatrix");
    let o = perfscape(&["summary", run.to_str().unwrap()]);
    assert!(o.status.success());
    let s = stdout(&o);
    for needle in [
        "Threads: 64",
        "Metrics: TIME (µs)",
        "18 flat, 17 callpaths",
        "Hot spots",
        "MPI_Init()",
        "Most imbalanced",
        "Warnings: none",
    ] {
        assert!(s.contains(needle), "missing `{needle}` in:\n{s}");
    }
    let j: serde_json::Value =
        serde_json::from_slice(&perfscape(&["summary", run.to_str().unwrap(), "-f", "json"]).stdout).unwrap();
    assert_eq!(j["threads"], 64);
    assert_eq!(j["hot_spots"][0]["event"], "MPI_Init()");
    // The run total is the sum of the threads' `.TAU application` inclusive times.
    let total = j["run_total"].as_f64().unwrap();
    let derived = fs::read_to_string(run.join("oracle/paraprof-derived/profile.Total")).unwrap();
    let line = derived
        .lines()
        .find(|l| l.starts_with("\".TAU application\" "))
        .unwrap();
    let incl: f64 = line.split_whitespace().nth(5).unwrap().parse().unwrap();
    assert_eq!(total, incl);
}

/// The stats CSV carries ParaProf's numbers in the columns the issue fixed.
#[test]
fn stats_csv_columns_and_values() {
    let run = corpus().join("tau-real/mpi-stencil-np4-callpath-commmatrix");
    let o = perfscape(&["stats", run.to_str().unwrap(), "--format", "csv"]);
    assert!(o.status.success());
    let text = stdout(&o);
    let header = text.lines().next().unwrap();
    assert!(header.starts_with(
        "metric,event,threads,calls_total,exclusive_total,inclusive_total,exclusive_mean,exclusive_mean_all,exclusive_min,exclusive_min_thread,exclusive_max,exclusive_max_thread,exclusive_stddev,inclusive_mean,inclusive_min,inclusive_max,inclusive_stddev"
    ));
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let rows: Vec<csv::StringRecord> = r.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 35, "one row per (metric, event)");
    let derived = |stat: &str, name: &str| -> (f64, f64) {
        let t = fs::read_to_string(run.join(format!("oracle/paraprof-derived/profile.{stat}"))).unwrap();
        let l = t
            .lines()
            .find(|l| l.starts_with(&format!("\"{name}\" ")))
            .unwrap();
        let f: Vec<&str> = l
            .rsplit_once(" GROUP=")
            .unwrap()
            .0
            .split_whitespace()
            .rev()
            .take(4)
            .collect();
        (f[2].parse().unwrap(), f[1].parse().unwrap()) // (excl, incl)
    };
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(b.abs());
    let mut checked = 0;
    for row in &rows {
        let name = &row[1];
        let v = |i: usize| row[i].parse::<f64>().unwrap();
        assert!(close(v(4), derived("Total", name).0), "{name}");
        assert!(close(v(5), derived("Total", name).1), "{name}");
        assert!(close(v(6), derived("Mean", name).0), "{name}");
        assert!(close(v(7), derived("Mean,AllThreads", name).0), "{name}");
        assert!(close(v(8), derived("Min", name).0), "{name}");
        assert!(close(v(10), derived("Max", name).0), "{name}");
        assert!(close(v(14), derived("Min", name).1), "{name}");
        assert!(close(v(15), derived("Max", name).1), "{name}");
        assert!(
            (v(12) - derived("StandardDeviation", name).0).abs() <= 1e-6 * v(6).abs().max(1.0),
            "{name}"
        );
        checked += 1;
    }
    assert_eq!(checked, 35);
    // Threads are written N.C.T; `smooth` runs on 3 of the 4 ranks.
    let smooth = rows
        .iter()
        .find(|r| &r[1] == "smooth void (double *, int, int)")
        .unwrap();
    assert_eq!(&smooth[2], "3");
    assert!(smooth[9].split('.').count() == 3 && smooth[11].split('.').count() == 3);
}

#[test]
fn top_ranks_by_exclusive_or_inclusive() {
    let run = corpus().join("tau-real/mpi-stencil-np4-callpath-commmatrix");
    let r = run.to_str().unwrap();
    let j: serde_json::Value =
        serde_json::from_slice(&perfscape(&["top", r, "-n", "3", "-f", "json"]).stdout).unwrap();
    let names: Vec<&str> = j["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["MPI_Allreduce()", "MPI_Init()", "MPI_Waitall()"]);
    let j: serde_json::Value =
        serde_json::from_slice(&perfscape(&["top", r, "-n", "1", "--by", "inclusive", "-f", "json"]).stdout)
            .unwrap();
    assert_eq!(j["events"][0]["event"], ".TAU application");
    assert_eq!(j["events"][0]["percent"], 100.0);
    // With callpaths, paths are ranked too.
    let o = perfscape(&["top", r, "-n", "0", "--callpaths", "-f", "csv"]);
    assert_eq!(stdout(&o).lines().count(), 1 + 35);
}

#[test]
fn stats_of_one_event_lists_every_thread_sorted_with_a_histogram() {
    let run = corpus().join("tau-real/mpi-stencil-np8-multimetric");
    let r = run.to_str().unwrap();
    let o = perfscape(&["stats", r, "MPI_Allreduce()", "--format", "csv"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let lines: Vec<String> = stdout(&o).lines().map(str::to_string).collect();
    assert_eq!(lines[0], "rank,thread,value");
    assert_eq!(lines[1], "1,7.0.0,1009262.0");
    assert_eq!(lines[8], "8,4.0.0,608737.0");
    let j: serde_json::Value = serde_json::from_slice(
        &perfscape(&["stats", r, "MPI_Allreduce", "--bins", "4", "-f", "json"]).stdout,
    )
    .unwrap();
    assert_eq!(
        j["histogram"]["counts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_u64().unwrap())
            .sum::<u64>(),
        8
    );
    assert_eq!(j["statistics"][0]["exclusive"]["max_thread"], "7.0.0");
    let t = stdout(&perfscape(&["stats", r, "MPI_Allreduce()"]));
    assert!(
        t.contains("Histogram of exclusive TIME") && t.contains("7.0.0"),
        "{t}"
    );
}

#[test]
fn ambiguous_or_unknown_event_and_metric_are_clear_errors() {
    let r = corpus().join("tau-real/mpi-stencil-np4-profile");
    let r = r.to_str().unwrap();
    let o = perfscape(&["stats", r, "MPI_"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("matches") && stderr(&o).contains("MPI_Init()"),
        "{}",
        stderr(&o)
    );
    let o = perfscape(&["top", r, "--metric", "PAPI_FP_OPS"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("no metric `PAPI_FP_OPS`") && stderr(&o).contains("TIME"));
}

#[test]
fn partial_loads_exit_3_and_name_the_bad_files() {
    let dir = tempfile::tempdir().unwrap();
    let src = corpus().join("tau-real/mpi-stencil-np4-profile");
    for t in 0..4 {
        fs::copy(
            src.join(format!("profile.{t}.0.0")),
            dir.path().join(format!("profile.{t}.0.0")),
        )
        .unwrap();
    }
    let f = dir.path().join("profile.2.0.0");
    let text = fs::read_to_string(&f).unwrap();
    fs::write(&f, &text[..text.len() / 2]).unwrap();
    let o = perfscape(&["summary", dir.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(stdout(&o).contains("Threads: 3"));
    assert!(stdout(&o).contains("1 file(s) not loaded"));
    let e = stderr(&o);
    assert!(
        e.contains("profile.2.0.0:") && e.contains("could not be loaded"),
        "{e}"
    );
}

#[test]
fn nothing_to_load_exits_1_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let o = perfscape(&["summary", dir.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("empty") && stderr(&o).contains("perfscape reads"),
        "{}",
        stderr(&o)
    );
    let o = perfscape(&["summary", "/no/such/run"]);
    assert_eq!(o.status.code(), Some(1));
    // The path and the reason, each once.
    let e = stderr(&o);
    assert_eq!(e.matches("/no/such/run").count(), 1, "{e}");
    assert_eq!(e.matches("No such file or directory").count(), 1, "{e}");
    assert!(e.starts_with("perfscape: cannot load /no/such/run: "), "{e}");
    let o = perfscape(&[
        "summary",
        corpus()
            .join("tau-real/mpi-stencil-np4-profile")
            .to_str()
            .unwrap(),
        "--input-format",
        "nosuchformat",
    ]);
    // A usage error (2), listing the formats of the registry.
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("nosuchformat")
            && stderr(&o).contains("tau-snapshot")
            && stderr(&o).contains("perf-data"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn output_is_identical_with_one_or_many_parse_threads() {
    let r = corpus().join("tau-real/mpi-stencil-np128-callpath-multimetric");
    let r = r.to_str().unwrap();
    let a = perfscape(&["stats", r, "-f", "csv", "--jobs", "1", "--no-cache"]);
    let b = perfscape(&["stats", r, "-f", "csv", "--jobs", "3", "--no-cache"]);
    assert!(a.status.success() && b.status.success());
    assert_eq!(a.stdout, b.stdout);
}

#[test]
fn help_lists_the_commands() {
    let o = perfscape(&["--help"]);
    let s = stdout(&o);
    for c in ["summary", "top", "stats", "Exit status"] {
        assert!(s.contains(c), "{s}");
    }
}

#[test]
fn clock_hz_shows_cycles_as_time() {
    // A one-thread TAU profile whose metric is a cycle counter: 3e9 cycles at 1.5 GHz = 2 s.
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("profile.0.0.0"),
        "2 templated_functions_MULTI_PAPI_TOT_CYC\n\
         # Name Calls Subrs Excl Incl ProfileCalls # <metadata><attribute><name>Metric Name</name><value>PAPI_TOT_CYC</value></attribute><attribute><name>CPU MHz</name><value>1500.000</value></attribute></metadata>\n\
         \".TAU application\" 1 1 1e9 3e9 0 GROUP=\"TAU_DEFAULT\"\n\
         \"work\" 1 0 2e9 2e9 0 GROUP=\"TAU_USER\"\n\
         0 aggregates\n",
    )
    .unwrap();
    let run = dir.path().to_str().unwrap();
    let plain = perfscape(&["top", run, "-f", "csv"]);
    assert!(plain.status.success(), "{}", stderr(&plain));
    assert!(
        stdout(&plain).contains("work,,TAU_USER,2000000000"),
        "{}",
        stdout(&plain)
    );
    for spec in ["1.5e9", "metadata"] {
        let o = perfscape(&["top", run, "-f", "csv", "--clock-hz", spec]);
        assert!(o.status.success(), "{}", stderr(&o));
        // 2e9 cycles / 1.5e9 Hz = 1.333... s, shown in nanoseconds.
        let line = stdout(&o)
            .lines()
            .find(|l| l.contains(",work,"))
            .unwrap()
            .to_string();
        let sum: f64 = line.split(',').nth(4).unwrap().parse().unwrap();
        assert!((sum - 2e9 / 1.5e9 * 1e9).abs() < 1e-3, "{line}");
        let summary = perfscape(&["summary", run, "--clock-hz", spec]);
        assert!(
            stdout(&summary).contains("PAPI_TOT_CYC (ns)"),
            "{}",
            stdout(&summary)
        );
    }
    let o = perfscape(&["top", run, "--clock-hz", "fast"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("not a frequency"), "{}", stderr(&o));
}

#[test]
fn other_tools_formats_are_detected_and_summarized() {
    let c = corpus();
    for (rel, format, expect) in [
        ("cube/pycubexr-time-p4/profile.cubex", "cube", "Threads: 4"),
        (
            "cube/pycubexr-bt-mz-p2/cube4.8_with_checksum_bug.cubex",
            "cube",
            "Threads: 8",
        ),
        (
            "tau-ppk/tau224-mpas-papi-multimetric/mpas.ppk",
            "ppk",
            "Threads: 128",
        ),
        ("hpctoolkit/hatchet-cpi-database", "hpctoolkit", "Threads: 4"),
        (
            "hpctoolkit/pipit-ping-pong-hpctoolkit-db",
            "hpctoolkit",
            "Threads: 2",
        ),
        (
            "caliper/thicket-mpi-scaling/64_cores.cali",
            "caliper",
            "Threads: 1",
        ),
        (
            "caliper/hatchet-lulesh/lulesh-annotation-profile.json",
            "caliper",
            "Threads: 8",
        ),
    ] {
        let path = c.join(rel);
        let p = path.to_str().unwrap();
        let o = perfscape(&["summary", p]);
        assert!(o.status.success(), "{rel}: {}", stderr(&o));
        assert!(
            stdout(&o).contains(&format!("of {format}")),
            "{rel}: {}",
            stdout(&o)
        );
        assert!(stdout(&o).contains(expect), "{rel}: {}", stdout(&o));
        let forced = perfscape(&["top", p, "--input-format", format, "-f", "csv"]);
        assert!(forced.status.success(), "{rel}: {}", stderr(&forced));
    }
    // The default metric of a CUBE file is its time, not the visits listed first.
    let o = perfscape(&[
        "summary",
        c.join("cube/pycubexr-time-p4/profile.cubex").to_str().unwrap(),
    ]);
    assert!(
        stdout(&o).contains("Hot spots (exclusive time)"),
        "{}",
        stdout(&o)
    );
}

/// A CUBE minimum metric in the terminal: its total is the minimum over threads (the column
/// says `Min`), there is no percentage of the run, and the JSON says how it combines.
#[test]
fn a_minimum_metric_is_ranked_by_its_minimum_without_percentages() {
    let kripke = corpus().join("cube/pycubexr-kripke-p8/profile.cubex");
    let p = kripke.to_str().unwrap();
    let o = perfscape(&["top", p, "--metric", "min_time", "-n", "3"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let header = out.lines().nth(1).unwrap();
    assert!(header.contains(" Min ") && !header.contains("Sum"), "{out}");
    let first = out.lines().nth(3).unwrap();
    // PARALLEL: the smallest of the 8 locations' minimum times (pycubexr: 18.5713... s), no %.
    assert!(
        first.contains("PARALLEL") && first.contains("18.57 s") && first.contains(" – "),
        "{out}"
    );
    assert!(out.contains("min_time does not add up"), "{out}");
    let j: serde_json::Value =
        serde_json::from_slice(&perfscape(&["top", p, "--metric", "min_time", "-f", "json"]).stdout).unwrap();
    assert_eq!(j["combine"], "min");
    assert!(j["events"][0]["percent"].is_null());
    let s = stdout(&perfscape(&["summary", p]));
    assert!(
        s.contains("min_time (s, min)") && s.contains("Hot spots (exclusive time)"),
        "{s}"
    );
}

/// HPCToolkit's `CPUTIME (usec)` / `CPUTIME (sec)`: the unit is shown once.
#[test]
fn hpctoolkit_metric_units_are_shown_once() {
    for (db, want) in [
        ("hatchet-cpi-database", "Metrics: CPUTIME (µs)\n"),
        ("pipit-ping-pong-hpctoolkit-db", "Metrics: CPUTIME (s)\n"),
    ] {
        let o = perfscape(&["summary", corpus().join("hpctoolkit").join(db).to_str().unwrap()]);
        let out = stdout(&o);
        assert!(out.contains(want) && !out.contains("sec)"), "{db}: {out}");
    }
}

/// Calls and inclusive value of event `event` in block `block` of a snapshot file, read with
/// plain string handling (independent of perfscape's XML reader).
fn raw_snapshot_cell(file: &Path, block: &str, event: &str) -> (f64, f64) {
    let text = fs::read_to_string(file).unwrap();
    let def = format!("<name>{event}");
    let at = text.find(&def).unwrap();
    let id_start = text[..at].rfind("id=\"").unwrap() + 4;
    let id: &str = &text[id_start..id_start + text[id_start..].find('"').unwrap()];
    let b = text.find(&format!("<name>{block}</name>")).unwrap();
    let data = &text[b..b + text[b..].find("</interval_data>").unwrap()];
    let row = data
        .lines()
        .find(|l| l.split_whitespace().next() == Some(id))
        .unwrap();
    let f: Vec<f64> = row.split_whitespace().map(|x| x.parse().unwrap()).collect();
    (f[1], f[4])
}

#[test]
fn one_sample_of_a_snapshot_run_cumulative_and_delta() {
    let run = corpus().join("tau-real/mpi-stencil-np8-snapshot");
    let run_s = run.to_str().unwrap();
    let csv = |extra: &[&str]| {
        let mut args = vec!["top", run_s, "--format", "csv", "-n", "50", "--by", "inclusive"];
        args.extend_from_slice(extra);
        let o = perfscape(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o)
    };
    let field = |out: &str, event: &str, col: &str| -> f64 {
        let mut lines = out.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        let i = header.iter().position(|h| *h == col).unwrap();
        let line = lines.find(|l| l.contains(event)).unwrap();
        // Event names here contain no commas.
        line.split(',').nth(i).unwrap().parse().unwrap()
    };
    let cum = csv(&["--sample", "iteration 200"]);
    let delta = csv(&["--sample", "9", "--delta"]);
    let (mut calls, mut incl, mut dcalls, mut dincl) = (0.0, 0.0, 0.0, 0.0);
    for r in 0..8 {
        let f = run.join(format!("snapshot.{r}.0.0"));
        let (c200, i200) = raw_snapshot_cell(&f, "iteration 200", "MPI_Allreduce()");
        let (c180, i180) = raw_snapshot_cell(&f, "iteration 180", "MPI_Allreduce()");
        calls += c200;
        incl += i200;
        dcalls += c200 - c180;
        dincl += i200 - i180;
    }
    assert_eq!(field(&cum, "MPI_Allreduce()", "calls"), calls);
    assert_eq!(field(&cum, "MPI_Allreduce()", "sum"), incl);
    assert_eq!(field(&delta, "MPI_Allreduce()", "calls"), dcalls);
    assert_eq!(dcalls, 8.0 * 20.0, "20 iterations on 8 ranks");
    assert_eq!(field(&delta, "MPI_Allreduce()", "sum"), dincl);
    // Unknown samples are named with the list of those that exist.
    let o = perfscape(&["summary", run_s, "--sample", "iteration 999"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("the run has 21 samples") && stderr(&o).contains("final"));
    // --delta needs --sample.
    assert_eq!(perfscape(&["summary", run_s, "--delta"]).status.code(), Some(2));
    // A run without samples says so.
    let o = perfscape(&[
        "summary",
        corpus()
            .join("tau-real/mpi-stencil-np4-profile")
            .to_str()
            .unwrap(),
        "--sample",
        "0",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("no series of samples"), "{}", stderr(&o));
}

#[test]
fn snapshot_merged_and_dump_runs_summarize() {
    for (rel, format) in [
        ("tau-real/mpi-stencil-np8-snapshot", "tau-snapshot"),
        ("tau-real/mpi-stencil-np4-merged/tauprofile.xml", "tau-merged"),
        (
            "tau-xml/tau224-classbreakdown-openmp/tauprofile.xml.gz",
            "tau-merged",
        ),
        (
            "tau-snapshot/hecatoncheir-driver-snapshot/snapshot.0.0.0",
            "tau-snapshot",
        ),
    ] {
        let p = corpus().join(rel);
        let o = perfscape(&["summary", p.to_str().unwrap(), "--format", "json"]);
        assert!(o.status.success(), "{rel}: {}", stderr(&o));
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        assert!(
            v.to_string().contains(format),
            "{rel}: format {format} not reported"
        );
    }
    // With profiles and snapshots both present, the profiles are read and the snapshots noted.
    let o = perfscape(&[
        "summary",
        corpus()
            .join("tau-real/mpi-stencil-np4-dumpincr")
            .to_str()
            .unwrap(),
    ]);
    assert!(o.status.success());
    assert!(stdout(&o).contains("snapshot files") && stdout(&o).contains("incremental dumps"));
}
