//! `perfscape categories`: what the time is spent on (the time of every category of the rule
//! set per run, process or thread) and POP's efficiency metrics.

use crate::args::{Common, OutputFormat};
use crate::{fmt, loading};
use anyhow::Context;
use clap::{Args, ValueEnum};
use perfscape_analysis::categories::{Categorized, RuleSet, categorize};
use perfscape_model::ThreadIndex;
use serde::Serialize;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// What one row of the category table is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum By {
    /// The whole run: one row per category.
    Run,
    /// One row per process (node).
    Process,
    /// One row per thread.
    Thread,
}

/// Arguments of `perfscape categories`.
#[derive(Args, Debug)]
pub struct CategoriesArgs {
    #[command(flatten)]
    common: Common,
    /// A category rule file (TOML, `[[category]]` and `[[rule]]` tables) whose rules come
    /// before the defaults (first match wins).
    #[arg(long)]
    rules: Option<PathBuf>,
    /// Table of the whole run, of each process or of each thread.
    #[arg(long, value_enum, default_value_t = By::Run)]
    by: By,
    /// Metric to split (default: the first metric measured in time).
    #[arg(long, short = 'm')]
    metric: Option<String>,
}

/// One cell of the table (CSV: one line).
#[derive(Serialize)]
struct Cell {
    /// `run`, the node, or the thread address.
    of: String,
    category: String,
    class: &'static str,
    useful: bool,
    /// In the metric's unit.
    value: f64,
    /// Of the categorized time of `of`.
    percent: f64,
}

/// The rule set of `--rules` (after the defaults' categories, before their rules).
pub fn rules(path: Option<&PathBuf>) -> anyhow::Result<RuleSet> {
    match path {
        None => Ok(RuleSet::defaults()),
        Some(path) => {
            let text =
                std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
            Ok(RuleSet::with_user_rules(&text, &path.display().to_string())?)
        }
    }
}

fn units(c: &Categorized, p: &perfscape_model::Profile, by: By) -> Vec<(String, Vec<f64>)> {
    match by {
        By::Run => vec![("run".into(), c.run())],
        By::Process => c
            .by_process(p)
            .into_iter()
            .map(|(n, v)| (n.to_string(), v))
            .collect(),
        By::Thread => (0..c.threads())
            .map(|i| {
                let t = ThreadIndex::from(i);
                (p.thread(t).to_string(), c.thread(t).to_vec())
            })
            .collect(),
    }
}

/// Runs `perfscape categories`.
pub fn run(args: &CategoriesArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let rules = rules(args.rules.as_ref())?;
    let loaded = loading::open(&args.common.input)?;
    let p = &loaded.profile;
    let m = fmt::metric(p, args.metric.as_deref())?;
    let c = categorize(p, m, &rules)?;
    let pop = c.pop();
    let units = units(&c, p, args.by);
    let percent = |v: f64, total: f64| if total > 0.0 { 100.0 * v / total } else { 0.0 };
    let cells: Vec<Cell> = units
        .iter()
        .flat_map(|(of, times)| {
            let total: f64 = times.iter().sum();
            c.categories.iter().zip(times).map(move |(d, &v)| Cell {
                of: of.clone(),
                category: d.name.clone(),
                class: d.class.as_str(),
                useful: d.class.is_useful(),
                value: v,
                percent: percent(v, total),
            })
        })
        .collect();
    let unit = &p.metric(m).unit;
    match args.common.format {
        OutputFormat::Csv => fmt::write_csv(out, &cells)?,
        OutputFormat::Json => {
            let categories: Vec<_> = c
                .categories
                .iter()
                .map(|d| serde_json::json!({"name": d.name, "class": d.class, "useful": d.class.is_useful()}))
                .collect();
            let rows: Vec<_> = units
                .iter()
                .map(|(of, times)| serde_json::json!({"of": of, "values": times, "total": times.iter().sum::<f64>()}))
                .collect();
            let doc = serde_json::json!({
                "metric": p.metric(m).name,
                "unit": unit.symbol(),
                "by": args.by,
                "categories": categories,
                "rows": rows,
                "pop": pop,
            });
            serde_json::to_writer_pretty(&mut *out, &doc)?;
            writeln!(out)?;
        }
        OutputFormat::Table => {
            writeln!(
                out,
                "Time per category of {} ({} threads)",
                p.metric(m).name,
                p.threads().len()
            )?;
            if args.by == By::Run {
                let mut t = fmt::table(&["Category", "Class", "Useful", "Time", "%"], 3);
                for cell in &cells {
                    t.add_row(vec![
                        cell.category.clone(),
                        cell.class.to_string(),
                        if cell.useful { "yes" } else { "no" }.to_string(),
                        fmt::value(cell.value, unit),
                        fmt::percent(cell.percent),
                    ]);
                }
                writeln!(out, "{t}")?;
            } else {
                let mut header = vec![
                    if args.by == By::Process {
                        "Process"
                    } else {
                        "Thread"
                    },
                    "Total",
                ];
                header.extend(c.categories.iter().map(|d| d.name.as_str()));
                let mut t = fmt::table(&header, 1);
                for (of, times) in &units {
                    let total: f64 = times.iter().sum();
                    let mut row = vec![of.clone(), fmt::value(total, unit)];
                    row.extend(
                        times.iter().map(|&v| {
                            format!("{} ({})", fmt::value(v, unit), fmt::percent(percent(v, total)))
                        }),
                    );
                    t.add_row(row);
                }
                writeln!(out, "{t}")?;
            }
            writeln!(
                out,
                "% = share of the time of the row's categories (exclusive time of its flat events)."
            )?;
            writeln!(out)?;
            writeln!(
                out,
                "POP efficiency metrics (POP Centre of Excellence, https://pop-coe.eu/node/69):"
            )?;
            let mut t = fmt::table(&["Metric", "Value", "Definition"], 1);
            t.add_row(vec![
                "Parallel efficiency".into(),
                fmt::percent(100.0 * pop.parallel_efficiency),
                "load balance × communication efficiency".into(),
            ]);
            t.add_row(vec![
                "Load balance".into(),
                fmt::percent(100.0 * pop.load_balance),
                "mean(useful) / max(useful)".into(),
            ]);
            t.add_row(vec![
                "Communication efficiency".into(),
                fmt::percent(100.0 * pop.communication_efficiency),
                "max(useful) / runtime".into(),
            ]);
            writeln!(out, "{t}")?;
            writeln!(
                out,
                "useful: mean {}, max {}; runtime (largest thread total) {}",
                fmt::value(pop.mean_useful, unit),
                fmt::value(pop.max_useful, unit),
                fmt::value(pop.runtime, unit)
            )?;
            writeln!(out, "Counted as useful: {}", pop.useful_categories.join(", "))?;
            writeln!(out, "Not useful: {}", pop.not_useful_categories.join(", "))?;
        }
    }
    Ok(loading::exit_code(&loaded.report))
}
