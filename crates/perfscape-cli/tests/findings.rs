//! `perfscape findings` on the np64 stencil run: a planted straggler (a copy of the run with one
//! rank's `sweep` x 5, written here) is the top straggler with the cost computed here from the
//! files; the POP figures are those of `perfscape categories`; the thresholds are options (a
//! ratio no thread reaches reports no straggler); CSV and table output.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{corpus, perfscape, stderr, stdout};
use std::path::Path;

const RUN: &str = "tau-real/mpi-stencil-np64-callpath-commmatrix";
const SWEEP: &str = "\"sweep double (const double *, double *, int, int, int)\"";

/// Copies the run into `dir`, rank 17's flat `sweep` exclusive and inclusive values x 5;
/// returns (rank 17's new value, the median of the 64 ranks' values after the change).
fn planted(dir: &Path) -> (f64, f64) {
    let mut values = Vec::new();
    for rank in 0..64 {
        let name = format!("profile.{rank}.0.0");
        let text = std::fs::read_to_string(corpus().join(RUN).join(&name)).unwrap();
        let mut out = String::new();
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix(SWEEP) {
                let f: Vec<&str> = rest.split_whitespace().collect();
                let mut excl: f64 = f[2].parse().unwrap();
                if rank == 17 {
                    excl *= 5.0;
                    out.push_str(&format!(
                        "{SWEEP} {} {} {excl} {excl} {} {}\n",
                        f[0],
                        f[1],
                        f[4],
                        f[5..].join(" ")
                    ));
                } else {
                    out.push_str(line);
                    out.push('\n');
                }
                values.push(excl);
            } else {
                out.push_str(line);
                out.push('\n');
            }
        }
        std::fs::write(dir.join(name), out).unwrap();
    }
    let v17 = values[17];
    values.sort_by(f64::total_cmp);
    (v17, (values[31] + values[32]) / 2.0)
}

#[test]
fn a_planted_straggler_leads_and_pop_agrees_with_categories() {
    let dir = tempfile::tempdir().unwrap();
    let (v17, median) = planted(dir.path());
    let run = dir.path().to_str().unwrap();
    let o = perfscape(&["findings", run, "--format", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let stragglers: Vec<&serde_json::Value> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "straggler")
        .collect();
    let top = stragglers
        .iter()
        .max_by(|a, b| {
            a["cost"]
                .as_f64()
                .unwrap()
                .total_cmp(&b["cost"].as_f64().unwrap())
        })
        .unwrap();
    assert_eq!(top["thread"], "17.0.0", "{stragglers:#?}");
    assert!(
        top["event"].as_str().unwrap().starts_with("sweep double"),
        "{top}"
    );
    assert!(
        (top["cost"].as_f64().unwrap() - (v17 - median)).abs() < 1e-6,
        "{top} vs {}",
        v17 - median
    );

    let c = perfscape(&["categories", run, "--format", "json"]);
    assert!(c.status.success(), "{}", stderr(&c));
    let cat: serde_json::Value = serde_json::from_str(&stdout(&c)).unwrap();
    for k in ["load_balance", "communication_efficiency", "parallel_efficiency"] {
        assert_eq!(doc["pop"][k], cat["pop"][k], "{k}");
    }

    // No thread is 1000 times its event's median: no straggler.
    let o = perfscape(&["findings", run, "--straggler-ratio", "1000", "--format", "csv"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let csv = stdout(&o);
    assert!(
        csv.starts_with("kind,title,cost,cost_percent,event,thread,evidence"),
        "{csv}"
    );
    assert!(!csv.lines().any(|l| l.starts_with("straggler,")), "{csv}");
    let o = perfscape(&["findings", run]);
    let table = stdout(&o);
    assert!(table.contains("POP: parallel efficiency"), "{table}");
    assert!(table.contains("rank 17 is a straggler in sweep"), "{table}");
}

/// `perfscape scaling`'s POP table: each run's parallel efficiency is the one `perfscape
/// categories` gives it, the smallest run is the reference (computational scalability 1), and
/// global efficiency = parallel efficiency × computational scalability.
#[test]
fn scaling_gives_pops_table_across_the_runs() {
    let runs = [
        corpus().join("tau-real/mpi-stencil-np4-profile"),
        corpus().join("tau-real/mpi-stencil-np8-multimetric"),
        corpus().join(RUN),
    ];
    let args: Vec<&str> = runs.iter().map(|r| r.to_str().unwrap()).collect();
    let o = perfscape(&[&["scaling"], &args[..], &["--format", "json"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let pop = doc["pop"].as_array().unwrap();
    assert_eq!(pop.len(), 3);
    for (row, run) in pop.iter().zip(&args) {
        let c = perfscape(&["categories", run, "--format", "json"]);
        let cat: serde_json::Value = serde_json::from_str(&stdout(&c)).unwrap();
        assert_eq!(
            row["parallel_efficiency"], cat["pop"]["parallel_efficiency"],
            "{run}"
        );
        let (pe, cs) = (
            row["parallel_efficiency"].as_f64().unwrap(),
            row["computational_scalability"].as_f64().unwrap(),
        );
        assert!((row["global_efficiency"].as_f64().unwrap() - pe * cs).abs() < 1e-12);
    }
    assert_eq!(pop[0]["count"], 4.0);
    assert_eq!(pop[0]["computational_scalability"], 1.0);
}
