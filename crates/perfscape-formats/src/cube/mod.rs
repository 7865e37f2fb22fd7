//! Score-P / Scalasca CUBE4 profiles (`.cubex`): a tar archive of `anchor.xml` (metric tree,
//! call tree, system tree) and one `<id>.index` + `<id>.data` pair per stored metric.
//!
//! Mapping into the model (numbers equal pycubexr's on every cell of every corpus file, tested
//! against its reference tables; see `tests/fixtures/cube`):
//! - **Metrics**: every stored metric of the metric tree, named by its `uniq_name` (as pycubexr
//!   and Score-P name it: `visits`, `time`, `min_time`, ...), unit from `uom` (`sec` ->
//!   seconds, `occ`/`#` -> count, `bytes` -> bytes). Order: Score-P's `time` (else the first
//!   metric in seconds that adds up) first, so that it is the default metric everywhere; the
//!   others in metric-tree order. Plain-number value types are read (INT8..UINT64, the C type
//!   names CubeLib accepts, DOUBLE, FLOAT, MINDOUBLE, MAXDOUBLE); metrics whose values are not
//!   one number (TAU_ATOMIC, RATE, COMPLEX, NDOUBLES(n), HISTOGRAM(n), SCALE_FUNC) and derived
//!   metrics (CubePL expressions, no stored values) are left out with a warning. A metric the
//!   archive has no data for (Score-P leaves out metrics that stayed zero) is kept with value 0
//!   everywhere, as pycubexr reports it.
//! - **How values combine** ([`perfscape_model::Combine`]), from the data type: `MINDOUBLE`
//!   metrics (Score-P's `min_time`) by minimum, `MAXDOUBLE` (`max_time`) by maximum, every
//!   other plain type by sum. Source: CubeLib's value classes, whose `+` is `min`/`max` for
//!   those two types (pycubexr's `MinValues`/`MaxValues`: `np.minimum`/`np.maximum` along the
//!   call tree, `min()`/`max()` over locations). The analysis combines them the same way over
//!   threads (a total of `min_time` is its minimum over threads, with no percentage).
//! - **Inclusive/exclusive** as CUBE defines them: an `EXCLUSIVE` metric stores exclusive
//!   values (inclusive = own value combined with the inclusive values of the callees); an
//!   `INCLUSIVE` metric stores inclusive values (exclusive = own value - the callees' values
//!   for sums; for unsigned types each subtraction stops at 0, as CubeLib/pycubexr do; a
//!   minimum/maximum's "subtraction" is again its `min`/`max`, as in CubeLib/pycubexr). For
//!   MINDOUBLE/MAXDOUBLE, cnodes without stored values take no part, but a 0 that Score-P
//!   wrote for a location that never visited a callee does, as in the reference tables shipped
//!   beside the corpus files (`excl.csv`/`incl.csv`): the inclusive minimum time of `main` is 0
//!   on a location where some callee was never visited. pycubexr 2.1.1 differs there: it skips
//!   a callee whose values are 0 on every location (`MinMaxValues._check`), which changes 3
//!   inclusive `min_time` cells of the corpus (pycubexr-time-p4); perfscape follows the shipped
//!   tables. `SIMPLE` metrics and metrics marked `convertible="false"` have exclusive =
//!   inclusive = the stored value. UINT64 values above 0xFFFF_FFFF_FFFF_FBFF read as 0 (CubeLib
//!   does not keep them; warned).
//! - **Call tree**: one callpath event per cnode, named by the region names of its path joined
//!   with `" => "`; one flat event per region (see `calltree`: a region's nodes combined under
//!   each metric's rule). Regions that share a name but not a source file/line get
//!   ` [{file} {line}]` appended (TAU's form); cnode parameters are appended as
//!   ` [ <key> = <value> ]` (TAU's parameter-timer form); sibling cnodes of the same region that
//!   still look alike get their call-site line ` [{file} {line}]` when the anchor gives one,
//!   otherwise they are combined into one event (warned). Groups: the region's paradigm in
//!   upper case (`MPI`, `OPENMP`, `COMPILER`, ...).
//! - **Calls**: the exclusive `visits` metric when present (else 0, noted); subcalls = calls of
//!   the callees.
//! - **Threads**: location group (process) -> node, location -> thread:
//!   `ThreadId{node: group rank, context: 0, thread: location rank}`. When ranks are not
//!   distinct numbers (across groups, or within a group) the position in document order is
//!   used instead. A location has a call-tree node when any of its values there (visits or any
//!   metric, exclusive or inclusive) is non-zero. Each thread's metadata keeps the original
//!   location name, id, rank and type, its process name and rank and its system-tree path.
//!   Values are ordered by location `Id`, which must be 0..L-1.

pub mod anchor;
pub mod archive;
pub mod values;

use crate::calltree::{Layout, ThreadValues, Tree, thread_data};
use crate::format::{self, FileScope, Format, Parts};
use crate::problem::{Parsed, Problem};
use anchor::{Anchor, CubeMetric, MetricKind, parse_anchor};
use archive::{Member, read_archive};
use perfscape_model::{Combine, Metric, Profile, ProfileBuilder, ThreadId, Unit};
use rustc_hash::FxHashMap as HashMap;
use std::io::Read;
use values::{ValueType, parse_data, parse_index};

/// A CUBE profile turned into the model, with what the reader had to say about it.
#[derive(Debug)]
pub struct CubeProfile {
    /// The profile.
    pub profile: Profile,
    /// Problems that did not stop the load (metrics left out, repaired headers, ...).
    pub warnings: Vec<Problem>,
    /// Facts worth knowing that are not problems (metrics Score-P left out because they
    /// stayed 0, ...).
    pub notes: Vec<String>,
}

/// The model unit of a CUBE `uom`.
pub fn unit_of(uom: &str) -> Unit {
    match uom.trim() {
        "sec" | "s" | "seconds" => Unit::Seconds,
        "usec" | "us" => Unit::Microseconds,
        "nsec" | "ns" => Unit::Nanoseconds,
        "bytes" | "byte" | "B" => Unit::Bytes,
        "occ" | "#" | "" => Unit::Count,
        "cycles" | "cyc" => Unit::Cycles,
        other => Unit::Other(other.to_string()),
    }
}

/// pycubexr's "wide" enumeration of the cnodes (used to number the rows of INCLUSIVE
/// metrics): for each root, the root, then depth first: when a node is visited, all its
/// children are numbered, then the children are visited in order.
fn wide_enumeration(anchor: &Anchor, children: &[Vec<usize>]) -> Vec<usize> {
    let mut order = Vec::with_capacity(anchor.cnodes.len());
    for (root, c) in anchor.cnodes.iter().enumerate() {
        if c.parent.is_some() {
            continue;
        }
        order.push(root);
        let mut stack = vec![root];
        while let Some(n) = stack.pop() {
            order.extend(children[n].iter().copied());
            stack.extend(children[n].iter().rev().copied());
        }
    }
    order
}

struct MetricData {
    metric: Metric,
    /// `[cnode * L + location]`.
    exclusive: Vec<f64>,
    inclusive: Vec<f64>,
}

fn member<'a>(members: &'a [Member], name: &str) -> Option<&'a Member> {
    members.iter().find(|m| m.name == name)
}

/// Reads the stored values of one metric into a dense `cnodes x locations` matrix; cnodes
/// the index does not list get `fill`.
fn stored_values(
    m: &CubeMetric,
    ty: ValueType,
    members: &[Member],
    enumeration: &[usize],
    n_locations: usize,
    fill: f64,
    warnings: &mut Vec<Problem>,
) -> Result<Option<Vec<f64>>, Problem> {
    let n_cnodes = enumeration.len();
    let index_name = format!("{}.index", m.id);
    let data_name = format!("{}.data", m.id);
    let (Some(index), Some(data)) = (member(members, &index_name), member(members, &data_name)) else {
        return Ok(None);
    };
    let at = |mem: &Member, (off, msg): (u64, String)| {
        Problem::at_offset(
            mem.offset + off,
            format!("member `{}` of metric `{}`: {msg}", mem.name, m.uniq_name),
        )
    };
    let idx = parse_index(&index.data).map_err(|e| at(index, e))?;
    let count = idx.tree_indices.len() * n_locations;
    let vals = parse_data(&data.data, idx.endian, ty, count).map_err(|e| at(data, e))?;
    if vals.zeroed_huge > 0 {
        warnings.push(Problem::at_offset(
            data.offset,
            format!(
                "metric `{}`: {} UINT64 value(s) above 0xFFFF_FFFF_FFFF_FBFF read as 0 (CubeLib does not keep them either)",
                m.uniq_name, vals.zeroed_huge
            ),
        ));
    }
    let mut dense = vec![fill; n_cnodes * n_locations];
    for (row, &t) in idx.tree_indices.iter().enumerate() {
        let Some(&c) = enumeration.get(t as usize) else {
            return Err(at(
                index,
                (
                    0,
                    format!("tree index {t} is out of range: the call tree has {n_cnodes} cnodes"),
                ),
            ));
        };
        dense[c * n_locations..(c + 1) * n_locations]
            .copy_from_slice(&vals.values[row * n_locations..(row + 1) * n_locations]);
    }
    Ok(Some(dense))
}

/// Two values combined along the call tree under a CUBE metric's rule (sum, or the `min`/`max`
/// that CubeLib's `MinDoubleValue`/`MaxDoubleValue` use as their `+`); a NaN (no stored value)
/// takes no part in a minimum or maximum.
fn pairwise(rule: Combine, a: f64, b: f64) -> f64 {
    match rule {
        Combine::Min => a.min(b),
        Combine::Max => a.max(b),
        _ => a + b,
    }
}

/// Derives the missing kind (inclusive from exclusive or the reverse) as CUBE defines it.
/// For minimum/maximum metrics, cells of cnodes without stored values are NaN on input and
/// take no part (`f64::min`/`max` return the other operand); they are 0 on output.
fn convert(
    stored: &[f64],
    kind: &MetricKind,
    convertible: bool,
    combine: Combine,
    unsigned: bool,
    children: &[Vec<usize>],
    l: usize,
) -> (Vec<f64>, Vec<f64>) {
    let n = children.len();
    match (kind, convertible) {
        (MetricKind::Exclusive, true) => {
            let mut incl = stored.to_vec();
            // Children come after their parent in document order: go backwards.
            for c in (0..n).rev() {
                for &k in &children[c] {
                    let (head, tail) = incl.split_at_mut(k * l);
                    let child = &tail[..l];
                    for (a, &b) in head[c * l..(c + 1) * l].iter_mut().zip(child) {
                        *a = pairwise(combine, *a, b);
                    }
                }
            }
            (stored.to_vec(), incl)
        }
        (MetricKind::Inclusive, true) => {
            let mut excl = stored.to_vec();
            for c in 0..n {
                for &k in &children[c] {
                    let child = &stored[k * l..(k + 1) * l];
                    for (a, &b) in excl[c * l..(c + 1) * l].iter_mut().zip(child) {
                        *a = match combine {
                            Combine::Sum if unsigned => *a - b.min(*a),
                            Combine::Sum => *a - b,
                            other => pairwise(other, *a, b),
                        };
                    }
                }
            }
            (excl, stored.to_vec())
        }
        _ => (stored.to_vec(), stored.to_vec()),
    }
}

fn nan_to_zero(mut v: Vec<f64>) -> Vec<f64> {
    for x in &mut v {
        if x.is_nan() {
            *x = 0.0;
        }
    }
    v
}

fn parse_u32(s: &str) -> Option<u32> {
    s.trim().parse().ok()
}

/// Thread ids of the locations (see the module documentation), in location order.
fn thread_ids(anchor: &Anchor) -> Vec<ThreadId> {
    let group_ranks: Vec<Option<u32>> = anchor.groups.iter().map(|g| parse_u32(&g.rank)).collect();
    let distinct = |v: &[Option<u32>]| {
        let mut seen = rustc_hash::FxHashSet::default();
        v.iter().all(|r| r.is_some_and(|r| seen.insert(r)))
    };
    let use_group_rank = distinct(&group_ranks);
    let mut per_group: Vec<Vec<usize>> = vec![Vec::new(); anchor.groups.len()];
    for (i, loc) in anchor.locations.iter().enumerate() {
        per_group[loc.group].push(i);
    }
    let mut ids = vec![ThreadId::new(0, 0, 0); anchor.locations.len()];
    for (g, locs) in per_group.iter().enumerate() {
        let node = if use_group_rank {
            group_ranks[g].unwrap_or(0)
        } else {
            u32::try_from(g).unwrap_or(u32::MAX)
        };
        let ranks: Vec<Option<u32>> = locs
            .iter()
            .map(|&i| parse_u32(&anchor.locations[i].rank))
            .collect();
        let use_rank = distinct(&ranks);
        for (pos, &i) in locs.iter().enumerate() {
            let thread = if use_rank {
                ranks[pos].unwrap_or(0)
            } else {
                u32::try_from(pos).unwrap_or(u32::MAX)
            };
            ids[i] = ThreadId::new(node, 0, thread);
        }
    }
    ids
}

/// Frame names of the cnodes (see the module documentation).
fn frames(anchor: &Anchor) -> Vec<String> {
    let regions = &anchor.regions;
    let mut by_name: HashMap<&str, Vec<usize>> = HashMap::default();
    for (i, r) in regions.iter().enumerate() {
        by_name.entry(r.name.trim()).or_default().push(i);
    }
    let region_frame: Vec<String> = regions
        .iter()
        .map(|r| {
            let same = &by_name[r.name.trim()];
            let differs = same.iter().any(|&o| {
                let o = &regions[o];
                (o.module.as_str(), o.begin) != (r.module.as_str(), r.begin)
            });
            if differs && !r.module.is_empty() {
                format!("{} [{{{}}} {{{}}}]", r.name.trim(), r.module, r.begin.max(0))
            } else {
                r.name.trim().to_string()
            }
        })
        .collect();
    let mut out: Vec<String> = anchor
        .cnodes
        .iter()
        .map(|c| {
            let mut f = region_frame[c.region].clone();
            for (k, v) in &c.parameters {
                f.push_str(&format!(" [ <{k}> = <{v}> ]"));
            }
            f
        })
        .collect();
    // Siblings that still look alike: tell them apart by call-site line if the anchor has it.
    let mut siblings: HashMap<(Option<usize>, &str), Vec<usize>> = HashMap::default();
    for (i, c) in anchor.cnodes.iter().enumerate() {
        siblings.entry((c.parent, out[i].as_str())).or_default().push(i);
    }
    let mut renames = Vec::new();
    for group in siblings.values().filter(|g| g.len() > 1) {
        let lines: Vec<Option<i64>> = group.iter().map(|&i| anchor.cnodes[i].line).collect();
        if lines.iter().all(Option::is_some) {
            for &i in group {
                let c = &anchor.cnodes[i];
                let file = c
                    .module
                    .clone()
                    .unwrap_or_else(|| regions[c.region].module.clone());
                renames.push((i, format!(" [{{{file}}} {{{}}}]", c.line.unwrap_or(0))));
            }
        }
    }
    for (i, suffix) in renames {
        out[i].push_str(&suffix);
    }
    out
}

/// The archive members and parsed `anchor.xml` of a `.cubex` file, with the warnings so far.
fn open_cubex(bytes: &[u8]) -> Result<(Anchor, Vec<Member>, Vec<Problem>), Problem> {
    let archive = read_archive(bytes).map_err(|(off, msg)| Problem::at_offset(off, msg))?;
    let mut warnings: Vec<Problem> = archive
        .warnings
        .iter()
        .map(|(off, m)| Problem::at_offset(*off, m.clone()))
        .collect();
    let anchor_member = archive.get("anchor.xml").ok_or_else(|| {
        Problem::whole(format!(
            "the archive has no anchor.xml (members: {}); not a CUBE4 .cubex file",
            archive
                .members
                .iter()
                .take(8)
                .map(|m| m.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))
    })?;
    let anchor_bytes: std::borrow::Cow<'_, [u8]> = if anchor_member.data.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&anchor_member.data[..])
            .read_to_end(&mut out)
            .map_err(|e| {
                Problem::at_offset(
                    anchor_member.offset,
                    format!("anchor.xml is gzip-compressed but cannot be inflated: {e}"),
                )
            })?;
        out.into()
    } else {
        (&anchor_member.data[..]).into()
    };
    let text = String::from_utf8_lossy(&anchor_bytes);
    if let std::borrow::Cow::Owned(_) = text {
        warnings.push(Problem::at_offset(
            anchor_member.offset,
            "anchor.xml is not valid UTF-8; invalid bytes were replaced by U+FFFD",
        ));
    }
    let anchor = parse_anchor(&text).map_err(|(line, msg)| {
        Problem::at_offset(anchor_member.offset, format!("anchor.xml line {line}: {msg}"))
    })?;
    Ok((anchor, archive.members, warnings))
}

/// The parsed `anchor.xml` of a `.cubex` file held in memory.
pub fn read_anchor(bytes: &[u8]) -> Result<Anchor, Problem> {
    open_cubex(bytes).map(|(a, _, _)| a)
}

/// The name of the event each cnode of `anchor` (document order) becomes in the profile
/// [`parse_cubex`] builds: its callpath, or for a root cnode the flat event of its region.
pub fn cnode_event_names(anchor: &Anchor) -> Vec<String> {
    let (mut layout, _) = Layout::new(&cnode_tree(anchor));
    let mut builder = ProfileBuilder::new(Vec::new());
    (0..layout.n_nodes())
        .map(|i| {
            let e = layout.node_event(&mut builder, i);
            builder.event_name(e)
        })
        .collect()
}

fn cnode_tree(anchor: &Anchor) -> Tree {
    let mut tree = Tree::default();
    let frame_names = frames(anchor);
    for (i, c) in anchor.cnodes.iter().enumerate() {
        tree.push(
            c.parent,
            frame_names[i].clone(),
            anchor
                .regions
                .get(c.region)
                .map(|r| r.paradigm.to_ascii_uppercase())
                .unwrap_or_default(),
        );
    }
    tree
}

/// Parses a `.cubex` file held in memory into a profile (see the module documentation).
///
/// Errors (with the byte offset in the file where known) when the archive or `anchor.xml`
/// cannot be read or the system tree is unusable; problems with single metrics are warnings
/// and those metrics are left out.
pub fn parse_cubex(bytes: &[u8]) -> Result<CubeProfile, Problem> {
    let (anchor, members, warnings) = open_cubex(bytes)?;
    build_profile(&anchor, &members, warnings)
}

fn build_profile(
    anchor: &Anchor,
    members: &[Member],
    mut warnings: Vec<Problem>,
) -> Result<CubeProfile, Problem> {
    let l = anchor.locations.len();
    if l == 0 {
        return Err(Problem::whole(
            "anchor.xml: the system tree has no <location>: nothing was measured",
        ));
    }
    // Values are ordered by location Id, which must be 0..L-1.
    let mut slot_of_location = vec![usize::MAX; l];
    for (i, loc) in anchor.locations.iter().enumerate() {
        match usize::try_from(loc.id).ok().filter(|&id| id < l) {
            Some(id) if slot_of_location[id] == usize::MAX => slot_of_location[id] = i,
            _ => {
                return Err(Problem::whole(format!(
                    "anchor.xml: location Id {} is repeated or not in 0..{}; CUBE orders the values by location Id",
                    loc.id,
                    l - 1
                )));
            }
        }
    }
    let n = anchor.cnodes.len();
    if n == 0 {
        return Err(Problem::whole("anchor.xml: the call tree has no <cnode>"));
    }
    // Values are held densely per metric (cnodes x locations); refuse sizes no workstation
    // holds rather than abort on allocation.
    const MAX_CELLS: usize = 1 << 30;
    if n.saturating_mul(l) > MAX_CELLS {
        return Err(Problem::whole(format!(
            "anchor.xml: {n} cnodes x {l} locations = {} cells per metric, more than the {MAX_CELLS} this reader holds",
            n.saturating_mul(l)
        )));
    }
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, c) in anchor.cnodes.iter().enumerate() {
        if let Some(p) = c.parent {
            children[p].push(i);
        }
    }
    let deep: Vec<usize> = (0..n).collect();
    let wide = wide_enumeration(anchor, &children);
    let mut notes = Vec::new();
    let mut metrics: Vec<MetricData> = Vec::new();
    for m in &anchor.metrics {
        if let MetricKind::Derived(t) = &m.kind {
            warnings.push(Problem::whole(format!(
                "metric `{}` is a derived metric ({t}, a CubePL expression); perfscape does not evaluate CubePL, so it is left out",
                m.uniq_name
            )));
            continue;
        }
        let Some(ty) = ValueType::of(&m.dtype) else {
            warnings.push(Problem::whole(format!(
                "metric `{}` has value type `{}`, which is not one plain number per cell; perfscape does not read it, so it is left out",
                m.uniq_name, m.dtype
            )));
            continue;
        };
        let enumeration = if m.kind == MetricKind::Inclusive {
            &wide
        } else {
            &deep
        };
        let combine = match m.dtype.trim().to_ascii_uppercase().as_str() {
            "MINDOUBLE" => Combine::Min,
            "MAXDOUBLE" => Combine::Max,
            _ => Combine::Sum,
        };
        let fill = if combine == Combine::Sum { 0.0 } else { f64::NAN };
        let stored = match stored_values(m, ty, members, enumeration, l, fill, &mut warnings) {
            Ok(Some(v)) => v,
            Ok(None) => {
                notes.push(format!(
                    "metric `{}` has no data in the archive ({}.index/{}.data); its values are 0 (Score-P leaves out metrics that stayed 0)",
                    m.uniq_name, m.id, m.id
                ));
                vec![0.0; n * l]
            }
            Err(e) => {
                warnings.push(Problem {
                    message: format!("{}; the metric is left out", e.message),
                    ..e
                });
                continue;
            }
        };
        if !m.convertible || m.kind == MetricKind::Simple {
            warnings.push(Problem::whole(format!(
                "metric `{}` is {}: its stored values are used as both exclusive and inclusive values",
                m.uniq_name,
                if m.convertible {
                    "SIMPLE"
                } else {
                    "marked convertible=\"false\""
                }
            )));
        }
        let (exclusive, inclusive) = convert(
            &stored,
            &m.kind,
            m.convertible,
            combine,
            ty.is_unsigned(),
            &children,
            l,
        );
        let (exclusive, inclusive) = (nan_to_zero(exclusive), nan_to_zero(inclusive));
        let negative = exclusive.iter().filter(|&&x| x < 0.0).count();
        if negative > 0 && m.kind == MetricKind::Inclusive {
            warnings.push(Problem::whole(format!(
                "metric `{}`: {negative} exclusive value(s) are negative (the callees' stored inclusive values exceed the caller's); kept as computed",
                m.uniq_name
            )));
        }
        let name = if m.uniq_name.trim().is_empty() {
            m.disp_name.clone()
        } else {
            m.uniq_name.clone()
        };
        metrics.push(MetricData {
            metric: Metric::new(name, unit_of(&m.uom)).combined_by(combine),
            exclusive,
            inclusive,
        });
    }
    if metrics.is_empty() {
        return Err(Problem::whole(
            "no metric of this CUBE file could be read (see the warnings for each)".to_string()
                + &warnings.iter().map(|w| format!("\n  {w}")).collect::<String>(),
        ));
    }
    // The time comes first (the default metric everywhere): Score-P's `time`, else the first
    // metric in seconds that adds up; the others keep the metric tree's order.
    let time = metrics.iter().position(|m| m.metric.name == "time").or_else(|| {
        metrics
            .iter()
            .position(|m| m.metric.unit == Unit::Seconds && m.metric.combine.is_additive())
    });
    if let Some(t) = time {
        metrics[..=t].rotate_right(1);
    }
    let visits = metrics.iter().position(|m| m.metric.name == "visits");
    if visits.is_none() {
        notes.push("no `visits` metric: calls and subcalls are 0".to_string());
    }
    let (mut layout, renamed) = Layout::new(&cnode_tree(anchor));
    if renamed > 0 {
        warnings.push(Problem::whole(format!(
            "{renamed} region name(s) contain `=>`, which separates callpath frames; written as `= >`"
        )));
    }
    let n_metrics = metrics.len();
    let combine: Vec<Combine> = metrics.iter().map(|m| m.metric.combine).collect();
    let ids = thread_ids(anchor);
    let mut order: Vec<usize> = (0..l).collect();
    order.sort_by_key(|&i| ids[i]);
    let mut builder = ProfileBuilder::new(metrics.iter().map(|m| m.metric.clone()).collect());
    let mut common_meta: Vec<(String, String)> = Vec::new();
    for i in order {
        let loc = &anchor.locations[i];
        let col = usize::try_from(loc.id).unwrap_or(0);
        let mut v = ThreadValues::new(layout.n_nodes(), n_metrics);
        for c in 0..n {
            let cell = c * l + col;
            let mut any = false;
            for (k, md) in metrics.iter().enumerate() {
                let (x, inc) = (md.exclusive[cell], md.inclusive[cell]);
                v.exclusive[c * n_metrics + k] = x;
                v.inclusive[c * n_metrics + k] = inc;
                any |= x != 0.0 || inc != 0.0;
            }
            if let Some(vm) = visits {
                v.calls[c] = metrics[vm].exclusive[cell];
            }
            v.present[c] = any;
        }
        let group = &anchor.groups[loc.group];
        let mut meta = vec![
            ("CUBE location".to_string(), loc.name.clone()),
            ("CUBE location id".to_string(), loc.id.to_string()),
            ("CUBE location rank".to_string(), loc.rank.clone()),
            ("CUBE location type".to_string(), loc.kind.clone()),
            ("CUBE process".to_string(), group.name.clone()),
            ("CUBE process rank".to_string(), group.rank.clone()),
            ("CUBE system tree".to_string(), group.path.join(" / ")),
        ];
        if common_meta.is_empty() {
            common_meta.push(("CUBE anchor version".to_string(), anchor.version.clone()));
            common_meta.extend(anchor.attrs.iter().cloned());
            for m in &anchor.metrics {
                common_meta.push((
                    format!("CUBE metric {}", m.uniq_name),
                    format!(
                        "{} [{}, {}, {}]: {}",
                        m.disp_name,
                        m.uom,
                        m.dtype,
                        match &m.kind {
                            MetricKind::Exclusive => "EXCLUSIVE",
                            MetricKind::Inclusive => "INCLUSIVE",
                            MetricKind::Simple => "SIMPLE",
                            MetricKind::Derived(t) => t.as_str(),
                        },
                        m.descr.trim()
                    ),
                ));
            }
        }
        meta.extend(common_meta.iter().cloned());
        let data = thread_data(&mut layout, &mut builder, &combine, &v, &meta, false);
        builder.add_thread(ids[i], data).map_err(|e| {
            Problem::whole(format!(
                "location `{}` (Id {}) maps to thread {} like another location: {e}",
                loc.name, loc.id, ids[i]
            ))
        })?;
    }
    let profile = crate::calltree::finish(
        builder,
        &layout,
        "call-tree node(s) (the same region called from the same place: nothing in the file tells them apart)",
        &mut warnings,
    );
    Ok(CubeProfile {
        profile,
        warnings,
        notes,
    })
}

/// The CUBE4 format: a `.cubex` tar archive (`anchor.xml` + per-metric index and data members).
pub const FORMAT: Format = Format {
    name: "cube",
    description: "Score-P/Scalasca CUBE4 profiles (.cubex)",
    example: "cube/pycubexr-time-p4/profile.cubex",
    sniff: |p| {
        p.head()
            .is_some_and(|h| h.len() > 262 && &h[257..262] == b"ustar")
    },
    read: format::Read::Bytes(parse),
    gives: Parts::PROFILE,
    file_scope: FileScope::File,
};

/// [`parse_cubex`] as the registry's reader.
fn parse(bytes: &[u8]) -> Result<Parsed, Problem> {
    parse_cubex(bytes).map(|c| Parsed {
        profile: c.profile,
        trace: None,
        warnings: c.warnings,
        partial: Vec::new(),
        notes: c.notes,
    })
}
