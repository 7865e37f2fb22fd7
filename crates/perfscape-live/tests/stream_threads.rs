//! The stream listener polls its connections from a few threads: a thousand idle
//! connections cost no thread each, a producer among them is served, and a connection beyond
//! `max_connections` is refused with an error record. Its own test binary, so that no other
//! test's threads are counted.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{hello, line};
use perfscape_live::stream::record::{Record, Reply};
use perfscape_live::{LiveEvent, StreamOptions, listen};
use std::io::{BufRead, BufReader, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// Threads of this process (`/proc/self/task`).
fn threads() -> usize {
    std::fs::read_dir("/proc/self/task").unwrap().count()
}

/// Sends `bytes`, closes the sending side and returns the server's replies.
fn produce(addr: SocketAddr, bytes: &[u8]) -> Vec<Reply> {
    let mut s = TcpStream::connect(addr).unwrap();
    s.write_all(bytes).unwrap();
    s.shutdown(Shutdown::Write).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    BufReader::new(s)
        .lines()
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .collect()
}

#[cfg(target_os = "linux")]
#[test]
fn a_thousand_idle_connections_cost_no_thread_each() {
    let opts = StreamOptions {
        max_connections: 1001,
        ..Default::default()
    };
    let run = listen(&"tcp://127.0.0.1:0".parse().unwrap(), &opts).unwrap();
    let addr: SocketAddr = run.dir().to_str().unwrap()["tcp://".len()..].parse().unwrap();
    let ended = |rank: u32| {
        let end = Instant::now() + Duration::from_secs(30);
        while Instant::now() < end {
            if let Ok(LiveEvent::ThreadEnded { thread }) = run.recv_timeout(Duration::from_millis(100))
                && thread.node == rank
            {
                return;
            }
        }
        panic!("thread {rank} did not end");
    };
    // One producer first, so that whatever the listener starts lazily is counted before.
    let one: Vec<u8> = [hello(0), Record::End { t_ns: 1 }]
        .iter()
        .flat_map(line)
        .collect();
    assert_eq!(produce(addr, &one), vec![]);
    ended(0);
    let before = threads();

    let idle: Vec<TcpStream> = (0..1000).map(|_| TcpStream::connect(addr).unwrap()).collect();
    std::thread::sleep(Duration::from_millis(500));
    let with_idle = threads();
    // A thread per connection would add 1,000; the listener's blocking helpers may add 2.
    assert!(
        with_idle <= before + 4,
        "{before} threads before 1,000 idle connections, {with_idle} with them"
    );

    // The 1,001st connection, a producer, is served among them.
    let good: Vec<u8> = [hello(1), Record::End { t_ns: 5 }]
        .iter()
        .flat_map(line)
        .collect();
    assert_eq!(produce(addr, &good), vec![]);
    ended(1);
    std::thread::sleep(Duration::from_millis(200));

    // 1,000 idle and one holder: the next is beyond the limit of 1,001.
    let holder = TcpStream::connect(addr).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    // (It sends nothing: unread input at the close would reset the connection.)
    let extra = TcpStream::connect(addr).unwrap();
    extra.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let refused: Vec<Reply> = BufReader::new(extra)
        .lines()
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .collect();
    assert!(
        matches!(&refused[..], [Reply::Error { offset: 0, message }] if message.contains("1001 producers connected")),
        "{refused:?}"
    );
    drop(holder);
    drop(idle);
    run.stop_and_wait();
}
