//! Caliper profiles: the native `.cali` record format and the `json-split` JSON that
//! `cali-query -q "... format json-split"` writes.
//!
//! Both give records (rows) that place metric values on a call path of region names, possibly
//! per MPI rank. Mapping into the model (checked against Hatchet's readers):
//! - **Call tree**: the path of each record (the `path` attribute made of Caliper's nested
//!   region attributes `function`, `loop`, `region`, `mpi.function`, ...; in JSON the
//!   `source.function#callpath.address` hierarchy when present, else `path`); one callpath
//!   event per path, one flat event per region name. Records of sampling profiles with a
//!   source location (`sourceloc#cali.sampler.pc` = `file:line`) add a child
//!   `[SAMPLE] <function> [{file} {line}]` (TAU's name for time sampled on a line) unless the
//!   location is unknown (`UNKNOWN:0`). Records of other Spot channels than `regionprofile`
//!   are left out, as Hatchet does.
//! - **Threads**: `mpi.rank` -> node (`ThreadId{rank, 0, 0}`); files without ranks (Caliper
//!   aggregated them already, e.g. Spot's min/max/avg over ranks) are one thread `0.0.0`.
//! - **Metrics**: every numeric "as value" attribute except `mpi.rank` and the node-order
//!   `aggregate.slot`, named by its alias (`attribute.alias`, e.g. `Total time`) or its own
//!   name (`sum#time.duration`), unit from `attribute.unit` (`sec`); a time without a recorded
//!   unit is marked `unit not recorded` (Caliper wrote microseconds before version 2.0 and
//!   seconds since, so nothing is assumed); other metrics are counts. A pair `X` /
//!   `inclusive#X` is one metric with exclusive `X` and inclusive `inclusive#X`. Sums (names
//!   starting `sum#`, `count`, or without an aggregation prefix) stored exclusive get their
//!   inclusive values by summing the subtree; stored inclusive (`...inclusive#...`), their
//!   exclusive values are the value minus the children's. Minimum, maximum and average
//!   statistics (`min#`, `max#`, `avg#`) do not add up along a call tree: their value is
//!   both the exclusive and the inclusive value (noted), and per-routine flat events take the
//!   minimum / maximum / sum. Rows of the same path and rank are combined the same way.

pub mod cali;
pub mod json;

use crate::calltree::{Layout, ThreadValues, Tree, thread_data};
use crate::format::{self, FileScope, Format, Parts};
use crate::problem::{Parsed, Problem};
use perfscape_model::{Combine, Metric, Profile, ProfileBuilder, ThreadId, Unit};
use rustc_hash::FxHashMap as HashMap;

/// One value column (Caliper attribute) of the input.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    /// Attribute name, e.g. `sum#inclusive#sum#time.duration`.
    pub name: String,
    /// `attribute.alias`, if any (e.g. `Total time`).
    pub alias: Option<String>,
    /// `attribute.unit`, if any (e.g. `sec`).
    pub unit: Option<String>,
}

/// One record: a call path, an optional rank, and values by column index.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Region names from the root.
    pub path: Vec<String>,
    /// `mpi.rank`, if the record has one.
    pub rank: Option<u32>,
    /// (column, value).
    pub values: Vec<(usize, f64)>,
}

/// What a reader extracted from a Caliper file.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CaliperData {
    /// Value columns.
    pub columns: Vec<Column>,
    /// Records with a path.
    pub rows: Vec<Row>,
    /// Run metadata (`globals`, or the JSON's top-level entries).
    pub globals: Vec<(String, String)>,
    /// Problems and facts worth a warning.
    pub warnings: Vec<String>,
}

/// How a metric's values are stored and combined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stored {
    /// Exclusive and inclusive columns both present.
    Pair(usize, usize),
    /// A sum stored per node: inclusive = subtree sum.
    ExclusiveSum(usize),
    /// A sum stored including the subtree: exclusive = value - children.
    InclusiveSum(usize),
    /// A statistic that does not add up: value is both exclusive and inclusive.
    Statistic(usize, Combine),
}

/// A statistic's combination from its name prefix (`min#`, `max#`, `avg#`), or `None` for sums.
fn statistic(name: &str) -> Option<Combine> {
    let first = name.split('#').next().unwrap_or("");
    if !name.contains('#') {
        return None;
    }
    match first {
        "min" => Some(Combine::Min),
        "max" => Some(Combine::Max),
        "sum" | "count" | "inclusive" => None,
        _ if first.starts_with("avg") => Some(Combine::Sum),
        _ => None,
    }
}

fn plan(columns: &[Column]) -> Vec<(String, Unit, Stored)> {
    let mut out = Vec::new();
    let index: HashMap<&str, usize> = columns
        .iter()
        .enumerate()
        .map(|(i, c)| (c.name.as_str(), i))
        .collect();
    let mut used = vec![false; columns.len()];
    for (i, c) in columns.iter().enumerate() {
        if used[i] {
            continue;
        }
        let display = |c: &Column| c.alias.clone().unwrap_or_else(|| c.name.clone());
        let unit = match c.unit.as_deref().map(str::trim) {
            Some("sec" | "s") => Unit::Seconds,
            Some("usec" | "us") => Unit::Microseconds,
            Some("nsec" | "ns") => Unit::Nanoseconds,
            Some("byte" | "bytes") => Unit::Bytes,
            Some(other) if !other.is_empty() => Unit::Other(other.to_string()),
            // Caliper records no unit: durations were microseconds before Caliper 2.0 and
            // seconds since, so nothing is assumed for them.
            _ if c.name.contains("time") => Unit::Other("unit not recorded".to_string()),
            _ => Unit::Count,
        };
        // `inclusive#X` with a column `X`, or `X` with a column `inclusive#X`.
        let partner = match c.name.strip_prefix("inclusive#") {
            Some(base) => index.get(base).map(|&b| (b, i)),
            None => index
                .get(format!("inclusive#{}", c.name).as_str())
                .map(|&inc| (i, inc)),
        };
        if let Some((excl, incl)) = partner {
            used[excl] = true;
            used[incl] = true;
            out.push((display(&columns[excl]), unit, Stored::Pair(excl, incl)));
            continue;
        }
        used[i] = true;
        let stored = match statistic(&c.name) {
            Some(comb) => Stored::Statistic(i, comb),
            None if c.name.contains("inclusive#") => Stored::InclusiveSum(i),
            None => Stored::ExclusiveSum(i),
        };
        out.push((display(c), unit, stored));
    }
    out
}

/// Builds the profile; returns it, the warnings, and the notes.
pub fn build(data: &CaliperData) -> Result<(Profile, Vec<String>, Vec<String>), Problem> {
    let metrics = plan(&data.columns);
    if metrics.is_empty() {
        return Err(Problem::whole("the file has no numeric value attribute (metric)"));
    }
    if data.rows.is_empty() {
        return Err(Problem::whole("the file has no record with a call path"));
    }
    let mut warnings = data.warnings.clone();
    let mut notes = Vec::new();
    for (name, _, s) in &metrics {
        if let Stored::Statistic(..) = s {
            notes.push(format!(
                "metric `{name}` is a minimum/maximum/average statistic: it does not add up along the call tree, so each node's value is both its exclusive and its inclusive value"
            ));
        }
    }
    // The call tree: a trie of paths.
    let mut tree = Tree::default();
    let mut child: HashMap<(Option<usize>, String), usize> = HashMap::default();
    let mut node_of_row = Vec::with_capacity(data.rows.len());
    for row in &data.rows {
        let mut parent = None;
        for frame in &row.path {
            let key = (parent, frame.clone());
            let n = match child.get(&key) {
                Some(&n) => n,
                None => {
                    let n = tree.push(parent, frame.clone(), String::new());
                    child.insert(key, n);
                    n
                }
            };
            parent = Some(n);
        }
        node_of_row.push(parent);
    }
    let (layout, renamed) = Layout::new(&tree);
    if renamed > 0 {
        warnings.push(format!("{renamed} region name(s) contain `=>`; written as `= >`"));
    }
    let n = tree.len();
    let m = metrics.len();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, p) in tree.parent.iter().enumerate() {
        if let Some(p) = p {
            children[*p].push(i);
        }
    }
    // Group rows by rank.
    let mut ranks: Vec<u32> = data.rows.iter().map(|r| r.rank.unwrap_or(0)).collect();
    ranks.sort_unstable();
    ranks.dedup();
    let combine: Vec<Combine> = metrics
        .iter()
        .map(|(_, _, s)| match s {
            Stored::Statistic(_, c) => *c,
            _ => Combine::Sum,
        })
        .collect();
    let mut builder = ProfileBuilder::new(
        metrics
            .iter()
            .zip(&combine)
            .map(|((name, unit, _), &c)| Metric::new(name.clone(), unit.clone()).combined_by(c))
            .collect(),
    );
    for (k, &rank) in ranks.iter().enumerate() {
        // Stored values per node and column (NaN = not stored).
        let cols = data.columns.len();
        let mut stored = vec![f64::NAN; n * cols];
        let mut present = vec![false; n];
        for (row, node) in data.rows.iter().zip(&node_of_row) {
            let (Some(node), true) = (node, row.rank.unwrap_or(0) == rank) else {
                continue;
            };
            present[*node] = true;
            for &(c, v) in &row.values {
                let cell = &mut stored[node * cols + c];
                let comb = statistic(&data.columns[c].name).unwrap_or(Combine::Sum);
                *cell = if cell.is_nan() {
                    v
                } else {
                    match comb {
                        Combine::Min => cell.min(v),
                        Combine::Max => cell.max(v),
                        _ => *cell + v,
                    }
                };
            }
        }
        let get = |node: usize, c: usize| {
            let v = stored[node * cols + c];
            if v.is_nan() { 0.0 } else { v }
        };
        let mut v = ThreadValues::new(n, m);
        for (j, (_, _, s)) in metrics.iter().enumerate() {
            match *s {
                Stored::Pair(x, i) => {
                    for node in 0..n {
                        v.exclusive[node * m + j] = get(node, x);
                        v.inclusive[node * m + j] = get(node, i);
                    }
                }
                Stored::ExclusiveSum(x) => {
                    for node in (0..n).rev() {
                        let below: f64 = children[node].iter().map(|&c| v.inclusive[c * m + j]).sum();
                        v.exclusive[node * m + j] = get(node, x);
                        v.inclusive[node * m + j] = get(node, x) + below;
                    }
                }
                Stored::InclusiveSum(i) => {
                    // A node without a stored value (no record) gets its children's sum.
                    for node in (0..n).rev() {
                        let below: f64 = children[node].iter().map(|&c| v.inclusive[c * m + j]).sum();
                        let own = stored[node * cols + i];
                        v.inclusive[node * m + j] = if own.is_nan() { below } else { own };
                        v.exclusive[node * m + j] = if own.is_nan() { 0.0 } else { own - below };
                    }
                }
                Stored::Statistic(c, _) => {
                    for node in 0..n {
                        v.exclusive[node * m + j] = get(node, c);
                        v.inclusive[node * m + j] = get(node, c);
                    }
                }
            }
        }
        // A node counts for the rank when it has a record there or a descendant has one
        // (Hatchet lists such intermediate nodes with zeros).
        for node in (0..n).rev() {
            if children[node].iter().any(|&c| present[c]) {
                present[node] = true;
            }
        }
        v.present = present;
        let mut meta = data.globals.clone();
        if data.rows.iter().any(|r| r.rank.is_some()) {
            meta.push(("mpi.rank".to_string(), rank.to_string()));
        }
        let td = thread_data(&layout, &combine, &v, &meta, k == 0);
        builder
            .add_thread(ThreadId::new(rank, 0, 0), td)
            .map_err(|e| Problem::whole(format!("rank {rank}: {e}")))?;
    }
    for (path, count) in &layout.merged_paths {
        warnings.push(format!(
            "{count} more node(s) share the callpath `{path}`; their values were combined"
        ));
    }
    let (profile, bnotes) = builder.finish();
    warnings.extend(
        bnotes
            .into_iter()
            .map(|n| format!("thread {}: {}", n.thread, n.message)),
    );
    Ok((profile, warnings, notes))
}

/// True when the first bytes look like a Caliper `.cali` stream.
pub fn sniff_cali(head: &[u8]) -> bool {
    head.starts_with(b"__rec=")
}

/// True when a JSON document's first bytes look like Caliper json-split: an object whose
/// first key is `"data"` (cali-query writes `data`, `columns`, `column_metadata`, `nodes` in
/// that order), or whose first bytes already show `"column_metadata"`. Chrome traces start
/// with `[` or with keys such as `traceEvents`.
pub fn sniff_json(head: &[u8]) -> bool {
    let t = String::from_utf8_lossy(head);
    let Some(rest) = t.trim_start().strip_prefix('{') else {
        return false;
    };
    rest.trim_start().starts_with("\"data\"") || t.contains("\"column_metadata\"")
}

/// The Caliper format: a `.cali` record stream or json-split JSON (chosen by content).
pub const FORMAT: Format = Format {
    name: "caliper",
    description: "Caliper profiles (.cali, or json-split JSON)",
    example: "caliper/thicket-mpi-scaling/64_cores.cali",
    sniff: |p| p.head().is_some_and(|h| sniff_cali(h) || sniff_json(h)),
    read: format::Read::Bytes(parse_caliper),
    gives: Parts::PROFILE,
    file_scope: FileScope::File,
};

/// Parses a `.cali` or json-split file (chosen by content) into a profile.
pub fn parse_caliper(bytes: &[u8]) -> Result<Parsed, Problem> {
    let data = if sniff_cali(bytes) {
        let text = String::from_utf8_lossy(bytes);
        cali::parse_cali(&text).map_err(|(line, msg)| Problem::at_line(line, msg))?
    } else {
        json::parse_json_split(bytes)?
    };
    let (profile, warnings, notes) = build(&data)?;
    Ok(Parsed {
        profile,
        trace: None,
        warnings: warnings.into_iter().map(Problem::whole).collect(),
        partial: Vec::new(),
        notes,
    })
}
