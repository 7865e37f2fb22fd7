//! `perfscape findings`: what is wrong with a run, ranked by the time it costs
//! (`perfscape_analysis::findings`): stragglers, load imbalance of useful work,
//! communication-bound threads, the POP efficiencies, hot spots, and for a trace its wait
//! states (late sender, late receiver, wait at N x N). What counts as useful work comes
//! from the categories (`--rules`, else the built-in rules).

use crate::args::{Common, OutputFormat};
use crate::{fmt, loading};
use clap::Args;
use perfscape_analysis::categories::categorize;
use perfscape_analysis::findings::{FindingOptions, add_wait_states, findings};
use perfscape_model::MetricId;
use serde::Serialize;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `perfscape findings`.
#[derive(Args, Debug)]
pub struct FindingsArgs {
    #[command(flatten)]
    common: Common,
    /// Metric to look at (default: the first, TIME when present).
    #[arg(long, short = 'm')]
    metric: Option<String>,
    /// Category rules (TOML) before the built-in ones: which events are useful work.
    #[arg(long, value_name = "FILE")]
    rules: Option<PathBuf>,
    /// A straggler's value is at least this many times its event's median.
    #[arg(long, default_value_t = FindingOptions::default().straggler_ratio, value_name = "X")]
    straggler_ratio: f64,
    /// At most this share of the threads may be that far off in one event (else they are a
    /// class of threads, not stragglers; at least one thread always may).
    #[arg(long, default_value_t = FindingOptions::default().straggler_max_share, value_name = "SHARE")]
    straggler_max_share: f64,
    /// Smallest cost of a straggler or an imbalance, as a share of the median thread total.
    #[arg(long, default_value_t = FindingOptions::default().straggler_min_cost, value_name = "SHARE")]
    min_cost: f64,
    /// Smallest load imbalance reported, max / mean − 1.
    #[arg(long, default_value_t = FindingOptions::default().imbalance_min, value_name = "X")]
    imbalance_min: f64,
    /// A communication-bound thread's share of time outside useful work exceeds the median
    /// thread's by at least this.
    #[arg(long, default_value_t = FindingOptions::default().idle_share_gap, value_name = "SHARE")]
    idle_gap: f64,
    /// POP efficiencies under this are reported.
    #[arg(long, default_value_t = FindingOptions::default().efficiency_min, value_name = "X")]
    efficiency_min: f64,
    /// Hot spots take at least this share of all thread time.
    #[arg(long, default_value_t = FindingOptions::default().hot_spot_share, value_name = "SHARE")]
    hot_spot_share: f64,
    /// At most this many findings of each kind.
    #[arg(short = 'n', long = "number", default_value_t = FindingOptions::default().max_per_kind)]
    n: usize,
}

impl FindingsArgs {
    fn options(&self) -> FindingOptions {
        FindingOptions {
            straggler_ratio: self.straggler_ratio,
            straggler_max_share: self.straggler_max_share,
            straggler_min_cost: self.min_cost,
            imbalance_min: self.imbalance_min,
            imbalance_min_cost: self.min_cost,
            idle_share_gap: self.idle_gap,
            efficiency_min: self.efficiency_min,
            hot_spot_share: self.hot_spot_share,
            max_per_kind: self.n,
        }
    }
}

#[derive(Serialize)]
struct Row {
    kind: &'static str,
    title: String,
    cost: f64,
    cost_percent: f64,
    event: Option<String>,
    thread: Option<String>,
    evidence: String,
}

/// Runs `perfscape findings`.
pub fn run(args: &FindingsArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let run = loading::open_run(&args.common.input, true)?;
    let loaded = run.loaded;
    let p = &loaded.profile;
    let m: MetricId = fmt::metric(p, args.metric.as_deref())?;
    let rules = crate::cmd_categories::rules(args.rules.as_ref())?;
    // A metric that does not add up has no categories: its findings are the stragglers.
    let cat = categorize(p, m, &rules).ok();
    let mut f = findings(p, m, cat.as_ref(), &args.options());
    // A trace's wait states (late sender, late receiver, wait at N x N).
    if let Some(trace) = &run.trace {
        add_wait_states(&mut f, p, m, trace, &args.options());
    }
    let rows: Vec<Row> = f
        .findings
        .iter()
        .map(|x| Row {
            kind: x.kind.as_str(),
            title: x.title.clone(),
            cost: x.cost,
            cost_percent: x.cost_percent,
            event: x.event.map(|e| p.event_name(e)),
            thread: x.thread.map(|t| p.thread(t).to_string()),
            evidence: x.evidence.join("; "),
        })
        .collect();
    let unit = &p.metric(m).unit;
    match args.common.format {
        OutputFormat::Csv => fmt::write_csv(out, &rows)?,
        OutputFormat::Json => {
            let doc = serde_json::json!({
                "metric": p.metric(m).name,
                "unit": unit.symbol(),
                "median_thread_total": f.median_thread_total,
                "pop": f.pop,
                "findings": rows,
            });
            serde_json::to_writer_pretty(&mut *out, &doc)?;
            writeln!(out)?;
        }
        OutputFormat::Table => {
            writeln!(
                out,
                "Findings in {} ({} threads; percents of the median thread total, {})",
                p.metric(m).name,
                p.threads().len(),
                fmt::value(f.median_thread_total, unit)
            )?;
            if let Some(pop) = &f.pop {
                writeln!(
                    out,
                    "POP: parallel efficiency {:.3} = load balance {:.3} x communication efficiency {:.3} (useful work: {})",
                    pop.parallel_efficiency,
                    pop.load_balance,
                    pop.communication_efficiency,
                    pop.useful_categories.join(", ")
                )?;
            }
            if rows.is_empty() {
                writeln!(out, "Nothing found above the thresholds.")?;
            }
            let mut t = fmt::table(&["#", "Kind", "Finding", "Cost", "%"], 3);
            for (i, r) in rows.iter().enumerate() {
                let mut text = r.title.clone();
                if args.common.wide {
                    for e in &f.findings[i].evidence {
                        text.push_str("\n  ");
                        text.push_str(e);
                    }
                }
                t.add_row(vec![
                    (i + 1).to_string(),
                    r.kind.replace('_', " "),
                    text,
                    fmt::value(r.cost, unit),
                    fmt::percent(r.cost_percent),
                ]);
            }
            if !rows.is_empty() {
                writeln!(out, "{t}")?;
            }
            writeln!(out, "Thresholds and evidence: perfscape findings --help, --wide.")?;
        }
    }
    Ok(loading::exit_code(&loaded.report))
}
