//! Loading a run with a progress bar, and telling the user what did not load.

use crate::args::{EXIT_PARTIAL, Input, LoadOptions};
use anyhow::Context;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use perfscape_formats::{CacheMode, LoadReport, OpenOptions, Opened, Parts, ProgressSink};
use perfscape_model::{SampleId, SampleMode, SampleSeries};
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

/// Loads the run named in `input`, showing a progress bar on a terminal, and prints what
/// could not be loaded (and the first warnings) to stderr.
pub fn open(input: &Input) -> anyhow::Result<Opened> {
    open_run(input, false).map(|o| o.loaded)
}

/// What [`open_run`] gives: the profile, and for the browser views the samples over time of
/// a snapshot or dump run and the trace of a Chrome trace.
pub struct OpenedRun {
    /// The profile and its load report.
    pub loaded: Opened,
    /// The samples over time (`keep_extra` and a snapshot or dump run).
    pub series: Option<SampleSeries>,
    /// The trace (`keep_extra` and a Chrome trace).
    pub trace: Option<perfscape_model::Trace>,
    /// What `--filter` hid (none without `--filter`).
    pub filter: Option<perfscape_analysis::FilterReport>,
}

/// Like [`open`]; with `keep_extra`, a run observed over time also gives its
/// [`SampleSeries`], and the profile is made from it (the final state, or the `--sample`),
/// so the profile's event ids are the series' (no series with `--clock-hz`: its samples would
/// keep cycles while the profile shows time; a note says so); and a Chrome trace gives its
/// [`perfscape_model::Trace`] for the timeline.
pub fn open_run(input: &Input, keep_extra: bool) -> anyhow::Result<OpenedRun> {
    open_path(&input.run, &input.load, keep_extra)
}

/// [`open_run`] of the run at `run`, read as `load` says.
pub fn open_path(run: &std::path::Path, load: &LoadOptions, keep_extra: bool) -> anyhow::Result<OpenedRun> {
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
    let opts = OpenOptions {
        threads: load.jobs,
        progress: Some(&sink),
        cache: if load.no_cache {
            CacheMode::Off
        } else if load.refresh_cache {
            CacheMode::Refresh
        } else {
            CacheMode::ReadWrite
        },
        cache_dir: load.cache_dir.as_deref(),
        ..OpenOptions::default()
    };
    let opts = OpenOptions {
        format: load.input_format.map(|f| f.0),
        parts: Parts {
            series: keep_extra || load.sample.is_some(),
            trace: keep_extra,
        },
        ..opts
    };
    // A load error names its path and carries its reason in its own text; chaining it
    // under a context would print both twice.
    let opened = perfscape_formats::open(run, &opts).map_err(|e| anyhow::anyhow!("cannot load {e}"))?;
    let Opened {
        profile,
        series,
        trace,
        mut report,
    } = opened;
    if load.sample.is_some() && series.is_none() {
        anyhow::bail!(
            "--sample: {}: no series of samples here: perfscape reads samples from TAU snapshot files (snapshot.N.C.T) and TAU incremental dumps (dump__<time>__.N.C.T)",
            run.display()
        );
    }
    let profile = match (&load.sample, &series) {
        (Some(sample), Some(series)) => {
            let s = find_sample(series, sample)?;
            let mode = if load.delta {
                SampleMode::Delta
            } else {
                SampleMode::Cumulative
            };
            let profile = series
                .profile_at(s, mode)
                .with_context(|| format!("cannot build sample {sample}"))?;
            let info = series
                .sample(s)
                .map(|i| (i.name().to_string(), i.missing_threads().len()));
            let (name, missing) = info.unwrap_or_default();
            report.notes.push(format!(
                "sample {} `{name}` of {} ({}){}",
                s.0,
                series.len(),
                if load.delta {
                    "change since each thread's previous sample"
                } else {
                    "cumulative values"
                },
                if missing > 0 {
                    format!("; {missing} thread(s) did not write it")
                } else {
                    String::new()
                }
            ));
            profile
        }
        _ => profile,
    };
    let keep = keep_extra && load.clock_hz.is_none() && load.derive.is_empty() && load.filter.is_empty();
    if keep_extra && !keep && series.is_some() {
        report.notes.push(if load.clock_hz.is_some() {
            "--clock-hz: the samples over time are not shown (they are counted in cycles)".into()
        } else {
            "--derive/--filter: the samples over time are not shown (they apply to the final profile only)"
                .into()
        });
    }
    let series = if keep { series } else { None };
    let trace = if keep_extra { trace } else { None };
    let loaded = Opened::profile(profile, report);
    print_report(&loaded.report, load.verbose);
    let mut loaded = match &load.clock_hz {
        Some(spec) => cycles_as_time(loaded, spec)?,
        None => loaded,
    };
    for definition in &load.derive {
        let spec: perfscape_analysis::DerivedMetricSpec = definition.parse()?;
        let (profile, made) = perfscape_analysis::derive_metric(loaded.profile, &spec)?;
        loaded.profile = profile;
        eprintln!("perfscape: {made}");
        loaded.report.notes.push(made.to_string());
    }
    let mut filtered = None;
    if !load.filter.is_empty() {
        let filter = perfscape_analysis::EventFilter::parse(&load.filter)?;
        let m = crate::fmt::metric(&loaded.profile, None)?;
        let (profile, made) = perfscape_analysis::filter_events(loaded.profile, &filter, m)?;
        loaded.profile = profile;
        eprintln!("perfscape: {made}");
        loaded.report.notes.push(made.to_string());
        filtered = Some(made);
    }
    Ok(OpenedRun {
        loaded,
        series,
        trace,
        filter: filtered,
    })
}

/// `--clock-hz`: every metric counted in cycles becomes nanoseconds at the given frequency.
fn cycles_as_time(mut loaded: Opened, spec: &str) -> anyhow::Result<Opened> {
    let hz = if spec.eq_ignore_ascii_case("metadata") {
        perfscape_analysis::clock_hz_from_metadata(&loaded.profile)
            .context("--clock-hz metadata: the profile records no `CPU MHz` common to all threads")?
    } else {
        spec.trim()
            .parse::<f64>()
            .ok()
            .filter(|hz| hz.is_finite() && *hz > 0.0)
            .with_context(|| {
                format!("--clock-hz `{spec}` is not a frequency in Hz above 0 (or `metadata`)")
            })?
    };
    let cycles: Vec<_> = loaded
        .profile
        .metric_ids()
        .filter(|&m| loaded.profile.metric(m).unit == perfscape_model::Unit::Cycles)
        .collect();
    if cycles.is_empty() {
        eprintln!("perfscape: --clock-hz: no metric of this profile is counted in cycles; nothing converted");
    }
    for m in cycles {
        loaded.profile = perfscape_analysis::cycles_to_time(loaded.profile, m, hz)?;
    }
    Ok(loaded)
}

/// The sample a `--sample` value names: a name, a sequence number, or `last`.
fn find_sample(series: &SampleSeries, wanted: &str) -> anyhow::Result<SampleId> {
    if let Some(s) = series.sample_by_name(wanted) {
        return Ok(s);
    }
    if wanted == "last" && !series.is_empty() {
        return Ok(SampleId::from(series.len() - 1));
    }
    if let Ok(n) = wanted.parse::<usize>()
        && n < series.len()
    {
        return Ok(SampleId::from(n));
    }
    let names: Vec<&str> = series.samples().iter().map(|s| s.name()).collect();
    anyhow::bail!(
        "no sample `{wanted}`: the run has {} samples (0..{}): {}",
        series.len(),
        series.len().saturating_sub(1),
        names.join(", ")
    )
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
