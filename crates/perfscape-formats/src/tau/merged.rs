//! TAU's merged profile `tauprofile.xml` (`TAU_PROFILE_FORMAT=merged`), possibly gzip
//! compressed (`tauprofile.xml.gz`).
//!
//! The file is a sequence of `<profile_xml>` documents separated by NUL bytes (not one XML
//! document): one global `<definitions thread="*">` block (metrics, events, user events; ids
//! sorted by name, names trimmed), then one document per thread (`<thread>` with metadata,
//! per-thread metric definitions and one `<profile>` block with the final values, no
//! `<name>`), and finally TAU's own statistics over the threads, one document per
//! *derived entity* (`total`, `mean_all`, `mean_no_null`, `stddev_all`, `stddev_no_null`,
//! `min_no_null`, `max_no_null`). Source: TAU's `TauSnapshot.cpp`
//! (`Tau_snapshot_writeUnifiedBuffer`) and `TauUnify.cpp`; `../shared/FORMATS.md`.
//!
//! The threads become a [`Profile`] (ParaProf's semantics, as for text profiles: a row with
//! zero calls does not give the thread the event). The derived blocks are kept as
//! [`TauDerived`], a reference to check perfscape's statistics against; notes on TAU's
//! conventions there: `min_no_null` ignores zero values (and writes -1 when every thread has
//! 0, e.g. in the subrs column), and `mean_all` of a user event divides every column (count,
//! max, min, ...) by the number of threads.

use super::xml_doc::{DataRows, ThreadDecl, parse_doc};
use super::xml_split::DocSplitter;
use crate::error::{FileError, LoadError, LoadReport};
use crate::format::{self, FileScope, Format, OpenOptions, Opened, Parts, Probe};
use crate::input::{decompress, read_file};
use perfscape_model::{Metric, Profile, ProfileBuilder, ThreadData, ThreadId};
use rustc_hash::FxHashMap as HashMap;
use std::path::Path;

/// One timer row of a TAU derived block.
#[derive(Debug, Clone, PartialEq)]
pub struct DerivedTimer {
    /// Event name, normalized as [`Profile`] names it.
    pub name: String,
    /// Calls column.
    pub calls: f64,
    /// Subrs column.
    pub subcalls: f64,
    /// Exclusive value per metric of [`TauDerived::metrics`].
    pub exclusive: Vec<f64>,
    /// Inclusive value per metric.
    pub inclusive: Vec<f64>,
}

/// One user event row of a TAU derived block.
#[derive(Debug, Clone, PartialEq)]
pub struct DerivedUserEvent {
    /// User event name, normalized as [`Profile`] names it.
    pub name: String,
    /// Count column.
    pub count: f64,
    /// Max column.
    pub max: f64,
    /// Min column.
    pub min: f64,
    /// Mean column.
    pub mean: f64,
    /// Sum-of-squares column.
    pub sum_squares: f64,
}

/// A block of statistics TAU computed itself when it merged the threads.
#[derive(Debug, Clone, PartialEq)]
pub struct TauDerived {
    /// `total`, `mean_all`, `mean_no_null`, `stddev_all`, `stddev_no_null`, `min_no_null`
    /// or `max_no_null`.
    pub entity: String,
    /// Metric names of the value columns.
    pub metrics: Vec<String>,
    /// Timer rows, in file order.
    pub timers: Vec<DerivedTimer>,
    /// User event rows, in file order.
    pub user_events: Vec<DerivedUserEvent>,
}

/// A merged file, parsed.
#[derive(Debug)]
pub struct MergedFile {
    /// The threads' values.
    pub profile: Profile,
    /// TAU's derived statistics blocks.
    pub derived: Vec<TauDerived>,
    /// Problems that did not stop the load.
    pub warnings: Vec<FileError>,
}

#[derive(Default)]
struct Tables {
    metrics: HashMap<u32, String>,
    events: HashMap<u32, (String, String)>,
    user_events: HashMap<u32, String>,
}

struct ThreadEntry {
    decl: ThreadDecl,
    tables: Tables,
    data: Option<(DataRows, u64, usize)>,
}

/// Parses a merged file ([`crate::open`] decompresses a `.gz` one). `path` names it in messages. Errors when no thread
/// could be read; problems in single documents are warnings.
pub fn parse_merged(bytes: &[u8], path: &Path) -> Result<MergedFile, FileError> {
    let mut splitter = DocSplitter::default();
    let (docs, split_errors) = splitter.push(bytes);
    let mut warnings: Vec<FileError> = split_errors
        .into_iter()
        .chain(splitter.finish())
        .map(|e| e.in_file(path))
        .collect();
    let mut global = Tables::default();
    let mut threads: Vec<ThreadEntry> = Vec::new();
    let mut by_id: HashMap<String, usize> = HashMap::default();
    let mut derived_raw = Vec::new();
    for raw in &docs {
        let doc = match parse_doc(&raw.text) {
            Ok(d) => d,
            Err(e) => {
                warnings.push(raw.error_at(
                    path,
                    e.offset,
                    format!("{}; this document is skipped", e.message),
                ));
                continue;
            }
        };
        for t in doc.threads {
            match by_id.get(&t.id) {
                Some(&i) => {
                    let md = &mut threads[i].decl.metadata;
                    for (k, v) in t.metadata {
                        if !md.iter().any(|(k2, _)| *k2 == k) {
                            md.push((k, v));
                        }
                    }
                }
                None => {
                    by_id.insert(t.id.clone(), threads.len());
                    threads.push(ThreadEntry {
                        decl: t,
                        tables: Tables::default(),
                        data: None,
                    });
                }
            }
        }
        for d in doc.definitions {
            let tables = if d.thread == "*" {
                &mut global
            } else if let Some(&i) = by_id.get(&d.thread) {
                &mut threads[i].tables
            } else {
                warnings.push(FileError {
                    path: path.to_path_buf(),
                    line: usize::try_from(raw.line).ok(),
                    byte_offset: Some(raw.offset),
                    message: format!(
                        "<definitions thread=\"{}\"> for an undeclared thread; ignored",
                        d.thread
                    ),
                });
                continue;
            };
            for (id, name) in d.metrics {
                tables.metrics.insert(id, name.trim().to_string());
            }
            for (id, name, group) in d.events {
                tables.events.insert(id, (name, group));
            }
            for (id, name) in d.user_events {
                tables.user_events.insert(id, name);
            }
        }
        for p in doc.profiles {
            match by_id.get(&p.thread) {
                Some(&i) => {
                    if threads[i].data.is_some() {
                        warnings.push(FileError {
                            path: path.to_path_buf(),
                            line: usize::try_from(raw.line).ok(),
                            byte_offset: Some(raw.offset + p.offset as u64),
                            message: format!(
                                "a second <profile> block for thread `{}`; the later one is read",
                                p.thread
                            ),
                        });
                    }
                    threads[i].data = Some((p.data, raw.offset + p.offset as u64, raw.line as usize));
                }
                None => warnings.push(FileError {
                    path: path.to_path_buf(),
                    line: usize::try_from(raw.line).ok(),
                    byte_offset: Some(raw.offset + p.offset as u64),
                    message: format!(
                        "<profile thread=\"{}\"> for an undeclared thread; ignored",
                        p.thread
                    ),
                }),
            }
        }
        derived_raw.extend(doc.derived);
    }
    // Metrics: the global definitions, else the first thread's.
    let metric_table = if global.metrics.is_empty() {
        threads
            .iter()
            .find(|t| !t.tables.metrics.is_empty())
            .map(|t| &t.tables.metrics)
    } else {
        Some(&global.metrics)
    };
    let mut metric_ids: Vec<(&u32, &String)> = metric_table.map(|m| m.iter().collect()).unwrap_or_default();
    metric_ids.sort();
    let metric_names: Vec<String> = metric_ids.iter().map(|(_, n)| (*n).clone()).collect();
    if metric_names.is_empty() {
        return Err(FileError::whole(
            path,
            "no <metric> definitions: not a TAU merged profile (or the definitions document is damaged)",
        ));
    }
    let mut order: Vec<usize> = (0..threads.len()).collect();
    order.sort_by_key(|&i| threads[i].decl.thread);
    let mut builder = ProfileBuilder::new(metric_names.iter().map(|n| Metric::tau(n.as_str())).collect());
    let mut loaded = 0usize;
    let mut bad: Vec<FileError> = Vec::new();
    let mut last: Option<ThreadId> = None;
    for i in order {
        let entry = &threads[i];
        let Some((rows, offset, line)) = &entry.data else {
            warnings.push(FileError::whole(
                path,
                format!(
                    "thread `{}` is declared but has no <profile> block; left out",
                    entry.decl.id
                ),
            ));
            continue;
        };
        let at = |message: String| FileError {
            path: path.to_path_buf(),
            line: Some(*line),
            byte_offset: Some(*offset),
            message,
        };
        if last == Some(entry.decl.thread) {
            bad.push(at(format!(
                "thread {} is declared twice under different ids; the second is left out",
                entry.decl.thread
            )));
            continue;
        }
        match thread_data(entry, &global, rows, &metric_names) {
            Ok((data, thread_warnings)) => {
                warnings.extend(thread_warnings.into_iter().map(at));
                if let Err(e) = builder.add_thread(entry.decl.thread, data) {
                    bad.push(at(format!("internal error: {e}")));
                    continue;
                }
                last = Some(entry.decl.thread);
                loaded += 1;
            }
            Err(message) => bad.push(at(message)),
        }
    }
    if loaded == 0 {
        return Err(bad
            .into_iter()
            .next()
            .unwrap_or_else(|| FileError::whole(path, "no thread <profile> block could be read")));
    }
    warnings.extend(bad);
    let (profile, notes) = builder.finish();
    warnings.extend(
        notes
            .into_iter()
            .map(|n| FileError::whole(path, format!("thread {}: {}", n.thread, n.message))),
    );
    let derived = derived_raw
        .into_iter()
        .map(|d| resolve_derived(d.entity, &d.data, &global, &metric_names))
        .collect::<Result<Vec<_>, String>>()
        .unwrap_or_else(|message| {
            warnings.push(FileError::whole(
                path,
                format!("TAU's derived statistics not read: {message}"),
            ));
            Vec::new()
        });
    Ok(MergedFile {
        profile,
        derived,
        warnings,
    })
}

fn event_def<'a>(id: u32, own: &'a Tables, global: &'a Tables) -> Option<&'a (String, String)> {
    own.events.get(&id).or_else(|| global.events.get(&id))
}

/// Column positions of a block's metrics in the profile's metric list.
fn columns(
    rows: &DataRows,
    own: &Tables,
    global: &Tables,
    metric_names: &[String],
) -> Result<Vec<usize>, String> {
    rows.metrics
        .iter()
        .map(|id| {
            let name = own
                .metrics
                .get(id)
                .or_else(|| global.metrics.get(id))
                .ok_or_else(|| format!("metric id {id} is not defined"))?;
            metric_names.iter().position(|n| n == name).ok_or_else(|| {
                format!(
                    "metric `{name}` is not one of the file's metrics ({})",
                    metric_names.join(", ")
                )
            })
        })
        .collect()
}

fn thread_data(
    entry: &ThreadEntry,
    global: &Tables,
    rows: &DataRows,
    metric_names: &[String],
) -> Result<(ThreadData, Vec<String>), String> {
    let cols = columns(rows, &entry.tables, global, metric_names)?;
    let n = metric_names.len();
    let mut data = ThreadData::new(n);
    let mut warnings = Vec::new();
    for (k, v) in &entry.decl.metadata {
        data.push_metadata(k, v);
    }
    let mut excl = vec![0.0; n];
    let mut incl = vec![0.0; n];
    let mut dropped = 0usize;
    let per_row = 2 * cols.len();
    for (r, &(id, calls, subcalls)) in rows.timers.iter().enumerate() {
        let (name, groups) = event_def(id, &entry.tables, global)
            .ok_or_else(|| format!("interval row for event id {id}, which is not defined"))?;
        let values = &rows.timer_values[r * per_row..(r + 1) * per_row];
        excl.iter_mut().for_each(|x| *x = 0.0);
        incl.iter_mut().for_each(|x| *x = 0.0);
        for (c, &m) in cols.iter().enumerate() {
            excl[m] = values[2 * c];
            incl[m] = values[2 * c + 1];
        }
        if calls == 0.0 {
            if excl.iter().chain(&incl).any(|v| *v != 0.0) {
                dropped += 1;
            }
            data.declare_timer(name, groups);
            continue;
        }
        data.push_timer(name, groups, calls, subcalls, &excl, &incl)
            .map_err(|e| e.to_string())?;
    }
    if dropped > 0 {
        warnings.push(format!(
            "thread `{}`: {dropped} timer row(s) have 0 calls but non-zero values; like ParaProf, the thread does not count as having these events",
            entry.decl.id
        ));
    }
    for &(id, v) in &rows.user_events {
        let name = entry
            .tables
            .user_events
            .get(&id)
            .or_else(|| global.user_events.get(&id))
            .ok_or_else(|| format!("atomic row for user event id {id}, which is not defined"))?;
        if v[0] != 0.0 {
            data.push_atomic(name, v[0], v[1], v[2], v[3], v[4]);
        }
    }
    Ok((data, warnings))
}

fn resolve_derived(
    entity: String,
    rows: &DataRows,
    global: &Tables,
    metric_names: &[String],
) -> Result<TauDerived, String> {
    let empty = Tables::default();
    let cols = columns(rows, &empty, global, metric_names)?;
    let per_row = 2 * cols.len();
    let n = metric_names.len();
    let mut timers = Vec::with_capacity(rows.timers.len());
    for (r, &(id, calls, subcalls)) in rows.timers.iter().enumerate() {
        let (name, _) = global
            .events
            .get(&id)
            .ok_or_else(|| format!("{entity}: event id {id} is not defined"))?;
        let values = &rows.timer_values[r * per_row..(r + 1) * per_row];
        let mut exclusive = vec![0.0; n];
        let mut inclusive = vec![0.0; n];
        for (c, &m) in cols.iter().enumerate() {
            exclusive[m] = values[2 * c];
            inclusive[m] = values[2 * c + 1];
        }
        timers.push(DerivedTimer {
            name: perfscape_model::event::normalize_timer_name(name).into_owned(),
            calls,
            subcalls,
            exclusive,
            inclusive,
        });
    }
    let mut user_events = Vec::with_capacity(rows.user_events.len());
    for &(id, v) in &rows.user_events {
        let name = global
            .user_events
            .get(&id)
            .ok_or_else(|| format!("{entity}: user event id {id} is not defined"))?;
        user_events.push(DerivedUserEvent {
            name: perfscape_model::event::normalize_user_event_name(name).into_owned(),
            count: v[0],
            max: v[1],
            min: v[2],
            mean: v[3],
            sum_squares: v[4],
        });
    }
    Ok(TauDerived {
        entity,
        metrics: metric_names.to_vec(),
        timers,
        user_events,
    })
}

/// TAU's merged profile: `tauprofile.xml` (NUL-separated `<profile_xml>` documents, the first
/// with the global definitions), plain or compressed, or a directory holding one.
pub const FORMAT: Format = Format {
    name: "tau-merged",
    description: "TAU merged profiles (tauprofile.xml, tauprofile.xml.gz, or a directory holding one)",
    example: "tau-real/mpi-stencil-np4-merged/tauprofile.xml",
    sniff: |p| match p {
        Probe::Dir { names, .. } => names
            .iter()
            .any(|n| n == "tauprofile.xml" || n == "tauprofile.xml.gz"),
        Probe::File { head, .. } => is_merged_head(head),
    },
    read: format::Read::Path(read_merged),
    gives: Parts::PROFILE,
    file_scope: FileScope::File,
};

/// True when a file's first bytes (decompressed) are those of a merged file: `<profile_xml`
/// followed by the global definitions (`thread="*"`), or documents separated by NUL bytes; a
/// snapshot file starts with a `<thread>` declaration instead.
pub fn is_merged_head(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(&head[..head.len().min(4096)]);
    let t = text.trim_start();
    t.starts_with("<profile_xml") && (t.contains("thread=\"*\"") || head.contains(&0))
}

/// Reads a merged file (or a directory holding `tauprofile.xml` / `tauprofile.xml.gz`).
fn read_merged(path: &Path, opts: &OpenOptions<'_>) -> Result<Opened, LoadError> {
    let file = if path.is_dir() {
        ["tauprofile.xml", "tauprofile.xml.gz"]
            .iter()
            .map(|n| path.join(n))
            .find(|p| p.is_file())
            .ok_or_else(|| LoadError::UnknownFormat {
                path: path.to_path_buf(),
                detail: "no tauprofile.xml or tauprofile.xml.gz in this directory".into(),
            })?
    } else {
        path.to_path_buf()
    };
    opts.progress_start(1);
    let raw = read_file(&file)?;
    let content = decompress(&raw);
    let merged = parse_merged(&content.data, &file).map_err(|e| LoadError::NothingLoaded {
        path: file.clone(),
        errors: std::iter::once(e)
            .chain(content.problem.clone().map(|p| p.in_file(&file)))
            .collect(),
    })?;
    opts.progress_advance(1);
    opts.progress_finish();
    let mut report = LoadReport {
        format: FORMAT.name,
        files_read: 1,
        bytes_read: raw.len() as u64,
        warnings: merged.warnings,
        partial_files: content.problem.map(|p| p.in_file(&file)).into_iter().collect(),
        ..LoadReport::default()
    };
    if !merged.derived.is_empty() {
        let names: Vec<&str> = merged.derived.iter().map(|d| d.entity.as_str()).collect();
        report.notes.push(format!(
            "the file also holds TAU's own statistics ({}); perfscape computes its own (tau::merged::parse_merged returns TAU's)",
            names.join(", ")
        ));
    }
    Ok(Opened::profile(merged.profile, report))
}
