//! Classic HPCToolkit databases: `experiment.xml` + one `*.metric-db` file per thread.
//!
//! `experiment.xml` (DTD version 2.0, written by `hpcprof-mpi`): tables `LoadModuleTable`
//! (`LoadModule i n`), `FileTable` (`File i n`), `ProcedureTable` (`Procedure i n`),
//! `MetricDBTable` (`MetricDB i n t=inclusive|exclusive partner db-id`), then
//! `SecCallPathProfileData` with nested scopes: `PF` (procedure frame) and `Pr` (procedure,
//! e.g. inlined) with `i` (node id), `n` (procedure id or name), `f` (file id or name), `l`
//! (line), `lm` (load module); `L` (loop: `i f l`); `S` (statement: `i l`, the file of the
//! enclosing scope); `C` (call site: `i l`).
//!
//! `*.metric-db` (big endian): `"HPCPROF-metricdb__"`, a 5-byte version, endianness `b`, u32
//! node count N, u32 metric count M, then N x M doubles: row `k` holds node id `k + 1`,
//! columns in `db-id` order. The file name ends `-<rank>-<thread>-<host>-<pid>-<n>.metric-db`.
//!
//! Values: an inclusive/exclusive pair of `MetricDB`s (linked by `partner`) is one metric named
//! without the ` (I)`/` (E)` suffix. In these files a scope's exclusive value includes the
//! exclusive values of the statements, loops and inlined procedures inside it, which are
//! nodes of their own here; so a node's exclusive value is its stored value minus the stored
//! exclusive values of its `S`, `L` and `Pr` children (Hatchet subtracts the `S` children
//! only; the two agree where a scope has no loop or inlined procedure). Inclusive values are
//! read as stored. A metric with only an exclusive (inclusive) column gets its inclusive
//! (exclusive) values from the tree. A node counts for a thread when any value is non-zero;
//! nodes without values on any thread are listed as events without values.

use super::{NodeKind, combine_of, frame_name, metric_name_and_unit, report};
use crate::calltree::{Layout, ThreadValues, Tree, thread_data};
use crate::error::{FileError, LoadError};
use crate::format::{OpenOptions, Opened};
use crate::problem::Problem;
use crate::xml::{attr, line_of, push_text};
use perfscape_model::{Combine, Metric, Profile, ProfileBuilder, ThreadId};
use quick_xml::Reader;
use quick_xml::events::Event;
use rustc_hash::FxHashMap as HashMap;
use std::path::Path;

/// One `MetricDB` column.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricColumn {
    /// `i`.
    pub id: u32,
    /// `n`, e.g. `CPUTIME (usec) (I)`.
    pub name: String,
    /// `t`: `inclusive`, `exclusive` or `nil`.
    pub kind: String,
    /// `partner`: the id of the other half of an inclusive/exclusive pair.
    pub partner: Option<u32>,
    /// Column in the metric-db files (`db-id`, else the position by id).
    pub column: usize,
}

/// One calling-context node (scope) of the tree.
#[derive(Debug, Clone, PartialEq)]
pub struct Scope {
    /// Kind.
    pub kind: NodeKind,
    /// `i`: the node id (metric-db row `i - 1`).
    pub nid: u32,
    /// Parent scope (call sites are skipped).
    pub parent: Option<usize>,
    /// Procedure name (procedures) or empty.
    pub name: String,
    /// Source file.
    pub file: String,
    /// Line.
    pub line: u64,
    /// Node ids whose stored exclusive values are part of this node's (its S, L, Pr children).
    pub nested: Vec<u32>,
    /// Event frame name (see [`super::frame_name`]).
    pub frame: String,
}

/// The parsed `experiment.xml`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Experiment {
    /// `Header n`: the program name.
    pub program: String,
    /// Metric columns.
    pub metrics: Vec<MetricColumn>,
    /// The `combine` formulas of the `MetricTable`: (metric name, e.g. `CPUTIME (usec):Sum (I)`,
    /// formula, e.g. `sum($2, $2)`).
    pub combine: Vec<(String, String)>,
    /// Scopes in document order (parents first).
    pub scopes: Vec<Scope>,
}

/// Parses `experiment.xml`. Errors: (line, message).
pub fn parse_experiment(xml: &str) -> Result<Experiment, (usize, String)> {
    let mut reader = Reader::from_str(xml);
    let mut exp = Experiment::default();
    let mut files: HashMap<String, String> = HashMap::default();
    let mut procs: HashMap<String, String> = HashMap::default();
    // Open elements: (tag, scope index if the element is a scope, current file, procedure name).
    let mut stack: Vec<(String, Option<usize>, String, String)> = Vec::new();
    let mut in_data = false;
    let mut seen_root = false;
    let mut table_metric = String::new();
    let mut text = String::new();
    loop {
        let pos = reader.buffer_position() as usize;
        let err = |m: String| (line_of(xml, pos), m);
        let ev = reader
            .read_event()
            .map_err(|e| err(format!("malformed XML: {e}")))?;
        let (e, empty) = match &ev {
            Event::Start(e) => (e.clone(), false),
            Event::Empty(e) => (e.clone(), true),
            Event::End(_) => {
                if let Some((tag, ..)) = stack.pop()
                    && tag == "SecCallPathProfileData"
                {
                    in_data = false;
                }
                continue;
            }
            Event::Eof => break,
            other => {
                push_text(&mut text, other).map_err(err)?;
                continue;
            }
        };
        let tag = e.name().as_ref().to_string();
        if stack.is_empty() {
            if tag != "HPCToolkitExperiment" {
                return Err(err(format!("expected <HPCToolkitExperiment>, found <{tag}>")));
            }
            seen_root = true;
        }
        let get = |k: &str| attr(&e, k).map_err(err);
        let (parent_scope, parent_file, parent_proc) = stack
            .iter()
            .rev()
            .find(|(_, s, ..)| s.is_some())
            .map(|(_, s, f, p)| (*s, f.clone(), p.clone()))
            .unwrap_or((None, String::new(), String::new()));
        let mut scope = None;
        let mut file_here = parent_file.clone();
        let mut proc_here = parent_proc.clone();
        match tag.as_str() {
            "Header" => exp.program = get("n")?.unwrap_or_default(),
            "File" => {
                if let (Some(i), Some(n)) = (get("i")?, get("n")?) {
                    files.insert(i, n);
                }
            }
            "Procedure" => {
                if let (Some(i), Some(n)) = (get("i")?, get("n")?) {
                    procs.insert(i, n);
                }
            }
            "MetricDB" => {
                let id: u32 = get("i")?
                    .and_then(|v| v.trim().parse().ok())
                    .ok_or_else(|| err("<MetricDB> needs a numeric `i`".into()))?;
                let column = match get("db-id")? {
                    Some(v) => v
                        .trim()
                        .parse()
                        .map_err(|_| err(format!("<MetricDB> db-id `{v}` is not a number")))?,
                    None => usize::MAX,
                };
                exp.metrics.push(MetricColumn {
                    id,
                    name: get("n")?.unwrap_or_default(),
                    kind: get("t")?.unwrap_or_else(|| "nil".into()),
                    partner: get("partner")?.and_then(|v| v.trim().parse().ok()),
                    column,
                });
            }
            "Metric" => table_metric = get("n")?.unwrap_or_default(),
            "MetricFormula" if get("t")?.as_deref() == Some("combine") => {
                exp.combine
                    .push((table_metric.clone(), get("frm")?.unwrap_or_default()));
            }
            "SecCallPathProfileData" => in_data = true,
            "PF" | "Pr" | "L" | "S" if in_data => {
                let nid: u32 = get("i")?
                    .and_then(|v| v.trim().parse().ok())
                    .ok_or_else(|| err(format!("<{tag}> needs a numeric node id `i`")))?;
                let line: u64 = get("l")?
                    .and_then(|v| v.split('-').next().and_then(|s| s.trim().parse().ok()))
                    .unwrap_or(0);
                if let Some(f) = get("f")? {
                    file_here = files.get(&f).cloned().unwrap_or(f);
                }
                let kind = match tag.as_str() {
                    "PF" | "Pr" => NodeKind::Procedure,
                    "L" => NodeKind::Loop,
                    _ => NodeKind::Line,
                };
                let mut name = String::new();
                if kind == NodeKind::Procedure {
                    let n = get("n")?.unwrap_or_default();
                    name = procs.get(&n).cloned().unwrap_or(n);
                    if name.trim().is_empty() {
                        name = "(unnamed procedure)".into();
                    }
                    proc_here = name.clone();
                }
                let frame = frame_name(kind, &name, &file_here, line, &parent_proc);
                if matches!(tag.as_str(), "S" | "L" | "Pr")
                    && let Some(p) = parent_scope
                    && stack.last().is_some_and(|(_, s, ..)| s.is_some())
                {
                    exp.scopes[p].nested.push(nid);
                }
                exp.scopes.push(Scope {
                    kind,
                    nid,
                    parent: parent_scope,
                    name,
                    file: file_here.clone(),
                    line,
                    nested: Vec::new(),
                    frame,
                });
                scope = Some(exp.scopes.len() - 1);
            }
            _ => {}
        }
        if !empty {
            stack.push((tag, scope, file_here, proc_here));
        }
    }
    if !seen_root {
        return Err((
            1,
            "no <HPCToolkitExperiment> element: not an HPCToolkit experiment.xml".into(),
        ));
    }
    if !stack.is_empty() {
        return Err((
            line_of(xml, xml.len()),
            "the document ends early (truncated?)".into(),
        ));
    }
    // Columns by position of id when db-id is missing.
    let mut by_id: Vec<usize> = (0..exp.metrics.len()).collect();
    by_id.sort_by_key(|&k| exp.metrics[k].id);
    for (pos, k) in by_id.into_iter().enumerate() {
        if exp.metrics[k].column == usize::MAX {
            exp.metrics[k].column = pos;
        }
    }
    Ok(exp)
}

/// One parsed `*.metric-db` file: `nodes x metrics` values, row-major.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricDb {
    /// Number of node rows.
    pub nodes: usize,
    /// Number of metric columns.
    pub metrics: usize,
    /// Values, `[row * metrics + column]`.
    pub values: Vec<f64>,
}

const METRICDB_TAG: &[u8] = b"HPCPROF-metricdb__";

/// Parses a `*.metric-db` file.
pub fn parse_metric_db(b: &[u8]) -> Result<MetricDb, Problem> {
    if !b.starts_with(METRICDB_TAG) {
        return Err(Problem::at_offset(0, "expected the tag `HPCPROF-metricdb__`"));
    }
    if b.len() < 32 {
        return Err(Problem::at_offset(
            b.len() as u64,
            "the header (32 bytes) is cut short",
        ));
    }
    let big = match b[23] {
        b'b' => true,
        b'l' => false,
        other => {
            return Err(Problem::at_offset(
                23,
                format!("endianness byte is {other:#04x}, expected `b` or `l`"),
            ));
        }
    };
    let u32_at = |o: usize| {
        let a = [b[o], b[o + 1], b[o + 2], b[o + 3]];
        if big {
            u32::from_be_bytes(a)
        } else {
            u32::from_le_bytes(a)
        }
    };
    let nodes = u32_at(24) as usize;
    let metrics = u32_at(28) as usize;
    let expected = nodes.saturating_mul(metrics).saturating_mul(8);
    if b.len() - 32 != expected {
        return Err(Problem::at_offset(
            32,
            format!(
                "the header announces {nodes} nodes x {metrics} metrics ({expected} bytes) but {} bytes follow",
                b.len() - 32
            ),
        ));
    }
    let values = b[32..]
        .chunks_exact(8)
        .map(|c| {
            let mut a = [0u8; 8];
            a.copy_from_slice(c);
            if big {
                f64::from_be_bytes(a)
            } else {
                f64::from_le_bytes(a)
            }
        })
        .collect();
    Ok(MetricDb {
        nodes,
        metrics,
        values,
    })
}

/// The (rank, thread) in a metric-db file name `...-<rank>-<thread>-<host>-<pid>-<n>.metric-db`.
pub fn metric_db_thread(file_name: &str) -> Option<ThreadId> {
    let stem = file_name.strip_suffix(".metric-db")?;
    let parts: Vec<&str> = stem.split('-').collect();
    if parts.len() < 6 {
        return None;
    }
    let rank: u32 = parts[parts.len() - 5].parse().ok()?;
    let thread: u32 = parts[parts.len() - 4].parse().ok()?;
    Some(ThreadId::new(rank, 0, thread))
}

/// How the metric columns combine into model metrics: (name, inclusive column, exclusive column).
fn metric_pairs(exp: &Experiment) -> Vec<(String, Option<usize>, Option<usize>)> {
    let strip = |n: &str| {
        n.trim()
            .trim_end_matches("(I)")
            .trim_end_matches("(E)")
            .trim()
            .to_string()
    };
    let mut out: Vec<(String, Option<usize>, Option<usize>)> = Vec::new();
    let mut used = vec![false; exp.metrics.len()];
    for (k, m) in exp.metrics.iter().enumerate() {
        if used[k] {
            continue;
        }
        used[k] = true;
        let partner = m
            .partner
            .and_then(|p| exp.metrics.iter().position(|o| o.id == p).filter(|&o| !used[o]));
        if let Some(p) = partner {
            used[p] = true;
        }
        let other = partner.map(|p| &exp.metrics[p]);
        let (incl, excl) = match (m.kind.as_str(), other) {
            ("inclusive", Some(o)) => (Some(m.column), Some(o.column)),
            ("exclusive", Some(o)) => (Some(o.column), Some(m.column)),
            ("inclusive", None) => (Some(m.column), None),
            _ => (None, Some(m.column)),
        };
        out.push((strip(&m.name), incl, excl));
    }
    out
}

/// Builds the profile from a parsed experiment and the metric-db files of its threads.
/// Returns the profile and the event name of each scope.
pub fn build_experiment(
    exp: &Experiment,
    dbs: &[(ThreadId, MetricDb)],
) -> Result<(Profile, Vec<Problem>), Problem> {
    let pairs = metric_pairs(exp);
    if pairs.is_empty() {
        return Err(Problem::whole("experiment.xml lists no MetricDB"));
    }
    let mut tree = Tree::default();
    for s in &exp.scopes {
        tree.push(s.parent, s.frame.clone(), String::new());
    }
    let (mut layout, _) = Layout::new(&tree);
    let n = exp.scopes.len();
    let m = pairs.len();
    let mut warnings = Vec::new();
    let mut builder = ProfileBuilder::new(
        pairs
            .iter()
            .map(|(name, ..)| {
                let (short, unit) = metric_name_and_unit(name);
                // The combine formula of the first summary of this metric (`<name>:Sum`).
                let rule = exp
                    .combine
                    .iter()
                    .find(|(m, _)| m.starts_with(&format!("{name}:")))
                    .map_or(Combine::Sum, |(_, f)| {
                        combine_of(f.split('(').next().unwrap_or(""))
                    });
                Metric::new(short, unit).combined_by(rule)
            })
            .collect(),
    );
    let combine: Vec<Combine> = builder.metrics().iter().map(|x| x.combine).collect();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, s) in exp.scopes.iter().enumerate() {
        if let Some(p) = s.parent {
            children[p].push(i);
        }
    }
    let mut sorted: Vec<&(ThreadId, MetricDb)> = dbs.iter().collect();
    sorted.sort_by_key(|(t, _)| *t);
    for (k, (tid, db)) in sorted.iter().enumerate() {
        let raw = |nid: u32, col: usize| -> f64 {
            let row = (nid as usize).wrapping_sub(1);
            if row < db.nodes && col < db.metrics {
                db.values[row * db.metrics + col]
            } else {
                0.0
            }
        };
        let out_of_range = exp
            .scopes
            .iter()
            .filter(|s| s.nid == 0 || s.nid as usize > db.nodes)
            .count();
        if out_of_range > 0 {
            warnings.push(Problem::whole(format!(
                "thread {tid}: {out_of_range} node id(s) of experiment.xml are beyond the {} rows of its metric-db; their values are 0",
                db.nodes
            )));
        }
        let mut v = ThreadValues::new(n, m);
        for (i, s) in exp.scopes.iter().enumerate() {
            let mut any = false;
            for (j, (_, incl, excl)) in pairs.iter().enumerate() {
                let x = excl.map(|c| raw(s.nid, c) - s.nested.iter().map(|&q| raw(q, c)).sum::<f64>());
                let inc = incl.map(|c| raw(s.nid, c));
                let xv = x.unwrap_or(0.0);
                v.exclusive[i * m + j] = xv;
                v.inclusive[i * m + j] = inc.unwrap_or(0.0);
                any |= xv != 0.0 || inc.is_some_and(|x| x != 0.0);
            }
            v.present[i] = any;
        }
        // Fill the missing half of single-column metrics from the tree.
        for (j, (_, incl, excl)) in pairs.iter().enumerate() {
            match (incl, excl) {
                (None, Some(_)) => {
                    for (i, kids) in children.iter().enumerate().rev() {
                        let below: f64 = kids.iter().map(|&c| v.inclusive[c * m + j]).sum();
                        v.inclusive[i * m + j] = v.exclusive[i * m + j] + below;
                        v.present[i] |= v.inclusive[i * m + j] != 0.0;
                    }
                }
                (Some(_), None) => {
                    for (i, kids) in children.iter().enumerate() {
                        let below: f64 = kids.iter().map(|&c| v.inclusive[c * m + j]).sum();
                        v.exclusive[i * m + j] = v.inclusive[i * m + j] - below;
                        v.present[i] |= v.exclusive[i * m + j] != 0.0;
                    }
                }
                _ => {}
            }
        }
        let meta = vec![
            ("HPCToolkit program".to_string(), exp.program.clone()),
            ("HPCToolkit rank".to_string(), tid.node.to_string()),
            ("HPCToolkit thread".to_string(), tid.thread.to_string()),
        ];
        let data = thread_data(&mut layout, &mut builder, &combine, &v, &meta, k == 0);
        builder
            .add_thread(*tid, data)
            .map_err(|e| Problem::whole(format!("thread {tid}: {e}")))?;
    }
    let profile = crate::calltree::finish(
        builder,
        &layout,
        "calling-context node(s) (the same procedure reached from different call sites, or unresolved procedures)",
        &mut warnings,
    );
    Ok((profile, warnings))
}

/// Reads a classic database directory (see the module documentation).
pub fn read_experiment(dir: &Path, opts: &OpenOptions<'_>) -> Result<Opened, LoadError> {
    let xml_path = dir.join("experiment.xml");
    let nothing = |e: FileError| LoadError::NothingLoaded {
        path: dir.to_path_buf(),
        errors: vec![e],
    };
    let bytes = crate::input::read_file(&xml_path)?;
    let text = String::from_utf8_lossy(&bytes);
    let exp =
        parse_experiment(&text).map_err(|(line, msg)| nothing(FileError::at_line(&xml_path, line, msg)))?;
    let mut files: Vec<(ThreadId, std::path::PathBuf)> = Vec::new();
    let mut bad = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|source| LoadError::Io {
        path: dir.to_path_buf(),
        source,
    })? {
        let Ok(entry) = entry else { continue };
        let name = entry.file_name().to_string_lossy().to_string();
        if !name.ends_with(".metric-db") {
            continue;
        }
        match metric_db_thread(&name) {
            Some(t) => files.push((t, entry.path())),
            None => bad.push(FileError::whole(
                entry.path(),
                "metric-db file name does not end in -<rank>-<thread>-<host>-<pid>-<n>.metric-db; not loaded",
            )),
        }
    }
    files.sort();
    opts.progress_start(files.len() as u64 + 1);
    let mut report = report("hpctoolkit", 1, bytes.len() as u64);
    let mut dbs = Vec::new();
    for (t, path) in &files {
        if dbs.iter().any(|(o, _)| o == t) {
            bad.push(FileError::whole(
                path,
                format!("a second metric-db for thread {t}; not loaded"),
            ));
            continue;
        }
        match crate::input::read_member(path) {
            Ok(b) => match parse_metric_db(&b) {
                Ok(db) => {
                    report.files_read += 1;
                    report.bytes_read += b.len() as u64;
                    dbs.push((*t, db));
                }
                Err(e) => {
                    report.threads_skipped.push(*t);
                    bad.push(e.in_file(path));
                }
            },
            Err(e) => bad.push(e),
        }
        opts.progress_advance(1);
    }
    if dbs.is_empty() {
        return Err(LoadError::NothingLoaded {
            path: dir.to_path_buf(),
            errors: if bad.is_empty() {
                vec![FileError::whole(
                    dir,
                    "no *.metric-db files beside experiment.xml",
                )]
            } else {
                bad
            },
        });
    }
    let (profile, warnings) = build_experiment(&exp, &dbs).map_err(|e| nothing(e.in_file(&xml_path)))?;
    opts.progress_finish();
    report.bad_files = bad;
    report.warnings = warnings.into_iter().map(|w| w.in_file(&xml_path)).collect();
    Ok(Opened::profile(profile, report))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metric_db_names_and_headers() {
        assert_eq!(
            metric_db_thread("1.cpi-000003-012-a8c00270-160446-0.metric-db"),
            Some(ThreadId::new(3, 0, 12))
        );
        assert_eq!(metric_db_thread("x.metric-db"), None);
        let mut b = METRICDB_TAG.to_vec();
        b.extend(b"00.10b");
        b.extend(1u32.to_be_bytes());
        b.extend(2u32.to_be_bytes());
        b.extend(1.5f64.to_be_bytes());
        b.extend(2.5f64.to_be_bytes());
        assert_eq!(parse_metric_db(&b).unwrap().values, [1.5, 2.5]);
        for cut in 0..b.len() {
            assert!(parse_metric_db(&b[..cut]).is_err(), "cut {cut}");
        }
    }
}
