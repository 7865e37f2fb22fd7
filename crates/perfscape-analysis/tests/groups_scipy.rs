//! `compare_groups` equals SciPy on real runs: per event each group's values, mean, sample
//! standard deviation, minimum and maximum, and `scipy.stats.ttest_ind(last, first,
//! equal_var=False)`. The fixtures `tests/fixtures/groups/*.csv` were made once by
//! `scripts/ref/scipy_groups.py`, which reads the runs itself (TAU text parsed in Python,
//! Caliper through Hatchet's `from_caliperreader`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use perfscape_analysis::compare::diff::Normalize;
use perfscape_analysis::compare::groups::{GroupRow, compare_groups};
mod common;
use common::{fixture, load};
use perfscape_model::event::routine_name;
use perfscape_model::{Profile, ValueKind};
use std::collections::BTreeMap;

struct Reference {
    values: Vec<Vec<f64>>,
    stats: Vec<[f64; 4]>,
    test: Option<[f64; 3]>,
}

fn reference(set: &str) -> BTreeMap<String, Reference> {
    let path = fixture(&format!("groups/{set}.csv"));
    let mut out = BTreeMap::new();
    for rec in csv::Reader::from_path(path).unwrap().records() {
        let rec = rec.unwrap();
        let n = (rec.len() - 4) / 5;
        let mut values = Vec::new();
        let mut stats = Vec::new();
        for g in 0..n {
            let c = 1 + 5 * g;
            values.push(rec[c].split(';').map(|v| v.parse().unwrap()).collect());
            stats.push([1, 2, 3, 4].map(|i| rec[c + i].parse().unwrap()));
        }
        let t = 1 + 5 * n;
        let test = (!rec[t].is_empty()).then(|| [0, 1, 2].map(|i| rec[t + i].parse().unwrap()));
        out.insert(rec[0].to_string(), Reference { values, stats, test });
    }
    out
}

fn close(x: f64, y: f64, rel: f64) -> bool {
    (x - y).abs() <= rel * x.abs().max(y.abs()) || (x - y).abs() < 1e-300
}

/// Hatchet roots of the LULESH Caliper files that have no children (see
/// `caliper_groups_equal_scipy`).
const LEAF_ROOTS: [&str; 7] = [
    "MPI_Allreduce",
    "MPI_Bcast",
    "MPI_Comm_dup",
    "MPI_Comm_free",
    "MPI_Comm_split",
    "MPI_Gather",
    "MPI_Initialized",
];

fn check(
    set: &str,
    rows: &[GroupRow],
    groups: &[Vec<&Profile>],
    key: impl Fn(&GroupRow) -> Option<String>,
) -> usize {
    let mut theirs = reference(set);
    if set == "caliper-lulesh" {
        let leaf_roots: Vec<String> = theirs
            .keys()
            .filter(|k| !k.contains(" => ") && !theirs.keys().any(|c| c.starts_with(&format!("{k} => "))))
            .cloned()
            .collect();
        assert_eq!(leaf_roots, LEAF_ROOTS);
        theirs.retain(|k, _| !LEAF_ROOTS.contains(&k.as_str()));
    }
    let ours: BTreeMap<String, &GroupRow> = rows.iter().filter_map(|r| key(r).map(|k| (k, r))).collect();
    assert_eq!(
        ours.keys().collect::<Vec<_>>(),
        theirs.keys().collect::<Vec<_>>(),
        "{set}: events"
    );
    for (k, h) in &theirs {
        let r = ours[k];
        for (g, s) in r.stats.iter().enumerate() {
            let what = format!("{set} {k} group {g}");
            let n = groups[g].len();
            assert_eq!(s.runs, n, "{what}");
            assert_eq!(h.values[g].len(), n, "{what}");
            let [mean, sd, min, max] = h.stats[g];
            assert!(close(s.mean, mean, 1e-12), "{what} mean {} vs {mean}", s.mean);
            assert!(close(s.stddev, sd, 1e-9), "{what} sd {} vs {sd}", s.stddev);
            assert!(
                close(s.min, min, 1e-12) && close(s.max, max, 1e-12),
                "{what} min/max"
            );
        }
        match (r.test, h.test) {
            (Some(t), Some([ht, hdf, hp])) => {
                assert!(close(t.t, ht, 1e-9), "{set} {k}: t {} vs {ht}", t.t);
                assert!(close(t.df, hdf, 1e-9), "{set} {k}: df {} vs {hdf}", t.df);
                assert!(close(t.p_value, hp, 1e-7), "{set} {k}: p {} vs {hp}", t.p_value);
            }
            (Some(t), None) => assert!(t.t.is_nan() && t.p_value.is_nan(), "{set} {k}: SciPy has no test"),
            (None, h) => panic!("{set} {k}: no test, SciPy {h:?}"),
        }
    }
    theirs.len()
}

#[test]
fn tau_groups_equal_scipy() {
    let ss = "tau/taucmdr-mm-strong-scaling-1to8rank";
    let small: Vec<Profile> = [2, 3, 4].map(|k| load(&format!("{ss}/np{k}"))).into();
    let large: Vec<Profile> = [5, 6, 7, 8].map(|k| load(&format!("{ss}/np{k}"))).into();
    let groups = vec![small.iter().collect::<Vec<_>>(), large.iter().collect()];
    let cmp = compare_groups(&groups, "TIME", ValueKind::Exclusive, Normalize::PerThread, false).unwrap();
    let n = check("tau-mm", &cmp.rows, &groups, |r| Some(r.name.clone()));
    assert_eq!(n, 11);
    // At least one event differs significantly between 2-4 and 5-8 ranks.
    assert!(cmp.rows.iter().any(|r| r.test.is_some_and(|t| t.p_value < 0.05)));
}

#[test]
fn caliper_groups_equal_scipy() {
    let cs = "caliper/thicket-mpi-scaling";
    let small: Vec<Profile> = [27, 64].map(|n| load(&format!("{cs}/{n}_cores.cali"))).into();
    let large: Vec<Profile> = [125, 216, 343]
        .map(|n| load(&format!("{cs}/{n}_cores.cali")))
        .into();
    let groups = vec![small.iter().collect::<Vec<_>>(), large.iter().collect()];
    let cmp = compare_groups(
        &groups,
        "Avg time/rank",
        ValueKind::Exclusive,
        Normalize::Total,
        true,
    )
    .unwrap();
    // Hatchet's nodes are call-tree nodes: perfscape's callpath events and the roots of its
    // call tree. A top-level region without children (`MPI_Allreduce` called outside `main`)
    // is a Hatchet root, but in perfscape the flat event of that name is the routine over all
    // its calling contexts (ParaProf's flat profile), so those roots are left out (listed in
    // `LEAF_ROOTS` and checked to be exactly those).
    let all: Vec<&Profile> = groups.iter().flatten().copied().collect();
    let key = |r: &GroupRow| {
        let (run, e) = r
            .events
            .iter()
            .flatten()
            .enumerate()
            .find_map(|(i, e)| e.map(|e| (i, e)))?;
        let p = all[run];
        let in_tree = p.event(e).is_callpath() || p.call_tree().roots().contains(&e);
        in_tree.then(|| {
            r.name
                .split(" => ")
                .map(routine_name)
                .collect::<Vec<_>>()
                .join(" => ")
        })
    };
    let n = check("caliper-lulesh", &cmp.rows, &groups, key);
    assert!(n >= 35, "{n}");
}

/// Repeated runs from `tools/tau_scale.py` with different seeds (the same 16 ranks: totals over
/// threads), made here as the script made them for SciPy (the generator is deterministic).
#[test]
fn tau_scale_seed_groups_equal_scipy() {
    let tools = common::corpus().join("../tools/tau_scale.py");
    let src = common::corpus().join("tau-real/mpi-stencil-np64-callpath-commmatrix");
    let tmp = tempfile::tempdir().unwrap();
    let runs: Vec<Profile> = (1..=6)
        .map(|seed| {
            let out = tmp.path().join(format!("seed{seed}"));
            let status = std::process::Command::new("python3")
                .arg(&tools)
                .arg(&src)
                .arg(&out)
                .args(["--ranks", "16", "--lines", "200", "--seed", &seed.to_string()])
                .stdout(std::process::Stdio::null())
                .status()
                .expect("python3 runs tau_scale.py");
            assert!(status.success());
            let o = perfscape_formats::open(&out, &perfscape_formats::OpenOptions::default()).unwrap();
            assert!(!o.report.is_partial());
            o.profile
        })
        .collect();
    let groups = vec![runs[..3].iter().collect::<Vec<_>>(), runs[3..].iter().collect()];
    let cmp = compare_groups(&groups, "TIME", ValueKind::Exclusive, Normalize::Total, false).unwrap();
    let n = check("tau-scale-seeds", &cmp.rows, &groups, |r| Some(r.name.clone()));
    assert_eq!(n, 218);
}
