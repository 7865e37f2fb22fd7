//! Trace events into the trace model, phase by phase: begin/end pairs matched per thread in
//! time order, complete events, instants, counters, async spans and flows matched in time
//! order, unclosed slices closed at their thread's last timestamp.

use super::collect::{BeginEnd, Collector, Interner};
use super::json::{Tally, line_of};
use super::threads::Threads;
use super::{OpenPoint, Report};

/// An open flow point: (thread handle, time ns, name id, category id, bytes of the message).
type OpenFlow = (u32, i64, u32, u32, Option<u64>);
use crate::problem::Problem;
use perfscape_model::TraceBuilder;
use rustc_hash::FxHashMap as HashMap;
use std::collections::VecDeque;

/// Numbers of a collector's interned strings in the trace builder, assigned on first use.
struct Ids(Vec<u32>);

impl Ids {
    /// The builder's numbers for the strings `first_order` lists, in that order.
    fn new(strings: &Interner<'_>, mut intern: impl FnMut(&str) -> u32) -> Self {
        let mut ids = vec![u32::MAX; strings.values.len()];
        for &i in &strings.first_order {
            ids[i as usize] = intern(strings.get(i));
        }
        Ids(ids)
    }

    /// The builder's number of string `i`, interning it on its first use.
    fn get(&mut self, strings: &Interner<'_>, i: u32, intern: impl FnOnce(&str) -> u32) -> u32 {
        let slot = &mut self.0[i as usize];
        if *slot == u32::MAX {
            *slot = intern(strings.get(i));
        }
        *slot
    }
}

/// Adds every event `col` kept to `tb`; returns the number of counter values added. `text`
/// is the trace's text (for the lines of messages).
pub(super) fn add_events(
    col: Collector<'_>,
    threads: &Threads,
    tb: &mut TraceBuilder,
    report: &mut Report,
    text: &str,
) -> usize {
    let Collector {
        names,
        cats,
        per_thread,
        instants,
        mut ordered,
        series,
        counter_values: counters,
        missing_ts,
        x_no_dur,
        x_negative,
        counter_bad,
        ignored_phases,
        ..
    } = col;
    // Names and categories of complete and instant events first, in file order: the numbers
    // they always had.
    let mut name_ids = Ids::new(&names, |s| tb.name(s));
    let mut cat_ids = Ids::new(&cats, |s| tb.category(s));
    let handle = |t: u32| threads.handle[t as usize];
    let mut e_unmatched = Tally::default();
    let mut e_name_mismatch = Tally::default();
    let mut async_unmatched = Tally::default();
    let mut flow_unmatched = Tally::default();
    let mut async_open: HashMap<(Option<u32>, u32, String), Vec<OpenPoint>> = HashMap::default();
    let mut legacy_open: HashMap<(u32, u32, String), OpenPoint> = HashMap::default();
    let mut flows_open: HashMap<(u32, String, u32), VecDeque<OpenFlow>> = HashMap::default();
    let mut be: Vec<(u32, i64, Vec<BeginEnd>)> = Vec::new();
    for (t, events) in per_thread.into_iter().enumerate() {
        let h = handle(t as u32);
        for c in events.complete {
            let name = name_ids.get(&names, c.name, |s| tb.name(s));
            let cat = cat_ids.get(&cats, c.cat, |s| tb.category(s));
            tb.add_interval(h, c.start, c.end, name, cat, c.seq, c.seq);
        }
        if !events.begin_end.is_empty() {
            be.push((h, events.last_ts.unwrap_or(0), events.begin_end));
        }
    }
    for i in instants {
        let name = name_ids.get(&names, i.name, |s| tb.name(s));
        let cat = cat_ids.get(&cats, i.cat, |s| tb.category(s));
        tb.add_instant(handle(i.thread), i.ts, name, cat, i.scope);
    }
    for s in series {
        let node = threads.node_of_pid.get(s.pid as usize).copied().unwrap_or(0);
        for (ts, v) in s.values {
            tb.add_counter_value(node, &s.name, &s.series, ts, v);
        }
    }
    // Async spans and flows are matched in time order (file order at equal times): producers
    // such as Kineto write them grouped by kind, not by time.
    ordered.sort_by_key(|e| e.ts);
    for e in ordered {
        let h = handle(e.thread);
        let ts = e.ts;
        let id = e.id.as_ref();
        let e_name = names.get(e.name);
        let name = name_ids.get(&names, e.name, |s| tb.name(s));
        let cat = cat_ids.get(&cats, e.cat, |s| tb.category(s));
        let offset = e.offset as usize;
        match e.ph {
            b'b' | b'e' => {
                let process = if id.starts_with("global:") {
                    None
                } else {
                    Some(e.pid)
                };
                let k = (process, e.cat, id.to_string());
                if e.ph == b'b' {
                    async_open.entry(k).or_default().push((h, ts, name, cat));
                } else {
                    let open = async_open.entry(k).or_default();
                    // An end names the span it ends; an end without a name ends the innermost.
                    let pos = if e_name.is_empty() {
                        open.len().checked_sub(1)
                    } else {
                        open.iter().rposition(|o| o.2 == name)
                    };
                    match pos {
                        Some(p) => {
                            let (bh, bts, bname, bcat) = open.remove(p);
                            tb.add_async_span(bh, bts, ts, bname, bcat, id);
                        }
                        None => async_unmatched.add(offset, || {
                            format!("async end `{e_name}` (id {id}) has no matching begin; skipped")
                        }),
                    }
                }
            }
            b'S' | b'F' => {
                let k = (e.pid, e.cat, id.to_string());
                if e.ph == b'S' {
                    legacy_open.insert(k, (h, ts, name, cat));
                } else {
                    match legacy_open.remove(&k) {
                        Some((bh, bts, bname, bcat)) => tb.add_async_span(bh, bts, ts, bname, bcat, id),
                        None => async_unmatched.add(offset, || {
                            format!("async finish `{e_name}` (id {id}) has no matching start; skipped")
                        }),
                    }
                }
            }
            _ => {
                let k = (e.cat, id.to_string(), e.scope);
                let queue = flows_open.entry(k).or_default();
                match e.ph {
                    b's' => queue.push_back((h, ts, name, cat, e.bytes)),
                    b't' => match queue.front_mut() {
                        Some(f) => {
                            tb.add_message(f.0, f.1, h, ts, f.2, f.3, id, f.4);
                            f.0 = h;
                            f.1 = ts;
                        }
                        None => flow_unmatched.add(offset, || {
                            format!("flow step `{e_name}` (id {id}) has no flow start; skipped")
                        }),
                    },
                    _ => match queue.pop_front() {
                        Some(f) => tb.add_message(f.0, f.1, h, ts, f.2, f.3, id, f.4),
                        None => flow_unmatched.add(offset, || {
                            format!("flow end `{e_name}` (id {id}) has no flow start; skipped")
                        }),
                    },
                }
            }
        }
    }
    // B/E per thread in time order (file order at equal times), threads in handle order.
    let mut unclosed = 0usize;
    let mut unclosed_threads = 0usize;
    be.sort_by_key(|b| b.0);
    for (h, last_ts, mut list) in be {
        list.sort_by_key(|e| e.ts);
        let mut stack: Vec<BeginEnd> = Vec::new();
        for e in list {
            if e.begin {
                stack.push(e);
                continue;
            }
            match stack.pop() {
                Some(b) => {
                    if !names.get(e.name).is_empty() && e.name != b.name {
                        e_name_mismatch.add(e.offset as usize, || {
                            format!(
                                "end event `{}` closes the open begin event `{}` (line {}); the names differ",
                                names.get(e.name),
                                names.get(b.name),
                                line_of(text, b.offset as usize)
                            )
                        });
                    }
                    let name = name_ids.get(&names, b.name, |s| tb.name(s));
                    let cat = cat_ids.get(&cats, b.cat, |s| tb.category(s));
                    tb.add_interval(h, b.ts, e.ts, name, cat, b.seq, e.seq);
                }
                None => e_unmatched.add(e.offset as usize, || {
                    format!(
                        "end event `{}` has no open begin event on its thread; skipped",
                        names.get(e.name)
                    )
                }),
            }
        }
        if !stack.is_empty() {
            unclosed += stack.len();
            unclosed_threads += 1;
            for b in stack.into_iter().rev() {
                let name = name_ids.get(&names, b.name, |s| tb.name(s));
                let cat = cat_ids.get(&cats, b.cat, |s| tb.category(s));
                tb.add_interval(h, b.ts, last_ts, name, cat, b.seq, u64::MAX);
            }
        }
    }
    if unclosed > 0 {
        report.warnings.push(Problem::whole(format!(
            "{unclosed} begin (`B`) event(s) on {unclosed_threads} thread(s) were never ended; each was closed at the last timestamp of its thread"
        )));
    }
    let open_async: usize = async_open.values().map(Vec::len).sum::<usize>() + legacy_open.len();
    if open_async > 0 {
        report.warnings.push(Problem::whole(format!(
            "{open_async} async span(s) were begun but never ended; they are left out of the async spans"
        )));
    }
    let open_flows: usize = flows_open.values().map(VecDeque::len).sum();
    if open_flows > 0 {
        report.warnings.push(Problem::whole(format!(
            "{open_flows} flow(s) were started but never finished; they are left out of the flows"
        )));
    }
    missing_ts.report("events without `ts`", text, &mut report.partial);
    x_no_dur.report("complete events without `dur`", text, &mut report.warnings);
    x_negative.report(
        "complete events with a negative `dur`",
        text,
        &mut report.warnings,
    );
    e_unmatched.report("unmatched end events", text, &mut report.warnings);
    e_name_mismatch.report("end events with another name", text, &mut report.warnings);
    async_unmatched.report("unmatched async events", text, &mut report.warnings);
    flow_unmatched.report("unmatched flow events", text, &mut report.warnings);
    counter_bad.report("bad counter values", text, &mut report.warnings);
    if !ignored_phases.is_empty() {
        report.notes.push(format!(
            "events of phases not used by perfscape were left out: {}",
            ignored_phases
                .iter()
                .map(|(p, n)| format!("{n} × `{p}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    counters
}
