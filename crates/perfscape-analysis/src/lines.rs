//! The per-line table: every source line a profile attributes values to, with its per-thread
//! values per metric, and the source ranges of the routines (PerfVisS's line × processor
//! array, seed 000, section 2.1).
//!
//! Where lines come from: every format that knows source lines names a sampled line
//! `[SAMPLE] routine [{file} {line}]` (TAU's event-based sampling; `perf script` srclines,
//! pprof `Line`s, HPCToolkit line scopes and Caliper `source.line` are named the same way by
//! their readers, see `perfscape-formats`' `stacks.rs`, `hpctoolkit/` and `caliper/`), and the
//! model parses that suffix into [`perfscape_model::SourceLocation`]. A line's values are
//! those of its flat `[SAMPLE]` events (several when several routines share a line, e.g.
//! inlined code), combined per thread by the metric's rule (a sum for time and counts). Timers
//! whose names carry a range `[{file} {l,c}-{l,c}]` (PDT instrumentation) or a start
//! `[{file} {l,c}]` (compiler instrumentation) give the routine ranges. Locations in file
//! `(unknown)` or at line 0 are not lines and are left out.
//!
//! The statistics of a line across threads are [`crate::Summary`]'s: sum, mean, minimum and
//! maximum with their threads, population standard deviation (the seed's "min/max/mean/variance
//! per line with the processor ids", section 2.1.3), over the threads that have a value on the
//! line and over all threads of the run.

use crate::params::Values;
use crate::stats::Summary;
use perfscape_model::{Combine, Combiner, EventId, EventKind, Profile, ThreadIndex};
use std::collections::BTreeMap;

/// One sampled line of a file.
#[derive(Clone, Debug, PartialEq)]
pub struct TableLine {
    /// Line number (1-based).
    pub line: u32,
    /// The flat `[SAMPLE]` events attributed to the line, in event id order.
    pub events: Vec<EventId>,
}

/// The source range of a routine (a timer whose name carries a location).
#[derive(Clone, Debug, PartialEq)]
pub struct RoutineRange {
    /// The timer.
    pub event: EventId,
    /// Its name without the location (see [`perfscape_model::event::routine_name`]).
    pub name: String,
    /// First line.
    pub start: u32,
    /// Last line (the start line when the name gives no end).
    pub end: u32,
}

/// The lines and routines of one source file, as the run names it.
#[derive(Clone, Debug, PartialEq)]
pub struct TableFile {
    /// The file's name as written in the run (often an absolute path on the measured machine).
    pub name: String,
    /// Sampled lines, in line order.
    pub lines: Vec<TableLine>,
    /// Routine ranges, by start line.
    pub routines: Vec<RoutineRange>,
}

impl TableFile {
    /// The sampled line `line`, if any.
    pub fn line(&self, line: u32) -> Option<&TableLine> {
        self.lines
            .binary_search_by_key(&line, |l| l.line)
            .ok()
            .map(|i| &self.lines[i])
    }

    /// The last line the file's samples or routines name (0 when it has none).
    pub fn last_line(&self) -> u32 {
        let l = self.lines.last().map_or(0, |l| l.line);
        let r = self.routines.iter().map(|r| r.end).max().unwrap_or(0);
        l.max(r)
    }
}

/// Every source file of a profile with its sampled lines and routine ranges, files in name
/// order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LineTable {
    /// The files.
    pub files: Vec<TableFile>,
}

impl LineTable {
    /// The table of `profile`: flat `[SAMPLE]` events by (file, line), flat timers with a
    /// location as routine ranges.
    pub fn new(profile: &Profile) -> Self {
        struct Acc {
            lines: BTreeMap<u32, Vec<EventId>>,
            routines: Vec<RoutineRange>,
        }
        let mut files: BTreeMap<&str, Acc> = BTreeMap::new();
        for e in profile.event_ids() {
            let ev = profile.event(e);
            let Some(src) = ev.source() else { continue };
            if ev.is_callpath() || src.line == 0 || src.file == "(unknown)" || src.file.is_empty() {
                continue;
            }
            let acc = files.entry(src.file).or_insert_with(|| Acc {
                lines: BTreeMap::new(),
                routines: Vec::new(),
            });
            match ev.kind {
                EventKind::Sample => acc.lines.entry(src.line).or_default().push(e),
                EventKind::Timer => acc.routines.push(RoutineRange {
                    event: e,
                    name: perfscape_model::event::routine_name(&ev.frame).to_string(),
                    start: src.line,
                    end: src.end_line.unwrap_or(src.line).max(src.line),
                }),
                _ => {}
            }
        }
        LineTable {
            files: files
                .into_iter()
                .filter(|(_, a)| !a.lines.is_empty() || !a.routines.is_empty())
                .map(|(name, mut a)| {
                    a.routines.sort_by_key(|r| (r.start, r.end, r.event));
                    TableFile {
                        name: name.to_string(),
                        lines: a
                            .lines
                            .into_iter()
                            .map(|(line, events)| TableLine { line, events })
                            .collect(),
                        routines: a.routines,
                    }
                })
                .collect(),
        }
    }

    /// The file the run names `name`, if any.
    pub fn file(&self, name: &str) -> Option<&TableFile> {
        self.files
            .binary_search_by(|f| f.name.as_str().cmp(name))
            .ok()
            .map(|i| &self.files[i])
    }

    /// Approximate heap bytes held (for cache budgets).
    pub fn heap_bytes(&self) -> usize {
        self.files
            .iter()
            .map(|f| {
                f.name.capacity()
                    + f.lines
                        .iter()
                        .map(|l| 32 + l.events.capacity() * 4)
                        .sum::<usize>()
                    + f.routines.iter().map(|r| 48 + r.name.capacity()).sum::<usize>()
            })
            .sum()
    }
}

/// The per-thread values of one line: `values[i]` is thread `threads[i]`'s, threads in index
/// order, only threads with a value on one of the line's events.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LineValues {
    /// Threads with a value.
    pub threads: Vec<ThreadIndex>,
    /// Their values, in the unit of the metric (or counts for calls and subcalls).
    pub values: Vec<f64>,
}

impl LineValues {
    /// The value of thread `t`, if it has one.
    pub fn of(&self, t: ThreadIndex) -> Option<f64> {
        self.threads.binary_search(&t).ok().map(|i| self.values[i])
    }
}

/// The values of `events` (a line's `[SAMPLE]` events) per thread, for `values`' metric and
/// kind, combined across the events by the metric's rule (a sum for calls, subcalls and
/// additive metrics; see [`perfscape_model::Combine`]).
pub fn line_values(profile: &Profile, events: &[EventId], values: Values) -> LineValues {
    match events {
        [] => LineValues::default(),
        [e] => {
            let col = profile.interval(*e);
            LineValues {
                threads: col.threads().to_vec(),
                values: col.values(values.kind, values.metric).to_vec(),
            }
        }
        _ => {
            let rule = if values.kind.is_metric_independent() {
                Combine::Sum
            } else {
                profile.metric(values.metric).combine
            };
            let mut cells: Vec<(ThreadIndex, f64)> = events
                .iter()
                .flat_map(|&e| {
                    let col = profile.interval(e);
                    col.threads()
                        .iter()
                        .copied()
                        .zip(col.values(values.kind, values.metric).iter().copied())
                })
                .collect();
            cells.sort_by_key(|c| c.0);
            let mut out = LineValues::default();
            let mut i = 0;
            while i < cells.len() {
                let t = cells[i].0;
                let mut c = Combiner::new(rule);
                while i < cells.len() && cells[i].0 == t {
                    c.push(cells[i].1);
                    i += 1;
                }
                out.threads.push(t);
                out.values.push(c.finish().unwrap_or(f64::NAN));
            }
            out
        }
    }
}

/// The statistics of a line across the threads of `profile` (see the module documentation):
/// [`Summary::of`] the line's values, the total under the metric's rule.
pub fn line_summary(profile: &Profile, lv: &LineValues, values: Values) -> Summary {
    let combine = if values.kind.is_metric_independent() {
        Combine::Sum
    } else {
        profile.metric(values.metric).combine
    };
    Summary::of(&lv.values, &lv.threads, profile.threads().len(), combine)
}

#[cfg(test)]
mod tests {
    use super::*;
    use perfscape_model::{Metric, MetricId, ProfileBuilder, ThreadData, ThreadId, ValueKind};

    fn profile() -> Profile {
        let mut b = ProfileBuilder::new(vec![Metric::tau("TIME")]);
        let cells: [&[(&str, f64)]; 3] = [
            &[("[SAMPLE] f [{a.c} {3}]", 1.0), ("[SAMPLE] g [{a.c} {3}]", 2.0)],
            &[
                ("[SAMPLE] f [{a.c} {5}]", 4.0),
                ("int f() C [{a.c} {2,1}-{6,1}]", 4.0),
            ],
            &[
                ("[SAMPLE] f [{a.c} {3}]", 8.0),
                ("[SAMPLE] h [{(unknown)} {0}]", 1.0),
            ],
        ];
        for (rank, evs) in cells.iter().enumerate() {
            let mut d = ThreadData::new(1);
            for (name, v) in evs.iter() {
                let group = if name.starts_with("[SAMPLE]") {
                    "TAU_SAMPLE"
                } else {
                    "TAU_DEFAULT"
                };
                d.push_timer(name, group, 1.0, 0.0, &[*v], &[*v]).unwrap();
            }
            b.add_thread(ThreadId::new(rank as u32, 0, 0), d).unwrap();
        }
        b.finish().0
    }

    #[test]
    fn lines_combine_their_events_per_thread() {
        let p = profile();
        let t = LineTable::new(&p);
        assert_eq!(t.files.len(), 1, "(unknown) is not a file: {t:?}");
        let f = t.file("a.c").unwrap();
        assert_eq!(f.lines.iter().map(|l| l.line).collect::<Vec<_>>(), vec![3, 5]);
        assert_eq!(f.routines.len(), 1);
        assert_eq!((f.routines[0].start, f.routines[0].end), (2, 6));
        assert_eq!(f.routines[0].name, "int f()");
        assert_eq!(f.last_line(), 6);
        let v = Values {
            metric: MetricId(0),
            kind: ValueKind::Exclusive,
        };
        let lv = line_values(&p, &f.line(3).unwrap().events, v);
        assert_eq!(lv.values, vec![3.0, 8.0]);
        assert_eq!(lv.of(ThreadIndex::from(2)), Some(8.0));
        let s = line_summary(&p, &lv, v);
        assert_eq!((s.total, s.mean, s.min, s.max), (11.0, 5.5, 3.0, 8.0));
        assert_eq!(s.max_thread, Some(ThreadIndex::from(2)));
        assert_eq!(s.stddev, 2.5);
        assert!((s.mean_all - 11.0 / 3.0).abs() < 1e-12);
    }
}
