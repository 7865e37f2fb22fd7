//! `perfscape diff A B`: what changed between two runs, per event or per thread of one event.

use crate::args::{Common, EXIT_PARTIAL, LoadOptions, NormalizeArg, OutputFormat, Study};
use crate::{fmt, loading};
use anyhow::Context;
use clap::{Args, ValueEnum};
use perfscape_analysis::compare::diff::{
    Change, DiffOptions, DiffRow, DiffSort, Normalize, ThreadDiffRow, default_normalize, diff_runs,
    thread_diff,
};
use perfscape_analysis::compare::matching::{RunMatch, match_runs};
use perfscape_model::{MetricId, Profile, ValueKind};
use serde::Serialize;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// `--sort` on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum SortArg {
    /// Largest |B − A| first.
    AbsDelta,
    /// Largest B − A first (regressions on top).
    Delta,
    /// Largest B / A first.
    Ratio,
    /// Largest value in A first.
    A,
    /// Largest value in B first.
    B,
}

/// Arguments of `perfscape diff`.
#[derive(Args, Debug)]
pub struct DiffArgs {
    /// Run A (before), and how to read both runs.
    #[command(flatten)]
    common: Common,
    /// Run B (after): directory or profile file.
    run_b: PathBuf,
    /// What to compare.
    #[command(flatten)]
    study: Study,
    /// `total` over each run's threads, or `per-thread` (the total divided by the run's
    /// number of threads). Default: per-thread when the runs have different thread counts,
    /// else total.
    #[arg(long, value_enum)]
    normalize: Option<NormalizeArg>,
    /// Row order.
    #[arg(long, value_enum, default_value_t = SortArg::AbsDelta)]
    sort: SortArg,
    /// Instead of the event list: the difference of this EVENT thread by thread (which ranks
    /// got slower), largest increase first.
    #[arg(long, value_name = "EVENT")]
    threads: Option<String>,
}

#[derive(Serialize)]
struct Row {
    rank: usize,
    event: String,
    change: Change,
    note: &'static str,
    a: f64,
    b: f64,
    delta: f64,
    ratio: Option<f64>,
    percent_of_a: Option<f64>,
    threads_a: usize,
    threads_b: usize,
}

fn row(i: usize, a: &Profile, b: &Profile, r: &DiffRow) -> Row {
    let event = match (r.a, r.b) {
        (Some(e), _) => a.event_name(e),
        (None, Some(e)) => b.event_name(e),
        (None, None) => String::new(),
    };
    Row {
        rank: i + 1,
        event,
        change: r.change,
        note: r.note.as_str(),
        a: r.value_a,
        b: r.value_b,
        delta: r.delta,
        ratio: r.ratio,
        percent_of_a: r.percent_of_a,
        threads_a: r.threads_a,
        threads_b: r.threads_b,
    }
}

/// Loads one run of a comparison (its failures name the run) and prints what did not load.
pub fn load(run: &std::path::Path, load: &LoadOptions) -> anyhow::Result<perfscape_formats::Opened> {
    loading::open_path(run, load, false).map(|o| o.loaded)
}

/// Runs `perfscape diff`.
pub fn run(args: &DiffArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let la = load(&args.common.input.run, &args.common.input.load)?;
    let lb = load(&args.run_b, &args.common.input.load)?;
    let (a, b) = (&la.profile, &lb.profile);
    let matched = match_runs(a, b).with_context(|| {
        format!(
            "cannot compare {} with {}",
            args.common.input.run.display(),
            args.run_b.display()
        )
    })?;
    let ma: MetricId = fmt::metric(a, args.study.metric.as_deref())?;
    let normalize = args
        .normalize
        .map_or_else(|| default_normalize(a, b), Normalize::from);
    match &args.threads {
        Some(query) => per_thread(args, out, (a, b), &matched, ma, query)?,
        None => per_event(args, out, (a, b), &matched, ma, normalize)?,
    }
    let partial = la.report.is_partial() || lb.report.is_partial();
    Ok(if partial {
        ExitCode::from(EXIT_PARTIAL)
    } else {
        ExitCode::SUCCESS
    })
}

fn per_event(
    args: &DiffArgs,
    out: &mut dyn Write,
    (a, b): (&Profile, &Profile),
    matched: &RunMatch,
    ma: MetricId,
    normalize: Normalize,
) -> anyhow::Result<()> {
    let sort = match args.sort {
        SortArg::AbsDelta => DiffSort::AbsDelta,
        SortArg::Delta => DiffSort::Delta,
        SortArg::Ratio => DiffSort::Ratio,
        SortArg::A => DiffSort::A,
        SortArg::B => DiffSort::B,
    };
    let opts = DiffOptions {
        metric: ma,
        kind: ValueKind::from(args.study.by),
        normalize,
        include_callpaths: args.study.callpaths,
        sort,
    };
    let d = diff_runs(a, b, matched, opts)?;
    let take = args.study.take(d.rows.len());
    let rows: Vec<Row> = d
        .rows
        .iter()
        .take(take)
        .enumerate()
        .map(|(i, r)| row(i, a, b, r))
        .collect();
    let metric = &a.metric(ma).name;
    let unit = &a.metric(ma).unit;
    let counts = (
        d.rows.iter().filter(|r| r.change == Change::Added).count(),
        d.rows.iter().filter(|r| r.change == Change::Removed).count(),
    );
    match args.common.format {
        OutputFormat::Csv => fmt::write_csv(out, &rows)?,
        OutputFormat::Json => {
            let doc = serde_json::json!({
                "run_a": args.common.input.run,
                "run_b": args.run_b,
                "metric": metric,
                "unit": unit.symbol(),
                "kind": opts.kind,
                "normalize": normalize,
                "threads_a": a.threads().len(),
                "threads_b": b.threads().len(),
                "total_a": d.total_a,
                "total_b": d.total_b,
                "events_added": counts.0,
                "events_removed": counts.1,
                "metrics_only_a": matched.metrics_only_a.iter().map(|&m| &a.metric(m).name).collect::<Vec<_>>(),
                "metrics_only_b": matched.metrics_only_b.iter().map(|&m| &b.metric(m).name).collect::<Vec<_>>(),
                "events": rows,
            });
            serde_json::to_writer_pretty(&mut *out, &doc)?;
            writeln!(out)?;
        }
        OutputFormat::Table => {
            let per = match normalize {
                Normalize::Total => "total over threads",
                Normalize::PerThread => "per thread (total / threads of the run)",
            };
            writeln!(
                out,
                "{} {metric}, {per}: A = {} ({} threads), B = {} ({} threads)",
                opts.kind.as_str(),
                args.common.input.run.display(),
                a.threads().len(),
                args.run_b.display(),
                b.threads().len(),
            )?;
            let mut t = fmt::table(&["#", "Event", "Change", "A", "B", "B−A", "B/A", "% of A"], 3);
            for r in &rows {
                let change = match (r.change, r.note) {
                    (Change::Matched, "") => String::new(),
                    (Change::Matched, note) => note.to_string(),
                    (Change::Added, _) => "added".into(),
                    (Change::Removed, _) => "removed".into(),
                };
                t.add_row(vec![
                    r.rank.to_string(),
                    fmt::name(&r.event, args.common.wide),
                    change,
                    fmt::value(r.a, unit),
                    fmt::value(r.b, unit),
                    fmt::signed(r.delta, unit),
                    r.ratio.map_or_else(|| "–".into(), fmt::ratio),
                    r.percent_of_a.map_or_else(|| "–".into(), |p| format!("{p:+.2}%")),
                ]);
            }
            writeln!(out, "{t}")?;
            if let (Some(ta), Some(tb)) = (d.total_a, d.total_b) {
                writeln!(
                    out,
                    "Run total: A {}, B {} ({}); % of A = B−A as a share of A's run total.",
                    fmt::value(ta, unit),
                    fmt::value(tb, unit),
                    fmt::signed(tb - ta, unit)
                )?;
            }
            writeln!(
                out,
                "Events (flat and callpath): {} in both runs, {} added in B, {} removed in B{}.",
                matched.events.len(),
                matched.events_only_b.len(),
                matched.events_only_a.len(),
                if args.study.callpaths {
                    ""
                } else {
                    "; --callpaths also lists callpaths"
                }
            )?;
            for (which, p, ms) in [
                ("A", a, &matched.metrics_only_a),
                ("B", b, &matched.metrics_only_b),
            ] {
                if !ms.is_empty() {
                    let names: Vec<&str> = ms.iter().map(|&m| p.metric(m).name.as_str()).collect();
                    writeln!(out, "Metrics only in {which}: {}", names.join(", "))?;
                }
            }
        }
    }
    Ok(())
}

fn per_thread(
    args: &DiffArgs,
    out: &mut dyn Write,
    (a, b): (&Profile, &Profile),
    matched: &RunMatch,
    ma: MetricId,
    query: &str,
) -> anyhow::Result<()> {
    let ea = fmt::event(a, query).context("run A")?;
    let pair = matched
        .events
        .iter()
        .find(|p| p.a == ea)
        .copied()
        .with_context(|| format!("`{}` is not in run B", a.event_name(ea)))?;
    let mb = matched
        .metric_in_b(ma)
        .with_context(|| format!("metric `{}` is not in run B", a.metric(ma).name))?;
    let rows: Vec<ThreadDiffRow> = thread_diff(a, b, matched, pair, (ma, mb), ValueKind::from(args.study.by));
    let take = args.study.take(rows.len());
    let unit = &a.metric(ma).unit;
    let opt = |v: Option<f64>| v.map_or_else(|| "–".into(), |v| fmt::value(v, unit));
    match args.common.format {
        OutputFormat::Csv => {
            let mut w = csv::Writer::from_writer(out);
            w.write_record(["thread", "a", "b", "delta"])?;
            for r in rows.iter().take(take) {
                let num = |v: Option<f64>| v.map(|v| v.to_string()).unwrap_or_default();
                w.write_record([
                    r.thread.to_string(),
                    num(r.value_a),
                    num(r.value_b),
                    r.delta.to_string(),
                ])?;
            }
            w.flush()?;
        }
        OutputFormat::Json => {
            let doc = serde_json::json!({
                "event": a.event_name(ea),
                "metric": a.metric(ma).name,
                "unit": unit.symbol(),
                "kind": ValueKind::from(args.study.by),
                "same_threads": matched.same_threads(),
                "threads": rows.iter().take(take).collect::<Vec<_>>(),
            });
            serde_json::to_writer_pretty(&mut *out, &doc)?;
            writeln!(out)?;
        }
        OutputFormat::Table => {
            writeln!(
                out,
                "{} {} of {} per thread, largest increase first",
                ValueKind::from(args.study.by).as_str(),
                a.metric(ma).name,
                a.event_name(ea)
            )?;
            let mut t = fmt::table(&["Thread", "A", "B", "B−A"], 1);
            for r in rows.iter().take(take) {
                t.add_row(vec![
                    r.thread.to_string(),
                    opt(r.value_a),
                    opt(r.value_b),
                    fmt::signed(r.delta, unit),
                ]);
            }
            writeln!(out, "{t}")?;
            if !matched.same_threads() {
                writeln!(
                    out,
                    "The runs have different threads: {} only in A, {} only in B (– = no value).",
                    matched.threads_only_a.len(),
                    matched.threads_only_b.len()
                )?;
            }
        }
    }
    Ok(())
}
