//! On-line ingest: running programs stream their records to perfscape over a socket, and the
//! records are integrated as TAU snapshot files are in live mode.
//!
//! [`listen`] binds a TCP address or a Unix socket and returns a [`LiveRun`]: the same
//! handle, events and growing series as [`crate::watch`], so a server follows a streamed run
//! exactly as it follows a watched directory. Each producer connection is one thread of the
//! program (an MPI rank's main thread, or one of its threads) speaking the perfscape stream
//! protocol ([`record`]; the specification is `STREAM.md`): a hello, then
//! enter/exit, counter, message and sample records as line-delimited JSON. The records of a
//! thread are turned into its profile by TAU's rules (see `thread_profile`), taken at each
//! `sample` record as a [`perfscape_model::ThreadSample`] and given to the same
//! [`perfscape_model::Integrator`] that integrates TAU snapshots: samples are matched across
//! threads by name, late and missing threads are reported, parts arriving after their
//! sample went out amend it.
//!
//! # Bad input
//! A record that is not valid JSON, not a record of the protocol, longer than
//! [`StreamOptions::max_record_bytes`], or that contradicts what the producer sent before
//! (an exit of a region that is not the innermost open one, time going back, no hello) is
//! answered on its connection with an error record (`{"type":"error","offset":…,
//! "message":…}`, `offset` = its first byte in what the connection sent), reported as a
//! [`LiveEvent::ProducerError`], and dropped; the connection and every other producer go
//! on. A producer that disconnects mid-record loses only that record; a thread whose
//! producer disconnects without an `end` record is ended at its last record, its profile
//! kept.
//!
//! # Threads
//! A small tokio runtime of the listener's own (`listener.rs`: 2 worker threads) polls every
//! connection; each connection is a task feeding its bytes to a state machine
//! (`connection.rs`) and an idle connection costs no thread. One more thread accepts
//! connections, and one (the engine) integrates.
//!
//! # Bounds
//! Each connection buffers at most one record and one socket read (64 KiB); the accepted
//! records of each read go to the engine as one message through a queue of
//! [`StreamOptions::queue_reads`] messages (a producer faster than the engine waits on its
//! socket: its connection reads nothing more until its message is queued); the number of
//! connections, of open regions and of distinct regions per thread are limited. The series
//! keeps every integrated sample, as in live mode.

mod connection;
mod engine;
mod listener;
pub mod record;
mod thread_profile;

use crate::event::LiveEvent;
use crate::options::{LiveError, LiveOptions};
use crate::series_handle::SeriesHandle;
use crate::watch::{LiveRun, StopHandle};
use connection::{Shared, ToEngine};
use perfscape_model::{Alignment, Integrator, IntegratorOptions};
use std::collections::HashSet;
use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock};

/// Where to listen: `tcp://HOST:PORT` (port 0 picks a free port) or a Unix socket path
/// (`unix:PATH`, or any path containing `/`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ListenAddr {
    /// A TCP address.
    Tcp(SocketAddr),
    /// A Unix domain socket (created; it must not exist yet).
    Unix(PathBuf),
}

impl std::str::FromStr for ListenAddr {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        if let Some(rest) = s.strip_prefix("tcp://") {
            use std::net::ToSocketAddrs;
            let addr = rest
                .to_socket_addrs()
                .map_err(|e| format!("`{s}`: expected tcp://HOST:PORT ({e})"))?
                .next()
                .ok_or_else(|| format!("`{s}`: the host has no address"))?;
            return Ok(ListenAddr::Tcp(addr));
        }
        if let Some(rest) = s.strip_prefix("unix:") {
            let path = rest.trim_start_matches("//");
            if path.is_empty() {
                return Err(format!("`{s}`: expected unix:PATH"));
            }
            return Ok(ListenAddr::Unix(PathBuf::from(path)));
        }
        if s.contains('/') {
            return Ok(ListenAddr::Unix(PathBuf::from(s)));
        }
        Err(format!(
            "`{s}`: expected tcp://HOST:PORT (e.g. tcp://127.0.0.1:7700) or a Unix socket path (unix:/tmp/perfscape.sock)"
        ))
    }
}

/// How a stream listener works.
#[derive(Clone, Debug, PartialEq)]
pub struct StreamOptions {
    /// How samples are integrated: `max_wait`, `thread_grace` and `expected_threads` apply
    /// to streams as to watched directories (a new producer's hello counts as a thread's
    /// first file). Default: live mode's.
    pub live: LiveOptions,
    /// The longest record accepted, bytes (longer ones are refused). Default 1 MiB.
    pub max_record_bytes: usize,
    /// Connections open at once; more are answered with an error and closed. Default 4,096.
    pub max_connections: usize,
    /// Regions open at once on one thread. Default 512.
    pub max_depth: usize,
    /// Distinct region names on one thread. Default 65,536.
    pub max_regions: usize,
    /// Messages queued between the connections and the engine, each the accepted records of
    /// one socket read (at most 64 KiB of input). Default 1,024.
    pub queue_reads: usize,
    /// The token producers give in their hello. Required (listening fails without it) when
    /// the TCP address is not loopback, as for the HTTP side; not asked on loopback and Unix
    /// sockets (whose file permissions guard them).
    pub token: Option<String>,
}

impl Default for StreamOptions {
    fn default() -> Self {
        Self {
            live: LiveOptions::default(),
            max_record_bytes: 1 << 20,
            max_connections: 4096,
            max_depth: 512,
            max_regions: 65_536,
            queue_reads: 1024,
            token: None,
        }
    }
}

/// One producer's bytes through the listener's whole path, without a socket: cut into
/// records, parsed and checked as on a connection (refused records answered), then handled as
/// by the engine (the thread's profile, its samples integrated). Returns the replies the
/// producer would have received and the events and series that result. For tests and fuzzing
/// (`fuzz/fuzz_targets/stream.rs`); the input is fed in pieces of 64 KiB, as the listener
/// reads a socket.
pub fn ingest_bytes(
    bytes: &[u8],
    opts: &StreamOptions,
) -> (Vec<record::Reply>, Vec<LiveEvent>, SeriesHandle) {
    let shared = Shared {
        opts: opts.clone(),
        token: opts.token.clone(),
        stopping: AtomicBool::new(false),
        threads: Mutex::new((HashSet::new(), HashSet::new())),
    };
    let mut conn = connection::Conn::new("memory".into());
    let (mut replies, mut msgs) = (Vec::new(), Vec::new());
    for piece in bytes.chunks(connection::READ_BYTES) {
        if !conn.feed(piece, &shared, &mut replies, &mut msgs) {
            break;
        }
    }
    conn.close(&shared, &mut replies, &mut msgs);
    let series = new_series(opts);
    let events = engine::handle_all(msgs, &series, std::time::Instant::now());
    let replies = replies
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .filter_map(|l| serde_json::from_slice(l).ok())
        .collect();
    (replies, events, series)
}

/// An empty series whose samples are matched across threads by name, as TAU snapshots are.
fn new_series(opts: &StreamOptions) -> SeriesHandle {
    SeriesHandle::new(Integrator::new(IntegratorOptions {
        alignment: Alignment::ByName,
        max_wait: opts.live.max_wait,
        window: opts.live.sample_window,
    }))
}

/// A bound listener: the address it listens on (the port chosen for port 0) as
/// `tcp://HOST:PORT` or the socket path.
#[derive(Debug)]
pub(crate) enum Bound {
    Tcp(TcpListener),
    #[cfg(unix)]
    Unix(std::os::unix::net::UnixListener, PathBuf),
}

/// Binds `addr` and starts following the producers that connect (see the module
/// documentation). The returned run's [`LiveRun::dir`] is the address (`tcp://…` with the
/// actual port, or the socket path). Errors: the address cannot be bound, a Unix socket path
/// that exists, a non-loopback TCP address without [`StreamOptions::token`].
pub fn listen(addr: &ListenAddr, opts: &StreamOptions) -> Result<LiveRun, LiveError> {
    let io = |path: String| {
        move |source| LiveError::Io {
            path: PathBuf::from(path),
            source,
        }
    };
    let (bound, name, token) = match addr {
        ListenAddr::Tcp(a) => {
            if !a.ip().is_loopback() && opts.token.is_none() {
                return Err(LiveError::NoSeries {
                    path: PathBuf::from(format!("tcp://{a}")),
                    detail: "listening beyond loopback needs a token that producers give in their hello"
                        .into(),
                });
            }
            let l = bind_tcp(*a).map_err(io(format!("tcp://{a}")))?;
            let local = l.local_addr().map_err(io(format!("tcp://{a}")))?;
            let token = if a.ip().is_loopback() {
                None
            } else {
                opts.token.clone()
            };
            (Bound::Tcp(l), format!("tcp://{local}"), token)
        }
        #[cfg(unix)]
        ListenAddr::Unix(p) => {
            let l = bind_unix(p).map_err(io(p.display().to_string()))?;
            (Bound::Unix(l, p.clone()), p.display().to_string(), None)
        }
        #[cfg(not(unix))]
        ListenAddr::Unix(p) => {
            return Err(LiveError::NotADirectory(p.clone()));
        }
    };
    let (to_engine, from_conns) = mpsc::sync_channel::<ToEngine>(opts.queue_reads.max(1));
    let shared = Arc::new(Shared {
        opts: opts.clone(),
        token,
        stopping: AtomicBool::new(false),
        threads: Mutex::new((HashSet::new(), HashSet::new())),
    });
    let runtime = listener::runtime().map_err(LiveError::Thread)?;
    let series = new_series(opts);
    let (etx, erx) = mpsc::channel::<LiveEvent>();
    let finished = Arc::new(OnceLock::new());
    let accept_shared = shared.clone();
    std::thread::Builder::new()
        .name("perfscape-stream-accept".into())
        .spawn(move || listener::run(runtime, bound, &accept_shared, to_engine))
        .map_err(LiveError::Thread)?;
    let (eseries, estop, done) = (series.clone(), shared.clone(), finished.clone());
    let worker = std::thread::Builder::new()
        .name("perfscape-stream".into())
        .spawn(move || {
            engine::run(
                &from_conns,
                &eseries,
                &estop.opts.live,
                &estop.stopping,
                &etx,
                &done,
            )
        })
        .map_err(LiveError::Thread)?;
    let stop = StopHandle::new(move || shared.stopping.store(true, Ordering::Relaxed));
    Ok(LiveRun::from_parts(
        PathBuf::from(name),
        series,
        erx,
        stop,
        worker,
        finished,
    ))
}

/// A TCP listener with a backlog of [`BACKLOG`] connections (the standard library's 128
/// overflows when a thousand ranks connect at once: the kernel then drops handshakes and
/// producers stall).
fn bind_tcp(addr: SocketAddr) -> std::io::Result<TcpListener> {
    use socket2::{Domain, Socket, Type};
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, None)?;
    socket.set_reuse_address(true)?;
    socket.bind(&addr.into())?;
    socket.listen(BACKLOG)?;
    Ok(socket.into())
}

/// A Unix socket listener with a backlog of [`BACKLOG`] connections.
#[cfg(unix)]
fn bind_unix(path: &std::path::Path) -> std::io::Result<std::os::unix::net::UnixListener> {
    use socket2::{Domain, SockAddr, Socket, Type};
    let socket = Socket::new(Domain::UNIX, Type::STREAM, None)?;
    socket.bind(&SockAddr::unix(path)?)?;
    socket.listen(BACKLOG)?;
    Ok(std::os::fd::OwnedFd::from(socket).into())
}

/// Connections waiting to be accepted (capped by the system's `somaxconn`).
const BACKLOG: i32 = 4096;
