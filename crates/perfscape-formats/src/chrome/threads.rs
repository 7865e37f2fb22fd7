//! Threads of a Chrome trace: (pid, tid) pairs numbered as [`ThreadId`]s (see the parent
//! module's documentation), named from the metadata events, registered in the trace.

use super::Report;
use super::collect::Collector;
use super::json::{Key, number_keys};
use super::samples::Sample;
use perfscape_model::{ThreadId, TraceBuilder, TraceThread};
use rustc_hash::FxHashMap as HashMap;
use std::collections::{BTreeMap, BTreeSet};

/// The threads of a trace and how its keys map to them.
pub(super) struct Threads {
    /// Trace thread handle of each thread number of the [`Collector`].
    pub(super) handle: Vec<u32>,
    /// Node number of each pid number of the [`Collector`].
    pub(super) node_of_pid: Vec<u32>,
    /// Thread address of each (pid, tid).
    pub(super) thread_of: HashMap<(Key, Key), ThreadId>,
    /// The (pid, tid) of each sample.
    pub(super) sample_keys: Vec<(Key, Key)>,
}

/// Numbers the threads of the events and samples, names them and registers them in `tb`.
pub(super) fn register(
    col: &Collector<'_>,
    samples: &[Sample],
    tb: &mut TraceBuilder,
    report: &mut Report,
) -> Threads {
    let pid_key = |p: u32| &col.pids[p as usize];
    let mut thread_keys: BTreeSet<(Key, Key)> = col
        .threads
        .iter()
        .map(|(p, t)| (pid_key(*p).clone(), t.clone()))
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
    let node_of = number_keys(col.pids.iter().chain(thread_keys.iter().map(|(p, _)| p)));
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
    let other_metadata = col.other_metadata;
    if other_metadata > 0 {
        report.notes.push(format!(
            "{other_metadata} metadata (`M`) events other than process/thread names, labels and sort indices were not used"
        ));
    }
    let mut handle_of: HashMap<(Key, Key), u32> = HashMap::default();
    for key in &thread_keys {
        let Some(&id) = thread_of.get(key) else { continue };
        let pn = col.pid_number(&key.0);
        let pn_get = |m: &'_ HashMap<u32, String>| -> Option<String> { pn.and_then(|p| m.get(&p).cloned()) };
        let pname = match (pn_get(&col.process_names), pn_get(&col.process_labels)) {
            (Some(n), Some(l)) => Some(format!("{n} ({l})")),
            (Some(n), None) => Some(n),
            (None, Some(l)) => Some(l),
            (None, None) => None,
        };
        let h = tb.thread(TraceThread {
            id,
            process: key.0.to_string(),
            thread: key.1.to_string(),
            process_name: pname,
            thread_name: pn.and_then(|p| col.thread_names.get(&(p, key.1.clone())).cloned()),
        });
        handle_of.insert(key.clone(), h);
    }
    let handle = col
        .threads
        .iter()
        .map(|(p, t)| {
            handle_of
                .get(&(pid_key(*p).clone(), t.clone()))
                .copied()
                .unwrap_or(u32::MAX)
        })
        .collect();
    let node_of_pid = col
        .pids
        .iter()
        .map(|k| node_of.get(k).copied().unwrap_or(0))
        .collect();
    Threads {
        handle,
        node_of_pid,
        thread_of,
        sample_keys,
    }
}
