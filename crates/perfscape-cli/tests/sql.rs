//! `perfscape sql` and `perfscape export` as a user runs them: values against the TAU
//! files' own sums, output formats, exit statuses and bad queries.

#![cfg(feature = "sql")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{corpus, perfscape, stderr, stdout};

/// Sum over the `profile.*` files of a TAU run of `MPI_Allreduce()`'s exclusive value (the
/// third number after the quoted name: `"name" calls subcalls exclusive inclusive ...`).
fn tau_sum(run: &std::path::Path, event: &str) -> f64 {
    let mut sum = 0.0;
    for f in std::fs::read_dir(run).unwrap() {
        let f = f.unwrap().path();
        if !f.file_name().unwrap().to_str().unwrap().starts_with("profile.") {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        // TAU pads the name inside the quotes: `"MPI_Allreduce()  " 400 0 282724 ...`.
        let line = text
            .lines()
            .find(|l| {
                l.strip_prefix('"')
                    .and_then(|r| r.split('"').next())
                    .map(str::trim_end)
                    == Some(event)
            })
            .unwrap();
        let after = line[1..].split_once('"').unwrap().1;
        let fields: Vec<&str> = after.split_whitespace().collect();
        sum += fields[2].parse::<f64>().unwrap();
    }
    sum
}

#[test]
fn sql_sums_equal_the_tau_files() {
    let run = corpus().join("tau-real/mpi-stencil-np4-profile");
    let want = tau_sum(&run, "MPI_Allreduce()");
    let out = perfscape(&[
        "sql",
        run.to_str().unwrap(),
        "SELECT SUM(v.exclusive) AS x FROM event_values v JOIN events e USING (run, event) WHERE e.name = 'MPI_Allreduce()'",
        "--format",
        "csv",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("x"));
    let got: f64 = lines.next().unwrap().parse().unwrap();
    assert!((got - want).abs() <= 1e-9 * want, "{got} vs {want}");
    // Two runs: run 0 and run 1 in the order given.
    let out = perfscape(&[
        "sql",
        run.to_str().unwrap(),
        corpus()
            .join("tau-real/mpi-stencil-np8-multimetric")
            .to_str()
            .unwrap(),
        "SELECT run, thread_count FROM runs ORDER BY run",
        "-f",
        "json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "{\"run\":0,\"thread_count\":4}\n{\"run\":1,\"thread_count\":8}\n"
    );
}

#[test]
fn bad_queries_fail_with_the_reason() {
    let run = corpus().join("tau-real/mpi-stencil-np4-profile");
    let out = perfscape(&["sql", run.to_str().unwrap(), "SELECT nope FROM events"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("line 1, column 8"), "{}", stderr(&out));
    let out = perfscape(&[
        "sql",
        run.to_str().unwrap(),
        "COPY (SELECT 1) TO '/tmp/perfscape-x.csv'",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("refused"), "{}", stderr(&out));
    let out = perfscape(&["sql", run.to_str().unwrap(), "SELECT 1", "--format", "parquet"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("--out"), "{}", stderr(&out));
}

#[test]
fn export_writes_parquet_by_run_and_sql_writes_parquet() {
    let run = corpus().join("tau-real/mpi-stencil-np4-profile");
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("tables");
    let out = perfscape(&["export", run.to_str().unwrap(), out_dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    for t in [
        "runs",
        "threads",
        "metrics",
        "events",
        "event_values",
        "user_events",
        "metadata",
    ] {
        let f = out_dir.join(t).join("run=0").join("part-0.parquet");
        let bytes = std::fs::read(&f).unwrap();
        assert_eq!(&bytes[..4], b"PAR1", "{}", f.display());
    }
    assert!(!out_dir.join("samples").exists(), "an empty table is not written");
    let file = dir.path().join("top.parquet");
    let out = perfscape(&[
        "sql",
        run.to_str().unwrap(),
        "SELECT event, SUM(exclusive) x FROM event_values GROUP BY event",
        "-f",
        "parquet",
        "-o",
        file.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let bytes = std::fs::read(&file).unwrap();
    assert_eq!(
        (&bytes[..4], &bytes[bytes.len() - 4..]),
        (&b"PAR1"[..], &b"PAR1"[..])
    );
}
