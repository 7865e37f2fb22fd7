//! The timeline of a real trace (TAU's np4 stencil trace converted to Chrome JSON): lanes
//! equal the trace's intervals, the screen-resolution reduction keeps every interval visible,
//! and the merged timeline of flagged events counts the threads inside them.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use perfscape_analysis::answers::{TimelineResponse, TraceIndex};
use perfscape_formats::OpenOptions;
use perfscape_model::Profile;
use perfscape_server::endpoints::timeline;
use perfscape_server::request::TimelineRequest;
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn trace_file() -> PathBuf {
    let p = std::env::var_os("PERFSCAPE_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"));
    p.join("tau-real/mpi-stencil-np4-trace/trace.chrome.json")
}

/// The timeline endpoint for `q`.
fn at(
    st: &TraceIndex,
    p: Option<&Profile>,
    q: &TimelineRequest,
) -> Result<TimelineResponse, perfscape_server::ApiError> {
    timeline::get(Some(st), p, q)
}

fn load() -> (Arc<perfscape_model::Trace>, perfscape_formats::Opened) {
    let mut opened = perfscape_formats::open(&trace_file(), &OpenOptions::default()).unwrap();
    let trace = opened.trace.take().unwrap();
    (Arc::new(trace), opened)
}

fn q(w: u32) -> TimelineRequest {
    TimelineRequest {
        w: Some(w),
        depth: Some(1024),
        l1: Some(512),
        ..Default::default()
    }
}

#[test]
fn every_interval_is_in_a_slice_at_any_resolution() {
    let (trace, loaded) = load();
    let st = TraceIndex::new(trace.clone());
    assert_eq!(trace.threads().len(), 4);
    for w in [10, 300, 1200, 8192] {
        let r = at(&st, Some(&loaded.profile), &q(w)).unwrap();
        assert_eq!(r.lane_count, 4);
        assert_eq!(r.lanes.len(), 4);
        for (l, lane) in r.lanes.iter().enumerate() {
            let raw = trace.lane(l);
            let total: u32 = lane.merged.iter().sum();
            assert_eq!(
                total as usize,
                raw.len(),
                "lane {l} at {w} px: every interval once"
            );
            // A slice of one interval is that interval (times relative to the first event).
            let origin = r.origin_ns;
            for i in 0..lane.start.len() {
                if lane.merged[i] == 1 {
                    let found = (0..raw.len()).any(|k| {
                        raw.start_ns()[k] as f64 - origin == lane.start[i]
                            && raw.end_ns()[k] as f64 - origin == lane.end[i]
                            && raw.depth()[k] == lane.depth[i]
                    });
                    assert!(found, "lane {l} slice {i} is an interval of the trace");
                }
            }
            // Bounded by the resolution: about two boxes per pixel and depth at most.
            assert!(lane.start.len() <= 2 * w as usize * (lane.depths as usize) + lane.depths as usize);
        }
    }
    // At a coarse resolution the many short intervals are merged.
    let coarse = at(&st, Some(&loaded.profile), &q(10)).unwrap();
    assert!(coarse.lanes.iter().any(|l| l.merged.iter().any(|&m| m > 1)));
}

#[test]
fn a_zoomed_window_holds_only_what_overlaps_it() {
    let (trace, loaded) = load();
    let st = TraceIndex::new(trace);
    let full = at(&st, Some(&loaded.profile), &q(1000)).unwrap();
    let (a, b) = (full.duration_ns * 0.9, full.duration_ns * 0.92);
    let r = at(
        &st,
        Some(&loaded.profile),
        &TimelineRequest {
            from_ns: Some(a),
            to_ns: Some(b),
            ..q(1000)
        },
    )
    .unwrap();
    assert_eq!((r.from_ns, r.to_ns), (a, b));
    let mut n = 0;
    for lane in &r.lanes {
        for i in 0..lane.start.len() {
            assert!(lane.end[i] >= a.floor() && lane.start[i] <= b.ceil());
            n += 1;
        }
    }
    assert!(n > 0);
}

#[test]
fn the_merged_timeline_counts_threads_inside_the_flagged_event() {
    let (trace, loaded) = load();
    let st = TraceIndex::new(trace.clone());
    for name in ["MPI_Init()", "MPI_Allreduce()", "MPI_Waitall()"] {
        let id = loaded.profile.event_by_name(name).unwrap();
        let w = 2000;
        let r = at(
            &st,
            Some(&loaded.profile),
            &TimelineRequest {
                flag: Some(id.0.to_string().parse().unwrap()),
                ..q(w)
            },
        )
        .unwrap();
        assert_eq!(r.flagged, vec![name.to_string()]);
        assert_eq!(r.occupancy.len(), w as usize);
        assert!(r.occupancy.iter().all(|&v| (0.0..=4.0 + 1e-9).contains(&v)));
        // The area under the strip is the threads' total time in the event (these events do
        // not nest in themselves), computed here from the raw intervals.
        let px = (r.to_ns.ceil() - r.from_ns.floor()) / f64::from(w);
        let area: f64 = r.occupancy.iter().sum::<f64>() * px;
        let mut total = 0.0;
        for l in trace.lanes() {
            for k in 0..l.len() {
                if trace.names()[l.name()[k] as usize].trim() == name {
                    total += (l.end_ns()[k] - l.start_ns()[k]) as f64;
                }
            }
        }
        assert!((area - total).abs() <= 1e-6 * total, "{name}: {area} vs {total}");
        // ... which is the profile's inclusive time of the event summed over threads (µs).
        let incl: f64 = loaded
            .profile
            .interval(id)
            .inclusive(perfscape_model::MetricId(0))
            .iter()
            .sum();
        assert!(
            (incl * 1000.0 - total).abs() <= 1e-6 * total,
            "{name}: profile {incl} µs"
        );
    }
}

#[test]
fn bad_windows_and_flags_are_refused() {
    let (trace, loaded) = load();
    let st = TraceIndex::new(trace);
    let bad = |v: TimelineRequest| at(&st, Some(&loaded.profile), &v).unwrap_err().status;
    assert_eq!(
        bad(TimelineRequest {
            from_ns: Some(10.0),
            to_ns: Some(5.0),
            ..q(100)
        }),
        400
    );
    assert_eq!(
        bad(TimelineRequest {
            to_ns: Some(f64::NAN),
            ..q(100)
        }),
        400
    );
    assert_eq!(
        perfscape_server::request::parse_query::<TimelineRequest>("flag=x")
            .unwrap_err()
            .status,
        400
    );
    assert_eq!(
        bad(TimelineRequest {
            flag: Some("99999".parse().unwrap()),
            ..q(100)
        }),
        404
    );
    assert_eq!(
        timeline::get(None, Some(&loaded.profile), &q(100))
            .unwrap_err()
            .status,
        400
    );
}
