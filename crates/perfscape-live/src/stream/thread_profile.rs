//! The profile of one streamed thread, built from its enter/exit, counter and message
//! records the way TAU's measurement library builds a thread's profile, and taken as a
//! [`ThreadSample`] at each sample record.
//!
//! TAU's rules (TAU User Guide, "Profiling"; `FunctionInfo`/`Profiler::Stop` in TAU's
//! source): a call is counted when its region is entered, and counts as a subcall of the
//! region it was entered from; at exit, inclusive = exit − enter and exclusive = inclusive −
//! the inclusive time of the calls made from it. A region entered again while already open
//! (recursion) adds its inclusive time only at the outermost exit. With callpaths, every
//! distinct stack `a => b => c` is a timer of its own (group `TAU_CALLPATH|<group>`), beside
//! the flat timer `c`. A sample taken while regions are open counts them up to the sample's
//! time, as TAU's snapshots do. Time is the metric `TIME` in microseconds.

use super::record::{EventValues, UserEventValues};
use perfscape_model::{Metric, ThreadId, ThreadSample, TimerDef, TimerSample, UserEventDef, UserEventSample};
use rustc_hash::FxHashMap as HashMap;
use std::sync::Arc;

/// TAU's user event of the messages a rank sent to rank N: this prefix, then N (the names
/// `perfscape_analysis::comm` reads into the communication matrix).
const SENT_PREFIX: &str = "Message size sent to node ";
/// TAU's user event of all messages a rank sent.
const SENT_ALL: &str = "Message size sent to all nodes";
/// TAU's user event of all messages a rank received.
const RECEIVED_ALL: &str = "Message size received from all nodes";

/// One timer's running totals (calls, subcalls, µs).
#[derive(Clone, Debug, Default)]
struct TimerAcc {
    calls: f64,
    subcalls: f64,
    exclusive_us: f64,
    inclusive_us: f64,
}

/// One user event's running summary.
#[derive(Clone, Debug)]
struct UserAcc {
    count: f64,
    max: f64,
    min: f64,
    sum: f64,
    sum_squares: f64,
}

/// An open region on the thread's stack.
#[derive(Clone, Debug)]
struct Frame {
    flat: usize,
    callpath: usize,
    start_ns: i64,
    /// Inclusive time of the calls made from this one so far, ns.
    child_ns: i64,
}

/// A streamed thread's profile (see the module documentation).
#[derive(Debug)]
pub(crate) struct ThreadProfile {
    thread: ThreadId,
    time: Arc<Vec<Metric>>,
    defs: Vec<Arc<TimerDef>>,
    timers: Vec<TimerAcc>,
    by_name: HashMap<String, usize>,
    user_defs: Vec<Arc<UserEventDef>>,
    users: Vec<UserAcc>,
    user_by_name: HashMap<String, usize>,
    stack: Vec<Frame>,
    /// Open frames per flat timer (for recursion).
    open: Vec<u32>,
}

impl ThreadProfile {
    /// An empty profile of `thread`.
    pub(crate) fn new(thread: ThreadId) -> Self {
        Self {
            thread,
            time: Arc::new(vec![Metric::tau("TIME")]),
            defs: Vec::new(),
            timers: Vec::new(),
            by_name: HashMap::default(),
            user_defs: Vec::new(),
            users: Vec::new(),
            user_by_name: HashMap::default(),
            stack: Vec::new(),
            open: Vec::new(),
        }
    }

    fn timer(&mut self, name: &str, groups: impl FnOnce() -> String) -> usize {
        if let Some(&i) = self.by_name.get(name) {
            return i;
        }
        let i = self.defs.len();
        self.defs.push(Arc::new(TimerDef {
            id: i as u32,
            name: name.to_string(),
            groups: groups(),
        }));
        self.timers.push(TimerAcc::default());
        self.open.push(0);
        self.by_name.insert(name.to_string(), i);
        i
    }

    /// The thread entered `region` at `t_ns`.
    pub(crate) fn enter(&mut self, region: &str, group: Option<&str>, t_ns: i64) {
        let group = group.unwrap_or("TAU_USER");
        let flat = self.timer(region, || group.to_string());
        let callpath = match self.stack.last() {
            None => None,
            Some(parent) => {
                let path = format!("{} => {region}", self.defs[parent.callpath].name);
                Some(self.timer(&path, || format!("TAU_CALLPATH|{group}")))
            }
        };
        if let Some(parent) = self.stack.last() {
            let (pf, pc) = (parent.flat, parent.callpath);
            self.timers[pf].subcalls += 1.0;
            if pc != pf {
                self.timers[pc].subcalls += 1.0;
            }
        }
        self.timers[flat].calls += 1.0;
        if let Some(c) = callpath {
            self.timers[c].calls += 1.0;
        }
        self.open[flat] += 1;
        self.stack.push(Frame {
            flat,
            callpath: callpath.unwrap_or(flat),
            start_ns: t_ns,
            child_ns: 0,
        });
    }

    /// The thread left its innermost region at `t_ns` (the caller checked that it is the
    /// region the record names). Does nothing with an empty stack.
    pub(crate) fn exit(&mut self, t_ns: i64) {
        let Some(frame) = self.stack.pop() else { return };
        Self::close(&mut self.timers, &mut self.open, &mut self.stack, frame, t_ns);
    }

    fn close(timers: &mut [TimerAcc], open: &mut [u32], stack: &mut [Frame], frame: Frame, t_ns: i64) {
        let inclusive_ns = t_ns.saturating_sub(frame.start_ns).max(0);
        let exclusive_us = (inclusive_ns - frame.child_ns) as f64 / 1000.0;
        let inclusive_us = inclusive_ns as f64 / 1000.0;
        open[frame.flat] -= 1;
        let f = &mut timers[frame.flat];
        f.exclusive_us += exclusive_us;
        if open[frame.flat] == 0 {
            f.inclusive_us += inclusive_us;
        }
        if frame.callpath != frame.flat {
            let c = &mut timers[frame.callpath];
            c.exclusive_us += exclusive_us;
            c.inclusive_us += inclusive_us;
        }
        if let Some(parent) = stack.last_mut() {
            parent.child_ns += inclusive_ns;
        }
    }

    /// Closes every open region at `t_ns` (the thread ended).
    pub(crate) fn close_all(&mut self, t_ns: i64) {
        while !self.stack.is_empty() {
            self.exit(t_ns);
        }
    }

    /// A value of the user event `name`.
    pub(crate) fn counter(&mut self, name: &str, value: f64) {
        let i = match self.user_by_name.get(name) {
            Some(&i) => i,
            None => {
                let i = self.user_defs.len();
                self.user_defs.push(Arc::new(UserEventDef {
                    id: i as u32,
                    name: name.to_string(),
                }));
                self.users.push(UserAcc {
                    count: 0.0,
                    max: f64::NEG_INFINITY,
                    min: f64::INFINITY,
                    sum: 0.0,
                    sum_squares: 0.0,
                });
                self.user_by_name.insert(name.to_string(), i);
                i
            }
        };
        let u = &mut self.users[i];
        u.count += 1.0;
        u.max = u.max.max(value);
        u.min = u.min.min(value);
        u.sum += value;
        u.sum_squares += value * value;
    }

    /// A message of `bytes` sent to rank `to` (`Some`) or received from rank `from`: TAU's
    /// communication user events. A receive is kept in the total of received messages only:
    /// the matrix is built from the senders' `sent to node N` events, as TAU records them by
    /// default, and ParaProf (and `perfscape_analysis::comm`) add `received from node N` events
    /// into the same cells, which would count each message twice.
    pub(crate) fn message(&mut self, to: Option<u32>, from: Option<u32>, bytes: u64) {
        let b = bytes as f64;
        if let Some(to) = to {
            self.counter(&format!("{}{to}", SENT_PREFIX), b);
            self.counter(SENT_ALL, b);
        } else if from.is_some() {
            self.counter(RECEIVED_ALL, b);
        }
    }

    /// The profile at `t_ns` as a thread sample named `name` (open regions counted up to
    /// `t_ns`; the running profile is not changed).
    pub(crate) fn sample(&self, name: &str, t_ns: i64) -> ThreadSample {
        let mut timers = self.timers.clone();
        let mut open = self.open.clone();
        let mut stack = self.stack.clone();
        while let Some(frame) = stack.pop() {
            Self::close(&mut timers, &mut open, &mut stack, frame, t_ns.max(0));
        }
        let mut timer_values = Vec::with_capacity(timers.len() * 2);
        let mut samples = Vec::with_capacity(timers.len());
        for (def, t) in self.defs.iter().zip(&timers) {
            samples.push(TimerSample {
                def: def.clone(),
                calls: t.calls,
                subcalls: t.subcalls,
            });
            timer_values.push(t.exclusive_us);
            timer_values.push(t.inclusive_us);
        }
        let user_events = self
            .user_defs
            .iter()
            .zip(&self.users)
            .map(|(def, u)| UserEventSample {
                def: def.clone(),
                count: u.count,
                max: u.max,
                min: u.min,
                mean: u.sum / u.count,
                sum_squares: u.sum_squares,
            })
            .collect();
        ThreadSample {
            thread: self.thread,
            name: name.to_string(),
            timestamp_us: t_ns.div_euclid(1000),
            metrics: self.time.clone(),
            metadata: None,
            timers: samples,
            timer_values,
            user_events,
        }
    }
}

/// A thread sample from an explicit [`super::Record::Sample`]'s values (checked by the
/// connection: one value per metric, all finite).
pub(crate) fn explicit_sample(
    thread: ThreadId,
    metrics: &Arc<Vec<Metric>>,
    name: &str,
    t_ns: i64,
    events: &[EventValues],
    user_events: &[UserEventValues],
) -> ThreadSample {
    let mut timers = Vec::with_capacity(events.len());
    let mut timer_values = Vec::with_capacity(events.len() * 2 * metrics.len());
    for (i, e) in events.iter().enumerate() {
        timers.push(TimerSample {
            def: Arc::new(TimerDef {
                id: i as u32,
                name: e.name.clone(),
                groups: e.group.clone().unwrap_or_else(|| "TAU_USER".into()),
            }),
            calls: e.calls,
            subcalls: e.subcalls,
        });
        for (x, n) in e.exclusive.iter().zip(&e.inclusive) {
            timer_values.push(*x);
            timer_values.push(*n);
        }
    }
    let user_events = user_events
        .iter()
        .enumerate()
        .map(|(i, u)| UserEventSample {
            def: Arc::new(UserEventDef {
                id: i as u32,
                name: u.name.clone(),
            }),
            count: u.count,
            max: u.max,
            min: u.min,
            mean: u.mean,
            sum_squares: u.sum_squares,
        })
        .collect();
    ThreadSample {
        thread,
        name: name.to_string(),
        timestamp_us: t_ns.div_euclid(1000),
        metrics: metrics.clone(),
        metadata: None,
        timers,
        timer_values,
        user_events,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(s: &ThreadSample, name: &str) -> (f64, f64, f64, f64) {
        let i = s.timers.iter().position(|t| t.def.name == name).unwrap();
        (
            s.timers[i].calls,
            s.timers[i].subcalls,
            s.exclusive(i, 0),
            s.inclusive(i, 0),
        )
    }

    /// main [0, 10 ms] calls f [1, 4 ms] which calls f again [2, 3 ms] (recursion), then g
    /// [5, 9 ms]; worked out by hand with TAU's rules.
    #[test]
    fn tau_rules_by_hand() {
        let mut p = ThreadProfile::new(ThreadId::new(0, 0, 0));
        let ms = 1_000_000;
        p.enter("main", None, 0);
        p.enter("f", None, ms);
        p.enter("f", None, 2 * ms);
        p.exit(3 * ms);
        p.exit(4 * ms);
        p.enter("g", Some("MPI"), 5 * ms);
        let open = p.sample("mid", 7 * ms);
        p.exit(9 * ms);
        p.exit(10 * ms);
        let s = p.sample("final", 10 * ms);
        // main: 1 call, 2 subcalls (f, g), inclusive 10 ms, exclusive 10 - 3 - 4 = 3 ms.
        assert_eq!(row(&s, "main"), (1.0, 2.0, 3000.0, 10000.0));
        // f: 2 calls, 1 subcall; exclusive 2 + 1 ms; inclusive only the outer 3 ms.
        assert_eq!(row(&s, "f"), (2.0, 1.0, 3000.0, 3000.0));
        assert_eq!(row(&s, "g"), (1.0, 0.0, 4000.0, 4000.0));
        assert_eq!(row(&s, "main => f"), (1.0, 1.0, 2000.0, 3000.0));
        assert_eq!(row(&s, "main => f => f"), (1.0, 0.0, 1000.0, 1000.0));
        let g = s.timers.iter().find(|t| t.def.name == "main => g").unwrap();
        assert_eq!(g.def.groups, "TAU_CALLPATH|MPI");
        // At 7 ms, main and g are open: counted up to 7 ms (main: 7 - 3 (f) - 2 (g) = 2 ms).
        assert_eq!(row(&open, "main"), (1.0, 2.0, 2000.0, 7000.0));
        assert_eq!(row(&open, "g"), (1.0, 0.0, 2000.0, 2000.0));
        assert_eq!(s.timestamp_us, 10_000);
    }

    #[test]
    fn messages_and_counters_are_tau_user_events() {
        let mut p = ThreadProfile::new(ThreadId::new(1, 0, 0));
        p.message(Some(3), None, 100);
        p.message(Some(3), None, 300);
        p.message(None, Some(2), 50);
        p.counter("heap", 2.0);
        let s = p.sample("x", 0);
        let u = |n: &str| s.user_events.iter().find(|u| u.def.name == n).unwrap().clone();
        let sent = u("Message size sent to node 3");
        assert_eq!(
            (sent.count, sent.min, sent.max, sent.mean),
            (2.0, 100.0, 300.0, 200.0)
        );
        assert_eq!(sent.sum_squares, 100_000.0);
        assert_eq!(u("Message size sent to all nodes").count, 2.0);
        assert_eq!(u("Message size received from all nodes").mean, 50.0);
        assert!(
            s.user_events
                .iter()
                .all(|u| !u.def.name.starts_with("Message size received from node"))
        );
        assert_eq!(u("heap").max, 2.0);
    }
}
