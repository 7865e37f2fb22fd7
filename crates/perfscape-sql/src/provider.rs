//! The tables as DataFusion table providers: a scan builds batches from the model while the
//! query runs (no copy of the run is made beforehand), for the projected columns only, split
//! into contiguous ranges of units over the session's partitions.

use crate::batches::{self, Columns};
use crate::run::RunEntry;
use crate::table::Table;
use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::catalog::{Session, TableProvider};
use datafusion::datasource::TableType;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::Expr;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::streaming::{PartitionStream, StreamingTableExec};
use std::sync::Arc;

/// One table over every run of a set.
#[derive(Debug)]
pub(crate) struct RunTable {
    table: Table,
    schema: SchemaRef,
    runs: Arc<[RunEntry]>,
}

impl RunTable {
    pub(crate) fn new(table: Table, runs: Arc<[RunEntry]>) -> Self {
        RunTable {
            table,
            schema: table.schema(),
            runs,
        }
    }
}

#[async_trait]
impl TableProvider for RunTable {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        _filters: &[Expr],
        limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let projection: Option<Vec<usize>> = projection.cloned();
        let columns = Columns::new(&self.schema, projection.as_deref())?;
        let schema = columns.schema().clone();
        // (run position, unit count) of every run, and the total.
        let counts: Vec<usize> = self.runs.iter().map(|r| batches::units(self.table, r)).collect();
        let total: usize = counts.iter().sum();
        let parts = state.config().target_partitions().clamp(1, total.max(1));
        let partitions: Vec<Arc<dyn PartitionStream>> = (0..parts)
            .map(|k| {
                Arc::new(UnitRange {
                    table: self.table,
                    full: self.schema.clone(),
                    schema: schema.clone(),
                    projection: projection.clone(),
                    runs: self.runs.clone(),
                    counts: counts.clone(),
                    from: total * k / parts,
                    to: total * (k + 1) / parts,
                }) as Arc<dyn PartitionStream>
            })
            .collect();
        Ok(Arc::new(StreamingTableExec::try_new(
            schema,
            partitions,
            None,
            Vec::new(),
            false,
            limit,
        )?))
    }
}

/// Units `from..to` of a table (counted over the runs in order) as one partition.
#[derive(Debug)]
struct UnitRange {
    table: Table,
    full: SchemaRef,
    schema: SchemaRef,
    projection: Option<Vec<usize>>,
    runs: Arc<[RunEntry]>,
    counts: Vec<usize>,
    from: usize,
    to: usize,
}

impl PartitionStream for UnitRange {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn execute(&self, _ctx: Arc<TaskContext>) -> SendableRecordBatchStream {
        let iter = Batches {
            table: self.table,
            columns: Columns::new(&self.full, self.projection.as_deref()).map_err(DataFusionError::from),
            runs: self.runs.clone(),
            counts: self.counts.clone(),
            next: self.from,
            to: self.to,
            done: false,
            run: 0,
            run_start: 0,
        };
        Box::pin(RecordBatchStreamAdapter::new(
            self.schema.clone(),
            futures::stream::iter(iter),
        ))
    }
}

/// The batches of a unit range, built one at a time as the stream is polled.
struct Batches {
    table: Table,
    columns: Result<Columns>,
    runs: Arc<[RunEntry]>,
    counts: Vec<usize>,
    next: usize,
    to: usize,
    done: bool,
    /// The run of unit `next` and the number of units before it.
    run: usize,
    run_start: usize,
}

impl Iterator for Batches {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let cols = match &mut self.columns {
            Ok(c) => c,
            Err(e) => {
                self.done = true;
                return Some(Err(DataFusionError::Internal(e.to_string())));
            }
        };
        while self.next < self.to && cols.rows() < batches::BATCH_ROWS {
            // Move the cursor to the run that holds unit `next`.
            while self.run < self.counts.len() && self.next - self.run_start >= self.counts[self.run] {
                self.run_start += self.counts[self.run];
                self.run += 1;
            }
            let Some(entry) = self.runs.get(self.run) else {
                break;
            };
            batches::append(self.table, entry, self.next - self.run_start, cols);
            self.next += 1;
        }
        if self.next >= self.to {
            self.done = true;
        }
        if cols.rows() == 0 {
            return None;
        }
        Some(cols.take_batch().map_err(DataFusionError::from))
    }
}
