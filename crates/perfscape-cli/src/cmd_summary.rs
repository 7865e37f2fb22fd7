//! `perfscape summary`: what a run is and where its time goes.

use crate::args::{Common, OutputFormat};
use crate::{fmt, loading};
use clap::Args;
use perfscape_analysis::{RankedEvent, hot_and_imbalanced, run_total_of, thread_totals};
use perfscape_model::{EventKind, MetricId, Profile};
use serde::Serialize;
use std::collections::BTreeSet;
use std::io::Write;
use std::process::ExitCode;

/// Arguments of `perfscape summary`.
#[derive(Args, Debug)]
pub struct SummaryArgs {
    #[command(flatten)]
    common: Common,
    /// Metric for totals, hot spots and imbalance (default: the first, TIME when present).
    #[arg(long, short = 'm')]
    metric: Option<String>,
    /// Number of hot spots and imbalanced events to list.
    #[arg(short = 'n', long = "number", default_value_t = 10)]
    n: usize,
    /// Minimum share of the run (percent of exclusive time) for an event to be listed as imbalanced.
    #[arg(long, default_value_t = 1.0)]
    min_percent: f64,
}

#[derive(Serialize)]
struct EventLine {
    section: &'static str,
    rank: usize,
    event: String,
    source_file: String,
    sum: f64,
    percent: Option<f64>,
    mean: f64,
    max: f64,
    max_thread: String,
    min: f64,
    min_thread: String,
    imbalance: f64,
}

fn lines(p: &Profile, section: &'static str, ranked: &[RankedEvent]) -> Vec<EventLine> {
    ranked
        .iter()
        .map(|r| {
            let x = &r.stats.exclusive;
            EventLine {
                section,
                rank: r.rank,
                event: p.event_name(r.event),
                source_file: fmt::source_file(p, r.event),
                sum: r.sum,
                percent: r.percent,
                mean: x.mean_all,
                max: x.max,
                max_thread: fmt::thread(p, x.max_thread),
                min: x.min,
                min_thread: fmt::thread(p, x.min_thread),
                imbalance: x.imbalance(),
            }
        })
        .collect()
}

/// Metadata keys worth showing, in order, with their label.
const META: &[(&str, &str)] = &[
    ("program", "Program"),
    ("Executable", "Executable"),
    ("Command Line", "Command line"),
    ("Hostname", "Host"),
    ("TAU Version", "TAU version"),
    ("Local Time", "Started"),
];

/// Runs `perfscape summary`.
pub fn run(args: &SummaryArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let loaded = loading::open(&args.common.input)?;
    let p = &loaded.profile;
    let report = &loaded.report;
    let m: MetricId = fmt::metric(p, args.metric.as_deref())?;
    let unit = &p.metric(m).unit;
    // Each computed once: the thread totals give the run total, and one ranking of the flat
    // events gives both lists.
    let totals = thread_totals(p, m);
    let run_total = p.metric(m).combine.is_additive().then(|| run_total_of(&totals));
    let longest = totals
        .iter()
        .filter(|t| !t.inclusive.is_nan())
        .max_by(|a, b| a.inclusive.total_cmp(&b.inclusive).then(b.thread.cmp(&a.thread)));
    let (hot, imbalanced) = hot_and_imbalanced(p, m, args.n, args.min_percent, args.n, run_total);
    let nodes: BTreeSet<u32> = p.threads().iter().map(|t| t.node).collect();
    let with_data = |f: &dyn Fn(&perfscape_model::Event) -> bool| {
        p.event_ids()
            .filter(|&e| f(p.event(e)) && !p.interval(e).is_empty())
            .count()
    };
    let flat = with_data(&|e| !e.is_callpath());
    let callpath = with_data(&|e| e.is_callpath());
    let samples = with_data(&|e| !e.is_callpath() && e.kind == EventKind::Sample);
    let meta: Vec<(&str, String)> = META
        .iter()
        .filter_map(|(k, label)| {
            p.metadata()
                .get_common(k)
                .map(|v| (*label, v.to_string()))
                .or_else(|| {
                    p.metadata()
                        .varying()
                        .iter()
                        .find(|(kk, _)| kk == k)
                        .map(|(_, vals)| (*label, format!("{} (varies by thread)", vals[0].1)))
                })
        })
        .collect();

    match args.common.format {
        OutputFormat::Json => {
            let doc = serde_json::json!({
                "run": args.common.input.run,
                "format": report.format,
                "files_read": report.files_read,
                "bytes_read": report.bytes_read,
                "threads": p.threads().len(),
                "nodes": nodes.len(),
                "metrics": p.metrics(),
                "events": { "flat": flat, "callpath": callpath, "sample": samples, "user_events": p.atomic_events().len() },
                "metadata": meta.iter().map(|(k, v)| serde_json::json!({"name": k, "value": v})).collect::<Vec<_>>(),
                "metric": p.metric(m).name,
                "combine": p.metric(m).combine,
                "run_total": run_total,
                "longest_thread": longest.map(|t| serde_json::json!({"thread": p.thread(t.thread).to_string(), "inclusive": t.inclusive})),
                "hot_spots": lines(p, "hotspot", &hot),
                "imbalanced": lines(p, "imbalance", &imbalanced),
                "bad_files": report.bad_files.iter().map(ToString::to_string).collect::<Vec<_>>(),
                "threads_skipped": report.threads_skipped.iter().map(ToString::to_string).collect::<Vec<_>>(),
                "partial_files": report.partial_files.iter().map(ToString::to_string).collect::<Vec<_>>(),
                "warnings": report.warnings.iter().map(ToString::to_string).collect::<Vec<_>>(),
                "notes": report.notes,
            });
            serde_json::to_writer_pretty(&mut *out, &doc)?;
            writeln!(out)?;
        }
        OutputFormat::Csv => {
            let mut w = csv::Writer::from_writer(out);
            for l in lines(p, "hotspot", &hot)
                .into_iter()
                .chain(lines(p, "imbalance", &imbalanced))
            {
                w.serialize(l)?;
            }
            w.flush()?;
        }
        OutputFormat::Table => {
            writeln!(out, "Run: {}", args.common.input.run.display())?;
            writeln!(
                out,
                "Read: {} files ({:.1} MB) of {}",
                report.files_read,
                report.bytes_read as f64 / 1e6,
                report.format
            )?;
            for (k, v) in &meta {
                writeln!(out, "{k}: {v}")?;
            }
            writeln!(
                out,
                "Threads: {} ({} nodes/ranks)",
                p.threads().len(),
                nodes.len()
            )?;
            let metrics: Vec<String> = p
                .metrics()
                .iter()
                .map(|mm| match mm.combine {
                    perfscape_model::Combine::Sum => format!("{} ({})", mm.name, mm.unit.symbol()),
                    rule => format!("{} ({}, {rule})", mm.name, mm.unit.symbol()),
                })
                .collect();
            writeln!(out, "Metrics: {}", metrics.join(", "))?;
            writeln!(
                out,
                "Events: {flat} flat{}{}, {} user events",
                if samples > 0 {
                    format!(" ({samples} of them sampled source lines)")
                } else {
                    String::new()
                },
                if callpath > 0 {
                    format!(", {callpath} callpaths")
                } else {
                    String::new()
                },
                p.atomic_events().len()
            )?;
            match (longest, run_total) {
                (Some(l), Some(total)) => writeln!(
                    out,
                    "Total {}: {} over all threads; longest thread {} ({})",
                    p.metric(m).name,
                    fmt::value(total, unit),
                    p.thread(l.thread),
                    fmt::value(l.inclusive, unit)
                )?,
                (Some(l), None) => writeln!(
                    out,
                    "{}: largest thread value {} ({}); {}",
                    p.metric(m).name,
                    p.thread(l.thread),
                    fmt::value(l.inclusive, unit),
                    fmt::not_additive_note(p, m).unwrap_or_default()
                )?,
                _ => {}
            }
            writeln!(out, "\nHot spots (exclusive {}):", p.metric(m).name)?;
            let mut t = fmt::table(
                &[
                    "#",
                    "Event",
                    "Source",
                    match p.metric(m).combine {
                        perfscape_model::Combine::Sum => "Total",
                        rule => fmt::total_title(rule),
                    },
                    "%",
                    "Mean",
                    "Max",
                    "Max thread",
                    "Imbalance",
                ],
                3,
            );
            for l in lines(p, "hotspot", &hot) {
                t.add_row(vec![
                    l.rank.to_string(),
                    fmt::name(&l.event, args.common.wide),
                    l.source_file,
                    fmt::value(l.sum, unit),
                    fmt::percent_of_run(l.percent),
                    fmt::value(l.mean, unit),
                    fmt::value(l.max, unit),
                    l.max_thread,
                    fmt::ratio(l.imbalance),
                ]);
            }
            writeln!(out, "{t}")?;
            if p.threads().len() > 1 {
                writeln!(
                    out,
                    "\nMost imbalanced events (max / mean over all threads; events with ≥ {}% of the run):",
                    args.min_percent
                )?;
                if imbalanced.is_empty() {
                    writeln!(out, "  none")?;
                } else {
                    let mut t = fmt::table(
                        &[
                            "#",
                            "Event",
                            "Imbalance",
                            "Max",
                            "Max thread",
                            "Mean",
                            "Min",
                            "Min thread",
                            "Max - mean",
                        ],
                        2,
                    );
                    for l in lines(p, "imbalance", &imbalanced) {
                        t.add_row(vec![
                            l.rank.to_string(),
                            fmt::name(&l.event, args.common.wide),
                            fmt::ratio(l.imbalance),
                            fmt::value(l.max, unit),
                            l.max_thread,
                            fmt::value(l.mean, unit),
                            fmt::value(l.min, unit),
                            l.min_thread,
                            fmt::value(l.max - l.mean, unit),
                        ]);
                    }
                    writeln!(out, "{t}")?;
                }
            }
            writeln!(out)?;
            if report.bad_files.is_empty() && report.partial_files.is_empty() && report.warnings.is_empty() {
                writeln!(out, "Warnings: none")?;
            } else {
                writeln!(
                    out,
                    "Warnings: {} file(s) not loaded, {} loaded in part, {} warning(s) (details on stderr)",
                    report.bad_files.len(),
                    report.partial_files.len(),
                    report.warnings.len()
                )?;
            }
            for n in &report.notes {
                writeln!(out, "Note: {n}")?;
            }
        }
    }
    let code = loading::exit_code(report);
    // A one-shot command: the process ends right after this, and the kernel takes the
    // profile's memory back at exit at once. Freeing its many arrays first (thousands of
    // threads' rows and strings) would be serial work on the main thread before the output
    // is flushed, so the profile is left to the exit instead.
    std::mem::forget(loaded);
    Ok(code)
}
