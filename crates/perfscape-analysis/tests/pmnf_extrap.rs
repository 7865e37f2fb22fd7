//! The scaling models of `compare::pmnf::fit` equal Extra-P's, and perfscape reads the inputs
//! Extra-P modelled.
//!
//! `tests/fixtures/extrap/*.json` were made by `scripts/ref/extrap_models.py` with Extra-P
//! 4.2.5 (default single-parameter modeler): for every model, the measurements Extra-P used and
//! its model. Here `fit` on the same measurements must give the same exponents exactly and the
//! same coefficients, RSS, SMAPE and adjusted R² to a relative 1e-6; and perfscape's reading of
//! the corpus runs must give the measurements:
//!
//! - TAU `taucmdr-mm-strong-scaling-1to8rank/np{1..8}`: per flat event the mean over all
//!   threads (a thread without the event counts 0) of the exclusive and of the inclusive TIME,
//!   in microseconds;
//! - CUBE `extrap-mm-single-parameter-cubeset`: Extra-P's CUBE reader (weak scaling, its
//!   default) takes per callpath × metric the exclusive value of every location as the
//!   repetitions of the point, and models their mean. A location without the callpath counts
//!   with CUBE's stored 0 there, and perfscape leaves it out, so the test compares the sum of
//!   perfscape's per-thread values over the threads that have the event with the sum of
//!   Extra-P's, and the location count with perfscape's thread count. `min_time` and
//!   `max_time` are treated like any metric by Extra-P (the mean of the per-location
//!   exclusive values, not a minimum or maximum); on these one-location files the value is the
//!   location's.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use perfscape_analysis::compare::pmnf::{Measurement, ScalingModel, Term, fit};
use perfscape_formats::{OpenOptions, open};
use perfscape_model::{Profile, ValueKind};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The fixtures' JSON (serde_json with `float_roundtrip`: numbers written by Python's `repr`
/// read back exactly), with accessors that name what is missing.
type Json = serde_json::Value;

trait Get {
    fn at(&self, key: &str) -> &Json;
    fn num(&self) -> f64;
    fn str(&self) -> &str;
    fn bool(&self) -> bool;
    fn arr(&self) -> &[Json];
    fn obj(&self) -> Vec<(&String, &Json)>;
}

impl Get for Json {
    fn at(&self, key: &str) -> &Json {
        self.as_object()
            .and_then(|o| o.get(key))
            .unwrap_or_else(|| panic!("no {key}"))
    }
    fn num(&self) -> f64 {
        self.as_f64().unwrap_or_else(|| panic!("not a number: {self:?}"))
    }
    fn str(&self) -> &str {
        self.as_str().unwrap_or_else(|| panic!("not a string: {self:?}"))
    }
    fn bool(&self) -> bool {
        self.as_bool().unwrap_or_else(|| panic!("not a bool: {self:?}"))
    }
    fn arr(&self) -> &[Json] {
        self.as_array()
            .unwrap_or_else(|| panic!("not an array: {self:?}"))
    }
    fn obj(&self) -> Vec<(&String, &Json)> {
        self.as_object()
            .unwrap_or_else(|| panic!("not an object: {self:?}"))
            .iter()
            .collect()
    }
}

fn corpus() -> PathBuf {
    let p = std::env::var_os("PERFSCAPE_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"));
    assert!(p.is_dir(), "the shared corpus is expected at {}", p.display());
    p
}

fn fixture(name: &str) -> Json {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/extrap")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Relative tolerance for coefficients and costs (see `compare_model`).
const REL: f64 = 1e-6;

/// The SMAPE (percent) both sides must stay below on an exact fit. Not 0: the left-out
/// point's prediction carries the rounding of the fit, amplified by the conditioning of the
/// term (`5 + 1.78 p^3 log2 p` on p up to 2000 has values to 1.5e11 beside 5, and its
/// leave-one-out SMAPE is 2.4e-5 % in one of the two solvers).
const EXACT_FIT_SMAPE: f64 = 1e-3;

/// The largest relative differences seen, for the report.
#[derive(Default, Debug)]
struct Errors {
    models: usize,
    with_term: usize,
    coefficient: f64,
    constant: f64,
    /// The constant's difference relative to itself (not bounded; for the report).
    constant_plain: f64,
    rss: f64,
    smape: f64,
    ar2: f64,
    /// Models whose RSS is rounding noise on both sides (see `compare_model`).
    exact_fits: usize,
}

fn rel(a: f64, b: f64) -> f64 {
    if a == b {
        0.0
    } else {
        (a - b).abs() / a.abs().max(b.abs())
    }
}

/// The fixture's measurements as `fit` input; checks each point's mean is Extra-P's, bit for bit.
fn measurements(entry: &Json, what: &str) -> Vec<Measurement> {
    entry
        .at("points")
        .arr()
        .iter()
        .map(|p| {
            assert!(
                !p.at("merged").bool(),
                "{what}: a merged callpath (not in these fixtures)"
            );
            let values: Vec<f64> = p.at("values").arr().iter().map(Get::num).collect();
            let m = Measurement::new(p.at("x").num(), values);
            assert_eq!(
                m.mean().to_bits(),
                p.at("mean").num().to_bits(),
                "{what}: mean at x={}",
                m.x
            );
            m
        })
        .collect()
}

/// `fit` on the entry's measurements equals Extra-P's model.
///
/// Coefficients, RSS, SMAPE and AR² to a relative 1e-6. The constant coefficient is compared
/// relative to the larger of its magnitude and the largest modelled value: it is the
/// difference of the data and the term (`c = ȳ - k f̄`), so where it is small next to the
/// data (e.g. 1e-10 beside values of 10) it is only determined to the data's rounding, and
/// Extra-P's SVD solve (`numpy.linalg.lstsq`) and the centred solve here round differently.
///
/// An exact fit (made-up data `c + k * term` without noise) has an RSS that is rounding noise
/// on both sides (1e-30 here, 1e-28 there): when both RSS are below `n * (1e-9 * max value)²`
/// the costs are not compared, only bounded (both SMAPE below [`EXACT_FIT_SMAPE`]); the
/// exponents and coefficients still are.
fn compare_model(entry: &Json, param: &str, what: &str, errors: &mut Errors) -> ScalingModel {
    let points = measurements(entry, what);
    let model = fit(&points).unwrap_or_else(|e| panic!("{what}: {e}"));
    let theirs_terms = entry.at("terms").arr();
    let ctx = format!(
        "{what}: perfscape `{}`, Extra-P `{}`",
        model.formula("x"),
        entry.at("formula").str()
    );
    assert_eq!(model.terms.len(), theirs_terms.len(), "{ctx}");
    assert_eq!(
        model.is_constant(),
        entry.at("is_constant_hypothesis").bool(),
        "{ctx}"
    );
    for (t, theirs) in model.terms.iter().zip(theirs_terms) {
        let poly = theirs.at("poly").arr();
        let poly = (poly[0].num() as i32, poly[1].num() as i32);
        assert_eq!(
            (t.poly_exponent, t.log_exponent),
            (poly, theirs.at("log").num() as u32),
            "{ctx}"
        );
        let e = rel(t.coefficient, theirs.at("coefficient").num());
        assert!(e <= REL, "{ctx}: coefficient differs by {e:e}");
        errors.coefficient = errors.coefficient.max(e);
    }
    // The printer, on Extra-P's own coefficients: the same string as Extra-P's.
    let printed = ScalingModel {
        constant: entry.at("constant").num(),
        terms: model
            .terms
            .iter()
            .zip(theirs_terms)
            .map(|(t, theirs)| Term {
                coefficient: theirs.at("coefficient").num(),
                ..t.clone()
            })
            .collect(),
        ..model.clone()
    };
    assert_eq!(printed.formula(param), entry.at("formula").str(), "{ctx}");
    let scale = points
        .iter()
        .map(|m| m.mean().abs())
        .fold(0.0, f64::max)
        .max(model.constant.abs());
    let c_theirs = entry.at("constant").num();
    let e = (model.constant - c_theirs).abs() / scale.max(c_theirs.abs()).max(f64::MIN_POSITIVE);
    assert!(e <= REL, "{ctx}: constant differs by {e:e} of the data");
    errors.constant = errors.constant.max(e);
    errors.constant_plain = errors.constant_plain.max(rel(model.constant, c_theirs));
    let ymax = points.iter().map(|m| m.mean().abs()).fold(0.0, f64::max);
    let rss_floor = points.len() as f64 * (1e-9 * ymax).powi(2);
    let (rss, rss_theirs) = (model.rss, entry.at("rss").num());
    errors.models += 1;
    errors.with_term += usize::from(!model.is_constant());
    if rss.max(rss_theirs) <= rss_floor {
        // An exact fit: the costs are rounding noise on both sides. Bounded, not compared.
        let smape = model.smape.max(entry.at("smape").num());
        assert!(smape <= EXACT_FIT_SMAPE, "{ctx}: exact fit with SMAPE {smape}");
        errors.exact_fits += 1;
        return model;
    }
    for (name, ours, theirs, slot) in [
        ("RSS", rss, rss_theirs, &mut errors.rss),
        ("SMAPE", model.smape, entry.at("smape").num(), &mut errors.smape),
        ("AR2", model.adjusted_r2, entry.at("ar2").num(), &mut errors.ar2),
    ] {
        let e = rel(ours, theirs);
        assert!(e <= REL, "{ctx}: {name} {ours} vs {theirs} ({e:e})");
        *slot = slot.max(e);
    }
    model
}

#[test]
fn models_equal_extrap_on_the_cube_set() {
    let fx = fixture("cubeset.json");
    let mut errors = Errors::default();
    for entry in fx.at("models").arr() {
        let what = format!("{} / {}", entry.at("callpath").str(), entry.at("metric").str());
        compare_model(entry, fx.at("parameter").str(), &what, &mut errors);
    }
    eprintln!("cube set: {errors:?}");
    assert_eq!(errors.models, 28);
}

#[test]
fn models_equal_extrap_on_the_tau_strong_scaling_run() {
    let fx = fixture("tau-strong-scaling.json");
    let mut errors = Errors::default();
    for (kind, data) in fx.at("kinds").obj() {
        for entry in data.at("models").arr() {
            let what = format!("{kind} {}", entry.at("event").str());
            compare_model(entry, fx.at("parameter").str(), &what, &mut errors);
        }
    }
    eprintln!("TAU strong scaling: {errors:?}");
    assert_eq!(errors.models, 22);
}

/// Sum over the threads that have `event`, and how many have it.
fn event_sum(p: &Profile, event: &str, kind: ValueKind, metric: &str) -> Option<(f64, usize)> {
    let e = p.event_by_name(event)?;
    let m = p
        .metric_by_name(metric)
        .unwrap_or_else(|| panic!("no metric {metric}"));
    let col = p.interval(e);
    let v = col.values(kind, m);
    Some((v.iter().sum(), v.len()))
}

#[test]
fn perfscape_reads_the_tau_means_extrap_modelled() {
    let fx = fixture("tau-strong-scaling.json");
    let base = corpus().join("tau/taucmdr-mm-strong-scaling-1to8rank");
    let mut compared = 0;
    for np in 1..=8 {
        let p = open(&base.join(format!("np{np}")), &OpenOptions::default())
            .unwrap()
            .profile;
        let threads = p.threads().len();
        assert_eq!(threads, np);
        for (kind_name, data) in fx.at("kinds").obj() {
            assert!(data.at("events_missing_in_some_run").arr().is_empty());
            let kind = match kind_name.as_str() {
                "exclusive" => ValueKind::Exclusive,
                "inclusive" => ValueKind::Inclusive,
                other => panic!("kind {other}"),
            };
            for entry in data.at("models").arr() {
                let event = entry.at("event").str();
                let point = entry
                    .at("points")
                    .arr()
                    .iter()
                    .find(|pt| pt.at("x").num() == f64::from(np as u32))
                    .unwrap();
                let theirs = point.at("values").arr()[0].num();
                let (sum, _) = event_sum(&p, event, kind, "TIME")
                    .unwrap_or_else(|| panic!("np{np}: perfscape has no event `{event}`"));
                let ours = sum / threads as f64;
                assert!(
                    rel(ours, theirs) <= 1e-15,
                    "np{np} {kind_name} `{event}`: {ours} vs {theirs}"
                );
                compared += 1;
            }
        }
        // Every flat event perfscape has with data is modelled (none left out).
        let flat_with_data = p
            .event_ids()
            .filter(|&e| !p.event_name(e).contains(" => ") && !p.interval(e).is_empty())
            .count();
        assert_eq!(
            flat_with_data,
            fx.at("kinds").at("exclusive").at("models").arr().len(),
            "np{np}"
        );
    }
    assert_eq!(compared, 8 * 22);
}

/// Metrics perfscape reads from the cube set that Extra-P does not model, with the reason.
const CUBE_NOT_MODELLED: [(&str, &str); 2] = [
    (
        "bytes_put",
        "no data in the files: Extra-P skips the metric (its warning), perfscape keeps it as 0",
    ),
    (
        "bytes_get",
        "no data in the files: Extra-P skips the metric (its warning), perfscape keeps it as 0",
    ),
];

#[test]
fn perfscape_reads_the_cube_values_extrap_modelled() {
    let fx = fixture("cubeset.json");
    let warnings: Vec<&str> = fx.at("reader_warnings").arr().iter().map(Get::str).collect();
    for (metric, _) in CUBE_NOT_MODELLED {
        assert!(
            warnings.iter().any(|w| w.contains(metric)),
            "{metric}: {warnings:?}"
        );
    }
    let dir = corpus().join("cube/extrap-mm-single-parameter-cubeset");
    let mut by_x: BTreeMap<u64, Profile> = BTreeMap::new();
    for x in [1u32, 10, 25, 50, 100, 250, 500, 1000, 2000] {
        let path = dir.join(format!("mm.x{x}y1z1.r1/profile.cubex"));
        by_x.insert(
            u64::from(x),
            open(&path, &OpenOptions::default()).unwrap().profile,
        );
    }
    let mut modelled: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut compared = 0;
    for entry in fx.at("models").arr() {
        let callpath = entry.at("callpath").str().replace("->", " => ");
        let metric = entry.at("metric").str();
        modelled
            .entry(metric.to_string())
            .or_default()
            .push(callpath.clone());
        for pt in entry.at("points").arr() {
            let x = pt.at("x").num();
            let p = &by_x[&(x as u64)];
            let values: Vec<f64> = pt.at("values").arr().iter().map(Get::num).collect();
            assert_eq!(values.len(), p.threads().len(), "x={x}: one value per location");
            let (ours, _) = event_sum(p, &callpath, ValueKind::Exclusive, metric)
                .unwrap_or_else(|| panic!("x={x}: no event `{callpath}`"));
            let theirs: f64 = values.iter().sum();
            assert!(
                rel(ours, theirs) <= 1e-15,
                "x={x} `{callpath}` {metric}: perfscape {ours}, Extra-P {theirs}"
            );
            compared += 1;
        }
    }
    // Every callpath × metric perfscape has is modelled, except the metrics listed above.
    for (x, p) in &by_x {
        for m in p.metric_ids() {
            let name = &p.metric(m).name;
            if CUBE_NOT_MODELLED.iter().any(|(n, _)| n == name) {
                continue;
            }
            let theirs = modelled
                .get(name.as_str())
                .unwrap_or_else(|| panic!("metric {name} not modelled"));
            // The call-tree nodes (callpaths), as Extra-P's callpaths are.
            let mut stack = p.call_tree().roots().to_vec();
            let mut ours = Vec::new();
            while let Some(e) = stack.pop() {
                stack.extend_from_slice(p.call_tree().children(e));
                ours.push(p.event_name(e));
            }
            assert!(!ours.is_empty());
            for cp in &ours {
                assert!(
                    theirs.contains(cp),
                    "x={x} {name}: `{cp}` not modelled by Extra-P"
                );
            }
        }
    }
    assert_eq!(compared, 28 * 9);
}

/// Made-up data sets (`synthetic.json`): every kind of candidate term, noise, repetitions,
/// shrinking data, parameter values below 1, zeros and negative values.
#[test]
fn models_equal_extrap_on_synthetic_data() {
    let fx = fixture("synthetic.json");
    let mut errors = Errors::default();
    let mut failures = Vec::new();
    for set in fx.at("sets").arr() {
        for entry in set.at("models").arr() {
            let what = format!("{} / {}", set.at("name").str(), entry.at("label").str());
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                compare_model(entry, "p", &what, &mut errors);
            }));
            if let Err(e) = r {
                let msg = e.downcast_ref::<String>().cloned();
                failures.push(
                    msg.or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_default(),
                );
            }
        }
    }
    for f in &failures {
        eprintln!("{f}");
    }
    assert!(failures.is_empty(), "{} failures", failures.len());
    eprintln!("synthetic: {errors:?}");
    assert!(errors.models > 300 && errors.with_term > 250, "{errors:?}");
}
