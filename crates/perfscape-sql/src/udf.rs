//! Functions of our field registered with the SQL engine.

use datafusion::arrow::array::{Array, ArrayRef, AsArray};
use datafusion::arrow::datatypes::{DataType, Float64Type, UInt64Type};
use datafusion::error::Result;
use datafusion::logical_expr::{Accumulator, AggregateUDF, Volatility, create_udaf};
use datafusion::scalar::ScalarValue;
use std::sync::Arc;

/// `imbalance(x)`: the load imbalance of the rows aggregated, `max(x) / mean(x)` (1 = even;
/// 2 = the slowest row took twice the mean). NULL for no rows or a zero mean. Over the
/// `event_values` of one event this is the imbalance over the threads that have the event;
/// perfscape's `stats` divides by every thread of the run instead (`max / mean_all`), which
/// is `MAX(x) * r.thread_count / SUM(x)` in SQL (see TABLES.md).
pub(crate) fn imbalance() -> AggregateUDF {
    create_udaf(
        "imbalance",
        vec![DataType::Float64],
        Arc::new(DataType::Float64),
        Volatility::Immutable,
        Arc::new(|_| Ok(Box::new(Imbalance::default()))),
        Arc::new(vec![DataType::Float64, DataType::UInt64, DataType::Float64]),
    )
}

/// Running sum, count and maximum of the non-null inputs.
#[derive(Debug)]
struct Imbalance {
    sum: f64,
    count: u64,
    max: f64,
}

impl Default for Imbalance {
    fn default() -> Self {
        Imbalance {
            sum: 0.0,
            count: 0,
            max: f64::NEG_INFINITY,
        }
    }
}

impl Imbalance {
    fn add(&mut self, sum: f64, count: u64, max: f64) {
        self.sum += sum;
        self.count += count;
        if max > self.max {
            self.max = max;
        }
    }
}

impl Accumulator for Imbalance {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let Some(v) = values.first() else {
            return Ok(());
        };
        let v = v.as_primitive::<Float64Type>();
        for x in v.iter().flatten() {
            self.add(x, 1, x);
        }
        Ok(())
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let [sum, count, max] = states else {
            return Ok(());
        };
        let (sum, count, max) = (
            sum.as_primitive::<Float64Type>(),
            count.as_primitive::<UInt64Type>(),
            max.as_primitive::<Float64Type>(),
        );
        for i in 0..sum.len() {
            if !sum.is_null(i) {
                self.add(sum.value(i), count.value(i), max.value(i));
            }
        }
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        Ok(vec![
            ScalarValue::Float64(Some(self.sum)),
            ScalarValue::UInt64(Some(self.count)),
            ScalarValue::Float64(Some(self.max)),
        ])
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        let mean = self.sum / self.count as f64;
        Ok(ScalarValue::Float64(
            (self.count > 0 && mean != 0.0).then(|| self.max / mean),
        ))
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self)
    }
}
