//! Sparse HPCToolkit databases (HPCToolkit 2022 and later): `meta.db` + `profile.db`.
//!
//! The layout is HPCToolkit's `FORMATS.md` (database format 4.x): every file starts with
//! `"HPCTOOLKIT"`, a 4-character format (`meta`, `prof`), major and minor version bytes, then
//! (size, pointer) pairs of sections; all integers little endian, pointers absolute file
//! offsets. From `meta.db`: the identifier kind names, the performance metrics with their
//! propagation scopes (`point`: the value measured at the context itself, `function`: summed
//! over descendants not separated by a call, `execution`: summed over all descendants), the
//! context tree (entry points, then contexts with a lexical type function / loop / line /
//! instruction and `flex` words holding the function, source file and line, load module and
//! offset), and the strings, load modules, source files and functions they point to. From
//! `profile.db`: one profile per application thread (the first, a summary over all threads,
//! is skipped), each with its hierarchical identifier tuple (NODE, RANK, THREAD, GPU...) and
//! sparse (context, metric, value) triples. `cct.db` holds the same values ordered by context
//! and is not needed; `trace.db` is not read.
//!
//! Mapping: each entry point is a root named by its pretty name (`main thread`), each context
//! a node (names in the parent module's documentation). Inclusive value = the `execution`
//! scope; exclusive value = inclusive minus the children's inclusive values, i.e. what is
//! attributed to the context itself and to contexts `meta.db` does not list (hpcprof writes
//! `point` values for instruction contexts that it leaves out of `meta.db`, so the `point`
//! scope alone would lose them). Exclusive values thus add up to inclusive ones. (Hatchet shows
//! the `function` scope as its exclusive `time`: the node plus its loops and lines; the tests
//! check that summing perfscape's exclusive values over a function's loops and lines gives
//! that number.) Source paths that hpcprof copied into the database (`src/...`) are shown
//! without the `src` prefix, as Hatchet shows them. Threads: node = the RANK
//! logical id (0 without one), thread = the THREAD logical id; when two profiles would get the
//! same address, the threads of that rank are numbered in profile order instead (noted). The
//! whole identifier tuple is kept in each thread's metadata.

use super::{NodeKind, combine_of, frame_name, metric_name_and_unit, report};
use crate::calltree::{Layout, ThreadValues, Tree, thread_data};
use crate::error::LoadError;
use crate::format::{OpenOptions, Opened};
use crate::problem::Problem;
use perfscape_model::{Combine, Metric, Profile, ProfileBuilder, ThreadId};
use rustc_hash::FxHashMap as HashMap;
use std::path::Path;

type R<T> = Result<T, Problem>;

struct Bytes<'a> {
    b: &'a [u8],
    file: &'static str,
}

impl<'a> Bytes<'a> {
    fn slice(&self, at: u64, n: usize, what: &str) -> R<&'a [u8]> {
        usize::try_from(at)
            .ok()
            .and_then(|a| self.b.get(a..a.checked_add(n)?))
            .ok_or_else(|| {
                Problem::at_offset(
                    at,
                    format!(
                        "{}: {what} ({n} bytes at byte {at}) lies outside the file ({} bytes)",
                        self.file,
                        self.b.len()
                    ),
                )
            })
    }
    fn u8(&self, at: u64, what: &str) -> R<u8> {
        Ok(self.slice(at, 1, what)?[0])
    }
    fn u16(&self, at: u64, what: &str) -> R<u16> {
        let s = self.slice(at, 2, what)?;
        Ok(u16::from_le_bytes([s[0], s[1]]))
    }
    fn u32(&self, at: u64, what: &str) -> R<u32> {
        let s = self.slice(at, 4, what)?;
        Ok(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    }
    fn u64(&self, at: u64, what: &str) -> R<u64> {
        let s = self.slice(at, 8, what)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(s);
        Ok(u64::from_le_bytes(a))
    }
    fn f64(&self, at: u64, what: &str) -> R<f64> {
        Ok(f64::from_bits(self.u64(at, what)?))
    }
    /// A NUL-terminated UTF-8 string at `at` (invalid bytes replaced).
    fn string(&self, at: u64, what: &str) -> R<String> {
        let start = usize::try_from(at)
            .ok()
            .filter(|&a| a < self.b.len())
            .ok_or_else(|| {
                Problem::at_offset(at, format!("{}: {what} points outside the file", self.file))
            })?;
        let end = self.b[start..]
            .iter()
            .position(|&c| c == 0)
            .ok_or_else(|| Problem::at_offset(at, format!("{}: {what} is not NUL-terminated", self.file)))?;
        Ok(String::from_utf8_lossy(&self.b[start..start + end]).into_owned())
    }
    fn header(&self, format: &str) -> R<(u8, u8)> {
        if !self.b.starts_with(b"HPCTOOLKIT") {
            return Err(Problem::at_offset(
                0,
                format!("{}: expected the magic `HPCTOOLKIT`", self.file),
            ));
        }
        let f = self.slice(10, 4, "the format identifier")?;
        if f != format.as_bytes() {
            return Err(Problem::at_offset(
                10,
                format!(
                    "{}: format identifier is `{}`, expected `{format}`",
                    self.file,
                    String::from_utf8_lossy(f)
                ),
            ));
        }
        let major = self.u8(14, "the major version")?;
        if major != 4 {
            return Err(Problem::at_offset(
                14,
                format!(
                    "{}: format major version {major}; perfscape reads version 4",
                    self.file
                ),
            ));
        }
        Ok((major, self.u8(15, "the minor version")?))
    }
    /// Pointer of header section `k` (0-based).
    fn section(&self, k: u64, what: &str) -> R<u64> {
        self.u64(0x18 + 16 * k, what)
    }
}

/// A performance metric of `meta.db` with the metric ids of its propagation scopes.
#[derive(Debug, Clone, PartialEq)]
pub struct SparseMetric {
    /// Canonical name, e.g. `CPUTIME (sec)`.
    pub name: String,
    /// `propMetricId` of the `point` scope (measured at the context itself).
    pub point: Option<u16>,
    /// `propMetricId` of the `function` scope.
    pub function: Option<u16>,
    /// `propMetricId` of the `execution` scope (inclusive).
    pub execution: Option<u16>,
    /// How hpcprof combines the metric across threads: the `combine` of its summary
    /// statistic with the identity formula `$$` in the `execution` scope (sum if none).
    pub combine: Combine,
}

/// One context (or entry point) of the tree.
#[derive(Debug, Clone, PartialEq)]
pub struct Context {
    /// `ctxId`.
    pub id: u32,
    /// Parent (index in [`MetaDb::contexts`]).
    pub parent: Option<usize>,
    /// Lexical type; `None` for an entry point.
    pub kind: Option<NodeKind>,
    /// Function name (functions), pretty name (entry points).
    pub name: String,
    /// Source file (loops, lines) or load module (instructions).
    pub file: String,
    /// Line, or instruction offset.
    pub line: u64,
    /// Event frame name.
    pub frame: String,
}

/// The parsed `meta.db`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MetaDb {
    /// Title of the database.
    pub title: String,
    /// Identifier kind names (`NODE`, `RANK`, `THREAD`, ...), indexed by kind.
    pub kinds: Vec<String>,
    /// Metrics.
    pub metrics: Vec<SparseMetric>,
    /// Contexts in pre-order (parents first).
    pub contexts: Vec<Context>,
}

/// Parses `meta.db`.
pub fn parse_meta(b: &[u8]) -> R<MetaDb> {
    let m = Bytes { b, file: "meta.db" };
    m.header("meta")?;
    let mut out = MetaDb::default();
    let general = m.section(0, "the General section pointer")?;
    if general != 0 {
        let p = m.u64(general, "the title pointer")?;
        if p != 0 {
            out.title = m.string(p, "the title")?;
        }
    }
    let idn = m.section(1, "the Identifier Names section pointer")?;
    if idn != 0 {
        let pp = m.u64(idn, "the identifier names pointer")?;
        let n = m.u8(idn + 8, "the identifier kind count")?;
        for k in 0..u64::from(n) {
            let p = m.u64(pp + 8 * k, "an identifier name pointer")?;
            out.kinds.push(m.string(p, "an identifier name")?);
        }
    }
    let pm = m.section(2, "the Performance Metrics section pointer")?;
    let p_metrics = m.u64(pm, "the metrics pointer")?;
    let n_metrics = m.u32(pm + 8, "the metric count")?;
    let sz_metric = u64::from(m.u8(pm + 0xc, "the metric size")?);
    let sz_inst = u64::from(m.u8(pm + 0xd, "the scope instance size")?);
    let sz_summary = u64::from(m.u8(pm + 0xe, "the summary statistic size")?);
    for k in 0..u64::from(n_metrics) {
        let md = p_metrics + k * sz_metric;
        let name = m.string(m.u64(md, "a metric name pointer")?, "a metric name")?;
        let p_insts = m.u64(md + 8, "a metric's scope instances")?;
        let n_insts = m.u16(md + 0x18, "a metric's scope instance count")?;
        let mut metric = SparseMetric {
            name,
            point: None,
            function: None,
            execution: None,
            combine: Combine::Sum,
        };
        let p_summaries = m.u64(md + 0x10, "a metric's summary statistics")?;
        for j in 0..u64::from(m.u16(md + 0x1a, "a metric's summary statistic count")?) {
            let ss = p_summaries + j * sz_summary;
            let scope = m.string(
                m.u64(m.u64(ss, "a summary's scope")?, "a scope name pointer")?,
                "a scope name",
            )?;
            let formula = m.string(m.u64(ss + 8, "a summary's formula")?, "a summary formula")?;
            if scope == "execution" && formula.trim() == "$$" {
                metric.combine = combine_of(&m.u8(ss + 0x10, "a summary's combine")?.to_string());
            }
        }
        for j in 0..u64::from(n_insts) {
            let psi = p_insts + j * sz_inst;
            let scope = m.u64(psi, "a propagation scope pointer")?;
            let id = m.u16(psi + 8, "a propagated metric id")?;
            let scope_name = m.string(m.u64(scope, "a scope name pointer")?, "a scope name")?;
            let scope_type = m.u8(scope + 8, "a scope type")?;
            match (scope_type, scope_name.as_str()) {
                (1, _) | (_, "point") => metric.point = Some(id),
                (2, _) | (_, "execution") => metric.execution = Some(id),
                (_, "function") => metric.function = Some(id),
                _ => {}
            }
        }
        out.metrics.push(metric);
    }
    let pc = m.section(3, "the Context Tree section pointer")?;
    let p_entries = m.u64(pc, "the entry points pointer")?;
    let n_entries = m.u16(pc + 8, "the entry point count")?;
    let sz_entry = u64::from(m.u8(pc + 0xa, "the entry point size")?);
    let ctx_section_size = m.u64(0x40, "the Context Tree section size")?;
    let max_contexts = ctx_section_size / 32 + u64::from(n_entries) + 1;
    let mut functions: HashMap<u64, String> = HashMap::default();
    let mut paths: HashMap<u64, String> = HashMap::default();
    let mut path_of = |p: u64, what: &str| -> R<String> {
        if p == 0 {
            return Ok(String::new());
        }
        if let Some(s) = paths.get(&p) {
            return Ok(s.clone());
        }
        let s = m.string(m.u64(p + 8, what)?, what)?;
        paths.insert(p, s.clone());
        Ok(s)
    };
    // (children array pointer, size, parent index, enclosing procedure)
    let mut work: Vec<(u64, u64, Option<usize>, String)> = Vec::new();
    for k in 0..u64::from(n_entries) {
        let e = p_entries + k * sz_entry;
        let sz_children = m.u64(e, "an entry point's children size")?;
        let p_children = m.u64(e + 8, "an entry point's children pointer")?;
        let id = m.u32(e + 0x10, "an entry point's context id")?;
        let kind = m.u16(e + 0x14, "an entry point kind")?;
        let pretty = m.u64(e + 0x18, "an entry point name pointer")?;
        let name = if pretty != 0 {
            m.string(pretty, "an entry point name")?
        } else {
            ["unknown entry", "main thread", "application thread"]
                .get(usize::from(kind))
                .unwrap_or(&"unknown entry")
                .to_string()
        };
        out.contexts.push(Context {
            id,
            parent: None,
            kind: None,
            frame: name.clone(),
            name,
            file: String::new(),
            line: 0,
        });
        let me = out.contexts.len() - 1;
        // A context is stored when its parent's children array is read, so parents always
        // precede their children.
        work.push((p_children, sz_children, Some(me), String::new()));
        while let Some((p_children, size, parent, procedure)) = work.pop() {
            let mut at = p_children;
            let end = p_children.saturating_add(size);
            let mut kids: Vec<(u64, u64, Option<usize>, String)> = Vec::new();
            while at < end {
                if out.contexts.len() as u64 > max_contexts {
                    return Err(Problem::at_offset(
                        at,
                        "meta.db: more contexts than the Context Tree section can hold (cyclic pointers?)",
                    ));
                }
                let sz = m.u64(at, "a context's children size")?;
                let pch = m.u64(at + 8, "a context's children pointer")?;
                let id = m.u32(at + 0x10, "a context id")?;
                let flags = m.u8(at + 0x14, "context flags")?;
                let lexical = m.u8(at + 0x16, "a lexical type")?;
                let n_flex = u64::from(m.u8(at + 0x17, "a flex word count")?);
                let flex = at + 0x20;
                // Flex packing: every u64 field takes the next word; `line` (u32) takes a
                // word of its own too, as it is the only u32 field.
                let mut word = 0u64;
                let next_u64 = |word: &mut u64| {
                    let o = flex + 8 * *word;
                    *word += 1;
                    o
                };
                let (mut p_function, mut p_file, mut line, mut p_module, mut offset) = (0, 0, 0u64, 0, 0u64);
                if flags & 1 != 0 {
                    p_function = m.u64(next_u64(&mut word), "a context's function")?;
                }
                if flags & 2 != 0 {
                    p_file = m.u64(next_u64(&mut word), "a context's source file")?;
                    // The only u32 field: it takes the low half of the next word.
                    line = u64::from(m.u32(next_u64(&mut word), "a context's line")?);
                }
                if flags & 4 != 0 {
                    p_module = m.u64(next_u64(&mut word), "a context's load module")?;
                    offset = m.u64(next_u64(&mut word), "a context's offset")?;
                }
                if word > n_flex {
                    return Err(Problem::at_offset(
                        at,
                        format!("meta.db: context {id} uses {word} flex words but has {n_flex}"),
                    ));
                }
                let kind = match lexical {
                    0 => NodeKind::Procedure,
                    1 => NodeKind::Loop,
                    2 => NodeKind::Line,
                    3 => NodeKind::Instruction,
                    other => {
                        return Err(Problem::at_offset(
                            at + 0x16,
                            format!("meta.db: context {id} has unknown lexical type {other}"),
                        ));
                    }
                };
                let mut name = String::new();
                if p_function != 0 {
                    if let Some(known) = functions.get(&p_function) {
                        name = known.clone();
                    } else {
                        let pn = m.u64(p_function, "a function name pointer")?;
                        let fname = if pn != 0 {
                            m.string(pn, "a function name")?
                        } else {
                            String::new()
                        };
                        let pmod = m.u64(p_function + 8, "a function's module")?;
                        let foff = m.u64(p_function + 0x10, "a function's offset")?;
                        let fname = if fname.is_empty() {
                            let module = path_of(pmod, "a load module path")?;
                            format!("<unknown function> {module}+0x{foff:x}")
                        } else {
                            fname
                        };
                        functions.insert(p_function, fname.clone());
                        name = fname;
                    }
                } else if kind == NodeKind::Procedure {
                    name = "<unknown function>".into();
                }
                let file = if kind == NodeKind::Instruction {
                    path_of(p_module, "a load module path")?
                } else {
                    let f = path_of(p_file, "a source file path")?;
                    match f.strip_prefix("src/") {
                        Some(rest) => format!("/{rest}"),
                        None => f,
                    }
                };
                let line_or_offset = if kind == NodeKind::Instruction {
                    offset
                } else {
                    line
                };
                let frame = frame_name(kind, &name, &file, line_or_offset, &procedure);
                let child_proc = if kind == NodeKind::Procedure {
                    name.clone()
                } else {
                    procedure.clone()
                };
                out.contexts.push(Context {
                    id,
                    parent,
                    kind: Some(kind),
                    name,
                    file,
                    line: line_or_offset,
                    frame,
                });
                let me = out.contexts.len() - 1;
                if pch != 0 && sz != 0 {
                    kids.push((pch, sz, Some(me), child_proc));
                }
                at = flex + 8 * n_flex;
            }
            for k in kids.into_iter().rev() {
                work.push(k);
            }
        }
    }
    Ok(out)
}

/// One application thread's profile of `profile.db`.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadProfile {
    /// Identifier tuple: (kind, logical id, physical id).
    pub ids: Vec<(u8, u32, u64)>,
    /// (context id, [(metric id, value)]), sorted by context id.
    pub values: Vec<(u32, Vec<(u16, f64)>)>,
}

/// Parses `profile.db`: the non-summary profiles.
pub fn parse_profiles(b: &[u8]) -> R<Vec<ThreadProfile>> {
    let p = Bytes {
        b,
        file: "profile.db",
    };
    p.header("prof")?;
    let infos = p.section(0, "the Profile Info section pointer")?;
    let p_profiles = p.u64(infos, "the profiles pointer")?;
    let n = p.u32(infos + 8, "the profile count")?;
    let sz = u64::from(p.u8(infos + 0xc, "the profile info size")?);
    let mut out = Vec::new();
    for k in 0..u64::from(n) {
        let pi = p_profiles + k * sz;
        let flags = p.u32(pi + 0x28, "profile flags")?;
        if flags & 1 != 0 {
            continue;
        }
        let n_values = p.u64(pi, "a value count")?;
        let p_values = p.u64(pi + 8, "a values pointer")?;
        let n_ctxs = p.u32(pi + 0x10, "a context count")?;
        let p_idx = p.u64(pi + 0x18, "a context index pointer")?;
        let p_tuple = p.u64(pi + 0x20, "an identifier tuple pointer")?;
        // Bounds first, so huge counts fail before any allocation.
        p.slice(
            p_values,
            usize::try_from(n_values.saturating_mul(10)).unwrap_or(usize::MAX),
            "the value array",
        )?;
        p.slice(
            p_idx,
            usize::try_from(u64::from(n_ctxs) * 12).unwrap_or(usize::MAX),
            "the context index array",
        )?;
        let mut ids = Vec::new();
        if p_tuple != 0 {
            let n_ids = p.u16(p_tuple, "an identifier count")?;
            for j in 0..u64::from(n_ids) {
                let at = p_tuple + 8 + 16 * j;
                ids.push((
                    p.u8(at, "an identifier kind")?,
                    p.u32(at + 4, "a logical id")?,
                    p.u64(at + 8, "a physical id")?,
                ));
            }
        }
        let mut values = Vec::with_capacity(n_ctxs as usize);
        for c in 0..u64::from(n_ctxs) {
            let at = p_idx + 12 * c;
            let ctx = p.u32(at, "a context id")?;
            let start = p.u64(at + 4, "a start index")?;
            let end = if c + 1 < u64::from(n_ctxs) {
                p.u64(at + 12 + 4, "a start index")?
            } else {
                n_values
            };
            if start > end || end > n_values {
                return Err(Problem::at_offset(
                    at,
                    format!("profile.db: context {ctx} has value range {start}..{end} outside 0..{n_values}"),
                ));
            }
            let mut vals = Vec::with_capacity((end - start) as usize);
            for v in start..end {
                let o = p_values + 10 * v;
                vals.push((p.u16(o, "a metric id")?, p.f64(o + 2, "a value")?));
            }
            values.push((ctx, vals));
        }
        out.push(ThreadProfile { ids, values });
    }
    Ok(out)
}

/// Builds the profile; returns it, the event name of each context, and warnings.
pub fn build_sparse(meta: &MetaDb, profiles: &[ThreadProfile]) -> R<(Profile, Vec<Problem>)> {
    let mut warnings = Vec::new();
    let metrics: Vec<&SparseMetric> = meta
        .metrics
        .iter()
        .filter(|m| {
            let ok = m.execution.is_some();
            if !ok {
                warnings.push(Problem::whole(format!(
                    "metric `{}` has no `execution` (inclusive) scope; left out",
                    m.name
                )));
            }
            ok
        })
        .collect();
    if metrics.is_empty() {
        return Err(Problem::whole(
            "meta.db: no metric with inclusive (`execution` scope) values",
        ));
    }
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); meta.contexts.len()];
    for (i, c) in meta.contexts.iter().enumerate() {
        if let Some(p) = c.parent {
            children[p].push(i);
        }
    }
    let mut tree = Tree::default();
    let mut index_of_ctx: HashMap<u32, usize> = HashMap::default();
    for (i, c) in meta.contexts.iter().enumerate() {
        tree.push(c.parent, c.frame.clone(), String::new());
        index_of_ctx.insert(c.id, i);
    }
    let (mut layout, _) = Layout::new(&tree);
    let n = meta.contexts.len();
    let nm = metrics.len();
    let kind_name = |k: u8| {
        meta.kinds
            .get(usize::from(k))
            .map_or_else(|| format!("KIND{k}"), |s| s.clone())
    };
    // Thread addresses.
    let mut ids: Vec<ThreadId> = profiles
        .iter()
        .map(|p| {
            let get = |name: &str| {
                p.ids
                    .iter()
                    .find(|(k, ..)| kind_name(*k) == name)
                    .map(|(_, logical, _)| *logical)
            };
            ThreadId::new(get("RANK").unwrap_or(0), 0, get("THREAD").unwrap_or(0))
        })
        .collect();
    let mut seen = rustc_hash::FxHashSet::default();
    let clash: Vec<u32> = ids.iter().filter(|t| !seen.insert(**t)).map(|t| t.node).collect();
    if !clash.is_empty() {
        for node in clash {
            for (k, t) in ids.iter_mut().filter(|t| t.node == node).enumerate() {
                t.thread = u32::try_from(k).unwrap_or(u32::MAX);
            }
        }
        warnings.push(Problem::whole("several profiles have the same RANK/THREAD ids (GPU streams?); their threads are numbered in profile order, the identifier tuples are in each thread's metadata"));
    }
    let mut order: Vec<usize> = (0..profiles.len()).collect();
    order.sort_by_key(|&k| ids[k]);
    let mut builder = ProfileBuilder::new(
        metrics
            .iter()
            .map(|m| {
                let (name, unit) = metric_name_and_unit(&m.name);
                Metric::new(name, unit).combined_by(m.combine)
            })
            .collect(),
    );
    let combine: Vec<Combine> = metrics.iter().map(|m| m.combine).collect();
    for (pos, &k) in order.iter().enumerate() {
        let prof = &profiles[k];
        let mut v = ThreadValues::new(n, nm);
        for (ctx, vals) in &prof.values {
            // Contexts meta.db does not list (and the global context 0): their values are
            // part of their ancestors' inclusive values already.
            let Some(&i) = index_of_ctx.get(ctx) else {
                continue;
            };
            for (j, m) in metrics.iter().enumerate() {
                let inc = m
                    .execution
                    .and_then(|id| vals.iter().find(|(mid, _)| *mid == id).map(|(_, x)| *x))
                    .unwrap_or(0.0);
                v.inclusive[i * nm + j] = inc;
                v.present[i] |= inc != 0.0;
            }
        }
        for (i, kids) in children.iter().enumerate() {
            for j in 0..nm {
                let below: f64 = kids.iter().map(|&c| v.inclusive[c * nm + j]).sum();
                v.exclusive[i * nm + j] = v.inclusive[i * nm + j] - below;
            }
        }
        let tuple: Vec<String> = prof
            .ids
            .iter()
            .map(|(kd, l, p)| format!("{} {l} (physical {p})", kind_name(*kd)))
            .collect();
        let meta_pairs = vec![
            ("HPCToolkit database".to_string(), meta.title.clone()),
            ("HPCToolkit id tuple".to_string(), tuple.join(", ")),
        ];
        let data = thread_data(&mut layout, &mut builder, &combine, &v, &meta_pairs, pos == 0);
        builder
            .add_thread(ids[k], data)
            .map_err(|e| Problem::whole(format!("thread {}: {e}", ids[k])))?;
    }
    let profile = crate::calltree::finish(
        builder,
        &layout,
        "context(s) (the same function reached from different call sites)",
        &mut warnings,
    );
    Ok((profile, warnings))
}

/// Reads a sparse database directory (see the module documentation).
pub fn read_sparse(dir: &Path, opts: &OpenOptions<'_>) -> Result<Opened, LoadError> {
    opts.progress_start(2);
    let read = |name: &str| crate::input::read_file(&dir.join(name));
    let fail = |name: &str, e: Problem| LoadError::NothingLoaded {
        path: dir.to_path_buf(),
        errors: vec![e.in_file(dir.join(name))],
    };
    let meta_bytes = read("meta.db")?;
    let prof_bytes = read("profile.db")?;
    let meta = parse_meta(&meta_bytes).map_err(|e| fail("meta.db", e))?;
    let profiles = parse_profiles(&prof_bytes).map_err(|e| fail("profile.db", e))?;
    if profiles.is_empty() {
        return Err(fail(
            "profile.db",
            Problem::whole("no thread profile (only the summary)"),
        ));
    }
    let (profile, warnings) = build_sparse(&meta, &profiles).map_err(|e| fail("meta.db", e))?;
    opts.progress_advance(2);
    opts.progress_finish();
    let mut rep = report("hpctoolkit", 2, (meta_bytes.len() + prof_bytes.len()) as u64);
    rep.warnings = warnings
        .into_iter()
        .map(|w| w.in_file(dir.join("meta.db")))
        .collect();
    if dir.join("cct.db").is_file() || dir.join("trace.db").is_file() {
        rep.notes
            .push("cct.db (the same values by context) and trace.db (traces) are not read".into());
    }
    Ok(Opened::profile(profile, rep))
}
