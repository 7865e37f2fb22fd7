//! Findings (`/api/findings`): [`crate::findings::findings`] as the findings panel shows them,
//! each with the selection that opens the view showing it.

use crate::categories::{Categorized, PopMetrics};
use crate::findings::{FindingKind, FindingOptions, add_wait_states, findings};
use perfscape_model::{MetricId, Profile, Trace};
use serde::Serialize;

/// One finding, as the API answers it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct FindingJson {
    /// What it is about.
    pub kind: FindingKind,
    /// One line with names and numbers.
    pub title: String,
    /// Time lost, in `unit` (see [`crate::findings`] for each kind).
    pub cost: f64,
    /// `cost` as a percent of the median thread total.
    pub cost_percent: f64,
    /// The numbers behind it.
    pub evidence: Vec<String>,
    /// The event to select (its id), if any.
    pub event: Option<u32>,
    /// The thread to select (`N.C.T`), if any.
    pub thread: Option<String>,
    /// The panel that shows it: `event` (one event across threads, with the thread marked),
    /// `heatmap` (threads × events), `calltree`.
    pub view: String,
}

/// `GET /api/findings`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct FindingsResponse {
    /// Metric index the findings are in.
    pub metric: u32,
    /// Its unit.
    pub unit: String,
    /// The median thread total, the basis of every percent.
    pub median_thread_total: f64,
    /// The POP metrics (with the categories counted as useful), when the categories were
    /// given and some time is useful work.
    pub pop: Option<PopMetrics>,
    /// The findings: time lost ranked by its percent, then the hot spots.
    pub findings: Vec<FindingJson>,
}

/// The findings of metric `m` (see [`crate::findings::findings`] for the categories and the
/// options), with the wait states of `trace` when the run is a trace (`profile` derived from
/// it; [`crate::findings::add_wait_states`]).
pub fn findings_view(
    profile: &Profile,
    m: MetricId,
    categories: Option<&Categorized>,
    opts: &FindingOptions,
    trace: Option<&Trace>,
) -> FindingsResponse {
    let mut f = findings(profile, m, categories, opts);
    if let Some(t) = trace {
        add_wait_states(&mut f, profile, m, t, opts);
    }
    FindingsResponse {
        metric: m.0,
        unit: profile.metric(m).unit.symbol().to_string(),
        median_thread_total: f.median_thread_total,
        pop: f.pop,
        findings: f
            .findings
            .into_iter()
            .map(|x| FindingJson {
                view: match (x.kind, x.event) {
                    (_, Some(_)) => "event",
                    (FindingKind::CommunicationBound, None) => "heatmap",
                    _ => "calltree",
                }
                .to_string(),
                kind: x.kind,
                title: x.title,
                cost: x.cost,
                cost_percent: x.cost_percent,
                evidence: x.evidence,
                event: x.event.map(|e| e.0),
                thread: x.thread.map(|t| profile.thread(t).to_string()),
            })
            .collect(),
    }
}
