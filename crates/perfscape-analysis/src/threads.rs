//! The thread axis: orderings (by id, by the value of an event, by similarity) and reductions
//! (the top n threads of an event, or the min/median/max representatives of each cluster).
//!
//! Similarity is k-means over per-thread event vectors: the values of the `features` flat
//! events with the largest totals, all divided by one common scale (the largest value), a
//! thread lacking an event counting 0. Distances are therefore in the metric's unit: threads
//! are similar when they spend similar time in the same events, and an event that takes little
//! time cannot split the threads on its own. Initialization is k-means++ driven by a fixed-seed generator, centroid sums are
//! accumulated in fixed-size chunks combined in order, and labels are renumbered by cluster
//! size: the result is the same for every run and every number of worker threads.

use crate::stats::{larger_first, thread_totals};
use perfscape_model::{Combine, EventId, MetricId, Profile, ThreadIndex, ValueKind};
use rayon::prelude::*;
use serde::Serialize;

/// Threads ordered by the value of event `e` (largest first); threads without the event
/// follow in id order. Ties keep id order.
pub fn order_by_value(profile: &Profile, e: EventId, kind: ValueKind, m: MetricId) -> Vec<ThreadIndex> {
    let col = profile.interval(e);
    let mut with: Vec<(ThreadIndex, f64)> = col
        .threads()
        .iter()
        .copied()
        .zip(col.values(kind, m).iter().copied())
        .collect();
    with.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut has = vec![false; profile.threads().len()];
    for (t, _) in &with {
        has[t.index()] = true;
    }
    let mut out: Vec<ThreadIndex> = with.into_iter().map(|(t, _)| t).collect();
    out.extend(
        (0..profile.threads().len())
            .filter(|&t| !has[t])
            .map(ThreadIndex::from),
    );
    out
}

/// The result of clustering the threads.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Clustering {
    /// Cluster of each thread (by thread index), 0 = the largest cluster.
    pub assignment: Vec<u32>,
    /// Number of threads per cluster, largest first.
    pub sizes: Vec<usize>,
    /// Events used as features.
    pub features: Vec<EventId>,
    /// Centroids in feature space (values divided by the common scale), one per cluster.
    pub centroids: Vec<Vec<f64>>,
    /// Lloyd iterations run.
    pub iterations: usize,
}

/// Deterministic xorshift64* generator (seeded with a constant).
struct Rng(u64);

impl Rng {
    fn next_f64(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn dist2(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum()
}

/// Chunk size for parallel reductions: fixed, so that results do not depend on the number of
/// worker threads.
const CHUNK: usize = 4096;

/// Clusters the threads of `profile` into at most `k` groups (see the module documentation).
pub fn cluster_threads(
    profile: &Profile,
    m: MetricId,
    kind: ValueKind,
    k: usize,
    features: usize,
) -> Clustering {
    let n = profile.threads().len();
    // Features: the flat events with the largest totals (combined under the metric's rule).
    let rule = if kind.is_metric_independent() {
        Combine::Sum
    } else {
        profile.metric(m).combine
    };
    let mut ranked: Vec<(EventId, f64)> = profile
        .event_ids()
        .filter(|&e| !profile.event(e).is_callpath() && !profile.interval(e).is_empty())
        .map(|e| {
            (
                e,
                rule.fold(profile.interval(e).values(kind, m)).unwrap_or(f64::NAN),
            )
        })
        .collect();
    ranked.sort_by(|a, b| larger_first(a.1, b.1).then(a.0.cmp(&b.0)));
    ranked.truncate(features.max(1));
    let feats: Vec<EventId> = ranked.iter().map(|x| x.0).collect();
    let d = feats.len();
    // Dense vectors, thread-major, divided by one common scale.
    let scale = feats
        .iter()
        .flat_map(|&e| profile.interval(e).values(kind, m).iter().copied())
        .fold(0.0f64, |a, v| a.max(v.abs()));
    let scale = if scale > 0.0 { scale } else { 1.0 };
    let mut x = vec![0.0f64; n * d];
    for (j, &e) in feats.iter().enumerate() {
        let col = profile.interval(e);
        for (t, v) in col.threads().iter().zip(col.values(kind, m)) {
            x[t.index() * d + j] = v / scale;
        }
    }
    let k = k.clamp(1, n.max(1));
    if n == 0 || d == 0 {
        return Clustering {
            assignment: vec![0; n],
            sizes: vec![n],
            features: feats,
            centroids: vec![vec![0.0; d]],
            iterations: 0,
        };
    }
    let row = |i: usize| &x[i * d..(i + 1) * d];
    // k-means++ initialization.
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut centroids: Vec<Vec<f64>> = vec![row(0).to_vec()];
    let mut nearest: Vec<f64> = (0..n).map(|i| dist2(row(i), &centroids[0])).collect();
    while centroids.len() < k {
        let total: f64 = nearest.iter().sum();
        if total <= 0.0 {
            break; // fewer distinct points than k
        }
        let mut target = rng.next_f64() * total;
        let mut pick = n - 1;
        for (i, w) in nearest.iter().enumerate() {
            if target < *w {
                pick = i;
                break;
            }
            target -= w;
        }
        let c = row(pick).to_vec();
        for (i, nd) in nearest.iter_mut().enumerate() {
            *nd = nd.min(dist2(row(i), &c));
        }
        centroids.push(c);
    }
    let k = centroids.len();
    let mut assignment = vec![0u32; n];
    let mut iterations = 0;
    for it in 0..100 {
        iterations = it + 1;
        let new: Vec<u32> = (0..n)
            .into_par_iter()
            .with_min_len(CHUNK)
            .map(|i| {
                let p = row(i);
                let mut best = (f64::INFINITY, 0u32);
                for (c, cen) in centroids.iter().enumerate() {
                    let dd = dist2(p, cen);
                    if dd < best.0 {
                        best = (dd, c as u32);
                    }
                }
                best.1
            })
            .collect();
        let changed = new != assignment;
        assignment = new;
        // Centroids: chunked partial sums combined in order (deterministic).
        let partial: Vec<(Vec<f64>, Vec<usize>)> = (0..n.div_ceil(CHUNK))
            .into_par_iter()
            .map(|ch| {
                let mut sums = vec![0.0; k * d];
                let mut counts = vec![0usize; k];
                let end = ((ch + 1) * CHUNK).min(n);
                for (i, &a) in assignment.iter().enumerate().take(end).skip(ch * CHUNK) {
                    let c = a as usize;
                    counts[c] += 1;
                    for (s, v) in sums[c * d..(c + 1) * d].iter_mut().zip(row(i)) {
                        *s += v;
                    }
                }
                (sums, counts)
            })
            .collect();
        let mut sums = vec![0.0; k * d];
        let mut counts = vec![0usize; k];
        for (s, c) in partial {
            for (a, b) in sums.iter_mut().zip(s) {
                *a += b;
            }
            for (a, b) in counts.iter_mut().zip(c) {
                *a += b;
            }
        }
        for c in 0..k {
            if counts[c] > 0 {
                centroids[c] = sums[c * d..(c + 1) * d]
                    .iter()
                    .map(|s| s / counts[c] as f64)
                    .collect();
            }
        }
        if !changed && it > 0 {
            break;
        }
    }
    // Renumber: largest cluster first, ties by the lowest thread index.
    let mut sizes = vec![0usize; k];
    let mut first = vec![usize::MAX; k];
    for (i, &c) in assignment.iter().enumerate() {
        sizes[c as usize] += 1;
        first[c as usize] = first[c as usize].min(i);
    }
    let mut order: Vec<usize> = (0..k).filter(|&c| sizes[c] > 0).collect();
    order.sort_by(|&a, &b| sizes[b].cmp(&sizes[a]).then(first[a].cmp(&first[b])));
    let mut relabel = vec![0u32; k];
    for (new, &old) in order.iter().enumerate() {
        relabel[old] = new as u32;
    }
    Clustering {
        assignment: assignment.iter().map(|&c| relabel[c as usize]).collect(),
        sizes: order.iter().map(|&c| sizes[c]).collect(),
        centroids: order.iter().map(|&c| centroids[c].clone()).collect(),
        features: feats,
        iterations,
    }
}

/// Threads grouped by cluster (largest cluster first), by id within a cluster.
pub fn cluster_order(c: &Clustering) -> Vec<ThreadIndex> {
    let mut v: Vec<(u32, usize)> = c.assignment.iter().enumerate().map(|(i, &k)| (k, i)).collect();
    v.sort_unstable();
    v.into_iter().map(|(_, i)| ThreadIndex::from(i)).collect()
}

/// For each cluster, the threads with the smallest, the median and the largest total time (the
/// thread's top-level inclusive value in metric `m`): at most 3 per cluster, cluster by cluster.
pub fn representatives(profile: &Profile, c: &Clustering, m: MetricId) -> Vec<ThreadIndex> {
    let totals = thread_totals(profile, m);
    let mut out = Vec::new();
    for k in 0..c.sizes.len() {
        let mut members: Vec<(f64, usize)> = c
            .assignment
            .iter()
            .enumerate()
            .filter(|(_, a)| **a as usize == k)
            .map(|(i, _)| (totals[i].inclusive, i))
            .collect();
        members.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let picks = [0, members.len() / 2, members.len().saturating_sub(1)];
        let mut seen = Vec::new();
        for p in picks {
            if let Some(&(_, i)) = members.get(p)
                && !seen.contains(&i)
            {
                seen.push(i);
                out.push(ThreadIndex::from(i));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use perfscape_model::{Metric, ProfileBuilder, ThreadData, ThreadId};

    /// Two behaviours: threads 0..50 compute-heavy, 50..80 communication-heavy.
    fn two_groups() -> Profile {
        let mut b = ProfileBuilder::new(vec![Metric::tau("TIME")]);
        for t in 0..80u32 {
            let mut d = ThreadData::new(1);
            let (comp, comm) = if t < 50 {
                (100.0 + t as f64, 10.0)
            } else {
                (20.0, 90.0 + t as f64)
            };
            d.push_timer("compute", "G", 1.0, 0.0, &[comp], &[comp]).unwrap();
            d.push_timer("MPI_Wait()", "MPI", 1.0, 0.0, &[comm], &[comm])
                .unwrap();
            if t % 7 == 0 {
                d.push_timer("io", "IO", 1.0, 0.0, &[1.0], &[1.0]).unwrap();
            }
            b.add_thread(ThreadId::new(t, 0, 0), d).unwrap();
        }
        b.finish().0
    }

    #[test]
    fn finds_the_two_behaviours_deterministically() {
        let p = two_groups();
        let c = cluster_threads(&p, MetricId(0), ValueKind::Exclusive, 2, 8);
        assert_eq!(c.sizes, vec![50, 30]);
        assert!(c.assignment[..50].iter().all(|&a| a == 0));
        assert!(c.assignment[50..].iter().all(|&a| a == 1));
        let again = cluster_threads(&p, MetricId(0), ValueKind::Exclusive, 2, 8);
        assert_eq!(c, again);
        let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let serial = one.install(|| cluster_threads(&p, MetricId(0), ValueKind::Exclusive, 2, 8));
        assert_eq!(c, serial);
        let order = cluster_order(&c);
        assert_eq!(order[0], ThreadIndex(0));
        assert_eq!(order[50], ThreadIndex(50));
        let reps = representatives(&p, &c, MetricId(0));
        assert_eq!(reps.len(), 6);
        assert_eq!(reps[0], ThreadIndex(0)); // smallest total of cluster 0
        assert_eq!(reps[2], ThreadIndex(49)); // largest total of cluster 0
    }

    #[test]
    fn orders_by_value_with_missing_threads_last() {
        let p = two_groups();
        let io = p.event_by_name("io").unwrap();
        let o = order_by_value(&p, io, ValueKind::Exclusive, MetricId(0));
        assert_eq!(o.len(), 80);
        assert_eq!(o[0], ThreadIndex(0)); // all io values equal: id order
        assert_eq!(o[11], ThreadIndex(77));
        assert_eq!(o[12], ThreadIndex(1)); // first thread without io
        let comm = p.event_by_name("MPI_Wait()").unwrap();
        assert_eq!(
            order_by_value(&p, comm, ValueKind::Exclusive, MetricId(0))[0],
            ThreadIndex(79)
        );
    }

    #[test]
    fn more_clusters_than_distinct_points() {
        let p = two_groups();
        let c = cluster_threads(&p, MetricId(0), ValueKind::Calls, 5, 8);
        // All threads have identical calls except io presence: at most 2 distinct vectors.
        assert!(c.sizes.len() <= 2);
        assert_eq!(c.sizes.iter().sum::<usize>(), 80);
    }
}
