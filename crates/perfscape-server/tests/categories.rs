//! `GET /api/categories` on the np64 stencil example: the run's time per category against
//! sums written here from ParaProf's per-thread values (`oracle/paraprof.csv`, the same run),
//! grouped by the routines the default rules name; bins, sorting, the selected thread, and a
//! bad parameter's 400.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use axum::http::StatusCode;
use common::{corpus, example_state, get_json};
use perfscape_server::{StateOptions, router};
use std::collections::HashMap;

/// Per thread `N,C,T`: flat event name → exclusive value.
fn paraprof() -> HashMap<String, HashMap<String, f64>> {
    let path = corpus().join("tau-real/mpi-stencil-np64-callpath-commmatrix/oracle/paraprof.csv");
    let text = std::fs::read_to_string(path).unwrap();
    let intervals = text.split("Node\tContext\tThread\tUser Event").next().unwrap();
    let mut out: HashMap<String, HashMap<String, f64>> = HashMap::new();
    for line in intervals.lines().skip(1) {
        let c: Vec<&str> = line.split('\t').collect();
        if c.len() < 9 || c[3].is_empty() || c[3].contains("=>") {
            continue;
        }
        out.entry(format!("{}.{}.{}", c[0], c[1], c[2]))
            .or_default()
            .insert(c[3].to_string(), c[7].parse().unwrap());
    }
    out
}

/// The category the defaults give each flat routine of this run (written out here).
fn expected_category(routine: &str) -> &'static str {
    match routine {
        "MPI_Irecv()" | "MPI_Isend()" => "MPI point-to-point",
        "MPI_Waitall()" => "MPI wait",
        "MPI_Allreduce()" | "MPI_Gather()" => "MPI collective",
        "MPI_Barrier()" => "MPI synchronization",
        "MPI_Init()" | "MPI_Finalize()" | "MPI_Comm_rank()" | "MPI_Comm_size()" => "MPI setup",
        r if r.starts_with("checkpoint") => "I/O",
        _ => "other",
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

#[tokio::test]
async fn run_and_thread_times_per_category_equal_paraprof_sums() {
    let app = router(example_state(StateOptions::default()));
    let (s, j) = get_json(&app, "/api/categories?thread=3.0.0").await;
    assert_eq!(s, StatusCode::OK, "{j}");
    let names: Vec<String> = j["categories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap().to_string())
        .collect();
    let oracle = paraprof();
    let mut run: HashMap<&str, f64> = HashMap::new();
    for events in oracle.values() {
        for (name, v) in events {
            *run.entry(expected_category(name)).or_default() += v;
        }
    }
    assert_eq!(names.len(), run.len(), "{names:?} {run:?}");
    for (i, name) in names.iter().enumerate() {
        let got = j["run"][i].as_f64().unwrap();
        assert!(
            close(got, run[name.as_str()]),
            "{name}: {got} {}",
            run[name.as_str()]
        );
    }
    // The selected thread.
    let mut t3: HashMap<&str, f64> = HashMap::new();
    for (name, v) in &oracle["3.0.0"] {
        *t3.entry(expected_category(name)).or_default() += v;
    }
    for (i, name) in names.iter().enumerate() {
        assert!(
            close(j["thread"]["values"][i].as_f64().unwrap(), t3[name.as_str()]),
            "{name}"
        );
    }
    assert_eq!(j["processes"].as_array().unwrap().len(), 64);
    assert_eq!(j["bins"].as_array().unwrap().len(), 64);
    assert_eq!(j["pop"]["useful_categories"], serde_json::json!(["I/O", "other"]));
    let events = j["event_category"].as_array().unwrap();
    assert!(
        events
            .iter()
            .all(|c| (c.as_u64().unwrap() as usize) < names.len())
    );
}

#[tokio::test]
async fn bins_follow_the_sort_and_bad_parameters_are_refused() {
    let app = router(example_state(StateOptions::default()));
    let (_, j) = get_json(&app, "/api/categories").await;
    let wait = j["categories"]
        .as_array()
        .unwrap()
        .iter()
        .position(|c| c["name"] == "MPI wait")
        .unwrap();
    let (s, j) = get_json(&app, &format!("/api/categories?sort={wait}")).await;
    assert_eq!(s, StatusCode::OK);
    let oracle = paraprof();
    let mut waits: Vec<(f64, String)> = oracle
        .iter()
        .map(|(t, e)| (e["MPI_Waitall()"], t.clone()))
        .collect();
    waits.sort_by(|a, b| b.0.total_cmp(&a.0));
    let bins = j["bins"].as_array().unwrap();
    for (b, (v, t)) in bins.iter().zip(&waits) {
        assert!(close(b["values"][wait].as_f64().unwrap(), *v));
        assert_eq!(b["label"].as_str().unwrap(), t);
    }
    // 16 bins of 4 threads: each the mean of its threads.
    let (_, j) = get_json(&app, &format!("/api/categories?sort={wait}&points=16")).await;
    let bins = j["bins"].as_array().unwrap();
    assert_eq!(bins.len(), 16);
    for (i, b) in bins.iter().enumerate() {
        assert_eq!(b["count"], 4);
        let mean = waits[4 * i..4 * i + 4].iter().map(|w| w.0).sum::<f64>() / 4.0;
        assert!(close(b["values"][wait].as_f64().unwrap(), mean));
    }
    for bad in [
        "/api/categories?sort=99",
        "/api/categories?metric=7",
        "/api/categories?sort=x",
    ] {
        let (s, j) = get_json(&app, bad).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{bad}: {j}");
    }
    let (s, _) = get_json(&app, "/api/categories?thread=999.0.0").await;
    assert_eq!(s, StatusCode::NOT_FOUND);
}
