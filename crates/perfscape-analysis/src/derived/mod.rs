//! Derived metrics: values computed from measured ones.
//!
//! - [`cycles_to_time`]: processor cycles as time at a clock frequency (seed 002).
//! - [`derive_metric`]: a new metric `NAME = EXPRESSION` over the measured ones
//!   (`IPC = PAPI_TOT_INS / PAPI_TOT_CYC`), evaluated per (event, thread) cell as ParaProf's
//!   derived metrics are; [`Expression`] is the expression language.

mod cycles;
mod expression;
mod metric;

pub use cycles::{CyclesToTimeError, clock_hz_from_metadata, cycles_to_time};
pub use expression::{Expression, ExpressionError};
pub use metric::{DeriveError, DerivedMetricSpec, DerivedReport, check_derived, derive_metric};
