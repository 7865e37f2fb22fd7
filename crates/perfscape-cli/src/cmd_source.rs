//! `perfscape source`: a source file's lines with the run's values beside them, as
//! `pprof -list` prints them, and the source roots every command that reads source files
//! takes (`--source-dir`, `--source-map`; `serve` too).

use crate::args::{Common, OutputFormat};
use crate::{fmt, loading};
use anyhow::bail;
use clap::Args;
use perfscape_analysis::lines::{LineTable, TableFile, line_summary, line_values};
use perfscape_analysis::params::Values;
use perfscape_model::{Profile, ValueKind};
use perfscape_server::sources::SourceRoots;
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Where source files are read from (only there).
#[derive(Args, Debug, Clone, Default)]
pub struct SourceDirs {
    /// A directory holding the program's source files (repeatable). Files the run names are
    /// looked up by their path, then by path suffix (`/home/u/prog/src/x.c` as `DIR/src/x.c`,
    /// then `DIR/x.c`); nothing outside these directories is read (no `..`, no symbolic link
    /// leading out, no binary or over-long file).
    #[arg(long = "source-dir", value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    /// Read the files the run names under FROM from the directory TO instead (a run measured
    /// on another machine; repeatable); TO is a source directory too.
    #[arg(long = "source-map", value_name = "FROM=TO")]
    pub maps: Vec<String>,
}

/// The executable the run measured, for the assembler of the source panel (`serve`).
#[derive(Args, Debug, Clone, Default)]
pub struct BinaryArg {
    /// The executable the run measured (x86-64 ELF built with -g): the source panel shows the
    /// instructions of the selected line (`GET /api/disasm`).
    #[arg(long, value_name = "PATH")]
    pub binary: Option<PathBuf>,
}

impl SourceDirs {
    /// The roots, checked.
    ///
    /// # Errors
    /// A directory that does not exist, a map without `=`.
    pub fn roots(&self) -> anyhow::Result<SourceRoots> {
        SourceRoots::new(&self.dirs, &self.maps).map_err(anyhow::Error::msg)
    }
}

/// The value kind on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Kind {
    /// Exclusive values (a sample's own time).
    Exclusive,
    /// Inclusive values.
    Inclusive,
    /// Number of calls (samples).
    Calls,
}

/// Arguments of `perfscape source`.
#[derive(Args, Debug)]
pub struct SourceArgs {
    #[command(flatten)]
    common: Common,
    /// The file as the run names it, or the end of that name (`omp_matmul.c`), optionally
    /// with a line range (`omp_matmul.c:8-14`).
    #[arg(value_name = "FILE[:FIRST-LAST]")]
    file: String,
    #[command(flatten)]
    sources: SourceDirs,
    /// Metric (default: the first measured in time).
    #[arg(long, short = 'm')]
    metric: Option<String>,
    /// Value kind of the per-line values.
    #[arg(long, value_enum, default_value_t = Kind::Exclusive)]
    kind: Kind,
    /// Print only the lines with values (and the file's text around none).
    #[arg(long)]
    hot: bool,
}

/// One line of the listing (CSV and JSON: values in the metric's unit).
#[derive(Serialize)]
struct LineRow {
    line: u32,
    text: Option<String>,
    threads: usize,
    sum: Option<f64>,
    mean: Option<f64>,
    mean_all: Option<f64>,
    min: Option<f64>,
    min_thread: Option<String>,
    max: Option<f64>,
    max_thread: Option<String>,
    stddev: Option<f64>,
    events: String,
    /// Per thread `N.C.T` → value (JSON only).
    #[serde(skip_serializing_if = "Option::is_none")]
    values: Option<BTreeMap<String, f64>>,
}

/// Splits `FILE[:FIRST-LAST]`.
fn parse_spec(spec: &str) -> anyhow::Result<(&str, Option<(u32, u32)>)> {
    if let Some((file, range)) = spec.rsplit_once(':')
        && let Some((a, b)) = range.split_once('-')
        && let (Ok(a), Ok(b)) = (a.trim().parse::<u32>(), b.trim().parse::<u32>())
    {
        if a == 0 || b < a {
            bail!("line range {range}: expected FIRST-LAST with 1 <= FIRST <= LAST");
        }
        return Ok((file, Some((a, b))));
    }
    Ok((spec, None))
}

/// The file of `table` named `name` or ending in it (whole path components).
fn find_file<'t>(table: &'t LineTable, name: &str) -> anyhow::Result<&'t TableFile> {
    if let Some(f) = table.file(name) {
        return Ok(f);
    }
    let hits: Vec<&TableFile> = table
        .files
        .iter()
        .filter(|f| std::path::Path::new(&f.name).ends_with(name))
        .collect();
    match hits.as_slice() {
        [f] => Ok(f),
        [] => bail!(
            "the run names no source file `{name}`; it names: {}",
            if table.files.is_empty() {
                "none (no [SAMPLE] events or timers with a source location)".to_string()
            } else {
                table
                    .files
                    .iter()
                    .map(|f| f.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        ),
        many => bail!(
            "`{name}` names several files of the run: {}",
            many.iter()
                .map(|f| f.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn rows(
    p: &Profile,
    f: &TableFile,
    values: Values,
    text: Option<&str>,
    range: Option<(u32, u32)>,
    hot: bool,
    per_thread: bool,
) -> Vec<LineRow> {
    let text_lines: Vec<&str> = text.map(|t| t.lines().collect()).unwrap_or_default();
    let last = if text.is_some() {
        text_lines.len() as u32
    } else {
        f.last_line()
    };
    let (first, last) = range.map_or((1, last), |(a, b)| (a, b.min(last.max(b))));
    let mut out = Vec::new();
    for line in first..=last {
        let t = text_lines.get(line as usize - 1).map(|s| s.to_string());
        let Some(l) = f.line(line) else {
            if !hot && (t.is_some() || text.is_none() && range.is_some()) {
                out.push(LineRow {
                    line,
                    text: t,
                    threads: 0,
                    sum: None,
                    mean: None,
                    mean_all: None,
                    min: None,
                    min_thread: None,
                    max: None,
                    max_thread: None,
                    stddev: None,
                    events: String::new(),
                    values: None,
                });
            }
            continue;
        };
        let lv = line_values(p, &l.events, values);
        let s = line_summary(p, &lv, values);
        let has = s.threads > 0;
        out.push(LineRow {
            line,
            text: t,
            threads: s.threads,
            sum: has.then_some(s.total),
            mean: has.then_some(s.mean),
            mean_all: has.then_some(s.mean_all),
            min: has.then_some(s.min),
            min_thread: s.min_thread.map(|t| p.thread(t).to_string()),
            max: has.then_some(s.max),
            max_thread: s.max_thread.map(|t| p.thread(t).to_string()),
            stddev: has.then_some(s.stddev),
            events: l
                .events
                .iter()
                .map(|e| p.event_name(*e))
                .collect::<Vec<_>>()
                .join("; "),
            values: per_thread.then(|| {
                lv.threads
                    .iter()
                    .zip(&lv.values)
                    .map(|(t, v)| (p.thread(*t).to_string(), *v))
                    .collect()
            }),
        });
    }
    out
}

/// Runs `perfscape source`.
pub fn run(args: &SourceArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let roots = args.sources.roots()?;
    let (name, range) = parse_spec(&args.file)?;
    let loaded = loading::open(&args.common.input)?;
    let p = &loaded.profile;
    let m = fmt::metric(p, args.metric.as_deref())?;
    let kind = match args.kind {
        Kind::Exclusive => ValueKind::Exclusive,
        Kind::Inclusive => ValueKind::Inclusive,
        Kind::Calls => ValueKind::Calls,
    };
    let values = Values { metric: m, kind };
    let table = LineTable::new(p);
    let f = find_file(&table, name)?;
    let read = roots.read(&f.name);
    let (text, note) = match &read {
        Ok(s) => (Some(s.text.as_str()), None),
        Err(e) => (None, Some(e.to_string())),
    };
    let rows = rows(
        p,
        f,
        values,
        text,
        range,
        args.hot,
        args.common.format == OutputFormat::Json,
    );
    let unit = if kind.is_metric_independent() {
        perfscape_model::Unit::Count
    } else {
        p.metric(m).unit.clone()
    };
    match args.common.format {
        OutputFormat::Csv => fmt::write_csv(out, &rows)?,
        OutputFormat::Json => {
            let doc = serde_json::json!({
                "file": f.name,
                "path": read.as_ref().ok().map(|s| s.path.display().to_string()),
                "note": note,
                "metric": p.metric(m).name,
                "kind": kind.as_str(),
                "unit": unit.symbol(),
                "threads": p.threads().len(),
                "routines": f.routines.iter().map(|r| serde_json::json!({"name": r.name, "start": r.start, "end": r.end})).collect::<Vec<_>>(),
                "lines": rows,
            });
            serde_json::to_writer_pretty(&mut *out, &doc)?;
            writeln!(out)?;
        }
        OutputFormat::Table => {
            writeln!(out, "File: {}", f.name)?;
            match (&read, &note) {
                (Ok(s), _) => writeln!(out, "Read from: {}", s.path.display())?,
                (_, Some(n)) => writeln!(out, "Source not shown: {n}")?,
                _ => {}
            }
            writeln!(
                out,
                "{} {} per line across {} threads (sum, mean over the threads with the line, min and max with their threads, standard deviation)",
                kind.as_str(),
                p.metric(m).name,
                p.threads().len()
            )?;
            let v = |x: Option<f64>| x.map_or_else(|| ".".to_string(), |x| fmt::value(x, &unit));
            let th = |x: &Option<String>| x.clone().unwrap_or_default();
            writeln!(
                out,
                "{:>11} {:>11} {:>20} {:>20} {:>11} {:>6}  source",
                "sum", "mean", "min (thread)", "max (thread)", "stddev", "line"
            )?;
            for r in &rows {
                let min = r.min.map_or_else(
                    || ".".into(),
                    |x| format!("{} {}", fmt::value(x, &unit), th(&r.min_thread)),
                );
                let max = r.max.map_or_else(
                    || ".".into(),
                    |x| format!("{} {}", fmt::value(x, &unit), th(&r.max_thread)),
                );
                writeln!(
                    out,
                    "{:>11} {:>11} {:>20} {:>20} {:>11} {:>6}  {}",
                    v(r.sum),
                    v(r.mean),
                    min,
                    max,
                    v(r.stddev),
                    r.line,
                    r.text.as_deref().unwrap_or("")
                )?;
            }
            for r in &f.routines {
                writeln!(out, "routine {} lines {}-{}", r.name, r.start, r.end)?;
            }
        }
    }
    Ok(loading::exit_code(&loaded.report))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn file_specs_split_their_range() {
        assert_eq!(parse_spec("a.c").unwrap(), ("a.c", None));
        assert_eq!(parse_spec("a.c:3-9").unwrap(), ("a.c", Some((3, 9))));
        assert_eq!(parse_spec("C:/x/a.c").unwrap(), ("C:/x/a.c", None));
        assert!(parse_spec("a.c:9-3").is_err());
        assert!(parse_spec("a.c:0-3").is_err());
    }
}
