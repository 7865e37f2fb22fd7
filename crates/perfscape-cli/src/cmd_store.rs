//! `perfscape store add|list|rm`: a store of runs (Parquet files plus a catalog, see
//! `perfscape_sql::store`), queried with `perfscape sql --store DIR`.

use crate::args::{EXIT_PARTIAL, LoadOptions};
use crate::cmd_sql::open_all;
use clap::{Args, Subcommand, ValueEnum};
use perfscape_sql::store::{Store, StoredRun};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// The environment variable naming the default store directory.
pub const STORE_ENV: &str = "PERFSCAPE_STORE";

/// Where the store is: `--store DIR`, else `$PERFSCAPE_STORE`, else `perfscape/store` in the
/// user's data directory (`~/.local/share` on Linux).
#[derive(Args, Debug, Clone)]
pub struct StoreDir {
    /// The store's directory (default: $PERFSCAPE_STORE, else perfscape/store in the user's
    /// data directory).
    #[arg(long = "store", value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

impl StoreDir {
    /// The store this names.
    pub fn store(&self) -> anyhow::Result<Store> {
        let dir = match (&self.dir, std::env::var_os(STORE_ENV)) {
            (Some(d), _) => d.clone(),
            (None, Some(d)) if !d.is_empty() => PathBuf::from(d),
            _ => dirs::data_dir()
                .map(|d| d.join("perfscape").join("store"))
                .ok_or_else(|| {
                    anyhow::anyhow!("no data directory is known here: give --store DIR or set {STORE_ENV}")
                })?,
        };
        Ok(Store::new(dir))
    }
}

/// Arguments of `perfscape store`.
#[derive(Args, Debug)]
pub struct StoreArgs {
    #[command(subcommand)]
    action: StoreAction,
}

/// What `perfscape store` does.
#[derive(Subcommand, Debug)]
enum StoreAction {
    /// Add runs (each gets the next run number; every tag applies to every run added).
    Add {
        /// The runs to add.
        #[arg(required = true)]
        runs: Vec<PathBuf>,
        /// A tag `key=value` (repeatable): `--tag compiler=gcc-13 --tag nodes=4`.
        #[arg(long = "tag", value_name = "KEY=VALUE", value_parser = parse_tag)]
        tags: Vec<(String, String)>,
        /// The store.
        #[command(flatten)]
        store: StoreDir,
        /// How to read every run.
        #[command(flatten)]
        load: LoadOptions,
    },
    /// List the runs of the store.
    List {
        /// The store.
        #[command(flatten)]
        store: StoreDir,
        /// Output format.
        #[arg(long, short = 'f', value_enum, default_value_t = ListFormat::Table)]
        format: ListFormat,
    },
    /// Remove runs by number.
    Rm {
        /// The run numbers (`store list` shows them).
        #[arg(required = true)]
        runs: Vec<u32>,
        /// The store.
        #[command(flatten)]
        store: StoreDir,
    },
}

/// `--format` of `store list`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ListFormat {
    /// An aligned text table.
    Table,
    /// The catalog's runs as one JSON array.
    Json,
}

fn parse_tag(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.to_string())),
        _ => Err(format!("`{s}` is not KEY=VALUE")),
    }
}

fn print_runs(runs: &[StoredRun], out: &mut dyn Write) -> anyhow::Result<()> {
    let mut t = crate::fmt::table(&["run", "name", "format", "threads", "tags", "source"], 6);
    if let Some(c) = t.column_mut(0) {
        c.set_cell_alignment(comfy_table::CellAlignment::Right);
    }
    if let Some(c) = t.column_mut(3) {
        c.set_cell_alignment(comfy_table::CellAlignment::Right);
    }
    for r in runs {
        let tags: Vec<String> = r.tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
        t.add_row(vec![
            r.run.to_string(),
            r.name.clone(),
            r.format.clone(),
            r.threads.to_string(),
            tags.join(" "),
            r.source.clone(),
        ]);
    }
    writeln!(out, "{t}")?;
    Ok(())
}

/// Runs `perfscape store`.
pub fn run(args: &StoreArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    match &args.action {
        StoreAction::Add {
            runs,
            tags,
            store,
            load,
        } => {
            let store = store.store()?;
            let (mut set, partial) = open_all(runs, load)?;
            set.set_tags(tags);
            let added = store.add(&set)?;
            writeln!(out, "added {} run(s) to {}", added.len(), store.dir().display())?;
            print_runs(&added, out)?;
            Ok(if partial {
                ExitCode::from(EXIT_PARTIAL)
            } else {
                ExitCode::SUCCESS
            })
        }
        StoreAction::List { store, format } => {
            let store = store.store()?;
            let c = store.catalog()?;
            match format {
                ListFormat::Table => {
                    writeln!(out, "{} run(s) in {}", c.runs.len(), store.dir().display())?;
                    print_runs(&c.runs, out)?;
                }
                ListFormat::Json => {
                    serde_json::to_writer_pretty(&mut *out, &c.runs)?;
                    writeln!(out)?;
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        StoreAction::Rm { runs, store } => {
            let store = store.store()?;
            let gone = store.remove(runs)?;
            let missing: Vec<String> = runs
                .iter()
                .filter(|id| !gone.iter().any(|g| g.run == **id))
                .map(ToString::to_string)
                .collect();
            writeln!(
                out,
                "removed {} run(s) from {}",
                gone.len(),
                store.dir().display()
            )?;
            if !missing.is_empty() {
                anyhow::bail!("no run {} in {}", missing.join(", "), store.dir().display());
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
