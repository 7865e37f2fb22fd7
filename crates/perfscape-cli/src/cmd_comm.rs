//! `perfscape comm`: the communication matrix of a `TAU_COMM_MATRIX` run, or of a trace's
//! messages (OTF2, TAU traces) — the heaviest sender → receiver pairs and the totals per
//! path; `--csv FILE` writes ParaProf's `--writecomm` layout.

use crate::args::{Common, OutputFormat};
use crate::{fmt, loading};
use anyhow::Context;
use clap::Args;
use perfscape_analysis::comm::{ALL_PATHS, CommMatrix, CommPath, comm_matrix, comm_matrix_from_trace};
use perfscape_model::Unit;
use serde::Serialize;
use std::collections::BTreeSet;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `perfscape comm`.
#[derive(Args, Debug)]
pub struct CommArgs {
    #[command(flatten)]
    common: Common,
    /// The path whose pairs are listed: a callpath element (a timer name) or `All Paths`
    /// (the default).
    #[arg(long)]
    path: Option<String>,
    /// Number of pairs to list, heaviest (most bytes) first (0 = all).
    #[arg(short = 'n', long = "number", default_value_t = 20)]
    n: usize,
    /// Also write the whole matrix, every path, in the layout of `paraprof --writecomm`
    /// (`x cord` = receiver, `y coord` = sender; STDDEV is the true standard deviation).
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,
}

#[derive(Serialize)]
struct PairRow {
    sender: u32,
    receiver: u32,
    bytes: f64,
    calls: f64,
    mean_bytes: f64,
    min_bytes: f64,
    max_bytes: f64,
    stddev_bytes: f64,
}

#[derive(Serialize)]
struct PathRow {
    path: String,
    pairs: usize,
    calls: f64,
    bytes: f64,
}

fn pairs(path: &CommPath, n: usize) -> Vec<PairRow> {
    let mut v: Vec<PairRow> = path
        .cells
        .iter()
        .map(|c| PairRow {
            sender: c.sender,
            receiver: c.receiver,
            bytes: c.volume_bytes,
            calls: c.calls,
            mean_bytes: c.mean_bytes(),
            min_bytes: c.min_bytes,
            max_bytes: c.max_bytes,
            stddev_bytes: c.stddev_bytes(),
        })
        .collect();
    // Heaviest first; ties by sender then receiver (stable over the sorted cells).
    v.sort_by(|a, b| b.bytes.total_cmp(&a.bytes));
    if n > 0 {
        v.truncate(n);
    }
    v
}

/// A number as Java's `Double.toString` writes it (ParaProf's CSV): `400.0`, `1.6384E10`.
fn java_double(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 || (1e-3..1e7).contains(&a) {
        format!("{v:?}")
    } else {
        let s = format!("{v:E}");
        match s.split_once('E') {
            Some((m, e)) if !m.contains('.') => format!("{m}.0E{e}"),
            _ => s,
        }
    }
}

/// Writes `m` in ParaProf's `--writecomm` layout: the header `x cord,y coord,z coord` then
/// `, <path> CALLS|MAX|MIN|MEAN|STDDEV|VOLUME` per path in name order, one line per
/// (sender, receiver) pair of any path (senders ascending, then receivers), `x` = receiver,
/// `y` = sender, 0 where a path has no message for the pair. STDDEV is the true standard
/// deviation (ParaProf's column is not: `perfscape_analysis::comm`).
fn write_paraprof_csv(m: &CommMatrix, out: &mut dyn Write) -> std::io::Result<()> {
    let mut paths: Vec<&CommPath> = m.paths.iter().collect();
    paths.sort_by(|a, b| a.name.cmp(&b.name));
    let mut line = String::from("x cord,y coord,z coord");
    for p in &paths {
        for f in ["CALLS", "MAX", "MIN", "MEAN", "STDDEV", "VOLUME"] {
            line.push_str(&format!(", {} {f}", p.name));
        }
    }
    writeln!(out, "{line}")?;
    let all: BTreeSet<(u32, u32)> = paths
        .iter()
        .flat_map(|p| p.cells.iter().map(|c| (c.sender, c.receiver)))
        .collect();
    for (s, r) in all {
        let mut line = format!("{r},{s},0");
        for p in &paths {
            let v = p.cell(s, r).map_or([0.0; 6], |c| {
                [
                    c.calls,
                    c.max_bytes,
                    c.min_bytes,
                    c.mean_bytes(),
                    c.stddev_bytes(),
                    c.volume_bytes,
                ]
            });
            for x in v {
                line.push(',');
                line.push_str(&java_double(x));
            }
        }
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// Runs `perfscape comm`.
pub fn run(args: &CommArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let run = loading::open_run(&args.common.input, true)?;
    let loaded = run.loaded;
    let mut m = comm_matrix(&loaded.profile);
    if let Some(trace) = run.trace.as_ref().filter(|_| m.is_empty()) {
        m = comm_matrix_from_trace(trace);
    }
    if m.is_empty() {
        anyhow::bail!(
            "{}: no communication matrix (no `Message size sent to node N` user events — run the program with TAU_COMM_MATRIX=1 — and no trace messages of known size)",
            args.common.input.run.display()
        );
    }
    let name = args.path.as_deref().unwrap_or(ALL_PATHS);
    let Some(path) = m.path(name).or_else(|| args.path.is_none().then(|| &m.paths[0])) else {
        let names: Vec<&str> = m.paths.iter().map(|p| p.name.as_str()).collect();
        anyhow::bail!("--path: no path {name:?}; the run has: {}", names.join(", "));
    };
    if let Some(file) = &args.csv {
        let mut f = std::io::BufWriter::new(
            std::fs::File::create(file)
                .with_context(|| format!("--csv: cannot create {}", file.display()))?,
        );
        write_paraprof_csv(&m, &mut f)
            .and_then(|()| f.flush())
            .with_context(|| format!("--csv: cannot write {}", file.display()))?;
    }
    let rows = pairs(path, args.n);
    let totals: Vec<PathRow> = m
        .paths
        .iter()
        .map(|p| PathRow {
            path: p.name.clone(),
            pairs: p.cells.len(),
            calls: p.calls(),
            bytes: p.volume_bytes(),
        })
        .collect();
    let sk = &m.skipped;
    match args.common.format {
        OutputFormat::Csv => fmt::write_csv(out, &rows)?,
        OutputFormat::Json => {
            let doc = serde_json::json!({
                "ranks": m.ranks,
                "path": path.name,
                "pairs": rows,
                "paths": totals,
                "out_of_range_rows": sk.out_of_range_rows,
                "out_of_range_examples": sk.out_of_range_examples,
                "other_thread_rows": sk.other_thread_rows,
                "messages_without_bytes": sk.messages_without_bytes,
            });
            serde_json::to_writer_pretty(&mut *out, &doc)?;
            writeln!(out)?;
        }
        OutputFormat::Table => {
            let b = Unit::Bytes;
            writeln!(
                out,
                "Heaviest sender → receiver pairs of {} ({} ranks, {} pairs)",
                path.name,
                m.ranks,
                path.cells.len()
            )?;
            let mut t = fmt::table(
                &[
                    "Sender",
                    "Receiver",
                    "Bytes",
                    "Calls",
                    "Mean size",
                    "Max size",
                    "Std. dev.",
                ],
                2,
            );
            for r in &rows {
                t.add_row(vec![
                    r.sender.to_string(),
                    r.receiver.to_string(),
                    fmt::value(r.bytes, &b),
                    fmt::count(r.calls),
                    fmt::value(r.mean_bytes, &b),
                    fmt::value(r.max_bytes, &b),
                    fmt::value(r.stddev_bytes, &b),
                ]);
            }
            writeln!(out, "{t}")?;
            writeln!(
                out,
                "Per path (each callpath element counts the messages sent beneath it):"
            )?;
            let mut t = fmt::table(&["Path", "Pairs", "Calls", "Bytes"], 1);
            for r in &totals {
                t.add_row(vec![
                    fmt::name(&r.path, args.common.wide),
                    r.pairs.to_string(),
                    fmt::count(r.calls),
                    fmt::value(r.bytes, &b),
                ]);
            }
            writeln!(out, "{t}")?;
            if sk.out_of_range_rows > 0 {
                writeln!(
                    out,
                    "Left out: {} rows naming a node not in the run ({} messages), e.g. {}",
                    sk.out_of_range_rows,
                    fmt::count(sk.out_of_range_calls),
                    sk.out_of_range_examples.join("; ")
                )?;
            }
            if sk.other_thread_rows > 0 {
                writeln!(
                    out,
                    "Left out as ParaProf does: {} rows on threads other than N.0.0.",
                    sk.other_thread_rows
                )?;
            }
        }
    }
    Ok(loading::exit_code(&loaded.report))
}

#[cfg(test)]
mod tests {
    use super::java_double;

    #[test]
    fn numbers_are_written_as_java_writes_them() {
        assert_eq!(java_double(400.0), "400.0");
        assert_eq!(java_double(2_560_000.0), "2560000.0");
        assert_eq!(java_double(16_384_000_000.0), "1.6384E10");
        assert_eq!(java_double(1e7), "1.0E7");
        assert_eq!(java_double(0.0), "0.0");
    }
}
