//! Event filters: which events a user wants to see (`--filter` on the command line).
//!
//! A filter is a list of rules, each one of:
//!
//! | rule | meaning |
//! |---|---|
//! | `name=GLOB` | show the events whose routine (the last frame of a callpath) matches |
//! | `group=GLOB` | show the events with a group that matches (`MPI`, `TAU_USER*`) |
//! | `!name=GLOB`, `!group=GLOB` | hide those events, and the call-tree nodes below them |
//! | `exclusive<P%`, `inclusive<P%` | hide the events whose total over the threads is under P percent of the run's total (of the metric the filter is applied with) |
//! | `threads>Kx` | show only the threads whose total (their top-level inclusive value, [`crate::thread_totals`]) exceeds K times the mean over the threads: the outliers, e.g. stragglers |
//!
//! Globs are those of the `glob` crate (`*`, `?`, `[ab]`), matched case-sensitively against
//! the whole routine or group name. Several `name`/`group` rules show what any of them
//! matches; a threshold applies to what they show; hiding rules come last. An event shown by
//! the `name`/`group` rules or the threshold keeps its callers (the call-tree nodes above it),
//! so the tree stays whole, as Hatchet's `filter` keeps a node's path; a node that is hidden
//! hides its subtree. Threads are chosen on the whole run, before any event is hidden. Every
//! filter reports how many events and threads it hid: nothing disappears silently.

use crate::stats::{event_stats, run_total};
use perfscape_model::{EventId, MetricId, Profile, ValueKind};
use std::fmt;
use std::str::FromStr;

/// A rule that could not be read, or applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FilterError {
    /// The text is not one of the rule forms.
    #[error(
        "filter `{0}`: expected `name=GLOB`, `group=GLOB`, `!name=GLOB`, `!group=GLOB`, `exclusive<P%` or `inclusive<P%`"
    )]
    Syntax(String),
    /// The glob pattern is malformed (position in the pattern, from 0).
    #[error("filter `{rule}`: pattern character {position}: {message}")]
    Pattern {
        /// The rule as given.
        rule: String,
        /// Position in the pattern.
        position: usize,
        /// What is wrong.
        message: String,
    },
    /// The factor of `threads>Kx` is not a finite number of at least 0.
    #[error("filter `{0}`: the factor must be a number of at least 0, e.g. `threads>1.5x`")]
    Factor(String),
    /// The percentage is not a number from 0 to 100.
    #[error("filter `{0}`: the percentage must be a number from 0 to 100")]
    Percent(String),
    /// A threshold on a metric without a run total (a minimum, maximum, mean or ratio).
    #[error(
        "filter `{rule}`: metric `{metric}` does not add up over threads, so it has no run total to take a percentage of"
    )]
    NotAdditive {
        /// The rule as given.
        rule: String,
        /// The metric's name.
        metric: String,
    },
}

#[derive(Debug, Clone, PartialEq)]
enum Rule {
    Name(glob::Pattern, bool),
    Group(glob::Pattern, bool),
    Below(ValueKind, f64),
    /// Threads whose total exceeds this factor times the mean thread total.
    ThreadsAbove(f64),
}

/// One rule of an [`EventFilter`], as written.
#[derive(Debug, Clone, PartialEq)]
pub struct FilterRule {
    text: String,
    rule: Rule,
}

impl FromStr for FilterRule {
    type Err = FilterError;

    fn from_str(s: &str) -> Result<Self, FilterError> {
        let text = s.trim().to_string();
        let syntax = || FilterError::Syntax(text.clone());
        let pattern = |p: &str| {
            glob::Pattern::new(p.trim()).map_err(|e| FilterError::Pattern {
                rule: text.clone(),
                position: e.pos,
                message: e.msg.to_string(),
            })
        };
        let (hide, body) = match text.strip_prefix('!') {
            Some(rest) => (true, rest.trim_start()),
            None => (false, text.as_str()),
        };
        let rule = if let Some((key, value)) = body.split_once('=') {
            match key.trim() {
                "name" => Rule::Name(pattern(value)?, hide),
                "group" => Rule::Group(pattern(value)?, hide),
                _ => return Err(syntax()),
            }
        } else if let Some(value) = body.strip_prefix("threads>")
            && !hide
        {
            let factor = value
                .trim()
                .strip_suffix('x')
                .ok_or_else(syntax)?
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|k| k.is_finite() && *k >= 0.0)
                .ok_or_else(|| FilterError::Factor(text.clone()))?;
            Rule::ThreadsAbove(factor)
        } else if let Some((key, value)) = body.split_once('<')
            && !hide
        {
            let kind = match key.trim() {
                "exclusive" => ValueKind::Exclusive,
                "inclusive" => ValueKind::Inclusive,
                _ => return Err(syntax()),
            };
            let percent = value
                .trim()
                .strip_suffix('%')
                .ok_or_else(syntax)?
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|p| (0.0..=100.0).contains(p))
                .ok_or_else(|| FilterError::Percent(text.clone()))?;
            Rule::Below(kind, percent)
        } else {
            return Err(syntax());
        };
        Ok(FilterRule { text, rule })
    }
}

impl fmt::Display for FilterRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// A list of [`FilterRule`]s (see the module documentation).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EventFilter {
    /// The rules, in the order given.
    pub rules: Vec<FilterRule>,
}

impl EventFilter {
    /// Reads every rule; the first bad one is the error.
    pub fn parse<S: AsRef<str>>(rules: &[S]) -> Result<Self, FilterError> {
        Ok(EventFilter {
            rules: rules
                .iter()
                .map(|r| r.as_ref().parse())
                .collect::<Result<_, _>>()?,
        })
    }
}

/// What a filter did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterReport {
    /// The rules, as written, joined with `, `.
    pub rules: String,
    /// Interval events before.
    pub events_before: usize,
    /// Events hidden.
    pub hidden: usize,
    /// Threads before.
    pub threads_before: usize,
    /// Threads hidden (by `threads>Kx`).
    pub threads_hidden: usize,
}

impl fmt::Display for FilterReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "filter {}: {} of {} events hidden, {} shown",
            self.rules,
            self.hidden,
            self.events_before,
            self.events_before - self.hidden
        )?;
        if self.threads_hidden > 0 {
            write!(
                f,
                "; {} of {} threads hidden, {} shown",
                self.threads_hidden,
                self.threads_before,
                self.threads_before - self.threads_hidden
            )?;
        }
        Ok(())
    }
}

/// The profile with only the events `filter` shows, and how many it hid. Thresholds are
/// taken of metric `m`.
///
/// Errors: a threshold on a metric that does not add up ([`FilterError::NotAdditive`]).
pub fn filter_events(
    profile: Profile,
    filter: &EventFilter,
    m: MetricId,
) -> Result<(Profile, FilterReport), FilterError> {
    let n = profile.events().len();
    let groups_of = |e: EventId| profile.event(e).groups.iter().map(|g| profile.group_name(*g));
    let shows = |e: EventId, rule: &Rule| match rule {
        Rule::Name(p, false) => p.matches(profile.event(e).leaf()),
        Rule::Group(p, false) => groups_of(e).any(|g| p.matches(g)),
        _ => false,
    };
    let showing: Vec<&Rule> = filter
        .rules
        .iter()
        .map(|r| &r.rule)
        .filter(|r| matches!(r, Rule::Name(_, false) | Rule::Group(_, false)))
        .collect();
    let mut base: Vec<bool> = profile
        .event_ids()
        .map(|e| showing.is_empty() || showing.iter().any(|r| shows(e, r)))
        .collect();
    for r in &filter.rules {
        if let Rule::Below(kind, percent) = r.rule {
            let total = run_total(&profile, m).ok_or_else(|| FilterError::NotAdditive {
                rule: r.text.clone(),
                metric: profile.metric(m).name.clone(),
            })?;
            let floor = total * percent / 100.0;
            for e in profile.event_ids() {
                if base[e.index()] {
                    let s = event_stats(&profile, e, m);
                    let v = if kind == ValueKind::Exclusive {
                        s.exclusive.total
                    } else {
                        s.inclusive.total
                    };
                    base[e.index()] = v >= floor;
                }
            }
        }
    }
    // An event shown keeps its callers; `walked[x]`: x and every caller above it are kept.
    let mut keep = base.clone();
    let mut walked = vec![false; n];
    for e in profile.event_ids() {
        if base[e.index()] {
            let mut p = profile.event(e).parent();
            while let Some(x) = p {
                if walked[x.index()] {
                    break;
                }
                walked[x.index()] = true;
                keep[x.index()] = true;
                p = profile.event(x).parent();
            }
        }
    }
    for r in &filter.rules {
        let hide = |e: EventId| match &r.rule {
            Rule::Name(p, true) => p.matches(profile.event(e).leaf()),
            Rule::Group(p, true) => groups_of(e).any(|g| p.matches(g)),
            _ => false,
        };
        for e in profile.event_ids() {
            if keep[e.index()] && hide(e) {
                keep[e.index()] = false;
            }
        }
    }
    let rules = filter
        .rules
        .iter()
        .map(|r| r.text.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    // Threads, chosen on the whole run.
    let threads_before = profile.threads().len();
    let mut keep_threads = vec![true; threads_before];
    for r in &filter.rules {
        if let Rule::ThreadsAbove(k) = r.rule {
            let totals = crate::stats::thread_totals(&profile, m);
            let mean = totals.iter().map(|t| t.inclusive).sum::<f64>() / totals.len().max(1) as f64;
            for t in &totals {
                if t.inclusive.is_nan() || t.inclusive <= k * mean {
                    keep_threads[t.thread.index()] = false;
                }
            }
        }
    }
    let (profile, hidden) = profile.retain_events(&keep);
    let (profile, threads_hidden) = profile.retain_threads(&keep_threads);
    Ok((
        profile,
        FilterReport {
            rules,
            events_before: n,
            hidden,
            threads_before,
            threads_hidden,
        },
    ))
}
