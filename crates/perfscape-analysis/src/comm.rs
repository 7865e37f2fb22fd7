//! The communication matrix of a run: who sent how many bytes to whom, from the user events
//! TAU records when run with `TAU_COMM_MATRIX=1`.
//!
//! TAU records, per MPI rank, one user event per peer: `Message size sent to node N` (the rank
//! sent to rank `N`) and, in some configurations, `Message size received from node N` (the rank
//! received from `N`); each sample is one message's size in bytes. With callpaths it also
//! records the context events `Message size sent to node N : a => b => c`, one per callpath the
//! messages were sent from.
//!
//! [`comm_matrix`] follows ParaProf's `CommunicationMatrixWindow.getMapData`/`extractData`/
//! `addMapData` and `edu.uoregon.tau.vis.HeatMapData.massageData` (TAU 2.x, `tools/src/paraprof`
//! and `tools/src/vis`), i.e. what `paraprof --writecomm` writes:
//! - only threads of context 0 and thread 0 count (one per MPI rank); the sender of a `sent to`
//!   event is the thread's node, its receiver `N`; a `received from` event has sender `N` and
//!   the thread's node as receiver (both kinds feed the same cells, as in ParaProf);
//! - the plain event feeds the [`ALL_PATHS`] matrix; a context event `… : a => b => c` feeds one
//!   matrix per element of its callpath (`a`, `b` and `c`; `.TAU application` skipped);
//! - per (sender, receiver) cell: calls = Σ count, max = max of the maxima, min = min of the
//!   minima, volume = Σ count · mean (bytes), mean = volume / calls.
//!
//! Where perfscape deliberately differs from ParaProf:
//! - the standard deviation is the true one of all the messages of the cell,
//!   `sqrt(max(0, Σ sum_squares / calls − mean²))`. ParaProf adds the rows' standard
//!   deviations and computes `sqrt(|Σ sd / calls − mean²|)`, which is not a standard deviation
//!   (6400 for 400 messages of exactly 6400 bytes, whose standard deviation is 0);
//! - the minimum is the true minimum (ParaProf takes a minimum of 0 as "not set yet", so a cell
//!   with a 0-byte message and a larger one shows the larger);
//! - a callpath is split at ` => ` and each distinct element counted once per event (ParaProf
//!   splits at every `=` and `>` character, so `operator>` or a template name is cut, cuts the
//!   event name at its first `:` so `ns::f` paths are truncated, and counts an element twice in
//!   a recursive path);
//! - a context event with a one-element path feeds that element's matrix (ParaProf, which looks
//!   for `=>`, adds it to "All Paths" a second time).
//!
//! A trace's messages give the same matrix ([`comm_matrix_from_trace`]: one cell per
//! sender and receiver rank, from the flows whose size is known), for runs that are traces
//! without comm-matrix events (OTF2, TAU traces).
//!
//! Events naming a node that is not in the run (`N` ≥ the number of ranks) are counted and
//! named in [`CommSkipped`], as ParaProf warns about them; the rows of other threads likewise.
//! Cells are stored sparsely (a stencil of 16,384 ranks has about 2 peers per rank): memory is
//! O(cells), never ranks².

use perfscape_model::{AtomicEventId, Profile, ThreadId, Trace};
use std::collections::HashMap;

/// The name of the matrix over every callpath (ParaProf's).
pub const ALL_PATHS: &str = "All Paths";

/// The prefix of the events of messages sent: `Message size sent to node N`.
pub const SENT_PREFIX: &str = "Message size sent to node ";

/// The prefix of the events of messages received: `Message size received from node N`.
pub const RECEIVED_PREFIX: &str = "Message size received from node ";

/// How many examples [`CommSkipped::out_of_range_examples`] keeps.
pub const SKIPPED_EXAMPLES: usize = 10;

/// The messages from one rank to another (one callpath or all), sizes in bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct CommCell {
    /// Sending rank (node).
    pub sender: u32,
    /// Receiving rank (node).
    pub receiver: u32,
    /// Number of messages (Σ count of the rows).
    pub calls: f64,
    /// Largest message, bytes.
    pub max_bytes: f64,
    /// Smallest message, bytes.
    pub min_bytes: f64,
    /// Bytes sent in all (Σ count · mean of the rows).
    pub volume_bytes: f64,
    /// Σ of the squares of the message sizes (bytes²), for the standard deviation.
    pub sum_squares: f64,
}

impl CommCell {
    /// Mean message size, bytes: volume / calls (0 without calls, as ParaProf).
    pub fn mean_bytes(&self) -> f64 {
        if self.calls > 0.0 {
            self.volume_bytes / self.calls
        } else {
            0.0
        }
    }

    /// Population standard deviation of the message sizes, bytes:
    /// `sqrt(max(0, sum_squares / calls − mean²))` over all the messages of the cell (not
    /// ParaProf's STDDEV column: see the module's documentation). 0 without calls.
    pub fn stddev_bytes(&self) -> f64 {
        if self.calls > 0.0 {
            let m = self.mean_bytes();
            (self.sum_squares / self.calls - m * m).max(0.0).sqrt()
        } else {
            0.0
        }
    }

    /// A cell without messages yet.
    fn empty(sender: u32, receiver: u32) -> Self {
        Self {
            sender,
            receiver,
            calls: 0.0,
            max_bytes: 0.0,
            min_bytes: 0.0,
            volume_bytes: 0.0,
            sum_squares: 0.0,
        }
    }

    fn add(&mut self, count: f64, max: f64, min: f64, mean: f64, sum_squares: f64) {
        if self.calls == 0.0 {
            self.max_bytes = max;
            self.min_bytes = min;
        } else {
            self.max_bytes = self.max_bytes.max(max);
            self.min_bytes = self.min_bytes.min(min);
        }
        self.calls += count;
        self.volume_bytes += count * mean;
        self.sum_squares += sum_squares;
    }
}

/// The matrix of one callpath element (or of [`ALL_PATHS`]).
#[derive(Clone, Debug, PartialEq)]
pub struct CommPath {
    /// The callpath element (a timer name) or [`ALL_PATHS`].
    pub name: String,
    /// The non-empty cells, ordered by (sender, receiver).
    pub cells: Vec<CommCell>,
}

impl CommPath {
    /// Bytes sent over every pair.
    pub fn volume_bytes(&self) -> f64 {
        self.cells.iter().map(|c| c.volume_bytes).sum()
    }

    /// Messages sent over every pair.
    pub fn calls(&self) -> f64 {
        self.cells.iter().map(|c| c.calls).sum()
    }

    /// The cell of (sender, receiver), if any message went that way.
    pub fn cell(&self, sender: u32, receiver: u32) -> Option<&CommCell> {
        self.cells
            .binary_search_by(|c| (c.sender, c.receiver).cmp(&(sender, receiver)))
            .ok()
            .map(|i| &self.cells[i])
    }
}

/// What [`comm_matrix`] read and what it left out, so that nothing is dropped silently.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CommSkipped {
    /// Rows (event × thread with samples) of `sent to` events counted (of a trace: the
    /// messages counted).
    pub sent_rows: u64,
    /// Rows of `received from` events counted.
    pub received_rows: u64,
    /// Rows of comm-matrix events on threads other than context 0, thread 0 (left out, as
    /// ParaProf does: one thread per rank speaks for it).
    pub other_thread_rows: u64,
    /// Rows naming a node that is not in the run (left out).
    pub out_of_range_rows: u64,
    /// Messages of those rows.
    pub out_of_range_calls: f64,
    /// Up to [`SKIPPED_EXAMPLES`] of them: `thread: event name`.
    pub out_of_range_examples: Vec<String>,
    /// Messages of a trace whose size the input does not give ([`comm_matrix_from_trace`]):
    /// left out, so that every cell's mean and volume are of known sizes.
    pub messages_without_bytes: u64,
}

/// The communication matrix of a run: per path the sparse rank × rank cells.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct CommMatrix {
    /// Number of ranks: the largest node of the run + 1 (the matrix is ranks × ranks).
    pub ranks: u32,
    /// [`ALL_PATHS`] first (when the run has plain events), then the callpath elements by name.
    /// Empty when the run has no comm-matrix events.
    pub paths: Vec<CommPath>,
    /// What was read and left out.
    pub skipped: CommSkipped,
}

impl CommMatrix {
    /// True when the run has no communication matrix (no `TAU_COMM_MATRIX` events).
    pub fn is_empty(&self) -> bool {
        self.paths.is_empty()
    }

    /// The matrix of path `name`.
    pub fn path(&self, name: &str) -> Option<&CommPath> {
        self.paths.iter().find(|p| p.name == name)
    }

    /// Estimated heap bytes (for cache weighing).
    pub fn heap_bytes(&self) -> usize {
        self.paths
            .iter()
            .map(|p| p.name.capacity() + p.cells.capacity() * std::mem::size_of::<CommCell>())
            .sum::<usize>()
            + self
                .skipped
                .out_of_range_examples
                .iter()
                .map(String::capacity)
                .sum::<usize>()
    }
}

/// Which way a comm-matrix event's messages went, and the peer node it names.
fn parse_event(base: &str) -> Option<(bool, u32)> {
    if let Some(n) = base.strip_prefix(SENT_PREFIX) {
        n.trim().parse().ok().map(|n| (true, n))
    } else if let Some(n) = base.strip_prefix(RECEIVED_PREFIX) {
        n.trim().parse().ok().map(|n| (false, n))
    } else {
        None
    }
}

/// True when `profile` has comm-matrix user events (`Message size sent to node N` or
/// `Message size received from node N`, plain or in a context). Cost: O(user events).
pub fn has_comm_events(profile: &Profile) -> bool {
    profile
        .atomic_events()
        .iter()
        .any(|e| parse_event(e.base_name.as_deref().unwrap_or(&e.name)).is_some())
}

/// The communication matrix of `profile` (see the module's documentation for the rules and
/// where they come from). A run without comm-matrix events gives an empty matrix
/// ([`CommMatrix::is_empty`]). Cost: O(rows of the comm-matrix events), memory O(cells).
pub fn comm_matrix(profile: &Profile) -> CommMatrix {
    let ranks = profile.threads().iter().map(|t| t.node + 1).max().unwrap_or(0);
    let mut names: Vec<String> = Vec::new();
    let mut name_index: HashMap<String, u32> = HashMap::new();
    let mut cells: HashMap<(u32, u32, u32), CommCell> = HashMap::new();
    let mut skipped = CommSkipped::default();
    let mut path_ids: Vec<u32> = Vec::new();
    for (i, ev) in profile.atomic_events().iter().enumerate() {
        let base = ev.base_name.as_deref().unwrap_or(&ev.name);
        let Some((sent, peer)) = parse_event(base) else {
            continue;
        };
        // The paths this event feeds.
        path_ids.clear();
        let mut intern = |n: &str| -> u32 {
            if let Some(&k) = name_index.get(n) {
                return k;
            }
            let k = names.len() as u32;
            names.push(n.to_string());
            name_index.insert(n.to_string(), k);
            k
        };
        match ev.context_path.as_deref() {
            None => path_ids.push(intern(ALL_PATHS)),
            Some(path) => {
                for el in path.split("=>").map(str::trim) {
                    if el.is_empty() || el == ".TAU application" {
                        continue;
                    }
                    let k = intern(el);
                    if !path_ids.contains(&k) {
                        path_ids.push(k);
                    }
                }
            }
        }
        if path_ids.is_empty() {
            continue;
        }
        let col = profile.atomic(AtomicEventId::from(i));
        for (r, &ti) in col.threads().iter().enumerate() {
            let count = col.count()[r];
            if count <= 0.0 {
                continue;
            }
            let t: ThreadId = profile.thread(ti);
            if t.context != 0 || t.thread != 0 {
                skipped.other_thread_rows += 1;
                continue;
            }
            if peer >= ranks {
                skipped.out_of_range_rows += 1;
                skipped.out_of_range_calls += count;
                if skipped.out_of_range_examples.len() < SKIPPED_EXAMPLES {
                    skipped.out_of_range_examples.push(format!("{t}: {}", ev.name));
                }
                continue;
            }
            let (s, rcv) = if sent {
                skipped.sent_rows += 1;
                (t.node, peer)
            } else {
                skipped.received_rows += 1;
                (peer, t.node)
            };
            for &k in &path_ids {
                let c = cells
                    .entry((k, s, rcv))
                    .or_insert_with(|| CommCell::empty(s, rcv));
                c.add(
                    count,
                    col.max()[r],
                    col.min()[r],
                    col.mean()[r],
                    col.sum_squares()[r],
                );
            }
        }
    }
    let mut per_path: Vec<Vec<CommCell>> = vec![Vec::new(); names.len()];
    for ((k, _, _), c) in cells {
        per_path[k as usize].push(c);
    }
    let mut paths: Vec<CommPath> = names
        .into_iter()
        .zip(per_path)
        .filter(|(_, c)| !c.is_empty())
        .map(|(name, mut cells)| {
            cells.sort_by_key(|c| (c.sender, c.receiver));
            CommPath { name, cells }
        })
        .collect();
    paths.sort_by(|a, b| (a.name != ALL_PATHS, &a.name).cmp(&(b.name != ALL_PATHS, &b.name)));
    CommMatrix {
        ranks,
        paths,
        skipped,
    }
}

/// True when `trace` has a message whose size is known (a communication matrix can be made
/// from it with [`comm_matrix_from_trace`]).
pub fn has_trace_messages(trace: &Trace) -> bool {
    trace.flows().bytes.iter().any(Option::is_some)
}

/// The communication matrix of a trace's messages (its [`Trace::flows`] with a known size):
/// one path, [`ALL_PATHS`]; per (sender rank, receiver rank) — the nodes of the flow's source
/// and destination threads, so every thread of a rank counts for it — the number of
/// messages, their bytes in all, the smallest and largest, and the sum of squares (for the
/// standard deviation). `ranks` is the largest node of the trace's threads + 1. Flows whose
/// size is unknown (`None`: Chrome flows without `message-size`, task hand-offs) are left out
/// and counted in [`CommSkipped::messages_without_bytes`]; a trace without any sized message
/// gives an empty matrix. Cost: O(flows), memory O(cells).
pub fn comm_matrix_from_trace(trace: &Trace) -> CommMatrix {
    let threads = trace.threads();
    let ranks = threads.iter().map(|t| t.id.node + 1).max().unwrap_or(0);
    let flows = trace.flows();
    let mut cells: HashMap<(u32, u32), CommCell> = HashMap::new();
    let mut skipped = CommSkipped::default();
    for i in 0..flows.len() {
        let (Some(from), Some(to)) = (
            threads.get(flows.from_thread[i] as usize),
            threads.get(flows.to_thread[i] as usize),
        ) else {
            continue;
        };
        let Some(bytes) = flows.bytes.get(i).copied().flatten() else {
            skipped.messages_without_bytes += 1;
            continue;
        };
        let (s, r) = (from.id.node, to.id.node);
        let b = bytes as f64;
        cells
            .entry((s, r))
            .or_insert_with(|| CommCell::empty(s, r))
            .add(1.0, b, b, b, b * b);
        skipped.sent_rows += 1;
    }
    let mut cells: Vec<CommCell> = cells.into_values().collect();
    cells.sort_by_key(|c| (c.sender, c.receiver));
    CommMatrix {
        ranks,
        paths: if cells.is_empty() {
            Vec::new()
        } else {
            vec![CommPath {
                name: ALL_PATHS.to_string(),
                cells,
            }]
        },
        skipped,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_directions_and_nothing_else() {
        assert_eq!(parse_event("Message size sent to node 12"), Some((true, 12)));
        assert_eq!(parse_event("Message size received from node 3"), Some((false, 3)));
        assert_eq!(parse_event("Message size sent to all nodes"), None);
        assert_eq!(parse_event("Message size received in wait"), None);
        assert_eq!(parse_event("Message size for all-reduce"), None);
    }

    #[test]
    fn the_true_standard_deviation_of_equal_messages_is_zero() {
        let mut c = CommCell::empty(0, 1);
        c.add(400.0, 6400.0, 6400.0, 6400.0, 400.0 * 6400.0 * 6400.0);
        assert_eq!((c.mean_bytes(), c.stddev_bytes()), (6400.0, 0.0));
        // Two rows: sizes {1, 3} and {5}: mean 3, variance (4 + 0 + 4) / 3.
        let mut d = CommCell::empty(0, 1);
        d.add(2.0, 3.0, 1.0, 2.0, 10.0);
        d.add(1.0, 5.0, 5.0, 5.0, 25.0);
        assert_eq!(
            (d.calls, d.min_bytes, d.max_bytes, d.volume_bytes),
            (3.0, 1.0, 5.0, 9.0)
        );
        assert!((d.stddev_bytes() - (8.0f64 / 3.0).sqrt()).abs() < 1e-12);
    }
}
