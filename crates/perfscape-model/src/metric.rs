//! Metrics: what was measured (time, a hardware counter, bytes) and in which unit.

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

/// One metric of a profile: every (event, thread) cell has an exclusive and an inclusive
/// value per metric.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Metric {
    /// Name as the measuring tool wrote it, e.g. `TIME`, `CPU_TIME`, `PAPI_TOT_CYC`.
    pub name: String,
    /// Unit of the values.
    pub unit: Unit,
}

impl Metric {
    /// A metric with the given name, its unit inferred by [`Metric::tau_unit`].
    pub fn tau(name: impl Into<String>) -> Self {
        let name = name.into();
        let unit = Self::tau_unit(&name);
        Self { name, unit }
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
    }
}
