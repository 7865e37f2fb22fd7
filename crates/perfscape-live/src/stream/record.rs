//! The records of the perfscape stream protocol, version 1 (the specification is
//! `STREAM.md` in the repository; this module is its implementation).
//!
//! A record is one JSON object on one line (`\n`-terminated, UTF-8), tagged by `type`. Times
//! are nanoseconds since the Unix epoch on the producer's clock (`t_ns`), sizes are bytes.

use serde::{Deserialize, Serialize};

/// The protocol version this build speaks (the `protocol` field of [`Record::Hello`]).
pub const PROTOCOL_VERSION: u32 = 1;

/// One record a producer sends. Unknown fields are refused (a misspelt field is an error
/// record, not silently ignored); unknown `type`s are refused the same way.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Record {
    /// First record of every connection: who is speaking. One connection is one thread of
    /// execution (a rank's main thread, or one of its threads): TAU's node.context.thread
    /// is `rank.0.thread`.
    Hello {
        /// Must be [`PROTOCOL_VERSION`].
        protocol: u32,
        /// The program's name (`mpi_stencil`).
        #[serde(default)]
        program: Option<String>,
        /// An id of the run, the same for every producer of one run (a job id).
        #[serde(default)]
        run: Option<String>,
        /// MPI rank (TAU's node).
        rank: u32,
        /// Thread within the rank (default 0).
        #[serde(default)]
        thread: u32,
        /// The names of the metrics of [`Record::Sample`]'s `events` values, in their
        /// order (default `["TIME"]`, microseconds, as TAU). Enter/exit timing is always
        /// the metric `TIME` in microseconds.
        #[serde(default)]
        metrics: Option<Vec<String>>,
        /// The server's access token; required when the server listens on a non-loopback
        /// address.
        #[serde(default)]
        token: Option<String>,
    },
    /// The thread entered a region (a function, a loop, an MPI call).
    Enter {
        /// The region's name as TAU writes timer names (`MPI_Send()`, `compute`).
        region: String,
        /// TAU group of the region (`MPI`, `TAU_USER`); default `TAU_USER`.
        #[serde(default)]
        group: Option<String>,
        /// When, ns since the Unix epoch; never earlier than the thread's previous record.
        t_ns: i64,
    },
    /// The thread left the region it entered last; `region` must name it.
    Exit {
        /// The region's name.
        region: String,
        /// When, ns since the Unix epoch.
        t_ns: i64,
    },
    /// A value of a counter (TAU's user event: count, min, max, mean and sum of squares are
    /// kept of its values).
    Counter {
        /// The counter's name (`Heap Memory Used (KB)`).
        name: String,
        /// Its value (finite).
        value: f64,
        /// When, ns since the Unix epoch.
        t_ns: i64,
    },
    /// A message sent to or received from another rank. Kept as TAU's communication
    /// user events `Message size sent to node N` (read by the communication matrix) and
    /// `Message size sent to all nodes`, or `Message size received from all nodes`.
    Message {
        /// The rank the message went to (a send) ...
        #[serde(default)]
        to: Option<u32>,
        /// ... or came from (a receive); exactly one of `to` and `from`.
        #[serde(default)]
        from: Option<u32>,
        /// Its size, bytes.
        bytes: u64,
        /// When, ns since the Unix epoch.
        t_ns: i64,
    },
    /// A profile sample (TAU's snapshot): the thread's cumulative profile now, named. With
    /// `events`, those values are the sample, as a program writing TAU snapshots would have
    /// written them; without, the server takes the profile built from this thread's
    /// enter/exit, counter and message records (regions still open count up to `t_ns`).
    /// Samples are matched across threads by name (the k-th `iteration` of every thread
    /// goes together), as TAU's snapshots are.
    Sample {
        /// The sample's name (`iteration 40`; `final` ends the thread).
        name: String,
        /// When, ns since the Unix epoch.
        t_ns: i64,
        /// The sample's timers (cumulative since the thread started), or none.
        #[serde(default)]
        events: Option<Vec<EventValues>>,
        /// The sample's user events (cumulative), with `events`.
        #[serde(default)]
        user_events: Option<Vec<UserEventValues>>,
    },
    /// The thread ends: its last sample (named `final`) is taken from the records as at
    /// [`Record::Sample`], and the thread writes no more.
    End {
        /// When, ns since the Unix epoch; regions still open are closed at this time.
        t_ns: i64,
    },
}

/// One timer of an explicit [`Record::Sample`]: TAU's profile line.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct EventValues {
    /// Timer name (`a => b` for a callpath, as TAU writes it).
    pub name: String,
    /// TAU group (default `TAU_USER`).
    #[serde(default)]
    pub group: Option<String>,
    /// Calls.
    pub calls: f64,
    /// Calls of timers it called.
    #[serde(default)]
    pub subcalls: f64,
    /// Exclusive value per metric of the hello (µs for time).
    pub exclusive: Vec<f64>,
    /// Inclusive value per metric of the hello.
    pub inclusive: Vec<f64>,
}

/// One user event of an explicit [`Record::Sample`]: TAU's user-event line.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct UserEventValues {
    /// Name.
    pub name: String,
    /// Number of values.
    pub count: f64,
    /// Largest value.
    pub max: f64,
    /// Smallest value.
    pub min: f64,
    /// Mean value.
    pub mean: f64,
    /// Sum of the squares of the values.
    pub sum_squares: f64,
}

/// What the server sends back on a connection: one JSON object per line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Reply {
    /// A record was refused (and dropped; the records after it are read).
    Error {
        /// Byte offset of the record's first byte in what this connection sent.
        offset: u64,
        /// What was wrong and what was expected.
        message: String,
    },
}

impl Record {
    /// The record's time, if it has one (ns since the Unix epoch).
    pub fn t_ns(&self) -> Option<i64> {
        match self {
            Record::Hello { .. } => None,
            Record::Enter { t_ns, .. }
            | Record::Exit { t_ns, .. }
            | Record::Counter { t_ns, .. }
            | Record::Message { t_ns, .. }
            | Record::Sample { t_ns, .. }
            | Record::End { t_ns } => Some(*t_ns),
        }
    }
}

/// Parses one line (without its `\n`) into a record; the error says what was expected.
pub fn parse_record(line: &[u8]) -> Result<Record, String> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    serde_json::from_slice(line)
        .map_err(|e| format!("expected a JSON record of protocol {PROTOCOL_VERSION}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_parse_and_errors_say_what_was_expected() {
        let r = parse_record(br#"{"type":"enter","region":"compute","t_ns":5}"#).unwrap();
        assert_eq!(
            r,
            Record::Enter {
                region: "compute".into(),
                group: None,
                t_ns: 5
            }
        );
        let e = parse_record(br#"{"type":"enter","region":"compute"}"#).unwrap_err();
        assert!(e.contains("missing field `t_ns`"), "{e}");
        let e = parse_record(br#"{"type":"entr","region":"x","t_ns":1}"#).unwrap_err();
        assert!(e.contains("unknown variant `entr`"), "{e}");
        let e = parse_record(br#"{"type":"exit","region":"x","t_ns":1,"extra":2}"#).unwrap_err();
        assert!(e.contains("unknown field `extra`"), "{e}");
        let e = parse_record(b"\xff\xfe").unwrap_err();
        assert!(e.starts_with("expected a JSON record"), "{e}");
    }
}
