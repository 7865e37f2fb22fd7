//! Shared by the live-mode tests: the corpus, a progressive writer of real snapshot files,
//! event collection, a cell-by-cell series comparison, and stream records as producers send
//! them.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use perfscape_live::{FinishReason, LiveEvent, LiveRun, SampleEvent};
use perfscape_model::{
    AtomicEventId, AtomicKind, EventId, MetricId, SampleId, SampleMode, SampleSeries, ThreadId, ValueKind,
};
use std::io::Write;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

pub fn corpus() -> PathBuf {
    let p = std::env::var_os("PERFSCAPE_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"));
    assert!(p.is_dir(), "the shared corpus is expected at {}", p.display());
    p
}

pub fn run(name: &str) -> PathBuf {
    corpus().join("tau-real").join(name)
}

/// Deterministic pseudo-random numbers (xorshift64*), so failures reproduce.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            v.swap(i, self.below(i + 1));
        }
    }
}

/// A real snapshot file cut into its `<profile_xml>` documents (blocks).
pub struct Source {
    pub name: String,
    pub thread: ThreadId,
    pub bytes: Vec<u8>,
    pub blocks: Vec<Range<usize>>,
}

/// The snapshot files of a run directory, by thread.
pub fn sources(dir: &Path) -> Vec<Source> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_str().unwrap().to_string();
        let Some(thread) = perfscape_formats::tau::snapshot::snapshot_file_thread(&name) else {
            continue;
        };
        let bytes = std::fs::read(&p).unwrap();
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let mut blocks = Vec::new();
        let mut start = 0;
        for (i, m) in text.match_indices("</profile_xml>\n") {
            blocks.push(start..i + m.len());
            start = i + m.len();
        }
        if start < bytes.len() {
            blocks.push(start..bytes.len());
        }
        out.push(Source {
            name,
            thread,
            bytes,
            blocks,
        });
    }
    out.sort_by_key(|s| s.thread);
    out
}

/// One write of a schedule: bytes `range` of source `file`, then a pause.
#[derive(Clone, Debug)]
pub struct Piece {
    pub file: usize,
    pub range: Range<usize>,
    pub pause: Duration,
}

/// Where inside `range` of `bytes` the pattern starts, cut in its middle (or None).
pub fn cut_inside(bytes: &[u8], range: &Range<usize>, pattern: &str) -> Option<usize> {
    let text = String::from_utf8_lossy(&bytes[range.clone()]).into_owned();
    text.find(pattern).map(|i| range.start + i + pattern.len() / 2)
}

/// Blocks written round by round (block k of every file, files in a random order each
/// round), with short random pauses; the blocks in `splits` (file, block, pattern) are cut
/// in the middle of `pattern` and their second half is written only after the next file's
/// block (and a pause), so the watcher sees a half block.
pub fn interleaved_blocks(srcs: &[Source], rng: &mut Rng, splits: &[(usize, usize, &str)]) -> Vec<Piece> {
    let rounds = srcs.iter().map(|s| s.blocks.len()).max().unwrap_or(0);
    let mut out = Vec::new();
    for k in 0..rounds {
        let mut order: Vec<usize> = (0..srcs.len()).filter(|&f| k < srcs[f].blocks.len()).collect();
        rng.shuffle(&mut order);
        let mut deferred: Option<Piece> = None;
        for f in order {
            let r = srcs[f].blocks[k].clone();
            let pause = Duration::from_millis(rng.below(4) as u64);
            let split = splits
                .iter()
                .find(|(sf, sk, _)| *sf == f && *sk == k)
                .and_then(|(_, _, pat)| cut_inside(&srcs[f].bytes, &r, pat));
            match split {
                Some(cut) => {
                    out.push(Piece {
                        file: f,
                        range: r.start..cut,
                        pause: Duration::from_millis(30),
                    });
                    if let Some(d) = deferred.take() {
                        out.push(d);
                    }
                    deferred = Some(Piece {
                        file: f,
                        range: cut..r.end,
                        pause,
                    });
                }
                None => {
                    out.push(Piece {
                        file: f,
                        range: r,
                        pause,
                    });
                    if let Some(d) = deferred.take() {
                        out.push(d);
                    }
                }
            }
        }
        if let Some(d) = deferred.take() {
            out.push(d);
        }
        if let Some(last) = out.last_mut() {
            last.pause += Duration::from_millis(8);
        }
    }
    out
}

/// Every file written in 4 KiB pieces (as TAU's buffered stdio writes them), the files
/// interleaved round robin: pieces end anywhere, inside names, numbers, tags.
pub fn in_4k_pieces(srcs: &[Source]) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut pos = vec![0usize; srcs.len()];
    loop {
        let mut any = false;
        for (f, s) in srcs.iter().enumerate() {
            if pos[f] < s.bytes.len() {
                let end = (pos[f] + 4096).min(s.bytes.len());
                out.push(Piece {
                    file: f,
                    range: pos[f]..end,
                    pause: Duration::from_millis(1),
                });
                pos[f] = end;
                any = true;
            }
        }
        if !any {
            return out;
        }
    }
}

/// Appends bytes to a file (creating it), in one write.
pub fn append(path: &Path, bytes: &[u8]) {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    f.write_all(bytes).unwrap();
}

/// Writes the pieces into `dir`; returns when each piece was written.
pub fn write_pieces(dir: &Path, srcs: &[Source], pieces: &[Piece]) -> Vec<Instant> {
    let mut at = Vec::with_capacity(pieces.len());
    for p in pieces {
        append(
            &dir.join(&srcs[p.file].name),
            &srcs[p.file].bytes[p.range.clone()],
        );
        at.push(Instant::now());
        std::thread::sleep(p.pause);
    }
    at
}

/// An event and when it was received.
pub type Timed = (Instant, LiveEvent);

/// Receives events until `Finished` (included) or the timeout.
pub fn collect_until_finished(run: &LiveRun, timeout: Duration) -> Vec<Timed> {
    let end = Instant::now() + timeout;
    let mut out = Vec::new();
    loop {
        let left = end.saturating_duration_since(Instant::now());
        match run.recv_timeout(left) {
            Ok(e) => {
                let fin = matches!(e, LiveEvent::Finished { .. });
                out.push((Instant::now(), e));
                if fin {
                    return out;
                }
            }
            Err(e) => panic!(
                "no Finished event within {timeout:?} ({e}); events so far: {:#?}",
                out.iter().map(|(_, e)| e).collect::<Vec<_>>()
            ),
        }
    }
}

pub fn samples(events: &[Timed]) -> Vec<&SampleEvent> {
    events
        .iter()
        .filter_map(|(_, e)| match e {
            LiveEvent::Sample(s) => Some(s),
            _ => None,
        })
        .collect()
}

pub fn finish_reason(events: &[Timed]) -> FinishReason {
    match events.last() {
        Some((_, LiveEvent::Finished { reason })) => *reason,
        other => panic!("the last event is not Finished: {other:?}"),
    }
}

pub fn file_errors(events: &[Timed]) -> Vec<String> {
    events
        .iter()
        .filter_map(|(_, e)| match e {
            LiveEvent::FileError(f) => Some(f.to_string()),
            _ => None,
        })
        .collect()
}

pub fn names(s: &SampleSeries) -> Vec<String> {
    s.samples().iter().map(|x| x.name().to_string()).collect()
}

/// Same samples (names, timestamps, threads present), same timers and user events, and
/// every cell (cumulative and delta, every kind and metric) equal, matched by thread id and
/// event name. NaN (missing) equals NaN.
pub fn assert_same_series(a: &SampleSeries, b: &SampleSeries, ctx: &str) -> usize {
    assert_eq!(names(a), names(b), "{ctx}");
    let sorted = |s: &SampleSeries| {
        let mut t = s.threads().to_vec();
        t.sort();
        t
    };
    assert_eq!(sorted(a), sorted(b), "{ctx}");
    assert_eq!(a.metrics(), b.metrics(), "{ctx}");
    assert_eq!(a.timer_count(), b.timer_count(), "{ctx}");
    assert_eq!(a.user_event_count(), b.user_event_count(), "{ctx}");
    let eq = |x: f64, y: f64| x == y || (x.is_nan() && y.is_nan());
    let mut cells = 0;
    for (si, (x, y)) in a.samples().iter().zip(b.samples()).enumerate() {
        assert_eq!(x.timestamp_us(), y.timestamp_us(), "{ctx} sample {si}");
        let ids = |s: &SampleSeries, i: &perfscape_model::SampleInfo| {
            let mut v: Vec<ThreadId> = i.present_threads().map(|t| s.threads()[t.index()]).collect();
            v.sort();
            v
        };
        assert_eq!(ids(a, x), ids(b, y), "{ctx} sample {si}");
        let s = SampleId::from(si);
        for ta in (0..a.threads().len()).map(perfscape_model::ThreadIndex::from) {
            let tb = b.thread_index(a.threads()[ta.index()]).unwrap();
            for e in (0..a.timer_count()).map(EventId::from) {
                let eb = b.timer_by_name(a.timer_name(e)).unwrap();
                for m in (0..a.metrics().len()).map(MetricId::from) {
                    for kind in ValueKind::ALL {
                        for mode in [SampleMode::Cumulative, SampleMode::Delta] {
                            let (va, vb) = (
                                a.timer_value(e, ta, s, kind, m, mode),
                                b.timer_value(eb, tb, s, kind, m, mode),
                            );
                            let same = match (va, vb) {
                                (Some(x), Some(y)) => eq(x, y),
                                (None, None) => true,
                                (Some(x), None) | (None, Some(x)) => x == 0.0 || x.is_nan(),
                            };
                            assert!(
                                same,
                                "{ctx}: sample {si} thread {} `{}` {kind:?} {mode:?}: {va:?} vs {vb:?}",
                                a.threads()[ta.index()],
                                a.timer_name(e)
                            );
                            cells += 1;
                        }
                    }
                }
            }
            for u in (0..a.user_event_count()).map(AtomicEventId::from) {
                let ub = b.user_event_by_name(a.user_event_name(u)).unwrap();
                for kind in AtomicKind::ALL {
                    let (va, vb) = (uval(a, u, ta, s, kind), uval(b, ub, tb, s, kind));
                    let same = match (va, vb) {
                        (Some(x), Some(y)) => eq(x, y),
                        (None, None) => true,
                        (Some(x), None) | (None, Some(x)) => x == 0.0 || x.is_nan(),
                    };
                    assert!(
                        same,
                        "{ctx}: sample {si} user event `{}` {kind:?}",
                        a.user_event_name(u)
                    );
                    cells += 1;
                }
            }
        }
    }
    cells
}

/// One user-event cell (cumulative), if the thread has a slot for it.
fn uval(
    series: &SampleSeries,
    u: AtomicEventId,
    t: perfscape_model::ThreadIndex,
    s: SampleId,
    kind: AtomicKind,
) -> Option<f64> {
    let v = series.user_event_values(u, s, kind, SampleMode::Cumulative);
    v.threads.iter().position(|&x| x == t).map(|i| v.values[i])
}

/// One stream record as a producer sends it: its JSON and a newline (STREAM.md).
pub fn line(r: &perfscape_live::stream::record::Record) -> Vec<u8> {
    let mut l = serde_json::to_vec(r).unwrap();
    l.push(b'\n');
    l
}

/// The `hello` record of rank `rank`, thread 0, program `test`, no token.
pub fn hello(rank: u32) -> perfscape_live::stream::record::Record {
    perfscape_live::stream::record::Record::Hello {
        protocol: 1,
        program: Some("test".into()),
        run: None,
        rank,
        thread: 0,
        metrics: None,
        token: None,
    }
}
