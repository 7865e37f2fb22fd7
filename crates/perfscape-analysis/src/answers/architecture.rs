//! The architecture view (`/api/architecture`): the processes of the run as nodes, each with the
//! time of its threads per category (drawn as a donut), and the channels between them as edges
//! (messages and bytes sent), in the spirit of the FPGA paper among perfscape's sources (its
//! Fig. 2: the application's processes and streams with their states). Up to
//! [`MAX_PROCESSES`] processes are drawn one by one; more are grouped, by host when the run
//! records hosts (`Hostname`, `Node Name` metadata) and there are at most that many, else into
//! blocks of consecutive ranks.

use super::categories::CategoryJson;
use perfscape_model::{Profile, ThreadIndex};
use serde::Serialize;
use std::collections::BTreeMap;

/// Most nodes drawn: beyond, processes are grouped.
pub const MAX_PROCESSES: usize = 64;

/// Messages from one rank to another, summed over a run (the input of [`architecture`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RankChannel {
    /// Sending rank (node id).
    pub sender: u32,
    /// Receiving rank.
    pub receiver: u32,
    /// Messages sent.
    pub messages: f64,
    /// Bytes sent.
    pub bytes: f64,
    /// Smallest message (bytes).
    pub min_bytes: f64,
    /// Largest message (bytes).
    pub max_bytes: f64,
}

/// One node of the view: a process, or a group of processes.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ArchProcess {
    /// Index in `processes` (edges refer to it).
    pub id: u32,
    /// `rank 3`, `ranks 0–63` or a host name.
    pub label: String,
    /// Lowest and highest rank in it.
    pub first_rank: u32,
    /// Highest rank in it.
    pub last_rank: u32,
    /// Processes in it.
    pub ranks: u32,
    /// Threads in it.
    pub threads: u32,
    /// Time of its threads per category, in the order of [`ArchitectureResponse::categories`]
    /// (the metric's unit).
    pub categories: Vec<f64>,
    /// Their sum.
    pub total: f64,
    /// Bytes it sent to other nodes.
    pub bytes_sent: f64,
    /// Bytes it received from other nodes.
    pub bytes_received: f64,
}

/// One edge: what one node sent to another.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ArchChannel {
    /// Sending node (index into `processes`).
    pub from: u32,
    /// Receiving node.
    pub to: u32,
    /// Messages.
    pub messages: f64,
    /// Bytes.
    pub bytes: f64,
    /// Mean message size (bytes).
    pub mean_bytes: f64,
    /// Smallest message (bytes).
    pub min_bytes: f64,
    /// Largest message (bytes).
    pub max_bytes: f64,
}

/// `GET /api/architecture`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ArchitectureResponse {
    /// `rank` (one node per process), `host` or `rank block`.
    pub grouped_by: String,
    /// Processes in the run.
    pub processes_all: u32,
    /// The categories (name, class, useful), in the order of each process's times.
    pub categories: Vec<CategoryJson>,
    /// Unit of the category times.
    pub unit: String,
    /// The nodes.
    pub processes: Vec<ArchProcess>,
    /// The edges, largest first; messages within a group are in `within_bytes`.
    pub channels: Vec<ArchChannel>,
    /// Bytes sent within a node (between processes of one group, or by a rank to itself): not
    /// drawn as edges.
    pub within_bytes: f64,
}

/// The architecture view of `profile`.
///
/// `category_time` is thread-major: `category_time[t * categories.len() + c]` is thread `t`'s
/// time in category `c` (in `unit`); `channels` the rank-to-rank messages. Ranks are the threads'
/// node ids.
pub fn architecture(
    profile: &Profile,
    categories: Vec<CategoryJson>,
    unit: String,
    category_time: &[f64],
    channels: &[RankChannel],
) -> ArchitectureResponse {
    let nc = categories.len();
    let threads = profile.threads();
    let ranks: Vec<u32> = {
        let mut r: Vec<u32> = threads.iter().map(|t| t.node).collect();
        r.sort_unstable();
        r.dedup();
        r
    };
    let (grouped_by, group_of) = groups(profile, &ranks);
    let n_groups = group_of.values().copied().max().map_or(0, |g| g + 1);
    let mut processes: Vec<ArchProcess> = (0..n_groups)
        .map(|g| ArchProcess {
            id: g as u32,
            label: String::new(),
            first_rank: u32::MAX,
            last_rank: 0,
            ranks: 0,
            threads: 0,
            categories: vec![0.0; nc],
            total: 0.0,
            bytes_sent: 0.0,
            bytes_received: 0.0,
        })
        .collect();
    for &r in &ranks {
        let p = &mut processes[group_of[&r]];
        p.first_rank = p.first_rank.min(r);
        p.last_rank = p.last_rank.max(r);
        p.ranks += 1;
    }
    for (t, id) in threads.iter().enumerate() {
        let p = &mut processes[group_of[&id.node]];
        p.threads += 1;
        if let Some(row) = category_time.get(t * nc..(t + 1) * nc) {
            for (c, v) in row.iter().enumerate() {
                if !v.is_nan() {
                    p.categories[c] += v;
                }
            }
        }
    }
    let host_names: BTreeMap<usize, String> = if grouped_by == "host" {
        threads
            .iter()
            .enumerate()
            .filter_map(|(t, id)| {
                Some((
                    group_of[&id.node],
                    host(profile, ThreadIndex::from(t))?.to_string(),
                ))
            })
            .collect()
    } else {
        BTreeMap::new()
    };
    for p in &mut processes {
        p.total = p.categories.iter().sum();
        p.label = match host_names.get(&(p.id as usize)) {
            Some(h) => h.clone(),
            None if p.ranks == 1 => format!("rank {}", p.first_rank),
            None => format!("ranks {}–{}", p.first_rank, p.last_rank),
        };
    }
    let mut edges: BTreeMap<(usize, usize), ArchChannel> = BTreeMap::new();
    let mut within_bytes = 0.0;
    for c in channels {
        let (Some(&a), Some(&b)) = (group_of.get(&c.sender), group_of.get(&c.receiver)) else {
            continue;
        };
        processes[a].bytes_sent += c.bytes;
        processes[b].bytes_received += c.bytes;
        if a == b {
            within_bytes += c.bytes;
            continue;
        }
        let e = edges.entry((a, b)).or_insert(ArchChannel {
            from: a as u32,
            to: b as u32,
            messages: 0.0,
            bytes: 0.0,
            mean_bytes: 0.0,
            min_bytes: f64::INFINITY,
            max_bytes: 0.0,
        });
        e.messages += c.messages;
        e.bytes += c.bytes;
        e.min_bytes = e.min_bytes.min(c.min_bytes);
        e.max_bytes = e.max_bytes.max(c.max_bytes);
    }
    let mut channels: Vec<ArchChannel> = edges
        .into_values()
        .map(|mut e| {
            e.mean_bytes = if e.messages > 0.0 {
                e.bytes / e.messages
            } else {
                0.0
            };
            if !e.min_bytes.is_finite() {
                e.min_bytes = 0.0;
            }
            e
        })
        .collect();
    channels.sort_by(|a, b| crate::stats::larger_first(a.bytes, b.bytes));
    ArchitectureResponse {
        grouped_by: grouped_by.to_string(),
        processes_all: ranks.len() as u32,
        categories,
        unit,
        processes,
        channels,
        within_bytes,
    }
}

/// The host a thread ran on, from its metadata.
fn host(profile: &Profile, t: ThreadIndex) -> Option<&str> {
    ["Hostname", "Node Name", "hostname", "host"]
        .iter()
        .find_map(|k| profile.metadata().get(t, k))
}

/// How ranks are grouped and each rank's group (0-based, in rank order).
fn groups(profile: &Profile, ranks: &[u32]) -> (&'static str, BTreeMap<u32, usize>) {
    if ranks.len() <= MAX_PROCESSES {
        return ("rank", ranks.iter().enumerate().map(|(i, &r)| (r, i)).collect());
    }
    // Hosts, in the order of their first rank.
    let mut host_of: BTreeMap<u32, &str> = BTreeMap::new();
    for (t, id) in profile.threads().iter().enumerate() {
        if let Some(h) = host(profile, ThreadIndex::from(t)) {
            host_of.entry(id.node).or_insert(h);
        }
    }
    if host_of.len() == ranks.len() {
        let mut order: Vec<&str> = Vec::new();
        for &r in ranks {
            if !order.contains(&host_of[&r]) {
                order.push(host_of[&r]);
            }
        }
        if order.len() > 1 && order.len() <= MAX_PROCESSES {
            let index: BTreeMap<&str, usize> = order.iter().enumerate().map(|(i, h)| (*h, i)).collect();
            return ("host", ranks.iter().map(|r| (*r, index[host_of[r]])).collect());
        }
    }
    let per = ranks.len().div_ceil(MAX_PROCESSES);
    (
        "rank block",
        ranks.iter().enumerate().map(|(i, &r)| (r, i / per)).collect(),
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use perfscape_model::{Metric, ProfileBuilder, ThreadData, ThreadId};

    fn run(ranks: u32) -> Profile {
        let mut b = ProfileBuilder::new(vec![Metric::tau("TIME")]);
        for rank in 0..ranks {
            let mut d = ThreadData::new(1);
            d.push_timer("main", "TAU_DEFAULT", 1.0, 0.0, &[1.0], &[1.0])
                .unwrap();
            b.add_thread(ThreadId::new(rank, 0, 0), d).unwrap();
        }
        b.finish().0
    }

    fn cats(names: &[&str]) -> Vec<CategoryJson> {
        names
            .iter()
            .map(|n| CategoryJson {
                name: (*n).into(),
                class: crate::categories::CategoryClass::Computation,
                useful: true,
            })
            .collect()
    }

    fn ring(ranks: u32) -> Vec<RankChannel> {
        (0..ranks)
            .map(|r| RankChannel {
                sender: r,
                receiver: (r + 1) % ranks,
                messages: 10.0,
                bytes: 1000.0 * f64::from(r + 1),
                min_bytes: 50.0,
                max_bytes: 200.0 * f64::from(r + 1),
            })
            .collect()
    }

    #[test]
    fn a_ring_of_four_ranks_is_drawn_rank_by_rank() {
        let p = run(4);
        let times: Vec<f64> = (0..4).flat_map(|t| [f64::from(t), 1.0]).collect();
        let a = architecture(
            &p,
            cats(&["computation", "communication"]),
            "µs".into(),
            &times,
            &ring(4),
        );
        assert_eq!(a.grouped_by, "rank");
        assert_eq!(a.processes.len(), 4);
        assert_eq!(a.processes[3].categories, vec![3.0, 1.0]);
        assert_eq!(a.processes[2].label, "rank 2");
        assert_eq!(a.channels.len(), 4);
        // Largest first: rank 3 -> 0 sent 4,000 bytes in 10 messages.
        let c = &a.channels[0];
        assert_eq!(
            (c.from, c.to, c.bytes, c.mean_bytes, c.max_bytes),
            (3, 0, 4000.0, 400.0, 800.0)
        );
        assert_eq!(a.processes[0].bytes_received, 4000.0);
        assert_eq!(a.within_bytes, 0.0);
    }

    #[test]
    fn more_ranks_than_drawn_are_grouped_in_blocks() {
        let p = run(200);
        let a = architecture(&p, cats(&["x"]), "µs".into(), &vec![1.0; 200], &ring(200));
        assert_eq!(a.grouped_by, "rank block");
        // 200 ranks in blocks of 4: 50 groups.
        assert_eq!(a.processes.len(), 50);
        assert_eq!(a.processes[1].label, "ranks 4–7");
        assert_eq!(a.processes[1].categories, vec![4.0]);
        // Within a block: ranks 4->5, 5->6, 6->7 of block 1 (and so on) are not edges.
        assert_eq!(a.channels.len(), 50);
        let total: f64 = ring(200).iter().map(|c| c.bytes).sum();
        let drawn: f64 = a.channels.iter().map(|c| c.bytes).sum();
        assert_eq!(drawn + a.within_bytes, total);
    }
}
