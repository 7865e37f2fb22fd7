//! User-event statistics over the threads (`answers::user_events`) against a computation
//! written here from ParaProf's per-thread user-event table (`oracle/paraprof.csv`, the
//! `User Event` section: count, min, max, mean and standard deviation per thread) for every
//! real TAU run in the corpus that has user events: the count is the sum, min and max the
//! extremes, the mean `Σ n·mean / Σ n` and the deviation that of all values pooled
//! (`Σ n·(sd² + mean²) / Σ n − mean²`). The per-thread numbers themselves are checked cell by
//! cell in `paraprof_oracle.rs`. ParaProf's derived `profile.Total` gives the summed counts.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use perfscape_analysis::answers::{user_event_detail, user_events};
use perfscape_formats::{OpenOptions, open};
use perfscape_model::ThreadId;
use std::collections::BTreeMap;

#[derive(Default)]
struct Pooled {
    n: f64,
    sum: f64,
    sumsq: f64,
    min: f64,
    max: f64,
    threads: u32,
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn pooled_statistics_equal_those_of_paraprofs_per_thread_table() {
    let mut runs_checked = 0;
    let mut rows_checked = 0;
    let mut dirs: Vec<_> = std::fs::read_dir(common::corpus().join("tau-real"))
        .unwrap()
        .map(|d| d.unwrap().path())
        .filter(|p| p.join("oracle/paraprof.csv").is_file())
        .collect();
    dirs.sort();
    for run in dirs {
        let text = std::fs::read_to_string(run.join("oracle/paraprof.csv")).unwrap();
        let Some(i) = text.find("Node\tContext\tThread\tUser Event") else {
            continue;
        };
        // The TAU trace run: its user events are counter series of the trace, not user events
        // of the derived profile (yet), so ParaProf's table of trace2profile's user events has
        // nothing to compare with.
        if perfscape_formats::detect(&run).is_ok_and(|f| f.name == "tau-trace") {
            continue;
        }
        let opened = open(&run, &OpenOptions::default()).unwrap_or_else(|e| panic!("{}: {e}", run.display()));
        let p = &opened.profile;
        let mut theirs: BTreeMap<String, Pooled> = BTreeMap::new();
        let mut thread0: BTreeMap<String, [f64; 5]> = BTreeMap::new();
        for line in text[i..].lines().skip(1).filter(|l| !l.trim().is_empty()) {
            let f: Vec<&str> = line.split('\t').collect();
            let num = |i: usize| f[i].parse::<f64>().unwrap();
            let (n, min, max, mean, sd) = (num(4), num(5), num(6), num(7), num(8));
            let e = theirs.entry(f[3].to_string()).or_insert(Pooled {
                min: f64::INFINITY,
                max: f64::NEG_INFINITY,
                ..Default::default()
            });
            e.n += n;
            e.sum += n * mean;
            e.sumsq += n * (sd * sd + mean * mean);
            e.min = e.min.min(min);
            e.max = e.max.max(max);
            e.threads += 1;
            if ThreadId::new(num(0) as u32, num(1) as u32, num(2) as u32) == p.thread(0usize.into()) {
                thread0.insert(f[3].to_string(), [n, min, max, mean, sd]);
            }
        }
        let ours = user_events(p, Some(0usize.into()));
        assert_eq!(ours.rows.len(), theirs.len(), "{}", run.display());
        for row in &ours.rows {
            let t = theirs
                .get(&row.name)
                .unwrap_or_else(|| panic!("{}: ParaProf lacks `{}`", run.display(), row.name));
            let mean = t.sum / t.n;
            let sd = (t.sumsq / t.n - mean * mean).max(0.0).sqrt();
            let ctx = format!("{} `{}`", run.display(), row.name);
            assert_eq!(row.threads, t.threads, "{ctx} threads");
            assert_eq!(row.all.count, t.n, "{ctx} count");
            assert_eq!((row.all.min, row.all.max), (t.min, t.max), "{ctx} min/max");
            assert!(close(row.all.mean, mean), "{ctx} mean {} vs {mean}", row.all.mean);
            // ParaProf prints the per-thread deviation rounded; pooled, that error stays
            // below a millionth of the mean.
            assert!(
                (row.all.stddev - sd).abs() <= 1e-6 * mean.abs().max(1.0),
                "{ctx} stddev {} vs {sd}",
                row.all.stddev
            );
            match (row.thread, thread0.get(&row.name)) {
                (Some(s), Some(&[n, min, max, mean, _])) => {
                    assert_eq!(
                        (s.count, s.min, s.max, s.mean),
                        (n, min, max, mean),
                        "{ctx} thread 0"
                    );
                }
                (None, None) => {}
                (a, b) => panic!("{ctx}: thread 0 {a:?} vs ParaProf {b:?}"),
            }
            let d = user_event_detail(p, row.id, None).unwrap();
            assert_eq!(d.threads.len() as u32, t.threads, "{ctx} detail");
            assert_eq!(
                d.threads.iter().map(|x| x.stats.count).sum::<f64>(),
                t.n,
                "{ctx} detail counts"
            );
            rows_checked += 1;
        }
        runs_checked += 1;
    }
    assert!(runs_checked >= 8, "only {runs_checked} runs with user events");
    assert!(rows_checked >= 100, "only {rows_checked} user events");
}

#[test]
fn an_unknown_user_event_is_not_found() {
    let p = common::load("tau-real/mpi-stencil-np4-profile");
    let n = p.atomic_events().len() as u32;
    let e = user_event_detail(&p, n, None).unwrap_err();
    assert!(e.to_string().contains("user event"), "{e}");
}
