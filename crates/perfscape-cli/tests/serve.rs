//! `perfscape serve` as a user starts it: a default serve prints a tokened URL that works,
//! and refuses requests without the token or naming another host; `--no-token` is for
//! loopback only.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// A running `perfscape serve` (stopped when dropped) and the URL it printed.
struct Server {
    child: Child,
    url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(extra: &[&str]) -> Server {
    let run =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/tau/mpi-stencil-np64-callpath-commmatrix");
    let mut child = Command::new(env!("CARGO_BIN_EXE_perfscape"))
        .env(
            "XDG_CACHE_HOME",
            Path::new(env!("CARGO_TARGET_TMPDIR")).join("xdg-cache"),
        )
        .arg("serve")
        .arg(&run)
        .args(["--no-open", "--no-cache"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let url = loop {
        let line = lines.next().expect("the server printed its URL").unwrap();
        if let Some((_, url)) = line.split_once(" at ") {
            break url.trim().to_string();
        }
    };
    // Keep reading what it prints, as a terminal would.
    std::thread::spawn(move || lines.for_each(drop));
    Server { child, url }
}

/// `GET path` with `host` and extra header lines: the status and the whole answer.
fn get(addr: &str, host: &str, path: &str, headers: &str) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n{headers}\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let status = out.split(' ').nth(1).unwrap().parse().unwrap();
    (status, out)
}

#[test]
fn a_default_serve_wants_its_token_and_its_own_name() {
    let server = serve(&[]);
    // "perfscape: serving RUN at http://127.0.0.1:PORT/?token=<32 hex digits>"
    let (base, token) = server.url.split_once("/?token=").expect("a tokened URL");
    assert_eq!(token.len(), 32, "{}", server.url);
    assert!(token.chars().all(|c| c.is_ascii_hexdigit()));
    let addr = base.strip_prefix("http://").unwrap();
    let (s, body) = get(addr, addr, "/api/run", "");
    assert_eq!(s, 403, "{body}");
    assert!(body.contains("access token required"));
    let (s, body) = get(addr, addr, &format!("/?token={token}"), "");
    assert_eq!(s, 200);
    let cookie = body
        .lines()
        .find_map(|l| l.strip_prefix("set-cookie: "))
        .expect("the token is kept in a cookie")
        .split(';')
        .next()
        .unwrap()
        .to_string();
    assert!(body.contains("content-security-policy: "), "{body}");
    let (s, _) = get(addr, addr, "/api/run", &format!("Cookie: {cookie}\r\n"));
    assert_eq!(s, 200);
    let (s, body) = get(addr, "evil.example", &format!("/api/run?token={token}"), "");
    assert_eq!(s, 403);
    assert!(body.contains("evil.example"));
}

#[test]
fn no_token_is_for_loopback_only() {
    let server = serve(&["--no-token"]);
    let base = server.url.trim_end_matches('/');
    assert!(!server.url.contains("token"), "{}", server.url);
    let addr = base.strip_prefix("http://").unwrap();
    assert_eq!(get(addr, addr, "/api/run", "").0, 200);
    let out = Command::new(env!("CARGO_BIN_EXE_perfscape"))
        .args([
            "serve",
            "/nonexistent",
            "--no-open",
            "--no-token",
            "--bind",
            "0.0.0.0",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("without an access token"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A dashboard's derived metric is added to the run it fits, and reported in the dashboard of
/// a run it does not fit, which is still served.
#[test]
fn a_dashboards_derived_metric_is_added_or_said_not_to_fit() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("serve-derive");
    std::fs::create_dir_all(&dir).unwrap();
    let board = dir.join("d.toml");
    std::fs::write(
        &board,
        "derive = [\"Per call = TIME / 2\", \"Off CPU = TIME - CPU_TIME\"]\n[[panel]]\nview = \"ranked\"\n",
    )
    .unwrap();
    let s = serve(&["--no-token", "--dashboard", board.to_str().unwrap()]);
    let addr = s.url.trim_start_matches("http://").trim_end_matches('/');
    let (status, run) = get(addr, addr, "/api/run", "");
    assert_eq!(status, 200);
    // The example has TIME only: the first fits, the second does not.
    assert!(run.contains(r#""name":"Per call""#), "{run}");
    assert!(!run.contains(r#""name":"Off CPU""#), "{run}");
    let (status, d) = get(addr, addr, "/api/dashboard/0", "");
    assert_eq!(status, 200);
    assert!(
        d.contains("not computed for this run: derived metric `Off CPU`")
            && d.contains("no metric `CPU_TIME`"),
        "{d}"
    );
    assert!(d.contains(r#""view":"ranked""#), "{d}");
}
