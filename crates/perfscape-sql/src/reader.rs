//! A table's rows as a stream of Arrow batches, built from the model while it is read: the one
//! batching loop behind a query's scan ([`crate::provider`]), the export, and the Python
//! package's tables (handed over through the Arrow C stream interface).

use crate::batches::{self, Columns};
use crate::error::SqlError;
use crate::run::{RunEntry, RunSet};
use crate::table::Table;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::error::ArrowError;
use datafusion::arrow::record_batch::{RecordBatch, RecordBatchReader};
use std::sync::Arc;

/// The rows of one [`Table`] over units `from..to` of a list of runs (units counted over the
/// runs in order; see [`crate::BATCH_ROWS`] for what a unit is), for the projected columns
/// only, as batches of about [`crate::BATCH_ROWS`] rows built one at a time as the reader is
/// iterated. Each batch is built once and handed over without a copy.
///
/// Implements Arrow's [`RecordBatchReader`], so it can be exported through the Arrow C stream
/// interface (`arrow::ffi_stream::FFI_ArrowArrayStream`).
pub struct TableReader {
    table: Table,
    columns: Columns,
    runs: Arc<[RunEntry]>,
    /// Units of each run.
    counts: Arc<[usize]>,
    next: usize,
    to: usize,
    /// The run of unit `next` and the number of units before it.
    run: usize,
    run_start: usize,
}

impl std::fmt::Debug for TableReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableReader")
            .field("table", &self.table.name())
            .field("next", &self.next)
            .field("to", &self.to)
            .finish_non_exhaustive()
    }
}

/// Units of `table` in each of `runs`.
pub(crate) fn unit_counts(table: Table, runs: &[RunEntry]) -> Arc<[usize]> {
    runs.iter().map(|r| batches::units(table, r)).collect()
}

impl TableReader {
    /// Every row of `table` over every run of `runs`, every column.
    ///
    /// # Errors
    /// [`SqlError::Execution`] if the table's schema cannot be built (a defect).
    pub fn new(runs: &RunSet, table: Table) -> Result<TableReader, SqlError> {
        TableReader::all(table, None, runs.runs().to_vec().into())
            .map_err(|e| SqlError::Execution(e.to_string()))
    }

    /// Every row of `table` over `runs`, for the fields `projection` of the table's schema
    /// (`None`: all).
    pub(crate) fn all(
        table: Table,
        projection: Option<&[usize]>,
        runs: Arc<[RunEntry]>,
    ) -> Result<TableReader, ArrowError> {
        let counts = unit_counts(table, &runs);
        let to = counts.iter().sum();
        TableReader::range(table, projection, runs, counts, 0, to)
    }

    /// Units `from..to` of `table` over `runs` (with `counts`, their units from
    /// [`unit_counts`]), for the fields `projection` of the table's schema (`None`: all).
    pub(crate) fn range(
        table: Table,
        projection: Option<&[usize]>,
        runs: Arc<[RunEntry]>,
        counts: Arc<[usize]>,
        from: usize,
        to: usize,
    ) -> Result<TableReader, ArrowError> {
        Ok(TableReader {
            table,
            columns: Columns::new(&table.schema(), projection)?,
            runs,
            counts,
            next: from,
            to,
            run: 0,
            run_start: 0,
        })
    }
}

impl Iterator for TableReader {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        let cols = &mut self.columns;
        while self.next < self.to && cols.rows() < batches::BATCH_ROWS {
            // Move the cursor to the run that holds unit `next`.
            while self.run < self.counts.len() && self.next - self.run_start >= self.counts[self.run] {
                self.run_start += self.counts[self.run];
                self.run += 1;
            }
            let Some(entry) = self.runs.get(self.run) else {
                self.next = self.to;
                break;
            };
            batches::append(self.table, entry, self.next - self.run_start, cols);
            self.next += 1;
        }
        if cols.rows() == 0 {
            return None;
        }
        Some(cols.take_batch())
    }
}

impl RecordBatchReader for TableReader {
    fn schema(&self) -> SchemaRef {
        self.columns.schema().clone()
    }
}
