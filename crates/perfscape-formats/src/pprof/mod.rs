//! pprof profiles: the `perftools.profiles.Profile` protocol buffer written by Go's
//! `runtime/pprof`, `pprof`, parca, py-spy and others, gzip-compressed (`.pb.gz`, undone by [`crate::open`]) or raw.
//!
//! # Mapping into the model
//! - **Metrics**: one per sample type, named by its type string (`cpu`, `alloc_space`, ...),
//!   with the unit of its unit string (`nanoseconds`, `microseconds`, `bytes`, `count`,
//!   `cycles`; other units are kept by name). Values are the raw integers of the samples (as
//!   `f64`). The preferred sample type (`default_sample_type`, else the last one, as pprof
//!   chooses) comes first, so it is the default metric; the others keep the file's order.
//!   Sample values are amounts accumulated over the samples (`pprof` itself sums them over
//!   stacks and threads), so every metric combines by sum.
//! - **Frames**: a sample's stack is `location_id[0]` (leaf) ... `location_id[n-1]` (root); a
//!   location with inlined functions contributes one frame per line, `line[0]` being the
//!   innermost. A frame is named by its function name (else its system name). A location
//!   without line information (a stripped or unsymbolized profile) is named by its address,
//!   `0x4a3b2c`, and a note says how many locations are so named. The frame's group is the
//!   file name of the location's mapping (e.g. `libc.so.6`), when known.
//! - **Events**: the call tree of the samples becomes callpath events and flat events, as
//!   described in [`crate::stacks`]; flat exclusive equals `pprof -flat`'s *flat* and flat
//!   inclusive its *cum*. Calls count sample records. Where the leaf line is known (function
//!   file name and a line number > 0) the leaf values are also added to a
//!   `[SAMPLE] function [{file} {line}]` event (TAU's sampling convention).
//! - **Threads**: samples carrying a thread label (`thread_id`, `thread`, `tid`,
//!   `thread_name`, `goroutine`, ... see [`THREAD_LABEL_KEYS`]) are split by its value:
//!   values that are all integers fitting `u32` are used as the thread number
//!   (`0.0.<value>`); otherwise the distinct values are numbered 0, 1, ... in sorted order and
//!   the original value is kept in the thread's metadata (`pprof thread label`). Samples
//!   without the label go to an extra thread numbered after the others. A `pid`/`process_id`
//!   label likewise gives the node. Without such labels the profile has one thread, `0.0.0`.
//! - **Metadata**: period and period type, duration, collection time, comments, drop/keep
//!   frame patterns, the sample types and the main mapping's file and build id.

mod decode;
mod labels;
pub mod proto;
mod wire;

pub use decode::{Decoded, decode, looks_like_pprof};
use decode::{decode_sample_at, decode_with};
use labels::{LabelValue, number_values};

use crate::format::{self, FileScope, Format, Parts};
use crate::problem::{Parsed, Problem};
use crate::stacks::{FrameTable, StackTree};
use perfscape_model::{Metric, ProfileBuilder, ThreadData, ThreadId, Unit};
use rustc_hash::FxHashMap as HashMap;
use std::borrow::Cow;
use std::collections::BTreeMap;

/// Label keys that name the thread of a sample, in order of preference (the first key that
/// any sample carries is used).
pub const THREAD_LABEL_KEYS: &[&str] = &[
    "thread_id",
    "thread id",
    "tid",
    "thread",
    "thread_name",
    "thread name",
    "goroutine",
    "goroutine_id",
];

/// Label keys that name the process of a sample (becomes the node), in order of preference.
pub const PROCESS_LABEL_KEYS: &[&str] = &["pid", "process_id", "process id", "process"];

/// The unit of a pprof unit string.
pub fn unit_of(unit: &str) -> Unit {
    match unit.trim().to_ascii_lowercase().as_str() {
        "nanoseconds" | "nanosecond" | "ns" => Unit::Nanoseconds,
        "microseconds" | "microsecond" | "us" => Unit::Microseconds,
        "bytes" | "byte" => Unit::Bytes,
        "count" | "samples" | "" => Unit::Count,
        "cycles" => Unit::Cycles,
        _ => Unit::Other(unit.trim().to_string()),
    }
}

struct Strings<'a> {
    table: &'a [String],
}

impl<'a> Strings<'a> {
    fn get(&self, i: i64, what: impl FnOnce() -> (Option<u64>, String)) -> Result<&'a str, Problem> {
        usize::try_from(i)
            .ok()
            .and_then(|i| self.table.get(i))
            .map(String::as_str)
            .ok_or_else(|| {
                let (offset, ctx) = what();
                let msg = format!(
                    "{ctx}: string index {i} is outside the string table ({} strings){}",
                    self.table.len(),
                    if self.table.is_empty() {
                        "; the profile has no string table (truncated?)"
                    } else {
                        ""
                    }
                );
                match offset {
                    Some(o) => Problem::at_offset(o, msg),
                    None => Problem::whole(msg),
                }
            })
    }
}

/// One frame of a location: the frame id and, for the leaf line, the source position.
struct LocationFrames {
    /// Frames root-to-leaf within the location (the caller first).
    frames: Vec<u32>,
    /// Routine, file and line of `line[0]`, when the file and a line > 0 are known.
    leaf_line: Option<(String, String, u64)>,
}

fn basename(path: &str) -> &str {
    path.rsplit(['/', '\\']).next().unwrap_or(path)
}

/// Parses a pprof profile (gzip or raw) into a [`perfscape_model::Profile`]; see the module
/// documentation for the mapping. Errors when the data is not a pprof profile or its tables
/// are inconsistent (a string index out of range); samples that refer to undefined locations
/// or functions are skipped with a warning.
pub fn parse_pprof(bytes: &[u8]) -> Result<Parsed, Problem> {
    // The samples are read from `bytes` one at a time, never all held decoded.
    let decoded = decode_with(bytes, false)?;
    build(decoded, Cow::Borrowed(bytes))
}

/// [`parse_pprof`] of bytes it owns: they are freed once every sample is in the call trees,
/// before the profile is built (a 10^6-context profile is 32 MB of bytes).
pub fn parse_pprof_owned(bytes: Vec<u8>) -> Result<Parsed, Problem> {
    let decoded = decode_with(&bytes, false)?;
    build(decoded, Cow::Owned(bytes))
}

/// Builds the profile from `decoded`, whose samples are read again from `data` (the bytes it
/// was decoded from: see [`decode_with`]); owned bytes are freed once the samples are read.
fn build(decoded: Decoded, data: Cow<'_, [u8]>) -> Result<Parsed, Problem> {
    let Decoded {
        profile: p,
        sample_offsets,
        location_offsets,
        function_offsets,
        mut partial,
    } = decoded;
    // The samples are read one at a time from `data` into `sample` (see `decode_with`); the
    // offsets of those that decode are all that is held of them.
    let n_samples = sample_offsets.len();
    let mut sample = proto::Sample::default();
    let read_sample = |si: usize, sample: &mut proto::Sample| {
        let at = usize::try_from(sample_offsets[si]).unwrap_or(usize::MAX);
        decode_sample_at(&data, at, sample)
    };
    let mut warnings = Vec::new();
    let mut notes = Vec::new();
    let strings = Strings {
        table: &p.string_table,
    };
    if let Some(first) = p.string_table.first()
        && !first.is_empty()
    {
        warnings.push(Problem::whole(format!(
            "string_table[0] is `{first}` but profile.proto requires it to be empty; read as written"
        )));
    }
    if p.sample_type.is_empty() {
        let detail = partial.first().map(|w| format!("; {w}")).unwrap_or_default();
        return Err(Problem::whole(if n_samples == 0 && p.string_table.is_empty() {
            format!(
                "not a pprof profile (or one truncated before its first field): no sample types were read{detail}"
            )
        } else {
            format!(
                "the profile declares no sample types, so its {} samples measure nothing{detail}",
                n_samples
            )
        }));
    }
    // Metrics.
    let mut metrics = Vec::with_capacity(p.sample_type.len());
    for (i, st) in p.sample_type.iter().enumerate() {
        let ctx = || (None, format!("sample_type[{i}]"));
        let name = strings.get(st.r#type, ctx)?;
        let unit = strings.get(st.unit, ctx)?;
        let mut name = if name.trim().is_empty() {
            format!("sample type {i}")
        } else {
            name.trim().to_string()
        };
        if metrics.iter().any(|m: &Metric| m.name == name) {
            name = format!("{name} ({})", i + 1);
        }
        metrics.push(Metric::new(name, unit_of(unit)));
    }
    let n_metrics = metrics.len();
    let default_index = if p.default_sample_type != 0 {
        let want = strings.get(p.default_sample_type, || {
            (None, "default_sample_type".to_string())
        })?;
        p.sample_type
            .iter()
            .position(|st| strings.table.get(st.r#type as usize).is_some_and(|s| s == want))
            .unwrap_or(n_metrics - 1)
    } else {
        n_metrics - 1
    };
    // order[k] = index of the sample value that becomes metric k.
    let mut order: Vec<usize> = vec![default_index];
    order.extend((0..n_metrics).filter(|&i| i != default_index));
    let metrics: Vec<Metric> = order.iter().map(|&i| metrics[i].clone()).collect();
    if default_index != 0 {
        notes.push(format!(
            "metric `{}` (pprof's default sample type) is listed first; the file's order is {}",
            metrics[0].name,
            p.sample_type
                .iter()
                .filter_map(|st| strings.table.get(st.r#type as usize))
                .map(String::as_str)
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    // Mappings: id -> file base name (the frame group).
    let mut mapping_group: HashMap<u64, String> = HashMap::default();
    for (i, m) in p.mapping.iter().enumerate() {
        let file = strings.get(m.filename, || (None, format!("mapping[{i}] (id {})", m.id)))?;
        mapping_group.insert(m.id, basename(file).to_string());
    }
    // Functions: id -> (name, file).
    let mut functions: HashMap<u64, (String, String)> = HashMap::default();
    for (i, f) in p.function.iter().enumerate() {
        let off = function_offsets.get(i).copied();
        let ctx = || (off, format!("function {} (id {})", i, f.id));
        let name = strings.get(f.name, ctx)?;
        let system = strings.get(f.system_name, ctx)?;
        let file = strings.get(f.filename, ctx)?;
        let shown = if !name.trim().is_empty() {
            name
        } else if !system.trim().is_empty() {
            system
        } else {
            ""
        };
        functions.insert(f.id, (shown.to_string(), file.to_string()));
    }
    // Locations: id -> frames.
    let mut frames = FrameTable::default();
    let mut locations: HashMap<u64, LocationFrames> = HashMap::default();
    let mut by_address = 0usize;
    let mut example_address = None;
    let mut bad_locations = 0usize;
    let mut first_bad_location: Option<Problem> = None;
    for (i, loc) in p.location.iter().enumerate() {
        let off = location_offsets.get(i).copied();
        let group = mapping_group
            .get(&loc.mapping_id)
            .map_or("", String::as_str)
            .to_string();
        let address_name = || {
            if loc.address != 0 {
                format!("0x{:x}", loc.address)
            } else {
                format!("location {}", loc.id)
            }
        };
        let mut fr = Vec::with_capacity(loc.line.len().max(1));
        let mut leaf_line = None;
        let mut bad = None;
        for (k, line) in loc.line.iter().enumerate() {
            let Some((name, file)) = functions.get(&line.function_id) else {
                bad = Some(format!(
                    "location {} (id {}) refers to function id {}, which the profile does not define",
                    i, loc.id, line.function_id
                ));
                break;
            };
            let name = if name.trim().is_empty() {
                by_address += 1;
                address_name()
            } else {
                name.clone()
            };
            if k == 0 && line.line > 0 && !file.trim().is_empty() {
                leaf_line = Some((name.clone(), file.clone(), line.line as u64));
            }
            fr.push(frames.intern(&name, &group));
        }
        if let Some(msg) = bad {
            bad_locations += 1;
            if first_bad_location.is_none() {
                first_bad_location = Some(match off {
                    Some(o) => Problem::at_offset(o, msg),
                    None => Problem::whole(msg),
                });
            }
            continue;
        }
        if loc.line.is_empty() {
            by_address += 1;
            let name = address_name();
            if example_address.is_none() {
                example_address = Some(name.clone());
            }
            fr.push(frames.intern(&name, &group));
        }
        fr.reverse();
        locations.insert(
            loc.id,
            LocationFrames {
                frames: fr,
                leaf_line,
            },
        );
    }
    if let Some(mut first) = first_bad_location {
        first.message = format!(
            "{}; {} such location(s) left out, and the samples using them skipped",
            first.message, bad_locations
        );
        partial.push(first);
    }
    if by_address > 0 {
        notes.push(format!(
            "{by_address} of {} locations have no function name (a stripped or unsymbolized profile): their frames are named by address{}",
            p.location.len(),
            example_address.map(|a| format!(", e.g. `{a}`")).unwrap_or_default()
        ));
    }
    // Threads from labels.
    let mut label_key_ids = |keys: &[&str]| -> Option<(i64, String)> {
        for k in keys {
            if let Some(id) = p.string_table.iter().position(|s| s == k) {
                let id = id as i64;
                let has = |si: usize, sample: &mut proto::Sample| {
                    read_sample(si, sample) && sample.label.iter().any(|l| l.key == id)
                };
                if (0..n_samples).any(|si| has(si, &mut sample)) {
                    return Some((id, (*k).to_string()));
                }
            }
        }
        None
    };
    let thread_key = label_key_ids(THREAD_LABEL_KEYS);
    let process_key = label_key_ids(PROCESS_LABEL_KEYS);
    let label_value = |s: &proto::Sample, key: i64| -> Option<LabelValue> {
        let l = s.label.iter().find(|l| l.key == key)?;
        if l.str != 0 {
            strings
                .table
                .get(l.str as usize)
                .map(|v| LabelValue::Str(v.clone()))
        } else {
            Some(LabelValue::Num(l.num))
        }
    };
    // Each sample's (process, thread) label values; none held when no sample has either
    // label (every sample then has (None, None)).
    let sample_keys: Vec<(Option<LabelValue>, Option<LabelValue>)> =
        if process_key.is_some() || thread_key.is_some() {
            (0..n_samples)
                .map(|si| {
                    if !read_sample(si, &mut sample) {
                        return (None, None);
                    }
                    (
                        process_key.as_ref().and_then(|(k, _)| label_value(&sample, *k)),
                        thread_key.as_ref().and_then(|(k, _)| label_value(&sample, *k)),
                    )
                })
                .collect()
        } else {
            Vec::new()
        };
    let no_keys = (None, None);
    let keys_of = |si: usize| sample_keys.get(si).unwrap_or(&no_keys);
    let node_of = number_values((0..n_samples).map(|si| keys_of(si).0.clone()));
    let thread_of = number_values((0..n_samples).map(|si| keys_of(si).1.clone()));
    // Samples into one tree per thread.
    let mut trees: BTreeMap<ThreadId, (StackTree, Option<LabelValue>, Option<LabelValue>)> = BTreeMap::new();
    let no_stack = frames.intern("(no location)", "");
    let cut_frame = frames.intern(crate::stacks::CUT_FRAME, "");
    let mut cut_samples = 0u64;
    let mut skipped_values = 0usize;
    let mut skipped_locations = 0usize;
    let mut first_skip: Option<Problem> = None;
    let mut stack: Vec<u32> = Vec::new();
    let mut values = vec![0.0; n_metrics];
    for si in 0..n_samples {
        if !read_sample(si, &mut sample) {
            continue; // cannot happen: `decode_with` kept only the samples that decode
        }
        let s = &sample;
        let off = sample_offsets.get(si).copied();
        let skip = |msg: String, first: &mut Option<Problem>| {
            if first.is_none() {
                *first = Some(match off {
                    Some(o) => Problem::at_offset(o, msg),
                    None => Problem::whole(msg),
                });
            }
        };
        if s.value.len() != n_metrics {
            skipped_values += 1;
            skip(
                format!(
                    "sample {si} has {} values but the profile has {n_metrics} sample types",
                    s.value.len()
                ),
                &mut first_skip,
            );
            continue;
        }
        stack.clear();
        let mut leaf_line = None;
        let mut ok = true;
        for (k, id) in s.location_id.iter().enumerate().rev() {
            match locations.get(id) {
                Some(l) => {
                    stack.extend_from_slice(&l.frames);
                    if k == 0 {
                        leaf_line = l.leaf_line.as_ref();
                    }
                }
                None => {
                    ok = false;
                    skip(
                        format!(
                            "sample {si} refers to location id {id}, which the profile does not define (or which was left out)"
                        ),
                        &mut first_skip,
                    );
                    break;
                }
            }
        }
        if !ok {
            skipped_locations += 1;
            continue;
        }
        if stack.is_empty() {
            stack.push(no_stack);
        }
        for (k, &i) in order.iter().enumerate() {
            values[k] = s.value[i] as f64;
        }
        let (pk, tk) = keys_of(si);
        let id = ThreadId::new(
            pk.as_ref().map_or(node_of.missing, |v| node_of.get(v)),
            0,
            tk.as_ref().map_or(thread_of.missing, |v| thread_of.get(v)),
        );
        let entry = trees
            .entry(id)
            .or_insert_with(|| (StackTree::new(n_metrics), pk.clone(), tk.clone()));
        if entry.0.add_sample(&stack, &values, cut_frame) {
            cut_samples += 1;
        }
        if let Some((routine, file, line)) = leaf_line {
            entry.0.add_line_sample(routine, file, *line, &values);
        }
    }
    if let Some(mut first) = first_skip {
        first.message = format!(
            "{}; {} sample(s) with a wrong number of values and {} with undefined locations were skipped",
            first.message, skipped_values, skipped_locations
        );
        partial.push(first);
    }
    warnings.extend(crate::stacks::cut_warning(cut_samples));
    if frames.rewritten_separators > 0 {
        notes.push(format!(
            "{} function name(s) contained `=>`, perfscape's callpath separator; it was written `= >`",
            frames.rewritten_separators
        ));
    }
    if let Some((_, key)) = &thread_key {
        notes.push(format!(
            "threads come from the `{key}` sample label{}",
            if thread_of.renumbered {
                " (values renumbered; the original value is in each thread's metadata `pprof thread label`)"
            } else {
                " (thread number = label value)"
            }
        ));
    }
    if let Some((_, key)) = &process_key {
        notes.push(format!(
            "nodes come from the `{key}` sample label{}",
            if node_of.renumbered {
                " (values renumbered; the original value is in each thread's metadata `pprof process label`)"
            } else {
                " (node number = label value)"
            }
        ));
    }
    // The input bytes and each sample's offset in them (8 bytes a sample: 8 MB for 10^6
    // samples) are not needed once every sample is in the trees.
    drop((data, sample_offsets));
    let common = common_metadata(&p, &strings);
    // The decoded tables are not needed once the trees hold every sample: freed before the
    // builder holds the events and cells (they would add to the load's peak).
    drop((locations, functions, mapping_group, sample_keys, p));
    let mut builder = ProfileBuilder::new(metrics);
    let no_trees = trees.is_empty();
    // Each tree is freed once emitted, and its node index before that (see
    // `StackTree::drop_index`).
    while let Some((id, (mut tree, pv, tv))) = trees.pop_first() {
        tree.drop_index();
        let mut data = ThreadData::new(n_metrics);
        for (k, v) in &common {
            data.push_metadata(k, v);
        }
        if let (Some((_, key)), Some(v)) = (&process_key, &pv) {
            data.push_metadata("pprof process label", &format!("{key}={v}"));
        }
        if let (Some((_, key)), Some(v)) = (&thread_key, &tv) {
            data.push_metadata("pprof thread label", &format!("{key}={v}"));
        }
        // Threads come from a BTreeMap, so they are in ascending order and unique.
        builder
            .add_thread_with(id, data, |rows| tree.emit(&frames, rows, "TAU_SAMPLE"))
            .map_err(|e| Problem::whole(format!("internal error: {e}")))?;
    }
    if no_trees {
        // A profile without samples is valid (e.g. an idle CPU profile): one empty thread.
        let mut data = ThreadData::new(n_metrics);
        for (k, v) in &common {
            data.push_metadata(k, v);
        }
        builder
            .add_thread(ThreadId::new(0, 0, 0), data)
            .map_err(|e| Problem::whole(format!("internal error: {e}")))?;
        notes.push("the profile has no samples".to_string());
    }
    let (profile, build_notes) = builder.finish();
    warnings.extend(build_notes.into_iter().map(|n| Problem::whole(n.message)));
    Ok(Parsed {
        trace: None,
        profile,
        warnings,
        partial,
        notes,
    })
}

fn common_metadata(p: &proto::Profile, strings: &Strings<'_>) -> Vec<(String, String)> {
    let s = |i: i64| strings.table.get(i as usize).cloned().unwrap_or_default();
    let mut md = vec![(
        "Source format".to_string(),
        "pprof (perftools.profiles)".to_string(),
    )];
    md.push((
        "pprof sample types".to_string(),
        p.sample_type
            .iter()
            .map(|st| format!("{}/{}", s(st.r#type), s(st.unit)))
            .collect::<Vec<_>>()
            .join(", "),
    ));
    if let Some(pt) = &p.period_type {
        md.push((
            "pprof period".to_string(),
            format!("{} {}/{}", p.period, s(pt.r#type), s(pt.unit)),
        ));
    } else if p.period != 0 {
        md.push(("pprof period".to_string(), p.period.to_string()));
    }
    if p.duration_nanos != 0 {
        md.push(("pprof duration_nanos".to_string(), p.duration_nanos.to_string()));
    }
    if p.time_nanos != 0 {
        md.push(("pprof time_nanos".to_string(), p.time_nanos.to_string()));
    }
    if p.drop_frames != 0 {
        md.push(("pprof drop_frames".to_string(), s(p.drop_frames)));
    }
    if p.keep_frames != 0 {
        md.push(("pprof keep_frames".to_string(), s(p.keep_frames)));
    }
    let comments: Vec<String> = p.comment.iter().map(|&c| s(c)).collect();
    if !comments.is_empty() {
        md.push(("pprof comments".to_string(), comments.join("\n")));
    }
    if let Some(m) = p.mapping.first() {
        md.push(("pprof main binary".to_string(), s(m.filename)));
        if m.build_id != 0 {
            md.push(("pprof main binary build id".to_string(), s(m.build_id)));
        }
    }
    md
}

/// The pprof format: a `perftools.profiles.Profile` protocol buffer (gzip-compressed as Go
/// and most tools write it, undone by [`crate::open`], or raw).
pub const FORMAT: Format = Format {
    name: "pprof",
    description: "pprof profiles (perftools.profiles protocol buffer, gzip or raw: .pb.gz, .pb, .pprof)",
    example: "pprof/google-pprof-testdata/sample.cpu.pb.gz",
    sniff: |p| p.head().is_some_and(looks_like_pprof),
    read: format::Read::OwnedBytes(parse_pprof_owned),
    gives: Parts::PROFILE,
    file_scope: FileScope::File,
};
