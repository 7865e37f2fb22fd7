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
//! - **Metrics**: every numeric "as value" attribute except `mpi.rank`, named by its alias
//!   (`attribute.alias`, e.g. `Total time`) or its own name (`sum#time.duration`). What each
//!   attribute is follows from the aggregation operators in its name ([`attributes`]):
//!   how its values combine ([`perfscape_model::Combine`]: `sum#`/`count` sum, `min#`
//!   minimum, `max#` maximum, `avg#` mean, `ratio#`/`variance#` not combinable), whether it is
//!   inclusive (`inclusive#`, `iscale#`, ...), its unit (`attribute.unit`; CUDA/ROCm activity
//!   durations `cupti.*.duration` in nanoseconds; other durations without a recorded unit are
//!   marked `unit not recorded`, since Caliper wrote microseconds before version 2.0 and
//!   seconds since). An inclusive attribute and its exclusive twin (the name without the
//!   inclusive operator, or the alias followed by ` (exc)`) are one metric. A sum stored
//!   exclusive gets its inclusive values by summing the subtree; stored inclusive, its
//!   exclusive values are the value minus the children's. A minimum, maximum, mean or ratio
//!   without its twin (Spot's `Min time/rank` = `min#inclusive#sum#time.duration`) cannot be
//!   split along the call tree: its value is both the exclusive and the inclusive value
//!   (noted), and a routine's flat value combines its nodes' values under the same rule (the
//!   minimum of their minima, the mean of their means: the file does not hold the statistic
//!   of the routine's total). Rows of the same path and rank are combined the same way.
//! - **Per-node attributes**: `any#` attributes (RAJAPerf's `ProblemSize`, `Reps`,
//!   `BlockSize`, ...: a property of the region, which Thicket keeps as per-node metadata) are
//!   not metrics: they become attributes of the node's event
//!   ([`perfscape_model::Profile::event_attributes`]), named by their alias. Node order
//!   (`aggregate.slot`) is not a value.

pub mod attributes;
pub mod cali;
pub mod json;

use crate::calltree::{Layout, ThreadValues, Tree, thread_data};
use crate::format::{self, FileScope, Format, Parts};
use crate::problem::{Parsed, Problem};
use attributes::Role;
use perfscape_model::{Combine, Combiner, Metric, Profile, ProfileBuilder, ThreadId, Unit};
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

/// How a metric's values are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stored {
    /// Exclusive and inclusive columns both present.
    Pair(usize, usize),
    /// A sum stored per node: inclusive = subtree sum.
    ExclusiveSum(usize),
    /// A sum stored including the subtree: exclusive = value - children.
    InclusiveSum(usize),
    /// A statistic that does not add up: value is both exclusive and inclusive.
    Statistic(usize),
}

/// One metric of the profile: name, unit, rule and where its values are.
#[derive(Debug, Clone, PartialEq)]
struct Planned {
    name: String,
    unit: Unit,
    combine: Combine,
    stored: Stored,
}

/// What the columns become: metrics, per-node attribute columns, skipped columns.
#[derive(Debug, Clone, Default)]
struct Plan {
    metrics: Vec<Planned>,
    node_attributes: Vec<usize>,
    skipped: Vec<usize>,
}

fn display(c: &Column) -> String {
    c.alias.clone().unwrap_or_else(|| c.name.clone())
}

fn plan(columns: &[Column]) -> Plan {
    let roles: Vec<Role> = columns.iter().map(|c| attributes::role(&c.name)).collect();
    let by_name: HashMap<&str, usize> = columns
        .iter()
        .enumerate()
        .map(|(i, c)| (c.name.as_str(), i))
        .collect();
    let by_alias: HashMap<&str, usize> = columns
        .iter()
        .enumerate()
        .filter_map(|(i, c)| c.alias.as_deref().map(|a| (a, i)))
        .collect();
    let exclusive_of = |i: usize| match roles[i] {
        Role::Metric {
            combine,
            inclusive: false,
        } => Some(combine),
        _ => None,
    };
    // Inclusive column -> its exclusive twin (same rule).
    let mut twin_of: HashMap<usize, usize> = HashMap::default();
    let mut is_twin = vec![false; columns.len()];
    for (i, c) in columns.iter().enumerate() {
        let Role::Metric {
            combine,
            inclusive: true,
        } = roles[i]
        else {
            continue;
        };
        let by_twin_name = attributes::exclusive_twin(&c.name).and_then(|n| by_name.get(n.as_str()).copied());
        let by_twin_alias = c
            .alias
            .as_deref()
            .and_then(|a| by_alias.get(attributes::exclusive_alias(a).as_str()).copied());
        if let Some(x) = by_twin_name
            .or(by_twin_alias)
            .filter(|&x| exclusive_of(x) == Some(combine) && !is_twin[x])
        {
            twin_of.insert(i, x);
            is_twin[x] = true;
        }
    }
    let mut out = Plan::default();
    for (i, c) in columns.iter().enumerate() {
        let (combine, inclusive) = match roles[i] {
            Role::NodeAttribute => {
                out.node_attributes.push(i);
                continue;
            }
            Role::Skipped => {
                out.skipped.push(i);
                continue;
            }
            Role::Metric { .. } if is_twin[i] => continue,
            Role::Metric { combine, inclusive } => (combine, inclusive),
        };
        let unit = attributes::unit(&c.name, c.unit.as_deref());
        let (name, stored) = match twin_of.get(&i) {
            // The pair takes the inclusive column's alias (`Min time/rank`), else the
            // exclusive column's name (`sum#time.duration`).
            Some(&x) => (
                c.alias.clone().unwrap_or_else(|| display(&columns[x])),
                Stored::Pair(x, i),
            ),
            None if combine != Combine::Sum => (display(c), Stored::Statistic(i)),
            None if inclusive => (display(c), Stored::InclusiveSum(i)),
            None => (display(c), Stored::ExclusiveSum(i)),
        };
        out.metrics.push(Planned {
            name,
            unit,
            combine,
            stored,
        });
    }
    out
}

/// A per-node attribute value as text: integers without a decimal point.
fn attribute_text(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// Builds the profile; returns it, the warnings, and the notes.
pub fn build(data: &CaliperData) -> Result<(Profile, Vec<Problem>, Vec<String>), Problem> {
    let plan = plan(&data.columns);
    let metrics = &plan.metrics;
    if metrics.is_empty() {
        return Err(Problem::whole("the file has no numeric value attribute (metric)"));
    }
    if data.rows.is_empty() {
        return Err(Problem::whole("the file has no record with a call path"));
    }
    let mut warnings: Vec<Problem> = data.warnings.iter().cloned().map(Problem::whole).collect();
    let mut notes = Vec::new();
    for m in metrics {
        if let Stored::Statistic(_) = m.stored {
            notes.push(format!(
                "metric `{}` combines by {} and has no exclusive/inclusive twin: it cannot be split along the call tree, so each node's value is both its exclusive and its inclusive value",
                m.name, m.combine
            ));
        }
    }
    if !plan.node_attributes.is_empty() {
        let names: Vec<String> = plan
            .node_attributes
            .iter()
            .map(|&c| display(&data.columns[c]))
            .collect();
        notes.push(format!(
            "{} attribute(s) hold a property of each region (Caliper `any`), not a measurement: kept as per-node attributes, not metrics: {}",
            names.len(),
            names.join(", ")
        ));
    }
    for &c in &plan.skipped {
        notes.push(format!(
            "attribute `{}` is Caliper's node order or an aggregation helper, not a value; not read",
            data.columns[c].name
        ));
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
    let (mut layout, renamed) = Layout::new(&tree);
    if renamed > 0 {
        warnings.push(Problem::whole(format!(
            "{renamed} region name(s) contain `=>`; written as `= >`"
        )));
    }
    let n = tree.len();
    let m = metrics.len();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, p) in tree.parent.iter().enumerate() {
        if let Some(p) = p {
            children[*p].push(i);
        }
    }
    // How each column's values combine when several records hold the same node and rank.
    let column_rule: Vec<Combine> = data
        .columns
        .iter()
        .map(|c| match attributes::role(&c.name) {
            Role::Metric { combine, .. } => combine,
            _ => Combine::Sum,
        })
        .collect();
    // Group rows by rank.
    let mut ranks: Vec<u32> = data.rows.iter().map(|r| r.rank.unwrap_or(0)).collect();
    ranks.sort_unstable();
    ranks.dedup();
    let combine: Vec<Combine> = metrics.iter().map(|p| p.combine).collect();
    let mut builder = ProfileBuilder::new(
        metrics
            .iter()
            .map(|p| Metric::new(p.name.clone(), p.unit.clone()).combined_by(p.combine))
            .collect(),
    );
    let mut node_attributes: Vec<(usize, String, String)> = Vec::new();
    let mut is_node_attribute = vec![false; data.columns.len()];
    for &c in &plan.node_attributes {
        is_node_attribute[c] = true;
    }
    for (k, &rank) in ranks.iter().enumerate() {
        // Stored values per node and column (None = not stored).
        let cols = data.columns.len();
        let mut stored: Vec<Option<Combiner>> = vec![None; n * cols];
        let mut present = vec![false; n];
        for (row, node) in data.rows.iter().zip(&node_of_row) {
            let (Some(node), true) = (node, row.rank.unwrap_or(0) == rank) else {
                continue;
            };
            present[*node] = true;
            for &(c, v) in &row.values {
                if is_node_attribute[c] {
                    // Every distinct value is kept (ProfileBuilder::set_event_attribute).
                    node_attributes.push((*node, display(&data.columns[c]), attribute_text(v)));
                    continue;
                }
                stored[node * cols + c]
                    .get_or_insert_with(|| Combiner::new(column_rule[c]))
                    .push(v);
            }
        }
        let value = |node: usize, c: usize| stored[node * cols + c].map(|x| x.finish().unwrap_or(f64::NAN));
        let get = |node: usize, c: usize| value(node, c).unwrap_or(0.0);
        let mut v = ThreadValues::new(n, m);
        for (j, p) in metrics.iter().enumerate() {
            match p.stored {
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
                        let own = value(node, i);
                        v.inclusive[node * m + j] = own.unwrap_or(below);
                        v.exclusive[node * m + j] = own.map_or(0.0, |own| own - below);
                    }
                }
                Stored::Statistic(c) => {
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
        let td = thread_data(&mut layout, &mut builder, &combine, &v, &meta, k == 0);
        builder
            .add_thread(ThreadId::new(rank, 0, 0), td)
            .map_err(|e| Problem::whole(format!("rank {rank}: {e}")))?;
    }
    for (node, name, value) in &node_attributes {
        let e = layout.node_event(&mut builder, *node);
        builder.set_attribute(e, name, value);
    }
    let profile = crate::calltree::finish(builder, &layout, "node(s)", &mut warnings);
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
        warnings,
        partial: Vec::new(),
        notes,
    })
}
