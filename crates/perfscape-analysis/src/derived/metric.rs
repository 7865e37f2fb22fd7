//! Derived metrics: `NAME = EXPRESSION` over the measured metrics, evaluated per (event,
//! thread) cell, exclusive from the exclusive values and inclusive from the inclusive ones,
//! as ParaProf's "derived metric" does (`perfdmf` `DeriveMetricOperation` computes a new
//! metric's exclusive and inclusive value of each function profile from the same values of
//! its operands). The result is a metric like any other in every view and table.

use super::expression::{Expression, ExpressionError};
use perfscape_model::{Combine, Metric, Profile, Unit, ValueKind};
use std::fmt;
use std::str::FromStr;

/// A derived metric as the user writes it: `IPC = PAPI_TOT_INS / PAPI_TOT_CYC`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DerivedMetricSpec {
    /// The new metric's name (left of the first `=`, trimmed).
    pub name: String,
    /// Its expression (right of the first `=`; see [`Expression`] for the syntax).
    pub expression: String,
}

/// Why a derived metric could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeriveError {
    /// The text is not `NAME = EXPRESSION`.
    #[error(
        "`{0}` is not a derived metric: expected `NAME = EXPRESSION`, e.g. `IPC = PAPI_TOT_INS / PAPI_TOT_CYC`"
    )]
    NotADefinition(String),
    /// The name is already a metric of the profile.
    #[error("derived metric `{0}`: the profile already has a metric of that name")]
    NameTaken(String),
    /// The expression could not be read.
    #[error("derived metric `{name}`: {error}")]
    Expression {
        /// The derived metric's name.
        name: String,
        /// What is wrong with its expression.
        error: ExpressionError,
    },
}

impl FromStr for DerivedMetricSpec {
    type Err = DeriveError;

    /// Reads `NAME = EXPRESSION`; both sides non-empty.
    fn from_str(s: &str) -> Result<Self, DeriveError> {
        let (name, expression) = s
            .split_once('=')
            .ok_or_else(|| DeriveError::NotADefinition(s.to_string()))?;
        let (name, expression) = (name.trim(), expression.trim());
        if name.is_empty() || expression.is_empty() {
            return Err(DeriveError::NotADefinition(s.to_string()));
        }
        Ok(DerivedMetricSpec {
            name: name.to_string(),
            expression: expression.to_string(),
        })
    }
}

impl fmt::Display for DerivedMetricSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} = {}", self.name, self.expression)
    }
}

/// What deriving a metric made: its place, rule and unit, and how many cells have no value.
#[derive(Debug, Clone, PartialEq)]
pub struct DerivedReport {
    /// The definition.
    pub spec: DerivedMetricSpec,
    /// The new metric (the last of the profile).
    pub metric: perfscape_model::MetricId,
    /// How its values combine ([`Expression::combine`]).
    pub combine: Combine,
    /// Its unit ([`Expression::unit`]).
    pub unit: Unit,
    /// Exclusive and inclusive values computed: 2 per (event, thread) cell.
    pub values: usize,
    /// Of those, how many have no value (a division by zero, an operand without a value, a
    /// result too large for a number); the views show them as empty cells.
    pub no_value: usize,
}

impl fmt::Display for DerivedReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "derived metric {} (unit {}, combined by {}): ",
            self.spec,
            self.unit.symbol(),
            self.combine
        )?;
        if self.no_value == 0 {
            write!(f, "all {} exclusive and inclusive values computed", self.values)
        } else {
            write!(
                f,
                "{} of {} exclusive and inclusive values have no value (a division by zero or an operand without a value)",
                self.no_value, self.values
            )
        }
    }
}

/// The expression of `spec` read against `profile`'s metrics: what [`derive_metric`] checks
/// before it takes the profile, for callers that must keep the profile when `spec` does not
/// fit it.
///
/// Errors: the name is taken, or the expression is not one over this profile's metrics.
pub fn check_derived(profile: &Profile, spec: &DerivedMetricSpec) -> Result<Expression, DeriveError> {
    if profile
        .metric_by_name(&spec.name)
        .is_some_and(|m| profile.metric(m).name == spec.name)
    {
        return Err(DeriveError::NameTaken(spec.name.clone()));
    }
    Expression::parse(&spec.expression, profile.metrics()).map_err(|error| DeriveError::Expression {
        name: spec.name.clone(),
        error,
    })
}

/// The profile with the derived metric `spec` added last, and what was made.
///
/// Every (event, thread) cell's exclusive value is the expression of the cell's exclusive
/// values, its inclusive value that of its inclusive values; a thread total given by the
/// reader likewise. Calls, subcalls and the other metrics are unchanged.
///
/// Errors: the name is taken, or the expression is not one over this profile's metrics.
pub fn derive_metric(
    profile: Profile,
    spec: &DerivedMetricSpec,
) -> Result<(Profile, DerivedReport), DeriveError> {
    let expression = check_derived(&profile, spec)?;
    let combine = expression.combine(profile.metrics());
    let unit = expression.unit(profile.metrics());
    let metric = Metric::new(spec.name.clone(), unit.clone()).combined_by(combine);
    let id = perfscape_model::MetricId::from(profile.metrics().len());
    let profile = profile.with_metric(metric, |values| expression.eval(values));
    let (mut values, mut no_value) = (0, 0);
    for e in profile.event_ids() {
        let col = profile.interval(e);
        for kind in [ValueKind::Exclusive, ValueKind::Inclusive] {
            let v = col.values(kind, id);
            values += v.len();
            no_value += v.iter().filter(|x| x.is_nan()).count();
        }
    }
    let report = DerivedReport {
        spec: spec.clone(),
        metric: id,
        combine,
        unit,
        values,
        no_value,
    };
    Ok((profile, report))
}

#[cfg(test)]
mod tests {
    use super::*;
    use perfscape_model::{MetricId, ProfileBuilder, ThreadData, ThreadId};

    fn profile() -> Profile {
        let mut b = ProfileBuilder::new(vec![Metric::tau("TIME"), Metric::tau("CPU_TIME")]);
        for (rank, (wall, cpu)) in [(20.0, 10.0), (0.0, 0.0)].into_iter().enumerate() {
            let mut d = ThreadData::new(2);
            d.push_timer(
                "main",
                "TAU_DEFAULT",
                3.0,
                1.0,
                &[wall / 2.0, cpu / 2.0],
                &[wall, cpu],
            )
            .unwrap();
            b.add_thread(ThreadId::new(rank as u32, 0, 0), d).unwrap();
        }
        b.finish().0
    }

    #[test]
    fn adds_the_metric_last_and_counts_cells_without_value() {
        let spec: DerivedMetricSpec = " CPU share = CPU_TIME / TIME ".parse().unwrap();
        assert_eq!(spec.name, "CPU share");
        let (p, report) = derive_metric(profile(), &spec).unwrap();
        assert_eq!(report.metric, MetricId(2));
        assert_eq!(p.metric(MetricId(2)).name, "CPU share");
        assert_eq!(p.metric(MetricId(2)).combine, Combine::Mean);
        let e = p.event_by_name("main").unwrap();
        let inc = p.interval(e).values(ValueKind::Inclusive, MetricId(2));
        assert_eq!(inc[0], 0.5);
        assert!(inc[1].is_nan());
        assert_eq!((report.values, report.no_value), (4, 2));
        assert!(report.to_string().contains("2 of 4"), "{report}");
        // The measured metrics and the counts are unchanged.
        assert_eq!(
            p.interval(e).values(ValueKind::Inclusive, MetricId(0)),
            &[20.0, 0.0]
        );
        assert_eq!(p.interval(e).calls(), &[3.0, 3.0]);
    }

    #[test]
    fn refuses_bad_definitions() {
        assert!(matches!(
            "TIME".parse::<DerivedMetricSpec>(),
            Err(DeriveError::NotADefinition(_))
        ));
        assert!(matches!(
            " = TIME".parse::<DerivedMetricSpec>(),
            Err(DeriveError::NotADefinition(_))
        ));
        let taken = "TIME = CPU_TIME * 2".parse().unwrap();
        assert_eq!(
            derive_metric(profile(), &taken).unwrap_err(),
            DeriveError::NameTaken("TIME".into())
        );
        let bad = "X = TIME / WALL".parse().unwrap();
        let e = derive_metric(profile(), &bad).unwrap_err().to_string();
        assert!(
            e.starts_with("derived metric `X`: ") && e.contains("no metric `WALL`"),
            "{e}"
        );
    }
}
