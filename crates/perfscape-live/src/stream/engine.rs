//! The streamed run's engine: one thread owns every thread's profile and the integrator;
//! the connections send it their checked records through a bounded queue (a producer
//! faster than the engine waits on its socket: memory stays bounded).

use super::connection::ToEngine;
use super::record::Record;
use super::thread_profile::{ThreadProfile, explicit_sample};
use crate::engine::report_integrated;
use crate::event::{FinishReason, LiveEvent};
use crate::options::LiveOptions;
use crate::series_handle::SeriesHandle;
use perfscape_model::{Metric, ThreadId, ThreadSample};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// One streamed thread.
struct Streamed {
    profile: ThreadProfile,
    metrics: Arc<Vec<Metric>>,
    ended: bool,
}

/// Runs the engine until `stopping` is set (or every connection and the listener are gone).
pub(crate) fn run(
    rx: &Receiver<ToEngine>,
    series: &SeriesHandle,
    opts: &LiveOptions,
    stopping: &AtomicBool,
    events: &Sender<LiveEvent>,
    finished: &Arc<OnceLock<FinishReason>>,
) {
    let mut threads: HashMap<ThreadId, Streamed> = HashMap::new();
    let mut out = Vec::new();
    let mut hold = Hold::default();
    loop {
        let first = match rx.recv_timeout(Duration::from_millis(25)) {
            Ok(m) => Some(m),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => break,
        };
        let now = Instant::now();
        // What is queued now, in one round (bounded, so that samples go out regularly).
        for m in first
            .into_iter()
            .chain(std::iter::from_fn(|| rx.try_recv().ok()).take(65_536))
        {
            if matches!(m, ToEngine::Hello { .. }) {
                hold.last_hello = Some(now);
            }
            handle(m, &mut threads, series, now, &mut out);
        }
        if !hold.holding(opts, threads.len(), now) {
            let mut integ = series.write();
            report_integrated(&mut integ, now, &mut out);
        }
        for e in out.drain(..) {
            let _ = events.send(e);
        }
        if stopping.load(Ordering::Relaxed) {
            break;
        }
    }
    // Stopped: what was queued is integrated, threads still streaming are ended.
    let now = Instant::now();
    while let Ok(m) = rx.try_recv() {
        handle(m, &mut threads, series, now, &mut out);
    }
    {
        let mut integ = series.write();
        for t in threads.keys() {
            integ.end_thread(*t);
        }
        report_integrated(&mut integ, now, &mut out);
    }
    let _ = finished.set(FinishReason::Stopped);
    out.push(LiveEvent::Finished {
        reason: FinishReason::Stopped,
    });
    for e in out.drain(..) {
        let _ = events.send(e);
    }
}

/// When samples are held back, as in live mode (see [`LiveOptions::thread_grace`] and
/// [`LiveOptions::expected_threads`]): producers that connect at about the same time are
/// all waited for, rather than added to the first samples as amendments.
#[derive(Default)]
struct Hold {
    last_hello: Option<Instant>,
    since: Option<Instant>,
}

impl Hold {
    fn holding(&mut self, opts: &LiveOptions, known: usize, now: Instant) -> bool {
        if opts.expected_threads.is_some_and(|n| known < n) {
            self.since.get_or_insert(now);
        }
        opts.holding(self.last_hello, known, self.since, now)
    }
}

/// Handles `msgs` as the engine thread would, all at the instant `now`, then integrates what
/// can be (for [`super::ingest_bytes`]).
pub(crate) fn handle_all(msgs: Vec<ToEngine>, series: &SeriesHandle, now: Instant) -> Vec<LiveEvent> {
    let mut threads = HashMap::new();
    let mut out = Vec::new();
    for m in msgs {
        handle(m, &mut threads, series, now, &mut out);
    }
    let mut integ = series.write();
    for t in threads.keys() {
        integ.end_thread(*t);
    }
    report_integrated(&mut integ, now, &mut out);
    out
}

fn push(series: &SeriesHandle, sample: ThreadSample, now: Instant, out: &mut Vec<LiveEvent>) {
    let (thread, name) = (sample.thread, sample.name.clone());
    if let Err(e) = series.write().push(sample, now) {
        out.push(LiveEvent::ProducerError {
            producer: format!("thread {thread}"),
            offset: 0,
            message: format!("sample `{name}` not integrated: {e}"),
        });
    }
}

fn handle(
    m: ToEngine,
    threads: &mut HashMap<ThreadId, Streamed>,
    series: &SeriesHandle,
    now: Instant,
    out: &mut Vec<LiveEvent>,
) {
    match m {
        ToEngine::Hello {
            thread,
            producer,
            metrics,
        } => {
            threads.entry(thread).or_insert_with(|| Streamed {
                profile: ThreadProfile::new(thread),
                metrics,
                ended: false,
            });
            series.write().expect_thread(thread);
            out.push(LiveEvent::ThreadAppeared {
                thread,
                path: PathBuf::from(producer),
            });
        }
        ToEngine::Error {
            producer,
            offset,
            message,
        } => out.push(LiveEvent::ProducerError {
            producer,
            offset,
            message,
        }),
        ToEngine::Records { thread, records } => {
            let Some(s) = threads.get_mut(&thread) else { return };
            for record in records {
                apply(thread, s, record, series, now, out);
            }
        }
        ToEngine::Closed {
            thread,
            producer,
            ended,
            last_t_ns,
            unreported,
        } => {
            if unreported > 0 {
                out.push(LiveEvent::ProducerError {
                    producer: producer.clone(),
                    offset: 0,
                    message: format!("{unreported} more records were refused (not reported one by one)"),
                });
            }
            let Some(thread) = thread else { return };
            let Some(s) = threads.get_mut(&thread) else { return };
            if !ended && !s.ended {
                // Nothing received is dropped: the thread's profile up to its last record
                // is its final sample.
                s.profile.close_all(last_t_ns);
                let sample = s.profile.sample("final", last_t_ns);
                push(series, sample, now, out);
                s.ended = true;
                out.push(LiveEvent::Notice {
                    message: format!(
                        "{producer} disconnected without an end record: its thread ended at its last record (t_ns {last_t_ns})"
                    ),
                });
                out.push(LiveEvent::ThreadEnded { thread });
            }
        }
    }
}

/// Applies one accepted record of `thread` to its profile (a sample goes to the integrator).
fn apply(
    thread: ThreadId,
    s: &mut Streamed,
    record: Record,
    series: &SeriesHandle,
    now: Instant,
    out: &mut Vec<LiveEvent>,
) {
    let p = &mut s.profile;
    match record {
        Record::Hello { .. } => {}
        Record::Enter { region, group, t_ns } => p.enter(&region, group.as_deref(), t_ns),
        Record::Exit { t_ns, .. } => p.exit(t_ns),
        Record::Counter { name, value, .. } => p.counter(&name, value),
        Record::Message { to, from, bytes, .. } => p.message(to, from, bytes),
        Record::Sample {
            name,
            t_ns,
            events,
            user_events,
        } => {
            let sample = match &events {
                Some(ev) => explicit_sample(
                    thread,
                    &s.metrics,
                    &name,
                    t_ns,
                    ev,
                    user_events.as_deref().unwrap_or(&[]),
                ),
                None => p.sample(&name, t_ns),
            };
            let is_final = name == "final";
            push(series, sample, now, out);
            if is_final {
                s.ended = true;
                out.push(LiveEvent::ThreadEnded { thread });
            }
        }
        Record::End { t_ns } => {
            p.close_all(t_ns);
            if !s.ended {
                let sample = p.sample("final", t_ns);
                push(series, sample, now, out);
                s.ended = true;
                out.push(LiveEvent::ThreadEnded { thread });
            }
        }
    }
}
