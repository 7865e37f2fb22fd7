//! OTF2 event files (`traces/N.evt`): one location's events, in time order. Record types and
//! fields from the OTF2 source (`src/otf2_events_int.h`, `src/OTF2_EvtWriter.c`).

use super::buffer::Records;
use super::defs::{LocalDefs, MAP_COMM, MAP_METRIC, MAP_REGION};
use crate::problem::Problem;
use rustc_hash::FxHashMap as HashMap;

const ENTER: u8 = 12;
const LEAVE: u8 = 13;
const MPI_SEND: u8 = 14;
const MPI_ISEND: u8 = 15;
const MPI_ISEND_COMPLETE: u8 = 16;
const MPI_IRECV_REQUEST: u8 = 17;
const MPI_RECV: u8 = 18;
const MPI_IRECV: u8 = 19;
const MPI_COLLECTIVE_BEGIN: u8 = 22;
const MPI_COLLECTIVE_END: u8 = 23;
const METRIC: u8 = 31;

/// A region entered or left, with global ids and the corrected time in ticks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RegionEvent {
    /// Global tick (clock offsets applied).
    pub(crate) time: u64,
    /// Global region id.
    pub(crate) region: u32,
    /// True for enter, false for leave.
    pub(crate) enter: bool,
}

/// One side of a point-to-point message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct MessageEvent {
    /// Global tick: the send (or isend), or the receive (or the irecv completion).
    pub(crate) time: u64,
    /// The peer's rank in `comm` (receiver of a send, sender of a receive).
    pub(crate) peer: u32,
    /// Global communicator id.
    pub(crate) comm: u32,
    /// Message tag.
    pub(crate) tag: u32,
    /// Bytes.
    pub(crate) bytes: u64,
}

/// A collective operation: its begin and end (global ticks) and what the end record says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Collective {
    pub(crate) begin: u64,
    pub(crate) end: u64,
    /// `OTF2_CollectiveOp`.
    pub(crate) op: u8,
    /// Global communicator id.
    pub(crate) comm: u32,
    /// The root's rank (`OTF2_UNDEFINED_UINT32` when none).
    pub(crate) root: u32,
    pub(crate) bytes_sent: u64,
    pub(crate) bytes_received: u64,
}

/// A metric sample: one value per member of the metric (class or instance).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MetricSample {
    /// Global tick.
    pub(crate) time: u64,
    /// Global metric id (a metric class or instance).
    pub(crate) metric: u32,
    /// The values, as written: (`OTF2_Type`, the 64 bits).
    pub(crate) values: Vec<(u8, u64)>,
}

/// What one location's event file holds.
#[derive(Debug, Default)]
pub(crate) struct LocationEvents {
    /// Enter and leave events in file order.
    pub(crate) regions: Vec<RegionEvent>,
    /// Messages sent (send and isend events).
    pub(crate) sends: Vec<MessageEvent>,
    /// Messages received (receive events and irecv completions).
    pub(crate) recvs: Vec<MessageEvent>,
    /// Collective operations (a begin with its end).
    pub(crate) collectives: Vec<Collective>,
    /// Metric samples.
    pub(crate) metrics: Vec<MetricSample>,
    /// Records of other types, by type: skipped, not errors.
    pub(crate) skipped: HashMap<u8, u64>,
    /// Events read.
    pub(crate) events: u64,
    /// Isend completions without their isend, collective ends without a begin.
    pub(crate) unmatched: u64,
}

/// Reads one location's event file, with its local definitions (mappings, clock offsets).
/// On an error, the events before it are returned with it.
pub(crate) fn read(data: &[u8], chunk_size: u64, local: &LocalDefs) -> (LocationEvents, Option<Problem>) {
    let mut out = LocationEvents::default();
    let err = read_into(data, chunk_size, local, &mut out).err();
    (out, err)
}

fn read_into(
    data: &[u8],
    chunk_size: u64,
    local: &LocalDefs,
    out: &mut LocationEvents,
) -> Result<(), Problem> {
    let mut records = Records::new(data, chunk_size, true)?;
    let mut collective_begin: Vec<u64> = Vec::new();
    while let Some(rec) = records.next_record()? {
        let time = local.correct(rec.time);
        let mut f = rec.fields;
        out.events += 1;
        match rec.kind {
            ENTER | LEAVE => {
                let region = local.map(MAP_REGION, f.u32("region")?);
                out.regions.push(RegionEvent {
                    time,
                    region,
                    enter: rec.kind == ENTER,
                });
            }
            MPI_SEND | MPI_ISEND | MPI_RECV | MPI_IRECV => {
                let peer = f.u32(if rec.kind <= MPI_ISEND {
                    "receiver"
                } else {
                    "sender"
                })?;
                let comm = local.map(MAP_COMM, f.u32("communicator")?);
                let tag = f.u32("message tag")?;
                let bytes = f.u64("message length")?;
                let m = MessageEvent {
                    time,
                    peer,
                    comm,
                    tag,
                    bytes,
                };
                if rec.kind <= MPI_ISEND {
                    out.sends.push(m);
                } else {
                    out.recvs.push(m);
                }
            }
            MPI_COLLECTIVE_BEGIN => collective_begin.push(time),
            MPI_COLLECTIVE_END => {
                let op = f.u8("collective operation")?;
                let comm = local.map(MAP_COMM, f.u32("communicator")?);
                let root = f.u32("root")?;
                let bytes_sent = f.u64("bytes sent")?;
                let bytes_received = f.u64("bytes received")?;
                match collective_begin.pop() {
                    Some(begin) => out.collectives.push(Collective {
                        begin,
                        end: time,
                        op,
                        comm,
                        root,
                        bytes_sent,
                        bytes_received,
                    }),
                    None => out.unmatched += 1,
                }
            }
            METRIC => {
                // The metric, the number of values, then per value its type and its 64 bits
                // as a compressed integer (a double's bits; OTF2_EvtWriter_Metric).
                let metric = local.map(MAP_METRIC, f.u32("metric")?);
                let n = f.u8("number of metric values")?;
                let mut values = Vec::with_capacity(usize::from(n));
                for _ in 0..n {
                    let kind = f.u8("metric value type")?;
                    values.push((kind, f.u64("metric value")?));
                }
                out.metrics.push(MetricSample { time, metric, values });
            }
            MPI_ISEND_COMPLETE | MPI_IRECV_REQUEST => {}
            k => {
                out.events -= 1;
                *out.skipped.entry(k).or_default() += 1;
            }
        }
    }
    Ok(())
}
