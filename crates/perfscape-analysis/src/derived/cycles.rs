//! Processor cycles as time.
//!
//! The FPGA performance tool of seed 002 (PPW+RC) converts every cycle count measured on the
//! FPGA to nanoseconds with the FPGA's clock frequency, so hardware and software times can be
//! compared. [`cycles_to_time`] does the same for any metric whose unit is
//! [`Unit::Cycles`]: `ns = cycles / hz * 1e9`.

use perfscape_model::{Metric, MetricId, Profile, Unit};
use std::fmt;

/// Why a metric could not be converted from cycles to time.
#[derive(Debug, Clone, PartialEq)]
pub enum CyclesToTimeError {
    /// The metric id is not one of the profile's metrics.
    NoSuchMetric(MetricId),
    /// The metric is not counted in cycles (its unit is given).
    NotCycles {
        /// Metric name.
        metric: String,
        /// Its unit.
        unit: Unit,
    },
    /// The clock frequency is not a finite number above 0 Hz.
    BadFrequency(f64),
}

impl fmt::Display for CyclesToTimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CyclesToTimeError::NoSuchMetric(m) => write!(f, "the profile has no metric #{}", m.0),
            CyclesToTimeError::NotCycles { metric, unit } => write!(
                f,
                "metric `{metric}` is measured in {}, not in cycles; only cycle counts convert to time",
                unit.symbol()
            ),
            CyclesToTimeError::BadFrequency(hz) => {
                write!(f, "clock frequency {hz} Hz is not a finite number above 0")
            }
        }
    }
}

impl std::error::Error for CyclesToTimeError {}

/// The profile with metric `metric` (counted in [`Unit::Cycles`]) converted to nanoseconds at a
/// clock frequency of `hz` cycles per second: every exclusive and inclusive value `c` becomes
/// `c / hz * 1e9`. The metric keeps its name and combination rule (a linear scale changes
/// neither a sum nor a minimum, maximum or mean); its unit becomes [`Unit::Nanoseconds`]. Calls,
/// subcalls, other metrics, events and threads are unchanged.
///
/// Errors when the metric does not exist, is not counted in cycles, or `hz` is not a finite
/// number above 0.
pub fn cycles_to_time(profile: Profile, metric: MetricId, hz: f64) -> Result<Profile, CyclesToTimeError> {
    let Some(m) = profile.metrics().get(metric.index()) else {
        return Err(CyclesToTimeError::NoSuchMetric(metric));
    };
    if m.unit != Unit::Cycles {
        return Err(CyclesToTimeError::NotCycles {
            metric: m.name.clone(),
            unit: m.unit.clone(),
        });
    }
    if !(hz.is_finite() && hz > 0.0) {
        return Err(CyclesToTimeError::BadFrequency(hz));
    }
    let converted = Metric {
        unit: Unit::Nanoseconds,
        ..m.clone()
    };
    let ns_per_cycle = 1e9 / hz;
    Ok(profile.map_metric(metric, converted, |c| c * ns_per_cycle))
}

/// The processor clock frequency in Hz recorded in a profile's metadata, if every thread
/// agrees on it: TAU writes `CPU MHz` from `/proc/cpuinfo` (`2100.003`, or `2297.700000MHz` on
/// POWER). `None` when the key is missing, differs between threads, or is not a positive
/// number.
pub fn clock_hz_from_metadata(profile: &Profile) -> Option<f64> {
    let text = profile.metadata().get_common("CPU MHz")?.trim();
    let number = text
        .strip_suffix("MHz")
        .or_else(|| text.strip_suffix("mhz"))
        .unwrap_or(text)
        .trim();
    let mhz: f64 = number.parse().ok()?;
    (mhz.is_finite() && mhz > 0.0).then_some(mhz * 1e6)
}

#[cfg(test)]
mod tests {
    use super::*;
    use perfscape_model::{ProfileBuilder, ThreadData, ThreadId, ValueKind};

    fn profile() -> Profile {
        let mut b = ProfileBuilder::new(vec![Metric::tau("TIME"), Metric::tau("PAPI_TOT_CYC")]);
        for (rank, cycles) in [2.0e9, 5.0e8].into_iter().enumerate() {
            let mut d = ThreadData::new(2);
            d.push_metadata("CPU MHz", "2000.000000MHz");
            d.push_timer(
                "main",
                "TAU_DEFAULT",
                3.0,
                1.0,
                &[10.0, cycles / 4.0],
                &[20.0, cycles],
            )
            .unwrap();
            b.add_thread(ThreadId::new(rank as u32, 0, 0), d).unwrap();
        }
        b.finish().0
    }

    #[test]
    fn converts_cycles_to_nanoseconds() {
        let p = profile();
        let hz = clock_hz_from_metadata(&p).unwrap();
        assert_eq!(hz, 2.0e9);
        let q = cycles_to_time(p.clone(), MetricId(1), hz).unwrap();
        assert_eq!(q.metric(MetricId(1)).unit, Unit::Nanoseconds);
        assert_eq!(q.metric(MetricId(1)).name, "PAPI_TOT_CYC");
        let e = q.event_by_name("main").unwrap();
        // 2e9 cycles at 2 GHz = 1 s = 1e9 ns; 5e8 cycles = 0.25 s.
        assert_eq!(
            q.interval(e).values(ValueKind::Inclusive, MetricId(1)),
            &[1.0e9, 2.5e8]
        );
        assert_eq!(
            q.interval(e).values(ValueKind::Exclusive, MetricId(1)),
            &[2.5e8, 6.25e7]
        );
        // Everything else is untouched.
        assert_eq!(
            q.interval(e).values(ValueKind::Inclusive, MetricId(0)),
            &[20.0, 20.0]
        );
        assert_eq!(q.interval(e).calls(), p.interval(e).calls());
        assert_eq!(q.metric(MetricId(0)), p.metric(MetricId(0)));
    }

    #[test]
    fn refuses_what_is_not_cycles_or_a_frequency() {
        let p = profile();
        assert!(matches!(
            cycles_to_time(p.clone(), MetricId(0), 1e9),
            Err(CyclesToTimeError::NotCycles { .. })
        ));
        assert_eq!(
            cycles_to_time(p.clone(), MetricId(7), 1e9).err(),
            Some(CyclesToTimeError::NoSuchMetric(MetricId(7)))
        );
        for hz in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(matches!(
                cycles_to_time(p.clone(), MetricId(1), hz),
                Err(CyclesToTimeError::BadFrequency(_))
            ));
        }
    }
}
