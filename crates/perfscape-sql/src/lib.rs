//! perfscape's integrated data as Arrow tables, queried with SQL (Apache DataFusion) and
//! written out as Parquet, CSV or JSON.
//!
//! The pipeline stage is "analyze": a [`RunSet`] is one or more opened runs
//! ([`perfscape_formats::Opened`], or the server's state through [`RunData`]); [`Table`]
//! names the tables and their Arrow schemas (documented column by column in `TABLES.md`);
//! [`SqlSession`] registers every table over every run with DataFusion, read only, with a time
//! and a memory limit per query; [`export`] writes the tables to files, Parquet partitioned by
//! run; [`store`] keeps runs as Parquet files plus a catalog, queried across every run.
//!
//! The tables are not a second copy of the run: a scan builds Arrow batches of at most
//! about [`BATCH_ROWS`] rows from the model's columns while the query runs, only for the columns the
//! query reads (projection push-down), split over the engine's partitions.

mod batches;
mod error;
pub mod export;
mod provider;
mod reader;
mod readonly;
mod run;
mod session;
pub mod store;
mod table;
mod udf;

pub use batches::BATCH_ROWS;
pub use datafusion;
pub use datafusion::arrow;
pub use error::SqlError;
pub use reader::TableReader;
pub use run::{RunData, RunEntry, RunSet};
pub use session::{QueryLimits, QueryResult, SqlSession};
pub use table::Table;
