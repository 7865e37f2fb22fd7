//! On-line ingest over sockets: a real TAU trace streamed as enter/exit records gives the
//! profile TAU's own trace2profile made from it; bad producers never disturb good ones.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{corpus, hello, line};
use perfscape_formats::{OpenOptions, open};
use perfscape_live::stream::record::{Record, Reply};
use perfscape_live::{ListenAddr, LiveEvent, LiveRun, StreamOptions, listen};
use perfscape_model::{MetricId, SampleId, SampleMode, ThreadId, Trace, ValueKind};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

const T: MetricId = MetricId(0);

fn tcp_listener() -> (LiveRun, SocketAddr) {
    tcp_listener_with(&StreamOptions::default())
}

fn tcp_listener_with(opts: &StreamOptions) -> (LiveRun, SocketAddr) {
    let run = listen(&"tcp://127.0.0.1:0".parse().unwrap(), opts).unwrap();
    let addr: SocketAddr = run
        .dir()
        .to_str()
        .unwrap()
        .strip_prefix("tcp://")
        .unwrap()
        .parse()
        .unwrap();
    (run, addr)
}

/// Sends `bytes`, closes the sending side and returns the server's replies.
fn produce(addr: SocketAddr, bytes: &[u8]) -> Vec<Reply> {
    let mut s = TcpStream::connect(addr).unwrap();
    s.write_all(bytes).unwrap();
    s.shutdown(Shutdown::Write).unwrap();
    BufReader::new(s)
        .lines()
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .collect()
}

/// Receives events until `done` says so (at most 30 s).
fn until(run: &LiveRun, mut done: impl FnMut(&LiveEvent) -> bool) -> Vec<LiveEvent> {
    let end = Instant::now() + Duration::from_secs(30);
    let mut seen = Vec::new();
    while Instant::now() < end {
        if let Ok(e) = run.recv_timeout(Duration::from_millis(100)) {
            let stop = done(&e);
            seen.push(e);
            if stop {
                return seen;
            }
        }
    }
    panic!("timed out; events so far: {seen:#?}");
}

/// The records of one thread of a trace: enter/exit from its nested intervals, messages from
/// its flows, a sample `halfway` at the middle of its time, and an end.
fn records_of(trace: &Trace, t: usize) -> Vec<Record> {
    let lane = trace.lane(t);
    let names = trace.names();
    let mut timed: Vec<Record> = vec![];
    let mut open: Vec<usize> = vec![];
    let parent = |i: usize| lane.parent()[i];
    for i in 0..lane.len() {
        while let Some(&top) = open.last() {
            if parent(i) != perfscape_model::trace::NO_PARENT && parent(i) as usize == top {
                break;
            }
            open.pop();
            timed.push(Record::Exit {
                region: names[lane.name()[top] as usize].clone(),
                t_ns: lane.end_ns()[top],
            });
        }
        timed.push(Record::Enter {
            region: names[lane.name()[i] as usize].clone(),
            group: None,
            t_ns: lane.start_ns()[i],
        });
        open.push(i);
    }
    while let Some(top) = open.pop() {
        timed.push(Record::Exit {
            region: names[lane.name()[top] as usize].clone(),
            t_ns: lane.end_ns()[top],
        });
    }
    let f = trace.flows();
    let mut messages: Vec<Record> = vec![];
    for i in 0..f.len() {
        let rank = |th: u32| trace.threads()[th as usize].id.node;
        if f.from_thread[i] as usize == t {
            messages.push(Record::Message {
                to: Some(rank(f.to_thread[i])),
                from: None,
                bytes: 6400,
                t_ns: f.from_ns[i],
            });
        }
        if f.to_thread[i] as usize == t {
            messages.push(Record::Message {
                to: None,
                from: Some(rank(f.from_thread[i])),
                bytes: 6400,
                t_ns: f.to_ns[i],
            });
        }
    }
    let (first, last) = (lane.start_ns()[0], *lane.end_ns().iter().max().unwrap());
    messages.push(Record::Sample {
        name: "halfway".into(),
        t_ns: first + (last - first) / 2,
        events: None,
        user_events: None,
    });
    // Merge by time: a message or sample goes after every record at or before its time.
    messages.sort_by_key(|r| r.t_ns().unwrap());
    let mut out = vec![hello(trace.threads()[t].id.node)];
    let mut m = messages.into_iter().peekable();
    for r in timed {
        while m.peek().is_some_and(|x| x.t_ns() < r.t_ns()) {
            out.push(m.next().unwrap());
        }
        out.push(r);
    }
    out.extend(m);
    out.push(Record::End { t_ns: last });
    out
}

#[test]
fn a_streamed_tau_trace_equals_taus_trace2profile() {
    let dir = corpus().join("tau-real/mpi-stencil-np4-trace");
    let mut opened = open(&dir.join("trace.chrome.json"), &OpenOptions::default()).unwrap();
    let trace = opened.trace.take().unwrap();
    let tau = open(&dir.join("oracle/trace2profile"), &OpenOptions::default())
        .unwrap()
        .profile;
    let opts = StreamOptions {
        live: perfscape_live::LiveOptions {
            expected_threads: Some(4),
            ..Default::default()
        },
        ..Default::default()
    };
    let (run, addr) = tcp_listener_with(&opts);
    let producers: Vec<_> = (0..trace.threads().len())
        .map(|t| {
            let bytes: Vec<u8> = records_of(&trace, t).iter().flat_map(line).collect();
            std::thread::spawn(move || produce(addr, &bytes))
        })
        .collect();
    for p in producers {
        assert_eq!(p.join().unwrap(), vec![], "no record refused");
    }
    let mut ended = 0;
    let events = until(&run, |e| {
        ended += matches!(e, LiveEvent::ThreadEnded { .. }) as usize;
        matches!(e, LiveEvent::Sample(s) if s.name == "final")
    });
    assert_eq!(ended, 4, "{events:#?}");
    let samples: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            LiveEvent::Sample(s) => Some(s.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(samples.len(), 2);
    assert_eq!(samples[0].name, "halfway");
    assert!(
        samples.iter().all(|s| s.complete && s.threads_present == 4),
        "{samples:#?}"
    );
    let series = run.series().read();
    let streamed = series.profile_at(SampleId(1), SampleMode::Cumulative).unwrap();
    // Every flat event of every rank agrees exactly with TAU's trace2profile.
    let mut cells = 0;
    for e in tau.event_ids() {
        let name = tau.event_name(e);
        let col = tau.interval(e);
        let se = streamed
            .event_by_name(&name)
            .unwrap_or_else(|| panic!("no `{name}`"));
        for (r, t) in col.threads().iter().enumerate() {
            let st = streamed.thread_index(tau.thread(*t)).unwrap();
            for (kind, want) in [
                (ValueKind::Calls, col.calls()[r]),
                (ValueKind::Subcalls, col.subcalls()[r]),
                (ValueKind::Exclusive, col.values(ValueKind::Exclusive, T)[r]),
                (ValueKind::Inclusive, col.values(ValueKind::Inclusive, T)[r]),
            ] {
                assert_eq!(
                    streamed.value(se, st, kind, T),
                    Some(want),
                    "{} {name} {kind:?}",
                    tau.thread(*t)
                );
            }
            cells += 1;
        }
    }
    assert_eq!(cells, 17 * 4 + 3);
    // The messages: one sent-to-node event per pair, counted as the trace's flows.
    let mut want: BTreeMap<(u32, u32), f64> = BTreeMap::new();
    let f = trace.flows();
    for i in 0..f.len() {
        let rank = |th: u32| trace.threads()[th as usize].id.node;
        *want
            .entry((rank(f.from_thread[i]), rank(f.to_thread[i])))
            .or_default() += 1.0;
    }
    for ((from, to), n) in want {
        let a = streamed
            .atomic_event_by_name(&format!("Message size sent to node {to}"))
            .unwrap();
        let col = streamed.atomic(a);
        let ti = streamed.thread_index(ThreadId::new(from, 0, 0)).unwrap();
        let r = col.threads().iter().position(|t| *t == ti).unwrap();
        assert_eq!(col.count()[r], n, "{from} -> {to}");
    }
    drop(series);
    run.stop_and_wait();
}

#[test]
fn bad_records_are_answered_and_dropped_and_others_go_on() {
    let (run, addr) = tcp_listener();
    let mut bad = line(&Record::Enter {
        region: "x".into(),
        group: None,
        t_ns: 1,
    }); // before hello
    let off_garbage = bad.len() + line(&hello(0)).len();
    bad = [bad, line(&hello(0))].concat();
    bad.extend_from_slice(b"{not json\n");
    let off_mismatch = bad.len()
        + line(&Record::Enter {
            region: "a".into(),
            group: None,
            t_ns: 10,
        })
        .len();
    bad.extend(line(&Record::Enter {
        region: "a".into(),
        group: None,
        t_ns: 10,
    }));
    bad.extend(line(&Record::Exit {
        region: "b".into(),
        t_ns: 20,
    }));
    let off_back = bad.len();
    bad.extend(line(&Record::Counter {
        name: "c".into(),
        value: 1.0,
        t_ns: 5,
    }));
    let off_long = bad.len();
    bad.extend(vec![b'x'; (1 << 20) + 10]);
    bad.push(b'\n');
    bad.extend(line(&Record::Exit {
        region: "a".into(),
        t_ns: 30,
    }));
    bad.extend(line(&Record::Sample {
        name: "s1".into(),
        t_ns: 40,
        events: None,
        user_events: None,
    }));
    let off_cut = bad.len();
    bad.extend_from_slice(br#"{"type":"enter","region":"cut"#);
    // A good producer at the same time.
    let good: Vec<u8> = [
        hello(1),
        Record::Enter {
            region: "a".into(),
            group: None,
            t_ns: 0,
        },
        Record::Exit {
            region: "a".into(),
            t_ns: 2_000,
        },
        Record::Sample {
            name: "s1".into(),
            t_ns: 3_000,
            events: None,
            user_events: None,
        },
    ]
    .iter()
    .flat_map(line)
    .collect();
    let g = std::thread::spawn(move || produce(addr, &good));
    let replies = produce(addr, &bad);
    assert_eq!(g.join().unwrap(), vec![]);
    let offsets: Vec<u64> = replies
        .iter()
        .map(|r| match r {
            Reply::Error { offset, .. } => *offset,
        })
        .collect();
    assert_eq!(
        offsets,
        vec![
            0,
            off_garbage as u64,
            off_mismatch as u64,
            off_back as u64,
            off_long as u64,
            off_cut as u64
        ],
        "{replies:#?}"
    );
    let msg = |i: usize| match &replies[i] {
        Reply::Error { message, .. } => message.clone(),
    };
    assert!(msg(0).contains("expected a hello record first"), "{}", msg(0));
    assert!(msg(1).contains("expected a JSON record"), "{}", msg(1));
    assert!(msg(2).contains("innermost open region is `a`"), "{}", msg(2));
    assert!(msg(3).contains("earlier than the previous record"), "{}", msg(3));
    assert!(msg(4).contains("longer than the limit"), "{}", msg(4));
    assert!(msg(5).contains("connection closed inside a record"), "{}", msg(5));
    let events = until(&run, |e| matches!(e, LiveEvent::Sample(s) if s.name == "final"));
    let errors = events
        .iter()
        .filter(|e| matches!(e, LiveEvent::ProducerError { .. }))
        .count();
    assert_eq!(errors, 6);
    let s1 = events
        .iter()
        .find_map(|e| match e {
            LiveEvent::Sample(s) if s.name == "s1" => Some(s.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(s1.threads_present, 2);
    // The bad producer's accepted records still count: `a` from 10 to 30 ns.
    let series = run.series().read();
    let p = series.profile_at(SampleId(0), SampleMode::Cumulative).unwrap();
    let a = p.event_by_name("a").unwrap();
    let t0 = p.thread_index(ThreadId::new(0, 0, 0)).unwrap();
    let t1 = p.thread_index(ThreadId::new(1, 0, 0)).unwrap();
    assert_eq!(p.value(a, t0, ValueKind::Inclusive, T), Some(0.02));
    assert_eq!(p.value(a, t1, ValueKind::Inclusive, T), Some(2.0));
}

#[test]
fn idle_connections_and_a_duplicate_thread_do_not_stop_the_others() {
    let (run, addr) = tcp_listener();
    let idle: Vec<TcpStream> = (0..1000).map(|_| TcpStream::connect(addr).unwrap()).collect();
    let first = TcpStream::connect(addr).unwrap();
    (&first).write_all(&line(&hello(7))).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let dup = produce(addr, &line(&hello(7)));
    assert!(
        matches!(&dup[..], [Reply::Error { message, .. }] if message.contains("already streaming")),
        "{dup:?}"
    );
    let good: Vec<u8> = [hello(8), Record::End { t_ns: 5 }]
        .iter()
        .flat_map(line)
        .collect();
    assert_eq!(produce(addr, &good), vec![]);
    until(
        &run,
        |e| matches!(e, LiveEvent::ThreadEnded { thread } if thread.node == 8),
    );
    drop(idle);
    drop(first);
    run.stop_and_wait();
}

#[cfg(unix)]
#[test]
fn unix_socket_and_token_rules() {
    use std::os::unix::net::UnixStream;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ps.sock");
    let run = listen(&ListenAddr::Unix(path.clone()), &StreamOptions::default()).unwrap();
    let mut s = UnixStream::connect(&path).unwrap();
    let bytes: Vec<u8> = [hello(0), Record::End { t_ns: 1 }]
        .iter()
        .flat_map(line)
        .collect();
    s.write_all(&bytes).unwrap();
    s.shutdown(Shutdown::Write).unwrap();
    until(&run, |e| matches!(e, LiveEvent::ThreadEnded { .. }));
    drop(run);
    // Beyond loopback: a token is required to listen, and in every hello.
    let any: ListenAddr = "tcp://0.0.0.0:0".parse().unwrap();
    let e = listen(&any, &StreamOptions::default()).unwrap_err().to_string();
    assert!(e.contains("needs a token"), "{e}");
    let opts = StreamOptions {
        token: Some("s3cret".into()),
        ..Default::default()
    };
    let run = listen(&any, &opts).unwrap();
    let port: u16 = run
        .dir()
        .to_str()
        .unwrap()
        .rsplit(':')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let r = produce(addr, &line(&hello(0)));
    assert!(
        matches!(&r[..], [Reply::Error { message, .. }] if message.contains("token")),
        "{r:?}"
    );
    let mut with = hello(1);
    if let Record::Hello { token, .. } = &mut with {
        *token = Some("s3cret".into());
    }
    assert_eq!(produce(addr, &line(&with)), vec![]);
    assert!("nonsense".parse::<ListenAddr>().is_err());
}

#[test]
fn ingest_bytes_runs_the_listener_path_without_a_socket() {
    let mut bytes: Vec<u8> = [
        hello(5),
        Record::Enter {
            region: "r".into(),
            group: None,
            t_ns: 1_000,
        },
        Record::Exit {
            region: "r".into(),
            t_ns: 4_000,
        },
    ]
    .iter()
    .flat_map(line)
    .collect();
    bytes.extend_from_slice(b"{\"type\":\"end\"}\n");
    let (replies, events, series) = perfscape_live::stream::ingest_bytes(&bytes, &StreamOptions::default());
    assert!(
        matches!(&replies[..], [Reply::Error { message, .. }] if message.contains("missing field `t_ns`")),
        "{replies:?}"
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(e, LiveEvent::Sample(s) if s.name == "final")),
        "{events:#?}"
    );
    let series = series.read();
    let p = series.profile_at(SampleId(0), SampleMode::Cumulative).unwrap();
    let t = p.thread_index(ThreadId::new(5, 0, 0)).unwrap();
    assert_eq!(
        p.value(p.event_by_name("r").unwrap(), t, ValueKind::Inclusive, T),
        Some(3.0)
    );
}

#[test]
fn a_long_stream_keeps_a_window_of_samples_and_the_same_final_state() {
    // 300 iterations, each a region entered and left and a sample: with a window of 16 the
    // series keeps at most 16 samples' values, and the final state equals the whole series'.
    let mut recs = vec![hello(3)];
    for k in 0..300i64 {
        let t = 1_000_000 * k;
        recs.push(Record::Enter {
            region: "step".into(),
            group: None,
            t_ns: t,
        });
        recs.push(Record::Exit {
            region: "step".into(),
            t_ns: t + 1_000 * (k % 7 + 1),
        });
        recs.push(Record::Sample {
            name: format!("iteration {k}"),
            t_ns: t + 500_000,
            events: None,
            user_events: None,
        });
    }
    recs.push(Record::End { t_ns: 300_000_000 });
    let bytes: Vec<u8> = recs.iter().flat_map(line).collect();
    let mut windowed = StreamOptions::default();
    windowed.live.sample_window = Some(16);
    let mut whole = StreamOptions::default();
    whole.live.sample_window = None;
    let (r1, _, s1) = perfscape_live::stream::ingest_bytes(&bytes, &windowed);
    let (r2, _, s2) = perfscape_live::stream::ingest_bytes(&bytes, &whole);
    assert!(r1.is_empty() && r2.is_empty(), "{r1:?} {r2:?}");
    let (s1, s2) = (s1.read(), s2.read());
    assert_eq!(
        s1.len(),
        301,
        "300 iterations and the final sample, thinned ones included"
    );
    assert_eq!(s2.len(), 301);
    assert!(s1.kept_samples().len() <= 16, "{} kept", s1.kept_samples().len());
    assert_eq!(s2.kept_samples().len(), 301);
    assert_eq!(s1.thinned_count(), 301 - s1.kept_samples().len());
    let (f1, f2) = (s1.final_profile().unwrap(), s2.final_profile().unwrap());
    let e1 = f1.event_by_name("step").unwrap();
    let e2 = f2.event_by_name("step").unwrap();
    for kind in [ValueKind::Calls, ValueKind::Exclusive, ValueKind::Inclusive] {
        assert_eq!(f1.interval(e1).values(kind, T), f2.interval(e2).values(kind, T));
    }
    // Independent of the model: 300 calls of 1..=7 µs in turn.
    let want_us: f64 = (0..300).map(|k| f64::from(k % 7 + 1)).sum();
    assert_eq!(f1.interval(e1).values(ValueKind::Calls, T), &[300.0]);
    assert!((f1.interval(e1).values(ValueKind::Inclusive, T)[0] - want_us).abs() < 1e-9);
}
