//! A short load test of `perfscape serve` (issue "hardening"): `bench/soak.mjs` with 20
//! clients for 10 s on loopback, asking the view endpoints with varied parameters (every new
//! combination is a new cache entry) on a 4,096-rank run under a small memory budget
//! (`--cache-memory 192M`). Asserts that every request succeeded, that the cache filled half
//! its part of the budget (else the check below proves nothing), and that the server's peak
//! RSS stayed within the budget plus 32 MiB of slack for the allocator's timing (API.md,
//! "Memory"). Measured when written: 83 MiB after loading, a peak of 159 MiB. Before the
//! computations were limited to one per core and jemalloc gave freed memory back, 20 clients
//! grew it by about three times a 96 MiB budget. The long version (100 clients × 60 s, release
//! build, default budget, no allowance) is a benchmark, in BENCHMARKS.md. Needs Node.js (the
//! front end's build needs it anyway).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::process::Command;

#[test]
fn twenty_clients_for_ten_seconds_get_answers_within_the_memory_budget() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    // The run the browser tests use too (made once, kept in the target directory).
    let run = Path::new(env!("CARGO_TARGET_TMPDIR")).join("np4096-lines5000");
    if !run.join("profile.4095.0.0").is_file() {
        let status = Command::new("python3")
            .arg(common::corpus().join("../tools/tau_scale.py"))
            .arg(repo.join("examples/tau/mpi-stencil-np64-callpath-commmatrix"))
            .arg(&run)
            .args(["--ranks", "4096", "--lines", "5000"])
            .status()
            .expect("python3 runs tau_scale.py");
        assert!(status.success(), "tau_scale.py failed");
    }
    let cache = tempfile::tempdir().unwrap();
    let out = Command::new("node")
        .arg(repo.join("bench/soak.mjs"))
        .args(["--bin", env!("CARGO_BIN_EXE_perfscape"), "--run"])
        .arg(&run)
        .args([
            "--clients",
            "20",
            "--seconds",
            "10",
            "--cache-memory",
            "192M",
            "--allowance",
            "32M",
            "--json",
        ])
        // serve is given --no-cache; the directory is for anything else it might keep.
        .env("PERFSCAPE_CACHE_DIR", cache.path())
        .output()
        .expect("node runs bench/soak.mjs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stdout.lines().last().unwrap_or_default();
    let r: serde_json::Value =
        serde_json::from_str(line).unwrap_or_else(|e| panic!("no JSON result ({e}):\n{stdout}\n{stderr}"));
    eprintln!("{r:#}");
    assert_eq!(r["errors"], 0, "failed requests: {}", r["failures"]);
    assert!(
        r["requests"].as_u64().unwrap() >= 100,
        "too few requests to mean anything: {r}"
    );
    assert_eq!(r["server_ok"], true, "the server did not answer after the load");
    let kept = &r["server_kept_max"];
    let cache_budget = kept["cache_budget_bytes"].as_f64().unwrap();
    assert!(
        cache_budget > 0.25 * r["budget_bytes"].as_f64().unwrap(),
        "the loaded run left the cache little of the budget: {r}"
    );
    assert!(
        kept["held_bytes"].as_f64().unwrap() + kept["building_bytes"].as_f64().unwrap() >= 0.5 * cache_budget,
        "the cache did not fill half its budget: the load proves nothing about it: {r}"
    );
    assert_eq!(
        r["within_budget_and_allowance"], true,
        "the server grew past its budget and the allowance: {r}"
    );
    let endpoints = r["endpoints"].as_array().unwrap();
    assert!(endpoints.len() >= 7, "every endpoint was asked: {r}");
    assert!(
        out.status.success(),
        "soak.mjs exited {}: {stdout}\n{stderr}",
        out.status
    );
}
