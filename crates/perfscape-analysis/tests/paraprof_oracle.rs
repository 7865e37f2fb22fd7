//! Every number equals TAU's own tools on real runs.
//!
//! For every run of `../shared/corpus/tau-real` made of `profile.N.C.T` files, perfscape's
//! statistics are compared with ParaProf's (`oracle/paraprof-derived/profile.<Stat>`, written
//! by `paraprof -v`) and perfscape's per-thread values with `oracle/paraprof.csv` (written by
//! `paraprof --text`). The derived files are TAU profiles themselves, so they are read with
//! perfscape's own TAU parser.
//!
//! Tolerance: 1e-9 relative. For standard deviations ParaProf evaluates
//! `sqrt(|sumsq/n - mean^2|)`, whose cancellation error is about `sqrt(eps * mean(x^2))` when
//! the spread is small next to the mean; the test allows that much on top, computed from the
//! data (perfscape uses the two-pass formula, which does not lose those digits).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use perfscape_analysis::{Summary, event_stats};
use perfscape_formats::tau::parse_profile_file;
use perfscape_formats::{OpenOptions, detect, open};
use perfscape_model::{MetricId, Profile, ThreadId, ValueKind};
use std::path::{Path, PathBuf};

fn corpus() -> PathBuf {
    let p = std::env::var_os("PERFSCAPE_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"));
    assert!(
        p.is_dir(),
        "the shared corpus is expected at {} (set PERFSCAPE_CORPUS)",
        p.display()
    );
    p
}

/// tau-real runs with ParaProf oracles: profile.N.C.T runs, and the snapshot and merged runs
/// (whose oracles ParaProf computed from the final state: `paraprof -f snap`, `tauprofile.xml`).
fn profile_runs() -> Vec<PathBuf> {
    runs_detected_as(&["tau", "tau-snapshot", "tau-merged"])
}

/// The runs whose `paraprof -v` statistics are ParaProf's own. Not the snapshot runs:
/// `paraprof -v -f snap` writes every statistic as 0 there (see their
/// `oracle/paraprof-derived`), so their final states are checked cell by cell instead
/// (`per_thread_values_equal_paraprof_csv`, and `perfscape-formats/tests/tau_snapshot.rs`
/// against `paraprof --dump`). Not the merged run: ParaProf shows TAU's own derived blocks
/// there (TAU's conventions, e.g. `-1` in `min_no_null`), which `tau_derived.rs` checks.
fn runs_with_paraprof_statistics() -> Vec<PathBuf> {
    runs_detected_as(&["tau"])
}

fn runs_detected_as(kinds: &[&str]) -> Vec<PathBuf> {
    let mut runs: Vec<PathBuf> = std::fs::read_dir(corpus().join("tau-real"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("oracle/paraprof-derived").is_dir())
        .filter(|p| detect(p).is_ok_and(|d| kinds.contains(&d.name)))
        .collect();
    runs.sort();
    runs
}

fn close(ours: f64, theirs: f64, extra_abs: f64) -> bool {
    (ours - theirs).abs() <= 1e-9 * ours.abs().max(theirs.abs()) + extra_abs
}

/// ParaProf's cancellation error bound for a standard deviation of `values` over `n` threads.
fn stddev_slack(s: &Summary, over_all: bool) -> f64 {
    let (mean, sd) = if over_all {
        (s.mean_all, s.stddev_all)
    } else {
        (s.mean, s.stddev)
    };
    let mean_sq = sd * sd + mean * mean;
    (8.0 * f64::EPSILON * mean_sq).sqrt()
}

#[derive(Clone, Copy, Debug)]
enum Stat {
    Total,
    Mean,
    MeanAll,
    Min,
    Max,
    StdDev,
    StdDevAll,
}

impl Stat {
    const ALL: [(Stat, &'static str); 7] = [
        (Stat::Total, "profile.Total"),
        (Stat::Mean, "profile.Mean"),
        (Stat::MeanAll, "profile.Mean,AllThreads"),
        (Stat::Min, "profile.Min"),
        (Stat::Max, "profile.Max"),
        (Stat::StdDev, "profile.StandardDeviation"),
        (Stat::StdDevAll, "profile.StandardDeviation,AllThreads"),
    ];

    fn pick(self, s: &Summary) -> f64 {
        match self {
            Stat::Total => s.total,
            Stat::Mean => s.mean,
            Stat::MeanAll => s.mean_all,
            Stat::Min => s.min,
            Stat::Max => s.max,
            Stat::StdDev => s.stddev,
            Stat::StdDevAll => s.stddev_all,
        }
    }

    fn slack(self, s: &Summary) -> f64 {
        match self {
            Stat::StdDev => stddev_slack(s, false),
            Stat::StdDevAll => stddev_slack(s, true),
            _ => 0.0,
        }
    }

    /// ParaProf writes calls and subrs of derived profiles with `%d` (truncated) except for
    /// Total/Min/Max, which are whole numbers anyway.
    fn calls_as_written(self, v: f64) -> f64 {
        v.trunc()
    }
}

/// Compares one derived profile file with perfscape's statistics; returns the number of
/// values compared.
fn check_derived(run: &Path, profile: &Profile, m: MetricId, file: &Path, stat: Stat) -> usize {
    let bytes = std::fs::read(file).unwrap();
    let derived = parse_profile_file(&bytes).unwrap_or_else(|e| panic!("{}: {e:?}", file.display()));
    let mut compared = 0;
    let flat_and_paths = profile
        .event_ids()
        .filter(|&e| !profile.interval(e).is_empty())
        .count();
    assert_eq!(
        derived.timers.len(),
        flat_and_paths,
        "{}: event count differs from ParaProf's",
        file.display()
    );
    for line in &derived.timers {
        let e = profile.event_by_name(&line.name).unwrap_or_else(|| {
            panic!(
                "{}: ParaProf has `{}`, perfscape does not",
                run.display(),
                line.name
            )
        });
        let st = event_stats(profile, e, m);
        let ctx = |what: &str| format!("{} {:?} {what} of `{}`", run.display(), stat, line.name);
        for (kind, theirs) in [
            (ValueKind::Exclusive, line.exclusive),
            (ValueKind::Inclusive, line.inclusive),
        ] {
            let s = st.get(kind);
            let ours = stat.pick(s);
            assert!(
                close(ours, theirs, stat.slack(s)),
                "{}: perfscape {ours} vs ParaProf {theirs}",
                ctx(kind.as_str())
            );
            compared += 1;
        }
        for (kind, theirs) in [
            (ValueKind::Calls, line.calls),
            (ValueKind::Subcalls, line.subcalls),
        ] {
            let s = st.get(kind);
            let ours = stat.calls_as_written(stat.pick(s));
            // A truncated standard deviation may land on either side of an integer.
            let slack = if matches!(stat, Stat::StdDev | Stat::StdDevAll) {
                1.0
            } else {
                0.0
            };
            assert!(
                (ours - theirs).abs() <= slack,
                "{}: perfscape {ours} vs ParaProf {theirs}",
                ctx(kind.as_str())
            );
            compared += 1;
        }
        // Groups as ParaProf writes them.
        assert_eq!(profile.event_groups_joined(e), line.groups, "{}", ctx("groups"));
    }
    compared
}

#[test]
fn statistics_equal_paraprof_derived_profiles() {
    let runs = runs_with_paraprof_statistics();
    assert!(
        runs.len() >= 10,
        "expected the tau-real profile runs, found {runs:?}"
    );
    let mut total = 0;
    for run in &runs {
        let loaded = open(run, &OpenOptions::default()).unwrap();
        assert!(
            !loaded.report.is_partial(),
            "{}: {:?}",
            run.display(),
            loaded.report.bad_files
        );
        let p = &loaded.profile;
        let derived = run.join("oracle/paraprof-derived");
        for m in p.metric_ids() {
            let dir = if p.metrics().len() > 1 {
                derived.join(format!("MULTI__{}", p.metric(m).name))
            } else {
                derived.clone()
            };
            for (stat, name) in Stat::ALL {
                total += check_derived(run, p, m, &dir.join(name), stat);
            }
        }
    }
    // 12 runs, ~35 events, 7 statistics, 4 values each: thousands of comparisons.
    assert!(total > 5000, "only {total} values compared");
}

/// Reads `oracle/paraprof.csv` (`paraprof --text`): tab-separated; first one row per (thread,
/// event) with `Inclusive <M>`/`Exclusive <M>` columns per metric, then a second table of
/// user events per thread (`NumSamples Min Max Mean StdDev`).
#[test]
fn per_thread_values_equal_paraprof_csv() {
    let mut rows_checked = 0;
    let mut user_rows_checked = 0;
    let runs = profile_runs();
    for kind in ["-snapshot", "-merged"] {
        assert!(
            runs.iter().any(|r| r.to_string_lossy().ends_with(kind)),
            "no {kind} run among {runs:?}"
        );
    }
    for run in runs {
        let loaded = open(&run, &OpenOptions::default()).unwrap();
        let p = &loaded.profile;
        let text = std::fs::read_to_string(run.join("oracle/paraprof.csv")).unwrap();
        let (intervals, users) = match text.find("Node\tContext\tThread\tUser Event") {
            Some(i) => (&text[..i], &text[i..]),
            None => (text.as_str(), ""),
        };
        let mut lines = intervals.lines();
        let header: Vec<&str> = lines.next().unwrap().split('\t').collect();
        let col = |name: &str| {
            header
                .iter()
                .position(|h| *h == name)
                .unwrap_or_else(|| panic!("no column {name}"))
        };
        let metric_cols: Vec<(MetricId, usize, usize)> = p
            .metric_ids()
            .map(|m| {
                let n = &p.metric(m).name;
                (m, col(&format!("Inclusive {n}")), col(&format!("Exclusive {n}")))
            })
            .collect();
        let mut seen_cells = 0;
        for line in lines.filter(|l| !l.trim().is_empty()) {
            let f: Vec<&str> = line.split('\t').collect();
            let thread = ThreadId::new(
                f[0].parse().unwrap(),
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
            );
            let t = p
                .thread_index(thread)
                .unwrap_or_else(|| panic!("{}: no thread {thread}", run.display()));
            let e = p
                .event_by_name(f[3])
                .unwrap_or_else(|| panic!("{}: no event `{}`", run.display(), f[3]));
            let num = |i: usize| f[i].parse::<f64>().unwrap();
            let m0 = MetricId(0);
            assert_eq!(
                p.value(e, t, ValueKind::Calls, m0),
                Some(num(col("NumCalls"))),
                "{} {thread} {}",
                run.display(),
                f[3]
            );
            assert_eq!(p.value(e, t, ValueKind::Subcalls, m0), Some(num(col("NumSubr"))));
            for &(m, ci, ce) in &metric_cols {
                assert_eq!(
                    p.value(e, t, ValueKind::Inclusive, m),
                    Some(num(ci)),
                    "{} {thread} {} incl",
                    run.display(),
                    f[3]
                );
                assert_eq!(
                    p.value(e, t, ValueKind::Exclusive, m),
                    Some(num(ce)),
                    "{} {thread} {} excl",
                    run.display(),
                    f[3]
                );
            }
            assert_eq!(p.event_groups_joined(e), *f.last().unwrap());
            seen_cells += 1;
            rows_checked += 1;
        }
        // Every (event, thread) cell perfscape has is in ParaProf's table, and vice versa.
        assert_eq!(seen_cells, p.interval_cell_count(), "{}", run.display());

        let mut user_cells = 0;
        for line in users.lines().skip(1).filter(|l| !l.trim().is_empty()) {
            let f: Vec<&str> = line.split('\t').collect();
            let thread = ThreadId::new(
                f[0].parse().unwrap(),
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
            );
            let t = p.thread_index(thread).unwrap();
            let a = p
                .atomic_event_by_name(f[3])
                .unwrap_or_else(|| panic!("{}: no user event `{}`", run.display(), f[3]));
            let col = p.atomic(a);
            let row = col
                .row_of(t)
                .unwrap_or_else(|| panic!("{}: {thread} lacks `{}`", run.display(), f[3]));
            let num = |i: usize| f[i].parse::<f64>().unwrap();
            let ctx = format!("{} {thread} `{}`", run.display(), f[3]);
            assert_eq!(col.count()[row], num(4), "{ctx} count");
            assert_eq!(col.min()[row], num(5), "{ctx} min");
            assert_eq!(col.max()[row], num(6), "{ctx} max");
            assert_eq!(col.mean()[row], num(7), "{ctx} mean");
            let sd = col.stddev(row);
            assert!(
                close(sd, num(8), 1e-9 * col.mean()[row].abs()),
                "{ctx} stddev {sd} vs {}",
                num(8)
            );
            user_cells += 1;
            user_rows_checked += 1;
        }
        let ours: usize = (0..p.atomic_events().len())
            .map(|a| p.atomic(perfscape_model::AtomicEventId::from(a)).len())
            .sum();
        assert_eq!(user_cells, ours, "{}: user event cells", run.display());
    }
    assert!(rows_checked > 7_000, "only {rows_checked} rows compared");
    assert!(
        user_rows_checked > 1_000,
        "only {user_rows_checked} user event rows compared"
    );
}
