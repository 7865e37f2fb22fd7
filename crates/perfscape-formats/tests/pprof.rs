//! pprof profiles: every corpus file loads; totals, flat and cum values equal `go tool
//! pprof`-style sums computed here independently from the decoded samples; threads from
//! labels; stripped profiles; inconsistent tables, huge values. Damaged input:
//! `pprof_damage.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{corpus, decompressed, gzip};
use perfscape_formats::pprof::{self, proto};
use perfscape_formats::{OpenOptions, detect, open, registry};
use perfscape_model::{EventKind, MetricId, Profile, ThreadId, ValueKind};
use prost::Message;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

fn pprof_files() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for d in std::fs::read_dir(corpus().join("pprof")).unwrap() {
        for f in std::fs::read_dir(d.unwrap().path()).unwrap() {
            out.push(f.unwrap().path());
        }
    }
    out.sort();
    assert_eq!(out.len(), 14, "corpus/pprof holds 14 files");
    out
}

/// `go tool pprof`'s view of a profile, computed from the decoded message alone: per sample
/// type the total, and per function name `flat` (values of the samples whose leaf frame is the
/// function) and `cum` (values of the samples with the function anywhere on the stack, once
/// per sample). Frames: one per location line (inlined ones included), named by the
/// function's name (else system name); a location without lines is named by its address.
struct Oracle {
    types: Vec<String>,
    total: Vec<i128>,
    flat: BTreeMap<String, Vec<i128>>,
    cum: BTreeMap<String, Vec<i128>>,
    samples: usize,
}

fn oracle(p: &proto::Profile) -> Oracle {
    let s = |i: i64| p.string_table[i as usize].clone();
    let funcs: BTreeMap<u64, String> = p
        .function
        .iter()
        .map(|f| {
            let n = if s(f.name).is_empty() {
                s(f.system_name)
            } else {
                s(f.name)
            };
            (f.id, n)
        })
        .collect();
    let locs: BTreeMap<u64, Vec<String>> = p
        .location
        .iter()
        .map(|l| {
            let addr = format!("0x{:x}", l.address);
            let names: Vec<String> = if l.line.is_empty() {
                vec![addr]
            } else {
                l.line
                    .iter()
                    .map(|ln| {
                        let n = funcs[&ln.function_id].trim().to_string();
                        if n.is_empty() { addr.clone() } else { n }
                    })
                    .collect()
            };
            (l.id, names)
        })
        .collect();
    let n = p.sample_type.len();
    let mut o = Oracle {
        types: p.sample_type.iter().map(|t| s(t.r#type)).collect(),
        total: vec![0; n],
        flat: BTreeMap::new(),
        cum: BTreeMap::new(),
        samples: p.sample.len(),
    };
    for smp in &p.sample {
        let frames: Vec<&String> = smp.location_id.iter().flat_map(|id| locs[id].iter()).collect();
        let leaf = frames
            .first()
            .map(|s| s.as_str())
            .unwrap_or("(no location)")
            .to_string();
        let distinct: BTreeSet<&str> = if frames.is_empty() {
            BTreeSet::from(["(no location)"])
        } else {
            frames.iter().map(|s| s.as_str()).collect()
        };
        for (k, v) in smp.value.iter().enumerate() {
            o.total[k] += i128::from(*v);
            o.flat.entry(leaf.clone()).or_insert_with(|| vec![0; n])[k] += i128::from(*v);
            for f in &distinct {
                o.cum.entry(f.to_string()).or_insert_with(|| vec![0; n])[k] += i128::from(*v);
            }
        }
    }
    o
}

fn close(a: f64, b: i128) -> bool {
    let b = b as f64;
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

/// Sum over threads of a flat event's value.
fn event_sum(p: &Profile, name: &str, kind: ValueKind, m: MetricId) -> Option<f64> {
    let e = p.event_by_name(name)?;
    Some(p.interval(e).values(kind, m).iter().sum())
}

#[test]
fn every_corpus_file_is_detected_and_loads() {
    for f in pprof_files() {
        assert_eq!(detect(&f).unwrap().name, "pprof", "{}", f.display());
        let l = open(&f, &OpenOptions::default()).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        assert_eq!(l.report.format, "pprof");
        assert!(!l.report.is_partial(), "{}: {:?}", f.display(), l.report);
        assert!(
            l.report.warnings.is_empty(),
            "{}: {:?}",
            f.display(),
            l.report.warnings
        );
        assert_eq!(
            l.profile.threads(),
            &[ThreadId::new(0, 0, 0)],
            "no thread labels in the corpus"
        );
        if std::fs::metadata(&f).unwrap().len() < 100_000 {
            let again = open(
                &f,
                &OpenOptions {
                    format: registry::named("pprof"),
                    ..OpenOptions::default()
                },
            )
            .unwrap();
            assert_eq!(again.profile, l.profile, "load_as gives the same profile");
        }
    }
}

#[test]
fn totals_flat_and_cum_equal_independent_sums() {
    let mut checked_functions = 0;
    for f in pprof_files() {
        let bytes = std::fs::read(&f).unwrap();
        let decoded = pprof::decode(&decompressed(&bytes)).unwrap();
        let o = oracle(&decoded.profile);
        let p = open(&f, &OpenOptions::default()).unwrap().profile;
        assert_eq!(p.metrics().len(), o.types.len());
        for (k, ty) in o.types.iter().enumerate() {
            let m = p
                .metric_by_name(ty)
                .unwrap_or_else(|| panic!("{}: metric {ty}", f.display()));
            // Total: every sample's value lands in exactly one leaf, so the flat exclusive
            // values of the routines (not the [SAMPLE] line events) add up to it.
            let total: f64 = p
                .event_ids()
                .filter(|&e| !p.event(e).is_callpath() && p.event(e).kind == EventKind::Timer)
                .map(|e| p.interval(e).values(ValueKind::Exclusive, m).iter().sum::<f64>())
                .sum();
            assert!(
                close(total, o.total[k]),
                "{} {ty}: total {total} vs {}",
                f.display(),
                o.total[k]
            );
            // The threads' totals (the sums of their call trees' roots) add up to it too:
            // `no-python` has 4 samples under 3 roots, of which the largest holds 2.
            let threads_total: f64 = (0..p.threads().len())
                .map(|t| p.thread_total(t.into(), m).unwrap_or(0.0))
                .sum();
            assert!(
                close(threads_total, o.total[k]),
                "{} {ty}: threads' totals {threads_total} vs {}",
                f.display(),
                o.total[k]
            );
            for (name, v) in &o.flat {
                let got = event_sum(&p, name, ValueKind::Exclusive, m).unwrap_or(0.0);
                assert!(
                    close(got, v[k]),
                    "{} {ty} flat `{name}`: {got} vs {}",
                    f.display(),
                    v[k]
                );
            }
            for (name, v) in &o.cum {
                let got = event_sum(&p, name, ValueKind::Inclusive, m)
                    .unwrap_or_else(|| panic!("{}: no event `{name}`", f.display()));
                assert!(
                    close(got, v[k]),
                    "{} {ty} cum `{name}`: {got} vs {}",
                    f.display(),
                    v[k]
                );
                checked_functions += 1;
            }
        }
        // Calls of a flat routine count the sample records with it on the stack.
        let calls_total: f64 = p
            .event_ids()
            .filter(|&e| p.event(e).kind == EventKind::Timer && !p.event(e).is_callpath())
            .filter(|&e| p.event(e).depth == 1)
            .map(|e| p.interval(e).calls().iter().sum::<f64>())
            .sum();
        assert!(calls_total >= o.samples as f64, "{}", f.display());
        // Every callpath's inclusive value is its exclusive value plus its children's
        // inclusive values.
        let m = MetricId(0);
        for e in p.event_ids() {
            let kids = p.call_tree().children(e);
            if kids.is_empty() || !p.event(e).is_callpath() {
                continue;
            }
            let x = p.interval(e).values(ValueKind::Exclusive, m)[0];
            let i = p.interval(e).values(ValueKind::Inclusive, m)[0];
            let sum: f64 = kids
                .iter()
                .map(|&c| p.interval(c).values(ValueKind::Inclusive, m)[0])
                .sum();
            assert!(
                (x + sum - i).abs() <= 1e-9 * i.abs().max(1.0),
                "{}: {}",
                f.display(),
                p.event_name(e)
            );
        }
    }
    assert!(checked_functions > 20_000, "checked {checked_functions}");
}

#[test]
fn cpu_time_is_samples_times_period() {
    // Go CPU profiles record, per sample, the sample count and count x period nanoseconds
    // (period = 10 ms at the default 100 Hz). So every event's cpu value must be its samples
    // value times the period the file states, on every event: an independent check of the
    // aggregation.
    for name in [
        "speedscope-simple/simple.prof.pb.gz",
        "google-pprof-testdata/sample.cpu.pb.gz",
        "parca-query-testdata/fib.pb.gz",
    ] {
        let f = corpus().join("pprof").join(name);
        let decoded = pprof::decode(&decompressed(&std::fs::read(&f).unwrap()))
            .unwrap()
            .profile;
        let period = decoded.period as f64;
        assert!(period > 0.0);
        let p = open(&f, &OpenOptions::default()).unwrap().profile;
        let cpu = p.metric_by_name("cpu").unwrap();
        assert_eq!(
            cpu,
            MetricId(0),
            "cpu (the last sample type) is the default metric"
        );
        assert_eq!(p.metric(cpu).unit, perfscape_model::Unit::Nanoseconds);
        let samples = p.metric_by_name("samples").unwrap();
        for e in p.event_ids() {
            for kind in [ValueKind::Exclusive, ValueKind::Inclusive] {
                let c = p.interval(e).values(kind, cpu)[0];
                let s = p.interval(e).values(kind, samples)[0];
                assert_eq!(c, s * period, "{name}: {}", p.event_name(e));
            }
        }
    }
    // speedscope's simple.prof: 9 sample records; main.main's calls are the records with it
    // on the stack and its inclusive samples their counts.
    let f = corpus().join("pprof/speedscope-simple/simple.prof.pb.gz");
    let p = open(&f, &OpenOptions::default()).unwrap().profile;
    let samples = p.metric_by_name("samples").unwrap();
    let decoded = pprof::decode(&decompressed(&std::fs::read(&f).unwrap()))
        .unwrap()
        .profile;
    assert_eq!(decoded.sample.len(), 9);
    let main_fn = decoded
        .string_table
        .iter()
        .position(|s| s == "main.main")
        .unwrap() as i64;
    let main_fn = decoded.function.iter().find(|f| f.name == main_fn).unwrap().id;
    let with_main: Vec<&proto::Sample> = decoded
        .sample
        .iter()
        .filter(|s| {
            s.location_id.iter().any(|id| {
                let l = decoded.location.iter().find(|l| l.id == *id).unwrap();
                l.line.iter().any(|ln| ln.function_id == main_fn)
            })
        })
        .collect();
    let records = with_main.len() as f64;
    let count: i64 = with_main.iter().map(|s| s.value[0]).sum();
    assert_eq!(
        event_sum(&p, "main.main", ValueKind::Calls, samples),
        Some(records)
    );
    assert_eq!(
        event_sum(&p, "main.main", ValueKind::Inclusive, samples),
        Some(count as f64)
    );
    assert!(
        p.event_by_name("runtime.main => main.main").is_some(),
        "callpaths start at the root frame"
    );
}

#[test]
fn stripped_profiles_name_frames_by_address() {
    for name in [
        "inlining-disabled-cpu.stripped.pprof",
        "normal-cpu.stripped.pprof",
    ] {
        let f = corpus().join("pprof/parca-symbolizer-unsymbolized").join(name);
        let l = open(&f, &OpenOptions::default()).unwrap();
        let flat: Vec<&str> = l
            .profile
            .events()
            .iter()
            .filter(|e| !e.is_callpath())
            .map(|e| &*e.frame)
            .collect();
        assert!(!flat.is_empty());
        for n in &flat {
            assert!(
                n.starts_with("0x") && u64::from_str_radix(&n[2..], 16).is_ok(),
                "{name}: frame `{n}` is not an address"
            );
        }
        assert!(
            l.report.notes.iter().any(|n| n.contains("named by address")),
            "{name}: {:?}",
            l.report.notes
        );
        // The frame group is the mapping's file.
        assert!(!l.profile.groups().is_empty());
    }
}

// ---------------------------------------------------------------- synthetic profiles

struct Builder {
    p: proto::Profile,
}

impl Builder {
    fn new(types: &[(&str, &str)]) -> Self {
        let mut b = Builder {
            p: proto::Profile {
                string_table: vec![String::new()],
                ..Default::default()
            },
        };
        for (t, u) in types {
            let vt = proto::ValueType {
                r#type: b.s(t),
                unit: b.s(u),
            };
            b.p.sample_type.push(vt);
        }
        b
    }

    fn s(&mut self, v: &str) -> i64 {
        if let Some(i) = self.p.string_table.iter().position(|x| x == v) {
            return i as i64;
        }
        self.p.string_table.push(v.to_string());
        (self.p.string_table.len() - 1) as i64
    }

    /// A location with one line of function `name` (ids = position + 1).
    fn func(&mut self, name: &str, file: &str, line: i64) -> u64 {
        let id = self.p.function.len() as u64 + 1;
        let f = proto::Function {
            id,
            name: self.s(name),
            system_name: 0,
            filename: self.s(file),
            start_line: 1,
        };
        self.p.function.push(f);
        self.p.location.push(proto::Location {
            id,
            mapping_id: 0,
            address: 0x1000 + id,
            line: vec![proto::Line {
                function_id: id,
                line,
                column: 0,
            }],
            is_folded: false,
        });
        id
    }

    fn sample(&mut self, stack_leaf_first: &[u64], values: &[i64], labels: &[(&str, LabelV)]) {
        let label = labels
            .iter()
            .map(|(k, v)| {
                let key = self.s(k);
                match v {
                    LabelV::N(n) => proto::Label {
                        key,
                        str: 0,
                        num: *n,
                        num_unit: 0,
                    },
                    LabelV::S(s) => proto::Label {
                        key,
                        str: self.s(s),
                        num: 0,
                        num_unit: 0,
                    },
                }
            })
            .collect();
        self.p.sample.push(proto::Sample {
            location_id: stack_leaf_first.to_vec(),
            value: values.to_vec(),
            label,
        });
    }

    fn bytes(&self) -> Vec<u8> {
        self.p.encode_to_vec()
    }
}

enum LabelV {
    N(i64),
    S(&'static str),
}

#[test]
fn thread_labels_become_threads() {
    let mut b = Builder::new(&[("samples", "count"), ("cpu", "nanoseconds")]);
    let main = b.func("main", "m.go", 3);
    let work = b.func("work", "m.go", 10);
    b.sample(&[work, main], &[1, 10], &[("thread_id", LabelV::N(7))]);
    b.sample(&[work, main], &[2, 20], &[("thread_id", LabelV::N(3))]);
    b.sample(&[main], &[1, 5], &[("thread_id", LabelV::N(7))]);
    b.sample(&[main], &[1, 1], &[]);
    let parsed = pprof::parse_pprof(&decompressed(&gzip(&b.bytes()))).unwrap();
    let p = &parsed.profile;
    // 3 and 7 are kept as thread numbers; the unlabeled sample goes to 8.
    assert_eq!(
        p.threads(),
        &[
            ThreadId::new(0, 0, 3),
            ThreadId::new(0, 0, 7),
            ThreadId::new(0, 0, 8)
        ]
    );
    let cpu = p.metric_by_name("cpu").unwrap();
    let t7 = p.thread_index(ThreadId::new(0, 0, 7)).unwrap();
    let e = p.event_by_name("main").unwrap();
    assert_eq!(p.value(e, t7, ValueKind::Inclusive, cpu), Some(15.0));
    assert_eq!(p.value(e, t7, ValueKind::Exclusive, cpu), Some(5.0));
    assert_eq!(p.value(e, t7, ValueKind::Calls, cpu), Some(2.0));
    assert_eq!(p.value(e, t7, ValueKind::Subcalls, cpu), Some(1.0));
    let w = p.event_by_name("main => work").unwrap();
    let t3 = p.thread_index(ThreadId::new(0, 0, 3)).unwrap();
    assert_eq!(p.value(w, t3, ValueKind::Exclusive, cpu), Some(20.0));
    let line = p.event_by_name("[SAMPLE] work [{m.go} {10}]").unwrap();
    assert_eq!(p.event(line).kind, EventKind::Sample);
    assert_eq!(p.value(line, t3, ValueKind::Exclusive, cpu), Some(20.0));
    assert!(parsed.notes.iter().any(|n| n.contains("`thread_id`")));

    // String labels (and a pid) are renumbered in sorted order, originals in metadata.
    let mut b = Builder::new(&[("cpu", "nanoseconds")]);
    let main = b.func("main", "m.go", 3);
    b.sample(
        &[main],
        &[10],
        &[("thread", LabelV::S("worker-b")), ("pid", LabelV::N(4242))],
    );
    b.sample(
        &[main],
        &[20],
        &[("thread", LabelV::S("worker-a")), ("pid", LabelV::N(4242))],
    );
    b.sample(
        &[main],
        &[30],
        &[("thread", LabelV::S("worker-a")), ("pid", LabelV::N(17))],
    );
    let p = pprof::parse_pprof(&b.bytes()).unwrap().profile;
    assert_eq!(
        p.threads(),
        &[
            ThreadId::new(17, 0, 0),
            ThreadId::new(4242, 0, 0),
            ThreadId::new(4242, 0, 1)
        ]
    );
    let t = p.thread_index(ThreadId::new(4242, 0, 1)).unwrap();
    assert_eq!(p.metadata().get(t, "pprof thread label"), Some("thread=worker-b"));
    assert_eq!(p.metadata().get(t, "pprof process label"), Some("pid=4242"));
}

#[test]
fn recursion_is_counted_once_in_cum() {
    let mut b = Builder::new(&[("cpu", "nanoseconds")]);
    let main = b.func("main", "m.go", 1);
    let fib = b.func("fib", "m.go", 2);
    b.sample(&[fib, fib, fib, main], &[5], &[]);
    b.sample(&[fib, main], &[7], &[]);
    let p = pprof::parse_pprof(&b.bytes()).unwrap().profile;
    let m = MetricId(0);
    assert_eq!(event_sum(&p, "fib", ValueKind::Inclusive, m), Some(12.0));
    assert_eq!(event_sum(&p, "fib", ValueKind::Exclusive, m), Some(12.0));
    assert_eq!(event_sum(&p, "fib", ValueKind::Calls, m), Some(2.0));
    assert_eq!(
        event_sum(&p, "main => fib => fib", ValueKind::Inclusive, m),
        Some(5.0)
    );
    assert_eq!(
        event_sum(&p, "main => fib => fib => fib", ValueKind::Exclusive, m),
        Some(5.0)
    );
    assert_eq!(event_sum(&p, "main", ValueKind::Inclusive, m), Some(12.0));
}

#[test]
fn huge_values_and_odd_names() {
    let mut b = Builder::new(&[("alloc_space", "bytes"), ("weird", "furlongs")]);
    let a = b.func("a => b", "x.c", 0);
    let e = b.func("", "x.c", 0);
    b.sample(&[a], &[i64::MAX, -5], &[]);
    b.sample(&[e, a], &[i64::MAX, i64::MIN], &[]);
    let parsed = pprof::parse_pprof(&b.bytes()).unwrap();
    let p = &parsed.profile;
    let weird = p.metric_by_name("weird").unwrap();
    assert_eq!(weird, MetricId(0), "the last sample type is the default metric");
    assert_eq!(
        p.metric(weird).unit,
        perfscape_model::Unit::Other("furlongs".into())
    );
    let space = p.metric_by_name("alloc_space").unwrap();
    // `=>` inside a function name is not a callpath separator.
    let ev = p.event_by_name("a = > b").unwrap();
    assert!(!p.event(ev).is_callpath());
    assert!(parsed.notes.iter().any(|n| n.contains("`= >`")));
    let v = event_sum(p, "a = > b", ValueKind::Inclusive, space).unwrap();
    assert!(v.is_finite() && v > 1e19);
    // A function without a name is named by its location's address.
    assert!(p.event_by_name("a = > b => 0x1002").is_some());
}

#[test]
fn very_deep_stacks_are_cut_in_the_middle() {
    // 3000 frames: f0 (root) calls f1 ... calls f2999 (leaf). Callpath names hold every frame,
    // so depth is bounded: the outermost 1022 frames, a cut marker, the leaf.
    let mut b = Builder::new(&[("cpu", "nanoseconds")]);
    let ids: Vec<u64> = (0..3000).map(|i| b.func(&format!("f{i}"), "d.go", 1)).collect();
    let leaf_first: Vec<u64> = ids.iter().rev().copied().collect();
    b.sample(&leaf_first, &[7], &[]);
    let parsed = pprof::parse_pprof(&b.bytes()).unwrap();
    let p = &parsed.profile;
    assert!(
        parsed
            .warnings
            .iter()
            .any(|w| w.message.contains("deeper than 1024 frames")),
        "{:?}",
        parsed.warnings
    );
    assert_eq!(
        event_sum(p, "f2999", ValueKind::Exclusive, MetricId(0)),
        Some(7.0),
        "the leaf keeps its value"
    );
    assert_eq!(event_sum(p, "f0", ValueKind::Inclusive, MetricId(0)), Some(7.0));
    assert!(p.events().iter().all(|e| e.depth <= 1024));
    assert!(p.event_by_name("f1500").is_none(), "middle frames are cut");
}

#[test]
fn empty_profile_and_samples_without_stack() {
    let b = Builder::new(&[("cpu", "nanoseconds")]);
    let parsed = pprof::parse_pprof(&b.bytes()).unwrap();
    assert_eq!(parsed.profile.threads().len(), 1);
    assert!(parsed.notes.iter().any(|n| n.contains("no samples")));
    let mut b = Builder::new(&[("cpu", "nanoseconds")]);
    b.sample(&[], &[4], &[]);
    let p = pprof::parse_pprof(&b.bytes()).unwrap().profile;
    assert_eq!(
        event_sum(&p, "(no location)", ValueKind::Exclusive, MetricId(0)),
        Some(4.0)
    );
}

#[test]
fn inconsistent_tables_are_reported() {
    // A sample with too few values and one with an undefined location are skipped, and the
    // file is marked as loaded in part.
    let mut b = Builder::new(&[("samples", "count"), ("cpu", "nanoseconds")]);
    let main = b.func("main", "m.go", 3);
    b.sample(&[main], &[1, 10], &[]);
    b.sample(&[main], &[1], &[]);
    b.sample(&[99], &[1, 10], &[]);
    let parsed = pprof::parse_pprof(&b.bytes()).unwrap();
    assert_eq!(parsed.partial.len(), 1, "{:?}", parsed.partial);
    let msg = &parsed.partial[0];
    assert!(msg.offset.is_some());
    assert!(
        msg.message
            .contains("sample 1 has 1 values but the profile has 2 sample types"),
        "{msg}"
    );
    assert!(
        msg.message
            .contains("1 sample(s) with a wrong number of values and 1 with undefined locations"),
        "{msg}"
    );
    assert_eq!(
        event_sum(&parsed.profile, "main", ValueKind::Exclusive, MetricId(0)),
        Some(10.0)
    );
    // A string index out of range is an error naming the referring entity.
    let mut b = Builder::new(&[("cpu", "nanoseconds")]);
    b.func("main", "m.go", 3);
    b.p.function[0].name = 999;
    let err = pprof::parse_pprof(&b.bytes()).unwrap_err();
    assert!(
        err.message
            .contains("function 0 (id 1): string index 999 is outside the string table"),
        "{err}"
    );
    assert!(err.offset.is_some());
    // No sample types.
    let err = pprof::parse_pprof(&Builder::new(&[]).bytes());
    assert!(err.is_err());
}
