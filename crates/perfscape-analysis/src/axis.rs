//! The thread axis of the matrix views: which threads, in which order (the `threads`,
//! `by_event`, `clusters`, `subset` and `top` parameters), built once per [`AxisSpec`].
//!
//! Orders: by id, by the value of an event (largest first), or by k-means clusters of the
//! per-thread event vectors ([`crate::threads`]). Subsets: all threads, the first `top` of the
//! order, or the min/median/max representatives of each cluster.

use crate::error::ViewError;
use crate::params::{Values, event_id};
use crate::threads::{Clustering, cluster_order, cluster_threads, order_by_value, representatives};
use crate::views::ThreadAxis;
use perfscape_model::{EventId, Profile, ThreadIndex};
use serde::{Deserialize, Serialize};

/// How the threads are ordered on the axis: the `threads` parameter; default `id`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum ThreadOrder {
    /// Thread id order.
    #[default]
    Id,
    /// By the value of the `by_event` event, largest first; threads without it follow by id.
    Value,
    /// By k-means clusters of the per-thread event vectors, largest cluster first.
    Cluster,
}

/// Which threads of the order the axis shows: the `subset` parameter; default `all`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum Subset {
    /// Every thread.
    #[default]
    All,
    /// The first `top` threads of the order.
    Top,
    /// Each cluster's threads with the smallest, median and largest total time (needs
    /// [`ThreadOrder::Cluster`]).
    Reps,
}

/// Default number of clusters of [`ThreadOrder::Cluster`].
pub const CLUSTERS_DEFAULT: u32 = 8;
/// Largest number of clusters.
pub const CLUSTERS_MAX: u32 = 64;
/// Default number of threads of [`Subset::Top`].
pub const TOP_DEFAULT: u32 = 64;
/// Feature events of the clustering (the flat events with the largest totals).
const CLUSTER_FEATURES: usize = 32;

/// The axis parameters of a request, as given.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AxisParams {
    /// The order (`threads`).
    pub threads: ThreadOrder,
    /// The event ordering the threads with [`ThreadOrder::Value`] (`by_event`).
    pub by_event: Option<u32>,
    /// k of [`ThreadOrder::Cluster`] (`clusters`, default 8, clamped to 1..=64).
    pub clusters: Option<u32>,
    /// The subset (`subset`).
    pub subset: Subset,
    /// Threads of [`Subset::Top`] (`top`, default 64, at least 1).
    pub top: Option<u32>,
}

impl AxisParams {
    /// The axis these parameters name for `values` of `profile`.
    ///
    /// # Errors
    /// [`ViewError::Invalid`] for `threads=value` without `by_event` and `subset=reps` without
    /// `threads=cluster`; [`ViewError::NotFound`] for an unknown `by_event`.
    pub fn resolve(&self, profile: &Profile, values: Values) -> Result<AxisSpec, ViewError> {
        let order = match self.threads {
            ThreadOrder::Id => AxisOrder::Id,
            ThreadOrder::Value => {
                let event = self
                    .by_event
                    .ok_or_else(|| ViewError::invalid("threads=value needs by_event=<event id>"))?;
                AxisOrder::Value {
                    event: event_id(profile.events().len(), event)?,
                    values,
                }
            }
            ThreadOrder::Cluster => AxisOrder::Cluster {
                k: self.clusters.unwrap_or(CLUSTERS_DEFAULT).clamp(1, CLUSTERS_MAX),
                values,
            },
        };
        let subset = match self.subset {
            Subset::All => AxisSubset::All,
            Subset::Top => AxisSubset::Top(self.top.unwrap_or(TOP_DEFAULT).max(1)),
            Subset::Reps => {
                if !matches!(order, AxisOrder::Cluster { .. }) {
                    return Err(ViewError::invalid("subset=reps needs threads=cluster"));
                }
                AxisSubset::Reps
            }
        };
        Ok(AxisSpec { order, subset })
    }
}

/// A thread axis, fully specified: what it is built from (the key it is cached under).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AxisSpec {
    /// The order.
    pub order: AxisOrder,
    /// The subset of the order shown.
    pub subset: AxisSubset,
}

impl AxisSpec {
    /// All threads in id order.
    pub const ID: AxisSpec = AxisSpec {
        order: AxisOrder::Id,
        subset: AxisSubset::All,
    };
}

/// A resolved thread order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AxisOrder {
    /// Thread id order.
    Id,
    /// By the value of `event` (largest first).
    Value {
        /// The event.
        event: EventId,
        /// Its metric and value kind.
        values: Values,
    },
    /// By `k` k-means clusters of the per-thread vectors of `values`.
    Cluster {
        /// Number of clusters asked for.
        k: u32,
        /// The metric and value kind of the vectors.
        values: Values,
    },
}

/// A resolved subset of the order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AxisSubset {
    /// Every thread.
    All,
    /// The first n threads.
    Top(u32),
    /// The min/median/max representatives of each cluster.
    Reps,
}

/// A thread axis and, for cluster orders, the clustering.
#[derive(Clone, Debug)]
pub struct AxisInfo {
    /// The threads in display order.
    pub axis: ThreadAxis,
    /// The clustering of a cluster order.
    pub clustering: Option<Clustering>,
    /// With a cluster order: the positions where the cluster number changes along the axis.
    pub cluster_starts: Vec<u32>,
    /// A description of the axis (`id`, `value of event 3, first 8`, `4 clusters`, ...).
    pub label: String,
}

impl AxisInfo {
    /// Approximate heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        let clustering = self.clustering.as_ref().map_or(0, |c| {
            c.assignment.capacity() * 4
                + c.sizes.capacity() * 8
                + c.features.capacity() * 4
                + c.centroids.iter().map(|x| x.capacity() * 8 + 24).sum::<usize>()
        });
        // The axis holds the order and a position per thread of the profile.
        self.axis.order.capacity() * 4 * 2
            + clustering
            + self.cluster_starts.capacity() * 4
            + self.label.capacity()
    }
}

/// Builds the axis `spec` names over the threads of `profile`. Deterministic (clustering uses a
/// fixed seed and fixed-size chunks). The same as [`subset_axis`] of [`order_axis`].
pub fn build_axis(profile: &Profile, spec: &AxisSpec) -> AxisInfo {
    subset_axis(profile, &order_axis(profile, spec.order), spec.order, spec.subset)
}

/// The whole axis of `order` (every thread; subset [`AxisSubset::All`]): the expensive part of
/// an axis (a sort by value, a k-means clustering), which a server keeps once for all the
/// subsets asked of it.
pub fn order_axis(profile: &Profile, order: AxisOrder) -> AxisInfo {
    let n = profile.threads().len();
    let (order, clustering, label) = match order {
        AxisOrder::Id => ((0..n).map(ThreadIndex::from).collect(), None, "id".to_string()),
        AxisOrder::Value { event, values } => (
            order_by_value(profile, event, values.kind, values.metric),
            None,
            format!("value of event {}", event.0),
        ),
        AxisOrder::Cluster { k, values } => {
            let c = cluster_threads(profile, values.metric, values.kind, k as usize, CLUSTER_FEATURES);
            (cluster_order(&c), Some(c), format!("{k} clusters"))
        }
    };
    with_order(n, order, clustering, label)
}

/// The `subset` of `full`, the whole axis of `order` made by [`order_axis`] over `profile`:
/// its first `n` threads, or the min/median/max representatives of each cluster (for a cluster
/// order; every thread otherwise). Linear in the threads.
pub fn subset_axis(profile: &Profile, full: &AxisInfo, order: AxisOrder, subset: AxisSubset) -> AxisInfo {
    let n = profile.threads().len();
    let label = full.label.clone();
    let (threads, label) = match (subset, &full.clustering, order) {
        (AxisSubset::All, _, _) => return full.clone(),
        (AxisSubset::Top(t), _, _) => (
            full.axis.order.iter().copied().take(t as usize).collect(),
            format!("{label}, first {t}"),
        ),
        (AxisSubset::Reps, Some(c), AxisOrder::Cluster { values, .. }) => (
            representatives(profile, c, values.metric),
            format!("{label}, min/median/max of each"),
        ),
        (AxisSubset::Reps, _, _) => return full.clone(),
    };
    with_order(n, threads, full.clustering.clone(), label)
}

/// An axis over `n` threads showing `order`, with the positions where `clustering`'s cluster
/// number changes along it.
fn with_order(n: usize, order: Vec<ThreadIndex>, clustering: Option<Clustering>, label: String) -> AxisInfo {
    let cluster_starts = match &clustering {
        Some(c) => {
            let mut starts = Vec::new();
            let mut prev = u32::MAX;
            for (pos, t) in order.iter().enumerate() {
                let k = c.assignment[t.index()];
                if k != prev {
                    starts.push(pos as u32);
                    prev = k;
                }
            }
            starts
        }
        None => Vec::new(),
    };
    AxisInfo {
        axis: ThreadAxis::from_order(n, order),
        clustering,
        cluster_starts,
        label,
    }
}
