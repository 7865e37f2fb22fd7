//! The thread axis and its clusters (`/api/threads`).

use crate::axis::AxisInfo;
use crate::threads::representatives;
use perfscape_model::{MetricId, Profile};
use serde::Serialize;

/// One cluster of threads.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ClusterJson {
    /// Cluster number (0 = largest).
    pub id: u32,
    /// Threads in the cluster.
    pub size: u32,
    /// The cluster's threads with the smallest, median and largest total time.
    pub representatives: Vec<String>,
    /// Centroid: the mean value of each feature event over the cluster (metric's unit).
    pub centroid: Vec<f64>,
}

/// `GET /api/threads`: the thread axis for the given ordering.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ThreadsResponse {
    /// `id`, `value` or `cluster`, with the subset.
    pub thread_order: String,
    /// Threads on the axis.
    pub count: u32,
    /// Their addresses in axis order (the first 10,000).
    pub threads: Vec<String>,
    /// With `threads=cluster`: the clusters, largest first.
    pub clusters: Vec<ClusterJson>,
    /// With `threads=cluster`: the feature events (their names) the clustering used.
    pub features: Vec<String>,
}

/// Most thread addresses listed in a [`ThreadsResponse`].
pub const THREADS_LISTED: usize = 10_000;

/// `GET /api/threads`: the axis (the first 10,000 threads in axis order) and, for a cluster
/// order, each cluster with its representatives (smallest, median and largest total time in
/// metric `m`).
pub fn threads(profile: &Profile, info: &AxisInfo, m: MetricId) -> ThreadsResponse {
    let clusters = match &info.clustering {
        Some(c) => {
            let reps = representatives(profile, c, m);
            (0..c.sizes.len())
                .map(|k| ClusterJson {
                    id: k as u32,
                    size: c.sizes[k] as u32,
                    representatives: reps
                        .iter()
                        .filter(|t| c.assignment[t.index()] as usize == k)
                        .map(|t| profile.thread(*t).to_string())
                        .collect(),
                    centroid: c.centroids[k].clone(),
                })
                .collect()
        }
        None => Vec::new(),
    };
    ThreadsResponse {
        thread_order: info.label.clone(),
        count: info.axis.len() as u32,
        threads: info
            .axis
            .order
            .iter()
            .take(THREADS_LISTED)
            .map(|t| profile.thread(*t).to_string())
            .collect(),
        clusters,
        features: info
            .clustering
            .as_ref()
            .map(|c| c.features.iter().map(|e| profile.event_name(*e)).collect())
            .unwrap_or_default(),
    }
}
