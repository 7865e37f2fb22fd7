//! `perfscape stats`: statistics of every event across threads, or one event in detail.

use crate::args::{Common, Kind, OutputFormat};
use crate::{fmt, loading};
use clap::Args;
use perfscape_analysis::{
    Bins, EventStats, Summary, event_stats, histogram, larger_first, thread_values_sorted,
};
use perfscape_model::{EventId, MetricId, Profile, Unit, ValueKind};
use serde::Serialize;
use std::io::Write;
use std::process::ExitCode;

/// Arguments of `perfscape stats`.
#[derive(Args, Debug)]
pub struct StatsArgs {
    #[command(flatten)]
    common: Common,
    /// One event to describe in detail (exact name, or a unique part of it).
    event: Option<String>,
    /// Metric (default: every metric for the event list, the first metric for one event).
    #[arg(long, short = 'm')]
    metric: Option<String>,
    /// Value shown per thread and in the histogram of one event.
    #[arg(long, value_enum, default_value_t = Kind::Exclusive)]
    kind: Kind,
    /// Number of histogram bins for one event (default: Sturges' rule).
    #[arg(long)]
    bins: Option<usize>,
    /// List every thread's value for one event (by default the 10 largest and 10 smallest).
    #[arg(long)]
    all_threads: bool,
}

/// One CSV/JSON row of the event list: the first 17 columns are fixed by the issue that
/// defined the command; the rest follow.
#[derive(Serialize)]
struct StatsRow<'a> {
    metric: &'a str,
    event: String,
    threads: usize,
    calls_total: f64,
    exclusive_total: f64,
    inclusive_total: f64,
    exclusive_mean: f64,
    exclusive_mean_all: f64,
    exclusive_min: f64,
    exclusive_min_thread: String,
    exclusive_max: f64,
    exclusive_max_thread: String,
    exclusive_stddev: f64,
    inclusive_mean: f64,
    inclusive_min: f64,
    inclusive_max: f64,
    inclusive_stddev: f64,
    exclusive_stddev_all: f64,
    inclusive_mean_all: f64,
    inclusive_min_thread: String,
    inclusive_max_thread: String,
    inclusive_stddev_all: f64,
    subcalls_total: f64,
    calls_mean: f64,
    exclusive_imbalance: f64,
    threads_all: usize,
    groups: String,
    source_file: String,
    source_line: Option<u32>,
}

fn stats_row<'a>(p: &'a Profile, s: &EventStats) -> StatsRow<'a> {
    let (x, i) = (&s.exclusive, &s.inclusive);
    let ev = p.event(s.event);
    StatsRow {
        metric: &p.metric(s.metric).name,
        event: p.event_name(s.event),
        threads: x.threads,
        calls_total: s.calls.total,
        exclusive_total: x.total,
        inclusive_total: i.total,
        exclusive_mean: x.mean,
        exclusive_mean_all: x.mean_all,
        exclusive_min: x.min,
        exclusive_min_thread: fmt::thread(p, x.min_thread),
        exclusive_max: x.max,
        exclusive_max_thread: fmt::thread(p, x.max_thread),
        exclusive_stddev: x.stddev,
        inclusive_mean: i.mean,
        inclusive_min: i.min,
        inclusive_max: i.max,
        inclusive_stddev: i.stddev,
        exclusive_stddev_all: x.stddev_all,
        inclusive_mean_all: i.mean_all,
        inclusive_min_thread: fmt::thread(p, i.min_thread),
        inclusive_max_thread: fmt::thread(p, i.max_thread),
        inclusive_stddev_all: i.stddev_all,
        subcalls_total: s.subcalls.total,
        calls_mean: s.calls.mean,
        exclusive_imbalance: x.imbalance(),
        threads_all: x.threads_all,
        groups: p.event_groups_joined(s.event),
        source_file: fmt::source_file(p, s.event),
        source_line: ev.source().map(|l| l.line),
    }
}

/// Events with data, sorted by exclusive total (largest first, then file order).
fn sorted_stats(p: &Profile, m: MetricId) -> Vec<EventStats> {
    let mut v: Vec<EventStats> = p
        .event_ids()
        .filter(|&e| !p.interval(e).is_empty())
        .map(|e| event_stats(p, e, m))
        .collect();
    v.sort_by(|a, b| larger_first(a.exclusive.total, b.exclusive.total).then(a.event.cmp(&b.event)));
    v
}

/// Runs `perfscape stats`.
pub fn run(args: &StatsArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let loaded = loading::open(&args.common.input)?;
    let p = &loaded.profile;
    match &args.event {
        Some(q) => {
            let e = fmt::event(p, q)?;
            let m = fmt::metric(p, args.metric.as_deref())?;
            one_event(args, p, e, m, out)?;
        }
        None => {
            let metrics: Vec<MetricId> = match &args.metric {
                Some(name) => vec![fmt::metric(p, Some(name))?],
                None => p.metric_ids().collect(),
            };
            all_events(args, p, &metrics, out)?;
        }
    }
    Ok(loading::exit_code(&loaded.report))
}

fn all_events(
    args: &StatsArgs,
    p: &Profile,
    metrics: &[MetricId],
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    match args.common.format {
        OutputFormat::Csv => {
            let mut w = csv::Writer::from_writer(out);
            for &m in metrics {
                for s in sorted_stats(p, m) {
                    w.serialize(stats_row(p, &s))?;
                }
            }
            w.flush()?;
        }
        OutputFormat::Json => {
            let rows: Vec<StatsRow<'_>> = metrics
                .iter()
                .flat_map(|&m| sorted_stats(p, m))
                .map(|s| stats_row(p, &s))
                .collect::<Vec<_>>();
            serde_json::to_writer_pretty(
                &mut *out,
                &serde_json::json!({ "threads": p.threads().len(), "events": rows }),
            )?;
            writeln!(out)?;
        }
        OutputFormat::Table => {
            for &m in metrics {
                let unit = &p.metric(m).unit;
                writeln!(
                    out,
                    "Statistics across {} threads, metric {} ({})",
                    p.threads().len(),
                    p.metric(m).name,
                    unit.symbol()
                )?;
                let mut t = fmt::table(
                    &[
                        "Event",
                        "Threads",
                        "Calls",
                        "Excl total",
                        "Excl mean",
                        "Excl min",
                        "Min thread",
                        "Excl max",
                        "Max thread",
                        "Excl stddev",
                        "Imbalance",
                        "Incl total",
                        "Incl mean",
                    ],
                    1,
                );
                for s in sorted_stats(p, m) {
                    let (x, i) = (&s.exclusive, &s.inclusive);
                    t.add_row(vec![
                        fmt::name(&p.event_name(s.event), args.common.wide),
                        x.threads.to_string(),
                        fmt::count(s.calls.total),
                        fmt::value(x.total, unit),
                        fmt::value(x.mean, unit),
                        fmt::value(x.min, unit),
                        fmt::thread(p, x.min_thread),
                        fmt::value(x.max, unit),
                        fmt::thread(p, x.max_thread),
                        fmt::value(x.stddev, unit),
                        fmt::ratio(x.imbalance()),
                        fmt::value(i.total, unit),
                        fmt::value(i.mean, unit),
                    ]);
                }
                writeln!(out, "{t}\n")?;
            }
            writeln!(
                out,
                "Mean, min, max and stddev are over the threads that have the event (ParaProf's convention); imbalance = max / mean over all threads."
            )?;
            for mm in p.metric_ids() {
                if let Some(note) = fmt::not_additive_note(p, mm) {
                    writeln!(out, "{note}")?;
                }
            }
        }
    }
    Ok(())
}

#[derive(Serialize)]
struct ThreadValue {
    rank: usize,
    thread: String,
    value: f64,
}

fn summary_json(s: &Summary, p: &Profile) -> serde_json::Value {
    serde_json::json!({
        "threads": s.threads, "combine": s.combine, "total": s.total, "mean": s.mean, "mean_all": s.mean_all,
        "min": s.min, "min_thread": fmt::thread(p, s.min_thread),
        "max": s.max, "max_thread": fmt::thread(p, s.max_thread),
        "stddev": s.stddev, "stddev_all": s.stddev_all, "imbalance": s.imbalance(),
    })
}

fn one_event(
    args: &StatsArgs,
    p: &Profile,
    e: EventId,
    m: MetricId,
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let kind: ValueKind = args.kind.into();
    let values = thread_values_sorted(p, e, kind, m);
    let raw: Vec<f64> = values.iter().map(|v| v.1).collect();
    let bins = match args.bins {
        Some(k) => Bins::Count(k),
        None => Bins::Auto,
    };
    let hist = histogram(&raw, &bins).map_err(anyhow::Error::msg)?;
    let ev = p.event(e);
    let unit: Unit = if kind.is_metric_independent() {
        Unit::Count
    } else {
        p.metric(m).unit.clone()
    };
    match args.common.format {
        OutputFormat::Csv => {
            let mut w = csv::Writer::from_writer(out);
            for (i, (t, v)) in values.iter().enumerate() {
                w.serialize(ThreadValue {
                    rank: i + 1,
                    thread: p.thread(*t).to_string(),
                    value: *v,
                })?;
            }
            w.flush()?;
        }
        OutputFormat::Json => {
            let per_metric: Vec<serde_json::Value> = p
                .metric_ids()
                .map(|mm| {
                    let s = event_stats(p, e, mm);
                    serde_json::json!({
                        "metric": p.metric(mm).name, "unit": p.metric(mm).unit.symbol(), "combine": p.metric(mm).combine,
                        "exclusive": summary_json(&s.exclusive, p), "inclusive": summary_json(&s.inclusive, p),
                        "calls": summary_json(&s.calls, p), "subcalls": summary_json(&s.subcalls, p),
                    })
                })
                .collect();
            let doc = serde_json::json!({
                "event": p.event_name(e), "groups": p.event_groups_joined(e), "kind": ev.kind, "source": ev.source(),
                "attributes": p.event_attributes(e).map(|(k, v)| serde_json::json!({"name": k, "value": v})).collect::<Vec<_>>(),
                "statistics": per_metric,
                "values": { "metric": p.metric(m).name, "kind": kind.as_str(),
                    "threads": values.iter().map(|(t, v)| serde_json::json!({"thread": p.thread(*t).to_string(), "value": v})).collect::<Vec<_>>() },
                "histogram": hist,
            });
            serde_json::to_writer_pretty(&mut *out, &doc)?;
            writeln!(out)?;
        }
        OutputFormat::Table => {
            writeln!(out, "Event: {}", p.event_name(e))?;
            writeln!(out, "Groups: {}", p.event_groups_joined(e))?;
            if let Some(src) = ev.source() {
                writeln!(out, "Source: {} line {}", src.file, src.line)?;
            }
            let attributes: Vec<String> = p.event_attributes(e).map(|(k, v)| format!("{k} = {v}")).collect();
            if !attributes.is_empty() {
                writeln!(out, "Attributes: {}", attributes.join(", "))?;
            }
            writeln!(
                out,
                "Threads with the event: {} of {}",
                p.interval(e).len(),
                p.threads().len()
            )?;
            for mm in p.metric_ids() {
                let s = event_stats(p, e, mm);
                let mu = &p.metric(mm).unit;
                writeln!(out, "\nMetric {} ({})", p.metric(mm).name, mu.symbol())?;
                let mut t = fmt::table(
                    &[
                        "",
                        "Total",
                        "Mean",
                        "Mean (all)",
                        "Min",
                        "Min thread",
                        "Max",
                        "Max thread",
                        "Stddev",
                        "Stddev (all)",
                        "Imbalance",
                    ],
                    1,
                );
                for (label, sm, u) in [
                    ("exclusive", &s.exclusive, mu),
                    ("inclusive", &s.inclusive, mu),
                    ("calls", &s.calls, &Unit::Count),
                    ("subcalls", &s.subcalls, &Unit::Count),
                ] {
                    t.add_row(vec![
                        label.to_string(),
                        fmt::value(sm.total, u),
                        fmt::value(sm.mean, u),
                        fmt::value(sm.mean_all, u),
                        fmt::value(sm.min, u),
                        fmt::thread(p, sm.min_thread),
                        fmt::value(sm.max, u),
                        fmt::thread(p, sm.max_thread),
                        fmt::value(sm.stddev, u),
                        fmt::value(sm.stddev_all, u),
                        fmt::ratio(sm.imbalance()),
                    ]);
                }
                writeln!(out, "{t}")?;
            }
            writeln!(
                out,
                "\nHistogram of {} {} across threads:",
                kind.as_str(),
                p.metric(m).name
            )?;
            let peak = hist.counts.iter().copied().max().unwrap_or(0).max(1);
            for (i, c) in hist.counts.iter().enumerate() {
                let bar = "█".repeat(((*c as f64 / peak as f64) * 40.0).round() as usize);
                writeln!(
                    out,
                    "  [{:>12}, {:>12}{} {:>7} {bar}",
                    fmt::value(hist.edges[i], &unit),
                    fmt::value(hist.edges[i + 1], &unit),
                    if i + 1 == hist.counts.len() { "]" } else { ")" },
                    c
                )?;
            }
            writeln!(
                out,
                "\nValue on every thread ({} {}, largest first):",
                kind.as_str(),
                p.metric(m).name
            )?;
            let mut t = fmt::table(&["#", "Thread", "Value"], 2);
            let n = values.len();
            for (i, (th, v)) in values.iter().enumerate() {
                if !args.all_threads && n > 20 && i == 10 {
                    t.add_row(vec!["…".to_string(), format!("{} more", n - 20), String::new()]);
                }
                if args.all_threads || n <= 20 || i < 10 || i >= n - 10 {
                    t.add_row(vec![
                        (i + 1).to_string(),
                        p.thread(*th).to_string(),
                        fmt::value(*v, &unit),
                    ]);
                }
            }
            writeln!(out, "{t}")?;
        }
    }
    Ok(())
}
