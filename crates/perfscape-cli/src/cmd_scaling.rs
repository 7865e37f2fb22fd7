//! `perfscape scaling RUN...`: runs of one program at several process counts; per event its
//! time against the count, speedup, parallel efficiency, share of the run and an Extra-P model.

use crate::args::{EXIT_PARTIAL, LoadOptions, Output, OutputFormat, Study};
use crate::cmd_diff::load;
use crate::fmt;
use clap::Args;
use perfscape_analysis::categories::{Categorized, PopScalingRow, Scaling, categorize, pop_scaling};
use perfscape_analysis::compare::scaling::{ScalingRow, process_count, scaling};
use perfscape_model::{Profile, ValueKind};
use serde::Serialize;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `perfscape scaling`.
#[derive(Args, Debug)]
pub struct ScalingArgs {
    /// The runs (directories or profile files), at two or more process counts; several runs
    /// at one count are repetitions (averaged).
    #[arg(required = true, num_args = 2..)]
    runs: Vec<PathBuf>,
    /// How to read every run.
    #[command(flatten)]
    load: LoadOptions,
    /// The count of each run, in the order of the runs (e.g. `1,2,4,8`; any scaling parameter).
    /// Default: read from the runs (their ranks, or threads when there is one rank).
    #[arg(long, value_delimiter = ',', value_name = "N,N,...")]
    counts: Vec<f64>,
    /// What to study.
    #[command(flatten)]
    study: Study,
    /// POP's computational scalability and global efficiency per run, for a study of the same
    /// problem on every count (`strong`) or of a problem growing with the count (`weak`);
    /// useful work by the default category rules, or those of `--rules`.
    #[arg(long, value_enum, default_value_t = PopScaling::Strong)]
    pop_scaling: PopScaling,
    /// Category rules (TOML) before the built-in ones: which events are useful work.
    #[arg(long, value_name = "FILE")]
    rules: Option<PathBuf>,
    /// How to print.
    #[command(flatten)]
    output: Output,
}

/// `--pop-scaling`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum PopScaling {
    /// The same problem on every count.
    Strong,
    /// The problem grows in proportion to the count.
    Weak,
}

#[derive(Serialize)]
struct Row<'a> {
    rank: usize,
    event: &'a str,
    #[serde(flatten)]
    row: &'a ScalingRow,
    model_formula: Option<String>,
}

/// Runs `perfscape scaling`.
pub fn run(args: &ScalingArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    if !args.counts.is_empty() && args.counts.len() != args.runs.len() {
        anyhow::bail!(
            "--counts gives {} counts for {} runs: give one per run, in order",
            args.counts.len(),
            args.runs.len()
        );
    }
    let mut partial = false;
    let mut profiles: Vec<Profile> = Vec::new();
    for r in &args.runs {
        let o = load(r, &args.load)?;
        partial |= o.report.is_partial();
        profiles.push(o.profile);
    }
    let counts: Vec<f64> = if args.counts.is_empty() {
        profiles.iter().map(|p| process_count(p) as f64).collect()
    } else {
        args.counts.clone()
    };
    let first = &profiles[0];
    let metric = first
        .metric(fmt::metric(first, args.study.metric.as_deref())?)
        .clone();
    let input: Vec<(f64, &Profile)> = counts.iter().copied().zip(profiles.iter()).collect();
    let s = scaling(
        &input,
        &metric.name,
        ValueKind::from(args.study.by),
        args.study.callpaths,
    )?;
    // POP's table across the runs (a metric that does not add up has none).
    let rules = crate::cmd_categories::rules(args.rules.as_ref())?;
    let m = fmt::metric(first, args.study.metric.as_deref())?;
    let cats: Vec<_> = profiles.iter().map(|p| categorize(p, m, &rules).ok()).collect();
    let pop: Vec<PopScalingRow> = if cats.iter().all(Option::is_some) {
        let runs: Vec<(f64, &Categorized)> = counts.iter().copied().zip(cats.iter().flatten()).collect();
        let kind = match args.pop_scaling {
            PopScaling::Strong => Scaling::Strong,
            PopScaling::Weak => Scaling::Weak,
        };
        pop_scaling(&runs, kind)
    } else {
        Vec::new()
    };
    let take = args.study.take(s.rows.len());
    let rows: Vec<Row> = s
        .rows
        .iter()
        .take(take)
        .enumerate()
        .map(|(i, r)| Row {
            rank: i + 1,
            event: &r.name,
            row: r,
            model_formula: r.model.as_ref().map(|m| m.formula("p")),
        })
        .collect();
    let unit = &metric.unit;
    match args.output.format {
        OutputFormat::Json => {
            let doc = serde_json::json!({
                "metric": metric.name,
                "unit": unit.symbol(),
                "kind": s.kind,
                "counts": s.counts,
                "runs_per_count": s.runs_per_count,
                "pop": pop,
                "events": rows,
            });
            serde_json::to_writer_pretty(&mut *out, &doc)?;
            writeln!(out)?;
        }
        OutputFormat::Csv => {
            let mut w = csv::Writer::from_writer(out);
            let mut header = vec!["rank".to_string(), "event".into()];
            for c in &s.counts {
                header.extend([
                    format!("value_p{c}"),
                    format!("speedup_p{c}"),
                    format!("efficiency_p{c}"),
                    format!("share_percent_p{c}"),
                ]);
            }
            header.extend(["share_grows", "model"].map(String::from));
            w.write_record(&header)?;
            let opt = |v: Option<f64>| v.map(|v| v.to_string()).unwrap_or_default();
            for r in &rows {
                let mut rec = vec![r.rank.to_string(), r.event.to_string()];
                for i in 0..s.counts.len() {
                    rec.extend([
                        r.row.values[i].to_string(),
                        opt(r.row.speedup[i]),
                        opt(r.row.efficiency[i]),
                        opt(r.row.share_percent[i]),
                    ]);
                }
                rec.push(r.row.share_grows.to_string());
                rec.push(r.model_formula.clone().unwrap_or_default());
                w.write_record(&rec)?;
            }
            w.flush()?;
        }
        OutputFormat::Table => {
            let (lo, hi) = (s.counts[0], s.counts[s.counts.len() - 1]);
            writeln!(
                out,
                "{} {} per thread against the process count p = {}",
                ValueKind::from(args.study.by).as_str(),
                metric.name,
                s.counts
                    .iter()
                    .map(|c| c.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )?;
            let h = [
                "#".to_string(),
                "Event".into(),
                format!("p={lo}"),
                format!("p={hi}"),
                format!("Speedup {hi}"),
                format!("Efficiency {hi}"),
                "Share of run".into(),
                "Model (Extra-P)".into(),
            ];
            let hr: Vec<&str> = h.iter().map(String::as_str).collect();
            let mut t = fmt::table(&hr, 2);
            let last = s.counts.len() - 1;
            for r in &rows {
                let share = match (r.row.share_percent[0], r.row.share_percent[last]) {
                    (Some(a), Some(b)) => format!(
                        "{} → {}{}",
                        fmt::percent(a),
                        fmt::percent(b),
                        if r.row.share_grows { " ▲" } else { "" }
                    ),
                    _ => "–".into(),
                };
                t.add_row(vec![
                    r.rank.to_string(),
                    fmt::name(r.event, args.output.wide),
                    fmt::value(r.row.values[0], unit),
                    fmt::value(r.row.values[last], unit),
                    r.row.speedup[last].map_or_else(|| "–".into(), fmt::ratio),
                    r.row.efficiency[last].map_or_else(|| "–".into(), |e| fmt::percent(100.0 * e)),
                    share,
                    r.model_formula.clone().unwrap_or_else(|| "–".into()),
                ]);
            }
            writeln!(out, "{t}")?;
            if !pop.is_empty() {
                let mut t = fmt::table(
                    &[
                        "p",
                        "Parallel eff.",
                        "Load balance",
                        "Comm. eff.",
                        "Comp. scalability",
                        "Global eff.",
                    ],
                    1,
                );
                let opt = |v: Option<f64>| v.map_or_else(|| "–".into(), |x| format!("{x:.3}"));
                for r in &pop {
                    t.add_row(vec![
                        r.count.to_string(),
                        format!("{:.3}", r.parallel_efficiency),
                        format!("{:.3}", r.load_balance),
                        format!("{:.3}", r.communication_efficiency),
                        opt(r.computational_scalability),
                        opt(r.global_efficiency),
                    ]);
                }
                writeln!(
                    out,
                    "POP efficiencies ({} scaling; useful work by the category rules, see perfscape categories):\n{t}",
                    if args.pop_scaling == PopScaling::Strong {
                        "strong"
                    } else {
                        "weak"
                    }
                )?;
            }
            writeln!(
                out,
                "Speedup = value at p={lo} / value at p; efficiency = speedup × {lo} / p; ▲ = the share of the run grows with scale (≥ 1.25x and ≥ 1 point).\n\
Model: Extra-P's performance-model normal form fitted to the per-thread values in {} (p = the count; at least 5 counts).",
                unit.symbol()
            )?;
        }
    }
    Ok(if partial {
        ExitCode::from(EXIT_PARTIAL)
    } else {
        ExitCode::SUCCESS
    })
}
