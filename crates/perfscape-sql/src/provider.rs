//! The tables as DataFusion table providers: a scan builds batches from the model while the
//! query runs (no copy of the run is made beforehand), for the projected columns only, split
//! into contiguous ranges of units over the session's partitions.

use crate::reader::{TableReader, unit_counts};
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
        let schema = match &projection {
            Some(fields) => Arc::new(self.schema.project(fields)?),
            None => self.schema.clone(),
        };
        // The unit count of every run, and the total.
        let counts = unit_counts(self.table, &self.runs);
        let total: usize = counts.iter().sum();
        let parts = state.config().target_partitions().clamp(1, total.max(1));
        let partitions: Vec<Arc<dyn PartitionStream>> = (0..parts)
            .map(|k| {
                Arc::new(UnitRange {
                    table: self.table,
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
    schema: SchemaRef,
    projection: Option<Vec<usize>>,
    runs: Arc<[RunEntry]>,
    counts: Arc<[usize]>,
    from: usize,
    to: usize,
}

impl PartitionStream for UnitRange {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn execute(&self, _ctx: Arc<TaskContext>) -> SendableRecordBatchStream {
        let reader = TableReader::range(
            self.table,
            self.projection.as_deref(),
            self.runs.clone(),
            self.counts.clone(),
            self.from,
            self.to,
        );
        let batches: Box<dyn Iterator<Item = Result<RecordBatch>> + Send> = match reader {
            Ok(r) => Box::new(r.map(|b| b.map_err(DataFusionError::from))),
            Err(e) => Box::new(std::iter::once(Err(DataFusionError::from(e)))),
        };
        Box::pin(RecordBatchStreamAdapter::new(
            self.schema.clone(),
            futures::stream::iter(batches),
        ))
    }
}
