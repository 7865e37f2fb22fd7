//! perfscape's statistics equal the statistics TAU itself wrote into a merged profile.
//!
//! `TAU_PROFILE_FORMAT=merged` makes TAU append derived blocks to `tauprofile.xml`: `total`,
//! `mean_all`, `mean_no_null`, `stddev_all`, `stddev_no_null`, `min_no_null`, `max_no_null`
//! (`corpus/tau-real/mpi-stencil-np4-merged`; ParaProf shows exactly these, see its
//! `oracle/paraprof-derived`). perfscape reads the threads of the file, computes its own
//! statistics (`perfscape_analysis::event_stats`), and they must match TAU's blocks:
//!
//! - `total`, `mean_no_null` (over the threads that have the event), `mean_all` (over all
//!   threads), `max_no_null`: as ParaProf defines them;
//! - `stddev_*`: population standard deviations, within the cancellation slack of TAU's
//!   one-pass formula;
//! - `min_no_null`: TAU's minimum skips values that are 0 and writes -1 when every thread
//!   has 0 (e.g. the subrs of a leaf routine). The test applies that rule to perfscape's
//!   per-thread values: where perfscape's minimum is positive it must equal TAU's.
//!
//! User events: TAU summarizes each column (count, max, min, mean, sumsqr) across threads the
//! same way; the test computes those from perfscape's per-thread user event values.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use perfscape_analysis::{Summary, event_stats};
use perfscape_formats::tau::merged::{TauDerived, parse_merged};
use perfscape_model::{Combine, MetricId, Profile, ValueKind};
use std::path::{Path, PathBuf};

fn corpus() -> PathBuf {
    let p = std::env::var_os("PERFSCAPE_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"));
    assert!(p.is_dir(), "the shared corpus is expected at {}", p.display());
    p
}

fn close(ours: f64, theirs: f64, slack: f64) -> bool {
    (ours - theirs).abs() <= 1e-9 * ours.abs().max(theirs.abs()) + slack
}

/// The statistic of `s` (perfscape) that TAU's entity names, plus a slack for TAU's one-pass
/// standard deviation.
fn ours(entity: &str, s: &Summary, nonzero_min: f64) -> (f64, f64) {
    let sd_slack = |mean: f64, sd: f64| (8.0 * f64::EPSILON * (sd * sd + mean * mean)).sqrt();
    match entity {
        "total" => (s.total, 0.0),
        "mean_all" => (s.mean_all, 0.0),
        "mean_no_null" => (s.mean, 0.0),
        "stddev_all" => (s.stddev_all, sd_slack(s.mean_all, s.stddev_all)),
        "stddev_no_null" => (s.stddev, sd_slack(s.mean, s.stddev)),
        "max_no_null" => (s.max, 0.0),
        "min_no_null" => (nonzero_min, 0.0),
        other => panic!("unknown TAU entity {other}"),
    }
}

/// TAU's min_no_null: the smallest non-zero value, -1 when there is none.
fn min_no_null(values: &[f64]) -> f64 {
    values
        .iter()
        .copied()
        .filter(|v| *v != 0.0)
        .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.min(v))))
        .unwrap_or(-1.0)
}

fn check_block(p: &Profile, d: &TauDerived) -> usize {
    let m = MetricId(0);
    assert_eq!(d.metrics, vec!["TIME".to_string()]);
    let mut compared = 0;
    for row in &d.timers {
        let e = p
            .event_by_name(&row.name)
            .unwrap_or_else(|| panic!("{}: TAU has `{}`, perfscape does not", d.entity, row.name));
        let st = event_stats(p, e, m);
        let col = p.interval(e);
        for (kind, theirs) in [
            (ValueKind::Calls, row.calls),
            (ValueKind::Subcalls, row.subcalls),
            (ValueKind::Exclusive, row.exclusive[0]),
            (ValueKind::Inclusive, row.inclusive[0]),
        ] {
            let (v, slack) = ours(&d.entity, st.get(kind), min_no_null(col.values(kind, m)));
            assert!(
                close(v, theirs, slack),
                "{} {kind:?} of `{}`: perfscape {v} vs TAU {theirs}",
                d.entity,
                row.name
            );
            compared += 1;
        }
    }
    for row in &d.user_events {
        let a = p
            .atomic_event_by_name(&row.name)
            .unwrap_or_else(|| panic!("{}: TAU has user event `{}`", d.entity, row.name));
        let col = p.atomic(a);
        let n_all = p.threads().len();
        for (what, values, theirs) in [
            ("count", col.count(), row.count),
            ("max", col.max(), row.max),
            ("min", col.min(), row.min),
            ("mean", col.mean(), row.mean),
            ("sumsqr", col.sum_squares(), row.sum_squares),
        ] {
            let s = Summary::of(values, col.threads(), n_all, Combine::Sum);
            let (v, slack) = ours(&d.entity, &s, min_no_null(values));
            assert!(
                close(v, theirs, slack),
                "{} user event `{}` {what}: perfscape {v} vs TAU {theirs}",
                d.entity,
                row.name
            );
            compared += 1;
        }
    }
    compared
}

#[test]
fn statistics_equal_taus_own_derived_blocks() {
    let path = corpus().join("tau-real/mpi-stencil-np4-merged/tauprofile.xml");
    let merged = parse_merged(&std::fs::read(&path).unwrap(), &path).unwrap();
    assert!(merged.warnings.is_empty(), "{:?}", merged.warnings);
    let entities: Vec<&str> = merged.derived.iter().map(|d| d.entity.as_str()).collect();
    assert_eq!(
        entities,
        [
            "total",
            "mean_all",
            "mean_no_null",
            "stddev_all",
            "stddev_no_null",
            "min_no_null",
            "max_no_null"
        ]
    );
    let mut compared = 0;
    for d in &merged.derived {
        assert_eq!(d.timers.len(), 18, "{}", d.entity);
        compared += check_block(&merged.profile, d);
    }
    // 7 blocks x 18 events x 4 values + 6 blocks with 5 user events x 5 columns.
    assert_eq!(compared, 7 * 18 * 4 + 6 * 5 * 5);
}

#[test]
fn older_tau_merged_files_agree_with_their_derived_blocks_where_names_are_unique() {
    // TAU 2.22 files from ParaTools' examples. Both name several events the same (the
    // OpenMP one timers with the same CDATA text, the MPAS one user events such as two
    // `MPI-IO Bytes Read`) under different ids; perfscape merges those per thread as ParaProf
    // does for duplicate names (sums), TAU's blocks keep them apart, so only events with a
    // unique name are compared.
    for rel in [
        "tau-xml/tau224-metadatacorrelation/tauprofile.xml",
        "tau-xml/tau224-classbreakdown-openmp/tauprofile.xml.gz",
    ] {
        let path = corpus().join(rel);
        let bytes = std::fs::read(&path).unwrap();
        let merged = parse_merged(&perfscape_formats::input::decompress(&bytes).data, &path).unwrap();
        let p = &merged.profile;
        let mut compared = 0;
        for d in &merged.derived {
            let mut unique = d.clone();
            unique
                .timers
                .retain(|r| d.timers.iter().filter(|o| o.name == r.name).count() == 1);
            unique
                .user_events
                .retain(|r| d.user_events.iter().filter(|o| o.name == r.name).count() == 1);
            compared += check_block(p, &unique);
        }
        assert!(compared > 500, "{rel}: only {compared} values compared");
    }
}
