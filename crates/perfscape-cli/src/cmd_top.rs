//! `perfscape top`: the ranked event list.

use crate::args::{Common, OutputFormat};
use crate::{fmt, loading};
use clap::{Args, ValueEnum};
use perfscape_analysis::{RankBy, RankedEvent, TopOptions, top_events};
use perfscape_model::{MetricId, Profile};
use serde::Serialize;
use std::io::Write;
use std::process::ExitCode;

/// Ranking key on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum By {
    /// Total exclusive value (time in the event itself).
    Exclusive,
    /// Total inclusive value (time in the event and what it calls).
    Inclusive,
}

/// Arguments of `perfscape top`.
#[derive(Args, Debug)]
pub struct TopArgs {
    #[command(flatten)]
    common: Common,
    /// Metric to rank by (default: the first, TIME when present).
    #[arg(long, short = 'm')]
    metric: Option<String>,
    /// Rank by exclusive or inclusive total.
    #[arg(long, value_enum, default_value_t = By::Exclusive)]
    by: By,
    /// Number of events to list (0 = all).
    #[arg(short = 'n', long = "number", default_value_t = 20)]
    n: usize,
    /// Also rank callpath events (`a => b`); by default only flat events are ranked, since
    /// callpath profiles list each routine both flat and per path.
    #[arg(long)]
    callpaths: bool,
}

#[derive(Serialize)]
struct Row {
    rank: usize,
    event: String,
    source_file: String,
    groups: String,
    sum: f64,
    percent: Option<f64>,
    calls: f64,
    threads: usize,
    mean: f64,
    min: f64,
    min_thread: String,
    max: f64,
    max_thread: String,
    imbalance: f64,
}

fn rows(p: &Profile, ranked: &[RankedEvent], by: RankBy) -> Vec<Row> {
    ranked
        .iter()
        .map(|r| {
            let s = r.stats.get(by.kind());
            Row {
                rank: r.rank,
                event: p.event_name(r.event),
                source_file: fmt::source_file(p, r.event),
                groups: p.event_groups_joined(r.event),
                sum: r.sum,
                percent: r.percent,
                calls: r.stats.calls.total,
                threads: s.threads,
                mean: s.mean,
                min: s.min,
                min_thread: fmt::thread(p, s.min_thread),
                max: s.max,
                max_thread: fmt::thread(p, s.max_thread),
                imbalance: s.imbalance(),
            }
        })
        .collect()
}

/// Runs `perfscape top`.
pub fn run(args: &TopArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let loaded = loading::open(&args.common.input)?;
    let p = &loaded.profile;
    let m: MetricId = fmt::metric(p, args.metric.as_deref())?;
    let by = match args.by {
        By::Exclusive => RankBy::Exclusive,
        By::Inclusive => RankBy::Inclusive,
    };
    let ranked = top_events(
        p,
        m,
        TopOptions {
            by,
            n: args.n,
            include_callpaths: args.callpaths,
        },
    );
    let rows = rows(p, &ranked, by);
    match args.common.format {
        OutputFormat::Csv => fmt::write_csv(out, &rows)?,
        OutputFormat::Json => {
            let doc = serde_json::json!({
                "metric": p.metric(m).name,
                "unit": p.metric(m).unit.symbol(),
                "combine": p.metric(m).combine,
                "by": by,
                "events": rows,
            });
            serde_json::to_writer_pretty(&mut *out, &doc)?;
            writeln!(out)?;
        }
        OutputFormat::Table => {
            let unit = &p.metric(m).unit;
            let metric = &p.metric(m).name;
            writeln!(
                out,
                "Top events by {} {} ({} threads)",
                by.kind().as_str(),
                metric,
                p.threads().len()
            )?;
            let mut t = fmt::table(
                &[
                    "#",
                    "Event",
                    "Source",
                    fmt::total_title(p.metric(m).combine),
                    "%",
                    "Calls",
                    "Mean",
                    "Max",
                    "Max thread",
                    "Imbalance",
                ],
                3,
            );
            for r in &rows {
                t.add_row(vec![
                    r.rank.to_string(),
                    fmt::name(&r.event, args.common.wide),
                    r.source_file.clone(),
                    fmt::value(r.sum, unit),
                    fmt::percent_of_run(r.percent),
                    fmt::count(r.calls),
                    fmt::value(r.mean, unit),
                    fmt::value(r.max, unit),
                    r.max_thread.clone(),
                    fmt::ratio(r.imbalance),
                ]);
            }
            writeln!(out, "{t}")?;
            match fmt::not_additive_note(p, m) {
                Some(note) => writeln!(out, "{note}")?,
                None => writeln!(
                    out,
                    "% = share of all measured thread time (sum over threads of each thread's top-level inclusive {metric})."
                )?,
            }
            writeln!(out, "Imbalance = max / mean over all threads.")?;
        }
    }
    Ok(loading::exit_code(&loaded.report))
}
