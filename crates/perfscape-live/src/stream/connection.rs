//! One producer's connection as a state machine fed with the byte slices read from its
//! socket ([`Conn::feed`]): its bytes cut into records, each record parsed and checked
//! against what the producer said before (hello first, exits matching enters, time never
//! going back), refused records answered with an error record, accepted ones passed to the
//! engine. No I/O here: the listener (`listener.rs`) reads the sockets, writes the replies
//! and queues the messages; `ingest_bytes` feeds it from memory.

use super::StreamOptions;
use super::record::{PROTOCOL_VERSION, Record, Reply, parse_record};
use perfscape_model::{Metric, ThreadId};
use std::collections::HashSet;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, PoisonError};

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

/// Bytes of input handled at a time (the listener reads at most this much per socket read;
/// `ingest_bytes` feeds its input in pieces of this size).
pub(crate) const READ_BYTES: usize = 64 * 1024;

/// One producer's connection: the record it is in the middle of and what it said before.
/// Idle, it holds no buffer.
#[derive(Debug)]
pub(crate) struct Conn {
    /// The peer's address, as named in the server's log.
    peer: String,
    /// The peer and, after the hello, its thread.
    producer: String,
    check: Check,
    /// The bytes of the record not yet ended by a newline.
    buf: Vec<u8>,
    /// Offset of `buf[0]` in the connection's bytes.
    base: u64,
    /// A record longer than the limit is skipped up to its newline: its first byte's offset.
    skipping: Option<u64>,
    errors: usize,
}

impl Conn {
    /// A new connection from `peer` (e.g. `tcp 127.0.0.1:50000`).
    pub(crate) fn new(peer: String) -> Self {
        Self {
            producer: peer.clone(),
            peer,
            check: Check::default(),
            buf: Vec::new(),
            base: 0,
            skipping: None,
            errors: 0,
        }
    }

    /// Feeds the next bytes the producer sent. Error records to write back on the connection
    /// are appended to `replies` (line-delimited JSON), messages for the engine to `out`, in
    /// order (the accepted records of `bytes` as one message, last). Returns false when the
    /// connection must be closed (a refused hello); then [`Conn::close`] is still to be called.
    pub(crate) fn feed(
        &mut self,
        bytes: &[u8],
        shared: &Shared,
        replies: &mut Vec<u8>,
        out: &mut Vec<ToEngine>,
    ) -> bool {
        let mut batch = Vec::new();
        let (used, keep) = if self.buf.is_empty() {
            let r = self.lines(bytes, shared, replies, out, &mut batch);
            if r.1 {
                self.buf.extend_from_slice(&bytes[r.0..]);
            }
            r
        } else {
            let mut data = std::mem::take(&mut self.buf);
            data.extend_from_slice(bytes);
            let r = self.lines(&data, shared, replies, out, &mut batch);
            if r.1 {
                data.drain(..r.0);
                self.buf = data;
            }
            r
        };
        if let (Some(thread), false) = (self.check.thread, batch.is_empty()) {
            out.push(ToEngine::Records {
                thread,
                records: batch,
            });
        }
        if !keep {
            self.buf.clear();
            return false;
        }
        self.base += used as u64;
        let max = shared.opts.max_record_bytes;
        if self.buf.len() > max {
            self.skipping.get_or_insert(self.base);
            self.base += self.buf.len() as u64;
            self.buf = Vec::new();
        }
        true
    }

    /// Cuts the complete records out of `data` (which starts at `self.base`), handles each;
    /// returns the bytes used and false when the connection must close.
    fn lines(
        &mut self,
        data: &[u8],
        shared: &Shared,
        replies: &mut Vec<u8>,
        out: &mut Vec<ToEngine>,
        batch: &mut Vec<Record>,
    ) -> (usize, bool) {
        let max = shared.opts.max_record_bytes;
        let mut start = 0usize;
        while let Some(nl) = memchr::memchr(b'\n', &data[start..]) {
            let end = start + nl;
            let offset = self.base + start as u64;
            if let Some(first) = self.skipping.take() {
                let message = format!(
                    "record of {} bytes is longer than the limit of {max} bytes",
                    offset + nl as u64 - first
                );
                self.report(replies, out, first, message);
            } else if end - start > max {
                let message = format!(
                    "record of {} bytes is longer than the limit of {max} bytes",
                    end - start
                );
                self.report(replies, out, offset, message);
            } else {
                let line = &data[start..end];
                if !line.iter().all(u8::is_ascii_whitespace)
                    && !self.record(line, offset, shared, replies, out, batch)
                {
                    return (end + 1, false);
                }
            }
            start = end + 1;
        }
        (start, true)
    }

    /// Parses, checks and passes on one record; false when the connection must close.
    fn record(
        &mut self,
        line: &[u8],
        offset: u64,
        shared: &Shared,
        replies: &mut Vec<u8>,
        out: &mut Vec<ToEngine>,
        batch: &mut Vec<Record>,
    ) -> bool {
        let record = match parse_record(line) {
            Ok(r) => r,
            Err(message) => {
                self.report(replies, out, offset, message);
                return true;
            }
        };
        if let Err(r) = self.check.check(&record, shared) {
            self.report(replies, out, offset, r.message);
            return !r.close;
        }
        let Some(thread) = self.check.thread else {
            return true;
        };
        if let Record::Hello { metrics, .. } = &record {
            self.producer = format!("{} (thread {thread})", self.peer);
            let names = metrics.clone().unwrap_or_else(|| vec!["TIME".into()]);
            out.push(ToEngine::Hello {
                thread,
                producer: self.producer.clone(),
                metrics: Arc::new(names.iter().map(Metric::tau).collect()),
            });
        } else {
            batch.push(record);
        }
        true
    }

    /// Answers a refused record with an error record and reports it (the first
    /// [`REPORTED_ERRORS`] of the connection).
    fn report(&mut self, replies: &mut Vec<u8>, out: &mut Vec<ToEngine>, offset: u64, message: String) {
        let reply = Reply::Error {
            offset,
            message: message.clone(),
        };
        if serde_json::to_writer(&mut *replies, &reply).is_ok() {
            replies.push(b'\n');
        }
        self.errors += 1;
        if self.errors <= REPORTED_ERRORS {
            out.push(ToEngine::Error {
                producer: self.producer.clone(),
                offset,
                message,
            });
        }
    }

    /// The connection closed (the producer disconnected, or a refused hello): a record cut
    /// off is reported as lost, the thread is marked ended for the listener and the engine is
    /// told (`out`).
    pub(crate) fn close(mut self, shared: &Shared, replies: &mut Vec<u8>, out: &mut Vec<ToEngine>) {
        let max = shared.opts.max_record_bytes;
        if let Some(first) = self.skipping {
            self.report(
                replies,
                out,
                first,
                format!(
                    "connection closed inside an over-long record; the record is lost (limit {max} bytes)"
                ),
            );
        } else if !self.buf.is_empty() && !self.buf.iter().all(u8::is_ascii_whitespace) {
            let message = format!(
                "connection closed inside a record ({} bytes without a newline); that record is lost",
                self.buf.len()
            );
            let base = self.base;
            self.report(replies, out, base, message);
        }
        if let Some(t) = self.check.thread {
            let mut threads = shared.threads.lock().unwrap_or_else(PoisonError::into_inner);
            threads.0.remove(&t);
            threads.1.insert(t);
        }
        out.push(ToEngine::Closed {
            thread: self.check.thread,
            producer: self.producer,
            ended: self.check.ended,
            last_t_ns: self.check.last_t_ns,
            unreported: self.errors.saturating_sub(REPORTED_ERRORS),
        });
    }
}
