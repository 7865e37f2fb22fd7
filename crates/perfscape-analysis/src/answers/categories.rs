//! The categories view (`GET /api/categories`): the time of each category for the run, each
//! process and each thread (threads reduced to at most `points` bins along an order), POP's
//! efficiency metrics and the category of every event.

use crate::categories::{CategoryClass, PopMetrics, RuleSet, categorize};
use crate::error::ViewError;
use perfscape_model::{MetricId, Profile, ThreadId, ThreadIndex};
use serde::Serialize;

/// Default most bins of threads.
pub const CATEGORY_POINTS_DEFAULT: u32 = 2048;

/// One category of the answer.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct CategoryJson {
    /// Its name (`MPI collective`, `other`).
    pub name: String,
    /// Its class.
    pub class: CategoryClass,
    /// True when POP counts its time as useful.
    pub useful: bool,
}

/// Consecutive threads of the order, with the mean of their times per category.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct CategoryBin {
    /// The first thread of the bin (index in the run's thread order), the one a click selects.
    pub thread: u32,
    /// Its address `N.C.T`.
    pub label: String,
    /// Number of threads in the bin (1 unless there were more threads than `points`).
    pub count: u32,
    /// Mean over the bin's threads of their time in each category (in `categories` order, the
    /// metric's unit).
    pub values: Vec<f64>,
}

/// One process (node) and its time per category.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ProcessCategories {
    /// The node.
    pub node: u32,
    /// Sum over its threads of their time in each category.
    pub values: Vec<f64>,
}

/// The answer of `GET /api/categories`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct CategoriesResponse {
    /// The metric split (index).
    pub metric: u32,
    /// Its unit's symbol.
    pub unit: String,
    /// The categories some event of the run falls in, then `other` (always last).
    pub categories: Vec<CategoryJson>,
    /// The run's time per category (sum over threads).
    pub run: Vec<f64>,
    /// Per process, by node, when there are at most `points` processes (else empty).
    pub processes: Vec<ProcessCategories>,
    /// The selected thread's time per category, when a thread was asked for.
    pub thread: Option<ProcessCategories>,
    /// The threads in order (by thread id, or by their time in category `sort`, largest
    /// first), in at most `points` bins of consecutive threads.
    pub bins: Vec<CategoryBin>,
    /// The category the threads were ordered by (index into `categories`), if any.
    pub sort: Option<u32>,
    /// Number of threads.
    pub threads: u32,
    /// POP's efficiency metrics and the categories they counted as useful.
    pub pop: PopMetrics,
    /// The category (index into `categories`) of every event, in event id order.
    pub event_category: Vec<u32>,
}

/// The categories view of metric `metric` under `rules`: threads ordered by `sort` (a
/// category index: largest time first, ties by thread order; default thread order) in at most
/// `points` bins (default [`CATEGORY_POINTS_DEFAULT`], clamped to 16..=100,000), and the times
/// of `thread` when given.
///
/// # Errors
/// [`ViewError::Invalid`] for a metric that does not add up or a `sort` that is not a category
/// of the answer; [`ViewError::NotFound`] for a thread the run does not have.
pub fn categories_view(
    profile: &Profile,
    metric: MetricId,
    rules: &RuleSet,
    sort: Option<u32>,
    points: Option<u32>,
    thread: Option<ThreadId>,
) -> Result<CategoriesResponse, ViewError> {
    let c = categorize(profile, metric, rules)?;
    let k = c.categories.len();
    if let Some(s) = sort
        && s as usize >= k
    {
        return Err(ViewError::invalid(format!(
            "sort: expected a category index below {k} (the run has {k} categories), found {s}"
        )));
    }
    let selected = match thread {
        None => None,
        Some(id) => {
            let t = profile
                .thread_index(id)
                .ok_or_else(|| ViewError::not_found(format!("thread {id}: the run has no such thread")))?;
            Some(ProcessCategories {
                node: id.node,
                values: c.thread(t).to_vec(),
            })
        }
    };
    let n = c.threads();
    let mut order: Vec<usize> = (0..n).collect();
    if let Some(s) = sort {
        let s = s as usize;
        order.sort_by(|&a, &b| {
            crate::stats::larger_first(
                c.thread(ThreadIndex::from(a))[s],
                c.thread(ThreadIndex::from(b))[s],
            )
            .then(a.cmp(&b))
        });
    }
    let points = points.unwrap_or(CATEGORY_POINTS_DEFAULT).clamp(16, 100_000) as usize;
    let per = n.div_ceil(points).max(1);
    let bins = order
        .chunks(per)
        .map(|chunk| {
            let mut values = vec![0.0; k];
            for &t in chunk {
                for (a, b) in values.iter_mut().zip(c.thread(ThreadIndex::from(t))) {
                    *a += b;
                }
            }
            values.iter_mut().for_each(|v| *v /= chunk.len() as f64);
            let first = ThreadIndex::from(chunk[0]);
            CategoryBin {
                thread: chunk[0] as u32,
                label: profile.thread(first).to_string(),
                count: chunk.len() as u32,
                values,
            }
        })
        .collect();
    let by_process = c.by_process(profile);
    let processes = if by_process.len() <= points {
        by_process
            .into_iter()
            .map(|(node, values)| ProcessCategories { node, values })
            .collect()
    } else {
        Vec::new()
    };
    Ok(CategoriesResponse {
        metric: metric.0,
        unit: profile.metric(metric).unit.symbol().to_string(),
        categories: c
            .categories
            .iter()
            .map(|d| CategoryJson {
                name: d.name.clone(),
                class: d.class,
                useful: d.class.is_useful(),
            })
            .collect(),
        run: c.run(),
        processes,
        thread: selected,
        bins,
        sort,
        threads: n as u32,
        pop: c.pop(),
        event_category: c.event_category.clone(),
    })
}
