//! Trace events into the trace model, phase by phase: begin/end pairs matched per thread in
//! time order, complete events, instants, counters, async spans and flows matched in time
//! order, unclosed slices closed at their thread's last timestamp.

use super::json::{Ev, Key, Tally, text_of};
use super::threads::Threads;
use super::{OpenPoint, Report};
use crate::problem::Problem;
use perfscape_model::TraceBuilder;
use perfscape_model::trace::InstantScope;
use rustc_hash::FxHashMap as HashMap;
use serde_json::value::RawValue;
use std::collections::{BTreeMap, VecDeque};

/// Adds every event to `tb`; returns the number of counter values added.
pub(super) fn add_events(
    evs: &[Ev<'_>],
    threads: &Threads,
    tb: &mut TraceBuilder,
    report: &mut Report,
) -> usize {
    let process_scoped = |e: &Ev<'_>| matches!(e.ph, b'C' | b'M');
    let mut last_ts: HashMap<u32, i64> = HashMap::default();
    let mut see = |h: u32, t: i64| {
        let e = last_ts.entry(h).or_insert(t);
        *e = (*e).max(t);
    };
    for e in evs {
        if process_scoped(e) {
            continue;
        }
        if let (Some(&h), Some(ts)) = (threads.handle.get(&(e.pid.clone(), e.tid.clone())), e.ts) {
            see(h, ts.saturating_add(e.dur.unwrap_or(0).max(0)));
        }
    }
    let mut missing_ts = Tally::default();
    let mut x_no_dur = Tally::default();
    let mut x_negative = Tally::default();
    let mut e_unmatched = Tally::default();
    let mut e_name_mismatch = Tally::default();
    let mut async_unmatched = Tally::default();
    let mut flow_unmatched = Tally::default();
    let mut counter_bad = Tally::default();
    let mut ignored_phases: BTreeMap<char, usize> = BTreeMap::new();
    let mut be: BTreeMap<u32, Vec<&Ev<'_>>> = BTreeMap::new();
    let mut async_open: HashMap<(Option<Key>, String, String), Vec<OpenPoint>> = HashMap::default();
    let mut legacy_open: HashMap<(Key, String, String), OpenPoint> = HashMap::default();
    let mut flows_open: HashMap<(String, String, String), VecDeque<OpenPoint>> = HashMap::default();
    let mut counters = 0usize;
    let mut ordered: Vec<&Ev<'_>> = Vec::new();
    for e in evs {
        let key = (e.pid.clone(), e.tid.clone());
        let h = threads.handle.get(&key).copied();
        let needs_ts = !matches!(e.ph, b'M');
        if needs_ts && e.ts.is_none() {
            missing_ts.add(e.line, || {
                format!(
                    "event {} (`{}`, phase {}) has no `ts`; skipped",
                    e.seq, e.name, e.ph as char
                )
            });
            continue;
        }
        let ts = e.ts.unwrap_or(0);
        match e.ph {
            b'B' | b'E' => {
                if let Some(h) = h {
                    be.entry(h).or_default().push(e);
                }
            }
            b'X' => {
                let Some(h) = h else { continue };
                let dur = match e.dur {
                    Some(d) if d < 0 => {
                        x_negative.add(e.line, || {
                            format!("complete event `{}` has a negative `dur`; read as 0", e.name)
                        });
                        0
                    }
                    Some(d) => d,
                    None => {
                        x_no_dur.add(e.line, || {
                            format!("complete event `{}` has no `dur`; read as 0", e.name)
                        });
                        0
                    }
                };
                let name = tb.name(&e.name);
                let cat = tb.category(&e.cat);
                tb.add_interval(h, ts, ts.saturating_add(dur), name, cat, e.seq, e.seq);
            }
            b'i' | b'I' => {
                let Some(h) = h else { continue };
                let scope = match e.instant_scope.as_ref() {
                    "g" => InstantScope::Global,
                    "p" => InstantScope::Process,
                    _ => InstantScope::Thread,
                };
                let name = tb.name(&e.name);
                let cat = tb.category(&e.cat);
                tb.add_instant(h, ts, name, cat, scope);
            }
            b'n' | b'T' | b'p' => {
                let Some(h) = h else { continue };
                let name = tb.name(&e.name);
                let cat = tb.category(&e.cat);
                tb.add_instant(h, ts, name, cat, InstantScope::Async);
            }
            b'b' | b'e' | b'S' | b'F' | b's' | b't' | b'f' => ordered.push(e),
            b'C' => {
                let node = threads.node_of.get(&e.pid).copied().unwrap_or(0);
                let name = match &e.id {
                    Some(id) => format!("{}[{id}]", e.name),
                    None => e.name.to_string(),
                };
                let args: Option<BTreeMap<String, &RawValue>> =
                    e.args.and_then(|a| serde_json::from_str(a.get()).ok());
                let Some(args) = args else {
                    counter_bad.add(e.line, || {
                        format!("counter `{name}` has no `args` object; skipped")
                    });
                    continue;
                };
                for (series, v) in args {
                    match text_of(v).trim().parse::<f64>() {
                        Ok(x) if x.is_finite() => {
                            tb.add_counter_value(node, &name, &series, ts, x);
                            counters += 1;
                        }
                        _ => counter_bad.add(e.line, || {
                            format!(
                                "counter `{name}` series `{series}` has the non-numeric value {}; skipped",
                                v.get()
                            )
                        }),
                    }
                }
            }
            b'M' => {}
            other => *ignored_phases.entry(other as char).or_default() += 1,
        }
    }
    // Async spans and flows are matched in time order (file order at equal times): producers
    // such as Kineto write them grouped by kind, not by time.
    ordered.sort_by_key(|e| e.ts.unwrap_or(0));
    for e in ordered {
        let h = threads.handle.get(&(e.pid.clone(), e.tid.clone())).copied();
        let ts = e.ts.unwrap_or(0);
        match e.ph {
            b'b' | b'e' => {
                let Some(h) = h else { continue };
                let id = e.id.clone().unwrap_or_default();
                let process = if id.starts_with("global:") {
                    None
                } else {
                    Some(e.pid.clone())
                };
                let k = (process, e.cat.to_string(), id.clone());
                let name = tb.name(&e.name);
                let cat = tb.category(&e.cat);
                if e.ph == b'b' {
                    async_open.entry(k).or_default().push((h, ts, name, cat));
                } else {
                    let open = async_open.entry(k).or_default();
                    // An end names the span it ends; an end without a name ends the innermost.
                    let pos = if e.name.is_empty() {
                        open.len().checked_sub(1)
                    } else {
                        open.iter().rposition(|o| o.2 == name)
                    };
                    match pos {
                        Some(p) => {
                            let (bh, bts, bname, bcat) = open.remove(p);
                            tb.add_async_span(bh, bts, ts, bname, bcat, &id);
                        }
                        None => async_unmatched.add(e.line, || {
                            format!("async end `{}` (id {id}) has no matching begin; skipped", e.name)
                        }),
                    }
                }
            }
            b'S' | b'F' => {
                let Some(h) = h else { continue };
                let id = e.id.clone().unwrap_or_default();
                let k = (e.pid.clone(), e.cat.to_string(), id.clone());
                let name = tb.name(&e.name);
                let cat = tb.category(&e.cat);
                if e.ph == b'S' {
                    legacy_open.insert(k, (h, ts, name, cat));
                } else {
                    match legacy_open.remove(&k) {
                        Some((bh, bts, bname, bcat)) => tb.add_async_span(bh, bts, ts, bname, bcat, &id),
                        None => async_unmatched.add(e.line, || {
                            format!(
                                "async finish `{}` (id {id}) has no matching start; skipped",
                                e.name
                            )
                        }),
                    }
                }
            }
            b's' | b't' | b'f' => {
                let Some(h) = h else { continue };
                let id = e.id.clone().unwrap_or_default();
                let k = (e.cat.to_string(), id.clone(), e.scope.to_string());
                let name = tb.name(&e.name);
                let cat = tb.category(&e.cat);
                let queue = flows_open.entry(k).or_default();
                match e.ph {
                    b's' => queue.push_back((h, ts, name, cat)),
                    b't' => match queue.front_mut() {
                        Some(f) => {
                            tb.add_flow(f.0, f.1, h, ts, f.2, f.3, &id);
                            f.0 = h;
                            f.1 = ts;
                        }
                        None => flow_unmatched.add(e.line, || {
                            format!("flow step `{}` (id {id}) has no flow start; skipped", e.name)
                        }),
                    },
                    _ => match queue.pop_front() {
                        Some(f) => tb.add_flow(f.0, f.1, h, ts, f.2, f.3, &id),
                        None => flow_unmatched.add(e.line, || {
                            format!("flow end `{}` (id {id}) has no flow start; skipped", e.name)
                        }),
                    },
                }
            }
            _ => {}
        }
    }
    // B/E per thread in time order (file order at equal times).
    let mut unclosed = 0usize;
    let mut unclosed_threads = 0usize;
    for (h, mut list) in be {
        list.sort_by_key(|e| e.ts.unwrap_or(0));
        let mut stack: Vec<&Ev<'_>> = Vec::new();
        for e in list {
            if e.ph == b'B' {
                stack.push(e);
                continue;
            }
            match stack.pop() {
                Some(b) => {
                    if !e.name.is_empty() && e.name != b.name {
                        e_name_mismatch.add(e.line, || {
                            format!(
                                "end event `{}` closes the open begin event `{}` (line {}); the names differ",
                                e.name, b.name, b.line
                            )
                        });
                    }
                    let name = tb.name(&b.name);
                    let cat = tb.category(&b.cat);
                    tb.add_interval(h, b.ts.unwrap_or(0), e.ts.unwrap_or(0), name, cat, b.seq, e.seq);
                }
                None => e_unmatched.add(e.line, || {
                    format!(
                        "end event `{}` has no open begin event on its thread; skipped",
                        e.name
                    )
                }),
            }
        }
        if !stack.is_empty() {
            unclosed += stack.len();
            unclosed_threads += 1;
            let end = last_ts.get(&h).copied().unwrap_or(0);
            for b in stack.into_iter().rev() {
                let name = tb.name(&b.name);
                let cat = tb.category(&b.cat);
                tb.add_interval(h, b.ts.unwrap_or(0), end, name, cat, b.seq, u64::MAX);
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
    missing_ts.report("events without `ts`", &mut report.partial);
    x_no_dur.report("complete events without `dur`", &mut report.warnings);
    x_negative.report("complete events with a negative `dur`", &mut report.warnings);
    e_unmatched.report("unmatched end events", &mut report.warnings);
    e_name_mismatch.report("end events with another name", &mut report.warnings);
    async_unmatched.report("unmatched async events", &mut report.warnings);
    flow_unmatched.report("unmatched flow events", &mut report.warnings);
    counter_bad.report("bad counter values", &mut report.warnings);
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
