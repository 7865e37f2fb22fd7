//! `perfscape sql RUN... QUERY` and `perfscape export RUN... --format F OUT`: the runs as
//! tables (TABLES.md), queried with SQL or written to files.

use crate::args::{EXIT_PARTIAL, LoadOptions};
use crate::loading::{self, OpenedRun};
use clap::{Args, ValueEnum};
use perfscape_model::{Profile, SampleSeries, Trace};
use perfscape_sql::arrow::util::display::{ArrayFormatter, FormatOptions};
use perfscape_sql::export::{ExportFormat, export};
use perfscape_sql::{QueryLimits, QueryResult, RunData, RunSet, SqlSession};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

/// Arguments of `perfscape sql`.
#[derive(Args, Debug)]
pub struct SqlArgs {
    /// The runs (directories or profile files; `run` 0, 1, ... in this order), then the query
    /// (one SELECT; the tables and their columns are in TABLES.md). With --store, only the
    /// query.
    #[arg(required = true, num_args = 1.., value_name = "RUN... QUERY")]
    args: Vec<String>,
    /// Query the runs of this store (`perfscape store add`) instead of runs given here.
    #[arg(long = "store", value_name = "DIR")]
    store: Option<PathBuf>,
    /// How to read every run.
    #[command(flatten)]
    load: LoadOptions,
    /// Output format; `parquet` needs --out.
    #[arg(long, short = 'f', value_enum, default_value_t = SqlFormat::Table)]
    format: SqlFormat,
    /// Write the result to this file instead of standard output.
    #[arg(long, short = 'o', value_name = "FILE")]
    out: Option<PathBuf>,
    /// Cancel the query after this many seconds.
    #[arg(long, default_value_t = 600.0, value_name = "SECONDS")]
    time_limit: f64,
    /// Memory the query's aggregations, sorts and joins may hold, in MiB.
    #[arg(long, default_value_t = 4096, value_name = "MIB")]
    memory_limit: usize,
}

/// Output formats of `perfscape sql`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SqlFormat {
    /// An aligned text table.
    Table,
    /// Comma-separated values with a header.
    Csv,
    /// Newline-delimited JSON objects.
    Json,
    /// Apache Parquet (with --out).
    Parquet,
}

/// Arguments of `perfscape export`.
#[derive(Args, Debug)]
pub struct ExportArgs {
    /// The runs (`run` 0, 1, ... in this order), then the output directory.
    #[arg(required = true, num_args = 2.., value_name = "RUN... OUT")]
    args: Vec<PathBuf>,
    /// How to read every run.
    #[command(flatten)]
    load: LoadOptions,
    /// File format: Parquet partitioned by run (OUT/TABLE/run=N/part-0.parquet), or one
    /// CSV or newline-delimited JSON file per table.
    #[arg(long, short = 'f', value_enum, default_value_t = ExportArg::Parquet)]
    format: ExportArg,
}

/// `--format` of `perfscape export`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ExportArg {
    /// Apache Parquet, partitioned by run.
    Parquet,
    /// CSV with a header, one file per table.
    Csv,
    /// Newline-delimited JSON, one file per table.
    Json,
}

/// A run opened by the CLI, with its samples and trace, as the tables read it.
struct CliRun(OpenedRun);

impl RunData for CliRun {
    fn profile(&self) -> &Profile {
        &self.0.loaded.profile
    }
    fn series(&self) -> Option<Box<dyn std::ops::Deref<Target = SampleSeries> + '_>> {
        self.0
            .series
            .as_ref()
            .map(|s| Box::new(s) as Box<dyn std::ops::Deref<Target = SampleSeries>>)
    }
    fn trace(&self) -> Option<&Trace> {
        self.0.trace.as_ref()
    }
}

/// Opens `paths` into a run set; true when some run loaded in part.
pub fn open_all(paths: &[PathBuf], load: &LoadOptions) -> anyhow::Result<(RunSet, bool)> {
    let mut set = RunSet::new();
    let mut partial = false;
    for p in paths {
        let o = loading::open_path(p, load, true)?;
        partial |= o.loaded.report.is_partial();
        let format = o.loaded.report.format.to_string();
        set.add(&p.display().to_string(), &format, Arc::new(CliRun(o)));
    }
    Ok((set, partial))
}

/// Runs `perfscape sql`.
pub fn run_sql(args: &SqlArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let Some((query, runs)) = args.args.split_last() else {
        anyhow::bail!("give one or more runs and then the query");
    };
    if args.format == SqlFormat::Parquet && args.out.is_none() {
        anyhow::bail!("--format parquet writes a file: give it with --out FILE");
    }
    if !args.time_limit.is_finite() || args.time_limit <= 0.0 {
        anyhow::bail!("--time-limit must be a positive number of seconds");
    }
    let limits = QueryLimits {
        time: Duration::from_secs_f64(args.time_limit),
        memory_bytes: args.memory_limit.saturating_mul(1 << 20),
        max_rows: None,
    };
    let (session, partial) = match &args.store {
        Some(dir) => {
            if !runs.is_empty() {
                anyhow::bail!("give either runs or --store DIR, not both");
            }
            (perfscape_sql::store::Store::new(dir).session(limits)?, false)
        }
        None => {
            if runs.is_empty() {
                anyhow::bail!("give one or more runs and then the query (or --store DIR and the query)");
            }
            let paths: Vec<PathBuf> = runs.iter().map(PathBuf::from).collect();
            let (set, partial) = open_all(&paths, &args.load)?;
            (SqlSession::new(&set, limits)?, partial)
        }
    };
    let result = session.query_blocking(query)?;
    match &args.out {
        Some(path) => {
            let file = std::fs::File::create(path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
            let mut w = std::io::BufWriter::new(file);
            write_result(&result, args.format, &mut w, Some(path))?;
            w.flush()
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        }
        None => write_result(&result, args.format, out, None)?,
    }
    Ok(if partial {
        ExitCode::from(EXIT_PARTIAL)
    } else {
        ExitCode::SUCCESS
    })
}

/// Writes a query result in `format`.
fn write_result(
    r: &QueryResult,
    format: SqlFormat,
    out: &mut dyn Write,
    path: Option<&std::path::Path>,
) -> anyhow::Result<()> {
    match format {
        SqlFormat::Table => {
            let header: Vec<&str> = r.schema.fields().iter().map(|f| f.name().as_str()).collect();
            let mut table = crate::fmt::table(&header, header.len());
            for (i, f) in r.schema.fields().iter().enumerate() {
                if f.data_type().is_numeric() {
                    if let Some(c) = table.column_mut(i) {
                        c.set_cell_alignment(comfy_table::CellAlignment::Right);
                    }
                }
            }
            let options = FormatOptions::default().with_null("NULL");
            for b in &r.batches {
                let formatters = b
                    .columns()
                    .iter()
                    .map(|c| ArrayFormatter::try_new(c.as_ref(), &options))
                    .collect::<Result<Vec<_>, _>>()?;
                for row in 0..b.num_rows() {
                    table.add_row(formatters.iter().map(|f| f.value(row).to_string()));
                }
            }
            writeln!(out, "{table}")?;
            writeln!(out, "({} row{})", r.rows, if r.rows == 1 { "" } else { "s" })?;
        }
        SqlFormat::Csv => {
            let mut w = perfscape_sql::arrow::csv::WriterBuilder::new()
                .with_header(true)
                .build(out);
            if r.batches.is_empty() {
                w.write(&perfscape_sql::arrow::record_batch::RecordBatch::new_empty(
                    r.schema.clone(),
                ))?;
            }
            for b in &r.batches {
                w.write(b)?;
            }
        }
        SqlFormat::Json => {
            let mut w = perfscape_sql::arrow::json::LineDelimitedWriter::new(out);
            for b in &r.batches {
                w.write(b)?;
            }
            w.finish()?;
        }
        SqlFormat::Parquet => {
            let path = path.map_or_else(String::new, |p| p.display().to_string());
            // ArrowWriter needs a `Send` sink: encode into memory, then write.
            let mut buf = Vec::new();
            let mut w = perfscape_sql::datafusion::parquet::arrow::ArrowWriter::try_new(
                &mut buf,
                r.schema.clone(),
                None,
            )
            .map_err(|e| anyhow::anyhow!("{path}: {e}"))?;
            for b in &r.batches {
                w.write(b).map_err(|e| anyhow::anyhow!("{path}: {e}"))?;
            }
            w.close().map_err(|e| anyhow::anyhow!("{path}: {e}"))?;
            out.write_all(&buf)?;
        }
    }
    Ok(())
}

/// Runs `perfscape export`.
pub fn run_export(args: &ExportArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let Some((dir, runs)) = args.args.split_last() else {
        anyhow::bail!("give one or more runs and then the output directory");
    };
    let (set, partial) = open_all(runs, &args.load)?;
    let format = match args.format {
        ExportArg::Parquet => ExportFormat::Parquet,
        ExportArg::Csv => ExportFormat::Csv,
        ExportArg::Json => ExportFormat::Json,
    };
    let written = export(&set, dir, format)?;
    let mut rows = 0u64;
    let mut bytes = 0u64;
    for w in &written {
        rows += w.rows;
        bytes += w.bytes;
    }
    writeln!(
        out,
        "wrote {} files under {}: {} rows, {} bytes",
        written.len(),
        dir.display(),
        rows,
        bytes
    )?;
    for w in &written {
        writeln!(
            out,
            "  {:<13} {:>12} rows {:>12} bytes  {}",
            w.table,
            w.rows,
            w.bytes,
            w.path.display()
        )?;
    }
    Ok(if partial {
        ExitCode::from(EXIT_PARTIAL)
    } else {
        ExitCode::SUCCESS
    })
}
