//! `GET /api/comm` over HTTP on the np64 example against ParaProf's `--writecomm` output of
//! the same run (`oracle/paraprof-commmatrix.csv` in the corpus): every cell at full
//! resolution, sums over 8 × 8 blocks, a callpath element's calls; bad parameters refused.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::float_cmp)]

mod common;

use axum::http::StatusCode;
use common::{corpus, example_state, get_json};
use perfscape_server::{StateOptions, router};
use std::collections::HashMap;

/// ParaProf's cells of the first path group `path` (its column offset): (sender, receiver) →
/// (calls, volume). `x` = receiver, `y` = sender.
fn oracle(path: &str) -> HashMap<(usize, usize), (f64, f64)> {
    let f = corpus().join("tau-real/mpi-stencil-np64-callpath-commmatrix/oracle/paraprof-commmatrix.csv");
    let text = std::fs::read_to_string(f).unwrap();
    let header = text.lines().next().unwrap();
    // The header's path groups are in name order, six columns each; `path` is the k-th.
    let start = header
        .find(&format!(", {path} CALLS"))
        .expect("the path in the header");
    let k = header[..start].matches(" VOLUME").count();
    text.lines()
        .skip(1)
        .filter_map(|l| {
            let v: Vec<f64> = l.split(',').map(|x| x.parse().unwrap()).collect();
            let (calls, volume) = (v[3 + 6 * k], v[3 + 6 * k + 5]);
            (calls > 0.0).then(|| ((v[1] as usize, v[0] as usize), (calls, volume)))
        })
        .collect()
}

#[tokio::test]
async fn the_comm_matrix_over_http_equals_paraprofs() {
    let app = router(example_state(StateOptions::default()));
    let (s, run) = get_json(&app, "/api/run").await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(run["comm"], true);

    let want = oracle("All Paths");
    let (s, j) = get_json(&app, "/api/comm?h=64&w=64").await;
    assert_eq!(s, StatusCode::OK, "{j}");
    assert_eq!(
        (j["ranks"].as_u64(), j["path"].as_str()),
        (Some(64), Some("All Paths"))
    );
    let values = j["values"].as_array().unwrap();
    assert_eq!(values.len(), 64 * 64);
    for s in 0..64 {
        for r in 0..64 {
            let got = values[s * 64 + r].as_f64();
            assert_eq!(got, want.get(&(s, r)).map(|c| c.1), "{s} → {r}");
        }
    }

    // Sums over blocks of 8 × 8 ranks.
    let (_, j) = get_json(&app, "/api/comm?h=8&w=8&reduce=sum").await;
    let values = j["values"].as_array().unwrap();
    for bs in 0..8 {
        for br in 0..8 {
            let cells: Vec<f64> = want
                .iter()
                .filter(|((s, r), _)| s / 8 == bs && r / 8 == br)
                .map(|(_, c)| c.1)
                .collect();
            let expected = (!cells.is_empty()).then(|| cells.iter().sum::<f64>());
            assert_eq!(values[bs * 8 + br].as_f64(), expected, "block {bs}, {br}");
        }
    }

    // A callpath element, calls.
    let want = oracle("MPI_Isend()");
    let (s, j) = get_json(&app, "/api/comm?h=64&w=64&stat=calls&path=MPI_Isend()").await;
    assert_eq!(s, StatusCode::OK, "{j}");
    let values = j["values"].as_array().unwrap();
    let n = values.iter().filter(|v| !v.is_null()).count();
    assert_eq!(n, want.len());
    for (&(s, r), &(calls, _)) in &want {
        assert_eq!(values[s * 64 + r].as_f64(), Some(calls));
    }
    assert!(
        j["paths"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["name"] == "MPI_Isend()")
    );
}

#[tokio::test]
async fn bad_comm_parameters_are_refused() {
    let app = router(example_state(StateOptions::default()));
    let (s, j) = get_json(&app, "/api/comm?stat=bogus").await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{j}");
    let (s, j) = get_json(&app, "/api/comm?stat=mean_bytes&reduce=sum").await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{j}");
    let (s, j) = get_json(&app, "/api/comm?path=nowhere").await;
    assert_eq!(s, StatusCode::NOT_FOUND, "{j}");
}

#[tokio::test]
async fn a_traces_messages_give_the_matrix_of_a_run_without_comm_events() {
    // The OTF2 ping-pong (no TAU comm-matrix events): 8 messages of 4,177,920 bytes in all
    // each way, as the `otf2` Python bindings count them
    // (perfscape-formats/tests/fixtures/otf2/pipit-ping-pong-otf2-2rank.json).
    let state = perfscape_server::AppState::open(
        &corpus().join("otf2/pipit-ping-pong-otf2-2rank"),
        &perfscape_formats::OpenOptions::default(),
        StateOptions::default(),
    );
    let app = router(state);
    let (_, run) = get_json(&app, "/api/run").await;
    assert_eq!(run["comm"], true);
    let (s, j) = get_json(&app, "/api/comm").await;
    assert_eq!(s, StatusCode::OK, "{j}");
    assert_eq!(
        (j["ranks"].as_u64(), j["path"].as_str()),
        (Some(2), Some("All Paths"))
    );
    let values: Vec<Option<f64>> = j["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64())
        .collect();
    assert_eq!(values, vec![None, Some(4_177_920.0), Some(4_177_920.0), None]);
    let (_, j) = get_json(&app, "/api/comm?stat=calls").await;
    let calls: Vec<Option<f64>> = j["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64())
        .collect();
    assert_eq!(calls, vec![None, Some(8.0), Some(8.0), None]);
}
