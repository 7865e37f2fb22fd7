//! Chrome Trace Event Format: every corpus trace loads; the derived profile equals
//! independent computations from the raw JSON (x_event_trace.json) and TAU's own
//! trace2profile (the TAU trace converted by tau_trace2json); the trace model (flows,
//! counters, instants, async spans, samples, unclosed slices, nanosecond timestamps);
//! malformed and truncated input.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::type_complexity)]

mod common;
use common::{corpus, gzip};
use perfscape_formats::chrome::parse_trace;
use perfscape_formats::{OpenOptions, detect, open, registry};
use perfscape_model::trace::{InstantScope, NO_PARENT};
use perfscape_model::{MetricId, Profile, ThreadId, Trace, ValueKind};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

fn chrome_files() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for d in std::fs::read_dir(corpus().join("chrome-trace")).unwrap() {
        for f in std::fs::read_dir(d.unwrap().path()).unwrap() {
            out.push(f.unwrap().path());
        }
    }
    out.push(corpus().join("tau-real/mpi-stencil-np4-trace/trace.chrome.json"));
    out.sort();
    assert_eq!(out.len(), 20);
    out
}

fn trace_of(path: &Path) -> (Trace, perfscape_formats::Opened) {
    let mut opened = open(path, &OpenOptions::default()).unwrap();
    (
        opened.trace.take().expect("a Chrome trace gives its trace"),
        opened,
    )
}

const T: MetricId = MetricId(0);

fn value(p: &Profile, thread: ThreadId, event: &str, kind: ValueKind) -> Option<f64> {
    let e = p.event_by_name(event)?;
    let t = p.thread_index(thread)?;
    p.value(e, t, kind, T)
}

#[test]
fn every_corpus_trace_is_detected_and_loads() {
    for f in chrome_files() {
        assert_eq!(detect(&f).unwrap().name, "chrome", "{}", f.display());
        let l = open(&f, &OpenOptions::default()).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        assert_eq!(l.report.format, "chrome");
        assert!(
            !l.report.is_partial(),
            "{}: {:?}",
            f.display(),
            l.report.partial_files
        );
        let p = &l.profile;
        assert_eq!(p.metrics()[0].name, "TIME");
        assert!(p.threads().windows(2).all(|w| w[0] < w[1]));
        if std::fs::metadata(&f).unwrap().len() < 100_000 {
            let again = open(
                &f,
                &OpenOptions {
                    format: registry::named("chrome"),
                    ..OpenOptions::default()
                },
            )
            .unwrap();
            assert_eq!(again.profile, l.profile);
        }
    }
}

// ------------------------------------------------------------ independent computation

#[derive(Debug, Clone)]
struct Iv {
    start: i64,
    end: i64,
    name: String,
    /// File positions of the opening and closing events (equal for `X`).
    seq: usize,
    end_seq: usize,
}

/// Intervals per (pid, tid) from the raw JSON: `X` as `[ts, ts + dur]`, `B`/`E` matched with
/// a stack in file order. Times in microseconds (the corpus files used here have integral
/// microsecond times, in order per thread).
fn raw_intervals(events: &[Value]) -> BTreeMap<(i64, i64), Vec<Iv>> {
    let num = |v: &Value| -> i64 {
        match v {
            Value::Number(n) => n.as_f64().unwrap() as i64,
            Value::String(s) => s.parse::<f64>().unwrap() as i64,
            _ => panic!("{v}"),
        }
    };
    let mut out: BTreeMap<(i64, i64), Vec<Iv>> = BTreeMap::new();
    let mut open: HashMap<(i64, i64), Vec<(i64, String, usize)>> = HashMap::new();
    for (seq, e) in events.iter().enumerate() {
        let ph = e["ph"].as_str().unwrap_or("");
        if !matches!(ph, "X" | "B" | "E") {
            continue;
        }
        let key = (num(&e["pid"]), num(&e["tid"]));
        let ts = num(&e["ts"]);
        let name = e["name"].as_str().unwrap_or("").trim().to_string();
        match ph {
            "X" => out.entry(key).or_default().push(Iv {
                start: ts,
                end: ts + num(&e["dur"]),
                name,
                seq,
                end_seq: seq,
            }),
            "B" => open.entry(key).or_default().push((ts, name, seq)),
            _ => {
                let (s, n, q) = open.get_mut(&key).unwrap().pop().unwrap();
                out.entry(key).or_default().push(Iv {
                    start: s,
                    end: ts,
                    name: n,
                    seq: q,
                    end_seq: seq,
                });
            }
        }
    }
    out
}

/// Whether interval `i` encloses interval `j` (`i != j`), by the format's own evidence: a
/// begin/end pair encloses what was written between its begin and end events; a complete
/// event encloses what lies within its time span, where they touch only what comes after it
/// (at its start: a longer-first order among complete events, file order otherwise; at its
/// end: a zero-length interval written after it).
fn encloses(i: &Iv, j: &Iv) -> bool {
    if i.seq == j.seq {
        return false;
    }
    if i.seq != i.end_seq {
        return i.seq < j.seq && j.seq < i.end_seq;
    }
    if !(i.start <= j.start && j.end <= i.end) {
        return false;
    }
    let j_complete = j.seq == j.end_seq;
    if j.start == i.start {
        return if j_complete {
            (-j.end, j.seq) > (-i.end, i.seq)
        } else {
            j.seq > i.seq
        };
    }
    if j.start == i.end {
        return j.seq > i.seq;
    }
    true
}

fn union_len(mut ivs: Vec<(i64, i64)>) -> i64 {
    ivs.sort();
    let mut total = 0;
    let mut cur: Option<(i64, i64)> = None;
    for (s, e) in ivs {
        match cur {
            Some((cs, ce)) if s <= ce => cur = Some((cs, ce.max(e))),
            Some((cs, ce)) => {
                total += ce - cs;
                cur = Some((s, e));
            }
            None => cur = Some((s, e)),
        }
    }
    total + cur.map_or(0, |(s, e)| e - s)
}

/// Per name: (calls, exclusive, inclusive), by definition: inclusive = union of the name's
/// intervals; exclusive = sum over its intervals of the length not covered by the union of
/// the intervals it encloses (see [`encloses`]), clipped to it. A pairwise computation,
/// unlike the reader's sort-and-stack nesting.
fn oracle(ivs: &[Iv]) -> BTreeMap<String, (usize, i64, i64)> {
    let mut out: BTreeMap<String, (usize, i64, i64)> = BTreeMap::new();
    let mut by_name: BTreeMap<&str, Vec<(i64, i64)>> = BTreeMap::new();
    for i in ivs {
        let inside: Vec<(i64, i64)> = ivs
            .iter()
            .filter(|j| encloses(i, j))
            .map(|j| (j.start.max(i.start), j.end.min(i.end)))
            .collect();
        let excl = (i.end - i.start) - union_len(inside);
        let o = out.entry(i.name.clone()).or_default();
        o.0 += 1;
        o.1 += excl;
        by_name.entry(&i.name).or_default().push((i.start, i.end));
    }
    for (name, v) in by_name {
        out.get_mut(name).unwrap().2 = union_len(v);
    }
    out
}

#[test]
fn x_event_trace_equals_independent_sums() {
    let f = corpus().join("chrome-trace/catapult-tracing-test-data/x_event_trace.json");
    let events: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
    let (trace, loaded) = trace_of(&f);
    let p = &loaded.profile;
    let raw = raw_intervals(&events);
    assert_eq!(raw.len(), 3);
    let mut checked = 0;
    for ((pid, tid), ivs) in &raw {
        let thread = ThreadId::new(*pid as u32, 0, *tid as u32);
        let t = trace.thread_index(thread).unwrap();
        assert_eq!(trace.lane(t).len(), ivs.len());
        let o = oracle(ivs);
        let mut excl_sum = 0.0;
        for (name, (calls, excl, incl)) in &o {
            assert_eq!(
                value(p, thread, name, ValueKind::Calls),
                Some(*calls as f64),
                "{thread} {name}"
            );
            let x = value(p, thread, name, ValueKind::Exclusive).unwrap();
            let i = value(p, thread, name, ValueKind::Inclusive).unwrap();
            assert!(
                (x - *excl as f64).abs() < 1e-6,
                "{thread} {name}: exclusive {x} vs {excl}"
            );
            assert!(
                (i - *incl as f64).abs() < 1e-6,
                "{thread} {name}: inclusive {i} vs {incl}"
            );
            excl_sum += x;
            checked += 1;
        }
        // Exclusive times partition the time the thread was inside some interval.
        let busy = union_len(ivs.iter().map(|i| (i.start, i.end)).collect());
        assert!(
            (excl_sum - busy as f64).abs() < 1e-6,
            "{thread}: {excl_sum} vs {busy}"
        );
        // Leaf intervals (containing no other interval) of names that are always leaves:
        // exclusive = inclusive = sum of durations when they do not overlap.
    }
    assert!(checked > 60, "{checked}");
    // The thread names come from the metadata events.
    let t = trace.thread_index(ThreadId::new(14689, 0, 14751)).unwrap();
    assert_eq!(trace.threads()[t].thread_name.as_deref(), Some("Compositor"));
    assert_eq!(
        trace.threads()[t].process_name.as_deref(),
        Some("Renderer (huge image - Google Search)")
    );
    let pt = p.thread_index(ThreadId::new(14689, 0, 14751)).unwrap();
    assert_eq!(p.metadata().get(pt, "Chrome thread name"), Some("Compositor"));
    // Counters with an id get it in brackets.
    assert!(
        trace
            .counters()
            .iter()
            .any(|c| c.name == "unused_memory_bytes[0xaf5adc4cfdc05dcc]" && c.series == "value")
    );
}

#[test]
fn callpaths_and_lanes_are_consistent() {
    for f in chrome_files() {
        let (trace, loaded) = trace_of(&f);
        let p = &loaded.profile;
        for (t, th) in trace.threads().iter().enumerate() {
            let lane = trace.lane(t);
            for i in 0..lane.len() {
                assert!(lane.start_ns()[i] <= lane.end_ns()[i]);
                if i > 0 {
                    assert!(
                        lane.start_ns()[i - 1] <= lane.start_ns()[i],
                        "{}: sorted",
                        f.display()
                    );
                }
                let par = lane.parent()[i];
                if par == NO_PARENT {
                    assert_eq!(lane.depth()[i], 0);
                } else {
                    assert!((par as usize) < i);
                    assert_eq!(lane.depth()[i], lane.depth()[par as usize] + 1);
                    assert!(lane.start_ns()[par as usize] <= lane.start_ns()[i]);
                }
            }
            // Per thread: the top-level intervals' total equals the sum of the flat
            // exclusive times when the lane nests properly.
            let Some(pt) = p.thread_index(th.id) else { continue };
            let top: i64 = (0..lane.len())
                .filter(|&i| lane.parent()[i] == NO_PARENT)
                .map(|i| lane.end_ns()[i] - lane.start_ns()[i])
                .sum();
            let improper = (0..lane.len()).any(|i| {
                let par = lane.parent()[i];
                par != NO_PARENT && lane.end_ns()[i] > lane.end_ns()[par as usize]
            });
            let overlapping_top = (1..lane.len()).any(|i| {
                lane.parent()[i] == NO_PARENT
                    && (0..i).any(|j| lane.parent()[j] == NO_PARENT && lane.end_ns()[j] > lane.start_ns()[i])
            });
            if improper || overlapping_top || lane.is_empty() {
                continue;
            }
            let excl: f64 = p
                .event_ids()
                .filter(|&e| {
                    !p.event(e).is_callpath()
                        && p.event(e).groups.iter().all(|g| p.group_name(*g) != "TAU_SAMPLE")
                })
                .filter_map(|e| p.value(e, pt, ValueKind::Exclusive, T))
                .sum();
            assert!(
                (excl - top as f64 / 1000.0).abs() <= 1e-6 * excl.abs().max(1.0),
                "{} thread {}: {excl} vs {}",
                f.display(),
                th.id,
                top as f64 / 1000.0
            );
            // Every callpath's inclusive time is at least the sum of its children's.
            for e in p.event_ids() {
                let Some(inc) = p.value(e, pt, ValueKind::Inclusive, T) else {
                    continue;
                };
                let kids: f64 = p
                    .call_tree()
                    .children(e)
                    .iter()
                    .filter_map(|&c| p.value(c, pt, ValueKind::Inclusive, T))
                    .sum();
                if p.event(e).is_callpath() {
                    let exc = p.value(e, pt, ValueKind::Exclusive, T).unwrap();
                    assert!(
                        (inc - exc - kids).abs() <= 1e-6 * inc.max(1.0),
                        "{}: {}",
                        f.display(),
                        p.event_name(e)
                    );
                }
            }
        }
    }
}

#[test]
fn tau_trace_equals_tau_trace2profile() {
    // TAU's trace2profile rebuilt flat profiles from the same trace (tau.trc) that
    // tau_trace2json converted to trace.chrome.json. Both read TAU's microsecond timestamps,
    // so every flat event of every rank must agree exactly: calls, subcalls, exclusive and
    // inclusive. (The only difference in form: trace2profile lists `smooth` with 0 calls on
    // rank 0, which never calls it; a thread with 0 calls does not have the event, and the
    // trace has no interval for it.)
    let dir = corpus().join("tau-real/mpi-stencil-np4-trace");
    let chrome = open(&dir.join("trace.chrome.json"), &OpenOptions::default())
        .unwrap()
        .profile;
    let tau = open(&dir.join("oracle/trace2profile"), &OpenOptions::default())
        .unwrap()
        .profile;
    assert_eq!(chrome.threads(), tau.threads());
    let mut cells = 0;
    for e in tau.event_ids() {
        let name = &tau.event_name(e);
        let col = tau.interval(e);
        for (r, t) in col.threads().iter().enumerate() {
            let ce = chrome
                .event_by_name(name)
                .unwrap_or_else(|| panic!("no `{name}`"));
            let ct = chrome.thread_index(tau.thread(*t)).unwrap();
            for (kind, want) in [
                (ValueKind::Calls, col.calls()[r]),
                (ValueKind::Subcalls, col.subcalls()[r]),
                (ValueKind::Exclusive, col.values(ValueKind::Exclusive, T)[r]),
                (ValueKind::Inclusive, col.values(ValueKind::Inclusive, T)[r]),
            ] {
                assert_eq!(
                    chrome.value(ce, ct, kind, T),
                    Some(want),
                    "{} {name} {kind:?}",
                    tau.thread(*t)
                );
            }
            cells += 1;
        }
        // No thread has an event that trace2profile does not give it.
        let ce = chrome.event_by_name(name).unwrap();
        assert_eq!(chrome.interval(ce).len(), col.len(), "{name}");
    }
    assert_eq!(cells, 17 * 4 + 3, "17 events on every rank, smooth on ranks 1-3");
    let flat_events = chrome.events().iter().filter(|e| !e.is_callpath()).count();
    assert_eq!(flat_events, tau.events().len());
    // The derived profile also has callpaths, which trace2profile does not write.
    assert!(
        chrome
            .event_by_name(".TAU application => main int (int, char **) => timestep_loop")
            .is_some()
    );
}

#[test]
fn tau_trace_messages_become_flows_between_ranks() {
    // tau_trace2json writes one `s` per send (args.destNode = receiving rank) and one `f`
    // per receive. The flows must connect each sender to the rank it sent to.
    let f = corpus().join("tau-real/mpi-stencil-np4-trace/trace.chrome.json");
    let text = std::fs::read_to_string(&f).unwrap();
    let fixed = format!("{}]", text.trim_end().trim_end_matches(','));
    let events: Vec<Value> = serde_json::from_str(&fixed).unwrap();
    let mut want: BTreeMap<(u32, u32), usize> = BTreeMap::new();
    for e in events.iter().filter(|e| e["ph"] == "s") {
        let from: u32 = e["pid"].as_str().unwrap().parse().unwrap();
        let to = e["args"]["destNode"].as_u64().unwrap() as u32;
        *want.entry((from, to)).or_default() += 1;
    }
    let (trace, loaded) = trace_of(&f);
    assert!(loaded.report.warnings.is_empty(), "{:?}", loaded.report.warnings);
    let flows = trace.flows();
    assert_eq!(flows.len(), 360);
    let mut got: BTreeMap<(u32, u32), usize> = BTreeMap::new();
    for i in 0..flows.len() {
        let from = trace.threads()[flows.from_thread[i] as usize].id.node;
        let to = trace.threads()[flows.to_thread[i] as usize].id.node;
        assert!(flows.from_ns[i] <= flows.to_ns[i] || from != to);
        *got.entry((from, to)).or_default() += 1;
    }
    assert_eq!(got, want);
    assert_eq!(trace.names()[flows.name[0] as usize], "MPI");
    assert_eq!(trace.time_range_ns(), Some((0, 900_162_000)));
}

#[test]
fn counters_instants_async_and_nanoseconds() {
    let dir = corpus().join("chrome-trace/catapult-tracing-test-data");
    let (trace, _) = trace_of(&dir.join("instance_counters.json"));
    let c: Vec<_> = trace
        .counters()
        .iter()
        .map(|c| (c.name.as_str(), c.value.clone()))
        .collect();
    assert_eq!(
        c,
        vec![
            ("counter[123]", vec![2.0, 10.0, 5.0, 8.0, 4.0, 10.0]),
            ("counter[b]", vec![10.0, 0.0]),
        ]
    );
    assert_eq!(trace.counters()[0].node, 52);
    assert_eq!(trace.counters()[0].ts_ns[0], 9_524_000);

    let (trace, loaded) = trace_of(&dir.join("instant_events.json"));
    assert_eq!(trace.instants().len(), 5);
    let scopes: Vec<InstantScope> = trace.instants().scope.clone();
    assert!(scopes.contains(&InstantScope::Thread) && scopes.contains(&InstantScope::Process));
    assert!(
        loaded.profile.threads().is_empty(),
        "no intervals, so no profile threads"
    );

    let (trace, loaded) = trace_of(&dir.join("nestable_async.json"));
    let a = trace.async_spans();
    let spans: Vec<(String, i64, i64)> = (0..a.len())
        .map(|i| {
            (
                trace.names()[a.name[i] as usize].clone(),
                a.start_ns[i],
                a.end_ns[i],
            )
        })
        .collect();
    assert!(
        spans.contains(&("REQUEST_BAR".to_string(), 10_000, 100_000)),
        "{spans:?}"
    );
    assert!(
        spans.contains(&("REQUEST_FOO".to_string(), 110_000, 200_000)),
        "{spans:?}"
    );
    assert!(spans.contains(&("URL_REQUEST_INNER".to_string(), 150_000, 160_000)));
    assert_eq!(
        spans.len(),
        8,
        "the deliberately unmatched begin and end are left out"
    );
    let w: Vec<&str> = loaded
        .report
        .warnings
        .iter()
        .map(|w| w.message.as_str())
        .collect();
    assert!(
        w.iter().any(|m| m.contains("URL_REQUEST_DELEGATE_UNMATCHED_END")),
        "{w:?}"
    );
    assert!(
        w.iter()
            .any(|m| m.contains("1 async span(s) were begun but never ended")),
        "{w:?}"
    );

    // ts is microseconds with nanosecond fractions, whatever displayTimeUnit says.
    let (trace, loaded) = trace_of(&dir.join("nanoseconds.json"));
    let lane = trace.lane(0);
    let dur = |name: &str| -> i64 {
        let i = (0..lane.len())
            .find(|&i| trace.names()[lane.name()[i] as usize] == name)
            .unwrap();
        lane.end_ns()[i] - lane.start_ns()[i]
    };
    assert_eq!(
        (dur("us1"), dur("us2"), dur("ns1"), dur("ns2"), dur("ns4")),
        (1100, 200, 11, 2, 4)
    );
    assert_eq!(
        value(
            &loaded.profile,
            ThreadId::new(1, 0, 1),
            "ns1",
            ValueKind::Inclusive
        ),
        Some(0.011)
    );
    assert!(
        loaded
            .report
            .notes
            .iter()
            .any(|n| n.contains("displayTimeUnit is `ns`"))
    );
}

#[test]
fn unclosed_slices_end_at_the_threads_last_timestamp() {
    let f = corpus().join("chrome-trace/catapult-tracing-test-data/main_thread_has_unclosed_slices.json");
    let events: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
    // Independent: per thread, the B events left open and the last timestamp.
    let mut open: HashMap<(i64, i64), Vec<(i64, String)>> = HashMap::new();
    let mut last: HashMap<(i64, i64), i64> = HashMap::new();
    for e in &events {
        let ph = e["ph"].as_str().unwrap();
        if ph == "M" {
            continue;
        }
        let k = (e["pid"].as_i64().unwrap(), e["tid"].as_i64().unwrap());
        let ts = e["ts"].as_i64().unwrap();
        let l = last.entry(k).or_insert(ts);
        *l = (*l).max(ts);
        match ph {
            "B" => open
                .entry(k)
                .or_default()
                .push((ts, e["name"].as_str().unwrap().to_string())),
            "E" => {
                open.get_mut(&k).unwrap().pop();
            }
            _ => {}
        }
    }
    open.retain(|_, v| !v.is_empty());
    let total: usize = open.values().map(Vec::len).sum();
    assert_eq!(total, 4);
    let (trace, loaded) = trace_of(&f);
    assert!(loaded.report.warnings.iter().any(|w| w.message.contains(&format!(
        "{total} begin (`B`) event(s) on {} thread(s) were never ended",
        open.len()
    ))));
    for (k, list) in &open {
        let t = trace
            .thread_index(ThreadId::new(k.0 as u32, 0, k.1 as u32))
            .unwrap();
        let lane = trace.lane(t);
        for (start, name) in list {
            let found = (0..lane.len()).any(|i| {
                lane.start_ns()[i] == start * 1000
                    && trace.names()[lane.name()[i] as usize] == *name
                    && lane.end_ns()[i] == last[k] * 1000
            });
            assert!(found, "{name} at {start} closed at {}", last[k]);
        }
    }
}

#[test]
fn samples_become_sampled_stacks_per_thread() {
    let f = corpus().join("chrome-trace/speedscope-hermes-trace-event/multi-thread-with-samples.json");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
    let (_, loaded) = trace_of(&f);
    let p = &loaded.profile;
    let samples = p.metric_by_name("samples").unwrap();
    let frames = doc["stackFrames"].as_object().unwrap();
    // Independent: per tid, samples per leaf frame name.
    let mut want: BTreeMap<(u32, String), f64> = BTreeMap::new();
    for s in doc["samples"].as_array().unwrap() {
        let tid: u32 = s["tid"].as_str().unwrap().parse().unwrap();
        let sf = s["sf"].to_string();
        let leaf = frames[&sf]["name"].as_str().unwrap().to_string();
        *want.entry((tid, leaf)).or_default() += 1.0;
    }
    for ((tid, leaf), n) in &want {
        let e = p.event_by_name(leaf).unwrap();
        let t = p.thread_index(ThreadId::new(7512, 0, *tid)).unwrap();
        assert_eq!(
            p.value(e, t, ValueKind::Exclusive, samples),
            Some(*n),
            "{tid} {leaf}"
        );
    }
    let t2 = p.thread_index(ThreadId::new(7512, 0, 2)).unwrap();
    let root2 = p.event_by_name("[root thread 2]").unwrap();
    assert_eq!(p.value(root2, t2, ValueKind::Inclusive, samples), Some(5.0));
    assert_eq!(p.value(root2, t2, ValueKind::Calls, samples), Some(5.0));
    assert!(p.event_by_name("[root thread 2] => function3").is_some());
}

// ------------------------------------------------------------------ malformed input

#[test]
fn truncation_at_every_byte_never_panics() {
    let f = corpus().join("chrome-trace/catapult-tracing-test-data/trivial_trace.json");
    let bytes = std::fs::read(&f).unwrap();
    for cut in 0..bytes.len() {
        match parse_trace(&bytes[..cut]) {
            Ok(t) => {
                // Complete events before the cut are kept.
                assert!(t.trace.as_ref().unwrap().interval_count() <= 2);
            }
            Err(e) => assert!(!e.message.is_empty()),
        }
    }
    // A cut inside the second event of the TAU trace: the events before load, the file is
    // marked partial with the line of the damage.
    let f = corpus().join("tau-real/mpi-stencil-np4-trace/trace.chrome.json");
    let text = std::fs::read_to_string(&f).unwrap();
    let cut = text.len() / 2;
    let t = parse_trace(&text.as_bytes()[..cut]).unwrap();
    let line = text[..cut].lines().count();
    assert!(!t.partial.is_empty(), "{:?}", t.notes);
    assert!(
        t.partial[0].line.is_some_and(|l| l == line),
        "{:?} vs line {line}",
        t.partial
    );
    assert!(t.trace.as_ref().unwrap().interval_count() > 500);
    // The open slices are closed at their thread's last timestamp and reported.
    assert!(t.warnings.iter().any(|w| w.message.contains("never ended")));
    // Truncated gzip: open decompresses what it can, the reader reads the events in it,
    // and the file is reported as loaded in part.
    let gz = gzip(text.as_bytes());
    let tmp = tempfile::tempdir().unwrap();
    let cut_gz = tmp.path().join("trace.json.gz");
    std::fs::write(&cut_gz, &gz[..gz.len() / 2]).unwrap();
    let o = open(&cut_gz, &OpenOptions::default()).unwrap();
    assert!(
        o.report.partial_files.iter().any(|w| w.message.contains("gzip")),
        "{:?}",
        o.report.partial_files
    );
    assert!(o.trace.unwrap().interval_count() > 100);
}

#[test]
fn malformed_events_are_reported_not_fatal() {
    let text = r#"[
{"name":"a","ph":"X","ts":0,"dur":10,"pid":1,"tid":1},
{"name":"b","ph":"X","ts":"twelve","dur":1,"pid":1,"tid":1},
{"name":"c","ts":5,"pid":1,"tid":1},
42,
{"name":"d","ph":"X","ts":1e300,"dur":1,"pid":1,"tid":1},
{"name":"e","ph":"X","ts":2,"dur":-3,"pid":1,"tid":1},
{"name":"f","ph":"E","ts":20,"pid":1,"tid":1},
{"name":"g","ph":"X","ts":3,"pid":1,"tid":1},
{"name":"h","ph":"C","ts":3,"pid":1,"args":{"v":"NaN","w":7}},
{"name":"a => b","ph":"X","ts":1,"dur":2,"pid":1,"tid":1},
{"name":"","ph":"X","ts":1,"dur":1,"pid":1,"tid":1}
]"#;
    let t = parse_trace(text.as_bytes()).unwrap();
    let msgs: Vec<String> = t
        .partial
        .iter()
        .chain(&t.warnings)
        .map(|p| p.to_string())
        .collect();
    let has = |s: &str| msgs.iter().any(|m| m.contains(s));
    // The first problem of each kind is shown with its line, and the count of the kind.
    assert!(
        has("line 4: event 2 has no `ph` (phase); skipped (2 malformed events in all)"),
        "{msgs:?}"
    );
    assert!(
        has("line 3: event 1: `ts` `twelve` is not a number; skipped (2 events with bad timestamps in all)"),
        "{msgs:?}"
    );
    let bad = parse_trace(b"[{\"name\":\"d\",\"ph\":\"X\",\"ts\":1e300,\"dur\":1,\"pid\":1,\"tid\":1}, 42]")
        .unwrap_err();
    assert!(
        bad.message.contains("outside the range of 64-bit nanoseconds"),
        "{bad}"
    );
    assert!(bad.message.contains("none of the 2 events"), "{bad}");
    assert!(has("negative `dur`"), "{msgs:?}");
    assert!(has("end event `f` has no open begin event"), "{msgs:?}");
    assert!(has("complete event `g` has no `dur`"), "{msgs:?}");
    assert!(has("series `v` has the non-numeric value \"NaN\""), "{msgs:?}");
    assert!(!t.partial.is_empty(), "skipped events make the load partial");
    let p = &t.profile;
    assert!(
        p.event_by_name("a = > b").is_some(),
        "`=>` in a name is not a callpath"
    );
    assert!(p.event_by_name("(unnamed)").is_some());
    assert_eq!(t.trace.as_ref().unwrap().counters().len(), 1);
}

#[test]
fn not_traces_give_clear_errors() {
    assert!(parse_trace(b"").unwrap_err().message.contains("empty"));
    assert!(parse_trace(b"   \n").unwrap_err().message.contains("empty"));
    let e = parse_trace(b"{\"data\": [1, 2]}").unwrap_err();
    assert!(e.message.contains("no `traceEvents`"), "{e}");
    let e = parse_trace(b"hello").unwrap_err();
    assert!(
        e.message.contains("not a Chrome trace") && e.line == Some(1),
        "{e}"
    );
    let e = parse_trace(b"[1, 2, 3]").unwrap_err();
    assert!(e.message.contains("none of the 3 events"), "{e}");
    let e = parse_trace(b"{\"traceEvents\": 5}").unwrap_err();
    assert!(e.message.contains("not a Chrome trace"), "{e}");
    // An empty trace is valid.
    let t = parse_trace(b"[]").unwrap();
    assert_eq!(t.trace.as_ref().unwrap().threads().len(), 0);
    let tmp = tempfile::tempdir().unwrap();
    let empty_gz = tmp.path().join("empty.json.gz");
    std::fs::write(&empty_gz, gzip(b"{\"traceEvents\": []}")).unwrap();
    let t = open(&empty_gz, &OpenOptions::default()).unwrap();
    assert_eq!(t.trace.as_ref().unwrap().threads().len(), 0);
    // Invalid UTF-8 after the first event: read up to it.
    let mut bytes = br#"[{"name":"a","ph":"X","ts":0,"dur":1,"pid":1,"tid":1},{"name":""#.to_vec();
    bytes.extend_from_slice(&[0xff, 0xfe]);
    let t = parse_trace(&bytes).unwrap();
    assert!(t.partial.iter().any(|p| p.message.contains("invalid UTF-8")));
    assert_eq!(t.trace.as_ref().unwrap().interval_count(), 1);
    // Random bytes never panic.
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    for len in 0..300 {
        let mut bytes: Vec<u8> = b"[{\"ph\":\"B\",".to_vec();
        bytes.extend((0..len).map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            b"{}[],:\"0123456789.eE-BEXph tsdurpidtid"[(x % 38) as usize]
        }));
        let _ = parse_trace(&bytes);
    }
}
