//! Sessions are read only and bounded: writes, file access, several statements, syntax
//! errors, time and memory past the limits are refused with clear errors.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use perfscape_sql::{QueryLimits, RunSet, SqlError, SqlSession};
use std::sync::Arc;
use std::time::Duration;

const RUN: &str = "tau-real/mpi-stencil-np4-profile";

fn session_with(limits: QueryLimits) -> SqlSession {
    let mut set = RunSet::new();
    set.add(RUN, "tau", Arc::new(common::load(RUN)));
    SqlSession::new(&set, limits).unwrap()
}

#[test]
fn writes_and_file_access_are_refused() {
    let s = session_with(QueryLimits::default());
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("out.csv");
    let t = target.display();
    for q in [
        format!("COPY (SELECT 1) TO '{t}'"),
        format!("CREATE EXTERNAL TABLE x STORED AS CSV LOCATION '{t}'"),
        "CREATE TABLE t AS SELECT 1".to_string(),
        "CREATE VIEW v AS SELECT 1".to_string(),
        "DROP TABLE runs".to_string(),
        "INSERT INTO metrics VALUES (0, 9, 'x', 'y', 'z')".to_string(),
        "DELETE FROM runs".to_string(),
        "SET datafusion.execution.batch_size = 1".to_string(),
        "SELECT 1; SELECT 2".to_string(),
        "EXPLAIN ANALYZE INSERT INTO runs SELECT * FROM runs".to_string(),
    ] {
        match s.query_blocking(&q) {
            Err(SqlError::Refused(m)) => assert!(!m.is_empty(), "{q}"),
            other => panic!("{q}: expected a refusal, got {other:?}"),
        }
    }
    assert!(!target.exists(), "nothing was written");
    // A path is not a table.
    match s.query_blocking("SELECT * FROM '/etc/passwd'") {
        Err(SqlError::Query(m)) => assert!(m.contains("not found"), "{m}"),
        other => panic!("a path as a table: {other:?}"),
    }
    // The tables cannot be changed: still 4 threads after the refused statements.
    let r = s.query_blocking("SELECT COUNT(*) n FROM threads").unwrap();
    assert_eq!(common::column_f64(&r, "n"), vec![4.0]);
}

#[test]
fn errors_name_the_position() {
    let s = session_with(QueryLimits::default());
    let e = s
        .query_blocking("SELECT name FROM events WHERE nme = 'x'")
        .unwrap_err();
    let m = e.to_string();
    assert!(m.contains("nme") && m.contains("line 1, column 31"), "{m}");
    let m = s.query_blocking("SELEC 1").unwrap_err().to_string();
    assert!(
        m.starts_with("syntax error") && m.contains("Line: 1, Column: 1"),
        "{m}"
    );
    let m = s.query_blocking("SELECT * FROM nosuch").unwrap_err().to_string();
    assert!(m.contains("nosuch") && m.contains("line 1, column 15"), "{m}");
}

#[test]
fn time_and_memory_limits_stop_a_query() {
    let s = session_with(QueryLimits {
        time: Duration::from_millis(500),
        ..QueryLimits::default()
    });
    let start = std::time::Instant::now();
    match s.query_blocking("SELECT COUNT(*) FROM generate_series(1, 1000000000000)") {
        Err(SqlError::TimeLimit { seconds }) => assert_eq!(seconds, 0.5),
        other => panic!("expected the time limit, got {other:?}"),
    }
    // Cancelled promptly, not run to the end (which would take hours).
    assert!(start.elapsed() < Duration::from_secs(60));

    let s = session_with(QueryLimits {
        memory_bytes: 1 << 20,
        ..QueryLimits::default()
    });
    match s.query_blocking("SELECT x, COUNT(*) FROM generate_series(1, 5000000) t(x) GROUP BY x ORDER BY x") {
        Err(SqlError::MemoryLimit { limit_bytes, .. }) => assert_eq!(limit_bytes, 1 << 20),
        other => panic!("expected the memory limit, got {other:?}"),
    }
}

#[test]
fn max_rows_truncates() {
    let s = session_with(QueryLimits {
        max_rows: Some(3),
        ..QueryLimits::default()
    });
    let r = s.query_blocking("SELECT * FROM event_values").unwrap();
    assert_eq!((r.rows, r.truncated), (3, true));
    let r = s.query_blocking("SELECT * FROM metrics").unwrap();
    assert_eq!((r.rows, r.truncated), (1, false));
}
