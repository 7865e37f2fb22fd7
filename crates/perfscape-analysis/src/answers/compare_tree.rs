//! The call trees of two runs side by side (`/api/diff/calltree`): one tree of the calling
//! contexts of either run, each node with its inclusive and exclusive value in A and B and the
//! difference, and the path along which an increase concentrates.

use super::compare::{DiffParams, metric_in_both};
use crate::compare::diff::{Change, Normalize, default_normalize, event_value};
use crate::compare::matching::RunMatch;
use crate::error::ViewError;
use perfscape_model::{EventId, Profile, ValueKind};
use serde::Serialize;

/// Nodes answered at most: the largest |inclusive B − A| with their callers.
pub const MAX_DIFF_TREE_NODES: usize = 20_000;

/// One calling context of [`DiffTreeResponse`].
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DiffTreeNode {
    /// The caller's position in `nodes` (`null` for a root).
    pub parent: Option<u32>,
    /// The node's own frame (the last frame of its callpath; run A's text when it has it).
    pub name: String,
    /// Its event in run A (`null` when only B has the context).
    pub event_a: Option<u32>,
    /// Its event in run B (`null` when only A has it).
    pub event_b: Option<u32>,
    /// In both runs, added in B, removed in B.
    pub change: Change,
    /// Inclusive value in A, in B, and B − A (a run without the context counts 0).
    pub inclusive: [f64; 3],
    /// Exclusive value in A, in B, and B − A.
    pub exclusive: [f64; 3],
    /// Callees' positions, largest |inclusive B − A| first.
    pub children: Vec<u32>,
}

/// `GET /api/diff/calltree`: the two runs' call trees as one.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DiffTreeResponse {
    /// The metric's name.
    pub metric_name: String,
    /// Unit of the values.
    pub unit: String,
    /// Normalization applied.
    pub normalize: Normalize,
    /// The calling contexts (at most [`MAX_DIFF_TREE_NODES`]; callers before callees).
    pub nodes: Vec<DiffTreeNode>,
    /// Root positions, largest |inclusive B − A| first.
    pub roots: Vec<u32>,
    /// Calling contexts of either run in all (`nodes` may hold fewer).
    pub nodes_in_runs: u32,
    /// The regression path: from the root whose inclusive value grew most, each time into the
    /// callee that grew most, as long as that callee holds at least half of its caller's
    /// increase (hpcviewer's hot-path rule, on B − A). Empty when nothing grew.
    pub regression_path: Vec<u32>,
}

struct Draft {
    parent: Option<usize>,
    a: Option<EventId>,
    b: Option<EventId>,
}

/// Every node of `p`'s call tree, callers before callees, with its caller.
fn tree_order(p: &Profile) -> Vec<(EventId, Option<EventId>)> {
    let tree = p.call_tree();
    let mut out = Vec::new();
    let mut stack: Vec<(EventId, Option<EventId>)> = tree.roots().iter().rev().map(|&r| (r, None)).collect();
    while let Some((e, parent)) = stack.pop() {
        out.push((e, parent));
        stack.extend(tree.children(e).iter().rev().map(|&c| (c, Some(e))));
    }
    out
}

/// The union of the call trees of `a` and `b` (matched by [`crate::compare::matching`]), with
/// values of `q.metric` (A's; B's of the same name), kind ignored (both inclusive and
/// exclusive are given), normalized as `q.normalize` (default per thread when the thread
/// counts differ). Errors: the metric is not one of A's or not in B; neither run has callpaths.
pub fn diff_call_tree(
    a: &Profile,
    b: &Profile,
    matched: &RunMatch,
    q: DiffParams,
) -> Result<DiffTreeResponse, ViewError> {
    let mb = metric_in_both(a, matched, q.metric)?;
    if a.call_tree().is_empty() && b.call_tree().is_empty() {
        return Err(ViewError::invalid(
            "neither run has callpaths: there is no call tree to compare",
        ));
    }
    let normalize = q.normalize.unwrap_or_else(|| default_normalize(a, b));
    let mut b_of_a: Vec<Option<EventId>> = vec![None; a.events().len()];
    let mut a_of_b: Vec<Option<EventId>> = vec![None; b.events().len()];
    for p in &matched.events {
        b_of_a[p.a.index()] = Some(p.b);
        a_of_b[p.b.index()] = Some(p.a);
    }
    let mut drafts: Vec<Draft> = Vec::new();
    let mut node_of_a: Vec<Option<usize>> = vec![None; a.events().len()];
    let mut node_of_b: Vec<Option<usize>> = vec![None; b.events().len()];
    for (e, parent) in tree_order(a) {
        node_of_a[e.index()] = Some(drafts.len());
        drafts.push(Draft {
            parent: parent.and_then(|p| node_of_a[p.index()]),
            a: Some(e),
            b: b_of_a[e.index()],
        });
        if let Some(f) = b_of_a[e.index()] {
            node_of_b[f.index()] = Some(drafts.len() - 1);
        }
    }
    for (f, parent) in tree_order(b) {
        if node_of_b[f.index()].is_some() {
            continue;
        }
        node_of_b[f.index()] = Some(drafts.len());
        drafts.push(Draft {
            parent: parent.and_then(|p| node_of_b[p.index()]),
            a: a_of_b[f.index()],
            b: Some(f),
        });
    }
    let m = q.metric;
    let value = |p: &Profile, e: Option<EventId>, metric, kind| {
        e.map_or(0.0, |e| event_value(p, e, metric, kind, normalize).0)
    };
    let triple = |d: &Draft, kind: ValueKind| {
        let (x, y) = (value(a, d.a, m, kind), value(b, d.b, mb, kind));
        [x, y, y - x]
    };
    let incl: Vec<[f64; 3]> = drafts.iter().map(|d| triple(d, ValueKind::Inclusive)).collect();
    let keep = largest_with_callers(&drafts, &incl, MAX_DIFF_TREE_NODES);
    let mut position = vec![u32::MAX; drafts.len()];
    let mut nodes: Vec<DiffTreeNode> = Vec::new();
    for (i, d) in drafts.iter().enumerate().filter(|(i, _)| keep[*i]) {
        // Every draft has an event of A or of B (built so above).
        let Some((p, e)) = d.a.map(|e| (a, e)).or(d.b.map(|e| (b, e))) else {
            continue;
        };
        position[i] = nodes.len() as u32;
        nodes.push(DiffTreeNode {
            parent: d.parent.map(|q| position[q]),
            name: perfscape_model::event::callpath_leaf(&p.event(e).frame).to_string(),
            event_a: d.a.map(|e| e.0),
            event_b: d.b.map(|e| e.0),
            change: match (d.a, d.b) {
                (Some(_), Some(_)) => Change::Matched,
                (Some(_), None) => Change::Removed,
                _ => Change::Added,
            },
            inclusive: incl[i],
            exclusive: triple(d, ValueKind::Exclusive),
            children: Vec::new(),
        });
    }
    let mut roots = Vec::new();
    for i in 0..nodes.len() {
        match nodes[i].parent {
            Some(p) => nodes[p as usize].children.push(i as u32),
            None => roots.push(i as u32),
        }
    }
    let by_delta = |nodes: &[DiffTreeNode], x: &u32, y: &u32| {
        crate::stats::larger_first(
            nodes[*x as usize].inclusive[2].abs(),
            nodes[*y as usize].inclusive[2].abs(),
        )
        .then(x.cmp(y))
    };
    for i in 0..nodes.len() {
        let mut c = std::mem::take(&mut nodes[i].children);
        c.sort_by(|x, y| by_delta(&nodes, x, y));
        nodes[i].children = c;
    }
    roots.sort_by(|x, y| by_delta(&nodes, x, y));
    let regression_path = regression_path(&nodes, &roots);
    Ok(DiffTreeResponse {
        metric_name: a.metric(m).name.clone(),
        unit: a.metric(m).unit.symbol().to_string(),
        normalize,
        nodes_in_runs: drafts.len() as u32,
        nodes,
        roots,
        regression_path,
    })
}

/// Which drafts to keep: all when there are at most `max`, else the largest |inclusive
/// B − A| with every caller, until `max` are kept.
fn largest_with_callers(drafts: &[Draft], incl: &[[f64; 3]], max: usize) -> Vec<bool> {
    if drafts.len() <= max {
        return vec![true; drafts.len()];
    }
    let mut order: Vec<usize> = (0..drafts.len()).collect();
    order.sort_by(|&x, &y| crate::stats::larger_first(incl[x][2].abs(), incl[y][2].abs()).then(x.cmp(&y)));
    let mut keep = vec![false; drafts.len()];
    let mut kept = 0;
    for i in order {
        let mut cur = Some(i);
        while let Some(c) = cur {
            if keep[c] {
                break;
            }
            keep[c] = true;
            kept += 1;
            cur = drafts[c].parent;
        }
        if kept >= max {
            break;
        }
    }
    keep
}

/// The regression path (see [`DiffTreeResponse::regression_path`]).
fn regression_path(nodes: &[DiffTreeNode], roots: &[u32]) -> Vec<u32> {
    let grew = |i: u32| nodes[i as usize].inclusive[2];
    let Some(&start) = roots
        .iter()
        .filter(|&&r| grew(r) > 0.0)
        .max_by(|&&x, &&y| grew(x).total_cmp(&grew(y)))
    else {
        return Vec::new();
    };
    let mut path = vec![start];
    let mut cur = start;
    while let Some(&next) = nodes[cur as usize]
        .children
        .iter()
        .max_by(|&&x, &&y| grew(x).total_cmp(&grew(y)).then(y.cmp(&x)))
    {
        if grew(next) <= 0.0 || grew(next) < 0.5 * grew(cur) {
            break;
        }
        path.push(next);
        cur = next;
    }
    path
}
