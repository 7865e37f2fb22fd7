//! Writing the tables of a [`RunSet`] to files.
//!
//! Layouts (`OUT` is the output directory, created if missing; existing files of the same
//! names are replaced):
//! - Parquet: `OUT/<table>/run=<n>/part-0.parquet`, Hive-style partitions by run, the
//!   layout Apache Spark, DataFusion, DuckDB and pandas (pyarrow) read as one table with a
//!   `run` column taken from the directory name (so the files do not repeat it). ZSTD
//!   compression; one row group per 1,048,576 rows. Empty tables are not written.
//! - CSV: `OUT/<table>.csv` with a header line; every run in one file with its `run` column.
//! - JSON: `OUT/<table>.json`, newline-delimited objects (one per row), likewise.

use crate::batches;
use crate::error::SqlError;
use crate::reader::TableReader;
use crate::run::{RunEntry, RunSet};
use crate::table::Table;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::parquet::arrow::ArrowWriter;
use datafusion::parquet::basic::{Compression, ZstdLevel};
use datafusion::parquet::file::properties::WriterProperties;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// The file format of an export.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportFormat {
    /// Apache Parquet, partitioned by run.
    Parquet,
    /// Comma-separated values with a header.
    Csv,
    /// Newline-delimited JSON.
    Json,
}

/// One file written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Written {
    /// The table.
    pub table: &'static str,
    /// The file.
    pub path: PathBuf,
    /// Rows in the file.
    pub rows: u64,
    /// Size of the file, bytes.
    pub bytes: u64,
}

impl Written {
    /// The file `path` just written with `rows` rows of `table`, with its size.
    fn new(table: Table, path: PathBuf, rows: u64) -> Result<Written, SqlError> {
        let bytes = std::fs::metadata(&path).map_err(io(&path))?.len();
        Ok(Written {
            table: table.name(),
            path,
            rows,
            bytes,
        })
    }
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> SqlError + '_ {
    move |source| SqlError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn write_err(path: &Path) -> impl Fn(String) -> SqlError + '_ {
    move |message| SqlError::Write {
        path: path.to_path_buf(),
        message,
    }
}

/// Every batch of `table` in `run`, for the fields `projection` (all when `None`), in order.
fn for_each_batch(
    table: Table,
    run: &RunEntry,
    projection: Option<&[usize]>,
    mut f: impl FnMut(RecordBatch) -> Result<(), SqlError>,
) -> Result<(), SqlError> {
    let reader = TableReader::all(table, projection, std::sync::Arc::new([run.clone()]))
        .map_err(|e| SqlError::Execution(e.to_string()))?;
    for batch in reader {
        f(batch.map_err(|e| SqlError::Execution(e.to_string()))?)?;
    }
    Ok(())
}

/// Writes every table of `runs` under `out` in `format`; returns the files written.
///
/// # Errors
/// [`SqlError::Io`] naming the file that could not be created or written,
/// [`SqlError::Write`] when encoding failed.
pub fn export(runs: &RunSet, out: &Path, format: ExportFormat) -> Result<Vec<Written>, SqlError> {
    std::fs::create_dir_all(out).map_err(io(out))?;
    let mut written = Vec::new();
    for table in Table::ALL {
        match format {
            ExportFormat::Parquet => {
                for run in runs.runs() {
                    if batches::units(table, run) == 0 {
                        continue;
                    }
                    let dir = out.join(table.name()).join(format!("run={}", run.run));
                    std::fs::create_dir_all(&dir).map_err(io(&dir))?;
                    let path = dir.join("part-0.parquet");
                    let rows = write_parquet(table, run, &path, false)?;
                    written.push(Written::new(table, path, rows)?);
                }
            }
            ExportFormat::Csv | ExportFormat::Json => {
                let ext = if format == ExportFormat::Csv {
                    "csv"
                } else {
                    "json"
                };
                let path = out.join(format!("{}.{ext}", table.name()));
                let rows = write_text(table, runs, &path, format)?;
                written.push(Written::new(table, path, rows)?);
            }
        }
    }
    Ok(written)
}

/// One run's rows of `table` as Parquet at `path`, with the `run` column or without it (the
/// export's Hive partitions have it in the directory name). Returns the rows written.
pub(crate) fn write_parquet(
    table: Table,
    run: &RunEntry,
    path: &Path,
    with_run: bool,
) -> Result<u64, SqlError> {
    let full = table.schema();
    let first = usize::from(!with_run);
    let fields: Vec<usize> = (first..full.fields().len()).collect();
    let schema = std::sync::Arc::new(
        full.project(&fields)
            .map_err(|e| write_err(path)(e.to_string()))?,
    );
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .set_max_row_group_row_count(Some(1 << 20))
        .build();
    let file = File::create(path).map_err(io(path))?;
    let mut writer = ArrowWriter::try_new(BufWriter::new(file), schema, Some(props))
        .map_err(|e| write_err(path)(e.to_string()))?;
    let mut rows = 0u64;
    for_each_batch(table, run, Some(&fields), |b| {
        rows += b.num_rows() as u64;
        writer.write(&b).map_err(|e| write_err(path)(e.to_string()))
    })?;
    writer.close().map_err(|e| write_err(path)(e.to_string()))?;
    Ok(rows)
}

/// Every run's rows of `table` as CSV or JSON lines at `path`. Returns the rows written.
fn write_text(table: Table, runs: &RunSet, path: &Path, format: ExportFormat) -> Result<u64, SqlError> {
    let file = File::create(path).map_err(io(path))?;
    let mut out = BufWriter::new(file);
    let mut rows = 0u64;
    if format == ExportFormat::Csv {
        let mut w = datafusion::arrow::csv::WriterBuilder::new()
            .with_header(true)
            .build(&mut out);
        let mut any = false;
        for run in runs.runs() {
            for_each_batch(table, run, None, |b| {
                any = true;
                rows += b.num_rows() as u64;
                w.write(&b).map_err(|e| write_err(path)(e.to_string()))
            })?;
        }
        if !any {
            // The header alone, so an empty table still says its columns.
            let empty = RecordBatch::new_empty(table.schema());
            w.write(&empty).map_err(|e| write_err(path)(e.to_string()))?;
        }
    } else {
        let mut w = datafusion::arrow::json::LineDelimitedWriter::new(&mut out);
        for run in runs.runs() {
            for_each_batch(table, run, None, |b| {
                rows += b.num_rows() as u64;
                w.write(&b).map_err(|e| write_err(path)(e.to_string()))
            })?;
        }
        w.finish().map_err(|e| write_err(path)(e.to_string()))?;
    }
    out.flush().map_err(io(path))?;
    Ok(rows)
}
