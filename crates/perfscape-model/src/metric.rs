//! Metrics: what was measured (time, a hardware counter, bytes), in which unit, and how its
//! values combine across threads and call paths.

use serde::{Deserialize, Serialize};

/// The unit of a metric's values.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// Seconds (Score-P/CUBE `sec`, HPCToolkit and Caliper times).
    Seconds,
    /// Microseconds: TAU's `TIME`, `CPU_TIME`, `P_WALL_CLOCK_TIME`, ... are written in µs.
    Microseconds,
    /// Nanoseconds (Chrome traces with `displayTimeUnit: ns`, pprof wall/cpu profiles).
    Nanoseconds,
    /// Processor cycles (convertible to time given a clock frequency).
    Cycles,
    /// Bytes (TAU's `TAU_MPI_MESSAGE_SIZE`, allocation profiles).
    Bytes,
    /// A plain count: hardware counters such as `PAPI_FP_INS`, TAU's `LOGICAL_CLOCK`, samples.
    Count,
    /// A unit named by the input that perfscape does not interpret.
    Other(String),
}

impl Unit {
    /// Short human-readable unit symbol: `s`, `µs`, `ns`, `cycles`, `B`, `count`, or the name given.
    pub fn symbol(&self) -> &str {
        match self {
            Unit::Seconds => "s",
            Unit::Microseconds => "µs",
            Unit::Nanoseconds => "ns",
            Unit::Cycles => "cycles",
            Unit::Bytes => "B",
            Unit::Count => "count",
            Unit::Other(s) => s,
        }
    }

    /// Whether values of this unit are durations (used to pick "time" metrics by default).
    pub fn is_time(&self) -> bool {
        matches!(self, Unit::Seconds | Unit::Microseconds | Unit::Nanoseconds)
    }
}

/// How the values of a metric combine when one number is made of several: across threads
/// (the "total" of an event over a run, the cells of a heat-map bin) and across call paths (a
/// routine's flat value from its call-tree nodes, a node's inclusive value from its subtree).
///
/// Every reader sets it from what its format says (see each reader's module documentation):
/// TAU, ParaProf packed, pprof, perf and Chrome values are accumulated measurements
/// ([`Combine::Sum`]); CUBE derives it from a metric's data type (`MINDOUBLE` → minimum,
/// `MAXDOUBLE` → maximum, every other plain number type → sum: CubeLib's `Value` classes,
/// whose `operator+` is `min`/`max` for those two types); Caliper from the aggregation operator
/// that made the attribute (`sum#`/`count` → sum, `min#` → minimum, `max#` → maximum, `avg#`
/// → mean, `ratio#`/`variance#`/unknown operators → not combinable); HPCToolkit from the
/// `combine` function hpcprof applies to the metric across threads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum Combine {
    /// Values add up (time, counts, bytes): totals are sums, percentages of the run make sense.
    #[default]
    Sum,
    /// The smallest value wins (a minimum, e.g. CUBE `MINDOUBLE`, Caliper `min#`).
    Min,
    /// The largest value wins (a maximum, e.g. CUBE `MAXDOUBLE`, Caliper `max#`).
    Max,
    /// The values are averaged, each counting once (an average, e.g. Caliper `avg#`).
    Mean,
    /// Several values make no meaningful single number (a ratio, a variance): only single
    /// values are shown; combining several gives no value.
    NotCombinable,
}

impl Combine {
    /// Every rule, in tag order (the profile encoding writes a rule as its position here).
    pub const ALL: [Combine; 5] = [
        Combine::Sum,
        Combine::Min,
        Combine::Max,
        Combine::Mean,
        Combine::NotCombinable,
    ];

    /// The rule's name: `sum`, `min`, `max`, `mean` or `not_combinable` (as serialized).
    pub fn as_str(self) -> &'static str {
        match self {
            Combine::Sum => "sum",
            Combine::Min => "min",
            Combine::Max => "max",
            Combine::Mean => "mean",
            Combine::NotCombinable => "not_combinable",
        }
    }

    /// True when values add up: only then is a total a sum and a share of the run a percentage.
    pub fn is_additive(self) -> bool {
        self == Combine::Sum
    }

    /// The combination of `values`: `None` when there are none, or when there are several and
    /// the rule is [`Combine::NotCombinable`]; one value is itself under every rule. NaN values
    /// (values that could not be combined earlier) make the result NaN.
    pub fn fold(self, values: &[f64]) -> Option<f64> {
        let mut c = Combiner::new(self);
        for &v in values {
            c.push(v);
        }
        c.finish()
    }
}

impl std::fmt::Display for Combine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Combines values one at a time under a [`Combine`] rule (sum, min, max, mean, or not
/// combinable), in O(1) memory.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Combiner {
    rule: Combine,
    acc: f64,
    n: usize,
}

impl Combiner {
    /// An empty combination under `rule`.
    pub fn new(rule: Combine) -> Self {
        Self { rule, acc: 0.0, n: 0 }
    }

    /// Adds one value.
    pub fn push(&mut self, v: f64) {
        self.acc = if self.n == 0 {
            v
        } else {
            match self.rule {
                Combine::Sum | Combine::Mean => self.acc + v,
                // NaN wins, unlike f64::min/max which would drop it.
                Combine::Min if v.is_nan() || v < self.acc => v,
                Combine::Max if v.is_nan() || v > self.acc => v,
                Combine::Min | Combine::Max => self.acc,
                Combine::NotCombinable => f64::NAN,
            }
        };
        self.n += 1;
    }

    /// Number of values pushed.
    pub fn count(&self) -> usize {
        self.n
    }

    /// The combination so far (see [`Combine::fold`]).
    pub fn finish(&self) -> Option<f64> {
        match (self.n, self.rule) {
            (0, _) => None,
            (1, _) => Some(self.acc),
            (_, Combine::Mean) => Some(self.acc / self.n as f64),
            (_, Combine::NotCombinable) => None,
            _ => Some(self.acc),
        }
    }
}

/// One metric of a profile: every (event, thread) cell has an exclusive and an inclusive
/// value per metric.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Metric {
    /// Name as the measuring tool wrote it, e.g. `TIME`, `CPU_TIME`, `PAPI_TOT_CYC`.
    pub name: String,
    /// Unit of the values.
    pub unit: Unit,
    /// How values combine across threads and call paths (default: sum).
    #[serde(default)]
    pub combine: Combine,
}

impl Metric {
    /// A metric whose values add up ([`Combine::Sum`]).
    pub fn new(name: impl Into<String>, unit: Unit) -> Self {
        Self {
            name: name.into(),
            unit,
            combine: Combine::Sum,
        }
    }

    /// The same metric combining by `rule`.
    pub fn combined_by(self, rule: Combine) -> Self {
        Self {
            combine: rule,
            ..self
        }
    }

    /// A TAU metric with the given name: its unit inferred by [`Metric::tau_unit`]; TAU's
    /// values are accumulated over the calls of a timer, so they add up ([`Combine::Sum`]).
    pub fn tau(name: impl Into<String>) -> Self {
        let name = name.into();
        let unit = Self::tau_unit(&name);
        Self::new(name, unit)
    }

    /// The unit TAU uses for a metric name.
    ///
    /// Source: TAU's measurement library writes every timer-based metric (`TIME`, `CPU_TIME`,
    /// `P_WALL_CLOCK_TIME`, `P_VIRTUAL_TIME`, `LINUX_TIMERS`, ... and the default `Time` of old
    /// files) in microseconds; `TAU_MPI_MESSAGE_SIZE` accumulates bytes; PAPI counters and
    /// `LOGICAL_CLOCK` are counts; names mentioning `CYC` (e.g. `PAPI_TOT_CYC`) are cycles.
    pub fn tau_unit(name: &str) -> Unit {
        let upper = name.to_ascii_uppercase();
        if upper.contains("MESSAGE_SIZE") || upper.ends_with("_BYTES") {
            Unit::Bytes
        } else if upper.contains("CYC") {
            Unit::Cycles
        } else if upper.starts_with("PAPI") || upper.contains("LOGICAL_CLOCK") || upper.contains("COUNT") {
            Unit::Count
        } else if upper.contains("TIME") || upper.contains("CLOCK") || upper.contains("TIMER") {
            Unit::Microseconds
        } else {
            Unit::Count
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tau_metric_units() {
        assert_eq!(Metric::tau("TIME").unit, Unit::Microseconds);
        assert_eq!(Metric::tau("Time").unit, Unit::Microseconds);
        assert_eq!(Metric::tau("CPU_TIME").unit, Unit::Microseconds);
        assert_eq!(Metric::tau("P_WALL_CLOCK_TIME").unit, Unit::Microseconds);
        assert_eq!(Metric::tau("LOGICAL_CLOCK").unit, Unit::Count);
        assert_eq!(Metric::tau("TAU_MPI_MESSAGE_SIZE").unit, Unit::Bytes);
        assert_eq!(Metric::tau("PAPI_FP_INS").unit, Unit::Count);
        assert_eq!(Metric::tau("PAPI_TOT_CYC").unit, Unit::Cycles);
        assert_eq!(Metric::tau("TIME").combine, Combine::Sum);
    }

    #[test]
    fn combination_rules() {
        let v = [3.0, 1.0, 8.0];
        assert_eq!(Combine::Sum.fold(&v), Some(12.0));
        assert_eq!(Combine::Min.fold(&v), Some(1.0));
        assert_eq!(Combine::Max.fold(&v), Some(8.0));
        assert_eq!(Combine::Mean.fold(&v), Some(4.0));
        assert_eq!(Combine::NotCombinable.fold(&v), None);
        for rule in Combine::ALL {
            assert_eq!(rule.fold(&[]), None, "{rule}");
            assert_eq!(rule.fold(&[-2.5]), Some(-2.5), "{rule}");
        }
        // A NaN (a value that could not be combined before) is not dropped.
        assert!(Combine::Min.fold(&[1.0, f64::NAN]).unwrap().is_nan());
        assert!(Combine::Max.fold(&[f64::NAN, 1.0]).unwrap().is_nan());
        assert!(Combine::Sum.is_additive() && !Combine::Max.is_additive());
        let json = serde_json::to_string(&Metric::tau("TIME").combined_by(Combine::NotCombinable)).unwrap();
        assert!(json.contains("\"combine\":\"not_combinable\""), "{json}");
        let old: Metric = serde_json::from_str(r#"{"name":"TIME","unit":"microseconds"}"#).unwrap();
        assert_eq!(old.combine, Combine::Sum);
    }
}
