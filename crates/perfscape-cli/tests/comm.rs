//! `perfscape comm` on the np4 commmatrix run of the corpus: the pairs it prints and the
//! `--csv` file against ParaProf's `--writecomm` output (`oracle/paraprof-commmatrix.csv`):
//! the same header and pairs, the same numbers in every column but STDDEV (ParaProf's is not
//! a standard deviation; ours is 0 for messages of one size).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::float_cmp)]

mod common;

use common::{corpus, perfscape, stderr, stdout};

const RUN: &str = "tau-real/mpi-stencil-np4-callpath-commmatrix";

#[test]
fn the_csv_is_paraprofs_writecomm_but_for_the_true_standard_deviation() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("comm.csv");
    let run = corpus().join(RUN);
    let o = perfscape(&["comm", run.to_str().unwrap(), "--csv", file.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let ours = std::fs::read_to_string(&file).unwrap();
    let theirs = std::fs::read_to_string(run.join("oracle/paraprof-commmatrix.csv")).unwrap();
    let (ours, theirs): (Vec<&str>, Vec<&str>) = (ours.lines().collect(), theirs.lines().collect());
    assert_eq!(ours.len(), theirs.len());
    assert_eq!(ours[0], theirs[0], "the header");
    for (a, b) in ours[1..].iter().zip(&theirs[1..]) {
        let (a, b): (Vec<&str>, Vec<&str>) = (a.split(',').collect(), b.split(',').collect());
        assert_eq!(a.len(), b.len());
        assert_eq!(a[..3], b[..3], "the pair");
        for (k, (x, y)) in a.iter().zip(&b).enumerate().skip(3) {
            let (x, y): (f64, f64) = (x.parse().unwrap(), y.parse().unwrap());
            // Six columns per path: CALLS, MAX, MIN, MEAN, STDDEV, VOLUME.
            if (k - 3) % 6 == 4 {
                // Every message of the np4 run is 6400 bytes: ParaProf shows 6400.
                assert_eq!((x, y), (0.0, 6400.0), "column {k}");
            } else {
                assert_eq!(x, y, "column {k} of {a:?}");
            }
        }
    }
}

#[test]
fn the_table_lists_the_pairs_and_the_paths() {
    let run = corpus().join(RUN);
    let o = perfscape(&["comm", run.to_str().unwrap(), "-f", "json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    // The oracle's All Paths pairs: (x = receiver, y = sender, calls, volume).
    let oracle = std::fs::read_to_string(run.join("oracle/paraprof-commmatrix.csv")).unwrap();
    let mut want: Vec<(u64, u64, f64, f64)> = oracle
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (
                f[1].parse().unwrap(),
                f[0].parse().unwrap(),
                f[3].parse().unwrap(),
                f[8].parse().unwrap(),
            )
        })
        .collect();
    want.sort_by_key(|a| (a.0, a.1));
    let mut got: Vec<(u64, u64, f64, f64)> = doc["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["sender"].as_u64().unwrap(),
                p["receiver"].as_u64().unwrap(),
                p["calls"].as_f64().unwrap(),
                p["bytes"].as_f64().unwrap(),
            )
        })
        .collect();
    got.sort_by_key(|a| (a.0, a.1));
    assert_eq!(got, want);
    assert_eq!(doc["paths"][0]["path"], "All Paths");
    let o = perfscape(&["comm", run.to_str().unwrap(), "--path", "MPI_Isend()"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("Heaviest sender → receiver pairs of MPI_Isend()"));
    let o = perfscape(&["comm", run.to_str().unwrap(), "--path", "nowhere"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("nowhere"));
    let plain = corpus().join("tau-real/mpi-stencil-np4-profile");
    let o = perfscape(&["comm", plain.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("TAU_COMM_MATRIX"), "{}", stderr(&o));
}
