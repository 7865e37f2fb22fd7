//! The communication matrix against ParaProf's `paraprof --writecomm` output
//! (`oracle/paraprof-commmatrix.csv`) for every run of the corpus that has one: calls, max,
//! min, mean and volume of every (sender, receiver) pair of every path, and no pair or path
//! that ParaProf lacks. ParaProf's STDDEV column is not compared (it is not a standard
//! deviation: `perfscape_analysis::comm`); ours is checked where it is known exactly.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::float_cmp)]

mod common;

use perfscape_analysis::comm::{ALL_PATHS, comm_matrix};
use std::collections::{BTreeMap, BTreeSet};

const FIGURES: [&str; 6] = ["CALLS", "MAX", "MIN", "MEAN", "STDDEV", "VOLUME"];

/// ParaProf's CSV: per path name, per (sender, receiver), the six figures. The header is
/// `x cord,y coord,z coord` then `, <path> <FIGURE>` six times per path, unquoted (a path such
/// as `main int (int, char **)` holds a comma, so the header is read figure group by group).
fn read_oracle(text: &str) -> BTreeMap<String, BTreeMap<(u32, u32), [f64; 6]>> {
    let mut lines = text.lines();
    let header = lines.next().unwrap();
    let mut rest = header
        .strip_prefix("x cord,y coord,z coord")
        .expect("ParaProf's header");
    let mut paths = Vec::new();
    while !rest.is_empty() {
        let end = rest.find(" CALLS").expect("a CALLS column");
        let path = rest[2..end].to_string();
        let group: String = FIGURES.iter().map(|f| format!(", {path} {f}")).collect();
        rest = rest.strip_prefix(group.as_str()).expect("six figures per path");
        paths.push(path);
    }
    let mut out: BTreeMap<String, BTreeMap<(u32, u32), [f64; 6]>> =
        paths.iter().map(|p| (p.clone(), BTreeMap::new())).collect();
    for line in lines.filter(|l| !l.trim().is_empty()) {
        let f: Vec<&str> = line.split(',').collect();
        assert_eq!(f.len(), 3 + 6 * paths.len(), "{line}");
        // x = receiver, y = sender (ParaProf's writeCommCSV).
        let (receiver, sender): (u32, u32) = (f[0].parse().unwrap(), f[1].parse().unwrap());
        for (i, p) in paths.iter().enumerate() {
            let v: Vec<f64> = (0..6).map(|k| f[3 + 6 * i + k].parse().unwrap()).collect();
            if v[0] > 0.0 {
                out.get_mut(p)
                    .unwrap()
                    .insert((sender, receiver), [v[0], v[1], v[2], v[3], v[4], v[5]]);
            }
        }
    }
    out
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

fn commmatrix_runs() -> Vec<String> {
    let dir = common::corpus().join("tau-real");
    let mut runs: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            let e = e.unwrap();
            e.path()
                .join("oracle/paraprof-commmatrix.csv")
                .is_file()
                .then(|| e.file_name().to_string_lossy().into_owned())
        })
        .collect();
    runs.sort();
    runs
}

#[test]
fn the_comm_matrix_equals_paraprofs_writecomm_on_every_commmatrix_run() {
    let runs = commmatrix_runs();
    assert!(runs.len() >= 2, "the np4 and np64 commmatrix runs: {runs:?}");
    for run in runs {
        let dir = common::corpus().join("tau-real").join(&run);
        let oracle =
            read_oracle(&std::fs::read_to_string(dir.join("oracle/paraprof-commmatrix.csv")).unwrap());
        let p = common::load(&format!("tau-real/{run}"));
        let m = comm_matrix(&p);
        assert!(!m.is_empty(), "{run}");
        assert_eq!(m.paths[0].name, ALL_PATHS, "{run}");
        let ours: BTreeSet<&str> = m.paths.iter().map(|p| p.name.as_str()).collect();
        let theirs: BTreeSet<&str> = oracle.keys().map(String::as_str).collect();
        assert_eq!(ours, theirs, "{run}: the paths");
        assert_eq!(m.skipped.out_of_range_rows, 0, "{run}");
        let mut compared = 0;
        for path in &m.paths {
            let want = &oracle[&path.name];
            let got: BTreeSet<(u32, u32)> = path.cells.iter().map(|c| (c.sender, c.receiver)).collect();
            let expected: BTreeSet<(u32, u32)> = want.keys().copied().collect();
            assert_eq!(got, expected, "{run} {}: the pairs", path.name);
            for c in &path.cells {
                let w = want[&(c.sender, c.receiver)];
                let ctx = format!("{run} {} {}→{}", path.name, c.sender, c.receiver);
                assert!(close(c.calls, w[0]), "{ctx} calls {} vs {}", c.calls, w[0]);
                assert!(close(c.max_bytes, w[1]), "{ctx} max {} vs {}", c.max_bytes, w[1]);
                assert!(close(c.min_bytes, w[2]), "{ctx} min {} vs {}", c.min_bytes, w[2]);
                assert!(
                    close(c.mean_bytes(), w[3]),
                    "{ctx} mean {} vs {}",
                    c.mean_bytes(),
                    w[3]
                );
                assert!(
                    close(c.volume_bytes, w[5]),
                    "{ctx} volume {} vs {}",
                    c.volume_bytes,
                    w[5]
                );
                if c.min_bytes == c.max_bytes {
                    // Every message the same size: the true standard deviation is 0 (ParaProf's
                    // column shows the size itself).
                    assert_eq!(c.stddev_bytes(), 0.0, "{ctx}");
                }
                compared += 1;
            }
        }
        assert!(compared >= 4, "{run}: {compared} cells compared");
    }
}

#[test]
fn a_run_without_comm_matrix_events_has_an_empty_matrix() {
    let p = common::load("tau-real/mpi-stencil-np4-profile");
    let m = comm_matrix(&p);
    assert!(m.is_empty());
    assert_eq!(m.ranks, 4);
    assert_eq!((m.skipped.sent_rows, m.skipped.received_rows), (0, 0));
    assert!(m.path(ALL_PATHS).is_none());
}
