//! One event across threads (`/api/event/{id}`): its statistics, the per-thread values
//! largest first (bounded by `points`), and a histogram.

use super::{SummaryJson, groups, source};
use crate::error::ViewError;
use crate::histogram::{Bins, histogram};
use crate::params::{Values, event_id};
use crate::stats::{event_stats, thread_values_sorted};
use perfscape_model::Profile;
use serde::Serialize;

/// A thread's value of one event.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ThreadValue {
    /// Thread address.
    pub thread: String,
    /// Value.
    pub value: f64,
}

/// One attribute of an event: a description of its call-tree node, not a measurement (e.g.
/// Caliper's `ProblemSize`).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct EventAttribute {
    /// Name (e.g. `ProblemSize`).
    pub name: String,
    /// Value as the input wrote it (distinct values of several threads joined with `, `).
    pub value: String,
}

/// A histogram.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct HistogramJson {
    /// Bin edges (bins + 1).
    pub edges: Vec<f64>,
    /// Counts per bin.
    pub counts: Vec<u32>,
}

/// `GET /api/event/{id}`: one event across threads.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct EventDetail {
    /// Event id.
    pub id: u32,
    /// Name.
    pub name: String,
    /// Groups.
    pub groups: Vec<String>,
    /// Source file and line, if any.
    pub source: Option<String>,
    /// The event's attributes (per-node metadata such as Caliper's `ProblemSize`), in the
    /// order the reader set them; usually none.
    pub attributes: Vec<EventAttribute>,
    /// Metric index of `values`/`stats`.
    pub metric: u32,
    /// Unit.
    pub unit: String,
    /// Value kind of `values`/`stats`.
    pub kind: String,
    /// Statistics across threads.
    pub stats: SummaryJson,
    /// Per-thread values, largest first; at most `points` entries (see `downsampled`).
    pub values: Vec<ThreadValue>,
    /// True when `values` is a rank-space reduction (each entry the max of a bucket of
    /// consecutive ranks) because there were more threads than `points`.
    pub downsampled: bool,
    /// Threads having the event.
    pub threads: u32,
    /// Histogram of the values across threads.
    pub histogram: HistogramJson,
}

/// Default number of per-thread values of [`event_detail`].
pub const EVENT_POINTS_DEFAULT: u32 = 4096;

/// `GET /api/event/{id}`: event `id`'s statistics of `values`, its per-thread values largest
/// first (at most `points`, default 4096, clamped to 16..=100,000; beyond that each entry is
/// the largest of a bucket of consecutive ranks), and a histogram of `bins` equal-width bins
/// (default Sturges' rule; 1..=1000).
///
/// # Errors
/// [`ViewError::NotFound`] for an unknown event.
pub fn event_detail(
    profile: &Profile,
    id: u32,
    values: Values,
    bins: Option<u32>,
    points: Option<u32>,
) -> Result<EventDetail, ViewError> {
    let e = event_id(profile.events().len(), id)?;
    let st = event_stats(profile, e, values.metric);
    let sorted = thread_values_sorted(profile, e, values.kind, values.metric);
    let raw: Vec<f64> = sorted.iter().map(|v| v.1).collect();
    let bins = match bins {
        Some(k) => Bins::Count(k.clamp(1, 1000) as usize),
        None => Bins::Auto,
    };
    let hist = histogram(&raw, &bins).map_err(ViewError::Invalid)?;
    let points = points.unwrap_or(EVENT_POINTS_DEFAULT).clamp(16, 100_000) as usize;
    let (values_out, downsampled) = if sorted.len() <= points {
        (
            sorted
                .iter()
                .map(|(t, v)| ThreadValue {
                    thread: profile.thread(*t).to_string(),
                    value: *v,
                })
                .collect(),
            false,
        )
    } else {
        // Rank-space buckets; each keeps its largest value (the first, as values are sorted).
        let per = sorted.len().div_ceil(points);
        (
            sorted
                .chunks(per)
                .map(|c| ThreadValue {
                    thread: profile.thread(c[0].0).to_string(),
                    value: c[0].1,
                })
                .collect(),
            true,
        )
    };
    Ok(EventDetail {
        id,
        name: profile.event_name(e),
        groups: groups(profile, e),
        source: source(profile, e),
        attributes: profile
            .event_attributes(e)
            .map(|(name, value)| EventAttribute {
                name: name.to_string(),
                value: value.to_string(),
            })
            .collect(),
        metric: values.metric.0,
        unit: values.unit(profile.metrics()),
        kind: values.kind.as_str().into(),
        stats: SummaryJson::of(profile, st.get(values.kind)),
        values: values_out,
        downsampled,
        threads: profile.interval(e).len() as u32,
        histogram: HistogramJson {
            edges: hist.edges,
            counts: hist
                .counts
                .iter()
                .map(|&c| u32::try_from(c).unwrap_or(u32::MAX))
                .collect(),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use perfscape_model::{Metric, ProfileBuilder, ThreadData, ThreadId};

    #[test]
    fn the_detail_lists_the_event_attributes() {
        let mut b = ProfileBuilder::new(vec![Metric::tau("TIME")]);
        let mut d = ThreadData::new(1);
        d.push_timer("RAJAPerf => Basic_DAXPY", "G", 1.0, 0.0, &[2.0], &[2.0])
            .unwrap();
        b.add_thread(ThreadId::new(0, 0, 0), d).unwrap();
        b.set_event_attribute("RAJAPerf => Basic_DAXPY", "ProblemSize", "1048576");
        b.set_event_attribute("RAJAPerf => Basic_DAXPY", "Reps", "500");
        let p = b.finish().0;
        let e = p.event_by_name("RAJAPerf => Basic_DAXPY").unwrap();
        let values = Values::new(p.metrics(), None, None).unwrap();
        let d = event_detail(&p, e.0, values, None, None).unwrap();
        let attrs: Vec<(&str, &str)> = d
            .attributes
            .iter()
            .map(|a| (a.name.as_str(), a.value.as_str()))
            .collect();
        assert_eq!(attrs, [("ProblemSize", "1048576"), ("Reps", "500")]);
    }
}
