//! `perfscape store` as a user runs it: add, list, rm, `sql --store` equal to the same query
//! over the runs in memory; a process killed during `add` leaves the store as it was; and
//! Apache Spark reading the store's directory unchanged answers three queries as perfscape
//! does.

#![cfg(feature = "sql")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{corpus, perfscape, stderr, stdout};
use std::path::{Path, PathBuf};
use std::process::Command;

fn run(name: &str) -> String {
    corpus().join("tau-real").join(name).display().to_string()
}

/// Rows of `perfscape sql ... -f json` as JSON values.
fn rows(text: &str) -> Vec<serde_json::Value> {
    text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn sql_store(store: &Path, q: &str) -> Vec<serde_json::Value> {
    let out = perfscape(&["sql", "--store", store.to_str().unwrap(), q, "-f", "json"]);
    assert!(out.status.success(), "{q}: {}", stderr(&out));
    rows(&stdout(&out))
}

fn add(store: &Path, runs: &[&str], tag: &str) {
    let mut args = vec!["store", "add", "--store", store.to_str().unwrap(), "--tag", tag];
    args.extend_from_slice(runs);
    let out = perfscape(&args);
    assert!(out.status.success(), "{}", stderr(&out));
}

/// A store of three runs: np4 and np8 tagged compiler=gcc, np64 compiler=clang.
fn three_runs(dir: &Path) -> PathBuf {
    let store = dir.join("store");
    add(
        &store,
        &[
            &run("mpi-stencil-np4-profile"),
            &run("mpi-stencil-np8-multimetric"),
        ],
        "compiler=gcc",
    );
    add(
        &store,
        &[&run("mpi-stencil-np64-callpath-commmatrix")],
        "compiler=clang",
    );
    store
}

const PER_RUN: &str = "SELECT r.name, COUNT(*) AS n, SUM(v.exclusive) AS x FROM event_values v JOIN runs r USING (run) \
                       WHERE v.metric = 0 GROUP BY r.name ORDER BY r.name";

#[test]
fn add_list_rm_and_query_across_runs() {
    let dir = tempfile::tempdir().unwrap();
    let store = three_runs(dir.path());
    let out = perfscape(&["store", "list", "--store", store.to_str().unwrap(), "-f", "json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let listed: Vec<serde_json::Value> = serde_json::from_str(&stdout(&out)).unwrap();
    let ids: Vec<u64> = listed.iter().map(|r| r["run"].as_u64().unwrap()).collect();
    assert_eq!(ids, vec![0, 1, 2]);
    assert_eq!(listed[2]["tags"]["compiler"], "clang");
    // The store answers as the runs loaded in memory do.
    let stored = sql_store(&store, PER_RUN);
    let out = perfscape(&[
        "sql",
        &run("mpi-stencil-np4-profile"),
        &run("mpi-stencil-np8-multimetric"),
        &run("mpi-stencil-np64-callpath-commmatrix"),
        PER_RUN,
        "-f",
        "json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stored, rows(&stdout(&out)));
    assert_eq!(stored.len(), 3);
    // rm: the run is gone from the catalog, its files and the answers; numbers are not reused.
    let out = perfscape(&["store", "rm", "--store", store.to_str().unwrap(), "1"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!store.join("event_values/run-1.parquet").exists());
    let after = sql_store(&store, "SELECT run FROM runs ORDER BY run");
    assert_eq!(
        after,
        vec![serde_json::json!({"run": 0}), serde_json::json!({"run": 2})]
    );
    add(&store, &[&run("mpi-stencil-np4-merged")], "compiler=gcc");
    let after = sql_store(&store, "SELECT MAX(run) AS m FROM runs");
    assert_eq!(after, vec![serde_json::json!({"m": 3})]);
    let out = perfscape(&["store", "rm", "--store", store.to_str().unwrap(), "7"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("no run 7"), "{}", stderr(&out));
    // A directory that is not a store is refused, never written into.
    let other = dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("notes.txt"), "mine").unwrap();
    let out = perfscape(&[
        "store",
        "add",
        "--store",
        other.to_str().unwrap(),
        &run("mpi-stencil-np4-profile"),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("not a perfscape store"), "{}", stderr(&out));
}

/// Files under the store's table directories.
fn table_files(store: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for t in std::fs::read_dir(store).unwrap() {
        let t = t.unwrap().path();
        if t.is_dir() && !t.file_name().unwrap().to_str().unwrap().starts_with('.') {
            for f in std::fs::read_dir(&t).unwrap() {
                out.push(f.unwrap().path().display().to_string());
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_killed_add_leaves_the_store_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let store = three_runs(dir.path());
    let catalog = std::fs::read(store.join("catalog.json")).unwrap();
    let answer = sql_store(&store, PER_RUN);
    let files = table_files(&store);
    let many: Vec<String> = [
        "mpi-stencil-np128-callpath-multimetric",
        "mpi-stencil-np64-callpath-commmatrix",
        "mpi-stencil-np8-snapshot",
        "mpi-stencil-np4-dumpincr",
        "pthread-heat-t4-multimetric",
    ]
    .iter()
    .map(|r| run(r))
    .collect();
    let cache = tempfile::tempdir().unwrap();
    let mut completed = 0;
    // After `rm`, the catalog lists the same runs as before but with a higher `next_run`: compare
    // later states with the one after each cleanup.
    let mut catalog = catalog;
    for delay_ms in [0u64, 5, 10, 20, 40, 80, 120, 160, 240, 320, 480] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_perfscape"))
            .env("PERFSCAPE_CACHE_DIR", cache.path())
            .args(["store", "add", "--store", store.to_str().unwrap()])
            .args(&many)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        let _ = child.kill();
        let status = child.wait().unwrap();
        let now = std::fs::read(store.join("catalog.json")).unwrap();
        if now != catalog {
            // The add reached its commit point (the catalog was replaced), whether or not the
            // kill came before the process exited: every run is in, none in part.
            completed += 1;
            let listed = perfscape(&["store", "list", "--store", store.to_str().unwrap(), "-f", "json"]);
            let listed: Vec<serde_json::Value> = serde_json::from_str(&stdout(&listed)).unwrap();
            let extra: Vec<String> = listed
                .iter()
                .map(|r| r["run"].as_u64().unwrap())
                .filter(|&id| id > 2)
                .map(|id| id.to_string())
                .collect();
            assert_eq!(
                extra.len(),
                many.len(),
                "after {delay_ms} ms: all runs added or none"
            );
            let mut args = vec!["store", "rm", "--store", store.to_str().unwrap()];
            args.extend(extra.iter().map(String::as_str));
            assert!(perfscape(&args).status.success());
            catalog = std::fs::read(store.join("catalog.json")).unwrap();
        } else {
            // Killed before the commit point: the answers are as they were.
            assert!(
                !status.success(),
                "an add that finished left the catalog unchanged"
            );
            assert_eq!(sql_store(&store, PER_RUN), answer, "killed after {delay_ms} ms");
        }
    }
    assert!(completed < 11, "some add was killed before it finished");
    // The next change of the store removes whatever a killed add left behind.
    let out = perfscape(&["store", "rm", "--store", store.to_str().unwrap(), "2"]);
    assert!(out.status.success(), "{}", stderr(&out));
    add(
        &store,
        &[&run("mpi-stencil-np64-callpath-commmatrix")],
        "compiler=clang",
    );
    let left: Vec<String> = std::fs::read_dir(&store)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".staging"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    let now = table_files(&store);
    assert_eq!(
        now.len(),
        files.len(),
        "one file per table and run again: {now:?}"
    );
}

/// The Python with pyspark: `$PERFSCAPE_SPARK_PYTHON` (scripts/test.sh installs pyspark in a
/// virtual environment in the user's cache and sets it).
fn spark_python() -> PathBuf {
    let p = std::env::var_os("PERFSCAPE_SPARK_PYTHON").map(PathBuf::from);
    match p {
        Some(p) if p.exists() => p,
        _ => panic!(
            "PERFSCAPE_SPARK_PYTHON must name a Python with pyspark (and Java must be installed): \
             bash scripts/test.sh installs both"
        ),
    }
}

#[test]
fn spark_reads_the_store_and_answers_alike() {
    let dir = tempfile::tempdir().unwrap();
    let store = three_runs(dir.path());
    let queries = [
        // Per-event totals across runs.
        "SELECT e.name, SUM(v.exclusive) AS total FROM event_values v JOIN events e ON v.run = e.run AND v.event = e.event \
         WHERE v.metric = 0 AND NOT e.is_callpath GROUP BY e.name ORDER BY e.name",
        // The slowest thread of every run (largest flat inclusive value).
        "SELECT s.run, s.thread, s.inclusive FROM (SELECT v.run, v.thread, v.inclusive, \
         ROW_NUMBER() OVER (PARTITION BY v.run ORDER BY v.inclusive DESC, v.thread) AS k \
         FROM event_values v JOIN events e ON v.run = e.run AND v.event = e.event \
         WHERE v.metric = 0 AND NOT e.is_callpath) AS s WHERE s.k = 1 ORDER BY s.run",
        // One event over a tag.
        "SELECT t.value AS compiler, AVG(v.exclusive) AS mean_exclusive, COUNT(*) AS n FROM event_values v \
         JOIN events e ON v.run = e.run AND v.event = e.event JOIN tags t ON t.run = v.run \
         WHERE t.key = 'compiler' AND e.name = 'MPI_Allreduce()' AND v.metric = 0 GROUP BY t.value ORDER BY t.value",
    ];
    let qfile = dir.path().join("queries.json");
    std::fs::write(&qfile, serde_json::to_string(&queries).unwrap()).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/ref/spark_store_queries.py");
    let out = Command::new(spark_python())
        .arg(&script)
        .arg(&store)
        .arg(&qfile)
        .env("SPARK_LOCAL_IP", "127.0.0.1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "spark: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let spark: Vec<Vec<Vec<serde_json::Value>>> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(spark.len(), queries.len());
    for (q, want) in queries.iter().zip(&spark) {
        // perfscape's answer as CSV: values in column order.
        let out = perfscape(&["sql", "--store", store.to_str().unwrap(), q, "-f", "csv"]);
        assert!(out.status.success(), "{q}: {}", stderr(&out));
        let text = stdout(&out);
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let mine: Vec<Vec<String>> = reader
            .records()
            .map(|r| r.unwrap().iter().map(str::to_string).collect())
            .collect();
        assert_eq!(mine.len(), want.len(), "{q}");
        assert!(!mine.is_empty(), "{q}");
        for (m, w) in mine.iter().zip(want) {
            assert_eq!(m.len(), w.len(), "{q}");
            for (a, b) in m.iter().zip(w) {
                match (a.parse::<f64>(), b.as_f64()) {
                    (Ok(x), Some(y)) => assert!(
                        (x - y).abs() <= 1e-9 * x.abs().max(y.abs()),
                        "{q}: {x} vs Spark {y}"
                    ),
                    _ => assert_eq!(Some(a.as_str()), b.as_str(), "{q}"),
                }
            }
        }
    }
}
