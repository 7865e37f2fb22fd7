//! Typed parameters of the views, as the HTTP API takes them: a metric and value kind checked
//! against the profile ([`Values`]), thread addresses and lists in their text forms
//! ([`ThreadAddr`], [`ThreadAddrs`], [`EventIds`]).
//!
//! The choice enums live next to what they choose: [`crate::views::RowKind`],
//! [`crate::views::RowOrder`], [`crate::views::Reduce`], [`crate::axis::ThreadOrder`],
//! [`crate::axis::Subset`], [`crate::answers::Scope`]; the value kind and the sample mode are the
//! model's [`ValueKind`] and [`perfscape_model::SampleMode`]. Each deserializes from its
//! lower-case name (serde), so an unknown name is an error that lists the accepted ones.

use crate::error::ViewError;
use crate::views::Reduce;
use perfscape_model::{EventId, Metric, MetricId, Profile, ThreadId, ThreadIndex, ValueKind};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;

/// The numbers a view reads: one metric and one value kind, the metric checked against the
/// profile's metrics.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Values {
    /// The metric.
    pub metric: MetricId,
    /// The value kind.
    pub kind: ValueKind,
}

impl Values {
    /// Metric `metric` (default 0) and `kind` (default exclusive) of a run with `metrics`.
    ///
    /// # Errors
    /// [`ViewError::Invalid`] for a metric index beyond the run's metrics.
    pub fn new(metrics: &[Metric], metric: Option<u32>, kind: Option<ValueKind>) -> Result<Self, ViewError> {
        let m = metric.unwrap_or(0);
        if m as usize >= metrics.len() {
            return Err(ViewError::invalid(format!(
                "metric {m} does not exist (the run has {})",
                metrics.len()
            )));
        }
        Ok(Self {
            metric: MetricId(m),
            kind: kind.unwrap_or(ValueKind::Exclusive),
        })
    }

    /// `reduce` when it fits these values: [`Reduce::Sum`] adds the values of the threads (and
    /// rows) of a bin, which only means something for values that add up: calls, subcalls and
    /// metrics whose rule is a sum. [`Reduce::Max`] fits every value.
    ///
    /// # Errors
    /// [`ViewError::Invalid`] for `sum` over a metric that does not add up (a minimum, maximum,
    /// mean or ratio), naming the metric, its rule and `reduce=max`.
    pub fn check_reduce(&self, metrics: &[Metric], reduce: Reduce) -> Result<Reduce, ViewError> {
        let Some(m) = metrics.get(self.metric.index()) else {
            return Err(ViewError::invalid(format!(
                "metric {} does not exist (the run has {})",
                self.metric.0,
                metrics.len()
            )));
        };
        if reduce == Reduce::Sum && !self.kind.is_metric_independent() && !m.combine.is_additive() {
            return Err(ViewError::invalid(format!(
                "reduce=sum adds up the values of a bin, but metric `{}` does not add up (its values combine by {}); use reduce=max",
                m.name, m.combine
            )));
        }
        Ok(reduce)
    }

    /// The unit symbol of the values: `count` for calls and subcalls, else the metric's.
    pub fn unit(&self, metrics: &[Metric]) -> String {
        if self.kind.is_metric_independent() {
            "count".into()
        } else {
            metrics
                .get(self.metric.index())
                .map_or_else(String::new, |m| m.unit.symbol().to_string())
        }
    }
}

/// Event `id` of a profile with `count` events.
///
/// # Errors
/// [`ViewError::NotFound`] beyond the last event.
pub fn event_id(count: usize, id: u32) -> Result<EventId, ViewError> {
    if (id as usize) < count {
        Ok(EventId(id))
    } else {
        Err(ViewError::not_found(format!("no event {id}")))
    }
}

/// The index of thread `id` in `profile`.
///
/// # Errors
/// [`ViewError::NotFound`] when the profile has no such thread.
pub fn thread_index(profile: &Profile, id: ThreadId) -> Result<ThreadIndex, ViewError> {
    profile
        .thread_index(id)
        .ok_or_else(|| ViewError::not_found(format!("no thread {id}")))
}

/// Serializes and deserializes the types in their text forms (`Display` / `FromStr`, whose
/// error says what was given and what is expected).
macro_rules! text_form {
    ($($t:ty),*) => {$(
        impl Serialize for $t {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }

        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                String::deserialize(d)?.parse().map_err(serde::de::Error::custom)
            }
        }
    )*};
}

text_form!(ThreadAddr, ThreadAddrs, EventIds);

/// Parses the comma-separated items of `s` (empty ones ignored), `what` saying what was
/// expected of one that does not parse.
fn parse_list<T: FromStr>(s: &str, what: &str) -> Result<Vec<T>, String> {
    s.split(',')
        .map(str::trim)
        .filter(|x| !x.is_empty())
        .map(|x| x.parse().map_err(|_| format!("`{x}`{what}")))
        .collect()
}

/// Writes `items` comma-separated.
fn write_list<T: fmt::Display>(f: &mut fmt::Formatter<'_>, items: &[T]) -> fmt::Result {
    for (i, x) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(",")?;
        }
        x.fmt(f)?;
    }
    Ok(())
}

/// A thread address `N.C.T` in its text form (the `thread` parameter).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(type = "string"))]
pub struct ThreadAddr(pub ThreadId);

impl FromStr for ThreadAddr {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        s.trim()
            .parse()
            .map(ThreadAddr)
            .map_err(|_| format!("`{s}`: expected a thread N.C.T"))
    }
}

impl fmt::Display for ThreadAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// Comma-separated thread addresses `N.C.T,N.C.T` (empty items ignored).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(type = "string"))]
pub struct ThreadAddrs(pub Vec<ThreadId>);

impl FromStr for ThreadAddrs {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        parse_list(s, ": expected threads N.C.T,N.C.T,...").map(ThreadAddrs)
    }
}

impl fmt::Display for ThreadAddrs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_list(f, &self.0)
    }
}

/// Comma-separated event ids `1,2,3` (empty items ignored).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(type = "string"))]
pub struct EventIds(pub Vec<u32>);

impl EventIds {
    /// The ids as events of a profile with `count` events.
    ///
    /// # Errors
    /// [`ViewError::NotFound`] for an id beyond the last event.
    pub fn events(&self, count: usize) -> Result<Vec<EventId>, ViewError> {
        self.0.iter().map(|&id| event_id(count, id)).collect()
    }
}

impl FromStr for EventIds {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        parse_list(s, " is not an event id (expected ids 1,2,3)").map(EventIds)
    }
}

impl fmt::Display for EventIds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_list(f, &self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_parse_and_print_back() {
        let e: EventIds = "1, 2,,30".parse().unwrap();
        assert_eq!(e.0, vec![1, 2, 30]);
        assert_eq!(e.to_string(), "1,2,30");
        assert!("1,x".parse::<EventIds>().unwrap_err().contains("`x`"));
        let t: ThreadAddrs = "0.0.1,3.0.0".parse().unwrap();
        assert_eq!(t.0, vec![ThreadId::new(0, 0, 1), ThreadId::new(3, 0, 0)]);
        assert_eq!(t.to_string(), "0.0.1,3.0.0");
        assert!("1.2".parse::<ThreadAddr>().is_err());
    }
}
