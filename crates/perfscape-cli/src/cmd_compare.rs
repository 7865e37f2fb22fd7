//! `perfscape compare --group before RUN... --group after RUN...`: repeated runs in groups,
//! per event the mean, standard deviation, minimum and maximum over each group's runs and
//! Welch's t-test of the difference.

use crate::args::{EXIT_PARTIAL, LoadOptions, NormalizeArg, Output, OutputFormat, Study};
use crate::cmd_diff::load;
use crate::fmt;
use clap::{ArgAction, ArgMatches, Args};
use perfscape_analysis::compare::diff::Normalize;
use perfscape_analysis::compare::groups::{GroupRow, compare_groups};
use perfscape_model::{Profile, ValueKind};
use serde::Serialize;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `perfscape compare`.
#[derive(Args, Debug)]
pub struct CompareArgs {
    /// A group of repeated runs: its name, then its runs (directories or profile files).
    /// Give two groups (`--group before A1 A2 A3 --group after B1 B2 B3`); the test compares
    /// the last group with the first.
    /// (clap's derive keeps the values of all occurrences in one list; [`groups`] reads them
    /// per occurrence from the matches.)
    #[arg(long = "group", id = GROUP_ID, num_args = 2.., value_names = ["NAME", "RUN"], action = ArgAction::Append, required = true)]
    group_values: Vec<String>,
    /// How to read every run.
    #[command(flatten)]
    load: LoadOptions,
    /// What to compare.
    #[command(flatten)]
    study: Study,
    /// `total` over each run's threads or `per-thread`. Default: per-thread when the runs
    /// have different thread counts, else total.
    #[arg(long, value_enum)]
    normalize: Option<NormalizeArg>,
    /// Significance level of the test: differences with p below it are marked `*`.
    #[arg(long, default_value_t = 0.05)]
    alpha: f64,
    /// How to print.
    #[command(flatten)]
    output: Output,
}

#[derive(Serialize)]
struct Row<'a> {
    rank: usize,
    event: &'a str,
    groups: Vec<GroupOut<'a>>,
    delta: f64,
    percent: Option<f64>,
    t: Option<f64>,
    df: Option<f64>,
    p_value: Option<f64>,
    significant: bool,
}

#[derive(Serialize)]
struct GroupOut<'a> {
    group: &'a str,
    runs: usize,
    runs_with_event: usize,
    mean: f64,
    stddev: f64,
    min: f64,
    max: f64,
}

const GROUP_ID: &str = "group";

/// The `--group NAME RUN...` occurrences of `perfscape compare` in the parsed command line
/// `matches` (of the whole program): one list per occurrence, its name first.
pub fn groups(matches: &ArgMatches) -> Vec<Vec<String>> {
    matches
        .subcommand_matches("compare")
        .and_then(|m| m.get_occurrences::<String>(GROUP_ID))
        .map(|occ| occ.map(|o| o.cloned().collect()).collect())
        .unwrap_or_default()
}

/// Runs `perfscape compare` on the `groups` of [`groups`].
pub fn run(args: &CompareArgs, groups: &[Vec<String>], out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    debug_assert_eq!(
        groups.iter().map(Vec::len).sum::<usize>(),
        args.group_values.len()
    );
    if groups.len() < 2 {
        anyhow::bail!("give two groups: --group before RUN... --group after RUN...");
    }
    let mut partial = false;
    let mut loaded: Vec<Vec<Profile>> = Vec::new();
    for g in groups {
        let mut runs = Vec::new();
        for r in &g[1..] {
            let o = load(&PathBuf::from(r), &args.load)?;
            partial |= o.report.is_partial();
            runs.push(o.profile);
        }
        loaded.push(runs);
    }
    let first = &loaded[0][0];
    let metric = first
        .metric(fmt::metric(first, args.study.metric.as_deref())?)
        .clone();
    let threads: Vec<usize> = loaded.iter().flatten().map(|p| p.threads().len()).collect();
    let normalize = args.normalize.map_or_else(
        || {
            if threads.iter().all(|&t| t == threads[0]) {
                Normalize::Total
            } else {
                Normalize::PerThread
            }
        },
        Normalize::from,
    );
    let refs: Vec<Vec<&Profile>> = loaded.iter().map(|g| g.iter().collect()).collect();
    let cmp = compare_groups(
        &refs,
        &metric.name,
        ValueKind::from(args.study.by),
        normalize,
        args.study.callpaths,
    )?;
    let take = args.study.take(cmp.rows.len());
    let names: Vec<&str> = groups.iter().map(|g| g[0].as_str()).collect();
    let rows: Vec<Row> = cmp
        .rows
        .iter()
        .take(take)
        .enumerate()
        .map(|(i, r)| out_row(i, r, &names, args.alpha))
        .collect();
    match args.output.format {
        OutputFormat::Csv => {
            let mut w = csv::Writer::from_writer(out);
            let mut header = vec!["rank".to_string(), "event".into()];
            for n in &names {
                for c in ["runs", "runs_with_event", "mean", "stddev", "min", "max"] {
                    header.push(format!("{n}_{c}"));
                }
            }
            header.extend(["delta", "percent", "t", "df", "p_value", "significant"].map(String::from));
            w.write_record(&header)?;
            let opt = |v: Option<f64>| v.map(|v| v.to_string()).unwrap_or_default();
            for r in &rows {
                let mut rec = vec![r.rank.to_string(), r.event.to_string()];
                for g in &r.groups {
                    rec.extend([g.runs.to_string(), g.runs_with_event.to_string()]);
                    rec.extend([g.mean, g.stddev, g.min, g.max].map(|v| v.to_string()));
                }
                rec.extend([
                    r.delta.to_string(),
                    opt(r.percent),
                    opt(r.t),
                    opt(r.df),
                    opt(r.p_value),
                ]);
                rec.push(r.significant.to_string());
                w.write_record(&rec)?;
            }
            w.flush()?;
        }
        OutputFormat::Json => {
            let doc = serde_json::json!({
                "metric": metric.name,
                "unit": metric.unit.symbol(),
                "kind": cmp.kind,
                "normalize": cmp.normalize,
                "alpha": args.alpha,
                "groups": groups.iter().map(|g| serde_json::json!({"name": g[0], "runs": &g[1..]})).collect::<Vec<_>>(),
                "events": rows,
            });
            serde_json::to_writer_pretty(&mut *out, &doc)?;
            writeln!(out)?;
        }
        OutputFormat::Table => table(args, groups, out, &rows, &metric, normalize)?,
    }
    Ok(if partial {
        ExitCode::from(EXIT_PARTIAL)
    } else {
        ExitCode::SUCCESS
    })
}

fn out_row<'a>(i: usize, r: &'a GroupRow, names: &[&'a str], alpha: f64) -> Row<'a> {
    let base = r.stats[0].mean;
    Row {
        rank: i + 1,
        event: &r.name,
        groups: r
            .stats
            .iter()
            .zip(names)
            .map(|(s, &group)| GroupOut {
                group,
                runs: s.runs,
                runs_with_event: s.runs_with_event,
                mean: s.mean,
                stddev: s.stddev,
                min: s.min,
                max: s.max,
            })
            .collect(),
        delta: r.delta,
        percent: (base != 0.0).then(|| 100.0 * r.delta / base),
        t: r.test.map(|t| t.t),
        df: r.test.map(|t| t.df),
        p_value: r.test.map(|t| t.p_value),
        significant: r.test.is_some_and(|t| t.p_value < alpha),
    }
}

fn table(
    args: &CompareArgs,
    groups: &[Vec<String>],
    out: &mut dyn Write,
    rows: &[Row],
    metric: &perfscape_model::Metric,
    normalize: Normalize,
) -> anyhow::Result<()> {
    let unit = &metric.unit;
    let per = match normalize {
        Normalize::Total => "total over threads",
        Normalize::PerThread => "per thread",
    };
    let sizes: Vec<String> = groups
        .iter()
        .map(|g| format!("{} ({} runs)", g[0], g.len() - 1))
        .collect();
    writeln!(
        out,
        "{} {}, {per}, {}",
        ValueKind::from(args.study.by).as_str(),
        metric.name,
        sizes.join(" vs ")
    )?;
    let mut header = vec!["#".to_string(), "Event".to_string()];
    for g in groups {
        header.push(format!("{} mean ± sd", g[0]));
    }
    header.extend(["Δ mean", "Δ %", "p"].map(String::from));
    let header_refs: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut t = fmt::table(&header_refs, 2);
    for r in rows {
        let mut cells = vec![r.rank.to_string(), fmt::name(r.event, args.output.wide)];
        for g in &r.groups {
            cells.push(format!(
                "{} ± {}",
                fmt::value(g.mean, unit),
                fmt::value(g.stddev, unit)
            ));
        }
        cells.push(fmt::signed(r.delta, unit));
        cells.push(r.percent.map_or_else(|| "–".into(), |p| format!("{p:+.1}%")));
        cells.push(match r.p_value {
            Some(p) if p.is_nan() => "–".into(),
            Some(p) => format!("{}{}", pvalue(p), if r.significant { " *" } else { "" }),
            None => "–".into(),
        });
        t.add_row(cells);
    }
    writeln!(out, "{t}")?;
    writeln!(
        out,
        "p = Welch's t-test of the last group against the first (two-sided; * below {}; – with fewer than 2 runs in a group or no variance).",
        args.alpha
    )?;
    Ok(())
}

fn pvalue(p: f64) -> String {
    if p < 1e-4 {
        format!("{p:.1e}")
    } else {
        format!("{p:.4}")
    }
}
