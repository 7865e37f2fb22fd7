//! The call tree table (`/api/calltree`) in a scope: the total over threads, the means, or one
//! thread.

use super::source;
use crate::calltree::{TreeScope, call_tree_largest};
use crate::error::ViewError;
use crate::params::thread_index;
use perfscape_model::{Combine, MetricId, Profile, ThreadId};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;

/// Over which threads the call tree's values are taken: the `scope` parameter (`total`,
/// `mean`, `mean_all` or a thread `N.C.T`); default `total`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "ts",
    derive(ts_rs::TS),
    ts(type = "\"total\" | \"mean\" | \"mean_all\" | string")
)]
pub enum Scope {
    /// Combined over all threads: the sum, or the metric's own rule when it does not add up.
    #[default]
    Total,
    /// Mean over the threads that have each node (ParaProf's Mean).
    Mean,
    /// Mean over all threads (ParaProf's Mean, AllThreads).
    MeanAll,
    /// One thread's values.
    Thread(ThreadId),
}

impl FromStr for Scope {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "total" => Scope::Total,
            "mean" => Scope::Mean,
            "mean_all" => Scope::MeanAll,
            t => Scope::Thread(
                t.parse()
                    .map_err(|_| format!("`{t}`: expected total, mean, mean_all or a thread N.C.T"))?,
            ),
        })
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scope::Total => f.write_str("total"),
            Scope::Mean => f.write_str("mean"),
            Scope::MeanAll => f.write_str("mean_all"),
            Scope::Thread(t) => t.fmt(f),
        }
    }
}

impl Serialize for Scope {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Scope {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?.parse().map_err(serde::de::Error::custom)
    }
}

/// One node of the call tree table.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct TreeNodeJson {
    /// Event id of the node.
    pub id: u32,
    /// Parent node's id.
    pub parent: Option<u32>,
    /// Depth (0 = root).
    pub depth: u32,
    /// Routine name (last frame).
    pub name: String,
    /// Source location (`file:line`), if any.
    pub source: Option<String>,
    /// Inclusive value in the scope.
    pub inclusive: f64,
    /// Exclusive value in the scope.
    pub exclusive: f64,
    /// Calls in the scope.
    pub calls: f64,
    /// Threads having the node.
    pub threads: u32,
    /// Children ids (those in the response).
    pub children: Vec<u32>,
    /// Children left out of the response (see [`CallTreeResponse::nodes_in_scope`]).
    pub omitted_children: u32,
    /// The flat event of the node's routine, if the profile has it.
    pub routine: Option<u32>,
}

/// `GET /api/calltree`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct CallTreeResponse {
    /// Scope: `total`, `mean`, `mean_all` or a thread `N.C.T`.
    pub scope: String,
    /// Unit.
    pub unit: String,
    /// How the metric's values combine across threads (the `total` scope): `sum`, `min`,
    /// `max`, `mean` or `not_combinable`.
    pub combine: Combine,
    /// True when built from callpaths; false = flat list.
    pub has_callpaths: bool,
    /// Nodes in depth-first order: the whole tree, or its [`MAX_TREE_NODES`] largest nodes
    /// (with their ancestors) when the scope has more.
    pub nodes: Vec<TreeNodeJson>,
    /// Nodes the scope has (more than `nodes.len()` when the tree was limited).
    pub nodes_in_scope: u32,
}

/// The most call-tree nodes one `/api/calltree` answer holds: a sampled profile's 10^5-10^6
/// calling contexts would be tens of MB of JSON and a table no browser draws.
pub const MAX_TREE_NODES: usize = 20_000;

/// `GET /api/calltree`: the call tree of metric `m` in `scope`, depth first, children by
/// inclusive value ([`crate::calltree::call_tree`]), limited to [`MAX_TREE_NODES`] nodes ([`call_tree_largest`]).
///
/// # Errors
/// [`ViewError::NotFound`] for a thread the profile does not have.
pub fn call_tree_table(profile: &Profile, m: MetricId, scope: Scope) -> Result<CallTreeResponse, ViewError> {
    let tree_scope = match scope {
        Scope::Total => TreeScope::Total,
        Scope::Mean => TreeScope::Mean,
        Scope::MeanAll => TreeScope::MeanAll,
        Scope::Thread(t) => TreeScope::Thread(thread_index(profile, t)?),
    };
    let (nodes, nodes_in_scope) = call_tree_largest(profile, m, tree_scope, MAX_TREE_NODES);
    let nodes = nodes
        .into_iter()
        .map(|n| TreeNodeJson {
            id: n.event.0,
            parent: n.parent.map(|e| e.0),
            depth: n.depth,
            source: source(profile, n.event),
            name: n.name,
            inclusive: n.inclusive,
            exclusive: n.exclusive,
            calls: n.calls,
            threads: n.threads as u32,
            children: n.children.iter().map(|c| c.0).collect(),
            omitted_children: u32::try_from(n.omitted_children).unwrap_or(u32::MAX),
            routine: profile.event(n.event).routine().map(|r| r.0),
        })
        .collect();
    Ok(CallTreeResponse {
        scope: scope.to_string(),
        unit: profile.metric(m).unit.symbol().to_string(),
        combine: profile.metric(m).combine,
        has_callpaths: !profile.call_tree().is_empty(),
        nodes,
        nodes_in_scope: u32::try_from(nodes_in_scope).unwrap_or(u32::MAX),
    })
}
