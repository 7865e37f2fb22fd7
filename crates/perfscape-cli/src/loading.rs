//! Loading a run with a progress bar, and telling the user what did not load.

use crate::{Common, EXIT_PARTIAL};
use anyhow::Context;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use perfscape_formats::{LoadOptions, LoadReport, Loaded, ProgressSink, load, load_as};
use std::io::IsTerminal;
use std::process::ExitCode;

struct Bar(ProgressBar);

impl ProgressSink for Bar {
    fn start(&self, total_files: u64) {
        self.0.set_length(total_files);
    }
    fn advance(&self, files: u64) {
        self.0.inc(files);
    }
    fn finish(&self) {
        self.0.finish_and_clear();
    }
}

/// Loads the run named in `common`, showing a progress bar on a terminal, and prints what
/// could not be loaded (and the first warnings) to stderr.
pub fn open(common: &Common) -> anyhow::Result<Loaded> {
    let target = if std::io::stderr().is_terminal() {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    };
    let bar = ProgressBar::with_draw_target(None, target);
    bar.set_style(
        ProgressStyle::with_template("{spinner} reading {pos}/{len} files [{bar:30}] {elapsed}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    let sink = Bar(bar);
    let opts = LoadOptions {
        threads: common.jobs,
        progress: Some(&sink),
    };
    let loaded = match &common.input_format {
        Some(f) => load_as(&common.run, f, &opts),
        None => load(&common.run, &opts),
    }
    .with_context(|| format!("cannot load {}", common.run.display()))?;
    print_report(&loaded.report, common.verbose);
    Ok(loaded)
}

/// Prints the load problems to stderr.
pub fn print_report(report: &LoadReport, verbose: bool) {
    if !report.bad_files.is_empty() {
        eprintln!(
            "perfscape: {} file(s) could not be loaded; {} thread(s) left out:",
            report.bad_files.len(),
            report.threads_skipped.len()
        );
        for e in &report.bad_files {
            eprintln!("  {e}");
        }
    }
    if !report.partial_files.is_empty() {
        eprintln!(
            "perfscape: {} file(s) loaded only in part:",
            report.partial_files.len()
        );
        for e in &report.partial_files {
            eprintln!("  {e}");
        }
    }
    if !report.warnings.is_empty() {
        let shown = if verbose {
            report.warnings.len()
        } else {
            report.warnings.len().min(5)
        };
        eprintln!("perfscape: {} warning(s) while loading:", report.warnings.len());
        for w in &report.warnings[..shown] {
            eprintln!("  {w}");
        }
        if shown < report.warnings.len() {
            eprintln!("  ... {} more (use -v to see all)", report.warnings.len() - shown);
        }
    }
}

/// The exit status for a command whose output was written: partial loads are told apart.
pub fn exit_code(report: &LoadReport) -> ExitCode {
    if report.is_partial() {
        ExitCode::from(EXIT_PARTIAL)
    } else {
        ExitCode::SUCCESS
    }
}
