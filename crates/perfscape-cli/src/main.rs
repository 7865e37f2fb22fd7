//! `perfscape`: read the profiles of a parallel program and answer questions about them.
//!
//! Thin layer over the library crates: argument parsing (clap), loading with a progress bar,
//! and rendering of the analyses as tables, CSV or JSON.

mod cmd_cache;
mod cmd_serve;
mod cmd_stats;
mod cmd_summary;
mod cmd_top;
mod cmd_watch;
mod fmt;
mod loading;

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
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
    after_help = "Exit status: 0 when every input file loaded, 3 when the output was produced but \
some files could not be loaded (they are listed on stderr), 1 on error, 2 on a usage error.\n\n\
Examples:\n  perfscape summary ../shared/corpus/tau-real/mpi-stencil-np64-callpath-commmatrix\n  \
perfscape top RUN --by inclusive -n 10\n  perfscape stats RUN --format csv > stats.csv\n  \
perfscape stats RUN 'MPI_Allreduce()' --bins 8\n  \
perfscape top SNAPSHOT_RUN --sample 'iteration 200' --delta\n  perfscape serve RUN            (then open the printed URL)\n  \
perfscape watch RUN_DIR --format json   (while the program runs)\n  perfscape replay SNAPSHOT_RUN --speed 10\n  \
perfscape cache info            (what the profile cache holds; `cache clear` empties it)"
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

/// What to read and how.
#[derive(Args, Debug, Clone)]
pub struct Input {
    /// Run directory or profile file to read.
    pub run: PathBuf,
    /// Read the input as this format instead of detecting it from the content.
    #[arg(long, value_name = "NAME")]
    pub input_format: Option<FormatArg>,
    /// Analyze one sample of a run observed over time (TAU snapshots or incremental dumps)
    /// instead of its final state: the sample's name (`iteration 40`, `final`), its sequence
    /// number (0 = first), or `last`.
    #[arg(long, value_name = "SAMPLE")]
    pub sample: Option<String>,
    /// With --sample: the change since each thread's previous sample instead of the values
    /// accumulated since the program started.
    #[arg(long, requires = "sample")]
    pub delta: bool,
    /// Worker threads for parsing (default: one per core).
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Show every load warning (by default the first 5 are shown).
    #[arg(long, short = 'v')]
    pub verbose: bool,
    /// Show metrics counted in processor cycles as time (nanoseconds) at this clock
    /// frequency: a number in Hz (e.g. 2.1e9), or `metadata` for the `CPU MHz` the profile
    /// records.
    #[arg(long, value_name = "HZ|metadata")]
    pub clock_hz: Option<String>,
    /// Neither read nor write the cache of loaded profiles (by default a valid cache entry of
    /// an earlier load is read, else the files are read and an entry written in the cache
    /// directory; nothing is written beside the input; see CACHE.md).
    #[arg(long, conflicts_with = "refresh_cache")]
    pub no_cache: bool,
    /// Read the files even when a valid cache exists, and rewrite the cache.
    #[arg(long)]
    pub refresh_cache: bool,
    /// The cache directory (default: $PERFSCAPE_CACHE_DIR, else perfscape/ in the user's
    /// cache directory, e.g. ~/.cache/perfscape). Its entries are kept under
    /// $PERFSCAPE_CACHE_MAX_BYTES (default 2G), least recently used removed first.
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
}

/// Arguments every reporting command takes.
#[derive(Args, Debug, Clone)]
pub struct Common {
    /// What to read.
    #[command(flatten)]
    pub input: Input,
    /// Output format.
    #[arg(long, short = 'f', value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
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
    /// Serve linked views of the run in the browser (heat map, overview, call tree, terrain, ...).
    Serve(cmd_serve::ServeArgs),
    /// Follow a running program's TAU snapshots: one line per integrated sample as it arrives;
    /// exits after the final sample or on Ctrl-C.
    Watch(cmd_watch::WatchArgs),
    /// Replay a finished run's snapshots through the live path at --speed X: the lines `watch`
    /// would print.
    Replay(cmd_watch::ReplayArgs),
    /// The profile cache: `cache info` (directory, entries, sizes, last use), `cache clear`.
    Cache(cmd_cache::CacheArgs),
}

/// A format of the registry, as `--input-format` takes it: the values, their help and the
/// parsing come from `perfscape_formats::registry::FORMATS`.
#[derive(Clone, Copy, Debug)]
pub struct FormatArg(pub &'static perfscape_formats::Format);

impl ValueEnum for FormatArg {
    fn value_variants<'a>() -> &'a [Self] {
        static ALL: std::sync::LazyLock<Vec<FormatArg>> = std::sync::LazyLock::new(|| {
            perfscape_formats::registry::FORMATS
                .iter()
                .map(|f| FormatArg(f))
                .collect()
        });
        &ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.0.name).help(self.0.description))
    }
}

/// `perfscape --help`'s description, with the list of formats from the registry.
fn long_about() -> String {
    let formats: String = perfscape_formats::registry::FORMATS
        .iter()
        .map(|f| format!("\n  {:<13} {}", f.name, f.description))
        .collect();
    format!(
        "Fast, exact analysis of parallel performance profiles.\n\n\
perfscape reads the profiles a parallel program wrote (one file per thread), merges them \
into one dataset and computes statistics across threads with the conventions of TAU's \
ParaProf: totals, means over the threads that have an event and over all threads, min and \
max with the thread that has them, standard deviations, load imbalance.\n\n\
Input (the format is detected from the content; gzip, zstd and xz files are decompressed \
first):{formats}"
    )
}

fn main() -> ExitCode {
    let matches = Cli::command().long_about(long_about()).get_matches();
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(c) => c,
        Err(e) => e.exit(),
    };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let result = match &cli.command {
        Command::Summary(a) => cmd_summary::run(a, &mut out),
        Command::Top(a) => cmd_top::run(a, &mut out),
        Command::Stats(a) => cmd_stats::run(a, &mut out),
        Command::Serve(a) => cmd_serve::run(a),
        Command::Watch(a) => cmd_watch::run_watch(a, &mut out),
        Command::Replay(a) => cmd_watch::run_replay(a, &mut out),
        Command::Cache(a) => cmd_cache::run(a, &mut out),
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
