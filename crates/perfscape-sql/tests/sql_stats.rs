//! SQL over `event_values` gives the statistics `perfscape stats` prints (the ParaProf-checked
//! `perfscape_analysis::stats`), for every metric of every event of every tau-real profile.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{close, column_f64, load, session};
use perfscape_analysis::event_stats;
use perfscape_model::{EventId, MetricId};

const RUNS: [&str; 8] = [
    "tau-real/mpi-stencil-np64-callpath-commmatrix",
    "tau-real/mpi-stencil-np128-callpath-multimetric",
    "tau-real/mpi-stencil-np8-multimetric",
    "tau-real/mpi-stencil-np4-merged",
    "tau-real/mpi-stencil-np4-compinst-callpath",
    "tau-real/omp-matmul-t4-tauexec-ebs",
    "tau-real/pthread-heat-t4-multimetric",
    "tau-real/mpi-stencil-np8-snapshot",
];

#[test]
fn per_event_statistics_equal_the_cli() {
    for run in RUNS {
        let p = load(run).profile;
        let s = session(&[run]);
        let r = s
            .query_blocking(
                "SELECT v.event, v.metric, COUNT(*) AS threads, SUM(v.exclusive) AS sum_x,
                        MIN(v.exclusive) AS min_x, MAX(v.exclusive) AS max_x, STDDEV_POP(v.exclusive) AS sd_x,
                        SUM(v.inclusive) AS sum_i, MAX(v.inclusive) AS max_i, SUM(v.calls) AS calls,
                        SUM(v.subcalls) AS subcalls,
                        MAX(v.exclusive) * r.thread_count / SUM(v.exclusive) AS imbalance_all,
                        imbalance(v.exclusive) AS imbalance_present
                 FROM event_values v JOIN runs r USING (run)
                 GROUP BY v.event, v.metric, r.thread_count ORDER BY v.event, v.metric",
            )
            .unwrap();
        let ev = column_f64(&r, "event");
        let me = column_f64(&r, "metric");
        let cells: usize = p.event_ids().filter(|&e| !p.interval(e).is_empty()).count() * p.metrics().len();
        assert_eq!(ev.len(), cells, "{run}: one row per measured event and metric");
        let col = |n| column_f64(&r, n);
        let (threads, sum_x, min_x, max_x, sd_x) = (
            col("threads"),
            col("sum_x"),
            col("min_x"),
            col("max_x"),
            col("sd_x"),
        );
        let (sum_i, max_i, calls, subcalls) = (col("sum_i"), col("max_i"), col("calls"), col("subcalls"));
        let (imb_all, imb_present) = (col("imbalance_all"), col("imbalance_present"));
        for k in 0..ev.len() {
            let e = EventId(ev[k] as u32);
            let m = MetricId(me[k] as u32);
            let st = event_stats(&p, e, m);
            let what = format!("{run}: {} metric {}", p.event_name(e), p.metric(m).name);
            assert_eq!(threads[k] as usize, st.exclusive.threads, "{what}");
            assert!(
                close(sum_x[k], st.exclusive.mean * st.exclusive.threads as f64),
                "{what}: sum {}",
                sum_x[k]
            );
            assert!(close(min_x[k], st.exclusive.min), "{what}: min");
            assert!(close(max_x[k], st.exclusive.max), "{what}: max");
            assert!(
                (sd_x[k] - st.exclusive.stddev).abs() <= 1e-6 * st.exclusive.stddev.max(1.0),
                "{what}: sd {} vs {}",
                sd_x[k],
                st.exclusive.stddev
            );
            assert!(
                close(sum_i[k], st.inclusive.mean * st.inclusive.threads as f64),
                "{what}: inclusive sum"
            );
            assert!(close(max_i[k], st.inclusive.max), "{what}: inclusive max");
            assert!(
                close(calls[k], st.calls.mean * st.calls.threads as f64),
                "{what}: calls"
            );
            assert!(
                close(subcalls[k], st.subcalls.mean * st.subcalls.threads as f64),
                "{what}: subcalls"
            );
            if st.exclusive.mean_all != 0.0 {
                assert!(
                    close(imb_all[k], st.exclusive.imbalance()),
                    "{what}: imbalance {} vs {}",
                    imb_all[k],
                    st.exclusive.imbalance()
                );
            }
            if st.exclusive.mean != 0.0 {
                assert!(
                    close(imb_present[k], st.exclusive.max / st.exclusive.mean),
                    "{what}: imbalance(x)"
                );
            }
        }
    }
}

#[test]
fn small_tables_describe_the_run() {
    let run = "tau-real/mpi-stencil-np128-callpath-multimetric";
    let p = load(run).profile;
    let s = session(&[run]);
    let r = s
        .query_blocking("SELECT thread_count, event_count, metric_count, user_event_count FROM runs")
        .unwrap();
    assert_eq!(column_f64(&r, "thread_count"), vec![p.threads().len() as f64]);
    assert_eq!(column_f64(&r, "event_count"), vec![p.events().len() as f64]);
    assert_eq!(column_f64(&r, "metric_count"), vec![p.metrics().len() as f64]);
    assert_eq!(
        column_f64(&r, "user_event_count"),
        vec![p.atomic_events().len() as f64]
    );
    let r = s
        .query_blocking("SELECT name, unit FROM metrics ORDER BY metric")
        .unwrap();
    let names = common::column_str(&r, "name");
    assert_eq!(
        names,
        p.metrics().iter().map(|m| m.name.clone()).collect::<Vec<_>>()
    );
    // The call tree as parent links: every callpath's parent names its prefix.
    let r = s
        .query_blocking(
            "SELECT c.name AS child, p.name AS parent FROM events c JOIN events p
             ON c.run = p.run AND c.parent = p.event WHERE c.is_callpath",
        )
        .unwrap();
    let (child, parent) = (common::column_str(&r, "child"), common::column_str(&r, "parent"));
    assert!(!child.is_empty());
    for (c, p) in child.iter().zip(&parent) {
        assert!(c.starts_with(&format!("{p} => ")), "{c} under {p}");
    }
    // Threads: labels are node.context.thread, one per thread.
    let r = s
        .query_blocking("SELECT label FROM threads ORDER BY thread")
        .unwrap();
    let labels = common::column_str(&r, "label");
    assert_eq!(
        labels,
        p.threads().iter().map(ToString::to_string).collect::<Vec<_>>()
    );
}

#[test]
fn user_events_equal_the_model() {
    let run = "tau-real/mpi-stencil-np64-callpath-commmatrix";
    let p = load(run).profile;
    let s = session(&[run]);
    let r = s
        .query_blocking("SELECT user_event, SUM(count) n, MAX(max) mx, MIN(min) mn FROM user_events GROUP BY 1 ORDER BY 1")
        .unwrap();
    let ids = column_f64(&r, "user_event");
    assert_eq!(
        ids.len(),
        p.atomic_events()
            .iter()
            .enumerate()
            .filter(|(i, _)| !p.atomic(perfscape_model::AtomicEventId(*i as u32)).is_empty())
            .count()
    );
    let (n, mx, mn) = (column_f64(&r, "n"), column_f64(&r, "mx"), column_f64(&r, "mn"));
    for k in 0..ids.len() {
        let col = p.atomic(perfscape_model::AtomicEventId(ids[k] as u32));
        assert!(close(n[k], col.count().iter().sum()));
        assert!(close(
            mx[k],
            col.max().iter().copied().fold(f64::NEG_INFINITY, f64::max)
        ));
        assert!(close(
            mn[k],
            col.min().iter().copied().fold(f64::INFINITY, f64::min)
        ));
    }
}

#[test]
fn samples_are_the_series_cumulative_values() {
    let run = "tau-real/mpi-stencil-np8-snapshot";
    let o = load(run);
    let series = o.series.as_ref().expect("a snapshot run has samples");
    let s = session(&[run]);
    let r = s
        .query_blocking("SELECT COUNT(DISTINCT sample) n FROM samples")
        .unwrap();
    assert_eq!(column_f64(&r, "n"), vec![series.len() as f64]);
    // The last sample's exclusive values summed per event equal the final profile's.
    let r = s
        .query_blocking(&format!(
            "SELECT event, SUM(exclusive) x FROM samples WHERE sample = {} AND metric = 0 GROUP BY event ORDER BY event",
            series.len() - 1
        ))
        .unwrap();
    let (ev, x) = (column_f64(&r, "event"), column_f64(&r, "x"));
    assert!(!ev.is_empty());
    for (e, x) in ev.iter().zip(&x) {
        let col = o.profile.interval(EventId(*e as u32));
        let want: f64 = col.exclusive(MetricId(0)).iter().sum();
        assert!(
            close(*x, want),
            "{}: {x} vs {want}",
            o.profile.event_name(EventId(*e as u32))
        );
    }
}
