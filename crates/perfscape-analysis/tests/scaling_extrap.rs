//! `compare::scaling` on the eight strong-scaling TAU runs: the counts read from the runs, each
//! event's per-thread values, and its model equal to Extra-P's (fixture
//! `tests/fixtures/extrap/tau-strong-scaling.json` from `scripts/ref/extrap_models.py`, whose
//! values it computes from the TAU files itself); speedup, efficiency and the share of the run
//! follow from the values as defined in the module.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use perfscape_analysis::compare::scaling::{ScalingError, process_count, scaling};
use perfscape_analysis::run_total;
mod common;
use common::{fixture, load};
use perfscape_model::{MetricId, Profile, ValueKind};

fn runs() -> Vec<Profile> {
    (1..=8)
        .map(|k| load(&format!("tau/taucmdr-mm-strong-scaling-1to8rank/np{k}")))
        .collect()
}

fn close(x: f64, y: f64, rel: f64) -> bool {
    (x - y).abs() <= rel * x.abs().max(y.abs()).max(1e-300)
}

#[test]
fn scaling_models_equal_extrap_on_the_strong_scaling_runs() {
    let profiles = runs();
    let input: Vec<(f64, &Profile)> = profiles.iter().map(|p| (process_count(p) as f64, p)).collect();
    assert_eq!(
        input.iter().map(|r| r.0).collect::<Vec<_>>(),
        [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]
    );
    let fx: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("extrap/tau-strong-scaling.json")).unwrap())
            .unwrap();
    let mut compared = 0;
    for (kind, name) in [
        (ValueKind::Exclusive, "exclusive"),
        (ValueKind::Inclusive, "inclusive"),
    ] {
        let s = scaling(&input, "TIME", kind, false).unwrap();
        let models = fx["kinds"][name]["models"].as_array().unwrap();
        assert_eq!(s.rows.len(), models.len(), "{name}: events");
        for m in models {
            let event = m["event"].as_str().unwrap();
            let row = s
                .rows
                .iter()
                .find(|r| r.name == event)
                .unwrap_or_else(|| panic!("{event}"));
            // The values: Extra-P's points (the script's own reading of the files).
            for (v, p) in row.values.iter().zip(m["points"].as_array().unwrap()) {
                assert!(
                    close(*v, p["mean"].as_f64().unwrap(), 1e-12),
                    "{name} {event}: {v} vs {p}"
                );
            }
            let ours = row.model.as_ref().unwrap();
            let terms = m["terms"].as_array().unwrap();
            assert_eq!(
                ours.terms.len(),
                terms.len(),
                "{name} {event}: {}",
                ours.formula("p")
            );
            for (t, h) in ours.terms.iter().zip(terms) {
                let poly = (
                    h["poly"][0].as_i64().unwrap() as i32,
                    h["poly"][1].as_i64().unwrap() as i32,
                );
                assert_eq!(
                    (t.poly_exponent, t.log_exponent as u64),
                    (poly, h["log"].as_u64().unwrap()),
                    "{event}"
                );
                assert!(
                    close(t.coefficient, h["coefficient"].as_f64().unwrap(), 1e-9),
                    "{name} {event}"
                );
            }
            let scale = row.values.iter().fold(0.0f64, |a, v| a.max(v.abs()));
            assert!(
                (ours.constant - m["constant"].as_f64().unwrap()).abs() <= 1e-6 * scale.max(1.0),
                "{event}"
            );
            assert!(
                close(ours.smape, m["smape"].as_f64().unwrap(), 1e-9),
                "{name} {event}"
            );
            // Speedup and efficiency against np1; the share of each run.
            for (i, c) in s.counts.iter().enumerate() {
                if row.values[i] != 0.0 {
                    let sp = row.values[0] / row.values[i];
                    assert_eq!(row.speedup[i], Some(sp));
                    assert_eq!(row.efficiency[i], Some(sp * s.counts[0] / c));
                }
            }
            compared += 1;
        }
        // Shares: per run, an event's total over the run total.
        let p8 = &profiles[7];
        let total = run_total(p8, MetricId(0)).unwrap();
        for row in &s.rows {
            let e = p8.event_by_name(&row.name).unwrap();
            let sum: f64 = p8.interval(e).values(kind, MetricId(0)).iter().sum();
            assert!(
                close(row.share_percent[7].unwrap(), 100.0 * sum / total, 1e-12),
                "{}",
                row.name
            );
        }
    }
    assert_eq!(compared, 22);
}

#[test]
fn the_share_that_grows_with_scale_is_flagged_and_bad_input_is_refused() {
    let profiles = runs();
    let input: Vec<(f64, &Profile)> = profiles.iter().map(|p| (process_count(p) as f64, p)).collect();
    let s = scaling(&input, "TIME", ValueKind::Exclusive, false).unwrap();
    for row in &s.rows {
        let (first, last) = (row.share_percent[0].unwrap(), row.share_percent[7].unwrap());
        assert_eq!(
            row.share_grows,
            last >= 1.25 * first && last - first >= 1.0,
            "{}",
            row.name
        );
    }
    // At least one event (MPI_Finalize() in these runs) takes a growing share.
    assert!(s.rows.iter().any(|r| r.share_grows), "no event's share grows");
    assert_eq!(
        scaling(&input[..1], "TIME", ValueKind::Exclusive, false).unwrap_err(),
        ScalingError::TooFewCounts(1)
    );
    assert!(matches!(
        scaling(&input, "PAPI_FP_INS", ValueKind::Exclusive, false),
        Err(ScalingError::MissingMetric { run: 0, .. })
    ));
    let bad = [(0.0, input[0].1), (2.0, input[1].1)];
    assert!(matches!(
        scaling(&bad, "TIME", ValueKind::Exclusive, false),
        Err(ScalingError::BadCount { .. })
    ));
    // Four counts: values and speedups, no model (Extra-P needs five).
    let s = scaling(&input[..4], "TIME", ValueKind::Exclusive, false).unwrap();
    assert!(
        s.rows
            .iter()
            .all(|r| r.model.is_none() && r.model_error.is_some())
    );
}
