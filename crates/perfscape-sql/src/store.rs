//! A store of runs: a directory of Parquet files plus a catalog, that `perfscape sql --store`
//! queries across every run and that Apache Spark, DuckDB or pandas read unchanged.
//!
//! Layout of a store directory `DIR`:
//! - `DIR/catalog.json`: the runs of the store (`Catalog`): number, name, source, format,
//!   tags, when added, which tables have rows. The only source of truth: a run is in the
//!   store when, and only when, the catalog lists it.
//! - `DIR/<table>/run-<n>.parquet`: run `n`'s rows of `<table>`, *with* the `run` column, so
//!   `spark.read.parquet("DIR/event_values")` (or `pandas.read_parquet`) reads every run as one
//!   table. Tables without rows for a run have no file.
//! - `DIR/.lock`: held (an exclusive file lock) while a command changes the store.
//! - `DIR/.staging-<pid>/`: the files of an `add` being written (names starting with `.` are
//!   skipped by Spark, pyarrow and DataFusion's listing).
//!
//! Writes are atomic at the level of the catalog: `add` writes every file in its staging
//! directory, moves them into place (a rename each), then replaces the catalog (written to a
//! temporary file and renamed). A process killed at any moment leaves the catalog as it was or
//! as it should be; files of a run the catalog does not list (from a kill between the renames
//! and the catalog) are removed by the next command that changes the store, and are never
//! read by perfscape meanwhile. `rm` replaces the catalog first, then removes the files.

use crate::error::SqlError;
use crate::export::write_parquet;
use crate::run::{RunEntry, RunSet};
use crate::session::{QueryLimits, SqlSession};
use crate::table::Table;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The catalog file's name inside a store.
pub const CATALOG: &str = "catalog.json";

/// The catalog of a store (`DIR/catalog.json`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Catalog {
    /// Always `"perfscape-store"`.
    pub format: String,
    /// Layout version: 1.
    pub version: u32,
    /// The number the next run added gets (numbers are never reused).
    pub next_run: u32,
    /// The runs, in the order added.
    pub runs: Vec<StoredRun>,
}

/// One run of a store.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StoredRun {
    /// The `run` column of its rows.
    pub run: u32,
    /// Its name (the input's file or directory name).
    pub name: String,
    /// The path it was read from when added.
    pub source: String,
    /// The format read.
    pub format: String,
    /// Tags given with `--tag key=value`.
    pub tags: BTreeMap<String, String>,
    /// When it was added, seconds since the Unix epoch.
    pub added_unix_s: u64,
    /// Threads of the run.
    pub threads: u64,
    /// The tables that have a file for this run.
    pub tables: Vec<String>,
}

/// A store directory (see the module documentation).
#[derive(Clone, Debug)]
pub struct Store {
    dir: PathBuf,
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> SqlError + '_ {
    move |source| SqlError::Io {
        path: path.to_path_buf(),
        source,
    }
}

impl Store {
    /// The store at `dir` (it need not exist yet: `add` creates it).
    pub fn new(dir: impl Into<PathBuf>) -> Store {
        Store { dir: dir.into() }
    }

    /// The store's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The catalog; an empty one when the directory has none yet.
    ///
    /// # Errors
    /// [`SqlError::Io`] when it cannot be read, [`SqlError::Write`] naming the file when it is
    /// not a perfscape store catalog.
    pub fn catalog(&self) -> Result<Catalog, SqlError> {
        let path = self.dir.join(CATALOG);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                // A new store: a missing or empty directory (but for our own lock and staging).
                let foreign = self.dir.is_dir()
                    && std::fs::read_dir(&self.dir)
                        .map_err(io(&self.dir))?
                        .filter_map(Result::ok)
                        .any(|e| !e.file_name().to_string_lossy().starts_with('.'));
                if foreign {
                    return Err(SqlError::Write {
                        path,
                        message: "missing: this directory is not a perfscape store (no catalog.json)".into(),
                    });
                }
                return Ok(Catalog {
                    format: "perfscape-store".into(),
                    version: 1,
                    ..Catalog::default()
                });
            }
            Err(e) => return Err(io(&path)(e)),
        };
        let c: Catalog = serde_json::from_str(&text).map_err(|e| SqlError::Write {
            path: path.clone(),
            message: format!(
                "not a perfscape store catalog: {e} (line {}, column {})",
                e.line(),
                e.column()
            ),
        })?;
        if c.format != "perfscape-store" || c.version != 1 {
            return Err(SqlError::Write {
                path,
                message: format!(
                    "a store of format `{}` version {}; this perfscape reads perfscape-store version 1",
                    c.format, c.version
                ),
            });
        }
        Ok(c)
    }

    /// Takes the store's write lock (blocking until another writer is done).
    fn lock(&self) -> Result<File, SqlError> {
        std::fs::create_dir_all(&self.dir).map_err(io(&self.dir))?;
        let path = self.dir.join(".lock");
        let f = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(io(&path))?;
        f.lock().map_err(io(&path))?;
        Ok(f)
    }

    /// Replaces the catalog atomically (a temporary file renamed over it).
    fn write_catalog(&self, c: &Catalog) -> Result<(), SqlError> {
        let path = self.dir.join(CATALOG);
        let mut tmp = tempfile::NamedTempFile::new_in(&self.dir).map_err(io(&self.dir))?;
        let text = serde_json::to_string_pretty(c).map_err(|e| SqlError::Write {
            path: path.clone(),
            message: e.to_string(),
        })?;
        tmp.write_all(text.as_bytes()).map_err(io(&path))?;
        tmp.as_file().sync_all().map_err(io(&path))?;
        tmp.persist(&path).map_err(|e| io(&path)(e.error))?;
        Ok(())
    }

    /// Removes files of runs the catalog does not list and left-over staging directories
    /// (from a writer that was killed). Call with the lock held.
    fn clean(&self, c: &Catalog) -> Result<(), SqlError> {
        let listed: std::collections::HashSet<String> =
            c.runs.iter().map(|r| format!("run-{}.parquet", r.run)).collect();
        for entry in std::fs::read_dir(&self.dir).map_err(io(&self.dir))? {
            let entry = entry.map_err(io(&self.dir))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = entry.path();
            if name.starts_with(".staging-") {
                std::fs::remove_dir_all(&path).map_err(io(&path))?;
            } else if Table::by_name(&name).is_some() && path.is_dir() {
                for f in std::fs::read_dir(&path).map_err(io(&path))? {
                    let f = f.map_err(io(&path))?;
                    let fname = f.file_name().to_string_lossy().into_owned();
                    if fname.starts_with("run-") && fname.ends_with(".parquet") && !listed.contains(&fname) {
                        std::fs::remove_file(f.path()).map_err(io(&f.path()))?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Adds every run of `runs` (their tags included) and returns them as stored.
    ///
    /// # Errors
    /// [`SqlError::Io`] / [`SqlError::Write`] naming the file that failed; the store is then
    /// as it was.
    pub fn add(&self, runs: &RunSet) -> Result<Vec<StoredRun>, SqlError> {
        let _lock = self.lock()?;
        let mut catalog = self.catalog()?;
        self.clean(&catalog)?;
        let staging = self.dir.join(format!(".staging-{}", std::process::id()));
        std::fs::create_dir_all(&staging).map_err(io(&staging))?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let mut added = Vec::new();
        let mut moves: Vec<(PathBuf, PathBuf)> = Vec::new();
        for entry in runs.runs() {
            let id = catalog.next_run;
            catalog.next_run += 1;
            let stored_entry = RunEntry {
                run: id,
                ..entry.clone()
            };
            let mut tables = Vec::new();
            for t in Table::ALL {
                if crate::batches::units(t, &stored_entry) == 0 {
                    continue;
                }
                let file = format!("run-{id}.parquet");
                let tmp = staging.join(format!("{}-{file}", t.name()));
                let rows = write_parquet(t, &stored_entry, &tmp, true)?;
                if rows == 0 {
                    std::fs::remove_file(&tmp).map_err(io(&tmp))?;
                    continue;
                }
                moves.push((tmp, self.dir.join(t.name()).join(file)));
                tables.push(t.name().to_string());
            }
            added.push(StoredRun {
                run: id,
                name: entry.name.clone(),
                source: entry.source.clone(),
                format: entry.format.clone(),
                tags: entry.tags.iter().cloned().collect(),
                added_unix_s: now,
                threads: entry.data.profile().threads().len() as u64,
                tables,
            });
        }
        for (from, to) in &moves {
            if let Some(parent) = to.parent() {
                std::fs::create_dir_all(parent).map_err(io(parent))?;
            }
            std::fs::rename(from, to).map_err(io(to))?;
        }
        catalog.runs.extend(added.iter().cloned());
        self.write_catalog(&catalog)?;
        std::fs::remove_dir_all(&staging).map_err(io(&staging))?;
        Ok(added)
    }

    /// Removes the runs numbered `ids`; returns those removed (ids not in the store are
    /// ignored).
    ///
    /// # Errors
    /// [`SqlError::Io`] naming the file that could not be removed or written.
    pub fn remove(&self, ids: &[u32]) -> Result<Vec<StoredRun>, SqlError> {
        let _lock = self.lock()?;
        let mut catalog = self.catalog()?;
        let (gone, kept): (Vec<StoredRun>, Vec<StoredRun>) =
            catalog.runs.into_iter().partition(|r| ids.contains(&r.run));
        catalog.runs = kept;
        self.write_catalog(&catalog)?;
        self.clean(&catalog)?;
        Ok(gone)
    }

    /// The path of run `run`'s file of `table`.
    pub fn file(&self, table: Table, run: u32) -> PathBuf {
        self.dir.join(table.name()).join(format!("run-{run}.parquet"))
    }

    /// An SQL session over every run of the store (the files its catalog lists).
    ///
    /// # Errors
    /// As [`Store::catalog`], and [`SqlError::Execution`] when a listed file cannot be
    /// registered.
    pub fn session(&self, limits: QueryLimits) -> Result<SqlSession, SqlError> {
        let catalog = self.catalog()?;
        let mut files: Vec<(Table, Vec<PathBuf>)> = Vec::new();
        for t in Table::ALL {
            let list = catalog
                .runs
                .iter()
                .filter(|r| r.tables.iter().any(|n| n == t.name()))
                .map(|r| self.file(t, r.run))
                .collect();
            files.push((t, list));
        }
        SqlSession::over_files(&files, limits)
    }
}
