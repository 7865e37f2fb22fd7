//! `perfscape cache info` and `perfscape cache clear`: what the profile cache holds, and
//! emptying it (perfscape's entries only; other files in the directory are left alone).

use crate::args::OutputFormat;
use crate::fmt;
use anyhow::Context;
use clap::{Args, Subcommand};
use perfscape_formats::cache::{self, CacheEntry};
use perfscape_model::Unit;
use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::UNIX_EPOCH;

/// Arguments of `perfscape cache`.
#[derive(Args, Debug)]
pub struct CacheArgs {
    #[command(subcommand)]
    action: Action,
}

#[derive(Subcommand, Debug)]
enum Action {
    /// The cache directory, its entries and their total size against the limit, and per
    /// entry: the input, the format asked for, the size and the last use.
    Info(InfoArgs),
    /// Remove every perfscape cache entry from the cache directory (other files stay).
    Clear(ClearArgs),
}

/// Which cache directory: the same rule as the commands that load.
#[derive(Args, Debug)]
struct DirArg {
    /// The cache directory (default: $PERFSCAPE_CACHE_DIR, else perfscape/ in the user's
    /// cache directory, e.g. ~/.cache/perfscape).
    #[arg(long, value_name = "DIR")]
    cache_dir: Option<PathBuf>,
}

#[derive(Args, Debug)]
struct InfoArgs {
    #[command(flatten)]
    dir: DirArg,
    /// Output format.
    #[arg(long, short = 'f', value_enum, default_value_t = OutputFormat::Table)]
    format: OutputFormat,
}

#[derive(Args, Debug)]
struct ClearArgs {
    #[command(flatten)]
    dir: DirArg,
}

/// Runs `perfscape cache ...`.
pub fn run(args: &CacheArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    match &args.action {
        Action::Info(a) => info(a, out),
        Action::Clear(a) => clear(a, out),
    }
}

fn directory(arg: &DirArg) -> anyhow::Result<PathBuf> {
    cache::cache_dir(arg.cache_dir.as_deref()).with_context(|| {
        format!(
            "no cache directory is known (no home directory): name one with --cache-dir or {}",
            cache::CACHE_DIR_ENV
        )
    })
}

/// One entry as `info` prints it.
#[derive(Serialize)]
struct Row {
    /// The input's canonical path (empty when the entry cannot be read).
    input: String,
    /// `--input-format` of the load, empty when the format was detected.
    format_request: String,
    /// The format read.
    format: String,
    /// Bytes.
    size: u64,
    /// Last use, RFC 3339 UTC.
    last_used: String,
    /// Last use, seconds since the Unix epoch.
    last_used_unix_s: u64,
    /// `current`, `other build` (rebuilt when its input is next loaded) or what is wrong.
    state: String,
    /// The entry's file.
    file: String,
}

fn row(e: &CacheEntry) -> Row {
    let (input, format_request, format, state) = match &e.about {
        Ok(a) => (
            a.input.display().to_string(),
            a.request.clone().unwrap_or_default(),
            a.format.to_string(),
            if a.current_build {
                "current".to_string()
            } else {
                "other build".to_string()
            },
        ),
        Err(why) => (String::new(), String::new(), String::new(), why.clone()),
    };
    Row {
        input,
        format_request,
        format,
        size: e.size,
        last_used: humantime::format_rfc3339_seconds(e.last_used).to_string(),
        last_used_unix_s: e.last_used.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()),
        state,
        file: e.path.display().to_string(),
    }
}

fn bytes(n: u64) -> String {
    fmt::value(n as f64, &Unit::Bytes)
}

fn info(args: &InfoArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let dir = directory(&args.dir)?;
    let limit = cache::cache_limit(None).map_err(anyhow::Error::msg)?;
    let entries =
        cache::entries(&dir).with_context(|| format!("cannot list the cache directory {}", dir.display()))?;
    let total: u64 = entries.iter().map(|e| e.size).sum();
    let rows: Vec<Row> = entries.iter().map(row).collect();
    match args.format {
        OutputFormat::Csv => {
            let mut w = csv::Writer::from_writer(out);
            if rows.is_empty() {
                // The header alone, so that an empty cache is still a valid table.
                w.write_record([
                    "input",
                    "format_request",
                    "format",
                    "size",
                    "last_used",
                    "last_used_unix_s",
                    "state",
                    "file",
                ])?;
            }
            for r in &rows {
                w.serialize(r)?;
            }
            w.flush()?;
        }
        OutputFormat::Json => {
            let doc = serde_json::json!({
                "directory": dir.display().to_string(),
                "exists": dir.is_dir(),
                "entry_count": rows.len(),
                "total_bytes": total,
                "limit_bytes": limit,
                "entries": rows,
            });
            serde_json::to_writer_pretty(&mut *out, &doc)?;
            writeln!(out)?;
        }
        OutputFormat::Table => {
            writeln!(out, "Cache directory: {}", describe_dir(&dir))?;
            writeln!(
                out,
                "{} entries, {} of the {} limit ({} bytes of {})",
                rows.len(),
                bytes(total),
                bytes(limit),
                total,
                limit
            )?;
            if !rows.is_empty() {
                let mut t = fmt::table(
                    &["Input", "Format asked", "Read as", "Last use", "State", "Size"],
                    5,
                );
                for r in &rows {
                    t.add_row(vec![
                        r.input.clone(),
                        if r.format_request.is_empty() {
                            "detected".to_string()
                        } else {
                            r.format_request.clone()
                        },
                        r.format.clone(),
                        r.last_used.clone(),
                        r.state.clone(),
                        bytes(r.size),
                    ]);
                }
                writeln!(out, "{t}")?;
                writeln!(
                    out,
                    "Least recently used entries are removed when a new one would exceed the limit ({}).",
                    cache::CACHE_MAX_BYTES_ENV
                )?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn describe_dir(dir: &Path) -> String {
    if dir.is_dir() {
        dir.display().to_string()
    } else {
        format!("{} (not created yet)", dir.display())
    }
}

fn clear(args: &ClearArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let dir = directory(&args.dir)?;
    let cleared =
        cache::clear(&dir).with_context(|| format!("cannot clear the cache directory {}", dir.display()))?;
    write!(
        out,
        "Removed {} cache entries ({}, {} bytes) from {}",
        cleared.entries,
        bytes(cleared.bytes),
        cleared.bytes,
        dir.display()
    )?;
    if cleared.abandoned_files > 0 {
        write!(
            out,
            ", and {} temporary files left by interrupted writes ({})",
            cleared.abandoned_files,
            bytes(cleared.abandoned_bytes)
        )?;
    }
    writeln!(out, ".")?;
    Ok(ExitCode::SUCCESS)
}
