//! The events of a trace as they stream in, kept compactly: each event is looked at once, in
//! file order, while the JSON is read, and only what the trace model needs is kept (interned
//! names, thread and process numbers, times) until every thread is known and the trace can
//! be built ([`super::phases`]). Nothing keeps the JSON of an event after it was read.

use super::json::{Ev, Key, Tally, text_of};
use perfscape_model::trace::InstantScope;
use rustc_hash::FxHashMap as HashMap;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::collections::BTreeMap;

/// Strings numbered in order of first appearance, borrowed from the text when they can be.
#[derive(Default)]
pub(super) struct Interner<'a> {
    /// The strings, by number.
    pub(super) values: Vec<Cow<'a, str>>,
    index: HashMap<Cow<'a, str>, u32>,
    /// Which numbers are in `first_order` already.
    listed: Vec<bool>,
    /// Numbers in order of their first use by a complete or instant event (the order in which
    /// the trace builder interned them before the reader streamed; kept so names keep their
    /// numbers).
    pub(super) first_order: Vec<u32>,
}

impl<'a> Interner<'a> {
    /// The number of `s`.
    pub(super) fn intern(&mut self, s: Cow<'a, str>) -> u32 {
        if let Some(&i) = self.index.get(s.as_ref()) {
            return i;
        }
        let i = u32::try_from(self.values.len()).unwrap_or(u32::MAX);
        self.values.push(s.clone());
        self.index.insert(s, i);
        self.listed.push(false);
        i
    }

    /// The number of `s`, noting its first use by a complete or instant event.
    fn intern_listed(&mut self, s: Cow<'a, str>) -> u32 {
        let i = self.intern(s);
        if let Some(l) = self.listed.get_mut(i as usize)
            && !*l
        {
            *l = true;
            self.first_order.push(i);
        }
        i
    }

    /// The string numbered `i`.
    pub(super) fn get(&self, i: u32) -> &str {
        self.values.get(i as usize).map_or("", |s| s.as_ref())
    }
}

/// A complete (`X`) event: its interval and input position.
pub(super) struct Complete {
    pub(super) start: i64,
    pub(super) end: i64,
    pub(super) name: u32,
    pub(super) cat: u32,
    pub(super) seq: u64,
}

/// A begin (`B`) or end (`E`) event.
pub(super) struct BeginEnd {
    pub(super) ts: i64,
    pub(super) seq: u64,
    /// Byte offset in the text (for messages).
    pub(super) offset: u64,
    pub(super) name: u32,
    pub(super) cat: u32,
    pub(super) begin: bool,
}

/// What one thread's events left.
#[derive(Default)]
pub(super) struct ThreadEvents {
    /// Complete events.
    pub(super) complete: Vec<Complete>,
    /// Begin and end events, in file order.
    pub(super) begin_end: Vec<BeginEnd>,
    /// The last time seen on the thread (an event's `ts` + its `dur`).
    pub(super) last_ts: Option<i64>,
}

/// An instant event.
pub(super) struct Instant {
    pub(super) thread: u32,
    pub(super) ts: i64,
    pub(super) name: u32,
    pub(super) cat: u32,
    pub(super) scope: InstantScope,
}

/// An async (`b`/`e`/`S`/`F`) or flow (`s`/`t`/`f`) event, matched in time order later.
pub(super) struct Ordered<'a> {
    pub(super) ts: i64,
    /// Byte offset in the text (for messages).
    pub(super) offset: u64,
    pub(super) thread: u32,
    pub(super) pid: u32,
    pub(super) name: u32,
    pub(super) cat: u32,
    /// Flow scope, numbered in [`Collector::scopes`].
    pub(super) scope: u32,
    pub(super) ph: u8,
    /// `id2` or `id` ("" when neither is given).
    pub(super) id: Cow<'a, str>,
    /// A flow start's message size, bytes: its `args` member `message-size` (as TAU's
    /// `tau_trace2json` writes), `None` when it has none.
    pub(super) bytes: Option<u64>,
}

/// One counter series: process, counter name and series name, and its values in file order.
pub(super) struct Series {
    pub(super) pid: u32,
    pub(super) name: String,
    pub(super) series: String,
    pub(super) values: Vec<(i64, f64)>,
}

/// Everything kept of the events of a trace.
#[derive(Default)]
pub(super) struct Collector<'a> {
    /// Distinct `pid` values, by number (every event's, process-scoped ones included).
    pub(super) pids: Vec<Key>,
    pid_index: HashMap<Key, u32>,
    /// Distinct (pid number, `tid`) pairs of thread-scoped events, by number.
    pub(super) threads: Vec<(u32, Key)>,
    thread_index: HashMap<(u32, Key), u32>,
    /// The raw `pid`/`tid` text of the last event and their numbers (consecutive events are
    /// mostly of one thread).
    last_key: Option<(&'a str, &'a str, u32, Option<u32>)>,
    /// Event names.
    pub(super) names: Interner<'a>,
    /// Categories.
    pub(super) cats: Interner<'a>,
    /// Flow scopes.
    pub(super) scopes: Interner<'a>,
    /// Per thread number, its intervals' events.
    pub(super) per_thread: Vec<ThreadEvents>,
    /// Instant events, in file order.
    pub(super) instants: Vec<Instant>,
    /// Async and flow events, in file order.
    pub(super) ordered: Vec<Ordered<'a>>,
    /// Counter series, in order of first appearance.
    pub(super) series: Vec<Series>,
    series_index: HashMap<(u32, String, String), u32>,
    /// Counter values kept.
    pub(super) counter_values: usize,
    /// `process_name` per pid number.
    pub(super) process_names: HashMap<u32, String>,
    /// `process_labels` per pid number.
    pub(super) process_labels: HashMap<u32, String>,
    /// `thread_name` per (pid number, tid).
    pub(super) thread_names: HashMap<(u32, Key), String>,
    /// Metadata events of other kinds.
    pub(super) other_metadata: usize,
    /// Events without `ts`.
    pub(super) missing_ts: Tally,
    /// Complete events without `dur`.
    pub(super) x_no_dur: Tally,
    /// Complete events with a negative `dur`.
    pub(super) x_negative: Tally,
    /// Counter events without `args` or with non-numeric values.
    pub(super) counter_bad: Tally,
    /// Events of phases not used, by phase.
    pub(super) ignored_phases: BTreeMap<char, usize>,
}

/// An `args` member of a metadata event, as text.
fn arg(args: Option<&RawValue>, k: &str) -> Option<String> {
    let args: HashMap<String, &RawValue> = args.and_then(|a| serde_json::from_str(a.get()).ok())?;
    args.get(k).map(|v| text_of(v).into_owned())
}

impl<'a> Collector<'a> {
    /// The number of a pid and, for a thread-scoped event, of its thread.
    fn numbers(
        &mut self,
        pid: Option<&'a RawValue>,
        tid: Option<&'a RawValue>,
        thread: bool,
    ) -> (u32, Option<u32>) {
        let (p_raw, t_raw) = (pid.map_or("", |v| v.get()), tid.map_or("", |v| v.get()));
        // Equal raw text is an equal key.
        let (pn, mut tn) = match self.last_key {
            Some((p, t, pn, tn)) if p == p_raw && t == t_raw => (pn, tn),
            Some((p, _, pn, _)) if p == p_raw => (pn, None),
            _ => {
                let key = Key::of(pid);
                match self.pid_index.get(&key) {
                    Some(&n) => (n, None),
                    None => {
                        let n = u32::try_from(self.pids.len()).unwrap_or(u32::MAX);
                        self.pids.push(key.clone());
                        self.pid_index.insert(key, n);
                        (n, None)
                    }
                }
            }
        };
        if thread && tn.is_none() {
            let key = (pn, Key::of(tid));
            tn = Some(match self.thread_index.get(&key) {
                Some(&n) => n,
                None => {
                    let n = u32::try_from(self.threads.len()).unwrap_or(u32::MAX);
                    self.threads.push(key.clone());
                    self.thread_index.insert(key, n);
                    self.per_thread.push(ThreadEvents::default());
                    n
                }
            });
        }
        self.last_key = Some((p_raw, t_raw, pn, tn));
        (pn, if thread { tn } else { None })
    }

    /// The number of pid `key`, if an event has it.
    pub(super) fn pid_number(&self, key: &Key) -> Option<u32> {
        self.pid_index.get(key).copied()
    }

    /// Takes in one event (in file order).
    pub(super) fn push(&mut self, e: Ev<'a>) {
        let process_scoped = matches!(e.ph, b'C' | b'M');
        let (pid, thread) = self.numbers(e.pid, e.tid, !process_scoped);
        if let (Some(t), Some(ts)) = (thread, e.ts) {
            let end = ts.saturating_add(e.dur.unwrap_or(0).max(0));
            let last = &mut self.per_thread[t as usize].last_ts;
            *last = Some(last.map_or(end, |l| l.max(end)));
        }
        if e.ph == b'M' {
            self.metadata(pid, &e);
            return;
        }
        let Some(ts) = e.ts else {
            self.missing_ts.add(e.offset, || {
                format!(
                    "event {} (`{}`, phase {}) has no `ts`; skipped",
                    e.seq, e.name, e.ph as char
                )
            });
            return;
        };
        let offset = e.offset as u64;
        match (e.ph, thread) {
            (b'B' | b'E', Some(t)) => {
                let name = self.names.intern(e.name);
                let cat = self.cats.intern(e.cat);
                self.per_thread[t as usize].begin_end.push(BeginEnd {
                    ts,
                    seq: e.seq,
                    offset,
                    name,
                    cat,
                    begin: e.ph == b'B',
                });
            }
            (b'X', Some(t)) => {
                let dur = match e.dur {
                    Some(d) if d < 0 => {
                        self.x_negative.add(e.offset, || {
                            format!("complete event `{}` has a negative `dur`; read as 0", e.name)
                        });
                        0
                    }
                    Some(d) => d,
                    None => {
                        self.x_no_dur.add(e.offset, || {
                            format!("complete event `{}` has no `dur`; read as 0", e.name)
                        });
                        0
                    }
                };
                let name = self.names.intern_listed(e.name);
                let cat = self.cats.intern_listed(e.cat);
                self.per_thread[t as usize].complete.push(Complete {
                    start: ts,
                    end: ts.saturating_add(dur),
                    name,
                    cat,
                    seq: e.seq,
                });
            }
            (b'i' | b'I' | b'n' | b'T' | b'p', Some(t)) => {
                let scope = match (e.ph, e.instant_scope.as_ref()) {
                    (b'n' | b'T' | b'p', _) => InstantScope::Async,
                    (_, "g") => InstantScope::Global,
                    (_, "p") => InstantScope::Process,
                    _ => InstantScope::Thread,
                };
                let name = self.names.intern_listed(e.name);
                let cat = self.cats.intern_listed(e.cat);
                self.instants.push(Instant {
                    thread: t,
                    ts,
                    name,
                    cat,
                    scope,
                });
            }
            (b'b' | b'e' | b'S' | b'F' | b's' | b't' | b'f', Some(t)) => {
                let name = self.names.intern(e.name);
                let cat = self.cats.intern(e.cat);
                let scope = self.scopes.intern(e.scope);
                self.ordered.push(Ordered {
                    ts,
                    offset,
                    thread: t,
                    pid,
                    name,
                    cat,
                    scope,
                    ph: e.ph,
                    id: e.id.unwrap_or_default(),
                    bytes: if e.ph == b's' {
                        arg(e.args, "message-size").and_then(|v| v.trim().parse().ok())
                    } else {
                        None
                    },
                });
            }
            (b'C', _) => self.counter(pid, ts, &e),
            (other, _) => *self.ignored_phases.entry(other as char).or_default() += 1,
        }
    }

    /// A metadata event: process and thread names and labels.
    fn metadata(&mut self, pid: u32, e: &Ev<'a>) {
        match e.name.as_ref() {
            "process_name" => {
                if let Some(n) = arg(e.args, "name") {
                    self.process_names.insert(pid, n);
                }
            }
            "thread_name" => {
                if let Some(n) = arg(e.args, "name") {
                    self.thread_names.insert((pid, Key::of(e.tid)), n);
                }
            }
            "process_labels" => {
                if let Some(n) = arg(e.args, "labels") {
                    self.process_labels.insert(pid, n);
                }
            }
            "process_sort_index" | "thread_sort_index" => {}
            _ => self.other_metadata += 1,
        }
    }

    /// A counter event: one value per `args` member.
    fn counter(&mut self, pid: u32, ts: i64, e: &Ev<'a>) {
        let name = match &e.id {
            Some(id) => format!("{}[{id}]", e.name),
            None => e.name.to_string(),
        };
        let args: Option<BTreeMap<String, &RawValue>> =
            e.args.and_then(|a| serde_json::from_str(a.get()).ok());
        let Some(args) = args else {
            self.counter_bad.add(e.offset, || {
                format!("counter `{name}` has no `args` object; skipped")
            });
            return;
        };
        for (series, v) in args {
            match text_of(v).trim().parse::<f64>() {
                Ok(x) if x.is_finite() => {
                    let key = (pid, name.clone(), series);
                    let i = match self.series_index.get(&key) {
                        Some(&i) => i,
                        None => {
                            let i = u32::try_from(self.series.len()).unwrap_or(u32::MAX);
                            self.series.push(Series {
                                pid,
                                name: key.1.clone(),
                                series: key.2.clone(),
                                values: Vec::new(),
                            });
                            self.series_index.insert(key, i);
                            i
                        }
                    };
                    self.series[i as usize].values.push((ts, x));
                    self.counter_values += 1;
                }
                _ => self.counter_bad.add(e.offset, || {
                    format!(
                        "counter `{name}` series `{series}` has the non-numeric value {}; skipped",
                        v.get()
                    )
                }),
            }
        }
    }
}
