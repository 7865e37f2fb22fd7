//! `perfscape diff` and `perfscape compare` as a user runs them on real runs: values checked
//! against sums of the TAU files read here, the default normalization, per-thread output,
//! exit statuses and bad input. (The analyses themselves are checked against Hatchet and
//! SciPy in perfscape-analysis' tests.)

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{corpus, perfscape, stderr, stdout};
use std::collections::BTreeMap;
use std::path::Path;

/// Per flat timer: (exclusive, inclusive) summed over a run's files.
type Sums = BTreeMap<String, (f64, f64)>;

/// Per flat timer of a TAU run: (sum over files of exclusive, of inclusive, number of files).
fn tau_sums(run: &Path) -> (Sums, usize) {
    let mut out: BTreeMap<String, (f64, f64)> = BTreeMap::new();
    let mut files = 0;
    for f in std::fs::read_dir(run).unwrap() {
        let f = f.unwrap().path();
        if !f.file_name().unwrap().to_str().unwrap().starts_with("profile.") {
            continue;
        }
        files += 1;
        let text = std::fs::read_to_string(&f).unwrap();
        let mut lines = text.lines();
        let n: usize = lines
            .next()
            .unwrap()
            .split_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap();
        lines.next();
        for line in lines.take(n) {
            let close = line[1..].find('"').unwrap() + 1;
            let name = line[1..close].split_whitespace().collect::<Vec<_>>().join(" ");
            if name.contains(" => ") {
                continue;
            }
            let v: Vec<f64> = line[close + 1..]
                .split_whitespace()
                .take(4)
                .map(|x| x.parse().unwrap())
                .collect();
            let e = out.entry(name).or_default();
            e.0 += v[2];
            e.1 += v[3];
        }
    }
    (out, files)
}

fn json(args: &[&str]) -> serde_json::Value {
    let o = perfscape(args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn diff_values_are_the_runs_sums_and_thread_counts_choose_the_normalization() {
    let ss = corpus().join("tau/taucmdr-mm-strong-scaling-1to8rank");
    let (a, b) = (ss.join("np2"), ss.join("np4"));
    let (sa, na) = tau_sums(&a);
    let (sb, nb) = tau_sums(&b);
    let (ra, rb) = (a.to_str().unwrap(), b.to_str().unwrap());
    // Different thread counts: per thread by default.
    let d = json(&["diff", ra, rb, "--by", "inclusive", "-n", "0", "--format", "json"]);
    assert_eq!(d["normalize"], "per_thread");
    assert_eq!(
        (d["threads_a"].as_u64(), d["threads_b"].as_u64()),
        (Some(2), Some(4))
    );
    let events = d["events"].as_array().unwrap();
    assert_eq!(events.len(), sa.len());
    let mut last = f64::INFINITY;
    for e in events {
        let name = e["event"].as_str().unwrap();
        let (va, vb) = (sa[name].1 / na as f64, sb[name].1 / nb as f64);
        assert!((e["a"].as_f64().unwrap() - va).abs() < 1e-6, "{name}");
        assert!((e["b"].as_f64().unwrap() - vb).abs() < 1e-6, "{name}");
        assert!((e["delta"].as_f64().unwrap() - (vb - va)).abs() < 1e-6, "{name}");
        assert_eq!(e["change"], "matched");
        // Sorted by |B − A|.
        let abs = e["delta"].as_f64().unwrap().abs();
        assert!(abs <= last, "{name} out of order");
        last = abs;
    }
    // --normalize total: the sums themselves.
    let d = json(&[
        "diff",
        ra,
        rb,
        "--normalize",
        "total",
        "--format",
        "json",
        "-n",
        "1",
    ]);
    let e = &d["events"][0];
    let name = e["event"].as_str().unwrap();
    assert_eq!(e["a"].as_f64().unwrap(), sa[name].0);
    assert_eq!(e["b"].as_f64().unwrap(), sb[name].0);
}

#[test]
fn diff_lists_added_events_and_the_threads_of_one_event() {
    let a = corpus().join("tau-real/mpi-stencil-np4-profile");
    let b = corpus().join("tau-real/mpi-stencil-np4-compinst-callpath");
    let (ra, rb) = (a.to_str().unwrap(), b.to_str().unwrap());
    let d = json(&["diff", ra, rb, "-n", "0", "--format", "json"]);
    assert_eq!(d["normalize"], "total");
    let added: Vec<&str> = d["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["change"] == "added")
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(added.len(), 5, "{added:?}");
    assert!(added.contains(&"main [{/home/user/tauprogs/ci/mpi_stencil.c} {69,0}]"));
    for e in d["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["change"] == "added")
    {
        assert_eq!(e["a"].as_f64(), Some(0.0));
        assert_eq!(e["ratio"], serde_json::Value::Null);
    }
    // Per thread: one row per rank, B − A of each equal to the files' values.
    let o = perfscape(&["diff", ra, rb, "--threads", "MPI_Waitall()", "--format", "csv"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let rows: Vec<Vec<&str>> = text.lines().skip(1).map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 4);
    let mut deltas = Vec::new();
    for r in &rows {
        let (va, vb, d): (f64, f64, f64) = (
            r[1].parse().unwrap(),
            r[2].parse().unwrap(),
            r[3].parse().unwrap(),
        );
        assert_eq!(d, vb - va);
        deltas.push(d);
    }
    assert!(
        deltas.windows(2).all(|w| w[0] >= w[1]),
        "largest increase first: {deltas:?}"
    );
    let table = stdout(&perfscape(&["diff", ra, rb]));
    assert!(table.contains("added"), "{table}");
    // The footer counts flat and callpath events: 5 flat timers and 22 callpaths are new.
    assert!(
        table.contains("18 in both runs, 27 added in B, 0 removed in B"),
        "{table}"
    );
}

#[test]
fn diff_refuses_runs_without_common_events_and_names_runs_that_do_not_load() {
    let a = corpus().join("tau-real/mpi-stencil-np4-profile");
    let b = corpus().join("caliper/thicket-mpi-scaling/27_cores.cali");
    let o = perfscape(&["diff", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("no event in common"), "{}", stderr(&o));
    let o = perfscape(&["diff", a.to_str().unwrap(), "/nonexistent/run"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("/nonexistent/run"), "{}", stderr(&o));
    let o = perfscape(&[
        "diff",
        a.to_str().unwrap(),
        a.to_str().unwrap(),
        "--metric",
        "PAPI_FP_INS",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("no metric `PAPI_FP_INS`"), "{}", stderr(&o));
}

#[test]
fn compare_gives_group_statistics_and_welchs_test() {
    let ss = corpus().join("tau/taucmdr-mm-strong-scaling-1to8rank");
    let run = |k: u32| ss.join(format!("np{k}")).to_str().unwrap().to_string();
    let (r2, r3, r4, r5, r6) = (run(2), run(3), run(4), run(5), run(6));
    let args = [
        "compare", "--group", "small", &r2, &r3, "--group", "large", &r4, &r5, &r6, "-n", "0", "--format",
        "json",
    ];
    let d = json(&args);
    assert_eq!(d["normalize"], "per_thread");
    let events = d["events"].as_array().unwrap();
    assert_eq!(events.len(), 11);
    // The group means are the means of each run's per-thread exclusive value.
    let per_run: Vec<(Sums, usize)> = [2, 3, 4, 5, 6]
        .iter()
        .map(|&k| tau_sums(&ss.join(format!("np{k}"))))
        .collect();
    for e in events {
        let name = e["event"].as_str().unwrap();
        let v: Vec<f64> = per_run
            .iter()
            .map(|(s, n)| s.get(name).map_or(0.0, |x| x.0 / *n as f64))
            .collect();
        let small = (v[0] + v[1]) / 2.0;
        let large = (v[2] + v[3] + v[4]) / 3.0;
        assert!(
            (e["groups"][0]["mean"].as_f64().unwrap() - small).abs() < 1e-6,
            "{name}"
        );
        assert!(
            (e["groups"][1]["mean"].as_f64().unwrap() - large).abs() < 1e-6,
            "{name}"
        );
        assert_eq!(e["groups"][1]["runs"], 3);
        let p = e["p_value"].as_f64();
        assert!(p.is_none_or(|p| (0.0..=1.0).contains(&p)), "{name}: {p:?}");
    }
    // One group only: a usage error that says what to give.
    let o = perfscape(&["compare", "--group", "only", &r2, &r3]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("give two groups"), "{}", stderr(&o));
    // The table marks the test.
    let o = perfscape(&[
        "compare", "--group", "small", &r2, &r3, "--group", "large", &r4, &r5, &r6,
    ]);
    assert!(stdout(&o).contains("Welch's t-test"), "{}", stdout(&o));
}

#[test]
fn scaling_reads_the_counts_and_fits_a_model_per_event() {
    let ss = corpus().join("tau/taucmdr-mm-strong-scaling-1to8rank");
    let runs: Vec<String> = (1..=8)
        .map(|k| ss.join(format!("np{k}")).to_str().unwrap().to_string())
        .collect();
    let mut args = vec!["scaling"];
    args.extend(runs.iter().map(String::as_str));
    args.extend(["-n", "0", "--format", "json"]);
    let d = json(&args);
    assert_eq!(
        d["counts"],
        serde_json::json!([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])
    );
    let events = d["events"].as_array().unwrap();
    assert_eq!(events.len(), 11);
    for e in events {
        let name = e["event"].as_str().unwrap();
        // The value at p = k is the run's per-thread exclusive TIME (sum over files / files).
        for (k, v) in e["values"].as_array().unwrap().iter().enumerate() {
            let (sums, files) = tau_sums(&ss.join(format!("np{}", k + 1)));
            let want = sums.get(name).map_or(0.0, |x| x.0 / files as f64);
            assert!(
                (v.as_f64().unwrap() - want).abs() <= 1e-9 * want.abs().max(1.0),
                "{name} p={}",
                k + 1
            );
        }
        assert!(
            e["model_formula"].as_str().is_some_and(|f| !f.is_empty()),
            "{name}"
        );
    }
    // --counts must give one count per run.
    let o = perfscape(&["scaling", &runs[0], &runs[1], "--counts", "1"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("one per run"), "{}", stderr(&o));
    // One count only: refused with the reason.
    let o = perfscape(&["scaling", &runs[1], &runs[1]]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("two or more process counts"),
        "{}",
        stderr(&o)
    );
}
