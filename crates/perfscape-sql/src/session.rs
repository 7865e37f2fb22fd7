//! A read-only SQL session over the tables of a [`RunSet`].

use crate::error::SqlError;
use crate::provider::RunTable;
use crate::run::{RunEntry, RunSet};
use crate::table::Table;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::execution::runtime_env::RuntimeEnvBuilder;
use datafusion::prelude::{SQLOptions, SessionConfig, SessionContext};
use futures::StreamExt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// A DataFusion context with the session's memory limit, span collection (query positions
/// in errors), the information schema (`SHOW TABLES`) and our functions.
fn context(limits: &QueryLimits) -> Result<SessionContext, SqlError> {
    let config = SessionConfig::new()
        .with_information_schema(true)
        .set_bool("datafusion.sql_parser.collect_spans", true);
    let runtime = RuntimeEnvBuilder::new()
        .with_memory_limit(limits.memory_bytes, 1.0)
        .build_arc()
        .map_err(|e| SqlError::Execution(e.to_string()))?;
    let ctx = SessionContext::new_with_config_rt(config, runtime);
    ctx.register_udaf(crate::udf::imbalance());
    Ok(ctx)
}

/// Limits of every query of a session.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QueryLimits {
    /// Wall-clock time after which a query is cancelled.
    pub time: Duration,
    /// Memory the engine's operators (aggregations, sorts, joins) may hold, bytes.
    pub memory_bytes: usize,
    /// Rows kept of a result; the rest is dropped and [`QueryResult::truncated`] is set.
    /// `None` keeps every row.
    pub max_rows: Option<usize>,
}

impl Default for QueryLimits {
    /// 10 minutes, 4 GiB, every row: for the command line, where the user can interrupt.
    fn default() -> Self {
        QueryLimits {
            time: Duration::from_secs(600),
            memory_bytes: 4 << 30,
            max_rows: None,
        }
    }
}

/// The answer of a query: its schema and the rows as Arrow batches.
#[derive(Clone, Debug)]
pub struct QueryResult {
    /// Names and types of the result's columns.
    pub schema: SchemaRef,
    /// The rows.
    pub batches: Vec<RecordBatch>,
    /// Number of rows in `batches`.
    pub rows: usize,
    /// True when rows beyond [`QueryLimits::max_rows`] were dropped.
    pub truncated: bool,
}

/// An SQL session: every [`Table`] over every run of a [`RunSet`], registered with Apache
/// DataFusion, plus the field's functions (`imbalance(x)`).
///
/// Read only: DDL (`CREATE`, including `CREATE EXTERNAL TABLE` which reads files), DML
/// (`INSERT`, `COPY ... TO` which writes files) and other statements (`SET`) are refused;
/// URLs and paths are not tables (DataFusion's `enable_url_table` stays off), and no
/// function of the session reads files or the network.
pub struct SqlSession {
    ctx: SessionContext,
    limits: QueryLimits,
}

impl std::fmt::Debug for SqlSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqlSession")
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl SqlSession {
    /// A session over `runs` with `limits`.
    pub fn new(runs: &RunSet, limits: QueryLimits) -> Result<SqlSession, SqlError> {
        let ctx = context(&limits)?;
        let entries: Arc<[RunEntry]> = runs.runs().to_vec().into();
        for table in Table::ALL {
            ctx.register_table(table.name(), Arc::new(RunTable::new(table, entries.clone())))
                .map_err(|e| SqlError::Execution(e.to_string()))?;
        }
        Ok(SqlSession { ctx, limits })
    }

    /// A session whose tables are Parquet files with every column of the table (`run`
    /// included): for each table, the files to read (a table without files is empty). This
    /// is how a store of runs is queried ([`crate::store::Store::session`]).
    ///
    /// # Errors
    /// [`SqlError::Execution`] naming a file that cannot be registered.
    pub fn over_files(files: &[(Table, Vec<PathBuf>)], limits: QueryLimits) -> Result<SqlSession, SqlError> {
        use datafusion::datasource::MemTable;
        use datafusion::datasource::file_format::parquet::ParquetFormat;
        use datafusion::datasource::listing::{
            ListingOptions, ListingTable, ListingTableConfig, ListingTableUrl,
        };
        let ctx = context(&limits)?;
        for (table, paths) in files {
            let schema = table.schema();
            let provider: Arc<dyn datafusion::catalog::TableProvider> = if paths.is_empty() {
                Arc::new(
                    MemTable::try_new(schema, vec![vec![]])
                        .map_err(|e| SqlError::Execution(e.to_string()))?,
                )
            } else {
                let urls = paths
                    .iter()
                    .map(|p| {
                        ListingTableUrl::parse(p.to_string_lossy())
                            .map_err(|e| SqlError::Execution(format!("{}: {e}", p.display())))
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                let options =
                    ListingOptions::new(Arc::new(ParquetFormat::default())).with_file_extension(".parquet");
                let config = ListingTableConfig::new_with_multi_paths(urls)
                    .with_listing_options(options)
                    .with_schema(schema);
                Arc::new(ListingTable::try_new(config).map_err(|e| SqlError::Execution(e.to_string()))?)
            };
            ctx.register_table(table.name(), provider)
                .map_err(|e| SqlError::Execution(e.to_string()))?;
        }
        Ok(SqlSession { ctx, limits })
    }

    /// The session's limits.
    pub fn limits(&self) -> QueryLimits {
        self.limits
    }

    /// Runs one read-only query.
    ///
    /// # Errors
    /// [`SqlError::Refused`] for anything but a query, [`SqlError::Query`] for a query that
    /// does not parse or plan (with its position), [`SqlError::TimeLimit`] and
    /// [`SqlError::MemoryLimit`] past the limits, [`SqlError::Execution`] otherwise.
    pub async fn query(&self, sql: &str) -> Result<QueryResult, SqlError> {
        self.query_with_params(sql, &[]).await
    }

    /// [`SqlSession::query`] with values for the query's named placeholders: `("event",
    /// Some(3))` binds `$event` to 3 (an unsigned 32-bit integer), `None` to NULL. A
    /// placeholder without a value is a [`SqlError::Query`] naming it. Used for the page's
    /// selection in dashboard panels (`$event`, `$thread`, `$sample`, `$metric`, `$run`).
    ///
    /// # Errors
    /// As [`SqlSession::query`].
    pub async fn query_with_params(
        &self,
        sql: &str,
        params: &[(&str, Option<u32>)],
    ) -> Result<QueryResult, SqlError> {
        let limit_bytes = self.limits.memory_bytes;
        let seconds = self.limits.time.as_secs_f64();
        crate::readonly::check(sql)?;
        let run = async {
            let options = SQLOptions::new()
                .with_allow_ddl(false)
                .with_allow_dml(false)
                .with_allow_statements(false);
            let df = self
                .ctx
                .sql_with_options(sql, options)
                .await
                .map_err(|e| SqlError::from_datafusion(e, limit_bytes))?;
            let df = if params.is_empty() {
                df
            } else {
                let values: std::collections::HashMap<
                    String,
                    datafusion::common::metadata::ScalarAndMetadata,
                > = params
                    .iter()
                    .map(|(k, v)| (k.to_string(), datafusion::scalar::ScalarValue::UInt32(*v).into()))
                    .collect();
                df.with_param_values(datafusion::common::ParamValues::Map(values))
                    .map_err(|e| SqlError::from_datafusion(e, limit_bytes))?
            };
            let schema: SchemaRef = Arc::new(df.schema().as_arrow().clone());
            let mut stream = df
                .execute_stream()
                .await
                .map_err(|e| SqlError::from_datafusion(e, limit_bytes))?;
            let mut batches = Vec::new();
            let mut rows = 0usize;
            let mut truncated = false;
            while let Some(batch) = stream.next().await {
                let batch = batch.map_err(|e| SqlError::from_datafusion(e, limit_bytes))?;
                let keep = self
                    .limits
                    .max_rows
                    .map_or(batch.num_rows(), |m| m.saturating_sub(rows));
                if keep < batch.num_rows() {
                    truncated = true;
                    if keep > 0 {
                        batches.push(batch.slice(0, keep));
                        rows += keep;
                    }
                    break;
                }
                rows += batch.num_rows();
                batches.push(batch);
            }
            Ok(QueryResult {
                schema,
                batches,
                rows,
                truncated,
            })
        };
        tokio::time::timeout(self.limits.time, run)
            .await
            .unwrap_or(Err(SqlError::TimeLimit { seconds }))
    }

    /// [`SqlSession::query`] on a runtime of its own, for callers that are not async (the
    /// command line).
    pub fn query_blocking(&self, sql: &str) -> Result<QueryResult, SqlError> {
        self.query_blocking_with_params(sql, &[])
    }

    /// [`SqlSession::query_with_params`] on a runtime of its own.
    ///
    /// # Errors
    /// As [`SqlSession::query`].
    pub fn query_blocking_with_params(
        &self,
        sql: &str,
        params: &[(&str, Option<u32>)],
    ) -> Result<QueryResult, SqlError> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .enable_time()
            .build()
            .map_err(|e| SqlError::Execution(format!("cannot start the query runtime: {e}")))?;
        rt.block_on(self.query_with_params(sql, params))
    }
}
