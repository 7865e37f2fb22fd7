//! `--derive` and `--filter` as a user runs them: the derived metric in SQL and in the
//! tables (cells without a value are NULL and counted), events hidden and counted, and bad
//! definitions refused with where they are wrong.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{corpus, perfscape, stderr, stdout};

const RUN: &str = "tau-real/mpi-stencil-np8-multimetric";

/// The per (thread, event) table of `oracle/paraprof.csv` (ParaProf's `--text` output, up to
/// its user-event table): its header and rows, split at tabs.
fn paraprof_table() -> (Vec<String>, Vec<Vec<String>>) {
    let text = std::fs::read_to_string(corpus().join(RUN).join("oracle/paraprof.csv")).unwrap();
    let intervals = text.split("Node\tContext\tThread\tUser Event").next().unwrap();
    let mut lines = intervals.lines().filter(|l| !l.trim().is_empty());
    let split = |l: &str| l.split('\t').map(String::from).collect::<Vec<_>>();
    let header = split(lines.next().unwrap());
    (header, lines.map(split).collect())
}

/// The value of column `name` in `row`.
fn cell(header: &[String], row: &[String], name: &str) -> f64 {
    row[header.iter().position(|h| h == name).unwrap()]
        .parse()
        .unwrap()
}

/// Rows of ParaProf's table whose `Exclusive TIME` is 0 (where `CPU_TIME / TIME` has no
/// value), and all its rows (used by the `sql` test only).
#[cfg(feature = "sql")]
fn paraprof_zero_time_rows() -> (usize, usize) {
    let (header, rows) = paraprof_table();
    let zero = rows
        .iter()
        .filter(|r| cell(&header, r, "Exclusive TIME") == 0.0)
        .count();
    (zero, rows.len())
}

#[cfg(feature = "sql")]
#[test]
fn a_derived_metric_is_a_metric_in_sql_with_nulls_where_it_has_no_value() {
    let run = corpus().join(RUN);
    let (zero, rows) = paraprof_zero_time_rows();
    assert!(zero > 0);
    let o = perfscape(&[
        "sql",
        run.to_str().unwrap(),
        "--derive",
        "CPU share = CPU_TIME / TIME",
        "SELECT m.unit, m.combine, COUNT(*) AS cells, COUNT(v.exclusive) AS with_value \
         FROM event_values v JOIN metrics m USING (run, metric) WHERE m.name = 'CPU share' \
         GROUP BY m.unit, m.combine",
        "--format",
        "csv",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o).lines().nth(1).unwrap(),
        format!("ratio,mean,{rows},{}", rows - zero)
    );
    // The count of values without a value is printed (exclusive and inclusive).
    let err = stderr(&o);
    assert!(
        err.contains("derived metric CPU share = CPU_TIME / TIME"),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "of {} exclusive and inclusive values have no value",
            2 * rows
        )),
        "{err}"
    );
}

/// Per event, the sum over threads of `Exclusive TIME - Exclusive CPU_TIME` in ParaProf's
/// table, largest first.
fn paraprof_off_cpu() -> Vec<(String, f64)> {
    let (header, rows) = paraprof_table();
    let f = header.iter().position(|h| h == "Function").unwrap();
    let mut sums: std::collections::BTreeMap<String, f64> = Default::default();
    for r in &rows {
        *sums.entry(r[f].clone()).or_default() +=
            cell(&header, r, "Exclusive TIME") - cell(&header, r, "Exclusive CPU_TIME");
    }
    let mut out: Vec<(String, f64)> = sums.into_iter().collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1));
    out
}

#[test]
fn the_summary_ranks_by_a_derived_metric() {
    let run = corpus().join(RUN);
    let o = perfscape(&[
        "top",
        run.to_str().unwrap(),
        "--derive",
        "Off CPU = TIME - CPU_TIME",
        "--metric",
        "Off CPU",
        "--format",
        "csv",
        "-n",
        "5",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    let expected = paraprof_off_cpu();
    let rows: Vec<Vec<String>> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(String::from).collect())
        .collect();
    assert_eq!(rows.len(), 5, "{text}");
    // The ranking and each sum equal ParaProf's values of TIME - CPU_TIME, event by event.
    for (row, (name, sum)) in rows.iter().zip(&expected) {
        assert_eq!(&row[1], name, "{text}");
        let got: f64 = row[4].parse().unwrap();
        assert!(
            (got - sum).abs() <= 1e-9 * sum.abs().max(1.0),
            "{name}: {got} vs {sum}"
        );
    }
}

#[test]
fn a_filter_hides_events_and_says_how_many() {
    let run = corpus().join(RUN);
    let all = perfscape(&["top", run.to_str().unwrap(), "--format", "csv", "-n", "1000"]);
    let o = perfscape(&[
        "top",
        run.to_str().unwrap(),
        "--filter",
        "!group=MPI",
        "--format",
        "csv",
        "-n",
        "1000",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (all, some) = (stdout(&all), stdout(&o));
    let mpi = all.lines().filter(|l| l.contains("MPI_")).count();
    assert!(mpi > 0);
    assert!(!some.contains("MPI_"), "{some}");
    assert_eq!(some.lines().count(), all.lines().count() - mpi);
    let err = stderr(&o);
    assert!(err.contains(&format!("filter !group=MPI: {mpi} of")), "{err}");
}

#[test]
fn bad_definitions_say_what_and_where() {
    let run = corpus().join(RUN);
    let r = run.to_str().unwrap();
    let o = perfscape(&["summary", r, "--derive", "IPC = PAPI_TOT_INS / TIME"]);
    assert!(!o.status.success());
    let err = stderr(&o);
    // The column is the name's place in the expression; the message is said once.
    assert!(err.contains("column 1: no metric `PAPI_TOT_INS`"), "{err}");
    assert_eq!(err.matches("no metric").count(), 1, "{err}");
    assert!(
        err.contains("CPU_TIME, TAU_MPI_MESSAGE_SIZE") || err.contains("TIME, "),
        "{err}"
    );
    let o = perfscape(&["summary", r, "--derive", "TIME / 2"]);
    assert!(
        stderr(&o).contains("expected `NAME = EXPRESSION`"),
        "{}",
        stderr(&o)
    );
    let o = perfscape(&["summary", r, "--filter", "name=MPI_[Send"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("pattern character"), "{}", stderr(&o));
}

#[test]
fn a_live_run_refuses_derive_and_filter_rather_than_ignoring_them() {
    let run = corpus().join("tau-real/mpi-stencil-np8-snapshot");
    let r = run.to_str().unwrap();
    for extra in [["--derive", "T2 = TIME * 2"], ["--filter", "!group=MPI"]] {
        let mut args = vec!["serve", r, "--replay", "--no-open"];
        args.extend(extra);
        let o = perfscape(&args);
        assert!(!o.status.success(), "{extra:?} was accepted");
        assert!(
            stderr(&o).contains("not yet to the samples of a live run"),
            "{}",
            stderr(&o)
        );
    }
}
