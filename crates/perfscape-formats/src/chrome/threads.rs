//! Threads of a Chrome trace: (pid, tid) pairs numbered as [`ThreadId`]s (see the parent
//! module's documentation), named from the metadata events, registered in the trace.

use super::Report;
use super::json::{Ev, Key, number_keys, text_of};
use super::samples::Sample;
use perfscape_model::{ThreadId, TraceBuilder, TraceThread};
use rustc_hash::FxHashMap as HashMap;
use serde_json::value::RawValue;
use std::collections::{BTreeMap, BTreeSet};

/// The threads of a trace and how its keys map to them.
pub(super) struct Threads {
    /// Trace thread handle of each (pid, tid).
    pub(super) handle: HashMap<(Key, Key), u32>,
    /// Node number of each pid.
    pub(super) node_of: BTreeMap<Key, u32>,
    /// Thread address of each (pid, tid).
    pub(super) thread_of: HashMap<(Key, Key), ThreadId>,
    /// The (pid, tid) of each sample.
    pub(super) sample_keys: Vec<(Key, Key)>,
}

/// Numbers the threads of the events and samples, names them and registers them in `tb`.
pub(super) fn register(
    evs: &[Ev<'_>],
    samples: &[Sample],
    tb: &mut TraceBuilder,
    report: &mut Report,
) -> Threads {
    let metadata_phase = |e: &Ev<'_>| e.ph == b'M';
    let process_scoped = |e: &Ev<'_>| matches!(e.ph, b'C' | b'M');
    let mut thread_keys: BTreeSet<(Key, Key)> = evs
        .iter()
        .filter(|e| !process_scoped(e))
        .map(|e| (e.pid.clone(), e.tid.clone()))
        .collect();
    // Samples without a pid take the process of the trace thread with that tid, if unique.
    let mut tid_to_pids: HashMap<Key, Vec<Key>> = HashMap::default();
    for (p, t) in &thread_keys {
        tid_to_pids.entry(t.clone()).or_default().push(p.clone());
    }
    let mut unplaced_samples = 0usize;
    let sample_keys: Vec<(Key, Key)> = samples
        .iter()
        .map(|s| match &s.pid {
            Some(p) => (p.clone(), s.tid.clone()),
            None => match tid_to_pids.get(&s.tid).map(Vec::as_slice) {
                Some([p]) => (p.clone(), s.tid.clone()),
                _ => {
                    unplaced_samples += 1;
                    (Key::Str("(samples)".into()), s.tid.clone())
                }
            },
        })
        .collect();
    thread_keys.extend(sample_keys.iter().cloned());
    if unplaced_samples > 0 {
        report.notes.push(format!(
            "{unplaced_samples} samples name a thread (tid) but no process, and no trace event has that tid in exactly one process: they are listed under process `(samples)`"
        ));
    }
    let all_pids: Vec<Key> = evs
        .iter()
        .map(|e| e.pid.clone())
        .chain(thread_keys.iter().map(|(p, _)| p.clone()))
        .collect();
    let node_of = number_keys(all_pids.iter());
    let mut tids_per_pid: BTreeMap<&Key, Vec<&Key>> = BTreeMap::new();
    for (p, t) in &thread_keys {
        tids_per_pid.entry(p).or_default().push(t);
    }
    let mut thread_of: HashMap<(Key, Key), ThreadId> = HashMap::default();
    let mut renumbered = 0usize;
    for (p, tids) in &tids_per_pid {
        let numbers = number_keys(tids.iter().copied());
        let node = node_of.get(*p).copied().unwrap_or(0);
        if p.fits().is_none() {
            renumbered += 1;
        }
        for (t, n) in numbers {
            if t.fits().is_none() {
                renumbered += 1;
            }
            thread_of.insert(((*p).clone(), t), ThreadId::new(node, 0, n));
        }
    }
    if renumbered > 0 {
        report.notes.push(format!(
            "{renumbered} pid/tid values are not integers fitting 32 bits (e.g. names or negative numbers) and were numbered after the largest one; the values as written are in the threads' metadata (`Chrome pid`, `Chrome tid`)"
        ));
    }
    // Names from metadata events.
    let mut process_names: HashMap<Key, String> = HashMap::default();
    let mut thread_names: HashMap<(Key, Key), String> = HashMap::default();
    let mut process_labels: HashMap<Key, String> = HashMap::default();
    let mut other_metadata = 0usize;
    for e in evs.iter().filter(|e| metadata_phase(e)) {
        let arg = |k: &str| -> Option<String> {
            let args: HashMap<String, &RawValue> = e.args.and_then(|a| serde_json::from_str(a.get()).ok())?;
            args.get(k).map(|v| text_of(v).into_owned())
        };
        match e.name.as_ref() {
            "process_name" => {
                if let Some(n) = arg("name") {
                    process_names.insert(e.pid.clone(), n);
                }
            }
            "thread_name" => {
                if let Some(n) = arg("name") {
                    thread_names.insert((e.pid.clone(), e.tid.clone()), n);
                }
            }
            "process_labels" => {
                if let Some(n) = arg("labels") {
                    process_labels.insert(e.pid.clone(), n);
                }
            }
            "process_sort_index" | "thread_sort_index" => {}
            _ => other_metadata += 1,
        }
    }
    if other_metadata > 0 {
        report.notes.push(format!(
            "{other_metadata} metadata (`M`) events other than process/thread names, labels and sort indices were not used"
        ));
    }
    let mut handle: HashMap<(Key, Key), u32> = HashMap::default();
    for key in &thread_keys {
        let Some(&id) = thread_of.get(key) else { continue };
        let pname = match (process_names.get(&key.0), process_labels.get(&key.0)) {
            (Some(n), Some(l)) => Some(format!("{n} ({l})")),
            (Some(n), None) => Some(n.clone()),
            (None, Some(l)) => Some(l.clone()),
            (None, None) => None,
        };
        let h = tb.thread(TraceThread {
            id,
            process: key.0.to_string(),
            thread: key.1.to_string(),
            process_name: pname,
            thread_name: thread_names.get(key).cloned(),
        });
        handle.insert(key.clone(), h);
    }
    Threads {
        handle,
        node_of,
        thread_of,
        sample_keys,
    }
}
