//! Single-parameter scaling models in Extra-P's performance-model normal form (PMNF).
//!
//! A model of a measured quantity `f` (the time of an event, say) against one parameter `p`
//! (the process count, say) is either a constant or `f(p) = c + k * p^(i/j) * log2(p)^l`,
//! with the exponent pair `(i/j, l)` taken from a fixed set of 42 candidates
//! ([`HYPOTHESES`]). [`fit`] replicates the DEFAULT single-parameter modeler of Extra-P
//! exactly (extrap 4.2.5, `extrap/modelers/single_parameter/basic.py`
//! `SingleParameterModeler.create_model` with the defaults `extrap` runs: log terms allowed, no
//! negative exponents, cross-validation on, SMAPE comparison, minimum term contribution
//! 0.0005, mean of the repetitions), so that its models are Extra-P's models:
//!
//! 1. each point's value is the mean of its repetitions (`Measure.MEAN`; numpy's summation
//!    order is reproduced, see [`Measurement::mean`]);
//! 2. the constant model is the mean of the point values; if its residual sum of squares is
//!    exactly 0 it is the answer (`create_model`);
//! 3. otherwise every candidate `c + k * term` is scored by leave-one-out cross-validation
//!    (`AbstractSingleParameterModeler.find_best_hypothesis`): fitted by least squares without
//!    one point (its constant set to 0 when `|c / min(values)| < 0.0005`,
//!    `Hypothesis.clean_constant_coefficient`), the left-out point predicted, and the squared
//!    and the symmetric relative errors added up (`compute_cost_leave_one_out`); the final
//!    coefficients are fitted on all points;
//! 4. a candidate is dropped if its cost is not finite (`is_valid`), its coefficient is 0 or
//!    the term contributes less than 0.0005 of the value at every point
//!    (`compare_hypotheses`, `calc_term_contribution`); it replaces the best model so far
//!    (initially the constant one) only if its SMAPE is strictly smaller, so earlier
//!    candidates win ties;
//! 5. log terms are only tried when every `p >= 1` (`get_matching_hypotheses`).
//!
//! The method is from Calotoiu, Hoefler, Poke, Wolf: "Using automated performance modeling to
//! find scalability bugs in complex codes", SC13 (doi:10.1145/2503210.2503277).
//! `tests/pmnf_extrap.rs` checks the models equal Extra-P's on two corpus runs and on
//! made-up data (fixtures made by `scripts/ref/extrap_models.py`).

use serde::Serialize;
use std::cmp::Ordering;
use std::fmt::Write as _;

/// Extra-P's minimum number of measurement points (`SingleParameterModeler.min_measurement_points`).
///
/// Extra-P only warns below it and models anyway; [`fit`] refuses with
/// [`FitError::TooFewPoints`], as a leave-one-out fit of two coefficients on fewer points says
/// little.
pub const MIN_POINTS: usize = 5;

/// The candidate terms `(i, j, l)` for `p^(i/j) * log2(p)^l`, in Extra-P's search order
/// (`SingleParameterModeler.create_default_building_blocks(allow_log_terms=True)` in
/// `extrap/modelers/single_parameter/basic.py`). The order matters: on equal SMAPE the
/// earlier candidate is kept.
pub const HYPOTHESES: [(i32, i32, u32); 42] = [
    (0, 1, 1),
    (0, 1, 2),
    (1, 4, 0),
    (1, 3, 0),
    (1, 4, 1),
    (1, 3, 1),
    (1, 4, 2),
    (1, 3, 2),
    (1, 2, 0),
    (1, 2, 1),
    (1, 2, 2),
    (2, 3, 0),
    (3, 4, 0),
    (2, 3, 1),
    (3, 4, 1),
    (4, 5, 0),
    (2, 3, 2),
    (3, 4, 2),
    (1, 1, 0),
    (1, 1, 1),
    (1, 1, 2),
    (5, 4, 0),
    (5, 4, 1),
    (4, 3, 0),
    (4, 3, 1),
    (3, 2, 0),
    (3, 2, 1),
    (3, 2, 2),
    (5, 3, 0),
    (7, 4, 0),
    (2, 1, 0),
    (2, 1, 1),
    (2, 1, 2),
    (9, 4, 0),
    (7, 3, 0),
    (5, 2, 0),
    (5, 2, 1),
    (5, 2, 2),
    (8, 3, 0),
    (11, 4, 0),
    (3, 1, 0),
    (3, 1, 1),
];

/// Constants below this fraction of the smallest training value are set to 0 during
/// cross-validation (`AbstractSingleParameterModeler.__init__`: `self.epsilon = 0.0005`).
const CLEAN_CONSTANT_EPSILON: f64 = 0.0005;

/// A term contributing less than this fraction of the value at every point is not accepted
/// (`AbstractSingleParameterModeler.minimum_term_contribution`, default 0.0005).
const MIN_TERM_CONTRIBUTION: f64 = 0.0005;

/// The repetitions measured at one parameter value: `values` (any unit, e.g. microseconds)
/// measured with the parameter (e.g. the process count) equal to `x`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Measurement {
    /// The parameter value; finite and `>= 0` (log terms are only tried when all are `>= 1`).
    pub x: f64,
    /// The repetitions (at least one, all finite), in the unit of the modelled quantity.
    pub values: Vec<f64>,
}

impl Measurement {
    /// A point with the given repetitions.
    pub fn new(x: f64, values: Vec<f64>) -> Self {
        Self { x, values }
    }

    /// The mean of the repetitions as numpy computes it (`numpy.ma.mean`, used by Extra-P's
    /// `Measurement.mean`): numpy's pairwise sum divided by the count, so that the value is
    /// bit for bit Extra-P's. NaN when there is no repetition.
    pub fn mean(&self) -> f64 {
        numpy_mean(&self.values)
    }
}

/// One PMNF term `coefficient * p^(i/j) * log2(p)^l` (Extra-P's `CompoundTerm`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Term {
    /// The factor `k`, in the unit of the modelled quantity.
    pub coefficient: f64,
    /// The polynomial exponent `(i, j)` = `i/j` in lowest terms, `j > 0`; `(0, 1)` for none.
    pub poly_exponent: (i32, i32),
    /// The exponent `l` of `log2(p)`; 0 for none.
    pub log_exponent: u32,
}

impl Term {
    /// The term at `x`: `coefficient * x^(i/j) * log2(x)^l`, multiplied in Extra-P's order
    /// (`CompoundTerm.evaluate`).
    pub fn eval(&self, x: f64) -> f64 {
        self.coefficient * basis(self.poly_exponent, self.log_exponent, x)
    }

    /// The asymptotic class of `p^(i/j) * log2(p)^l`, without the coefficient.
    pub fn growth(&self) -> Growth {
        Growth {
            poly_exponent: self.poly_exponent,
            log_exponent: self.log_exponent,
        }
    }
}

/// `x^(i/j) * log2(x)^l` (1 when both exponents are 0), as Extra-P's `SimpleTerm`s compute it:
/// `x ** float(Fraction(i, j))` and `numpy.log2(x) ** l`.
fn basis((num, den): (i32, i32), log: u32, x: f64) -> f64 {
    let mut v = 1.0;
    if num != 0 {
        v *= x.powf(f64::from(num) / f64::from(den));
    }
    if log != 0 {
        v *= x.log2().powf(f64::from(log));
    }
    v
}

/// How fast a model grows with the parameter: `p^(i/j) * log2(p)^l`. Ordered by the
/// polynomial exponent, then the log exponent, so `a > b` means `a` grows asymptotically
/// faster (e.g. an event whose growth exceeds the run total's takes a growing share of it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Growth {
    /// `(i, j)`: the exponent `i/j` of `p`, `j > 0`.
    pub poly_exponent: (i32, i32),
    /// The exponent of `log2(p)`.
    pub log_exponent: u32,
}

impl Growth {
    /// No growth: a constant.
    pub const CONSTANT: Growth = Growth {
        poly_exponent: (0, 1),
        log_exponent: 0,
    };
}

impl Ord for Growth {
    fn cmp(&self, other: &Self) -> Ordering {
        let (a, b) = (self.poly_exponent, other.poly_exponent);
        // a.0/a.1 vs b.0/b.1 with positive denominators, exactly.
        (i64::from(a.0) * i64::from(b.1))
            .cmp(&(i64::from(b.0) * i64::from(a.1)))
            .then(self.log_exponent.cmp(&other.log_exponent))
    }
}

impl PartialOrd for Growth {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// A fitted model `constant + Σ terms` with Extra-P's quality measures.
///
/// For a model with a term, `rss` and `smape` are Extra-P's leave-one-out cross-validation
/// costs (each point predicted by the model fitted without it), not the residuals of the
/// final fit; for the constant model they are the residuals of the mean. Both are what
/// Extra-P stores and prints as the model's RSS and SMAPE.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ScalingModel {
    /// The constant coefficient `c`, in the unit of the modelled quantity.
    pub constant: f64,
    /// The terms (none for a constant model, at most one from [`fit`]).
    pub terms: Vec<Term>,
    /// Residual sum of squares, in the unit squared (see above).
    pub rss: f64,
    /// Symmetric mean absolute percentage error, in percent (0 to 200; see above).
    pub smape: f64,
    /// Adjusted R²: `1 - (rss / tss) * (n - 1) / (n - 2)` with `tss` the constant model's
    /// RSS; 1 for the constant model (Extra-P's `ConstantHypothesis.AR2`). Can be negative.
    pub adjusted_r2: f64,
}

impl ScalingModel {
    /// The model's value at parameter value `x`: `constant + Σ term(x)`, in Extra-P's order
    /// (`Function.evaluate`).
    pub fn eval(&self, x: f64) -> f64 {
        self.terms.iter().fold(self.constant, |acc, t| acc + t.eval(x))
    }

    /// True when the model has no term.
    pub fn is_constant(&self) -> bool {
        self.terms.is_empty()
    }

    /// The growth class of the fastest growing term with a positive coefficient;
    /// [`Growth::CONSTANT`] when there is none (a term with a negative coefficient makes the
    /// model shrink).
    pub fn growth(&self) -> Growth {
        self.terms
            .iter()
            .filter(|t| t.coefficient > 0.0)
            .map(Term::growth)
            .max()
            .unwrap_or(Growth::CONSTANT)
    }

    /// The formula as Extra-P prints it (`Function.to_string(param)` with coefficients as
    /// Python's `repr`), e.g. `2.1432113201334504e-05 + 1.629147310990101e-10 * p^(5/4) *
    /// log2(p)^(1)`: the constant is left out when it is 0 and the model has a term, and a
    /// coefficient equal to 1 is left out.
    pub fn formula(&self, param: &str) -> String {
        let mut parts = Vec::with_capacity(self.terms.len() + 1);
        if self.constant != 0.0 || self.terms.is_empty() {
            parts.push(py_repr(self.constant));
        }
        for t in &self.terms {
            let mut factors = Vec::with_capacity(3);
            let (num, den) = t.poly_exponent;
            if t.coefficient != 1.0 || (num == 0 && t.log_exponent == 0) {
                factors.push(py_repr(t.coefficient));
            }
            if num != 0 {
                if den == 1 {
                    factors.push(format!("{param}^({num})"));
                } else {
                    factors.push(format!("{param}^({num}/{den})"));
                }
            }
            if t.log_exponent != 0 {
                factors.push(format!("log2({param})^({})", t.log_exponent));
            }
            parts.push(factors.join(" * "));
        }
        parts.join(" + ")
    }
}

/// Why [`fit`] cannot model the points.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum FitError {
    /// Fewer than [`MIN_POINTS`] points.
    #[error("a scaling model needs at least {need} parameter values, got {got}")]
    TooFewPoints {
        /// Points given.
        got: usize,
        /// [`MIN_POINTS`].
        need: usize,
    },
    /// A parameter value is NaN, infinite or negative.
    #[error("parameter value {x} is not a finite number >= 0")]
    InvalidX {
        /// The parameter value.
        x: f64,
    },
    /// Two points have the same parameter value (give one point with both repetitions).
    #[error("parameter value {x} appears twice; give its repetitions as one point")]
    DuplicateX {
        /// The repeated parameter value.
        x: f64,
    },
    /// A point has no repetition.
    #[error("no value at parameter value {x}")]
    NoValues {
        /// The parameter value.
        x: f64,
    },
    /// A measured value is NaN or infinite.
    #[error("value {value} at parameter value {x} is not finite")]
    NonFiniteValue {
        /// The parameter value.
        x: f64,
        /// The value.
        value: f64,
    },
}

/// Fits the scaling model of `points` that Extra-P's default single-parameter modeler makes
/// (see the module documentation for the algorithm and the Extra-P source it replicates).
///
/// `points`: one [`Measurement`] per parameter value, in any order (Extra-P's is ascending;
/// the order only changes the last bits of the sums). Returns the constant model or the best
/// `c + k * p^(i/j) * log2(p)^l` of [`HYPOTHESES`].
///
/// # Errors
///
/// [`FitError::TooFewPoints`] below [`MIN_POINTS`] points, [`FitError::InvalidX`] for a
/// parameter value that is not finite or negative, [`FitError::DuplicateX`] when a value
/// appears twice, [`FitError::NoValues`] for a point without repetitions and
/// [`FitError::NonFiniteValue`] for a NaN or infinite value.
pub fn fit(points: &[Measurement]) -> Result<ScalingModel, FitError> {
    check(points)?;
    let xs: Vec<f64> = points.iter().map(|m| m.x).collect();
    let ys: Vec<f64> = points.iter().map(Measurement::mean).collect();
    let n = xs.len();

    // create_constant_model: the mean of the means, its RSS and SMAPE on all points.
    let mean = numpy_mean(&ys);
    let (mut tss, mut smape_sum) = (0.0, 0.0);
    for &y in &ys {
        let d = mean - y;
        tss += d * d;
        let abssum = y.abs() + mean.abs();
        if abssum != 0.0 {
            smape_sum += d.abs() / abssum * 2.0;
        }
    }
    let mut best = ScalingModel {
        constant: mean,
        terms: Vec::new(),
        rss: tss,
        smape: smape_sum / n as f64 * 100.0,
        adjusted_r2: 1.0,
    };
    if tss == 0.0 {
        return Ok(best);
    }

    let log_capable = xs.iter().all(|&x| x >= 1.0);
    let mut train_x = Vec::with_capacity(n - 1);
    let mut train_y = Vec::with_capacity(n - 1);
    for &(num, den, log) in &HYPOTHESES {
        if log != 0 && !log_capable {
            continue;
        }
        let exps = ((num, den), log);
        // Leave-one-out cross-validation (find_best_hypothesis, compute_cost_leave_one_out).
        let (mut rss, mut smape) = (0.0, 0.0);
        for k in 0..n {
            train_x.clear();
            train_y.clear();
            for i in (0..n).filter(|&i| i != k) {
                train_x.push(xs[i]);
                train_y.push(ys[i]);
            }
            let (mut c, coef) = least_squares(exps, &train_x, &train_y);
            let minimum = train_y.iter().copied().fold(f64::INFINITY, f64::min);
            let clean = if minimum == 0.0 {
                c.abs() < CLEAN_CONSTANT_EPSILON
            } else {
                (c / minimum).abs() < CLEAN_CONSTANT_EPSILON
            };
            if clean {
                c = 0.0;
            }
            let predicted = c + coef * basis(exps.0, exps.1, xs[k]);
            let actual = ys[k];
            let d = predicted - actual;
            rss += d * d;
            let abssum = actual.abs() + predicted.abs();
            if abssum != 0.0 {
                smape += d.abs() / abssum * 2.0 / n as f64 * 100.0;
            }
        }
        let (c, coef) = least_squares(exps, &xs, &ys);
        // compute_adjusted_rsquared: one term, so n - 2 degrees of freedom.
        let adj_r = 1.0 - rss / tss;
        let adjusted_r2 = 1.0 - (1.0 - adj_r) * (n as f64 - 1.0) / (n as f64 - 2.0);
        // is_valid, then compare_hypotheses.
        if rss.is_nan() || rss.is_infinite() {
            continue;
        }
        if coef == 0.0 || term_contribution(coef, exps, &xs, &ys) < MIN_TERM_CONTRIBUTION {
            continue;
        }
        if smape < best.smape {
            best = ScalingModel {
                constant: c,
                terms: vec![Term {
                    coefficient: coef,
                    poly_exponent: (num, den),
                    log_exponent: log,
                }],
                rss,
                smape,
                adjusted_r2,
            };
        }
    }
    Ok(best)
}

fn check(points: &[Measurement]) -> Result<(), FitError> {
    if points.len() < MIN_POINTS {
        return Err(FitError::TooFewPoints {
            got: points.len(),
            need: MIN_POINTS,
        });
    }
    for m in points {
        if !m.x.is_finite() || m.x < 0.0 {
            return Err(FitError::InvalidX { x: m.x });
        }
        if m.values.is_empty() {
            return Err(FitError::NoValues { x: m.x });
        }
        if let Some(&value) = m.values.iter().find(|v| !v.is_finite()) {
            return Err(FitError::NonFiniteValue { x: m.x, value });
        }
    }
    let mut xs: Vec<f64> = points.iter().map(|m| m.x).collect();
    xs.sort_by(f64::total_cmp);
    if let Some(w) = xs.windows(2).find(|w| w[0] == w[1]) {
        return Err(FitError::DuplicateX { x: w[0] });
    }
    Ok(())
}

/// Least-squares `(c, k)` of `y ≈ c + k * basis(x)` (Extra-P's
/// `SingleParameterHypothesis.compute_coefficients`, which calls `numpy.linalg.lstsq`).
///
/// Solved on centred data, `k = Σ(f - f̄)(y - ȳ) / Σ(f - f̄)²`, `c = ȳ - k f̄`: the exact
/// least-squares solution, computed without forming the ill-conditioned normal equations of
/// the raw columns (`p^3` reaches 8e9 next to the column of ones). With distinct parameter
/// values the basis is never constant (every candidate is monotone for `x >= 1`, and without
/// log terms for `x >= 0`), so `Σ(f - f̄)² > 0` unless it overflows (then NaN comes out and
/// the candidate is dropped as invalid, where numpy would raise).
fn least_squares(exps: ((i32, i32), u32), xs: &[f64], ys: &[f64]) -> (f64, f64) {
    let f: Vec<f64> = xs.iter().map(|&x| basis(exps.0, exps.1, x)).collect();
    let n = f.len() as f64;
    let f_mean = f.iter().sum::<f64>() / n;
    let y_mean = ys.iter().sum::<f64>() / n;
    let (mut sff, mut sfy) = (0.0, 0.0);
    for (&fi, &yi) in f.iter().zip(ys) {
        let df = fi - f_mean;
        sff += df * df;
        sfy += df * (yi - y_mean);
    }
    let k = sfy / sff;
    (y_mean - k * f_mean, k)
}

/// The largest `|term(x) / value|` over the points (`Hypothesis.calc_term_contribution`);
/// NaN if any ratio is NaN, as numpy's `max` propagates it (and `NaN < 0.0005` is false, so
/// the term is then kept, as in Extra-P).
fn term_contribution(coef: f64, exps: ((i32, i32), u32), xs: &[f64], ys: &[f64]) -> f64 {
    let mut max = f64::NEG_INFINITY;
    for (&x, &y) in xs.iter().zip(ys) {
        let r = (coef * basis(exps.0, exps.1, x) / y).abs();
        if r.is_nan() {
            return f64::NAN;
        }
        max = max.max(r);
    }
    max
}

/// numpy's `mean` of a contiguous float64 array: [`numpy_sum`] divided by the length.
fn numpy_mean(v: &[f64]) -> f64 {
    numpy_sum(v) / v.len() as f64
}

/// numpy's pairwise summation of float64 (`pairwise_sum` in numpy's
/// `umath/loops_utils.h.src`): below 8 values a plain loop, up to 128 eight interleaved
/// partial sums, above that the two halves (split at a multiple of 8) recursively.
fn numpy_sum(a: &[f64]) -> f64 {
    let n = a.len();
    if n < 8 {
        let mut res = 0.0;
        for &v in a {
            res += v;
        }
        res
    } else if n <= 128 {
        let mut r = [0.0; 8];
        r.copy_from_slice(&a[..8]);
        let full = n - n % 8;
        let mut i = 8;
        while i < full {
            for (j, rj) in r.iter_mut().enumerate() {
                *rj += a[i + j];
            }
            i += 8;
        }
        let mut res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for &v in &a[full..] {
            res += v;
        }
        res
    } else {
        let mut n2 = n / 2;
        n2 -= n2 % 8;
        numpy_sum(&a[..n2]) + numpy_sum(&a[n2..])
    }
}

/// Python's `repr` of a float (shortest round-trip digits; positional for exponents -4 to 15,
/// else `d.ddde±XX`), which Extra-P's formulas use.
fn py_repr(v: f64) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf" } else { "-inf" }.into();
    }
    if v == 0.0 {
        return if v.is_sign_negative() { "-0.0" } else { "0.0" }.into();
    }
    // Rust's `{:e}` gives the shortest round-trip digits: `-1.2345e-5`.
    let sci = format!("{v:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let mut out = String::from(sign);
    if (-4..16).contains(&exp) {
        if exp < 0 {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-exp - 1) as usize));
            out.push_str(&digits);
        } else {
            let int_len = exp as usize + 1;
            if digits.len() <= int_len {
                out.push_str(&digits);
                out.extend(std::iter::repeat_n('0', int_len - digits.len()));
                out.push_str(".0");
            } else {
                out.push_str(&digits[..int_len]);
                out.push('.');
                out.push_str(&digits[int_len..]);
            }
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let _ = write!(out, "e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const XS: [f64; 9] = [1.0, 10.0, 25.0, 50.0, 100.0, 250.0, 500.0, 1000.0, 2000.0];

    fn points(f: impl Fn(f64) -> f64) -> Vec<Measurement> {
        XS.iter().map(|&x| Measurement::new(x, vec![f(x)])).collect()
    }

    fn single_term(m: &ScalingModel) -> &Term {
        assert_eq!(m.terms.len(), 1, "{}", m.formula("p"));
        &m.terms[0]
    }

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * a.abs().max(b.abs())
    }

    #[test]
    fn constant_data_gives_the_constant_model() {
        let m = fit(&points(|_| 4.25)).unwrap();
        assert!(m.is_constant());
        assert_eq!((m.constant, m.rss, m.smape, m.adjusted_r2), (4.25, 0.0, 0.0, 1.0));
        assert_eq!(m.formula("p"), "4.25");
        assert_eq!(m.growth(), Growth::CONSTANT);
        // Repetitions are averaged first.
        let reps: Vec<_> = XS.iter().map(|&x| Measurement::new(x, vec![1.0, 3.0])).collect();
        assert_eq!(fit(&reps).unwrap().formula("p"), "2.0");
    }

    #[test]
    fn exact_power_laws_are_recovered() {
        for ((num, den), log, k) in [((2, 1), 0, 3.0), ((1, 1), 1, 0.5), ((1, 2), 0, 7.0)] {
            let e = ((num, den), log);
            let m = fit(&points(|x| 10.0 + k * basis(e.0, e.1, x))).unwrap();
            let t = single_term(&m);
            assert_eq!((t.poly_exponent, t.log_exponent), e, "{}", m.formula("p"));
            assert!(close(t.coefficient, k, 1e-9), "{}", m.formula("p"));
            assert!(close(m.constant, 10.0, 1e-6), "{}", m.formula("p"));
            assert!(m.smape < 1e-6 && m.adjusted_r2 > 0.999_999, "{m:?}");
            assert_eq!(m.growth(), t.growth());
            assert!(close(m.eval(300.0), 10.0 + k * basis(e.0, e.1, 300.0), 1e-9));
        }
        // Without an offset (and a log term only).
        let m = fit(&points(|x| 2.0 * x.log2() * x.log2())).unwrap();
        let t = single_term(&m);
        assert_eq!((t.poly_exponent, t.log_exponent), ((0, 1), 2));
        assert!(m.constant.abs() < 1e-9, "{}", m.formula("p"));
    }

    #[test]
    fn log_terms_need_parameter_values_of_at_least_one() {
        let xs = [0.5, 2.0, 3.0, 4.0, 5.0, 6.0];
        let pts: Vec<_> = xs
            .iter()
            .map(|&x| Measurement::new(x, vec![1.0 + x * x]))
            .collect();
        let m = fit(&pts).unwrap();
        assert_eq!(single_term(&m).poly_exponent, (2, 1));
        assert_eq!(single_term(&m).log_exponent, 0);
    }

    #[test]
    fn growth_orders_by_polynomial_then_log_exponent() {
        let g = |p, l| Growth {
            poly_exponent: p,
            log_exponent: l,
        };
        assert!(g((1, 2), 2) < g((2, 3), 0));
        assert!(g((1, 1), 1) > g((1, 1), 0));
        assert!(g((2, 1), 0) > g((3, 2), 2));
        assert_eq!(g((2, 4), 0).cmp(&g((1, 2), 0)), Ordering::Equal);
        assert!(Growth::CONSTANT < g((0, 1), 1));
        // A shrinking term does not grow.
        let m = ScalingModel {
            constant: 5.0,
            terms: vec![Term {
                coefficient: -1.0,
                poly_exponent: (1, 1),
                log_exponent: 0,
            }],
            rss: 0.0,
            smape: 0.0,
            adjusted_r2: 1.0,
        };
        assert_eq!(m.growth(), Growth::CONSTANT);
        assert_eq!(m.formula("p"), "5.0 + -1.0 * p^(1)");
    }

    #[test]
    fn bad_input_is_refused() {
        let mut pts = points(|x| x);
        assert_eq!(
            fit(&pts[..4]),
            Err(FitError::TooFewPoints {
                got: 4,
                need: MIN_POINTS
            })
        );
        pts[2].values.push(f64::NAN);
        assert!(matches!(fit(&pts), Err(FitError::NonFiniteValue { x: 25.0, .. })));
        pts[2].values = vec![];
        assert_eq!(fit(&pts), Err(FitError::NoValues { x: 25.0 }));
        pts[2].values = vec![1.0];
        pts[3].x = f64::NAN;
        assert!(matches!(fit(&pts), Err(FitError::InvalidX { .. })));
        pts[3].x = -1.0;
        assert_eq!(fit(&pts), Err(FitError::InvalidX { x: -1.0 }));
        pts[3].x = 10.0;
        assert_eq!(fit(&pts), Err(FitError::DuplicateX { x: 10.0 }));
    }

    #[test]
    fn formulas_print_like_extrap() {
        let m = ScalingModel {
            constant: 2.1432113201334504e-05,
            terms: vec![Term {
                coefficient: 1.629147310990101e-10,
                poly_exponent: (5, 4),
                log_exponent: 1,
            }],
            rss: 0.0,
            smape: 0.0,
            adjusted_r2: 0.0,
        };
        assert_eq!(
            m.formula("x"),
            "2.1432113201334504e-05 + 1.629147310990101e-10 * x^(5/4) * log2(x)^(1)"
        );
        for (v, s) in [
            (1.0, "1.0"),
            (0.0001, "0.0001"),
            (0.00012, "0.00012"),
            (1e-5, "1e-05"),
            (-0.022306741162339577, "-0.022306741162339577"),
            (1e15, "1000000000000000.0"),
            (1e16, "1e+16"),
            (1.2345678901234568e17, "1.2345678901234568e+17"),
            (2207221.5676265834, "2207221.5676265834"),
            (123.0, "123.0"),
            (1.5e300, "1.5e+300"),
            (-0.0, "-0.0"),
        ] {
            assert_eq!(py_repr(v), s);
        }
    }

    #[test]
    fn means_follow_numpys_pairwise_summation() {
        // Sums where the order matters: a plain left-to-right loop differs from numpy's.
        let v: Vec<f64> = (0..200)
            .map(|i| 0.1 * f64::from(i % 7) + 1e-3 * f64::from(i))
            .collect();
        let plain = v.iter().sum::<f64>();
        let pairwise = numpy_sum(&v);
        assert!((plain - pairwise).abs() < 1e-9);
        // The 8-way interleaving for 8..=128 values, checked on exactly representable sums.
        let w: Vec<f64> = (1..=20).map(f64::from).collect();
        assert_eq!(numpy_sum(&w), 210.0);
        assert_eq!(Measurement::new(1.0, w).mean(), 10.5);
    }
}
