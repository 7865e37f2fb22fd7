//! `perfscape`: read the profiles of a parallel program and answer questions about them.
//!
//! Thin layer over the library crates: argument parsing (clap), loading with a progress bar,
//! and rendering of the analyses as tables, CSV or JSON.

mod cmd_stats;
mod cmd_summary;
mod cmd_top;
mod fmt;
mod loading;

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Exit status when the output was produced but some input files could not be loaded.
pub const EXIT_PARTIAL: u8 = 3;

#[derive(Parser)]
#[command(
    name = "perfscape",
    version,
    about = "Fast, exact analysis of parallel performance profiles (TAU and more).",
    long_about = "Fast, exact analysis of parallel performance profiles.\n\n\
perfscape reads the profiles a parallel program wrote (one file per thread), merges them \
into one dataset and computes statistics across threads with the conventions of TAU's \
ParaProf: totals, means over the threads that have an event and over all threads, min and \
max with the thread that has them, standard deviations, load imbalance.\n\n\
Input: a TAU run directory (profile.N.C.T files, or MULTI__<metric>/ directories for \
multi-metric runs) or a single profile.N.C.T file, a pprof profile (.pb.gz), a Chrome trace \
(JSON, plain or gzip), `perf script` output or a perf.data file; the format is detected from \
the content.",
    after_help = "Exit status: 0 when every input file loaded, 3 when the output was produced but \
some files could not be loaded (they are listed on stderr), 1 on error, 2 on a usage error.\n\n\
Examples:\n  perfscape summary ../shared/corpus/tau-real/mpi-stencil-np64-callpath-commmatrix\n  \
perfscape top RUN --by inclusive -n 10\n  perfscape stats RUN --format csv > stats.csv\n  \
perfscape stats RUN 'MPI_Allreduce()' --bins 8"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Output format of a command.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// Human-readable tables (default).
    Table,
    /// Comma-separated values with a header row; values in the metric's own unit.
    Csv,
    /// One JSON document; values in the metric's own unit.
    Json,
}

/// Arguments every command takes.
#[derive(Args, Debug, Clone)]
pub struct Common {
    /// Run directory or profile file to read.
    pub run: PathBuf,
    /// Output format.
    #[arg(long, short = 'f', value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
    /// Read the input as this format instead of detecting it from the content (known: tau,
    /// pprof, chrome, perf-script, perf-data).
    #[arg(long, value_name = "NAME")]
    pub input_format: Option<String>,
    /// Worker threads for parsing (default: one per core).
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Show every load warning (by default the first 5 are shown).
    #[arg(long, short = 'v')]
    pub verbose: bool,
    /// Do not shorten long event names in tables.
    #[arg(long)]
    pub wide: bool,
}

#[derive(Subcommand)]
enum Command {
    /// Overview of a run: threads, metrics, events, total time, hot spots, imbalance, warnings.
    Summary(cmd_summary::SummaryArgs),
    /// Ranked event list: rank, name, source file, sum across threads, percent of the run.
    Top(cmd_top::TopArgs),
    /// Statistics of every event across threads, or of one EVENT in detail.
    Stats(cmd_stats::StatsArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let result = match &cli.command {
        Command::Summary(a) => cmd_summary::run(a, &mut out),
        Command::Top(a) => cmd_top::run(a, &mut out),
        Command::Stats(a) => cmd_stats::run(a, &mut out),
    };
    let result = result.and_then(|code| out.flush().map(|()| code).map_err(anyhow::Error::from));
    match result {
        Ok(code) => code,
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("perfscape: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>().is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            || c.downcast_ref::<csv::Error>().is_some_and(|ce| matches!(ce.kind(), csv::ErrorKind::Io(io) if io.kind() == std::io::ErrorKind::BrokenPipe))
    })
}
