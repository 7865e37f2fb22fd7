//! `perfscape source` on the event-based-sampling run `tau-real/omp-matmul-t4-tauexec-ebs`
//! with `tau-real/src` as the source root: the listed lines are the file's text, and each
//! sampled line carries exactly the `[SAMPLE]` values of ParaProf's `oracle/paraprof.csv` per
//! thread, with statistics computed here from the csv.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{corpus, perfscape, stderr, stdout};
use std::collections::BTreeMap;

const RUN: &str = "tau-real/omp-matmul-t4-tauexec-ebs";

/// line → thread → exclusive TIME of the `[SAMPLE]` rows of `omp_matmul.c` in the csv.
fn paraprof_lines() -> BTreeMap<u64, BTreeMap<String, f64>> {
    let text = std::fs::read_to_string(corpus().join(RUN).join("oracle/paraprof.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split('\t').collect();
    let col = |n: &str| header.iter().position(|h| *h == n).unwrap();
    let (fun, excl) = (col("Function"), col("Exclusive TIME"));
    let prefix = "[{/home/user/tauprogs/omp_matmul.c} {";
    let mut out: BTreeMap<u64, BTreeMap<String, f64>> = BTreeMap::new();
    for l in lines {
        let f: Vec<&str> = l.split('\t').collect();
        if f.len() <= excl || !f[fun].starts_with("[SAMPLE]") || f[fun].contains("=>") {
            continue;
        }
        let Some(i) = f[fun].find(prefix) else { continue };
        let line: u64 = f[fun][i + prefix.len()..].trim_end_matches("}]").parse().unwrap();
        *out.entry(line)
            .or_default()
            .entry(format!("{}.{}.{}", f[0], f[1], f[2]))
            .or_default() += f[excl].parse::<f64>().unwrap();
    }
    out
}

#[test]
fn annotated_lines_carry_paraprofs_sample_values() {
    let run = corpus().join(RUN);
    let src = corpus().join("tau-real/src");
    let o = perfscape(&[
        "source",
        run.to_str().unwrap(),
        "omp_matmul.c:7-14",
        "--source-dir",
        src.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(j["file"], "/home/user/tauprogs/omp_matmul.c");
    let text = std::fs::read_to_string(src.join("omp_matmul.c")).unwrap();
    let text: Vec<&str> = text.lines().collect();
    let lines = j["lines"].as_array().unwrap();
    assert_eq!(
        lines
            .iter()
            .map(|l| l["line"].as_u64().unwrap())
            .collect::<Vec<_>>(),
        (7..=14).collect::<Vec<u64>>()
    );
    let csv = paraprof_lines();
    let mut sampled = 0;
    for l in lines {
        let n = l["line"].as_u64().unwrap();
        assert_eq!(l["text"].as_str(), Some(text[n as usize - 1]), "line {n}");
        let Some(theirs) = csv.get(&n) else {
            assert!(
                l["sum"].is_null() && l["values"].is_null(),
                "line {n} has no samples: {l}"
            );
            continue;
        };
        sampled += 1;
        let ours: BTreeMap<String, f64> = serde_json::from_value(l["values"].clone()).unwrap();
        assert_eq!(&ours, theirs, "line {n}");
        let vals: Vec<f64> = theirs.values().copied().collect();
        let sum: f64 = vals.iter().sum();
        let mean = sum / vals.len() as f64;
        let sd = (vals.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / vals.len() as f64).sqrt();
        let close = |a: &serde_json::Value, b: f64| (a.as_f64().unwrap() - b).abs() <= 1e-9 * b.abs() + 1e-9;
        assert!(
            close(&l["sum"], sum) && close(&l["mean"], mean) && close(&l["stddev"], sd),
            "line {n}: {l}"
        );
        let max = theirs.iter().max_by(|a, b| a.1.total_cmp(b.1)).unwrap();
        let min = theirs.iter().min_by(|a, b| a.1.total_cmp(b.1)).unwrap();
        assert_eq!(
            (l["max"].as_f64(), l["max_thread"].as_str()),
            (Some(*max.1), Some(max.0.as_str()))
        );
        assert_eq!(
            (l["min"].as_f64(), l["min_thread"].as_str()),
            (Some(*min.1), Some(min.0.as_str()))
        );
    }
    assert_eq!(sampled, csv.len(), "every sampled line of the range");

    // The table: pprof -list's layout, the text beside the numbers.
    let o = perfscape(&[
        "source",
        run.to_str().unwrap(),
        "omp_matmul.c",
        "--source-dir",
        src.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let row12 = out.lines().find(|l| l.contains("  12  ")).unwrap();
    assert!(
        row12.contains("c[i * n + j] += aik * b[k * n + j]") && row12.contains("0.0.3"),
        "{row12}"
    );
    assert_eq!(out.lines().filter(|l| l.contains("  static ")).count(), 3);
}

#[test]
fn a_run_measured_elsewhere_is_mapped_and_a_missing_file_said() {
    let run = corpus().join(RUN);
    let src = corpus().join("tau-real/src");
    let map = format!("/home/user/tauprogs={}", src.display());
    let o = perfscape(&[
        "source",
        run.to_str().unwrap(),
        "omp_matmul.c:12-12",
        "--source-map",
        &map,
        "-f",
        "csv",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("c[i * n + j] += aik"), "{}", stdout(&o));

    let empty = tempfile::tempdir().unwrap();
    let o = perfscape(&[
        "source",
        run.to_str().unwrap(),
        "omp_matmul.c",
        "--source-dir",
        empty.path().to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("Source not shown") && stdout(&o).contains("was not found"),
        "{}",
        stdout(&o)
    );

    let o = perfscape(&[
        "source",
        run.to_str().unwrap(),
        "nope.c",
        "--source-dir",
        src.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("names no source file `nope.c`"),
        "{}",
        stderr(&o)
    );
    let o = perfscape(&[
        "source",
        run.to_str().unwrap(),
        "omp_matmul.c",
        "--source-dir",
        "/no/such/dir",
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("/no/such/dir"), "{}", stderr(&o));
}
