//! The call tree as a table (ParaProf's "Call Graph"/"Statistics" tree, pprof's tree view):
//! Name, source location, Inclusive, Exclusive, Calls, for one thread or aggregated over
//! threads. Values across threads combine under the metric's rule
//! ([`perfscape_model::Combine`]): a total over threads is a sum only for a metric that adds
//! up (a minimum metric's is the minimum over threads, ...); calls always add up. A node's
//! inclusive value is the profile's (its reader derived it under the same rule), never a sum
//! of its children here.

use crate::stats::larger_first;
use perfscape_model::{Combine, EventId, MetricId, Profile, ThreadIndex, ValueKind};
use serde::Serialize;

/// Over which threads the tree's values are taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TreeScope {
    /// One thread's values.
    Thread(ThreadIndex),
    /// Combined over all threads under the metric's rule: the sum for a metric that adds up
    /// (and for calls), else the minimum, maximum or mean (no value when not combinable).
    Total,
    /// Sum over the threads that have the node, divided by their number (ParaProf's Mean).
    Mean,
    /// Sum over all threads divided by the number of threads, absent threads counting as 0
    /// (ParaProf's Mean,AllThreads). For a metric that does not add up an absent thread has
    /// no value rather than 0, so this is the mean over the threads that have the node.
    MeanAll,
}

/// One node of the call tree table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TreeNode {
    /// The event of the node (a callpath event, or a flat event for roots and flat profiles).
    pub event: EventId,
    /// The parent node's event (None for roots).
    pub parent: Option<EventId>,
    /// Depth in the tree (0 for roots).
    pub depth: u32,
    /// The routine name (the last frame of the path).
    pub name: String,
    /// Inclusive value in the scope (NaN when the metric is not combinable and several
    /// threads have the node in a total scope).
    pub inclusive: f64,
    /// Exclusive value in the scope (NaN as for `inclusive`).
    pub exclusive: f64,
    /// Calls in the scope.
    pub calls: f64,
    /// Number of threads that have the node.
    pub threads: usize,
    /// Child nodes' events, largest inclusive first (those in the result: see
    /// [`call_tree_largest`]).
    pub children: Vec<EventId>,
    /// Children in the scope left out of a limited tree ([`call_tree_largest`]); 0 otherwise.
    pub omitted_children: usize,
}

fn scoped(profile: &Profile, e: EventId, kind: ValueKind, m: MetricId, scope: TreeScope) -> Option<f64> {
    let col = profile.interval(e);
    let rule = if kind.is_metric_independent() {
        Combine::Sum
    } else {
        profile.metric(m).combine
    };
    match scope {
        TreeScope::Thread(t) => col.value_at(t, kind, m),
        TreeScope::Total | TreeScope::Mean | TreeScope::MeanAll => {
            if col.is_empty() {
                return None;
            }
            let values = col.values(kind, m);
            let sum = || values.iter().sum::<f64>();
            Some(match scope {
                TreeScope::Total => rule.fold(values).unwrap_or(f64::NAN),
                TreeScope::MeanAll if rule.is_additive() => sum() / profile.threads().len().max(1) as f64,
                _ => sum() / col.len() as f64,
            })
        }
    }
}

/// The call tree in depth-first order, children sorted by inclusive value (largest first).
///
/// Nodes absent from the scope (a thread that never ran the path) are left out with their
/// subtrees. A profile without callpaths gives its flat events as roots without children.
pub fn call_tree(profile: &Profile, m: MetricId, scope: TreeScope) -> Vec<TreeNode> {
    walk(profile, m, scope, None)
}

/// The roots of the table: the call tree's, or every flat event of a profile without
/// callpaths.
fn roots(profile: &Profile) -> Vec<EventId> {
    let tree = profile.call_tree();
    if tree.is_empty() {
        profile
            .event_ids()
            .filter(|&e| !profile.event(e).is_callpath())
            .collect()
    } else {
        tree.roots().to_vec()
    }
}

/// [`call_tree`], restricted to the events `keep` marks (indexed by event id) when given:
/// a node's children outside it are counted in [`TreeNode::omitted_children`].
fn walk(profile: &Profile, m: MetricId, scope: TreeScope, keep: Option<&[bool]>) -> Vec<TreeNode> {
    let tree = profile.call_tree();
    let kept = |e: EventId| keep.is_none_or(|k| k[e.index()]);
    let node = |e: EventId, parent: Option<EventId>, depth: u32| -> Option<TreeNode> {
        let inclusive = scoped(profile, e, ValueKind::Inclusive, m, scope)?;
        let mut children: Vec<(EventId, f64)> = tree
            .children(e)
            .iter()
            .filter_map(|&c| scoped(profile, c, ValueKind::Inclusive, m, scope).map(|v| (c, v)))
            .collect();
        let in_scope = children.len();
        children.retain(|&(c, _)| kept(c));
        children.sort_by(|a, b| larger_first(a.1, b.1).then(a.0.cmp(&b.0)));
        Some(TreeNode {
            event: e,
            parent,
            depth,
            name: profile.event(e).leaf().to_string(),
            inclusive,
            exclusive: scoped(profile, e, ValueKind::Exclusive, m, scope).unwrap_or(0.0),
            calls: scoped(profile, e, ValueKind::Calls, m, scope).unwrap_or(0.0),
            threads: profile.interval(e).len(),
            omitted_children: in_scope - children.len(),
            children: children.into_iter().map(|(c, _)| c).collect(),
        })
    };
    let mut root_nodes: Vec<TreeNode> = roots(profile)
        .into_iter()
        .filter(|&r| kept(r))
        .filter_map(|r| node(r, None, 0))
        .collect();
    root_nodes.sort_by(|a, b| larger_first(a.inclusive, b.inclusive).then(a.event.cmp(&b.event)));
    let mut out = Vec::new();
    let mut stack: Vec<TreeNode> = root_nodes.into_iter().rev().collect();
    while let Some(n) = stack.pop() {
        for &c in n.children.iter().rev() {
            if let Some(child) = node(c, Some(n.event), n.depth + 1) {
                stack.push(child);
            }
        }
        out.push(n);
    }
    out
}

/// The call tree limited to its `max_nodes` largest nodes, and the number of nodes the scope
/// has. Nodes are taken largest inclusive value first among the roots and the children of the
/// nodes taken (so every node's parent is in the result, and a node is left out only when
/// `max_nodes` larger ones were taken: hpcviewer's "hot path" order); each node's
/// [`TreeNode::omitted_children`] counts its children left out. The result is in the order
/// of [`call_tree`]. A call tree of 10^5-10^6 calling contexts (a sampled profile) is
/// otherwise too large to send to, or draw in, a browser. Only the nodes kept are built.
pub fn call_tree_largest(
    profile: &Profile,
    m: MetricId,
    scope: TreeScope,
    max_nodes: usize,
) -> (Vec<TreeNode>, usize) {
    use std::cmp::{Ordering, Reverse};
    use std::collections::BinaryHeap;
    // Heap entry: inclusive value and event; larger value first, then lower event id.
    struct Key(f64, Reverse<EventId>);
    impl Ord for Key {
        fn cmp(&self, o: &Self) -> Ordering {
            larger_first(o.0, self.0).then(self.1.cmp(&o.1))
        }
    }
    impl PartialOrd for Key {
        fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
            Some(self.cmp(o))
        }
    }
    impl PartialEq for Key {
        fn eq(&self, o: &Self) -> bool {
            self.cmp(o).is_eq()
        }
    }
    impl Eq for Key {}
    let tree = profile.call_tree();
    let inclusive = |e: EventId| scoped(profile, e, ValueKind::Inclusive, m, scope);
    let mut heap: BinaryHeap<Key> = roots(profile)
        .into_iter()
        .filter_map(|r| inclusive(r).map(|v| Key(v, Reverse(r))))
        .collect();
    // Every node of the scope passes through the heap once (so it is counted); the first
    // `max_nodes` taken are kept.
    let mut keep = vec![false; profile.events().len()];
    let mut total = 0;
    while let Some(Key(_, Reverse(e))) = heap.pop() {
        keep[e.index()] = total < max_nodes;
        total += 1;
        for &c in tree.children(e) {
            if let Some(v) = inclusive(c) {
                heap.push(Key(v, Reverse(c)));
            }
        }
    }
    (walk(profile, m, scope, Some(&keep)), total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use perfscape_model::{Metric, ProfileBuilder, ThreadData, ThreadId};

    fn two_threads() -> Profile {
        let mut b = ProfileBuilder::new(vec![Metric::tau("TIME")]);
        for (t, scale) in [(0u32, 1.0), (1, 3.0)] {
            let mut d = ThreadData::new(1);
            let mut push = |n: &str, x: f64, i: f64| {
                d.push_timer(n, "G", 1.0, 0.0, &[x * scale], &[i * scale])
                    .unwrap()
            };
            push("main", 10.0, 100.0);
            push("main => a", 30.0, 60.0);
            push("main => b", 30.0, 30.0);
            push("main => a => c", 30.0, 30.0);
            if t == 1 {
                push("main => d", 1.0, 1.0);
            }
            b.add_thread(ThreadId::new(t, 0, 0), d).unwrap();
        }
        b.finish().0
    }

    #[test]
    fn depth_first_children_by_inclusive() {
        let p = two_threads();
        let rows = call_tree(&p, MetricId(0), TreeScope::Total);
        let names: Vec<(&str, u32)> = rows.iter().map(|r| (r.name.as_str(), r.depth)).collect();
        assert_eq!(names, vec![("main", 0), ("a", 1), ("c", 2), ("b", 1), ("d", 1)]);
        assert_eq!(rows[0].inclusive, 400.0);
        assert_eq!(rows[4].inclusive, 3.0);
        let mean = call_tree(&p, MetricId(0), TreeScope::Mean);
        assert_eq!(mean[4].inclusive, 3.0); // only thread 1 has `d`
        let mean_all = call_tree(&p, MetricId(0), TreeScope::MeanAll);
        assert_eq!(mean_all[4].inclusive, 1.5);
        let t0 = call_tree(&p, MetricId(0), TreeScope::Thread(ThreadIndex(0)));
        assert_eq!(t0.len(), 4); // `d` is absent on thread 0
        assert_eq!(t0[1].exclusive, 30.0);
    }

    #[test]
    fn a_minimum_metric_is_never_summed_over_threads() {
        use perfscape_model::{Combine, Unit};
        let mut b = ProfileBuilder::new(vec![
            Metric::new("min_time", Unit::Seconds).combined_by(Combine::Min),
        ]);
        for (t, x) in [(0u32, 5.0), (1, 2.0), (2, 9.0)] {
            let mut d = ThreadData::new(1);
            d.push_timer("main", "G", 1.0, 1.0, &[x * 10.0], &[x]).unwrap();
            if t < 2 {
                d.push_timer("main => a", "G", 1.0, 0.0, &[x], &[x]).unwrap();
            }
            b.add_thread(ThreadId::new(t, 0, 0), d).unwrap();
        }
        let p = b.finish().0;
        let rows = call_tree(&p, MetricId(0), TreeScope::Total);
        // Minimum over threads, not 160 and 16; calls still add up.
        assert_eq!(
            (rows[0].exclusive, rows[0].inclusive, rows[0].calls),
            (20.0, 2.0, 3.0)
        );
        assert_eq!((rows[1].name.as_str(), rows[1].inclusive), ("a", 2.0));
        // Thread 2 has no `main => a`: for a minimum metric that is no value, not a 0.
        let mean_all = call_tree(&p, MetricId(0), TreeScope::MeanAll);
        assert_eq!(mean_all[1].inclusive, 3.5);
        assert_eq!(mean_all[0].inclusive, 16.0 / 3.0);
    }

    #[test]
    fn a_limited_tree_keeps_the_largest_nodes_with_their_ancestors() {
        // main(10) -> a(6) -> a1(5), a2(1); main -> b(3) -> b1(3)
        let mut b = ProfileBuilder::new(vec![Metric::tau("TIME")]);
        let mut d = ThreadData::new(1);
        for (name, inc) in [
            ("main", 10.0),
            ("main => a", 6.0),
            ("main => a => a1", 5.0),
            ("main => a => a2", 1.0),
            ("main => b", 3.0),
            ("main => b => b1", 3.0),
        ] {
            d.push_timer(name, "", 1.0, 0.0, &[0.0], &[inc]).unwrap();
        }
        b.add_thread(ThreadId::new(0, 0, 0), d).unwrap();
        let (p, _) = b.finish();
        let (nodes, total) = call_tree_largest(&p, MetricId(0), TreeScope::Total, 4);
        assert_eq!(total, 6);
        let names: Vec<String> = nodes.iter().map(|n| p.event_name(n.event)).collect();
        assert_eq!(names, ["main", "main => a", "main => a => a1", "main => b"]);
        let omitted: Vec<usize> = nodes.iter().map(|n| n.omitted_children).collect();
        assert_eq!(omitted, [0, 1, 0, 1]);
        let (all, total) = call_tree_largest(&p, MetricId(0), TreeScope::Total, 100);
        assert_eq!((all.len(), total), (6, 6));
        assert!(all.iter().all(|n| n.omitted_children == 0));
    }
}
