//! `perfscape disasm`: the instructions an executable's DWARF line table attributes to a line
//! range of a source file, each with its line and that line's total in the run (the run has
//! per-line values, not per-instruction ones).

use crate::args::{Common, OutputFormat};
use crate::{fmt, loading};
use anyhow::{Context, bail};
use clap::Args;
use perfscape_analysis::disasm::disassemble_lines;
use perfscape_analysis::lines::{LineTable, line_summary, line_values};
use perfscape_analysis::params::Values;
use perfscape_model::ValueKind;
use serde::Serialize;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Largest executable read (bytes): 1 GiB.
const MAX_BINARY_BYTES: u64 = 1 << 30;

/// Arguments of `perfscape disasm`.
#[derive(Args, Debug)]
pub struct DisasmArgs {
    #[command(flatten)]
    common: Common,
    /// The executable the run measured (x86-64 ELF, built with -g).
    #[arg(long, value_name = "PATH")]
    binary: PathBuf,
    /// The source file (its name as the run gives it, or its end) and the line range.
    #[arg(value_name = "FILE:FIRST-LAST")]
    lines: String,
    /// Metric of the per-line totals (default: the first measured in time).
    #[arg(long, short = 'm')]
    metric: Option<String>,
}

#[derive(Serialize)]
struct Row {
    address: String,
    bytes: String,
    instruction: String,
    line: u32,
    /// The line's total across threads in the run (null: no samples on the line).
    line_total: Option<f64>,
}

/// Runs `perfscape disasm`.
pub fn run(args: &DisasmArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let Some((file, range)) = args.lines.rsplit_once(':') else {
        bail!("`{}`: expected FILE:FIRST-LAST", args.lines);
    };
    let (a, b) = range
        .split_once('-')
        .and_then(|(a, b)| Some((a.trim().parse::<u32>().ok()?, b.trim().parse::<u32>().ok()?)))
        .filter(|(a, b)| *a >= 1 && a <= b)
        .with_context(|| format!("`{range}`: expected FIRST-LAST with 1 <= FIRST <= LAST"))?;
    let meta =
        std::fs::metadata(&args.binary).with_context(|| format!("--binary {}", args.binary.display()))?;
    if !meta.is_file() || meta.len() > MAX_BINARY_BYTES {
        bail!(
            "--binary {}: not a regular file of at most 1 GiB",
            args.binary.display()
        );
    }
    let elf = std::fs::read(&args.binary).with_context(|| format!("--binary {}", args.binary.display()))?;
    let loaded = loading::open(&args.common.input)?;
    let p = &loaded.profile;
    let m = fmt::metric(p, args.metric.as_deref())?;
    let values = Values {
        metric: m,
        kind: ValueKind::Exclusive,
    };
    let table = LineTable::new(p);
    let tf = table
        .files
        .iter()
        .find(|f| f.name == file || std::path::Path::new(&f.name).ends_with(file));
    let total = |line: u32| -> Option<f64> {
        let l = tf?.line(line)?;
        let s = line_summary(p, &line_values(p, &l.events, values), values);
        (s.threads > 0).then_some(s.total)
    };
    let d =
        disassemble_lines(&elf, file, a, b).with_context(|| format!("--binary {}", args.binary.display()))?;
    if d.files.is_empty() {
        bail!(
            "the line table of {} names no file `{file}`",
            args.binary.display()
        );
    }
    let rows: Vec<Row> = d
        .instructions
        .iter()
        .map(|i| Row {
            address: format!("{:x}", i.address),
            bytes: i.bytes.clone(),
            instruction: i.text.clone(),
            line: i.line,
            line_total: total(i.line),
        })
        .collect();
    let unit = &p.metric(m).unit;
    match args.common.format {
        OutputFormat::Csv => fmt::write_csv(out, &rows)?,
        OutputFormat::Json => {
            let doc = serde_json::json!({
                "binary": args.binary.display().to_string(),
                "files": d.files,
                "first": a,
                "last": b,
                "metric": p.metric(m).name,
                "unit": unit.symbol(),
                "instructions": rows,
            });
            serde_json::to_writer_pretty(&mut *out, &doc)?;
            writeln!(out)?;
        }
        OutputFormat::Table => {
            writeln!(
                out,
                "{} lines {a}-{b} in {} ({})",
                file,
                args.binary.display(),
                d.files.join(", ")
            )?;
            writeln!(
                out,
                "{} instructions; per line its exclusive {} summed over threads (the run has no per-instruction values)",
                rows.len(),
                p.metric(m).name
            )?;
            let mut last_line = None;
            for r in &rows {
                if last_line != Some(r.line) {
                    let t = r
                        .line_total
                        .map_or_else(|| ".".to_string(), |v| fmt::value(v, unit));
                    writeln!(out, "line {} · {t}", r.line)?;
                    last_line = Some(r.line);
                }
                writeln!(out, "  {:>10}:  {:<30} {}", r.address, r.bytes, r.instruction)?;
            }
        }
    }
    Ok(loading::exit_code(&loaded.report))
}
