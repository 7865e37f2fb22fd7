//! The call tree as a table (ParaProf's "Call Graph"/"Statistics" tree, pprof's tree view):
//! Name, source location, Inclusive, Exclusive, Calls, for one thread or aggregated over
//! threads.

use perfscape_model::event::callpath_leaf;
use perfscape_model::{EventId, MetricId, Profile, ThreadIndex, ValueKind};
use serde::Serialize;

/// Over which threads the tree's values are taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TreeScope {
    /// One thread's values.
    Thread(ThreadIndex),
    /// Sum over all threads.
    Total,
    /// Sum over the threads that have the node, divided by their number (ParaProf's Mean).
    Mean,
    /// Sum over all threads divided by the number of threads (ParaProf's Mean,AllThreads).
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
    /// Inclusive value in the scope.
    pub inclusive: f64,
    /// Exclusive value in the scope.
    pub exclusive: f64,
    /// Calls in the scope.
    pub calls: f64,
    /// Number of threads that have the node.
    pub threads: usize,
    /// Child nodes' events, largest inclusive first.
    pub children: Vec<EventId>,
}

fn scoped(profile: &Profile, e: EventId, kind: ValueKind, m: MetricId, scope: TreeScope) -> Option<f64> {
    let col = profile.interval(e);
    match scope {
        TreeScope::Thread(t) => col.value_at(t, kind, m),
        TreeScope::Total | TreeScope::Mean | TreeScope::MeanAll => {
            if col.is_empty() {
                return None;
            }
            let sum: f64 = col.values(kind, m).iter().sum();
            Some(match scope {
                TreeScope::Total => sum,
                TreeScope::Mean => sum / col.len() as f64,
                _ => sum / profile.threads().len().max(1) as f64,
            })
        }
    }
}

/// The call tree in depth-first order, children sorted by inclusive value (largest first).
///
/// Nodes absent from the scope (a thread that never ran the path) are left out with their
/// subtrees. A profile without callpaths gives its flat events as roots without children.
pub fn call_tree(profile: &Profile, m: MetricId, scope: TreeScope) -> Vec<TreeNode> {
    let tree = profile.call_tree();
    let roots: Vec<EventId> = if tree.is_empty() {
        profile
            .event_ids()
            .filter(|&e| !profile.event(e).is_callpath())
            .collect()
    } else {
        tree.roots().to_vec()
    };
    let node = |e: EventId, parent: Option<EventId>, depth: u32| -> Option<TreeNode> {
        let inclusive = scoped(profile, e, ValueKind::Inclusive, m, scope)?;
        let mut children: Vec<(EventId, f64)> = tree
            .children(e)
            .iter()
            .filter_map(|&c| scoped(profile, c, ValueKind::Inclusive, m, scope).map(|v| (c, v)))
            .collect();
        children.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        Some(TreeNode {
            event: e,
            parent,
            depth,
            name: callpath_leaf(&profile.event(e).name).to_string(),
            inclusive,
            exclusive: scoped(profile, e, ValueKind::Exclusive, m, scope).unwrap_or(0.0),
            calls: scoped(profile, e, ValueKind::Calls, m, scope).unwrap_or(0.0),
            threads: profile.interval(e).len(),
            children: children.into_iter().map(|(c, _)| c).collect(),
        })
    };
    let mut root_nodes: Vec<TreeNode> = roots.iter().filter_map(|&r| node(r, None, 0)).collect();
    root_nodes.sort_by(|a, b| b.inclusive.total_cmp(&a.inclusive).then(a.event.cmp(&b.event)));
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
}
