//! The listener's I/O: a small tokio runtime ([`WORKER_THREADS`] threads) polls every
//! producer's socket, so that a thousand producers (or a thousand idle connections) cost a
//! thousand tasks, not a thousand threads. Each connection is a task that reads its socket
//! (at most [`READ_BYTES`] at a time, into its worker thread's buffer), feeds the bytes to its
//! [`Conn`] state machine, writes the error records back on the connection and queues the
//! messages for the engine.
//!
//! # Backpressure
//! The queue to the engine is bounded ([`super::StreamOptions::queue_reads`] messages). When it
//! is full, a connection hands its message to one of at most [`BLOCKING_THREADS`] threads that
//! wait for room, and reads nothing more from its socket until the message is queued: a
//! producer faster than the engine waits on its socket, and at most one message per
//! connection waits outside the queue.

use super::Bound;
use super::connection::{Conn, READ_BYTES, Shared, ToEngine};
use super::record::Reply;
use std::cell::RefCell;
use std::io::ErrorKind;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{SyncSender, TrySendError};
use std::time::Duration;

/// Threads polling the sockets and parsing their records.
pub(crate) const WORKER_THREADS: usize = 2;

/// Threads waiting for room in the engine's queue on behalf of connections (see the module
/// documentation).
pub(crate) const BLOCKING_THREADS: usize = 2;

/// How long an error record may take to be written back before it is dropped.
const WRITE_TIMEOUT: Duration = Duration::from_secs(1);

/// How often the accept loop looks whether the run stopped.
const STOP_POLL: Duration = Duration::from_millis(100);

/// The listener's runtime (built before its thread starts, so that a failure is an error of
/// `listen`).
pub(crate) fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(WORKER_THREADS)
        .max_blocking_threads(BLOCKING_THREADS)
        .thread_name("perfscape-stream-io")
        .enable_io()
        .enable_time()
        .build()
}

thread_local! {
    /// The buffer a worker thread reads sockets into (one per thread, not per connection).
    static CHUNK: RefCell<Vec<u8>> = RefCell::new(vec![0; READ_BYTES]);
}

/// Accepts and serves connections until the run stops, then closes them all (and removes
/// the Unix socket's file).
pub(crate) fn run(
    runtime: tokio::runtime::Runtime,
    bound: Bound,
    shared: &Arc<Shared>,
    to_engine: SyncSender<ToEngine>,
) {
    #[cfg(unix)]
    let path = match &bound {
        Bound::Unix(_, p) => Some(p.clone()),
        Bound::Tcp(_) => None,
    };
    runtime.block_on(accept(bound, shared.clone(), to_engine));
    runtime.shutdown_timeout(Duration::from_secs(1));
    #[cfg(unix)]
    if let Some(p) = path {
        let _ = std::fs::remove_file(p);
    }
}

enum Listener {
    Tcp(tokio::net::TcpListener),
    #[cfg(unix)]
    Unix(tokio::net::UnixListener, String),
}

impl Listener {
    fn new(bound: Bound) -> std::io::Result<Self> {
        Ok(match bound {
            Bound::Tcp(l) => {
                l.set_nonblocking(true)?;
                Listener::Tcp(tokio::net::TcpListener::from_std(l)?)
            }
            #[cfg(unix)]
            Bound::Unix(l, path) => {
                l.set_nonblocking(true)?;
                let name = format!("unix {}", path.display());
                Listener::Unix(tokio::net::UnixListener::from_std(l)?, name)
            }
        })
    }

    async fn accept(&self) -> std::io::Result<(Stream, String)> {
        match self {
            Listener::Tcp(l) => l.accept().await.map(|(s, peer)| {
                let _ = s.set_nodelay(true);
                (Stream::Tcp(s), format!("tcp {peer}"))
            }),
            #[cfg(unix)]
            Listener::Unix(l, name) => l.accept().await.map(|(s, _)| (Stream::Unix(s), name.clone())),
        }
    }
}

/// A producer's socket.
enum Stream {
    Tcp(tokio::net::TcpStream),
    #[cfg(unix)]
    Unix(tokio::net::UnixStream),
}

impl Stream {
    async fn readable(&self) -> std::io::Result<()> {
        match self {
            Stream::Tcp(s) => s.readable().await,
            #[cfg(unix)]
            Stream::Unix(s) => s.readable().await,
        }
    }

    fn try_read(&self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.try_read(buf),
            #[cfg(unix)]
            Stream::Unix(s) => s.try_read(buf),
        }
    }

    async fn writable(&self) -> std::io::Result<()> {
        match self {
            Stream::Tcp(s) => s.writable().await,
            #[cfg(unix)]
            Stream::Unix(s) => s.writable().await,
        }
    }

    fn try_write(&self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.try_write(buf),
            #[cfg(unix)]
            Stream::Unix(s) => s.try_write(buf),
        }
    }

    /// Writes all of `bytes` within [`WRITE_TIMEOUT`]; what is left then is dropped (a
    /// producer that does not read its error records does not hold the listener).
    async fn write_all(&self, mut bytes: &[u8]) {
        let write = async {
            while !bytes.is_empty() {
                match self.try_write(bytes) {
                    Ok(0) => return,
                    Ok(n) => bytes = &bytes[n..],
                    Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => {
                        if self.writable().await.is_err() {
                            return;
                        }
                    }
                    Err(_) => return,
                }
            }
        };
        let _ = tokio::time::timeout(WRITE_TIMEOUT, write).await;
    }
}

/// Counts a connection as open while it lives.
struct Open(Arc<AtomicUsize>);

impl Drop for Open {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The accept loop: one task per connection; beyond `max_connections`, a connection is
/// answered with an error record and closed.
async fn accept(bound: Bound, shared: Arc<Shared>, to_engine: SyncSender<ToEngine>) {
    let Ok(listener) = Listener::new(bound) else {
        return;
    };
    let open = Arc::new(AtomicUsize::new(0));
    let max = shared.opts.max_connections;
    while !shared.stopping.load(Ordering::Relaxed) {
        let (stream, peer) = match tokio::time::timeout(STOP_POLL, listener.accept()).await {
            Err(_) => continue,
            Ok(Ok(c)) => c,
            Ok(Err(_)) => {
                // Out of file descriptors and the like: try again shortly.
                tokio::time::sleep(Duration::from_millis(1)).await;
                continue;
            }
        };
        if open.load(Ordering::Relaxed) >= max {
            tokio::spawn(async move {
                let reply = Reply::Error {
                    offset: 0,
                    message: format!("the server has {max} producers connected, its limit; try again later"),
                };
                let mut line = serde_json::to_vec(&reply).unwrap_or_default();
                line.push(b'\n');
                stream.write_all(&line).await;
            });
            continue;
        }
        open.fetch_add(1, Ordering::Relaxed);
        let guard = Open(open.clone());
        tokio::spawn(serve(stream, peer, shared.clone(), to_engine.clone(), guard));
    }
}

/// Serves one producer until it disconnects (or its hello is refused).
async fn serve(
    stream: Stream,
    peer: String,
    shared: Arc<Shared>,
    to_engine: SyncSender<ToEngine>,
    _open: Open,
) {
    let mut conn = Conn::new(peer);
    let (mut replies, mut out) = (Vec::new(), Vec::new());
    loop {
        if stream.readable().await.is_err() {
            break;
        }
        let read = CHUNK.with_borrow_mut(|chunk| match stream.try_read(chunk) {
            Ok(0) => Some(false),
            Ok(n) => Some(conn.feed(&chunk[..n], &shared, &mut replies, &mut out)),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => None,
            Err(_) => Some(false),
        });
        let Some(keep) = read else { continue };
        if !replies.is_empty() {
            stream.write_all(&replies).await;
            replies.clear();
        }
        if !send(&to_engine, &mut out).await {
            return;
        }
        if !keep {
            break;
        }
    }
    conn.close(&shared, &mut replies, &mut out);
    if !replies.is_empty() {
        stream.write_all(&replies).await;
    }
    send(&to_engine, &mut out).await;
}

/// Queues `out` for the engine, in order, waiting for room when the queue is full (see the
/// module documentation). False when the engine is gone.
async fn send(to_engine: &SyncSender<ToEngine>, out: &mut Vec<ToEngine>) -> bool {
    for m in out.drain(..) {
        match to_engine.try_send(m) {
            Ok(()) => {}
            Err(TrySendError::Disconnected(_)) => return false,
            Err(TrySendError::Full(m)) => {
                let tx = to_engine.clone();
                match tokio::task::spawn_blocking(move || tx.send(m)).await {
                    Ok(Ok(())) => {}
                    _ => return false,
                }
            }
        }
    }
    true
}
