//! Turning a call tree with per-thread values (CUBE, HPCToolkit, Caliper) into TAU-shaped
//! thread data: one callpath event per call-tree node and one flat event per routine.
//!
//! Rules (the "mapping call-tree formats" convention of perfscape):
//! - a node at depth d >= 2 becomes the callpath event `f1 => ... => fd`, interned as a
//!   call-tree node (parent event + frame; the name is built only when shown); a root node
//!   (depth 1) is represented by the flat event of its routine;
//! - nodes whose paths have the same name (siblings that differ only in something the name
//!   does not show, e.g. a call site) are combined into one event;
//! - the flat event of a routine has exclusive = the combination under the metric's rule
//!   ([`Combine`]: sum, minimum, maximum, mean; NaN for a metric that is not combinable when
//!   the routine has several nodes) of the exclusive values of all its nodes, inclusive = the
//!   combination of the inclusive values of its nodes that have no ancestor of the same routine
//!   on that thread (so recursion is not counted twice), calls and subcalls = the sums over all
//!   its nodes (every entry counts, as in TAU); nodes that share a callpath name are combined
//!   the same way;
//! - subcalls of a node = the sum of the calls of its children present on the thread;
//! - a thread's total is its present roots' inclusive values combined under the metric's
//!   rule (summed for an additive metric): a tree may have several roots.

use crate::problem::Problem;
use perfscape_model::{Combine, Combiner, EventId, Profile, ProfileBuilder, ThreadData};
use rustc_hash::FxHashMap as HashMap;

/// The shape of a call tree, shared by every thread.
#[derive(Debug, Clone, Default)]
pub(crate) struct Tree {
    /// Parent of each node (`None` for roots). A parent must come before its children (a
    /// later "parent" is ignored: the node becomes a root); any such order works.
    pub parent: Vec<Option<usize>>,
    /// Frame (routine) name of each node, as shown to users.
    pub frame: Vec<String>,
    /// TAU-style `|`-separated groups of each node (may be empty).
    pub groups: Vec<String>,
}

impl Tree {
    /// Adds a node and returns its index.
    pub(crate) fn push(&mut self, parent: Option<usize>, frame: String, groups: String) -> usize {
        self.parent.push(parent);
        self.frame.push(frame);
        self.groups.push(groups);
        self.parent.len() - 1
    }

    /// Number of nodes.
    pub(crate) fn len(&self) -> usize {
        self.parent.len()
    }
}

/// The parent of a callpath (see [`Layout`]): the flat event of a routine (for a node whose
/// parent is a root) or another callpath.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum PathParent {
    Routine(usize),
    Path(usize),
}

/// What [`Layout::new`] derives from a [`Tree`]: the routines (flat events) and the distinct
/// callpaths (non-root nodes with the same frames from the root are one callpath), and the
/// events they become, interned in the profile builder as call-tree nodes the first time a
/// thread needs them (so no callpath name is ever built, and nodes no thread has are not
/// events unless declared or the parent of one that is). A layout interns into one builder:
/// every call of [`thread_data`] and [`Layout::node_event`] must pass the same one.
#[derive(Debug, Clone)]
pub(crate) struct Layout {
    n_nodes: usize,
    parent: Vec<Option<usize>>,
    /// Callpath of each node (`None` for roots).
    path_of: Vec<Option<usize>>,
    path_parent: Vec<PathParent>,
    path_routine: Vec<usize>,
    path_groups: Vec<String>,
    path_event: Vec<Option<EventId>>,
    /// Routine (flat event) of each node.
    routine_of: Vec<usize>,
    routine_names: Vec<String>,
    routine_groups: Vec<String>,
    routine_event: Vec<Option<EventId>>,
    /// Per node, the range of `ancestor_list` holding its ancestors of the same routine.
    same_routine_ancestors: Vec<(usize, usize)>,
    ancestor_list: Vec<usize>,
    /// Nodes combined into a callpath another node already had: (callpath, count).
    merged: Vec<(usize, usize)>,
}

impl Layout {
    /// Computes routines and callpaths. Frame names containing `=>` would be split into
    /// frames by the model, so `=>` inside a frame is written `= >` (counted in the second
    /// value).
    pub(crate) fn new(tree: &Tree) -> (Self, usize) {
        let n = tree.len();
        let mut renamed = 0;
        let mut routine_index: HashMap<String, usize> = HashMap::default();
        let mut routine_of = Vec::with_capacity(n);
        let mut routine_names = Vec::new();
        let mut routine_groups = Vec::new();
        for (i, f) in tree.frame.iter().enumerate() {
            let f = f.trim();
            let frame = if f.contains("=>") {
                renamed += 1;
                f.replace("=>", "= >")
            } else if f.is_empty() {
                "(unnamed)".to_string()
            } else {
                f.to_string()
            };
            let r = match routine_index.get(&frame) {
                Some(&r) => r,
                None => {
                    routine_index.insert(frame.clone(), routine_names.len());
                    routine_names.push(frame);
                    routine_groups.push(tree.groups[i].clone());
                    routine_names.len() - 1
                }
            };
            routine_of.push(r);
        }
        let parent: Vec<Option<usize>> = (0..n).map(|i| tree.parent[i].filter(|&p| p < i)).collect();
        let mut path_index: HashMap<(PathParent, usize), usize> = HashMap::default();
        let mut path_of = Vec::with_capacity(n);
        let (mut path_parent, mut path_routine, mut path_groups) = (Vec::new(), Vec::new(), Vec::new());
        let mut merged: HashMap<usize, usize> = HashMap::default();
        for i in 0..n {
            let Some(p) = parent[i] else {
                path_of.push(None);
                continue;
            };
            let pp = match path_of[p] {
                Some(q) => PathParent::Path(q),
                None => PathParent::Routine(routine_of[p]),
            };
            let next = path_parent.len();
            let k = *path_index.entry((pp, routine_of[i])).or_insert(next);
            if k == next {
                path_parent.push(pp);
                path_routine.push(routine_of[i]);
                path_groups.push(tree.groups[i].clone());
            } else {
                *merged.entry(k).or_insert(0) += 1;
            }
            path_of.push(Some(k));
        }
        let mut merged: Vec<(usize, usize)> = merged.into_iter().collect();
        merged.sort_unstable();
        let mut same_routine_ancestors = Vec::with_capacity(n);
        let mut ancestor_list = Vec::new();
        for (i, &first) in parent.iter().enumerate() {
            let start = ancestor_list.len();
            let mut a = first;
            while let Some(k) = a {
                if routine_of[k] == routine_of[i] {
                    ancestor_list.push(k);
                }
                a = parent[k];
            }
            same_routine_ancestors.push((start, ancestor_list.len()));
        }
        let n_paths = path_parent.len();
        let n_routines = routine_names.len();
        (
            Self {
                n_nodes: n,
                parent,
                path_of,
                path_parent,
                path_routine,
                path_groups,
                path_event: vec![None; n_paths],
                routine_of,
                routine_names,
                routine_groups,
                routine_event: vec![None; n_routines],
                same_routine_ancestors,
                ancestor_list,
                merged,
            },
            renamed,
        )
    }

    /// Number of nodes of the tree.
    pub(crate) fn n_nodes(&self) -> usize {
        self.n_nodes
    }

    /// The flat event of routine `r`, interned in `builder` on first use.
    fn routine_event(&mut self, builder: &mut ProfileBuilder, r: usize) -> EventId {
        if let Some(e) = self.routine_event[r] {
            return e;
        }
        let e = builder.intern_node(None, &self.routine_names[r], &self.routine_groups[r]);
        self.routine_event[r] = Some(e);
        e
    }

    /// The callpath event of path `k`, interned in `builder` (after its ancestors) on first
    /// use.
    fn path_event(&mut self, builder: &mut ProfileBuilder, k: usize) -> EventId {
        if let Some(e) = self.path_event[k] {
            return e;
        }
        // The chain of not yet interned ancestors, outermost last, and the event above it.
        let mut chain = vec![k];
        let mut top = self.path_parent[k];
        let mut parent = loop {
            match top {
                PathParent::Routine(r) => break self.routine_event(builder, r),
                PathParent::Path(q) => match self.path_event[q] {
                    Some(e) => break e,
                    None => {
                        chain.push(q);
                        top = self.path_parent[q];
                    }
                },
            }
        };
        for &q in chain.iter().rev() {
            let frame = &self.routine_names[self.path_routine[q]];
            let e = builder.intern_node(Some(parent), frame, &self.path_groups[q]);
            self.path_event[q] = Some(e);
            parent = e;
        }
        parent
    }

    /// The event that represents node `i` (its callpath event, or for a root the flat event
    /// of its routine), interned in `builder` on first use.
    pub(crate) fn node_event(&mut self, builder: &mut ProfileBuilder, i: usize) -> EventId {
        match self.path_of[i] {
            Some(k) => self.path_event(builder, k),
            None => self.routine_event(builder, self.routine_of[i]),
        }
    }

    /// The whole name of path `k` (for warnings).
    fn path_name(&self, k: usize) -> String {
        let mut frames = vec![self.routine_names[self.path_routine[k]].as_str()];
        let mut at = self.path_parent[k];
        loop {
            match at {
                PathParent::Path(q) => {
                    frames.push(&self.routine_names[self.path_routine[q]]);
                    at = self.path_parent[q];
                }
                PathParent::Routine(r) => {
                    frames.push(&self.routine_names[r]);
                    break;
                }
            }
        }
        frames.reverse();
        frames.join(" => ")
    }

    /// Callpaths that several nodes share, with the number of nodes combined into each
    /// beyond the first: (callpath name, count), sorted by name.
    pub(crate) fn merged_paths(&self) -> Vec<(String, usize)> {
        let mut out: Vec<(String, usize)> =
            self.merged.iter().map(|&(k, c)| (self.path_name(k), c)).collect();
        out.sort();
        out
    }
}

/// The values of one thread: per node, presence, calls, and per metric exclusive and
/// inclusive values (`n_nodes * n_metrics`, node-major).
#[derive(Debug, Clone)]
pub(crate) struct ThreadValues {
    /// Metrics per node.
    pub n_metrics: usize,
    /// Whether the thread has the node (absent nodes contribute nothing).
    pub present: Vec<bool>,
    /// Calls (visits) per node.
    pub calls: Vec<f64>,
    /// Exclusive values, `[node * n_metrics + metric]`.
    pub exclusive: Vec<f64>,
    /// Inclusive values, `[node * n_metrics + metric]`.
    pub inclusive: Vec<f64>,
}

impl ThreadValues {
    /// All-absent values for `n_nodes` nodes and `n_metrics` metrics.
    pub(crate) fn new(n_nodes: usize, n_metrics: usize) -> Self {
        Self {
            n_metrics,
            present: vec![false; n_nodes],
            calls: vec![0.0; n_nodes],
            exclusive: vec![0.0; n_nodes * n_metrics],
            inclusive: vec![0.0; n_nodes * n_metrics],
        }
    }
}

#[derive(Clone)]
struct Acc {
    set: bool,
    calls: f64,
    subcalls: f64,
    exclusive: Vec<Combiner>,
    inclusive: Vec<Combiner>,
}

impl Acc {
    fn new(combine: &[Combine]) -> Self {
        let empty: Vec<Combiner> = combine.iter().map(|&c| Combiner::new(c)).collect();
        Self {
            set: false,
            calls: 0.0,
            subcalls: 0.0,
            exclusive: empty.clone(),
            inclusive: empty,
        }
    }

    fn add_exclusive(&mut self, x: &[f64], calls: f64, subcalls: f64) {
        for (a, &v) in self.exclusive.iter_mut().zip(x) {
            a.push(v);
        }
        self.calls += calls;
        self.subcalls += subcalls;
        self.set = true;
    }

    fn add_inclusive(&mut self, x: &[f64]) {
        for (a, &v) in self.inclusive.iter_mut().zip(x) {
            a.push(v);
        }
    }

    /// The combined values (NaN where several values of a not combinable metric met; 0 for
    /// an inclusive side that got no value).
    fn finish(side: &[Combiner]) -> Vec<f64> {
        side.iter()
            .map(|c| match c.finish() {
                Some(v) => v,
                None if c.count() == 0 => 0.0,
                None => f64::NAN,
            })
            .collect()
    }
}

/// Finishes a profile built from a call tree: the builder's notes and the tree's merged
/// callpaths (`what` names the merged nodes in the warning, e.g. "calling-context node(s)")
/// become warnings, appended to `warnings`.
pub(crate) fn finish(
    builder: ProfileBuilder,
    layout: &Layout,
    what: &str,
    warnings: &mut Vec<Problem>,
) -> Profile {
    for (path, count) in &layout.merged_paths() {
        warnings.push(Problem::whole(format!(
            "{count} more {what} share the callpath `{path}` with a sibling; their values were combined"
        )));
    }
    let (profile, notes) = builder.finish();
    warnings.extend(
        notes
            .into_iter()
            .map(|n| Problem::whole(format!("thread {}: {}", n.thread, n.message))),
    );
    profile
}

/// Builds one thread's [`ThreadData`] (flat routine events first, then callpath events, each
/// in the order the tree first names them) and adds `metadata`. `combine` holds each metric's
/// rule (one per metric of `values`). With `declare_absent`, the
/// events of nodes this thread does not have are declared (named, no values), so that call
/// tree nodes no thread measured still appear in the profile.
pub(crate) fn thread_data(
    layout: &mut Layout,
    builder: &mut ProfileBuilder,
    combine: &[Combine],
    values: &ThreadValues,
    metadata: &[(String, String)],
    declare_absent: bool,
) -> ThreadData {
    let m = values.n_metrics;
    let n = layout.n_nodes;
    let mut subcalls = vec![0.0; n];
    for (i, parent) in layout.parent.iter().enumerate() {
        if values.present[i]
            && let Some(p) = *parent
        {
            subcalls[p] += values.calls[i];
        }
    }
    let mut slots = vec![Acc::new(combine); layout.path_parent.len()];
    let mut routines = vec![Acc::new(combine); layout.routine_names.len()];
    for (i, &sub) in subcalls.iter().enumerate() {
        if !values.present[i] {
            continue;
        }
        let r = layout.routine_of[i];
        let x = &values.exclusive[i * m..(i + 1) * m];
        let inc = &values.inclusive[i * m..(i + 1) * m];
        if let Some(s) = layout.path_of[i] {
            slots[s].add_exclusive(x, values.calls[i], sub);
            slots[s].add_inclusive(inc);
        }
        routines[r].add_exclusive(x, values.calls[i], sub);
        let (a, b) = layout.same_routine_ancestors[i];
        let outermost = layout.ancestor_list[a..b].iter().all(|&k| !values.present[k]);
        if outermost {
            routines[r].add_inclusive(inc);
        }
    }
    let mut data = ThreadData::with_capacity(m, slots.len() + routines.len(), 0);
    // The thread's total: its present roots' inclusive values combined under each metric's
    // rule (a call tree may have several roots; they add up for an additive metric).
    let mut roots: Vec<Combiner> = combine.iter().map(|&c| Combiner::new(c)).collect();
    for i in 0..n {
        if values.present[i] && layout.parent[i].is_none() {
            for (c, &v) in roots.iter_mut().zip(&values.inclusive[i * m..(i + 1) * m]) {
                c.push(v);
            }
        }
    }
    if roots.first().is_some_and(|c| c.count() > 0) {
        data.set_total(&Acc::finish(&roots));
    }
    let rows = routines
        .iter()
        .enumerate()
        .map(|(r, acc)| (PathParent::Routine(r), acc))
        .chain(
            slots
                .iter()
                .enumerate()
                .map(|(k, acc)| (PathParent::Path(k), acc)),
        );
    for (which, acc) in rows {
        if !acc.set && !declare_absent {
            continue;
        }
        let e = match which {
            PathParent::Routine(r) => layout.routine_event(builder, r),
            PathParent::Path(k) => layout.path_event(builder, k),
        };
        if acc.set {
            // Cannot fail: both slices have `m` values.
            let _ = data.push_event(
                e,
                acc.calls,
                acc.subcalls,
                &Acc::finish(&acc.exclusive),
                &Acc::finish(&acc.inclusive),
            );
        } else {
            data.declare_event(e);
        }
    }
    for (k, v) in metadata {
        data.push_metadata(k, v);
    }
    data
}

#[cfg(test)]
mod tests {
    use super::*;
    use perfscape_model::{Metric, MetricId, ProfileBuilder, ThreadId, ValueKind};

    /// main -> a -> a (recursion) -> b ; main -> b ; main -> c (twice, same name)
    fn tree() -> Tree {
        let mut t = Tree::default();
        let main = t.push(None, "main".into(), "G".into());
        let a = t.push(Some(main), "a".into(), String::new());
        let a2 = t.push(Some(a), "a".into(), String::new());
        t.push(Some(a2), "b".into(), String::new());
        t.push(Some(main), "b".into(), String::new());
        t.push(Some(main), "c".into(), String::new());
        t.push(Some(main), "c".into(), String::new());
        t
    }

    #[test]
    fn flat_events_do_not_double_count_recursion_and_duplicates_combine() {
        let t = tree();
        let (mut layout, renamed) = Layout::new(&t);
        assert_eq!(renamed, 0);
        assert_eq!(layout.merged_paths(), vec![("main => c".to_string(), 1)]);
        let mut v = ThreadValues::new(t.len(), 2);
        // exclusive (metric 0 sum, metric 1 min), inclusive
        let excl = [
            [1.0, 9.0],
            [2.0, 8.0],
            [3.0, 7.0],
            [4.0, 6.0],
            [5.0, 5.0],
            [6.0, 4.0],
            [7.0, 3.0],
        ];
        let incl = [
            [28.0, 3.0],
            [9.0, 6.0],
            [7.0, 6.0],
            [4.0, 6.0],
            [5.0, 5.0],
            [6.0, 4.0],
            [7.0, 3.0],
        ];
        for i in 0..t.len() {
            v.present[i] = true;
            v.calls[i] = 1.0;
            v.exclusive[i * 2..i * 2 + 2].copy_from_slice(&excl[i]);
            v.inclusive[i * 2..i * 2 + 2].copy_from_slice(&incl[i]);
        }
        let mut b = ProfileBuilder::new(vec![Metric::tau("TIME"), Metric::tau("MIN")]);
        let d = thread_data(
            &mut layout,
            &mut b,
            &[Combine::Sum, Combine::Min],
            &v,
            &[("k".into(), "v".into())],
            false,
        );
        b.add_thread(ThreadId::new(0, 0, 0), d).unwrap();
        let (p, notes) = b.finish();
        assert!(notes.is_empty(), "{notes:?}");
        let get = |name: &str, kind: ValueKind, m: u32| {
            p.value(p.event_by_name(name).unwrap(), 0usize.into(), kind, MetricId(m))
                .unwrap()
        };
        // Flat `a`: exclusive 2 + 3; inclusive only of the outer node (9), not 9 + 7.
        assert_eq!(get("a", ValueKind::Exclusive, 0), 5.0);
        assert_eq!(get("a", ValueKind::Inclusive, 0), 9.0);
        assert_eq!(get("a", ValueKind::Calls, 0), 2.0);
        // Flat `b`: two non-nested nodes: inclusive adds up; min metric takes the minimum.
        assert_eq!(get("b", ValueKind::Inclusive, 0), 9.0);
        assert_eq!(get("b", ValueKind::Exclusive, 1), 5.0);
        // The two `main => c` nodes are one event.
        assert_eq!(get("main => c", ValueKind::Exclusive, 0), 13.0);
        assert_eq!(get("main => c", ValueKind::Calls, 0), 2.0);
        assert_eq!(get("main => c", ValueKind::Exclusive, 1), 3.0);
        // Subcalls of main = calls of its 4 children.
        assert_eq!(get("main", ValueKind::Subcalls, 0), 4.0);
        assert_eq!(get("main => a => a => b", ValueKind::Inclusive, 0), 4.0);
        assert_eq!(p.metadata().get_common("k"), Some("v"));
        assert_eq!(p.call_tree().roots().len(), 1);
    }

    #[test]
    fn mean_and_not_combinable_metrics_on_routines_with_several_nodes() {
        // main -> b, main -> x -> b: the flat `b` combines two nodes.
        let mut t = Tree::default();
        let main = t.push(None, "main".into(), String::new());
        t.push(Some(main), "b".into(), String::new());
        let x = t.push(Some(main), "x".into(), String::new());
        t.push(Some(x), "b".into(), String::new());
        let (mut layout, _) = Layout::new(&t);
        let mut v = ThreadValues::new(4, 2);
        for (i, x) in [10.0, 2.0, 3.0, 6.0].into_iter().enumerate() {
            v.present[i] = true;
            v.exclusive[i * 2..i * 2 + 2].copy_from_slice(&[x, x]);
            v.inclusive[i * 2..i * 2 + 2].copy_from_slice(&[x, x]);
        }
        let mut b = ProfileBuilder::new(vec![
            Metric::tau("AVG").combined_by(Combine::Mean),
            Metric::tau("RATIO").combined_by(Combine::NotCombinable),
        ]);
        let d = thread_data(
            &mut layout,
            &mut b,
            &[Combine::Mean, Combine::NotCombinable],
            &v,
            &[],
            false,
        );
        b.add_thread(ThreadId::new(0, 0, 0), d).unwrap();
        let (p, _) = b.finish();
        let get = |name: &str, kind: ValueKind, m: u32| {
            p.value(p.event_by_name(name).unwrap(), 0usize.into(), kind, MetricId(m))
                .unwrap()
        };
        assert_eq!(get("b", ValueKind::Exclusive, 0), 4.0);
        assert_eq!(get("b", ValueKind::Inclusive, 0), 4.0);
        assert!(get("b", ValueKind::Exclusive, 1).is_nan());
        assert!(get("b", ValueKind::Inclusive, 1).is_nan());
        // A routine with one node keeps its value under every rule.
        assert_eq!(get("x", ValueKind::Exclusive, 1), 3.0);
        assert_eq!(get("main => x => b", ValueKind::Inclusive, 1), 6.0);
    }

    #[test]
    fn recursion_is_found_in_any_parent_first_order() {
        // main, a, b, then a's child `a` (not pre-order: b comes between a and its child).
        let mut t = Tree::default();
        let main = t.push(None, "main".into(), String::new());
        let a = t.push(Some(main), "a".into(), String::new());
        t.push(Some(main), "b".into(), String::new());
        t.push(Some(a), "a".into(), String::new());
        let (mut layout, _) = Layout::new(&t);
        let mut v = ThreadValues::new(4, 1);
        for (i, (x, inc)) in [(1.0, 10.0), (2.0, 6.0), (3.0, 3.0), (4.0, 4.0)]
            .into_iter()
            .enumerate()
        {
            v.present[i] = true;
            v.exclusive[i] = x;
            v.inclusive[i] = inc;
        }
        let mut b = ProfileBuilder::new(vec![Metric::tau("TIME")]);
        let d = thread_data(&mut layout, &mut b, &[Combine::Sum], &v, &[], false);
        b.add_thread(ThreadId::new(0, 0, 0), d).unwrap();
        let (p, _) = b.finish();
        let a = p.event_by_name("a").unwrap();
        assert_eq!(p.interval(a).exclusive(MetricId(0)), &[6.0]);
        assert_eq!(p.interval(a).inclusive(MetricId(0)), &[6.0]);
        // Without its outer `a` on this thread, the inner one is outermost.
        v.present[1] = false;
        let (mut layout, _) = Layout::new(&t);
        let mut b = ProfileBuilder::new(vec![Metric::tau("TIME")]);
        let d = thread_data(&mut layout, &mut b, &[Combine::Sum], &v, &[], false);
        b.add_thread(ThreadId::new(0, 0, 0), d).unwrap();
        let (p, _) = b.finish();
        let a = p.event_by_name("a").unwrap();
        assert_eq!(p.interval(a).inclusive(MetricId(0)), &[4.0]);
    }

    #[test]
    fn absent_nodes_are_left_out_and_frames_with_arrows_are_renamed() {
        let mut t = Tree::default();
        let r = t.push(None, "operator=>".into(), String::new());
        t.push(Some(r), "x".into(), String::new());
        let (mut layout, renamed) = Layout::new(&t);
        assert_eq!(renamed, 1);
        let mut v = ThreadValues::new(2, 1);
        v.present[1] = true;
        v.exclusive[1] = 2.0;
        v.inclusive[1] = 2.0;
        let mut b = ProfileBuilder::new(vec![Metric::tau("TIME")]);
        let d = thread_data(&mut layout, &mut b, &[Combine::Sum], &v, &[], false);
        assert_eq!(d.timer_count(), 2);
        b.add_thread(ThreadId::new(0, 0, 0), d).unwrap();
        let (p, _) = b.finish();
        let x = p.event_by_name("operator= > => x").unwrap();
        assert_eq!(p.interval(x).exclusive(MetricId(0)), &[2.0]);
        // The absent root is the node's parent, without values.
        let root = p.event(x).parent().unwrap();
        assert_eq!(p.event_name(root), "operator= >");
        assert!(p.interval(root).is_empty());
    }
}
