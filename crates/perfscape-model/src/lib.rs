//! The perfscape data model: a parallel performance profile as columnar tables. No I/O.
//!
//! A [`Profile`] holds the threads of a run (addressed `node.context.thread`), its metrics
//! (name, unit, and how their values combine across threads and call paths: [`Combine`]), its
//! interval events (timers, flat and callpath, with groups, source locations and optional
//! per-event attributes) and user (atomic) events, and the values measured per (event, thread,
//! metric): calls, subcalls, exclusive and inclusive; per (user event, thread): count, max,
//! min, mean, sum of squares.
//!
//! ```
//! use perfscape_model::{Metric, ProfileBuilder, ThreadData, ThreadId, ValueKind, MetricId};
//!
//! let mut b = ProfileBuilder::new(vec![Metric::tau("TIME")]);
//! let mut t0 = ThreadData::new(1);
//! t0.push_timer(".TAU application", "TAU_DEFAULT", 1.0, 1.0, &[10.0], &[100.0]).unwrap();
//! t0.push_timer(".TAU application => main()  ", "TAU_CALLPATH|TAU_DEFAULT", 1.0, 0.0, &[90.0], &[90.0]).unwrap();
//! b.add_thread(ThreadId::new(0, 0, 0), t0).unwrap();
//! let (profile, _notes) = b.finish();
//! let e = profile.event_by_name(".TAU application => main()").unwrap();
//! assert_eq!(profile.interval(e).values(ValueKind::Inclusive, MetricId(0)), &[90.0]);
//! assert_eq!(profile.call_tree().roots().len(), 1);
//! ```
//!
//! # Design constraints
//! - Must scale to 10^6 threads x 10^3 events: values live in one arena of cells (one array
//!   per value kind and metric, each event a range of it: [`IntervalColumns`]), never in a
//!   heap object per cell or per event; names are interned once.
//! - Must hold call trees of 10^6 calling contexts: a callpath event is a call-tree node
//!   (parent + own frame, [`Event::frame`]); whole names are built only when shown
//!   ([`Profile::event_name`]).
//! - Pure: readers (crate `perfscape-formats`) build profiles through [`ProfileBuilder`];
//!   analyses (crate `perfscape-analysis`) read them.

mod atomic_column;
pub mod binary;
mod builder;
mod cell_rows;
mod columns;
mod context_events;
pub mod event;
mod event_index;
mod ids;
mod integrate;
mod metadata;
mod metric;
mod profile;
mod series;
mod shared;
mod thread_data;
mod thread_rows;
pub mod trace;

pub use binary::DecodeError;
pub use builder::{BuildNote, NodeFrame, ProfileBuilder};
pub use columns::{AtomicColumn, IntervalColumn, IntervalColumns, ValueKind};
pub use event::{AtomicEvent, Event, EventKind, SharedList, SharedStr, SourceLocation, SourceRef};
pub use ids::{AtomicEventId, EventId, GroupId, MetricId, ParseThreadIdError, ThreadId, ThreadIndex};
pub use integrate::{
    Alignment, IntegrateError, Integrated, IntegrationReport, Integrator, IntegratorOptions, ThreadSample,
    TimerDef, TimerSample, UserEventDef, UserEventSample,
};
pub use metadata::Metadata;
pub use metric::{Combine, Combiner, Metric, Unit};
pub use profile::{CallTree, Profile};
pub use series::{AcrossThreads, AtomicKind, SampleId, SampleInfo, SampleMode, SampleSeries, SampleValues};
pub use thread_data::{BuildError, MetadataTemplate, MetricValue, ThreadData};
pub use thread_rows::ThreadRows;
pub use trace::{IntervalLane, Trace, TraceBuilder, TraceThread};
