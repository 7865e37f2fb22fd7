//! Message lines and search of the timeline on TAU's own trace of the np4 stencil (read from
//! `tautrace.*.trc` + `events.*.edf`), against TAU's `tau_convert -dump` listing of the same
//! records (`oracle/tau_convert-dump.txt`): the messages in the window are the dump's
//! `MESSAGE_SEND` records, the lines' counts add up to them at every resolution, and a search
//! for `MPI_Isend` walks the dump's `MPI_Isend()` entries in time order.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use perfscape_analysis::answers::{SearchDir, TraceIndex};
use perfscape_formats::OpenOptions;
use perfscape_server::endpoints::timeline;
use perfscape_server::request::{TimelineRequest, TimelineSearchRequest};
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn run_dir() -> PathBuf {
    let p = std::env::var_os("PERFSCAPE_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"));
    p.join("tau-real/mpi-stencil-np4-trace")
}

/// The dump's first timestamp (µs): the trace's first event, where the timeline's times start.
fn dump_first_us() -> i64 {
    let text = std::fs::read_to_string(run_dir().join("oracle/tau_convert-dump.txt")).unwrap();
    let line = text.lines().find(|l| l.contains("first timestamp:")).unwrap();
    line.rsplit(' ').next().unwrap().parse().unwrap()
}

/// Records of the dump named `event` (the second column), as (time in µs, node, parameter).
fn dump(event: &str) -> Vec<(i64, u32, i64)> {
    let text = std::fs::read_to_string(run_dir().join("oracle/tau_convert-dump.txt")).unwrap();
    let quoted = format!("\"{event}");
    text.lines()
        .filter_map(|l| {
            let (_, rest) = l.split_once('"')?;
            let (name, cols) = rest.split_once('"')?;
            if !format!("\"{name}").starts_with(&quoted) {
                return None;
            }
            let v: Vec<i64> = cols.split_whitespace().map(|c| c.parse().unwrap()).collect();
            Some((v[0], v[1] as u32, v[3]))
        })
        .collect()
}

fn index() -> TraceIndex {
    let mut opened = perfscape_formats::open(&run_dir(), &OpenOptions::default()).unwrap();
    TraceIndex::new(Arc::new(opened.trace.take().unwrap()))
}

#[test]
fn message_lines_count_every_message_of_the_dump_once() {
    let st = index();
    let sends = dump("MESSAGE_SEND").len();
    assert_eq!(sends, 360);
    let mut lines_at = Vec::new();
    for w in [50, 400, 1200, 8192] {
        let r = timeline::get(
            Some(&st),
            None,
            &TimelineRequest {
                w: Some(w),
                ..Default::default()
            },
        )
        .unwrap();
        let f = &r.flows;
        assert_eq!(f.total as usize, sends);
        assert_eq!(f.messages as usize, sends, "the whole trace at {w} px");
        assert_eq!(f.outside_lanes, 0.0);
        let sum: u32 = f.count.iter().sum();
        assert_eq!(sum as usize, sends);
        assert_eq!(f.reduced as usize, sends - f.count.len());
        // Every line joins two different ranks' lanes, sent before it is received.
        for i in 0..f.count.len() {
            assert_ne!(f.from_lane[i], f.to_lane[i]);
            assert!(f.from_ns[i] <= f.to_ns[i] + 1.0);
        }
        lines_at.push(f.count.len());
    }
    // Fewer pixels, fewer lines: at 50 px most messages share a line.
    assert!(lines_at[0] < lines_at[3], "{lines_at:?}");
    assert!(lines_at[0] < sends / 3, "{lines_at:?}");
    // A window around the first send: only the messages whose span overlaps it.
    let first = *dump("MESSAGE_SEND").iter().map(|(t, _, _)| t).min().unwrap();
    let origin_us = dump_first_us();
    let at = ((first - origin_us) * 1000) as f64;
    let r = timeline::get(
        Some(&st),
        None,
        &TimelineRequest {
            from_ns: Some(at - 1.0),
            to_ns: Some(at + 1.0),
            w: Some(100),
            ..Default::default()
        },
    )
    .unwrap();
    assert!(
        r.flows.messages >= 1.0 && r.flows.messages < 20.0,
        "{}",
        r.flows.messages
    );
    // Lanes 0..2 only: messages with rank 2 or 3 are outside.
    let r = timeline::get(
        Some(&st),
        None,
        &TimelineRequest {
            l1: Some(2),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(
        (r.flows.messages + r.flows.outside_lanes) as usize,
        sends,
        "every message drawn or counted outside"
    );
    assert!(r.flows.outside_lanes > 0.0);
}

#[test]
fn search_walks_the_isend_entries_of_the_dump_in_time_order() {
    let st = index();
    // Entries (parameter 1) of MPI_Isend() in the dump, by (time, node).
    let mut want: Vec<(i64, u32)> = dump("MPI_Isend()")
        .into_iter()
        .filter(|r| r.2 == 1)
        .map(|(t, n, _)| (t, n))
        .collect();
    want.sort_unstable();
    assert_eq!(want.len(), 360);
    let q = |dir, at: Option<(f64, u32)>| {
        timeline::search(
            Some(&st),
            &TimelineSearchRequest {
                q: Some("mpi_isend".into()),
                dir: Some(dir),
                at_ns: at.map(|a| a.0),
                lane: at.map(|a| a.1),
            },
        )
        .unwrap()
    };
    let origin_us = dump_first_us();
    let node = |lane: u32| st.trace().threads()[lane as usize].id.node;
    let mut at = None;
    for (k, &(t, n)) in want.iter().take(40).enumerate() {
        let r = q(SearchDir::Next, at);
        assert_eq!(r.total as usize, want.len());
        assert_eq!(r.names, 1);
        let h = r.hit.unwrap();
        assert_eq!(h.position as usize, k + 1);
        assert_eq!(h.name, "MPI_Isend()");
        assert_eq!(
            ((h.start_ns / 1000.0).round() as i64 + origin_us, node(h.lane)),
            (t, n),
            "match {}",
            k + 1
        );
        at = Some((h.start_ns, h.lane));
    }
    // Back one: the 39th; previous of the first wraps to the last.
    let h = q(SearchDir::Prev, at).hit.unwrap();
    assert_eq!(h.position, 39.0);
    let first = q(SearchDir::Next, None).hit.unwrap();
    let last = q(SearchDir::Prev, Some((first.start_ns, first.lane)))
        .hit
        .unwrap();
    assert_eq!(last.position as usize, want.len());
    assert_eq!(
        (
            (last.start_ns / 1000.0).round() as i64 + origin_us,
            node(last.lane)
        ),
        *want.last().unwrap()
    );
    // Nothing matches; no text at all is a 400.
    let none = timeline::search(
        Some(&st),
        &TimelineSearchRequest {
            q: Some("no such routine".into()),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!((none.total, none.hit.is_none()), (0.0, true));
    let err = timeline::search(Some(&st), &TimelineSearchRequest::default()).unwrap_err();
    assert_eq!(err.status, 400);
}
