//! Findings on runs with planted faults: `tau_scale.py` (in `../shared/tools`) copies the
//! 64-rank example to 4,096 ranks, multiplies the useful (non-MPI) timers by a ramp from 1.0 to
//! 1.3 over the ranks, and makes about 1 rank in 1,000 a straggler (one event x 3); `--truth`
//! writes what it planted. For three seeds: every planted straggler the documented thresholds
//! can see is found (one whose planted value is at least twice its event's median while at most
//! 1 thread in 1,000 is, checked here from the per-thread values; seed 3's rank 2047 is x3 in
//! an event where 290 ranks copying other source ranks are as far off), no other straggler and no communication-bound thread is
//! reported, the imbalance findings are compute events only, and the ramp shows in their
//! evidence.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use perfscape_analysis::categories::{Categorized, RuleSet, categorize};
use perfscape_analysis::findings::{FindingKind, FindingOptions, findings};
use perfscape_formats::{OpenOptions, open};
use perfscape_model::event::{normalize_timer_name, routine_name};
use perfscape_model::{MetricId, Profile, ValueKind};
use std::path::Path;
use std::process::Command;

/// Runs `tau_scale.py` into a temporary directory; returns the directory and the truth JSON.
fn planted_run(seed: u32, dir: &Path) -> serde_json::Value {
    let tool = common::corpus().join("../tools/tau_scale.py");
    let example =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/tau/mpi-stencil-np64-callpath-commmatrix");
    let truth = dir.join("truth.json");
    let run = dir.join("run");
    let status = Command::new("python3")
        .arg(&tool)
        .arg(&example)
        .arg(&run)
        .args(["--ranks", "4096", "--seed", &seed.to_string()])
        .arg("--truth")
        .arg(&truth)
        .stdout(std::process::Stdio::null())
        .status()
        .expect("python3 runs tau_scale.py");
    assert!(status.success());
    serde_json::from_str(&std::fs::read_to_string(truth).unwrap()).unwrap()
}

/// Useful work in this program, written here: every timer that is not an MPI call.
fn useful_mask(p: &Profile) -> Vec<bool> {
    p.event_ids()
        .map(|e| !routine_name(p.event(e).leaf()).starts_with("MPI_"))
        .collect()
}

/// The run's categories by the default rules.
fn categorized(p: &Profile) -> Categorized {
    categorize(p, MetricId(0), &RuleSet::defaults()).unwrap()
}

/// Whether the planted value stands out as the options define it, computed here from the
/// per-thread values: in exclusive or inclusive time it is at least `straggler_ratio` times the
/// event's median, and at most `straggler_max_share` of the threads are (else they are a class
/// of threads, such as the copies of the gather root, not stragglers).
fn visible(p: &Profile, e: perfscape_model::EventId, rank: usize, opts: &FindingOptions) -> bool {
    let ratio = opts.straggler_ratio;
    let allowed = ((opts.straggler_max_share * p.threads().len() as f64).floor() as usize).max(1);
    let col = p.interval(e);
    [ValueKind::Exclusive, ValueKind::Inclusive]
        .into_iter()
        .any(|kind| {
            let mut v = col.values(kind, MetricId(0)).to_vec();
            v.sort_by(f64::total_cmp);
            let n = v.len();
            let median = if n % 2 == 1 {
                v[n / 2]
            } else {
                (v[n / 2 - 1] + v[n / 2]) / 2.0
            };
            let row = col.row_of(perfscape_model::ThreadIndex::from(rank)).unwrap();
            let far = v.iter().filter(|&&x| x >= ratio * median).count();
            col.values(kind, MetricId(0))[row] >= ratio * median && far <= allowed
        })
}

fn check_seed(seed: u32) {
    let dir = tempfile::tempdir().unwrap();
    let truth = planted_run(seed, dir.path());
    let p = open(&dir.path().join("run"), &OpenOptions::default())
        .unwrap()
        .profile;
    assert_eq!(p.threads().len(), 4096);
    let opts = FindingOptions::default();
    let cat = categorized(&p);
    let f = findings(&p, MetricId(0), Some(&cat), &opts);

    let planted: Vec<(usize, String)> = truth["stragglers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let name = normalize_timer_name(s["event"].as_str().unwrap()).into_owned();
            (s["rank"].as_u64().unwrap() as usize, name)
        })
        .collect();
    assert!(!planted.is_empty(), "seed {seed} planted nothing");
    let stragglers: Vec<_> = f
        .findings
        .iter()
        .filter(|x| x.kind == FindingKind::Straggler)
        .collect();
    let mut found = 0;
    for (rank, name) in &planted {
        let e = p.event_by_name(name).unwrap_or_else(|| panic!("no event {name}"));
        let hit = stragglers
            .iter()
            .any(|s| s.thread.map(|t| t.index()) == Some(*rank) && s.event == Some(e));
        if visible(&p, e, *rank, &opts) {
            assert!(
                hit,
                "seed {seed}: planted straggler rank {rank} in {name} not found: {stragglers:#?}"
            );
            found += 1;
        } else {
            eprintln!("seed {seed}: rank {rank} x3 in {name} does not stand out from the other threads");
        }
    }
    assert!(
        found * 2 >= planted.len(),
        "seed {seed}: only {found} of {} visible",
        planted.len()
    );
    for s in &stragglers {
        let rank = s.thread.unwrap().index();
        let name = p.event_name(s.event.unwrap());
        assert!(
            planted.iter().any(|(r, n)| *r == rank && *n == name),
            "seed {seed}: straggler not planted: {s:#?}"
        );
    }

    let useful = useful_mask(&p);
    let imbalance: Vec<_> = f
        .findings
        .iter()
        .filter(|x| x.kind == FindingKind::Imbalance)
        .collect();
    assert!(!imbalance.is_empty(), "seed {seed}: the ramp was not reported");
    for i in &imbalance {
        let e = i.event.unwrap();
        assert!(
            useful[e.index()],
            "seed {seed}: imbalance of a non-compute event: {i:#?}"
        );
    }
    assert!(
        imbalance
            .iter()
            .any(|i| i.evidence.iter().any(|l| l.contains("grows along the threads"))),
        "seed {seed}: no ramp in the evidence: {imbalance:#?}"
    );
    assert!(
        !f.findings
            .iter()
            .any(|x| x.kind == FindingKind::CommunicationBound),
        "seed {seed}: {:#?}",
        f.findings
    );
}

#[test]
fn planted_stragglers_and_ramp_seed_1() {
    check_seed(1);
}

#[test]
fn planted_stragglers_and_ramp_seed_2() {
    check_seed(2);
}

#[test]
fn planted_stragglers_and_ramp_seed_3() {
    check_seed(3);
}
