//! `perfscape record -- COMMAND`: the program runs with PERFSCAPE_STREAM pointing at the
//! server, its producers stream, and the served run is what they sent; `serve --listen`
//! refuses a command without an address, and a bad address is named.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

fn get(base: &str, path: &str, token: &str) -> String {
    let addr = base.strip_prefix("http://").unwrap();
    let mut s = TcpStream::connect(addr).unwrap();
    let sep = if path.contains('?') { '&' } else { '?' };
    write!(
        s,
        "GET {path}{sep}token={token} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out.split_once("\r\n\r\n").unwrap().1.to_string()
}

#[test]
fn record_runs_the_program_and_serves_what_it_streams() {
    let producers = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../producers");
    // Two ranks, as an MPI program's would: each says hello, times a region, takes a sample.
    let script = format!(
        r#"
import os, sys, time
sys.path.insert(0, {producers:?})
from perfscape_stream import Stream
addr = os.environ["PERFSCAPE_STREAM"]
streams = [Stream(addr, rank=r, program="record-test") for r in (0, 1)]
for r, s in enumerate(streams):
    s.enter("work", t_ns=1_000_000)
    s.exit(t_ns=1_000_000 + (r + 1) * 1_000_000)
    s.sample("done", t_ns=5_000_000)
for s in streams:
    s.end(t_ns=6_000_000)
    s.close()
"#,
        producers = producers.display().to_string()
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_perfscape"))
        .args(["record", "--no-open", "--", "python3", "-c", &script])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let out = child.stdout.take().unwrap();
    let err = child.stderr.take().unwrap();
    let tx2 = tx.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines() {
            let _ = tx.send(line.unwrap());
        }
    });
    std::thread::spawn(move || {
        for line in BufReader::new(err).lines() {
            let _ = tx2.send(line.unwrap());
        }
    });
    let mut url = None;
    let mut ended = false;
    while !(ended && url.is_some()) {
        let line = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("the server says what it does");
        if let Some((_, u)) = line.split_once(" at http") {
            url = Some(format!("http{}", u.trim()));
        }
        if line.contains("python3 ended (exit status: 0)") {
            ended = true;
        }
    }
    let url = url.unwrap();
    let (base, token) = url.split_once("/?token=").unwrap();
    // The final sample arrives once both threads ended.
    let mut run = String::new();
    for _ in 0..100 {
        run = get(base, "/api/run", token);
        if run.contains(r#""samples":2"#) {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(run.contains(r#""format":"perfscape-stream (live)""#), "{run}");
    assert!(run.contains(r#""threads":2"#), "{run}");
    assert!(run.contains(r#""samples":2"#), "{run}");
    let top = get(base, "/api/series", token);
    assert!(
        top.contains(r#""name":"done""#) && top.contains(r#""name":"final""#),
        "{top}"
    );
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn a_command_needs_an_address_and_addresses_are_checked() {
    let out = Command::new(env!("CARGO_BIN_EXE_perfscape"))
        .args(["serve", "x", "--no-open", "--", "true"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs --listen ADDR"));
    let out = Command::new(env!("CARGO_BIN_EXE_perfscape"))
        .args(["serve", "--no-open", "--listen", "nonsense"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("expected tcp://HOST:PORT"));
    let out = Command::new(env!("CARGO_BIN_EXE_perfscape"))
        .args(["record", "--no-open"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing to record"));
}
