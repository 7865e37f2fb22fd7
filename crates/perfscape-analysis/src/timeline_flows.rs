//! Message lines of a timeline and search by name: a trace's [`Flows`] visible in a time
//! window reduced to screen resolution, and the intervals whose names match a text, walked in
//! time order (next / previous) without collecting them.
//!
//! # Reducing message lines
//! A message (a flow from `(sender lane, send time)` to `(receiver lane, receive time)`) is in
//! the window `[from_ns, to_ns]` when its time span `[min(send, recv), max(send, recv)]`
//! overlaps it, and drawn when both its lanes are among the lanes asked for. Messages are
//! bucketed by (sender lane, receiver lane, pixel column of the send time, pixel column of the
//! receive time), columns clamped to `-1 ..= width` (left of the window, the window's
//! columns, right of it): all messages of a bucket would be drawn as the same line at this
//! resolution, so one [`FlowLine`] stands for them with their `count` and their mean send and
//! receive times. The number of lines is at most the number of distinct such buckets, so a
//! window of a million messages between 64 lanes never ships a million lines (Vampir and
//! Perfetto likewise draw one line per pixel bundle).
//!
//! # Search
//! [`search_slices`] orders the matching intervals of every lane by `(start, lane, row)` and
//! returns the first after (or last before) a given key, with its 1-based position among all
//! matches and their total: one pass over the lanes' name columns, `O(intervals)` time and
//! `O(names)` memory whatever the number of matches.

use crate::timeline::{Window, offset_ns};
use perfscape_model::Trace;
use perfscape_model::trace::Flows;
use std::collections::HashMap;

/// One drawn message line: a bucket of messages between two lanes (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FlowLine {
    /// Sender lane (index into [`Trace::threads`]).
    pub from_lane: u32,
    /// Receiver lane.
    pub to_lane: u32,
    /// Mean send time of the bucket's messages (ns, the trace's clock).
    pub from_ns: f64,
    /// Mean receive time (ns).
    pub to_ns: f64,
    /// Messages in the bucket (at least 1).
    pub count: u32,
}

/// The message lines of a window and what was reduced.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FlowReduction {
    /// The lines, ordered by (sender lane, receiver lane, send column, receive column).
    pub lines: Vec<FlowLine>,
    /// Messages in the window between the lanes asked for (the sum of the lines' counts).
    pub messages: u64,
    /// Messages in the window with a lane outside those asked for (not drawn).
    pub outside_lanes: u64,
}

/// A bucket of messages: (sender lane, receiver lane, send column, receive column); its
/// value is (sum of send times, sum of receive times, count).
type Bucket = (u32, u32, i64, i64);

/// The longest time span of a message of `flows` (ns; 0 without messages): how far before a
/// window a message may start and still reach into it.
pub fn longest_flow_ns(flows: &Flows) -> i64 {
    flows
        .from_ns
        .iter()
        .zip(&flows.to_ns)
        .map(|(&a, &b)| b.saturating_sub(a).saturating_abs())
        .max()
        .unwrap_or(0)
}

/// The message lines of `flows` in window `w` between lanes `lanes` (a range of lane
/// indices), reduced to pixels (see the module docs). `longest_ns` is
/// [`longest_flow_ns`]`(flows)` (computed once per trace); `flows` are sorted by send time
/// ([`Flows`]' invariant), so only the messages sent in `[from_ns - longest_ns, to_ns]` are
/// looked at.
pub fn flow_lines(flows: &Flows, longest_ns: i64, w: &Window, lanes: std::ops::Range<u32>) -> FlowReduction {
    let px = w.ns_per_px();
    let width = w.width_px.max(1) as i64;
    let col = |t: i64| -> i64 { ((offset_ns(t, w.from_ns) / px).floor() as i64).clamp(-1, width) };
    let lo = flows
        .from_ns
        .partition_point(|&t| t < w.from_ns.saturating_sub(longest_ns));
    let hi = flows
        .from_ns
        .partition_point(|&t| t <= w.to_ns.saturating_add(longest_ns));
    let mut buckets: HashMap<Bucket, (f64, f64, u32)> = HashMap::new();
    let mut out = FlowReduction::default();
    for i in lo..hi.max(lo) {
        let (s, r) = (flows.from_ns[i], flows.to_ns[i]);
        if s.min(r) > w.to_ns || s.max(r) < w.from_ns {
            continue;
        }
        let (a, b) = (flows.from_thread[i], flows.to_thread[i]);
        if !lanes.contains(&a) || !lanes.contains(&b) {
            out.outside_lanes += 1;
            continue;
        }
        out.messages += 1;
        let e = buckets.entry((a, b, col(s), col(r))).or_insert((0.0, 0.0, 0));
        // Sums relative to the window start keep the means exact for large clock values.
        e.0 += offset_ns(s, w.from_ns);
        e.1 += offset_ns(r, w.from_ns);
        e.2 += 1;
    }
    let mut keys: Vec<_> = buckets.into_iter().collect();
    keys.sort_unstable_by_key(|(k, _)| *k);
    out.lines = keys
        .into_iter()
        .map(|((a, b, _, _), (ss, sr, n))| FlowLine {
            from_lane: a,
            to_lane: b,
            from_ns: w.from_ns as f64 + ss / n as f64,
            to_ns: w.from_ns as f64 + sr / n as f64,
            count: n,
        })
        .collect();
    out
}

/// Which way [`search_slices`] walks from the current match.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// The first match after the key (wrapping to the first of all).
    Next,
    /// The last match before the key (wrapping to the last of all).
    Previous,
}

/// A match of [`search_slices`]: an interval of a lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SearchHit {
    /// Lane (index into [`Trace::threads`]).
    pub lane: u32,
    /// Row of the interval in its lane.
    pub row: u32,
    /// 1-based position among all matches in `(start, lane, row)` order.
    pub position: u64,
}

/// The matches of `matches` (one flag per trace name: does this name match) in `trace`, in
/// `(start_ns, lane, row)` order: their total and the one after (`Next`) or before
/// (`Previous`) `key`, wrapping around; with no key, the first (`Next`) or last (`Previous`)
/// match. `None` for the hit when nothing matches.
pub fn search_slices(
    trace: &Trace,
    matches: &[bool],
    key: Option<(i64, u32, u32)>,
    dir: Direction,
) -> (u64, Option<SearchHit>) {
    let mut total = 0u64;
    let mut before = 0u64; // matches with a key <= `key` (Next) or < `key` (Previous)
    let mut best: Option<(i64, u32, u32)> = None; // the candidate after/before the key
    let mut first: Option<(i64, u32, u32)> = None;
    let mut last: Option<(i64, u32, u32)> = None;
    for (l, lane) in trace.lanes().iter().enumerate() {
        for (r, (&n, &s)) in lane.name().iter().zip(lane.start_ns()).enumerate() {
            if !matches.get(n as usize).copied().unwrap_or(false) {
                continue;
            }
            let k = (s, l as u32, r as u32);
            total += 1;
            first = Some(first.map_or(k, |f| f.min(k)));
            last = Some(last.map_or(k, |f| f.max(k)));
            if let Some(key) = key {
                match dir {
                    Direction::Next if k <= key => before += 1,
                    Direction::Next => best = Some(best.map_or(k, |b| b.min(k))),
                    Direction::Previous if k < key => {
                        before += 1;
                        best = Some(best.map_or(k, |b| b.max(k)));
                    }
                    Direction::Previous => {}
                }
            }
        }
    }
    let (hit, position) = match (dir, key, best) {
        (_, None, _) | (_, Some(_), None) => match dir {
            Direction::Next => (first, 1),
            Direction::Previous => (last, total),
        },
        (Direction::Next, Some(_), Some(b)) => (Some(b), before + 1),
        (Direction::Previous, Some(_), Some(b)) => (Some(b), before),
    };
    (total, hit.map(|(_, lane, row)| SearchHit { lane, row, position }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use perfscape_model::{ThreadId, TraceBuilder, TraceThread};

    fn thread(n: u32) -> TraceThread {
        TraceThread {
            id: ThreadId::new(n, 0, 0),
            process: n.to_string(),
            thread: "0".into(),
            process_name: None,
            thread_name: None,
        }
    }

    /// A small pseudo-random generator (xorshift) so the test needs no crate.
    fn rng(seed: &mut u64) -> u64 {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    }

    /// `n` messages between `lanes` lanes over `[0, span)` with latencies up to 5,000 ns.
    fn flows(n: usize, lanes: u32, span: i64, seed: u64) -> Flows {
        let mut s = seed;
        let mut v: Vec<(u32, i64, u32, i64)> = (0..n)
            .map(|_| {
                let a = (rng(&mut s) % lanes as u64) as u32;
                let b = (rng(&mut s) % lanes as u64) as u32;
                let t = (rng(&mut s) % span as u64) as i64;
                let lat = (rng(&mut s) % 5000) as i64;
                (a, t, b, t + lat)
            })
            .collect();
        v.sort_by_key(|x| x.1);
        make(&v)
    }

    /// Flows from `(from lane, send, to lane, receive)` tuples sorted by send (only the fields
    /// the reduction reads are filled; others stay at their defaults).
    fn make(v: &[(u32, i64, u32, i64)]) -> Flows {
        Flows {
            from_thread: v.iter().map(|x| x.0).collect(),
            from_ns: v.iter().map(|x| x.1).collect(),
            to_thread: v.iter().map(|x| x.2).collect(),
            to_ns: v.iter().map(|x| x.3).collect(),
            ..Flows::default()
        }
    }

    /// Brute force: every message, its bucket by direct pixel arithmetic, no sorted search.
    fn brute(f: &Flows, w: &Window, lanes: std::ops::Range<u32>) -> (HashMap<Bucket, u32>, u64) {
        let px = (w.to_ns - w.from_ns) as f64 / w.width_px as f64;
        let mut m = HashMap::new();
        let mut outside = 0;
        for i in 0..f.from_ns.len() {
            let (s, r) = (f.from_ns[i], f.to_ns[i]);
            let in_window = !(s > w.to_ns || r < w.from_ns); // r >= s here
            if !in_window {
                continue;
            }
            if !lanes.contains(&f.from_thread[i]) || !lanes.contains(&f.to_thread[i]) {
                outside += 1;
                continue;
            }
            let c = |t: i64| (((t - w.from_ns) as f64 / px).floor() as i64).clamp(-1, w.width_px as i64);
            *m.entry((f.from_thread[i], f.to_thread[i], c(s), c(r)))
                .or_insert(0) += 1;
        }
        (m, outside)
    }

    #[test]
    fn reduced_lines_count_every_message_of_the_window_once() {
        let f = flows(20_000, 8, 10_000_000, 0x9e37_79b9_7f4a_7c15);
        let longest = longest_flow_ns(&f);
        assert!(longest > 4000 && longest < 5000);
        for (from, to, width, lanes) in [
            (0, 10_000_000, 800, 0..8),
            (2_000_000, 2_050_000, 1000, 0..8),
            (5_000_000, 6_000_000, 300, 2..6),
            (9_999_000, 12_000_000, 50, 0..8),
        ] {
            let w = Window {
                from_ns: from,
                to_ns: to,
                width_px: width,
            };
            let red = flow_lines(&f, longest, &w, lanes.clone());
            let (want, outside) = brute(&f, &w, lanes.clone());
            assert_eq!(red.outside_lanes, outside);
            assert_eq!(red.messages, want.values().map(|&c| c as u64).sum::<u64>());
            assert_eq!(red.lines.len(), want.len(), "one line per bucket");
            let px = (to - from) as f64 / width as f64;
            for l in &red.lines {
                // A line's mean times fall in its bucket's columns, and the bucket's count is
                // the brute-force count.
                let c = |t: f64| (((t - from as f64) / px).floor() as i64).clamp(-1, width as i64);
                assert_eq!(
                    want[&(l.from_lane, l.to_lane, c(l.from_ns), c(l.to_ns))],
                    l.count,
                    "{l:?}"
                );
            }
        }
        // The whole trace at 800 px: 20,000 messages between 8 × 8 lane pairs, at most
        // 64 × 802 × 802 buckets but in fact far fewer lines than messages.
        let w = Window {
            from_ns: 0,
            to_ns: 10_000_000,
            width_px: 100,
        };
        let red = flow_lines(&f, longest, &w, 0..8);
        assert_eq!(red.messages, 20_000);
        assert!(red.lines.len() < 20_000 / 2, "{}", red.lines.len());
    }

    #[test]
    fn a_message_spanning_the_window_is_drawn_and_one_outside_is_not() {
        let f = make(&[(0, 0, 1, 1000), (0, 100, 1, 150), (1, 300, 0, 310)]);
        let w = Window {
            from_ns: 400,
            to_ns: 500,
            width_px: 10,
        };
        let red = flow_lines(&f, longest_flow_ns(&f), &w, 0..2);
        assert_eq!(red.messages, 1);
        assert_eq!(
            red.lines,
            vec![FlowLine {
                from_lane: 0,
                to_lane: 1,
                from_ns: 0.0,
                to_ns: 1000.0,
                count: 1
            }]
        );
    }

    #[test]
    fn search_walks_matches_in_time_order_and_wraps() {
        let mut b = TraceBuilder::new();
        let t0 = b.thread(thread(0));
        let t1 = b.thread(thread(1));
        let (send, other) = (b.name("MPI_Send"), b.name("compute"));
        let mut seq = 0;
        // Lane 0: MPI_Send at 10 and 50; lane 1: MPI_Send at 30, compute at 20.
        for (t, s, n) in [(t0, 10, send), (t0, 50, send), (t1, 20, other), (t1, 30, send)] {
            b.add_interval(t, s, s + 5, n, 0, seq, seq + 1);
            seq += 2;
        }
        let tr = b.finish().0;
        let m: Vec<bool> = tr.names().iter().map(|n| n.contains("Send")).collect();
        let (total, hit) = search_slices(&tr, &m, None, Direction::Next);
        assert_eq!(total, 3);
        let hit = hit.unwrap();
        assert_eq!((hit.lane, hit.position), (0, 1));
        let start = |h: SearchHit| tr.lane(h.lane as usize).start_ns()[h.row as usize];
        assert_eq!(start(hit), 10);
        let key = |h: SearchHit| Some((start(h), h.lane, h.row));
        let next = search_slices(&tr, &m, key(hit), Direction::Next).1.unwrap();
        assert_eq!((start(next), next.lane, next.position), (30, 1, 2));
        let next2 = search_slices(&tr, &m, key(next), Direction::Next).1.unwrap();
        assert_eq!((start(next2), next2.position), (50, 3));
        // Past the last: back to the first.
        let wrap = search_slices(&tr, &m, key(next2), Direction::Next).1.unwrap();
        assert_eq!((start(wrap), wrap.position), (10, 1));
        // Previous of the first wraps to the last; previous of the third is the second.
        let prev = search_slices(&tr, &m, key(wrap), Direction::Previous).1.unwrap();
        assert_eq!((start(prev), prev.position), (50, 3));
        let prev2 = search_slices(&tr, &m, key(prev), Direction::Previous).1.unwrap();
        assert_eq!((start(prev2), prev2.position), (30, 2));
        // No match at all.
        let none = vec![false; tr.names().len()];
        assert_eq!(search_slices(&tr, &none, None, Direction::Next), (0, None));
    }

    /// Timestamps at the ends of `i64` (a damaged trace, or a window asked for far outside
    /// the run) give saturated pixel columns, not an arithmetic overflow.
    #[test]
    fn clock_values_at_the_ends_of_i64_do_not_overflow() {
        let f = make(&[(0, i64::MIN, 1, i64::MAX), (1, 0, 0, 10)]);
        assert_eq!(longest_flow_ns(&f), i64::MAX);
        let w = Window {
            from_ns: i64::MIN,
            to_ns: i64::MAX,
            width_px: 100,
        };
        assert!(w.ns_per_px() > 0.0);
        let r = flow_lines(&f, longest_flow_ns(&f), &w, 0..2);
        assert_eq!((r.messages, r.outside_lanes), (2, 0));
        // The message from the first to the last instant: its line starts at the window's
        // start and ends at its end (about 2^64 ns later).
        let long = r.lines.iter().find(|l| l.from_lane == 0).unwrap();
        assert_eq!(long.from_ns, i64::MIN as f64);
        assert!(long.to_ns >= i64::MAX as f64 * 0.99, "{long:?}");
    }
}
