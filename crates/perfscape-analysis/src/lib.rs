//! Analyses of a parallel profile: statistics of every event across threads (ParaProf's
//! conventions), load imbalance, ranked event lists, per-thread totals, histograms and derived
//! metrics (cycles as time, `NAME = EXPRESSION` over the measured metrics).
//!
//! All functions are pure: they read a [`perfscape_model::Profile`] and return values.
//! [`answers`] holds every view the browser shows, as the HTTP API answers it, computed from
//! typed parameters ([`params`], [`axis`]); the server only picks the profile, caches and
//! asks.
//!
//! ```
//! use perfscape_model::{Metric, MetricId, ProfileBuilder, ThreadData, ThreadId};
//! use perfscape_analysis::{event_stats, top_events, TopOptions};
//!
//! let mut b = ProfileBuilder::new(vec![Metric::tau("TIME")]);
//! for (rank, t) in [30.0, 10.0].into_iter().enumerate() {
//!     let mut d = ThreadData::new(1);
//!     d.push_timer("main", "TAU_DEFAULT", 1.0, 0.0, &[t], &[t]).unwrap();
//!     b.add_thread(ThreadId::new(rank as u32, 0, 0), d).unwrap();
//! }
//! let (p, _) = b.finish();
//! let s = event_stats(&p, p.event_by_name("main").unwrap(), MetricId(0));
//! assert_eq!((s.exclusive.total, s.exclusive.mean, s.exclusive.max), (40.0, 20.0, 30.0));
//! assert_eq!(s.exclusive.imbalance(), 1.5);
//! assert_eq!(top_events(&p, MetricId(0), TopOptions::default())[0].percent, Some(100.0));
//! ```

pub mod answers;
pub mod axis;
mod calltree;
pub mod categories;
pub mod comm;
pub mod compare;
mod derived;
pub mod disasm;
mod error;
mod filter;
pub mod findings;
mod histogram;
pub mod lines;
pub mod params;
pub mod pyramid;
mod stats;
pub mod threads;
pub mod timeline;
pub mod timeline_flows;
mod top;
pub mod views;
pub mod wait_states;

pub use calltree::{TreeNode, TreeScope, call_tree, call_tree_largest};
pub use derived::{
    CyclesToTimeError, DeriveError, DerivedMetricSpec, DerivedReport, Expression, ExpressionError,
    check_derived, clock_hz_from_metadata, cycles_to_time, derive_metric,
};
pub use error::ViewError;
pub use filter::{EventFilter, FilterError, FilterReport, FilterRule, filter_events};
pub use histogram::{Bins, Histogram, histogram};
pub use stats::{
    EventStats, Summary, ThreadTotals, all_event_stats, event_kind_stats, event_stats, larger_first,
    run_total, run_total_of, thread_totals, thread_values_sorted,
};
pub use top::{RankBy, RankedEvent, TopOptions, hot_and_imbalanced, most_imbalanced, top_events};
