//! Timeline views of a [`Trace`]: the intervals of each thread's lane visible in a time window,
//! reduced to screen resolution, and the seed's single merged timeline of flagged events.
//!
//! # Reduction
//! A window `[from_ns, to_ns]` drawn `width_px` pixels wide gives `ns_per_px =
//! (to_ns - from_ns) / width_px`. At each nesting depth, intervals at least one pixel long are
//! returned as they are; runs of shorter ones whose gaps are under a pixel are merged into one
//! [`Slice`] with `merged` > 1 (named after its longest member), so a lane never returns more
//! than about `2 × width_px` slices per depth, whatever the trace holds (Perfetto and
//! Chrome's trace viewer draw such runs as one box too).
//!
//! # Merged timeline of flagged events
//! For a set of flagged event names, [`flagged_occupancy`] gives per pixel the number of
//! threads inside a flagged interval, averaged over the pixel's time (union per thread, so
//! nested or recursive intervals count once): 0 = no thread, `n` = all `n` threads for the
//! whole pixel. One strip shows where in time all threads are, e.g., in MPI.
//!
//! Lookups use a [`LaneIndex`] per lane: the intervals of each depth sorted by start with the
//! depth's longest duration, so a window costs `O(depths × (log n + k))` for `k` visible
//! intervals instead of a scan of the lane.

use perfscape_model::{IntervalLane, Trace};

/// A time window drawn `width_px` pixels wide; times in nanoseconds on the trace's clock.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Window {
    /// Start of the window (ns).
    pub from_ns: i64,
    /// End of the window (ns, `>= from_ns`).
    pub to_ns: i64,
    /// Width in pixels (at least 1).
    pub width_px: usize,
}

impl Window {
    /// Nanoseconds per pixel (at least 1e-9 so that a zero-length window still divides).
    pub fn ns_per_px(&self) -> f64 {
        (offset_ns(self.to_ns, self.from_ns) / self.width_px.max(1) as f64).max(1e-9)
    }
}

/// `t - from` in ns as `f64`, computed in `i128`: exact up to `f64`'s precision for any two
/// `i64` clock values (their difference may not fit an `i64`).
pub(crate) fn offset_ns(t: i64, from: i64) -> f64 {
    (i128::from(t) - i128::from(from)) as f64
}

/// One box of a lane: an interval, or a run of intervals shorter than a pixel merged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slice {
    /// Start (ns).
    pub start_ns: i64,
    /// End (ns).
    pub end_ns: i64,
    /// Nesting depth (0 = top level).
    pub depth: u32,
    /// Name (index into [`Trace::names`]); for a merged run, its longest member's name.
    pub name: u32,
    /// Intervals in this box (1 = a single interval).
    pub merged: u32,
}

/// Per-lane index: rows of each depth sorted by start, with the depth's longest duration.
#[derive(Clone, Debug, Default)]
pub struct LaneIndex {
    by_depth: Vec<Vec<u32>>,
    max_dur: Vec<i64>,
}

impl LaneIndex {
    /// Builds the index of `lane` (`O(n)`; rows are already sorted by start).
    pub fn new(lane: &IntervalLane) -> Self {
        let mut by_depth: Vec<Vec<u32>> = Vec::new();
        let mut max_dur: Vec<i64> = Vec::new();
        for (i, (&d, (&s, &e))) in lane
            .depth()
            .iter()
            .zip(lane.start_ns().iter().zip(lane.end_ns()))
            .enumerate()
        {
            let d = d as usize;
            if by_depth.len() <= d {
                by_depth.resize_with(d + 1, Vec::new);
                max_dur.resize(d + 1, 0);
            }
            by_depth[d].push(u32::try_from(i).unwrap_or(u32::MAX));
            max_dur[d] = max_dur[d].max(e - s);
        }
        Self { by_depth, max_dur }
    }

    /// Number of depths (the deepest nesting + 1; 0 for an empty lane).
    pub fn depths(&self) -> usize {
        self.by_depth.len()
    }

    /// Rows at `depth` overlapping `[from_ns, to_ns]`, in start order.
    fn visible<'a>(
        &'a self,
        lane: &'a IntervalLane,
        depth: usize,
        from_ns: i64,
        to_ns: i64,
    ) -> impl Iterator<Item = usize> + 'a {
        let rows = self.by_depth.get(depth).map_or(&[][..], |v| v.as_slice());
        let reach = from_ns.saturating_sub(self.max_dur.get(depth).copied().unwrap_or(0));
        let starts = lane.start_ns();
        let lo = rows.partition_point(|&r| starts[r as usize] < reach);
        let hi = rows.partition_point(|&r| starts[r as usize] <= to_ns);
        let ends = lane.end_ns();
        rows[lo..hi.max(lo)]
            .iter()
            .map(|&r| r as usize)
            .filter(move |&r| ends[r] >= from_ns)
    }
}

/// The slices of `lane` in window `w`, depths `0..max_depth`, reduced to screen resolution
/// (see the module documentation), ordered by depth then start.
pub fn lane_slices(lane: &IntervalLane, index: &LaneIndex, w: &Window, max_depth: usize) -> Vec<Slice> {
    let px = w.ns_per_px();
    let mut out = Vec::new();
    for depth in 0..index.depths().min(max_depth) {
        let mut pending: Option<(Slice, i64)> = None; // (box, longest member's duration)
        for r in index.visible(lane, depth, w.from_ns, w.to_ns) {
            let (s, e) = (lane.start_ns()[r], lane.end_ns()[r]);
            let one = Slice {
                start_ns: s,
                end_ns: e,
                depth: depth as u32,
                name: lane.name()[r],
                merged: 1,
            };
            if (e - s) as f64 >= px {
                if let Some((b, _)) = pending.take() {
                    out.push(b);
                }
                out.push(one);
                continue;
            }
            pending = match pending {
                Some((mut b, longest)) if ((s - b.end_ns) as f64) < px => {
                    b.end_ns = b.end_ns.max(e);
                    b.merged += 1;
                    if e - s > longest {
                        b.name = one.name;
                        Some((b, e - s))
                    } else {
                        Some((b, longest))
                    }
                }
                Some((b, _)) => {
                    out.push(b);
                    Some((one, e - s))
                }
                None => Some((one, e - s)),
            };
        }
        if let Some((b, _)) = pending {
            out.push(b);
        }
    }
    out
}

/// The merged timeline of flagged events: per pixel of `w`, the number of threads inside an
/// interval whose name is flagged (`flagged[name]`), averaged over the pixel's time. Each
/// thread's flagged intervals are united first (nested ones count once). `indices` parallels
/// [`Trace::lanes`].
pub fn flagged_occupancy(trace: &Trace, indices: &[LaneIndex], flagged: &[bool], w: &Window) -> Vec<f64> {
    let width = w.width_px.max(1);
    let px = w.ns_per_px();
    let mut occ = vec![0.0; width];
    let is_flagged = |n: u32| flagged.get(n as usize).copied().unwrap_or(false);
    for (lane, index) in trace.lanes().iter().zip(indices) {
        // Flagged intervals overlapping the window, clipped, in start order.
        let mut segs: Vec<(i64, i64)> = Vec::new();
        for depth in 0..index.depths() {
            for r in index.visible(lane, depth, w.from_ns, w.to_ns) {
                if is_flagged(lane.name()[r]) {
                    segs.push((lane.start_ns()[r].max(w.from_ns), lane.end_ns()[r].min(w.to_ns)));
                }
            }
        }
        segs.sort_unstable();
        // Union, then spread each segment over the pixels it covers.
        let mut cur: Option<(i64, i64)> = None;
        let mut add = |a: i64, b: i64| {
            let x0 = offset_ns(a, w.from_ns) / px;
            let x1 = offset_ns(b, w.from_ns) / px;
            let (i0, i1) = (x0.floor().max(0.0) as usize, (x1.ceil() as usize).min(width));
            for (i, slot) in occ.iter_mut().enumerate().take(i1).skip(i0) {
                let lo = x0.max(i as f64);
                let hi = x1.min(i as f64 + 1.0);
                if hi > lo {
                    *slot += hi - lo;
                }
            }
        };
        for (a, b) in segs {
            match cur {
                Some((ca, cb)) if a <= cb => cur = Some((ca, cb.max(b))),
                Some((ca, cb)) => {
                    add(ca, cb);
                    cur = Some((a, b));
                }
                None => cur = Some((a, b)),
            }
        }
        if let Some((a, b)) = cur {
            add(a, b);
        }
    }
    occ
}

/// The summary strip over all lanes: per pixel column of `w`, the number of intervals (any
/// depth, every lane) that start in it — where the trace is busiest, whatever the number of
/// lanes. `indices` parallels [`Trace::lanes`].
pub fn activity(trace: &Trace, indices: &[LaneIndex], w: &Window) -> Vec<u32> {
    let width = w.width_px.max(1);
    let px = w.ns_per_px();
    let mut out = vec![0u32; width];
    for (lane, index) in trace.lanes().iter().zip(indices) {
        for depth in 0..index.depths() {
            for r in index.visible(lane, depth, w.from_ns, w.to_ns) {
                let s = lane.start_ns()[r];
                if s < w.from_ns {
                    continue;
                }
                let c = ((offset_ns(s, w.from_ns) / px) as usize).min(width - 1);
                out[c] = out[c].saturating_add(1);
            }
        }
    }
    out
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

    /// Thread 0: main [0, 1000] with 100 calls of `f` of 2 ns every 10 ns, and one `g`
    /// [500, 900]. Thread 1: `g` [0, 100].
    fn trace() -> Trace {
        let mut b = TraceBuilder::new();
        let t0 = b.thread(thread(0));
        let t1 = b.thread(thread(1));
        let (main, f, g) = (b.name("main"), b.name("f"), b.name("g"));
        let mut seq = 0;
        let mut add = |b: &mut TraceBuilder, t, s, e, n| {
            b.add_interval(t, s, e, n, 0, seq, seq + 1);
            seq += 2;
        };
        add(&mut b, t0, 0, 1000, main);
        for i in 0..40 {
            add(&mut b, t0, i * 10, i * 10 + 2, f);
        }
        add(&mut b, t0, 500, 900, g);
        add(&mut b, t1, 0, 100, g);
        b.finish().0
    }

    #[test]
    fn short_intervals_merge_below_a_pixel_and_stay_apart_above() {
        let t = trace();
        let lane = t.lane(0);
        let idx = LaneIndex::new(lane);
        assert_eq!(idx.depths(), 2);
        // 100 px over 1000 ns: 10 ns per pixel; the 2 ns calls 8 ns apart merge into one box.
        let w = Window {
            from_ns: 0,
            to_ns: 1000,
            width_px: 100,
        };
        let s = lane_slices(lane, &idx, &w, 16);
        let f = t.names().iter().position(|n| n == "f").unwrap() as u32;
        let boxes: Vec<&Slice> = s.iter().filter(|x| x.depth == 1).collect();
        assert_eq!(boxes.len(), 2, "{s:?}"); // the 40 calls, and g
        let run = boxes.iter().find(|x| x.name == f).unwrap();
        assert_eq!((run.start_ns, run.end_ns, run.merged), (0, 392, 40));
        // Zoomed in to 1 ns per pixel, every call in the window is its own box: those
        // starting at 0, 10, ..., 100 (the window's ends are inclusive).
        let w = Window {
            from_ns: 0,
            to_ns: 100,
            width_px: 100,
        };
        let s = lane_slices(lane, &idx, &w, 16);
        assert_eq!(s.iter().filter(|x| x.depth == 1 && x.merged == 1).count(), 11);
        assert!(s.iter().all(|x| x.end_ns >= 0 && x.start_ns <= 100));
        // max_depth cuts the nesting.
        assert!(lane_slices(lane, &idx, &w, 1).iter().all(|x| x.depth == 0));
    }

    #[test]
    fn activity_counts_interval_starts_per_pixel() {
        let t = trace();
        let idx: Vec<LaneIndex> = t.lanes().iter().map(LaneIndex::new).collect();
        let w = Window {
            from_ns: 0,
            to_ns: 1000,
            width_px: 10,
        };
        // Pixel 0 (0-99): main, f at 0..90 (10 calls) on thread 0, g on thread 1; pixels 1-3:
        // 10 calls of f each; pixel 5: g at 500.
        assert_eq!(activity(&t, &idx, &w), vec![12, 10, 10, 10, 0, 1, 0, 0, 0, 0]);
    }

    #[test]
    fn occupancy_counts_threads_inside_flagged_intervals() {
        let t = trace();
        let idx: Vec<LaneIndex> = t.lanes().iter().map(LaneIndex::new).collect();
        let g = t.names().iter().position(|n| n == "g").unwrap();
        let mut flagged = vec![false; t.names().len()];
        flagged[g] = true;
        let w = Window {
            from_ns: 0,
            to_ns: 1000,
            width_px: 10,
        };
        let occ = flagged_occupancy(&t, &idx, &flagged, &w);
        // Pixel 0 (0-100): thread 1 in g. Pixels 5..9 (500-900): thread 0 in g.
        assert_eq!(occ, vec![1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 0.0]);
        // Half a pixel covered counts half.
        let w = Window {
            from_ns: 0,
            to_ns: 200,
            width_px: 1,
        };
        assert_eq!(flagged_occupancy(&t, &idx, &flagged, &w), vec![0.5]);
    }
}
