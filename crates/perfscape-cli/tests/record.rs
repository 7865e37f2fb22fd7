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

fn producers() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../producers")
        .display()
        .to_string()
}

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

/// The server of a test, with its own temporary directory (`TMPDIR`), where `record` makes its
/// socket's directory. Stopped when the test ends (also when it fails).
struct Server {
    child: std::process::Child,
    tmp: tempfile::TempDir,
}

impl Server {
    /// Stops the server as a user or a service manager would (SIGTERM), waits for it (killing
    /// it after 20 s), and returns the names left in its temporary directory.
    fn stop(&mut self) -> Vec<String> {
        if let Ok(None) = self.child.try_wait() {
            let _ = Command::new("kill")
                .args(["-TERM", &self.child.id().to_string()])
                .status();
        }
        for _ in 0..200 {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        std::fs::read_dir(self.tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Starts `perfscape record [extra] -- python3 -c script` and returns the server and its
/// tokened URL once the program ended.
fn record(extra: &[&str], script: &str) -> (Server, String) {
    let mut args = vec!["record", "--no-open"];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--", "python3", "-c", script]);
    let tmp = tempfile::tempdir().unwrap();
    let mut server = Server {
        child: Command::new(env!("CARGO_BIN_EXE_perfscape"))
            .args(&args)
            .env("TMPDIR", tmp.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
        tmp,
    };
    let (tx, rx) = mpsc::channel();
    let out = server.child.stdout.take().unwrap();
    let err = server.child.stderr.take().unwrap();
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
    (server, url.unwrap())
}

#[test]
fn record_runs_the_program_and_serves_what_it_streams() {
    let producers = producers();
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
        producers = producers
    );
    let (mut server, url) = record(&[], &script);
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
    // Stopped by SIGTERM, the server removes the directory of its socket.
    let left = server.stop();
    assert!(
        !left.iter().any(|n| n.starts_with("perfscape-record-")),
        "left behind: {left:?}"
    );
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

#[test]
fn a_window_of_samples_thins_older_samples_and_says_so() {
    // One rank, 40 samples, a window of 8: older samples are thinned, the served views answer
    // for kept samples only and name the nearest kept ones for a thinned one.
    let script = format!(
        r#"
import os, sys
sys.path.insert(0, {producers:?})
from perfscape_stream import Stream
s = Stream(os.environ["PERFSCAPE_STREAM"], rank=0, program="window-test")
for k in range(40):
    s.enter("work", t_ns=1_000_000 * k)
    s.exit(t_ns=1_000_000 * k + 1000 * (k + 1))
    s.sample(f"iteration {{k}}", t_ns=1_000_000 * k + 500_000)
s.end(t_ns=50_000_000)
s.close()
"#,
        producers = producers()
    );
    let (_server, url) = record(&["--sample-window", "8"], &script);
    let (base, token) = url.split_once("/?token=").unwrap();
    let mut series = String::new();
    for _ in 0..100 {
        series = get(base, "/api/series", token);
        if series.contains(r#""name":"final""#) {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let v: serde_json::Value = serde_json::from_str(&series).unwrap();
    let samples = v["samples"].as_array().unwrap();
    assert_eq!(samples.len(), 41, "{series}");
    let kept: Vec<u64> = samples
        .iter()
        .filter(|s| s["thinned"] == false)
        .map(|s| s["seq"].as_u64().unwrap())
        .collect();
    assert!(
        kept.len() <= 8 && kept[0] == 0 && *kept.last().unwrap() == 40,
        "{kept:?}"
    );
    let thinned = samples.iter().find(|s| s["thinned"] == true).unwrap()["seq"]
        .as_u64()
        .unwrap();
    let gone = get(base, &format!("/api/events?sample={thinned}"), token);
    assert!(
        gone.contains("was thinned") && gone.contains("nearest kept"),
        "{gone}"
    );
    let ok = get(base, &format!("/api/events?sample={}", kept[1]), token);
    assert!(ok.contains("work"), "{ok}");
    let trend: serde_json::Value = serde_json::from_str(&get(base, "/api/trend?event=0", token)).unwrap();
    let seqs: Vec<u64> = trend["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(seqs, kept);
}
