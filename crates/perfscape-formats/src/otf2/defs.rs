//! OTF2 definitions: the global definitions file (`traces.def`) and the per-location local
//! definitions (`traces/N.def`: mapping tables and clock offsets). Record types and field
//! order from the OTF2 source (`src/otf2_global_definitions_int.h`,
//! `src/OTF2_GlobalDefWriter.c`, `src/otf2_local_definitions_int.h`); every reference is a
//! compressed 32-bit integer, except location references (compressed 64-bit).

use super::buffer::{Fields, Records};
use crate::problem::Problem;
use rustc_hash::FxHashMap as HashMap;

/// Global definition record types.
const CLOCK_PROPERTIES: u8 = 5;
const STRING: u8 = 10;
const LOCATION_GROUP: u8 = 13;
const LOCATION: u8 = 14;
const REGION: u8 = 15;
const GROUP: u8 = 18;
const METRIC_MEMBER: u8 = 19;
const METRIC_CLASS: u8 = 20;
const METRIC_INSTANCE: u8 = 21;
const COMM: u8 = 22;

/// Local definition record types.
const MAPPING_TABLE: u8 = 5;
const CLOCK_OFFSET: u8 = 6;

/// Group types (`OTF2_GroupType`).
const GROUP_COMM_LOCATIONS: u8 = 4;
const GROUP_COMM_GROUP: u8 = 5;
const GROUP_COMM_SELF: u8 = 6;

/// Mapping types (`OTF2_MappingType`) whose local ids events carry.
pub(crate) const MAP_REGION: u8 = 3;
pub(crate) const MAP_METRIC: u8 = 5;
pub(crate) const MAP_COMM: u8 = 6;

/// "Undefined" reference.
pub(crate) const UNDEFINED: u32 = u32::MAX;

/// A location (a thread, a GPU stream, ...).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Location {
    /// Its id (the `N` of `traces/N.evt`).
    pub(crate) id: u64,
    /// Its name (e.g. `Master thread`).
    pub(crate) name: String,
    /// Its location group (a process, e.g. an MPI rank).
    pub(crate) group: u32,
    /// Events it wrote, as the definition says.
    pub(crate) events: u64,
}

/// A location group (a process).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LocationGroup {
    /// Its name (e.g. `MPI Rank 0`).
    pub(crate) name: String,
}

/// A group definition: its type, paradigm and members (locations or ranks).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Group {
    kind: u8,
    paradigm: u8,
    members: Vec<u64>,
}

/// A metric member (one counter).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MetricMember {
    /// Its name (e.g. `PAPI_TOT_CYC`).
    pub(crate) name: String,
    /// Its unit as written.
    pub(crate) unit: String,
}

/// The global definitions that reading events needs.
#[derive(Debug, Default)]
pub(crate) struct GlobalDefs {
    /// Timer ticks per second.
    pub(crate) timer_resolution: u64,
    /// Tick of the trace's start.
    pub(crate) global_offset: u64,
    /// Strings by id.
    strings: HashMap<u32, String>,
    /// Region names (string ids) by region id.
    regions: HashMap<u32, u32>,
    /// Locations, in definition order.
    pub(crate) locations: Vec<Location>,
    /// Location groups by id.
    pub(crate) location_groups: HashMap<u32, LocationGroup>,
    groups: HashMap<u32, Group>,
    /// Communicator id → (name string id, group id).
    comms: HashMap<u32, (u32, u32)>,
    /// Metric members by id.
    pub(crate) metric_members: HashMap<u32, MetricMember>,
    /// Metric classes by id: their members.
    pub(crate) metric_classes: HashMap<u32, Vec<u32>>,
    /// Metric instances by id: their class.
    pub(crate) metric_instances: HashMap<u32, u32>,
    /// Records of types not read here, by type.
    pub(crate) skipped: HashMap<u8, u64>,
}

impl GlobalDefs {
    /// The string `id`, or `<string N>` when it is not defined.
    pub(crate) fn string(&self, id: u32) -> String {
        self.strings
            .get(&id)
            .cloned()
            .unwrap_or_else(|| format!("<string {id}>"))
    }

    /// The name of region `id`, if it is defined.
    pub(crate) fn region_name(&self, id: u32) -> Option<String> {
        self.regions.get(&id).map(|&s| self.string(s))
    }

    /// The members of metric `id` (a class, or an instance of one).
    pub(crate) fn metric_members(&self, id: u32) -> Option<Vec<&MetricMember>> {
        let class = self.metric_classes.get(&id).or_else(|| {
            self.metric_instances
                .get(&id)
                .and_then(|c| self.metric_classes.get(c))
        })?;
        class.iter().map(|m| self.metric_members.get(m)).collect()
    }

    /// The name of communicator `id`.
    pub(crate) fn comm_name(&self, id: u32) -> String {
        self.comms
            .get(&id)
            .map_or_else(|| format!("<comm {id}>"), |&(s, _)| self.string(s))
    }

    /// The location of rank `rank` of communicator `comm`, as the sender or receiver of a
    /// message recorded by location `me`: the communicator's group lists ranks into the
    /// `COMM_LOCATIONS` group of its paradigm; `COMM_SELF` is `me`.
    pub(crate) fn rank_location(&self, comm: u32, rank: u32, me: u64) -> Option<u64> {
        let &(_, group) = self.comms.get(&comm)?;
        let g = self.groups.get(&group)?;
        match g.kind {
            GROUP_COMM_SELF => (rank == 0).then_some(me),
            GROUP_COMM_GROUP => {
                let world_rank = *g.members.get(rank as usize)?;
                let locations = self
                    .groups
                    .values()
                    .find(|l| l.kind == GROUP_COMM_LOCATIONS && l.paradigm == g.paradigm)?;
                locations.members.get(usize::try_from(world_rank).ok()?).copied()
            }
            GROUP_COMM_LOCATIONS => g.members.get(rank as usize).copied(),
            _ => None,
        }
    }
}

/// Reads the global definitions file. On an error, the definitions read before it are
/// returned with it.
pub(crate) fn global(data: &[u8], chunk_size: u64) -> (GlobalDefs, Option<Problem>) {
    let mut defs = GlobalDefs::default();
    let err = read_global(data, chunk_size, &mut defs).err();
    (defs, err)
}

fn read_global(data: &[u8], chunk_size: u64, d: &mut GlobalDefs) -> Result<(), Problem> {
    let mut records = Records::new(data, chunk_size, false)?;
    while let Some(rec) = records.next_record()? {
        let mut f = rec.fields;
        match rec.kind {
            CLOCK_PROPERTIES => {
                d.timer_resolution = f.u64("timer resolution")?;
                d.global_offset = f.u64("global offset")?;
                if d.timer_resolution == 0 {
                    return Err(Problem::at_offset(
                        rec.offset as u64,
                        "clock properties: a timer resolution of 0 ticks per second",
                    ));
                }
            }
            STRING => {
                let id = f.u32("string id")?;
                let s = f.string("string")?;
                d.strings.insert(id, s);
            }
            LOCATION_GROUP => {
                let id = f.u32("location group id")?;
                let name = f.u32("location group name")?;
                d.location_groups
                    .insert(id, LocationGroup { name: d.string(name) });
            }
            LOCATION => {
                let id = f.u64("location id")?;
                let name = f.u32("location name")?;
                let _type = f.u8("location type")?;
                let events = f.u64("number of events")?;
                let group = f.u32("location group")?;
                d.locations.push(Location {
                    id,
                    name: d.string(name),
                    group,
                    events,
                });
            }
            REGION => {
                let id = f.u32("region id")?;
                let name = f.u32("region name")?;
                d.regions.insert(id, name);
            }
            GROUP => {
                let id = f.u32("group id")?;
                let _name = f.u32("group name")?;
                let _pre12 = f.u8("group type (pre 1.2)")?;
                let n = f.u32("number of members")?;
                let mut members = Vec::with_capacity((n as usize).min(1 << 16));
                for _ in 0..n {
                    members.push(f.u64("group member")?);
                }
                let kind = f.u8("group type")?;
                let paradigm = f.u8("paradigm")?;
                d.groups.insert(
                    id,
                    Group {
                        kind,
                        paradigm,
                        members,
                    },
                );
            }
            COMM => {
                let id = f.u32("communicator id")?;
                let name = f.u32("communicator name")?;
                let group = f.u32("communicator group")?;
                d.comms.insert(id, (name, group));
            }
            METRIC_MEMBER => {
                let id = f.u32("metric member id")?;
                let name = f.u32("metric name")?;
                let _descr = f.u32("metric description")?;
                let _type = f.u8("metric type")?;
                let _mode = f.u8("metric mode")?;
                let _value_type = f.u8("value type")?;
                let _base = f.u8("base")?;
                let _exponent = f.i64("exponent")?;
                let unit = f.u32("unit")?;
                d.metric_members.insert(
                    id,
                    MetricMember {
                        name: d.string(name),
                        unit: d.string(unit),
                    },
                );
            }
            METRIC_CLASS => {
                let id = f.u32("metric class id")?;
                let n = f.u8("number of metrics")?;
                let mut members = Vec::with_capacity(usize::from(n));
                for _ in 0..n {
                    members.push(f.u32("metric member")?);
                }
                d.metric_classes.insert(id, members);
            }
            METRIC_INSTANCE => {
                let id = f.u32("metric instance id")?;
                let class = f.u32("metric class")?;
                d.metric_instances.insert(id, class);
            }
            k => *d.skipped.entry(k).or_default() += 1,
        }
    }
    if d.timer_resolution == 0 {
        return Err(Problem::whole(
            "no clock properties record: the timer resolution is unknown, so times cannot be converted to nanoseconds",
        ));
    }
    Ok(())
}

/// A clock offset of a location: at local tick `time`, the global clock is `offset` ticks
/// ahead of the local one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ClockOffset {
    pub(crate) time: u64,
    pub(crate) offset: i64,
}

/// The local definitions of one location.
#[derive(Debug, Default)]
pub(crate) struct LocalDefs {
    /// Mapping tables: mapping type → local id → global id.
    pub(crate) maps: HashMap<u8, IdMap>,
    /// Clock offsets, in file order.
    pub(crate) clock_offsets: Vec<ClockOffset>,
}

/// An id map (`OTF2_IdMap`): dense (local id = index) or sparse (pairs).
#[derive(Debug, Clone)]
pub(crate) enum IdMap {
    Dense(Vec<u64>),
    Sparse(HashMap<u64, u64>),
}

impl LocalDefs {
    /// The global id of local id `id` of mapping type `kind` (ids without a mapping are
    /// global already).
    pub(crate) fn map(&self, kind: u8, id: u32) -> u32 {
        let mapped = match self.maps.get(&kind) {
            Some(IdMap::Dense(v)) => v.get(id as usize).copied(),
            Some(IdMap::Sparse(m)) => m.get(&u64::from(id)).copied(),
            None => None,
        };
        mapped.map_or(id, |g| u32::try_from(g).unwrap_or(UNDEFINED))
    }

    /// Converts a local tick to the global clock: linear interpolation between the clock
    /// offsets around it (before the first and after the last, the nearest pair's line),
    /// as OTF2's `otf2_evt_reader_apply_clock_correction` does.
    pub(crate) fn correct(&self, time: u64) -> u64 {
        let o = &self.clock_offsets;
        let (a, b) = match o.len() {
            0 => return time,
            1 => return time.wrapping_add(o[0].offset as u64),
            n => {
                // The interval whose end is at or after `time`, else the last one.
                let i = o[..n - 1]
                    .iter()
                    .zip(&o[1..])
                    .position(|(_, e)| time <= e.time)
                    .unwrap_or(n - 2);
                (o[i], o[i + 1])
            }
        };
        let slope = if b.time == a.time {
            0.0
        } else {
            (b.offset as f64 - a.offset as f64) / (b.time as f64 - a.time as f64)
        };
        let diff = if time >= a.time {
            (time - a.time) as f64
        } else {
            -((a.time - time) as f64)
        };
        let offset = a.offset.wrapping_add((slope * diff).round_ties_even() as i64);
        time.wrapping_add(offset as u64)
    }
}

/// Reads one location's local definitions. On an error, what was read before it is
/// returned with it.
pub(crate) fn local(data: &[u8], chunk_size: u64) -> (LocalDefs, Option<Problem>) {
    let mut defs = LocalDefs::default();
    let err = read_local(data, chunk_size, &mut defs).err();
    (defs, err)
}

fn read_local(data: &[u8], chunk_size: u64, d: &mut LocalDefs) -> Result<(), Problem> {
    let mut records = Records::new(data, chunk_size, false)?;
    while let Some(rec) = records.next_record()? {
        let mut f = rec.fields;
        match rec.kind {
            MAPPING_TABLE => {
                let kind = f.u8("mapping type")?;
                let map = id_map(&mut f)?;
                d.maps.insert(kind, map);
            }
            CLOCK_OFFSET => {
                let time = f.u64_full("clock offset time")?;
                let offset = f.i64("clock offset")?;
                d.clock_offsets.push(ClockOffset { time, offset });
            }
            _ => {}
        }
    }
    d.clock_offsets.sort_by_key(|o| o.time);
    Ok(())
}

/// An id map: its size (compressed 64-bit), its mode (0 dense, 1 sparse), then the global
/// ids (dense) or `size` pairs of local and global id (sparse) (OTF2 `src/OTF2_IdMap.c`).
fn id_map(f: &mut Fields<'_>) -> Result<IdMap, Problem> {
    let at = f.offset();
    let size = f.u64("id map size")?;
    let mode = f.u8("id map mode")?;
    let n = usize::try_from(size).unwrap_or(usize::MAX);
    match mode {
        0 => {
            let mut v = Vec::with_capacity(n.min(1 << 16));
            for _ in 0..n {
                v.push(f.u64("id map entry")?);
            }
            Ok(IdMap::Dense(v))
        }
        1 => {
            let mut m = HashMap::default();
            for _ in 0..n {
                let local = f.u64("id map local id")?;
                let global = f.u64("id map global id")?;
                m.insert(local, global);
            }
            Ok(IdMap::Sparse(m))
        }
        m => Err(Problem::at_offset(
            at as u64,
            format!("id map mode {m}: expected 0 (dense) or 1 (sparse)"),
        )),
    }
}
