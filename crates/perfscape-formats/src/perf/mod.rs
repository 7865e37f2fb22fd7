//! Linux `perf`: the text written by `perf script` ([`script`]) and the binary `perf.data`
//! file ([`data`]).
//!
//! # Mapping into the model (both forms)
//! - **Threads**: `ThreadId { node: pid, context: 0, thread: tid }`: one thread per (pid, tid),
//!   as `perf report --sort pid,tid` counts them, wherever the thread ran. The CPUs its
//!   samples ran on, when the input records them (`perf record -a`, `--sample-cpu`, or the
//!   `[cpu]` column of `perf script`), are in its metadata (`cpus`). When `perf script`
//!   printed only thread ids (its default without `-F +pid`) the node is 0. Negative ids
//!   (perf's -1 = unknown) become 4294967295. The thread's command name is kept in its
//!   metadata (`comm`).
//! - **Metrics**: each sample counts 1 in `samples`, and adds its period to `period` when the
//!   input has periods (`cpu-clock`/`task-clock` periods are nanoseconds, `cycles` periods
//!   cycles, other events counts). With several events the metrics are per event:
//!   `samples (cycles)`, `period (cycles)`, `samples (instructions)`, ... Counts and periods
//!   accumulate over samples (as `perf report` sums them), so every metric combines by sum.
//! - **Events**: a sample's call chain (leaf first in perf's output) gives callpath and flat
//!   events as described in [`crate::stacks`]; without a call chain, the sampled instruction
//!   is a one-frame stack. Frames are function names when the input has them (`perf script`),
//!   with the `+0x..` offset removed; otherwise (`perf.data`, which holds no symbols, and
//!   `[unknown]` symbols) they are named by address, `0x11a6 (hot)`: the address within the
//!   mapped file as `perf script` prints it (or the absolute address when no mapping is
//!   known) and the file's base name. The group of a frame is its file's base name.
//! - **Source lines**: when the leaf frame's source line is known (`perf script -F +srcline`),
//!   the sample is also added to `[SAMPLE] function [{file} {line}]` (TAU's convention), so
//!   line-level views work: rows are source lines, columns threads/CPUs.

pub mod data;
mod layout;
mod records;
pub mod script;

use crate::problem::{Parsed, Problem};
use crate::stacks::{FrameTable, StackTree};
use perfscape_model::{Metric, ProfileBuilder, ThreadData, ThreadId, Unit};
use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeMap;

/// The unit of a perf event's sample period, from the event name.
pub fn period_unit(event: &str) -> Unit {
    let base = event.split(':').next().unwrap_or(event).trim();
    match base {
        "cpu-clock" | "task-clock" => Unit::Nanoseconds,
        b if b.contains("cycles") && !b.contains("stalled") => Unit::Cycles,
        _ => Unit::Count,
    }
}

/// The id of a perf pid/tid/cpu in a [`ThreadId`]: negative values (unknown) become
/// `u32::MAX`.
pub(crate) fn id_part(v: i64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

/// Metric layout for the events of an input: per event, the index of its `samples` metric and
/// of its `period` metric (if the event has periods).
pub(crate) struct Layout {
    pub metrics: Vec<Metric>,
    pub samples: Vec<usize>,
    pub period: Vec<Option<usize>>,
}

/// The metrics for `events` (name, has period), see the module documentation.
pub(crate) fn layout(events: &[(String, bool)]) -> Layout {
    let mut metrics = Vec::new();
    let mut samples = Vec::new();
    let mut period = Vec::new();
    let single = events.len() <= 1;
    for (name, has_period) in events {
        let suffix = if single {
            String::new()
        } else {
            format!(" ({name})")
        };
        samples.push(metrics.len());
        metrics.push(Metric::new(format!("samples{suffix}"), Unit::Count));
        if *has_period {
            period.push(Some(metrics.len()));
            metrics.push(Metric::new(format!("period{suffix}"), period_unit(name)));
        } else {
            period.push(None);
        }
    }
    if metrics.is_empty() {
        samples.push(0);
        period.push(None);
        metrics.push(Metric::new("samples", Unit::Count));
    }
    Layout {
        metrics,
        samples,
        period,
    }
}

/// Accumulates samples into one call tree per thread.
pub(crate) struct Aggregator {
    pub layout: Layout,
    pub frames: FrameTable,
    trees: BTreeMap<ThreadId, StackTree>,
    comms: HashMap<ThreadId, String>,
    /// CPUs each thread's samples ran on.
    cpus: HashMap<ThreadId, std::collections::BTreeSet<u32>>,
    values: Vec<f64>,
    /// Samples added.
    pub samples: u64,
    /// Samples with a source line for their leaf.
    pub line_samples: u64,
    /// Samples whose stack was deeper than [`crate::stacks::MAX_DEPTH`] and was cut.
    pub cut_samples: u64,
}

impl Aggregator {
    pub(crate) fn new(layout: Layout) -> Self {
        let n = layout.metrics.len();
        Self {
            layout,
            frames: FrameTable::default(),
            trees: BTreeMap::new(),
            comms: HashMap::default(),
            cpus: HashMap::default(),
            values: vec![0.0; n],
            samples: 0,
            line_samples: 0,
            cut_samples: 0,
        }
    }

    /// Adds one sample of event `event` on `thread`: frames root first, its period, the
    /// (routine, file, line) of its leaf when known.
    pub(crate) fn add(
        &mut self,
        thread: ThreadId,
        event: usize,
        period: Option<u64>,
        root_to_leaf: &[u32],
        leaf_line: Option<(&str, &str, u64)>,
    ) {
        self.samples += 1;
        self.values.iter_mut().for_each(|v| *v = 0.0);
        if let Some(&s) = self.layout.samples.get(event) {
            self.values[s] = 1.0;
        }
        if let (Some(Some(p)), Some(v)) = (self.layout.period.get(event), period) {
            self.values[*p] = v as f64;
        }
        let n = self.layout.metrics.len();
        let tree = self.trees.entry(thread).or_insert_with(|| StackTree::new(n));
        let cut = self.frames.intern(crate::stacks::CUT_FRAME, "");
        if tree.add_sample(root_to_leaf, &self.values, cut) {
            self.cut_samples += 1;
        }
        if let Some((routine, file, line)) = leaf_line {
            self.line_samples += 1;
            tree.add_line_sample(routine, file, line, &self.values);
        }
    }

    /// Records that `thread` had a sample on CPU `cpu`.
    pub(crate) fn cpu(&mut self, thread: ThreadId, cpu: u32) {
        self.cpus.entry(thread).or_default().insert(cpu);
    }

    /// Records the command name of a thread (the first one given wins).
    pub(crate) fn comm(&mut self, thread: ThreadId, comm: &str) {
        self.comms
            .entry(thread)
            .or_insert_with(|| comm.trim().to_string());
    }

    /// The profile of every thread's tree, each with the metadata `common` (and its `comm`),
    /// as a reader's result: `warnings` gain the cut-stack warning and the builder's notes.
    pub(crate) fn into_parsed(
        self,
        common: &[(String, String)],
        mut warnings: Vec<Problem>,
        partial: Vec<Problem>,
        notes: Vec<String>,
    ) -> Result<Parsed, Problem> {
        warnings.extend(crate::stacks::cut_warning(self.cut_samples));
        let n = self.layout.metrics.len();
        let mut builder = ProfileBuilder::new(self.layout.metrics);
        // Each tree's node index is freed before it is emitted, and the tree after.
        for (id, mut tree) in self.trees {
            tree.drop_index();
            let mut data = ThreadData::new(n);
            for (k, v) in common {
                data.push_metadata(k, v);
            }
            if let Some(c) = self.comms.get(&id) {
                data.push_metadata("comm", c);
            }
            if let Some(cpus) = self.cpus.get(&id) {
                let list: Vec<String> = cpus.iter().map(u32::to_string).collect();
                data.push_metadata("cpus", &list.join(", "));
            }
            builder
                .add_thread_with(id, data, |rows| tree.emit(&self.frames, rows, "TAU_SAMPLE"))
                .map_err(|e| Problem::whole(format!("internal error: {e}")))?;
        }
        let (profile, build) = builder.finish();
        warnings.extend(
            build
                .into_iter()
                .map(|n| Problem::whole(format!("thread {}: {}", n.thread, n.message))),
        );
        Ok(Parsed {
            profile,
            trace: None,
            warnings,
            partial,
            notes,
        })
    }
}

/// The base name of a path (`/usr/lib/libc.so.6` gives `libc.so.6`; `[kernel.kallsyms]`
/// stays).
pub(crate) fn basename(path: &str) -> &str {
    let p = path.trim();
    if p.starts_with('[') {
        return p;
    }
    p.rsplit('/').next().unwrap_or(p)
}

/// The name of a frame known only by address: `0x<addr> (<file>)`, or `0x<addr>`.
pub(crate) fn address_frame(addr: u64, dso: Option<&str>) -> String {
    match dso {
        Some(d) if !d.is_empty() => format!("0x{addr:x} ({})", basename(d)),
        _ => format!("0x{addr:x}"),
    }
}
