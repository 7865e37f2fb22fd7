//! `perfscape`: read the profiles of a parallel program and answer questions about them.
//!
//! Thin layer over the library crates: argument parsing (clap), loading with a progress bar,
//! and rendering of the analyses as tables, CSV or JSON.

mod args;
mod cmd_cache;
mod cmd_categories;
mod cmd_comm;
mod cmd_compare;
mod cmd_diff;
mod cmd_disasm;
mod cmd_findings;
mod cmd_record;
#[cfg(feature = "sql")]
mod cmd_report;
mod cmd_scaling;
mod cmd_serve;
mod cmd_source;
#[cfg(feature = "sql")]
mod cmd_sql;
mod cmd_stats;
#[cfg(feature = "sql")]
mod cmd_store;
mod cmd_summary;
mod cmd_top;
mod cmd_watch;
mod dashboards;
mod fmt;
mod loading;

/// The allocator: jemalloc, which gives the memory of freed blocks back to the system within
/// 0.2 s, with one arena per CPU (`dirty_decay_ms:200,muzzy_decay_ms:0,percpu_arena:percpu`, set
/// at build time in `.cargo/config.toml`; `_RJEM_MALLOC_CONF` overrides it at run time). With glibc's malloc, `perfscape serve` under 100 concurrent clients
/// kept freed blocks of evicted cache entries in its RSS: 2.2 GB at a peak where the cache
/// held 0.96 GB of its 1 GiB budget (BENCHMARKS.md, "Serving under load").
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use std::io::Write;
use std::process::ExitCode;

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
perfscape diff RUN_A RUN_B --by inclusive   (what changed; --threads EVENT: which ranks)\n  \
perfscape compare --group before A1 A2 A3 --group after B1 B2 B3\n  \
perfscape scaling RUN_NP1 RUN_NP2 RUN_NP4 ...   (speedup, efficiency, Extra-P models)\n  \
perfscape top SNAPSHOT_RUN --sample 'iteration 200' --delta\n  perfscape serve RUN            (then open the printed URL)\n  \
perfscape watch RUN_DIR --format json   (while the program runs)\n  perfscape replay SNAPSHOT_RUN --speed 10\n  \
perfscape cache info            (what the profile cache holds; `cache clear` empties it)\n  \
perfscape sql RUN \"SELECT e.name, SUM(v.exclusive) FROM event_values v JOIN events e USING (run, event) GROUP BY 1\"\n  \
perfscape export RUN --format parquet OUT_DIR"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Overview of a run: threads, metrics, events, total time, hot spots, imbalance, warnings.
    Summary(cmd_summary::SummaryArgs),
    /// Ranked event list: rank, name, source file, sum across threads, percent of the run.
    Top(cmd_top::TopArgs),
    /// Statistics of every event across threads, or of one EVENT in detail.
    Stats(cmd_stats::StatsArgs),
    /// Time per category (MPI collective, I/O, OpenMP barrier, ..., from rules with
    /// defaults) of the run, each process or each thread, and POP's efficiency metrics (load
    /// balance, communication and parallel efficiency) with the categories counted as useful.
    Categories(cmd_categories::CategoriesArgs),
    /// What is wrong with the run, ranked by the time it costs: stragglers, load imbalance of
    /// useful work, communication-bound threads, POP efficiencies, hot spots.
    Findings(cmd_findings::FindingsArgs),
    /// The lines of a source file with the run's values beside them, as `pprof -list` prints
    /// them: per line the sum across threads, the mean, the minimum and maximum with their
    /// threads and the standard deviation (`source RUN FILE[:FIRST-LAST] --source-dir DIR`).
    Source(cmd_source::SourceArgs),
    /// The instructions of a source line range in the executable (DWARF line table, x86-64,
    /// AT&T syntax), each with its line and the line's total in the run
    /// (`disasm RUN --binary B FILE:FIRST-LAST`).
    Disasm(cmd_disasm::DisasmArgs),
    /// Communication matrix of a TAU_COMM_MATRIX run: the heaviest sender → receiver pairs
    /// (bytes, calls, mean size) and the totals per callpath; --csv writes ParaProf's
    /// --writecomm layout.
    Comm(cmd_comm::CommArgs),
    /// Compare two runs event by event (B − A, B / A, share of A's run), or one event thread
    /// by thread (--threads EVENT).
    Diff(cmd_diff::DiffArgs),
    /// Compare groups of repeated runs: per event mean, standard deviation, min and max of each
    /// group and Welch's t-test of the difference.
    Compare(cmd_compare::CompareArgs),
    /// Scaling study of runs at several process counts: per event its value against the
    /// count, speedup, efficiency, share of the run and an Extra-P model.
    Scaling(cmd_scaling::ScalingArgs),
    /// Serve linked views of the run in the browser (heat map, overview, call tree, terrain, ...).
    Serve(cmd_serve::ServeArgs),
    /// Run a program and serve what it streams (`perfscape record -- mpirun -np 8 ./app`): the
    /// views follow it live; `serve --listen` on a private Unix socket, the program started with
    /// PERFSCAPE_STREAM set (producers/perfscape_stream.h and .py read it; STREAM.md).
    Record(cmd_serve::ServeArgs),
    /// Follow a running program's TAU snapshots: one line per integrated sample as it arrives;
    /// exits after the final sample or on Ctrl-C.
    Watch(cmd_watch::WatchArgs),
    /// Replay a finished run's snapshots through the live path at --speed X: the lines `watch`
    /// would print.
    Replay(cmd_watch::ReplayArgs),
    /// The profile cache: `cache info` (directory, entries, sizes, last use), `cache clear`.
    Cache(cmd_cache::CacheArgs),
    /// SQL over the runs' tables (runs, threads, metrics, events, event_values, user_events,
    /// samples, intervals, metadata; see TABLES.md): `perfscape sql RUN... "SELECT ..."`.
    #[cfg(feature = "sql")]
    Sql(cmd_sql::SqlArgs),
    /// Write the runs' tables to files: Parquet partitioned by run, CSV or JSON lines.
    #[cfg(feature = "sql")]
    Export(cmd_sql::ExportArgs),
    /// A store of runs (Parquet files plus a catalog): `store add RUN... [--tag k=v]`,
    /// `store list`, `store rm N...`; `perfscape sql --store DIR "SELECT ..."` queries them all.
    #[cfg(feature = "sql")]
    Store(cmd_store::StoreArgs),
    /// Write one self-contained HTML file of the run's dashboards (opens offline, no server):
    /// `perfscape report RUN [--dashboard FILE]... -o report.html`.
    #[cfg(feature = "sql")]
    Report(cmd_report::ReportArgs),
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
        Command::Categories(a) => cmd_categories::run(a, &mut out),
        Command::Findings(a) => cmd_findings::run(a, &mut out),
        Command::Source(a) => cmd_source::run(a, &mut out),
        Command::Disasm(a) => cmd_disasm::run(a, &mut out),
        Command::Comm(a) => cmd_comm::run(a, &mut out),
        Command::Diff(a) => cmd_diff::run(a, &mut out),
        Command::Compare(a) => cmd_compare::run(a, &cmd_compare::groups(&matches), &mut out),
        Command::Scaling(a) => cmd_scaling::run(a, &mut out),
        Command::Serve(a) => cmd_serve::run(a),
        Command::Record(a) => cmd_serve::run_record(a),
        Command::Watch(a) => cmd_watch::run_watch(a, &mut out),
        Command::Replay(a) => cmd_watch::run_replay(a, &mut out),
        Command::Cache(a) => cmd_cache::run(a, &mut out),
        #[cfg(feature = "sql")]
        Command::Sql(a) => cmd_sql::run_sql(a, &mut out),
        #[cfg(feature = "sql")]
        Command::Export(a) => cmd_sql::run_export(a, &mut out),
        #[cfg(feature = "sql")]
        Command::Store(a) => cmd_store::run(a, &mut out),
        #[cfg(feature = "sql")]
        Command::Report(a) => cmd_report::run(a),
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
