//! What a live run reports: [`LiveEvent`]s, in the order things happened.

use perfscape_formats::FileError;
use perfscape_model::{SampleId, ThreadId};
use serde::{Serialize, Serializer};
use std::path::PathBuf;

/// One thing that happened in a watched run. Events arrive in order, each exactly once;
/// when a [`LiveEvent::Sample`] or [`LiveEvent::Amended`] arrives, the series
/// ([`crate::SeriesHandle`]) already holds what it announces.
///
/// Serialized (serde) as a JSON object with an `event` tag (`"sample"`, `"amended"`, ...);
/// threads are written `N.C.T`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum LiveEvent {
    /// A thread's first file appeared (`snapshot.N.C.T`, or its first `dump__*` file):
    /// samples now wait for it (at most [`crate::LiveOptions::max_wait`]).
    ThreadAppeared {
        /// The thread (from the file name).
        #[serde(serialize_with = "ser_thread")]
        thread: ThreadId,
        /// The file.
        path: PathBuf,
    },
    /// A new sample was integrated and appended to the series.
    Sample(SampleEvent),
    /// A thread that was missing from an earlier sample delivered its part late; the
    /// sample's values (and that thread's deltas at this sample and the next) changed.
    Amended(AmendedEvent),
    /// A thread will write no more samples: it wrote its `final` snapshot, or its
    /// `profile.N.C.T` appeared (TAU writes it at exit).
    ThreadEnded {
        /// The thread.
        #[serde(serialize_with = "ser_thread")]
        thread: ThreadId,
    },
    /// Something informational: how the directory is watched, a file rewritten with the same
    /// content, files ignored. Nothing was lost.
    Notice {
        /// What happened.
        message: String,
    },
    /// A problem in a file: a snapshot block that is not valid (skipped; the blocks after it
    /// are read), a file that cannot be read, a file rewritten with different content. The
    /// error names the file and the line / byte offset.
    #[serde(serialize_with = "ser_file_error")]
    FileError(FileError),
    /// A streamed producer sent a record that was refused (see `crate::stream`): the
    /// record is dropped, the connection and every other producer go on.
    ProducerError {
        /// Who sent it: the peer's address and, after its hello, its thread (`N.C.T`).
        producer: String,
        /// Byte offset of the record in what this connection sent.
        offset: u64,
        /// What was wrong and what was expected.
        message: String,
    },
    /// The run is over; no event follows and the series is final.
    Finished {
        /// Why.
        reason: FinishReason,
    },
}

/// A newly integrated sample (see [`perfscape_model::SampleInfo`] for the same facts, read
/// from the series).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SampleEvent {
    /// The sample's sequence number: its position in the series (0-based; `id.0` counts
    /// up by one from event to event).
    pub id: SampleId,
    /// The sample's name as the program gave it (`iteration 40`, `final`, `dump 3`).
    pub name: String,
    /// Time of the sample, µs since the Unix epoch: the latest timestamp of the threads
    /// present (the program's clock, not the watcher's).
    pub timestamp_us: i64,
    /// Threads that wrote the sample.
    pub threads_present: usize,
    /// Threads known when the sample was integrated.
    pub threads_expected: usize,
    /// Threads known but missing (they had not written the sample when
    /// [`crate::LiveOptions::max_wait`] ran out, or they ended without it), ascending.
    #[serde(serialize_with = "ser_threads")]
    pub threads_missing: Vec<ThreadId>,
    /// True when every known thread wrote the sample.
    pub complete: bool,
}

/// A late part added to an already announced sample.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AmendedEvent {
    /// The sample.
    pub id: SampleId,
    /// The thread whose part arrived.
    #[serde(serialize_with = "ser_thread")]
    pub thread: ThreadId,
    /// Threads present in the sample now.
    pub threads_present: usize,
    /// True when the sample is now complete.
    pub complete: bool,
}

/// Why a live run finished.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// Every thread ended (its `final` snapshot or its `profile.N.C.T` arrived) and a last
    /// look at the directory found no new file.
    AllThreadsEnded,
    /// The directory holds `profile.N.C.T` files (written at exit) and nothing changed for
    /// [`crate::LiveOptions::quiet`]; threads that had not ended were ended.
    Quiet,
    /// The caller stopped the run ([`crate::StopHandle::stop`], dropping the
    /// [`crate::LiveRun`]); samples that were waiting were integrated first.
    Stopped,
}

fn ser_thread<S: Serializer>(t: &ThreadId, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(t)
}

fn ser_threads<S: Serializer>(ts: &[ThreadId], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(ts.iter().map(ToString::to_string))
}

fn ser_file_error<S: Serializer>(e: &FileError, s: S) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct Wire<'a> {
        path: String,
        line: Option<usize>,
        byte_offset: Option<u64>,
        message: &'a str,
    }
    Wire {
        path: e.path.display().to_string(),
        line: e.line,
        byte_offset: e.byte_offset,
        message: &e.message,
    }
    .serialize(s)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn events_serialize_tagged_with_threads_as_text() {
        let e = LiveEvent::Sample(SampleEvent {
            id: SampleId(3),
            name: "iteration 80".into(),
            timestamp_us: 1_795_290_105_600_000,
            threads_present: 7,
            threads_expected: 8,
            threads_missing: vec![ThreadId::new(3, 0, 0)],
            complete: false,
        });
        assert_eq!(
            serde_json::to_string(&e).unwrap(),
            r#"{"event":"sample","id":3,"name":"iteration 80","timestamp_us":1795290105600000,"threads_present":7,"threads_expected":8,"threads_missing":["3.0.0"],"complete":false}"#
        );
        let e = LiveEvent::FileError(FileError {
            path: "run/snapshot.2.0.0".into(),
            line: Some(12),
            byte_offset: Some(400),
            message: "bad".into(),
        });
        assert_eq!(
            serde_json::to_string(&e).unwrap(),
            r#"{"event":"file_error","path":"run/snapshot.2.0.0","line":12,"byte_offset":400,"message":"bad"}"#
        );
        let e = LiveEvent::Finished {
            reason: FinishReason::AllThreadsEnded,
        };
        assert_eq!(
            serde_json::to_string(&e).unwrap(),
            r#"{"event":"finished","reason":"all_threads_ended"}"#
        );
        let e = LiveEvent::Amended(AmendedEvent {
            id: SampleId(5),
            thread: ThreadId::new(3, 0, 0),
            threads_present: 8,
            complete: true,
        });
        assert_eq!(
            serde_json::to_string(&e).unwrap(),
            r#"{"event":"amended","id":5,"thread":"3.0.0","threads_present":8,"complete":true}"#
        );
    }
}
