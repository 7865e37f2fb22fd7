//! Chrome Trace Event Format JSON (chrome://tracing, Perfetto, catapult, PyTorch/Kineto,
//! Hermes, TAU's `tau_trace2json -chrome`), plain or gzip-compressed.
//!
//! Specification: "Trace Event Format" (Google, the document linked from catapult's
//! `docs/trace-event-format.md`). Both the JSON array form (`[ {...}, ... ]`, whose closing
//! `]` the format makes optional) and the object form (`{"traceEvents": [...], ...}`) are read.
//!
//! # What is read
//! - `B`/`E` (begin/end, matched per thread in timestamp order, file order at equal times; an
//!   `E` whose name differs from the open `B` still closes it, with a warning) and `X`
//!   (complete, `ts` + `dur`): the thread's intervals. A `B` never closed is closed at the last
//!   timestamp seen on its thread, with a warning.
//! - `i`/`I` (instant, scope `s` = `t`/`p`/`g`), `n`, `T`, `p` (async steps): instants.
//! - `C` (counter): one series per `args` key, per process (the `id`, when given, is appended
//!   to the counter name in brackets).
//! - `b`/`e` (nestable async, keyed by category and `id`/`id2`, per process for local ids)
//!   and the legacy `S`/`F`: async spans.
//! - `s`/`t`/`f` (flow): arrows between threads, matched by category, `id` (or `id2`) and
//!   `scope`, first in first out (so repeated ids — TAU writes the destination rank as the id
//!   and the message tag as the scope — pair the n-th send with the n-th receive). A flow's
//!   bytes are its start's `args` member `message-size` (TAU's `tau_trace2json`), else
//!   unknown (`None`).
//! - `M` (metadata): `process_name`, `thread_name` (and labels, sort indices) name the threads.
//! - `samples` + `stackFrames` (object form; Linux perf in catapult, Hermes): sampled call
//!   stacks per thread, as callpath and flat events with the metrics `samples` (1 per sample)
//!   and `sample weight` (the `weight` field) when present.
//! - Other phases (`P`, `O`, `N`, `D`, `R`, `c`, `V`, `v`, `(`, `)`) are counted in a note and
//!   not used.
//!
//! # Time
//! `ts` and `dur` are microseconds whatever `displayTimeUnit` says (it only sets how viewers
//! display them; it is kept in the metadata). They are read from the JSON text as exact
//! decimals (numbers or numeric strings) and stored as integer **nanoseconds** in the
//! [`Trace`]; the derived profile's `TIME` metric is in microseconds, TAU's unit. Times,
//! sample counts and weights are accumulated over intervals and samples, so every metric
//! combines by sum.
//!
//! # Threads
//! A thread is a (`pid`, `tid`) pair. The node is the `pid` and the thread number the `tid`
//! when they are integers that fit `u32` (numeric strings count as integers); any other value
//! (negative, too large, a name such as `"Spans"`) gets a number after the largest such pid
//! (or tid within its process), in sorted order. The values as written are kept in the
//! trace's threads and in each profile thread's metadata (`Chrome pid`, `Chrome tid`), with
//! the process and thread names.
//!
//! # Memory
//! The JSON text is the only copy of the input: `traceEvents` is read element by element
//! (serde_json over the text, a visitor over the array) and each event is converted as it is
//! read, keeping only what the trace needs (`collect`: interned names and categories,
//! numbered threads, times, input positions; about 30–70 bytes per event). Order-dependent
//! matching (begin/end pairs, flows, async spans, metadata naming threads wherever it is
//! written, `samples`/`stackFrames` before or after `traceEvents`) happens once everything is
//! read. Opened from a file ([`parse_trace_owned`]), the text is freed before the trace is
//! nested and its profile derived. A 528 MB Kineto-shaped trace
//! (`bench/gen_chrome_trace.py`) peaks at about 1.5 times its size.
//!
//! # Derived profile
//! See [`crate::trace_profile`]: per thread and event, calls, subcalls, inclusive time (union
//! of the event's intervals) and exclusive time (minus the direct children), flat and per
//! callpath. Threads without intervals or samples are in the trace but not in the profile.

mod collect;
mod json;
mod phases;
mod samples;
mod threads;

pub use json::parse_us_as_ns;

use crate::format::{self, FileScope, Format, Parts};
use crate::problem::{Parsed, Problem};
use crate::stacks::{FrameTable, StackTree};
use crate::trace_profile::emit_lane;
use perfscape_model::{Metric, Profile, ProfileBuilder, ThreadData, ThreadId, Trace, TraceBuilder, Unit};
use std::collections::{BTreeMap, BTreeSet};

/// What the reader found wrong or worth saying, collected by its phases.
#[derive(Debug, Default)]
struct Report {
    /// Problems that left data out.
    partial: Vec<Problem>,
    /// Problems with data that loaded.
    warnings: Vec<Problem>,
    /// Notes on the mapping.
    notes: Vec<String>,
}

/// An open span or flow point: (thread handle, time ns, name id, category id).
type OpenPoint = (u32, i64, u32, u32);

/// True when `head` (the first bytes of a decompressed file) looks like a Chrome trace: a JSON
/// object with a `traceEvents` key (or a Kineto header), or a JSON array whose first element
/// has a `ph` key.
pub fn looks_like_chrome_trace(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(head);
    let t = text.trim_start_matches(['\u{feff}', ' ', '\t', '\r', '\n']);
    if t.starts_with('{') {
        return t.contains("\"traceEvents\"")
            || (t.contains("\"schemaVersion\"") && t.contains("\"deviceProperties\""));
    }
    if let Some(rest) = t.strip_prefix('[') {
        let rest = rest.trim_start();
        if rest.is_empty() || rest.starts_with(']') {
            return true;
        }
        if rest.starts_with('{') {
            let head: String = rest.chars().take(4096).collect();
            return head.contains("\"ph\"");
        }
    }
    false
}

/// Parses a Chrome trace (JSON; [`crate::open`] decompresses a compressed file) into the trace
/// model ([`Parsed::trace`]) and a derived profile.
/// Errors when the input is not a trace at all; damage after the first events (truncation,
/// a malformed event) loads what is valid, reported in [`Parsed::partial`].
pub fn parse_trace(data: &[u8]) -> Result<Parsed, Problem> {
    finish(read_events(data)?)
}

/// [`parse_trace`] taking the bytes: they are freed as soon as every event is in the trace
/// builder, before the trace is nested and its profile derived (what [`crate::open`] uses,
/// so that a large trace's text and its profile are never in memory together).
pub fn parse_trace_owned(data: Vec<u8>) -> Result<Parsed, Problem> {
    let read = read_events(&data)?;
    drop(data);
    finish(read)
}

/// What reading the events gives: the trace builder holding them, the samples, the threads,
/// the number of counter values and the report so far. Owns all it holds.
type Read = (
    TraceBuilder,
    Vec<samples::Sample>,
    threads::Threads,
    usize,
    Report,
);

/// Reads the JSON text of a trace, converting each event as it is read and keeping it
/// compactly ([`collect`]): the text is the only copy of the JSON in memory.
fn read_events(data: &[u8]) -> Result<Read, Problem> {
    let mut report = Report::default();
    let text = match std::str::from_utf8(data) {
        Ok(t) => t,
        Err(e) => {
            let valid = e.valid_up_to();
            report.partial.push(Problem::at_offset(
                valid as u64,
                "invalid UTF-8: the JSON text was read up to this byte",
            ));
            // `valid_up_to` bytes are valid UTF-8.
            std::str::from_utf8(&data[..valid]).unwrap_or("")
        }
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim().is_empty() {
        return Err(Problem::whole(
            "the file is empty: expected a Chrome trace (a JSON array of events or an object with `traceEvents`)",
        ));
    }
    let mut col = collect::Collector::default();
    let top = json::decode_events(text, &mut report, |e| col.push(e))?;
    let samples = match top.samples {
        Some(s) => samples::read_samples(s, top.stack_frames, &mut report.warnings),
        None => Vec::new(),
    };
    let mut tb = TraceBuilder::new();
    let threads = threads::register(&col, &samples, &mut tb, &mut report);
    let counters = phases::add_events(col, &threads, &mut tb, &mut report, text);
    if let Some(u) = &top.display_time_unit {
        tb.push_metadata("displayTimeUnit", u);
        report.notes.push(format!(
            "displayTimeUnit is `{u}`: it only sets how viewers display times; `ts`/`dur` are microseconds as the format defines"
        ));
    }
    for (k, v) in &top.other {
        tb.push_metadata(k, v);
    }
    Ok((tb, samples, threads, counters, report))
}

/// Nests the trace and derives its profile.
fn finish((tb, samples, threads, counters, mut report): Read) -> Result<Parsed, Problem> {
    let (trace, trace_notes) = tb.finish();
    for n in trace_notes {
        report
            .warnings
            .push(Problem::whole(format!("thread {}: {}", n.thread, n.message)));
    }
    let profile = derive_profile(&trace, &samples, &threads, counters, &mut report)?;
    Ok(Parsed {
        profile,
        trace: Some(trace),
        warnings: report.warnings,
        partial: report.partial,
        notes: report.notes,
    })
}

/// The profile of a trace: per thread, the rows derived from its intervals
/// ([`crate::trace_profile`]) and from its samples' stacks ([`crate::stacks`]).
fn derive_profile(
    trace: &Trace,
    samples: &[samples::Sample],
    threads: &threads::Threads,
    counters: usize,
    report: &mut Report,
) -> Result<Profile, Problem> {
    let has_weight = samples.iter().any(|s| s.weight.is_some());
    let mut metrics = vec![Metric::new("TIME", Unit::Microseconds)];
    if !samples.is_empty() {
        metrics.push(Metric::new("samples", Unit::Count));
        if has_weight {
            metrics.push(Metric::new("sample weight", Unit::Count));
        }
    }
    let n_metrics = metrics.len();
    let mut frames = FrameTable::default();
    let mut trees: BTreeMap<ThreadId, StackTree> = BTreeMap::new();
    let mut cut_samples = 0u64;
    for (s, key) in samples.iter().zip(&threads.sample_keys) {
        let Some(&id) = threads.thread_of.get(key) else {
            continue;
        };
        let tree = trees.entry(id).or_insert_with(|| StackTree::new(n_metrics));
        let stack: Vec<u32> = s
            .frames
            .iter()
            .rev()
            .map(|(name, cat)| frames.intern(name, cat))
            .collect();
        let stack = if stack.is_empty() {
            vec![frames.intern("(no stack)", "")]
        } else {
            stack
        };
        let mut values = vec![0.0; n_metrics];
        values[1] = 1.0;
        if has_weight {
            values[2] = s.weight.unwrap_or(1.0);
        }
        let cut = frames.intern(crate::stacks::CUT_FRAME, "");
        if tree.add_sample(&stack, &values, cut) {
            cut_samples += 1;
        }
    }
    let mut builder = ProfileBuilder::new(metrics);
    for (t, th) in trace.threads().iter().enumerate() {
        let lane = trace.lane(t);
        // Each tree's node index is freed before it is emitted, and the tree by `emit`
        // (see `StackTree::drop_index`).
        let tree = trees.remove(&th.id).map(|mut tree| {
            tree.drop_index();
            tree
        });
        if lane.is_empty() && tree.is_none() {
            continue;
        }
        let mut data = ThreadData::new(n_metrics);
        data.push_metadata("Source format", "Chrome Trace Event Format");
        data.push_metadata("Chrome pid", &th.process);
        data.push_metadata("Chrome tid", &th.thread);
        if let Some(n) = &th.process_name {
            data.push_metadata("Chrome process name", n);
        }
        if let Some(n) = &th.thread_name {
            data.push_metadata("Chrome thread name", n);
        }
        for (k, v) in trace.metadata() {
            data.push_metadata(k, v);
        }
        // The sample tree's events first, then the lane's: the order they were interned in
        // when both went through one ThreadData.
        builder
            .add_thread_with(th.id, data, |rows| {
                if let Some(tree) = tree {
                    tree.emit(&frames, rows, "TAU_SAMPLE");
                }
                emit_lane(trace, lane, rows, 0, &mut frames);
            })
            .map_err(|e| Problem::whole(format!("internal error: {e}")))?;
    }
    report.warnings.extend(crate::stacks::cut_warning(cut_samples));
    if builder.thread_count() == 0 {
        report
            .notes
            .push("the trace has no intervals or samples, so the profile has no threads".into());
    }
    if frames.rewritten_separators > 0 {
        report.notes.push(format!(
            "{} event name(s) contained `=>`, perfscape's callpath separator; it was written `= >`",
            frames.rewritten_separators
        ));
    }
    report.notes.push(format!(
        "trace: {} threads, {} intervals, {} instants, {} counter values, {} async spans, {} flows{}",
        trace.threads().len(),
        trace.interval_count(),
        trace.instants().len(),
        counters,
        trace.async_spans().len(),
        trace.flows().len(),
        if samples.is_empty() {
            String::new()
        } else {
            format!(", {} samples", samples.len())
        }
    ));
    let (profile, build_notes) = builder.finish();
    // With samples, a name can be both a trace interval and a sampled frame on one thread:
    // the builder then combines the two rows. Say so once instead of once per name.
    let (combined, other): (Vec<_>, Vec<_>) = build_notes
        .into_iter()
        .partition(|n| !samples.is_empty() && n.message.contains("is listed more than once"));
    if let Some(first) = combined.first() {
        let threads: BTreeSet<ThreadId> = combined.iter().map(|n| n.thread).collect();
        let example = first.message.split('`').nth(1).unwrap_or_default().to_string();
        report.notes.push(format!(
            "{} event name(s) on {} thread(s) are both trace intervals and sampled stack frames (e.g. `{example}`); their rows were combined: TIME comes from the intervals, the sample metrics from the sampled stacks, and calls add up both",
            combined.len(),
            threads.len()
        ));
    }
    report.warnings.extend(
        other
            .into_iter()
            .map(|n| Problem::whole(format!("thread {}: {}", n.thread, n.message))),
    );
    Ok(profile)
}

/// Chrome Trace Event Format JSON: the trace and the profile derived from it.
pub const FORMAT: Format = Format {
    name: "chrome",
    description: "Chrome Trace Event Format JSON (array or {\"traceEvents\": ...} form; Perfetto, PyTorch Kineto, TAU's tau_trace2json)",
    example: "tau-real/mpi-stencil-np4-trace/trace.chrome.json",
    sniff: |p| p.head().is_some_and(looks_like_chrome_trace),
    read: format::Read::OwnedBytes(parse_trace_owned),
    gives: Parts {
        series: false,
        trace: true,
    },
    file_scope: FileScope::File,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn microseconds_parse_exactly_to_nanoseconds() {
        assert_eq!(parse_us_as_ns("0"), Ok(Some(0)));
        assert_eq!(parse_us_as_ns("3.011"), Ok(Some(3011)));
        assert_eq!(parse_us_as_ns("\"807167.000000\""), Ok(Some(807_167_000)));
        assert_eq!(
            parse_us_as_ns("1712195495519695.8"),
            Ok(Some(1_712_195_495_519_695_800))
        );
        assert_eq!(parse_us_as_ns("63.813"), Ok(Some(63_813)));
        assert_eq!(parse_us_as_ns("0.0004"), Ok(Some(0)));
        assert_eq!(parse_us_as_ns("0.0005"), Ok(Some(1)));
        assert_eq!(parse_us_as_ns("-2.5"), Ok(Some(-2500)));
        assert_eq!(parse_us_as_ns("1.5e3"), Ok(Some(1_500_000)));
        assert_eq!(parse_us_as_ns("1E-3"), Ok(Some(1)));
        assert_eq!(parse_us_as_ns("null"), Ok(None));
        assert!(parse_us_as_ns("1e300").is_err());
        assert!(parse_us_as_ns("99999999999999999999").is_err());
        assert!(parse_us_as_ns("abc").is_err());
        assert!(parse_us_as_ns("1.2.3").is_err());
        assert!(parse_us_as_ns("-").is_err());
    }

    #[test]
    fn sniffs_both_forms() {
        assert!(looks_like_chrome_trace(b"[{\"name\":\"a\",\"ph\":\"B\"}"));
        assert!(looks_like_chrome_trace(b"{\"traceEvents\": []}"));
        assert!(looks_like_chrome_trace(b"[\n]"));
        assert!(!looks_like_chrome_trace(b"{\"data\": [], \"columns\": []}"));
        assert!(!looks_like_chrome_trace(b"[1, 2, 3]"));
    }
}
