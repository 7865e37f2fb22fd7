//! One producer's connection: its bytes cut into records, each record parsed and checked
//! against what the producer said before (hello first, exits matching enters, time never
//! going back), refused records answered with an error record, accepted ones passed to the
//! engine. Runs on its own thread; blocking reads with a timeout so that a stop is seen.

use super::StreamOptions;
use super::record::{PROTOCOL_VERSION, Record, Reply, parse_record};
use perfscape_model::{Metric, ThreadId};
use std::collections::HashSet;
use std::io::{ErrorKind, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::SyncSender;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// Errors reported per connection as events; more are counted and summed up at the end.
const REPORTED_ERRORS: usize = 20;

/// What a connection tells the engine.
#[derive(Debug)]
pub(crate) enum ToEngine {
    /// A producer said hello: its thread and the metrics of its explicit samples.
    Hello {
        thread: ThreadId,
        producer: String,
        metrics: Arc<Vec<Metric>>,
    },
    /// Accepted records of `thread`, in order (those of one read from the socket: one
    /// message per read, not per record, keeps the queue's wake-ups few).
    Records { thread: ThreadId, records: Vec<Record> },
    /// A refused record (already answered on the connection).
    Error {
        producer: String,
        offset: u64,
        message: String,
    },
    /// The connection closed; `ended` when the thread sent its end record.
    Closed {
        thread: Option<ThreadId>,
        producer: String,
        ended: bool,
        /// Time of the thread's last record, ns (where an unended thread is ended).
        last_t_ns: i64,
        /// Errors not reported one by one.
        unreported: usize,
    },
}

/// State shared by the connections of one listener.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) opts: StreamOptions,
    /// The token producers must give (non-loopback listeners).
    pub(crate) token: Option<String>,
    pub(crate) stopping: AtomicBool,
    /// Threads streaming now, and threads that ended (their records are refused).
    pub(crate) threads: Mutex<(HashSet<ThreadId>, HashSet<ThreadId>)>,
    pub(crate) to_engine: SyncSender<ToEngine>,
}

/// A socket a producer connected on.
pub(crate) trait Socket: Read + Write + Send {
    /// Sets the read and write timeouts.
    fn timeouts(&self, read: Duration, write: Duration) -> std::io::Result<()>;
}

impl Socket for std::net::TcpStream {
    fn timeouts(&self, read: Duration, write: Duration) -> std::io::Result<()> {
        self.set_read_timeout(Some(read))?;
        self.set_write_timeout(Some(write))
    }
}

#[cfg(unix)]
impl Socket for std::os::unix::net::UnixStream {
    fn timeouts(&self, read: Duration, write: Duration) -> std::io::Result<()> {
        self.set_read_timeout(Some(read))?;
        self.set_write_timeout(Some(write))
    }
}

/// An in-memory producer: reads `input`, keeps what is written (for `ingest_bytes`).
pub(crate) struct MemSocket {
    input: std::io::Cursor<Vec<u8>>,
    output: Vec<u8>,
}

impl MemSocket {
    pub(crate) fn new(input: Vec<u8>) -> Self {
        Self {
            input: std::io::Cursor::new(input),
            output: Vec::new(),
        }
    }

    pub(crate) fn written(&self) -> &[u8] {
        &self.output
    }
}

impl Read for MemSocket {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.input.read(buf)
    }
}

impl Write for MemSocket {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.output.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Socket for &mut MemSocket {
    fn timeouts(&self, _read: Duration, _write: Duration) -> std::io::Result<()> {
        Ok(())
    }
}

/// The checks a producer's records must pass, in the order they came.
#[derive(Debug, Default)]
struct Check {
    thread: Option<ThreadId>,
    metrics: usize,
    stack: Vec<String>,
    regions: HashSet<String>,
    last_t_ns: i64,
    ended: bool,
}

/// Why a record was refused; `close` ends the connection (a bad hello).
struct Refused {
    message: String,
    close: bool,
}

fn refuse(message: impl Into<String>) -> Result<(), Refused> {
    Err(Refused {
        message: message.into(),
        close: false,
    })
}

impl Check {
    fn check(&mut self, r: &Record, shared: &Shared) -> Result<(), Refused> {
        if let Record::Hello { .. } = r {
        } else if self.thread.is_none() {
            return refuse("expected a hello record first (type `hello`, with `protocol` and `rank`)");
        } else if self.ended {
            return refuse("the thread sent its end record: no record may follow");
        }
        if let Some(t) = r.t_ns() {
            if t < self.last_t_ns {
                return refuse(format!(
                    "t_ns {t} is earlier than the previous record's {}: a thread's records must come in time order",
                    self.last_t_ns
                ));
            }
        }
        let opts = &shared.opts;
        match r {
            Record::Hello {
                protocol,
                rank,
                thread,
                metrics,
                token,
                ..
            } => {
                let close = |message: String| Err(Refused { message, close: true });
                if self.thread.is_some() {
                    return refuse("a second hello on the same connection");
                }
                if *protocol != PROTOCOL_VERSION {
                    return close(format!(
                        "protocol {protocol} is not spoken here; this server speaks protocol {PROTOCOL_VERSION}"
                    ));
                }
                if let Some(want) = &shared.token
                    && token.as_deref() != Some(want.as_str())
                {
                    return close(
                        "the hello's `token` is missing or wrong; this listener requires the server's token"
                            .into(),
                    );
                }
                if metrics.as_ref().is_some_and(|m| m.is_empty()) {
                    return close(
                        "`metrics` is empty; name at least one metric, or leave it out for TIME".into(),
                    );
                }
                let id = ThreadId::new(*rank, 0, *thread);
                let mut threads = shared.threads.lock().unwrap_or_else(PoisonError::into_inner);
                if threads.0.contains(&id) {
                    return close(format!("thread {id} is already streaming on another connection"));
                }
                if threads.1.contains(&id) {
                    return close(format!("thread {id} already ended; a thread streams once"));
                }
                threads.0.insert(id);
                self.thread = Some(id);
                self.metrics = metrics.as_ref().map_or(1, Vec::len);
            }
            Record::Enter { region, .. } => {
                if self.stack.len() >= opts.max_depth {
                    return refuse(format!("more than {} regions open at once", opts.max_depth));
                }
                if !self.regions.contains(region) {
                    if self.regions.len() >= opts.max_regions {
                        return refuse(format!(
                            "more than {} distinct regions on one thread",
                            opts.max_regions
                        ));
                    }
                    self.regions.insert(region.clone());
                }
                self.stack.push(region.clone());
            }
            Record::Exit { region, .. } => match self.stack.last() {
                Some(top) if top == region => {
                    self.stack.pop();
                }
                Some(top) => {
                    return refuse(format!(
                        "exit of `{region}`, but the innermost open region is `{top}`"
                    ));
                }
                None => return refuse(format!("exit of `{region}`, but no region is open")),
            },
            Record::Counter { value, name, .. } => {
                if !value.is_finite() {
                    return refuse(format!("counter `{name}`: value {value} is not a finite number"));
                }
            }
            Record::Message { to, from, .. } => {
                if to.is_some() == from.is_some() {
                    return refuse("a message needs exactly one of `to` (a send) and `from` (a receive)");
                }
            }
            Record::Sample {
                events, user_events, ..
            } => {
                if user_events.is_some() && events.is_none() {
                    return refuse("`user_events` come with `events` (an explicit sample) only");
                }
                for e in events.iter().flatten() {
                    if e.exclusive.len() != self.metrics || e.inclusive.len() != self.metrics {
                        return refuse(format!(
                            "event `{}`: {} exclusive and {} inclusive values, expected one per metric of the hello ({})",
                            e.name,
                            e.exclusive.len(),
                            e.inclusive.len(),
                            self.metrics
                        ));
                    }
                    let values = [e.calls, e.subcalls]
                        .into_iter()
                        .chain(e.exclusive.iter().copied());
                    if values.chain(e.inclusive.iter().copied()).any(|v| !v.is_finite()) {
                        return refuse(format!("event `{}`: a value is not a finite number", e.name));
                    }
                }
                for u in user_events.iter().flatten() {
                    if ![u.count, u.max, u.min, u.mean, u.sum_squares]
                        .iter()
                        .all(|v| v.is_finite())
                    {
                        return refuse(format!("user event `{}`: a value is not a finite number", u.name));
                    }
                }
            }
            Record::End { .. } => {
                self.ended = true;
                self.stack.clear();
            }
        }
        if let Some(t) = r.t_ns() {
            self.last_t_ns = t;
        }
        Ok(())
    }
}

/// Sends the accepted records of one read to the engine; false when the engine is gone.
fn flush(batch: &mut Vec<Record>, thread: Option<ThreadId>, shared: &Shared) -> bool {
    match thread {
        Some(thread) if !batch.is_empty() => shared
            .to_engine
            .send(ToEngine::Records {
                thread,
                records: std::mem::take(batch),
            })
            .is_ok(),
        _ => true,
    }
}

/// Serves one producer until it disconnects or the listener stops.
pub(crate) fn serve<S: Socket>(mut socket: S, peer: String, shared: &Shared) {
    let _ = socket.timeouts(Duration::from_millis(200), Duration::from_secs(1));
    let max = shared.opts.max_record_bytes;
    let mut check = Check::default();
    let mut producer = peer.clone();
    let mut buf: Vec<u8> = Vec::with_capacity(64 * 1024);
    // Offset of buf[0] in the connection's bytes; a record longer than `max` is skipped up
    // to its newline (`skipping` holds its first byte's offset).
    let mut base: u64 = 0;
    let mut skipping: Option<u64> = None;
    let mut errors = 0usize;
    let mut chunk = vec![0u8; 64 * 1024];
    let mut batch: Vec<Record> = Vec::new();
    let report = |socket: &mut S, errors: &mut usize, producer: &str, offset: u64, message: String| {
        let reply = Reply::Error {
            offset,
            message: message.clone(),
        };
        if let Ok(mut line) = serde_json::to_vec(&reply) {
            line.push(b'\n');
            let _ = socket.write_all(&line);
        }
        *errors += 1;
        if *errors <= REPORTED_ERRORS {
            let _ = shared.to_engine.send(ToEngine::Error {
                producer: producer.to_string(),
                offset,
                message,
            });
        }
    };
    'read: loop {
        if shared.stopping.load(Ordering::Relaxed) {
            break;
        }
        let n = match socket.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                ) =>
            {
                continue;
            }
            Err(_) => break,
        };
        buf.extend_from_slice(&chunk[..n]);
        let mut start = 0usize;
        while let Some(nl) = memchr::memchr(b'\n', &buf[start..]) {
            let end = start + nl;
            let offset = base + start as u64;
            if let Some(first) = skipping.take() {
                let message = format!(
                    "record of {} bytes is longer than the limit of {max} bytes",
                    offset + nl as u64 - first
                );
                report(&mut socket, &mut errors, &producer, first, message);
            } else if end - start > max {
                let message = format!(
                    "record of {} bytes is longer than the limit of {max} bytes",
                    end - start
                );
                report(&mut socket, &mut errors, &producer, offset, message);
            } else {
                let line = &buf[start..end];
                if !line.iter().all(u8::is_ascii_whitespace) {
                    match parse_record(line) {
                        Err(message) => report(&mut socket, &mut errors, &producer, offset, message),
                        Ok(record) => match check.check(&record, shared) {
                            Err(r) => {
                                report(&mut socket, &mut errors, &producer, offset, r.message);
                                if r.close {
                                    buf.clear();
                                    flush(&mut batch, check.thread, shared);
                                    break 'read;
                                }
                            }
                            Ok(()) => {
                                let Some(thread) = check.thread else { continue };
                                if let Record::Hello { metrics, .. } = &record {
                                    producer = format!("{peer} (thread {thread})");
                                    let names = metrics.clone().unwrap_or_else(|| vec!["TIME".into()]);
                                    let hello = ToEngine::Hello {
                                        thread,
                                        producer: producer.clone(),
                                        metrics: Arc::new(names.iter().map(Metric::tau).collect()),
                                    };
                                    if shared.to_engine.send(hello).is_err() {
                                        break 'read;
                                    }
                                } else {
                                    batch.push(record);
                                }
                            }
                        },
                    }
                }
            }
            start = end + 1;
        }
        if !flush(&mut batch, check.thread, shared) {
            break;
        }
        buf.drain(..start);
        base += start as u64;
        if buf.len() > max {
            skipping.get_or_insert(base);
            base += buf.len() as u64;
            buf.clear();
        }
    }
    if let Some(first) = skipping {
        report(
            &mut socket,
            &mut errors,
            &producer,
            first,
            format!("connection closed inside an over-long record; the record is lost (limit {max} bytes)"),
        );
    } else if !buf.is_empty() && !buf.iter().all(u8::is_ascii_whitespace) {
        let message = format!(
            "connection closed inside a record ({} bytes without a newline); that record is lost",
            buf.len()
        );
        report(&mut socket, &mut errors, &producer, base, message);
    }
    if let Some(t) = check.thread {
        let mut threads = shared.threads.lock().unwrap_or_else(PoisonError::into_inner);
        threads.0.remove(&t);
        threads.1.insert(t);
    }
    let _ = shared.to_engine.send(ToEngine::Closed {
        thread: check.thread,
        producer,
        ended: check.ended,
        last_t_ns: check.last_t_ns,
        unreported: errors.saturating_sub(REPORTED_ERRORS),
    });
}
