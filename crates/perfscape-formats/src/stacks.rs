//! Sampled call stacks to a TAU-shaped profile: the call tree of one thread, built sample by
//! sample, emitted as callpath events plus flat events (shared by the pprof, perf and Chrome
//! `samples` readers).
//!
//! Mapping (see `helper-common.md`, "Mapping call-tree formats into the model"):
//! - one **callpath event** per call-tree node, interned in the builder as a node (parent
//!   node + frame, [`perfscape_model::ProfileBuilder::intern_node`]; its name, the frames from the root joined
//!   by `" => "`, is built only when shown; a root node is the flat event of its frame); its
//!   exclusive value is what the
//!   samples ending in that node measured, its inclusive value adds every descendant;
//! - one **flat event** per routine (frame name): exclusive = sum of the exclusive values of
//!   its nodes, inclusive = sum of the inclusive values of its nodes that have no ancestor of the
//!   same routine (recursion is not counted twice). These are `pprof`'s `flat` and `cum`;
//! - **calls** of a node = the number of sample records whose stack passes through it (a
//!   sampling profile has no call counts; TAU's event-based sampling writes the sample count in
//!   the calls column too); flat calls like flat inclusive; **subcalls** = the calls of the
//!   node's children.
//! - the **thread's total** is the sum of its roots' inclusive values (every sample is under
//!   one root; [`ThreadRows::set_total`]), as pprof and Hatchet count it;
//! - **line events** `[SAMPLE] routine [{file} {line}]` (TAU's event-based-sampling convention,
//!   kind [`perfscape_model::EventKind::Sample`]) carry the values of the samples whose leaf
//!   frame is at that source line, when the input knows the line. They are flat only, like
//!   TAU's `[SAMPLE]` events, and so count the leaf values a second time beside the routine's
//!   own flat event (as in a TAU sampling profile).

use perfscape_model::{EventId, NodeFrame, ThreadRows};
use rustc_hash::FxHashMap as HashMap;

/// Interned frames (routine names with a group), shared by the call trees of all threads.
/// Frames are identified by their cleaned name: the same name in two groups (e.g. two
/// libraries) is one routine, whose group is the first one seen.
#[derive(Debug, Default)]
pub(crate) struct FrameTable {
    names: Vec<String>,
    groups: Vec<String>,
    index: HashMap<String, u32>,
    /// Frame names that contained `=>` (the callpath separator) and were rewritten.
    pub(crate) rewritten_separators: usize,
}

impl FrameTable {
    /// The id of frame `name` (interned; `group` is kept from the first call). Names are
    /// trimmed, empty names become `(unnamed)`, and `=>` inside a name (which would split it
    /// into two callpath frames) becomes `= >`.
    pub(crate) fn intern(&mut self, name: &str, group: &str) -> u32 {
        if let Some(&id) = self.index.get(name) {
            return id;
        }
        let mut clean = name.trim().to_string();
        if clean.is_empty() {
            clean = "(unnamed)".to_string();
        }
        if clean.contains("=>") {
            clean = clean.replace("=>", "= >");
            self.rewritten_separators += 1;
        }
        let id = match self.index.get(&clean) {
            Some(&id) => id,
            None => {
                let id = u32::try_from(self.names.len()).unwrap_or(u32::MAX);
                self.names.push(clean.clone());
                self.groups.push(group.to_string());
                self.index.insert(clean, id);
                id
            }
        };
        self.index.insert(name.to_string(), id);
        id
    }

    /// Display name of frame `id` (as used in event names).
    pub(crate) fn name(&self, id: u32) -> &str {
        self.names.get(id as usize).map_or("", String::as_str)
    }

    /// Group of frame `id`.
    pub(crate) fn group(&self, id: u32) -> &str {
        self.groups.get(id as usize).map_or("", String::as_str)
    }

    /// Number of frames.
    pub(crate) fn len(&self) -> usize {
        self.names.len()
    }
}

const NO_PARENT: u32 = u32::MAX;

/// A line event's sample count and values (one per metric).
type LineValues = (f64, Vec<f64>);

/// The warning for `n` samples whose stacks were cut at [`MAX_DEPTH`], if any.
pub(crate) fn cut_warning(n: u64) -> Option<crate::problem::Problem> {
    (n > 0).then(|| {
        crate::problem::Problem::whole(format!(
            "{n} sample(s) have stacks deeper than {MAX_DEPTH} frames: their middle frames were replaced by `{CUT_FRAME}`"
        ))
    })
}

/// Deepest stack kept whole. Deeper stacks keep their `MAX_DEPTH - 2` outermost frames, then
/// [`CUT_FRAME`], then the leaf: the leaf routine keeps its exclusive value and the names
/// views show stay bounded (a callpath's whole name, built when shown, holds every frame of
/// its path). Readers warn about the samples cut.
pub const MAX_DEPTH: usize = 1024;

/// The name of the frame that stands for the frames cut from a stack deeper than
/// [`MAX_DEPTH`].
pub const CUT_FRAME: &str = "(frames cut: stack deeper than 1024)";

/// The call tree of one thread. Node 0 is a virtual root that is never emitted.
#[derive(Debug)]
pub(crate) struct StackTree {
    n_metrics: usize,
    frame: Vec<u32>,
    parent: Vec<u32>,
    children: HashMap<(u32, u32), u32>,
    /// Values measured by samples whose leaf is the node, `n_metrics` per node.
    self_values: Vec<f64>,
    /// Sample records passing through the node.
    calls: Vec<f64>,
    /// `[SAMPLE]` line events: name -> (calls, values).
    lines: HashMap<String, (f64, Vec<f64>)>,
    line_order: Vec<String>,
    /// Reused buffer of [`StackTree::add_line_sample`].
    line_name: String,
    /// Number of sample records added.
    pub(crate) samples: u64,
    /// Sample records whose stack was cut (deeper than [`MAX_DEPTH`]).
    pub(crate) cut_samples: u64,
}

impl StackTree {
    /// An empty tree for `n_metrics` metrics.
    pub(crate) fn new(n_metrics: usize) -> Self {
        Self {
            n_metrics,
            frame: vec![u32::MAX],
            parent: vec![NO_PARENT],
            children: HashMap::default(),
            self_values: vec![0.0; n_metrics],
            calls: vec![0.0],
            lines: HashMap::default(),
            line_order: Vec::new(),
            line_name: String::new(),
            samples: 0,
            cut_samples: 0,
        }
    }

    /// Adds one sample record: its frames from the root to the leaf and its values (one per
    /// metric; missing values count 0). A sample with no frames adds nothing (callers name an
    /// empty stack with a frame of their own).
    ///
    /// Stacks deeper than [`MAX_DEPTH`] frames keep their `MAX_DEPTH - 2` outermost frames,
    /// then `cut` (a frame saying frames were cut), then the leaf: the leaf routine keeps its
    /// exclusive value, and the callpath names views show stay bounded. Returns whether the stack was
    /// cut; [`StackTree::cut_samples`] counts such samples.
    pub(crate) fn add_sample(&mut self, root_to_leaf: &[u32], values: &[f64], cut: u32) -> bool {
        self.samples += 1;
        let was_cut = root_to_leaf.len() > MAX_DEPTH;
        let head = if was_cut {
            self.cut_samples += 1;
            &root_to_leaf[..MAX_DEPTH - 2]
        } else {
            root_to_leaf
        };
        let tail: &[u32] = if was_cut {
            match root_to_leaf.last() {
                Some(leaf) => &[cut, *leaf][..],
                None => &[],
            }
        } else {
            &[]
        };
        let tail_owned: Vec<u32> = tail.to_vec();
        let mut node = 0u32;
        for &f in head.iter().chain(&tail_owned) {
            node = match self.children.get(&(node, f)) {
                Some(&c) => c,
                None => {
                    let c = u32::try_from(self.frame.len()).unwrap_or(u32::MAX);
                    self.frame.push(f);
                    self.parent.push(node);
                    self.calls.push(0.0);
                    self.self_values.extend(std::iter::repeat_n(0.0, self.n_metrics));
                    self.children.insert((node, f), c);
                    c
                }
            };
            self.calls[node as usize] += 1.0;
        }
        if node != 0 {
            let base = node as usize * self.n_metrics;
            for (m, v) in values.iter().take(self.n_metrics).enumerate() {
                self.self_values[base + m] += v;
            }
        }
        was_cut
    }

    /// Frees the index from (parent, frame) to child node, which only
    /// [`StackTree::add_sample`] needs, and the slack of the node arrays (they grew by
    /// doubling): call once every sample is added, before [`StackTree::emit`], so that the
    /// index (about 28 bytes per node) is not held while the builder fills. No sample may be
    /// added afterwards (its nodes would be created a second time).
    pub(crate) fn drop_index(&mut self) {
        self.children = HashMap::default();
        self.frame.shrink_to_fit();
        self.parent.shrink_to_fit();
        self.calls.shrink_to_fit();
        self.self_values.shrink_to_fit();
    }

    /// Adds the values of one sample to the line event `[SAMPLE] routine [{file} {line}]`.
    pub(crate) fn add_line_sample(&mut self, routine: &str, file: &str, line: u64, values: &[f64]) {
        use std::fmt::Write as _;
        // The name is written into a reused buffer and looked up by reference: one sample
        // costs no allocation once its line is known.
        let mut name = std::mem::take(&mut self.line_name);
        name.clear();
        let routine = routine.trim();
        let _ = if routine.contains("=>") {
            write!(
                name,
                "[SAMPLE] {} [{{{}}} {{{}}}]",
                routine.replace("=>", "= >"),
                file.trim(),
                line
            )
        } else {
            write!(name, "[SAMPLE] {} [{{{}}} {{{}}}]", routine, file.trim(), line)
        };
        let add = |entry: &mut (f64, Vec<f64>)| {
            entry.0 += 1.0;
            for (acc, v) in entry.1.iter_mut().zip(values) {
                *acc += v;
            }
        };
        match self.lines.get_mut(name.as_str()) {
            Some(entry) => add(entry),
            None => {
                let mut entry = (0.0, vec![0.0; self.n_metrics]);
                add(&mut entry);
                self.line_order.push(name.clone());
                self.lines.insert(name.clone(), entry);
            }
        }
        self.line_name = name;
    }

    /// Emits the tree as timer rows of the thread being added (see the module documentation),
    /// handed to the builder as whole columns (one array per value kind, built from the
    /// tree's arrays, each freed once gathered: the tree and the profile's cells are not held
    /// whole together): first the flat rows (one per routine, in order of first appearance),
    /// then one callpath row per node below a root in depth-first preorder (a root node is
    /// represented by its routine's flat row, as TAU represents `.TAU application`), then the
    /// `[SAMPLE]` line rows. Events are interned as call-tree nodes, so no callpath name is
    /// built. `frames` names the frames; `line_group` is the group of the line rows.
    pub(crate) fn emit(self, frames: &FrameTable, rows: &mut ThreadRows<'_>, line_group: &str) {
        let StackTree {
            n_metrics: n,
            frame,
            parent,
            children,
            self_values,
            calls,
            mut lines,
            line_order,
            ..
        } = self;
        drop(children);
        let count = frame.len();
        // The values one array per metric, so that each is freed as soon as its column is
        // gathered (8 bytes a node at the peak, not 16 for two metrics).
        let exclusive: Vec<Vec<f64>> = (0..n)
            .map(|m| self_values.iter().skip(m).step_by(n).copied().collect())
            .collect();
        drop(self_values);
        // Inclusive values bottom-up: children are always created after their parents.
        let mut inclusive = exclusive.clone();
        let mut child_calls = vec![0.0; count];
        for node in (1..count).rev() {
            let p = parent[node] as usize;
            for incl in &mut inclusive {
                incl[p] += incl[node];
            }
            child_calls[p] += calls[node];
        }
        let (mut preorder, depth) = preorder(&parent);
        // Flat totals per frame; a node counts for inclusive/calls only when no ancestor has
        // the same frame.
        let nf = frames.len();
        let mut flat_calls = vec![0.0; nf];
        let mut flat_subcalls = vec![0.0; nf];
        let mut flat_excl = vec![0.0; nf * n];
        let mut flat_incl = vec![0.0; nf * n];
        let mut flat_order: Vec<u32> = Vec::new();
        let mut seen = vec![false; nf];
        let mut on_path = vec![0u32; nf];
        let mut path_frames: Vec<u32> = Vec::new();
        for &node in &preorder {
            let ni = node as usize;
            let d = depth[ni] as usize;
            while path_frames.len() >= d {
                if let Some(f) = path_frames.pop() {
                    on_path[f as usize] -= 1;
                }
            }
            let fi = frame[ni] as usize;
            if !seen[fi] {
                seen[fi] = true;
                flat_order.push(frame[ni]);
            }
            for (m, x) in exclusive.iter().enumerate() {
                flat_excl[fi * n + m] += x[ni];
            }
            if on_path[fi] == 0 {
                flat_calls[fi] += calls[ni];
                flat_subcalls[fi] += child_calls[ni];
                for (m, incl) in inclusive.iter().enumerate() {
                    flat_incl[fi * n + m] += incl[ni];
                }
            }
            on_path[fi] += 1;
            path_frames.push(frame[ni]);
        }
        drop((seen, on_path, path_frames));
        // One row per flat frame, per node below the roots and per line. A root is a node
        // whose parent is the virtual root 0; `depth` is not needed further (freed: 4 bytes
        // a node while the builder fills).
        let below_roots = depth.iter().filter(|&&d| d >= 2).count();
        drop(depth);
        let line_rows: Vec<(String, LineValues)> = line_order
            .into_iter()
            .filter_map(|name| lines.remove(&name).map(|v| (name, v)))
            .collect();
        drop(lines);
        let n_rows = flat_order.len() + below_roots + line_rows.len();
        rows.reserve_events(n_rows);
        // The event of each row, in row order.
        let mut row_events: Vec<EventId> = Vec::with_capacity(n_rows);
        for &f in &flat_order {
            row_events.push(rows.intern_node(None, frames.name(f), frames.group(f)));
        }
        // The thread's total: its roots add up (every sample is under exactly one root).
        let mut total = vec![0.0; n];
        for &node in &preorder {
            let ni = node as usize;
            if parent[ni] == 0 {
                for (t, incl) in total.iter_mut().zip(&inclusive) {
                    *t += incl[ni];
                }
            }
        }
        rows.set_total(&total);
        // Event of each node: a root is its frame's flat event. Written over the node's frame
        // once read (the frame is not needed further), so no array of its own: a node's parent
        // comes before it in preorder, so the parent's entry is already its event when read.
        let mut frame = frame;
        // Each frame's text and groups made ready once, for all its nodes below a root.
        let mut ready: Vec<Option<NodeFrame>> = vec![None; nf];
        for &node in &preorder {
            let ni = node as usize;
            let f = frame[ni];
            if parent[ni] == 0 {
                frame[ni] = rows.intern_node(None, frames.name(f), frames.group(f)).0;
                continue;
            }
            let node_frame = ready[f as usize].get_or_insert_with(|| {
                let g = frames.group(f);
                let group = if g.is_empty() {
                    "TAU_CALLPATH".to_string()
                } else {
                    format!("{g}|TAU_CALLPATH")
                };
                rows.node_frame(frames.name(f), &group)
            });
            let parent_event = EventId(frame[parent[ni] as usize]);
            let e = rows.intern_node_frame(parent_event, node_frame);
            frame[ni] = e.0;
            row_events.push(e);
        }
        drop(ready);
        for (name, _) in &line_rows {
            row_events.push(rows.declare_timer(name, line_group));
        }
        // The nodes that have rows, in row order; the tree's shape is not needed further.
        preorder.retain(|&node| parent[node as usize] != 0);
        drop((frame, parent));
        // One column: the flat rows' values (`flat[f * stride + m]`), the nodes' (`node`, one
        // value per node), the lines'.
        let column =
            |flat: &[f64], stride: usize, m: usize, node: &[f64], line: &dyn Fn(&LineValues) -> f64| {
                let mut out = Vec::with_capacity(n_rows);
                out.extend(flat_order.iter().map(|&f| flat[f as usize * stride + m]));
                out.extend(preorder.iter().map(|&node_i| node[node_i as usize]));
                out.extend(line_rows.iter().map(|(_, v)| line(v)));
                out
            };
        let mut kinds: Vec<Vec<f64>> = Vec::with_capacity(2 + 2 * n);
        kinds.push(column(&flat_calls, 1, 0, &calls, &|v| v.0));
        drop(calls);
        kinds.push(column(&flat_subcalls, 1, 0, &child_calls, &|_| 0.0));
        drop(child_calls);
        // Each source array is freed once its column is gathered (moved into the closure).
        let exclusive_columns: Vec<Vec<f64>> = exclusive
            .into_iter()
            .enumerate()
            .map(|(m, src)| column(&flat_excl, n, m, &src, &|v| v.1[m]))
            .collect();
        let inclusive_columns: Vec<Vec<f64>> = inclusive
            .into_iter()
            .enumerate()
            .map(|(m, src)| column(&flat_incl, n, m, &src, &|v| v.1[m]))
            .collect();
        for (x, i) in exclusive_columns.into_iter().zip(inclusive_columns) {
            kinds.push(x);
            kinds.push(i);
        }
        // Cannot fail: every event came from the builder and every column has a value per row.
        let _ = rows.push_columns(&row_events, kinds);
    }
}

/// Nodes of a tree given by its `parent` array (node 0 the virtual root) in depth-first
/// preorder (children in creation order), and the depth of every node (1 for roots; index =
/// node).
fn preorder(parent: &[u32]) -> (Vec<u32>, Vec<u32>) {
    let count = parent.len();
    let mut first_child = vec![NO_PARENT; count];
    let mut next_sibling = vec![NO_PARENT; count];
    for node in (1..count).rev() {
        let p = parent[node] as usize;
        next_sibling[node] = first_child[p];
        first_child[p] = u32::try_from(node).unwrap_or(NO_PARENT);
    }
    let mut depth = vec![0u32; count];
    let mut order = Vec::with_capacity(count.saturating_sub(1));
    let mut stack: Vec<u32> = Vec::new();
    let push_children = |stack: &mut Vec<u32>, node: usize| {
        let start = stack.len();
        let mut c = first_child[node];
        while c != NO_PARENT {
            stack.push(c);
            c = next_sibling[c as usize];
        }
        stack[start..].reverse();
    };
    push_children(&mut stack, 0);
    while let Some(node) = stack.pop() {
        let ni = node as usize;
        depth[ni] = depth[parent[ni] as usize] + 1;
        order.push(node);
        push_children(&mut stack, ni);
    }
    (order, depth)
}
