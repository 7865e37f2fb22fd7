//! Linux perf: perf.data files (the corpus's perf 3.8/3.16/4.4 files and a recording made
//! here) against what `perf script` itself reports on them (tests/fixtures/perf, see its
//! README); `perf script` text (the corpus files, counted independently here, and perf's own
//! text for the recording, with and without source lines); both readers on the same
//! recording; damaged files.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::corpus;
use perfscape_formats::perf::{data, script};
use perfscape_formats::{OpenOptions, detect, open, registry};
use perfscape_model::{EventKind, MetricId, Profile, ThreadId, ValueKind};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/perf")
        .join(name)
}

/// (corpus or fixture path, oracle name)
fn perf_data_files() -> Vec<(PathBuf, &'static str)> {
    let c = corpus().join("perf-data");
    vec![
        (
            c.join("perf-data-converter-multi-event/multi-event-single-process.perf.data"),
            "multi-event-single-process",
        ),
        (
            c.join("perf-data-converter-quipper/perf.data.callgraph-3.8"),
            "callgraph-3.8",
        ),
        (
            c.join("perf-data-converter-quipper/perf.data.lost_samples-4.4"),
            "lost_samples-4.4",
        ),
        (
            c.join("perf-data-converter-quipper/perf.data.singleprocess-3.8"),
            "singleprocess-3.8",
        ),
        (
            c.join("perf-data-converter-quipper/perf.data.systemwide.0-3.8"),
            "systemwide.0-3.8",
        ),
        (fixture("hot.perf.data"), "hot"),
    ]
}

fn csv(name: &str) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(fixture(name)).unwrap();
    text.lines()
        .skip(1)
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

/// Metric ids of the `samples` and `period` metrics of `event` (per-event names when the
/// profile has several events).
fn metrics_of(p: &Profile, event: &str) -> (MetricId, Option<MetricId>) {
    match p.metric_by_name("samples") {
        Some(s) => (s, p.metric_by_name("period")),
        None => (
            p.metric_by_name(&format!("samples ({event})")).unwrap(),
            p.metric_by_name(&format!("period ({event})")),
        ),
    }
}

/// Sum over the thread's flat routines (not `[SAMPLE]` lines) of the exclusive value: every
/// sample lands in exactly one leaf routine.
fn thread_total(p: &Profile, t: ThreadId, m: MetricId) -> f64 {
    let Some(ti) = p.thread_index(t) else { return 0.0 };
    let leaves: f64 = p
        .event_ids()
        .filter(|&e| !p.event(e).is_callpath() && p.event(e).kind == EventKind::Timer)
        .filter_map(|e| p.value(e, ti, ValueKind::Exclusive, m))
        .sum();
    // The thread's total (the sum of its call tree's roots) counts every sample once too.
    assert_eq!(p.thread_total(ti, m), Some(leaves), "thread {t}");
    leaves
}

#[test]
fn perf_data_equals_perf_script_per_thread_and_event() {
    for (path, name) in perf_data_files() {
        assert_eq!(detect(&path).unwrap().name, "perf-data", "{name}");
        let l = open(&path, &OpenOptions::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(l.report.format, "perf-data");
        assert!(!l.report.is_partial(), "{name}: {:?}", l.report.partial_files);
        assert!(
            l.report
                .notes
                .iter()
                .any(|n| n.contains("perf.data holds no symbols"))
        );
        let p = &l.profile;
        let rows = csv(&format!("{name}.threads.csv"));
        let mut want_threads = 0;
        // perf script's rows are per (pid, tid, cpu, event); a thread is (pid, tid) on
        // whichever CPUs it ran: its values are the sums over its CPUs, and its metadata
        // `cpus` lists them.
        let mut sum: BTreeMap<(ThreadId, String), (f64, f64)> = BTreeMap::new();
        let mut cpus: BTreeMap<ThreadId, std::collections::BTreeSet<u32>> = BTreeMap::new();
        for r in &rows {
            let (pid, tid): (u32, u32) = (r[0].parse().unwrap(), r[1].parse().unwrap());
            let t = ThreadId::new(pid, 0, tid);
            if !r[2].is_empty() {
                cpus.entry(t).or_default().insert(r[2].parse().unwrap());
            }
            let (samples, period): (f64, f64) = (r[4].parse().unwrap(), r[5].parse().unwrap());
            let e = sum.entry((t, r[3].clone())).or_default();
            e.0 += samples;
            e.1 += period;
            want_threads += 1;
        }
        assert!(want_threads > 0);
        for ((t, event), (samples, period)) in &sum {
            let (ms, mp) = metrics_of(p, event);
            assert_eq!(thread_total(p, *t, ms), *samples, "{name} {t} {event}");
            if let Some(mp) = mp {
                assert_eq!(thread_total(p, *t, mp), *period, "{name} {t} {event} period");
            }
        }
        for (t, set) in &cpus {
            let list: Vec<String> = set.iter().map(u32::to_string).collect();
            let ti = p.thread_index(*t).unwrap();
            assert_eq!(
                p.metadata().get(ti, "cpus"),
                Some(list.join(", ").as_str()),
                "{name} {t}"
            );
        }
        let sum: std::collections::BTreeSet<ThreadId> = sum.keys().map(|(t, _)| *t).collect();
        assert_eq!(
            p.threads().len(),
            sum.len(),
            "{name}: the same threads as perf script"
        );
    }
}

#[test]
fn leaf_files_and_call_chains_equal_perf_script() {
    for (path, name) in perf_data_files() {
        let p = open(&path, &OpenOptions::default()).unwrap().profile;
        // Samples per mapped file of the leaf: the flat routines' group is their file.
        let mut got: BTreeMap<String, f64> = BTreeMap::new();
        for e in p.event_ids().filter(|&e| !p.event(e).is_callpath()) {
            let group = p
                .event(e)
                .groups
                .first()
                .map(|g| p.group_name(*g).to_string())
                .unwrap_or_else(|| "[unknown]".to_string());
            for m in p
                .metric_ids()
                .filter(|&m| p.metric(m).name.starts_with("samples"))
            {
                let v: f64 = p.interval(e).values(ValueKind::Exclusive, m).iter().sum();
                *got.entry(group.clone()).or_default() += v;
            }
        }
        got.retain(|_, v| *v > 0.0);
        // perf prints a kernel module as its file (`ath9k.ko`) after the sampled address and
        // as `[ath9k]` in call chains; perfscape names it the second way.
        let want: BTreeMap<String, f64> = csv(&format!("{name}.leaf-dso.csv"))
            .into_iter()
            .map(|r| {
                let dso = match r[0].strip_suffix(".ko") {
                    Some(m) => format!("[{}]", m.replace('-', "_")),
                    None => r[0].clone(),
                };
                (dso, r[1].parse().unwrap())
            })
            .collect();
        assert_eq!(got, want, "{name}");
        // Whole call chains, for the recordings made with -g.
        let gz = fixture(&format!("{name}.stacks.csv.gz"));
        if !gz.exists() {
            continue;
        }
        let mut text = String::new();
        flate2::read::GzDecoder::new(std::fs::File::open(&gz).unwrap())
            .read_to_string(&mut text)
            .unwrap();
        let mut want: BTreeMap<String, f64> = BTreeMap::new();
        for line in text.lines().skip(1) {
            let (n, stack) = line.split_once(',').unwrap();
            // perf writes unmapped frames as `0x1 ([unknown])`, perfscape as `0x1`; perf
            // names a kernel module `ath9k.ko` or `[ath9k]`, perfscape always `[ath9k]`.
            let stack = stack
                .replace(" ([unknown])", "")
                .split(';')
                .map(|f| match f.strip_suffix(".ko)") {
                    Some(head) => {
                        let (addr, module) = head.split_once(" (").unwrap();
                        format!("{addr} ([{}])", module.replace('-', "_"))
                    }
                    None => f.to_string(),
                })
                .collect::<Vec<_>>()
                .join(";");
            *want.entry(stack).or_default() += n.parse::<f64>().unwrap();
        }
        let m = p.metric_by_name("samples").unwrap();
        let mut got: BTreeMap<String, f64> = BTreeMap::new();
        for e in p.event_ids() {
            let ev = p.event(e);
            let x: f64 = p.interval(e).values(ValueKind::Exclusive, m).iter().sum();
            if x == 0.0 || ev.kind != EventKind::Timer {
                continue;
            }
            let name = p.event_name(e);
            let mut frames: Vec<&str> = name.split(" => ").collect();
            frames.reverse();
            *got.entry(frames.join(";")).or_default() += x;
        }
        // One-frame stacks are flat events, whose exclusive value also holds the samples of
        // the same routine deeper in other stacks: remove those.
        let deeper: BTreeMap<String, f64> =
            got.iter()
                .filter(|(k, _)| k.contains(';'))
                .fold(BTreeMap::new(), |mut acc, (k, v)| {
                    *acc.entry(k.split(';').next().unwrap().to_string()).or_default() += v;
                    acc
                });
        for (leaf, v) in deeper {
            if let Some(x) = got.get_mut(&leaf) {
                *x -= v;
            }
        }
        got.retain(|_, v| *v != 0.0);
        let only_got: Vec<_> = got
            .iter()
            .filter(|(k, v)| want.get(*k) != Some(v))
            .take(5)
            .collect();
        let only_want: Vec<_> = want
            .iter()
            .filter(|(k, v)| got.get(*k) != Some(v))
            .take(5)
            .collect();
        assert!(
            only_got.is_empty() && only_want.is_empty(),
            "{name}: perfscape {only_got:?}\nperf {only_want:?}"
        );
        assert_eq!(got.len(), want.len(), "{name}: distinct call chains");
    }
}

#[test]
fn old_perf_versions_load_with_their_metadata() {
    let f = corpus().join("perf-data/perf-data-converter-quipper/perf.data.callgraph-3.8");
    let l = open(&f, &OpenOptions::default()).unwrap();
    let p = &l.profile;
    let md = p.metadata();
    assert_eq!(md.get_common("perf version"), Some("3.8.11.g047ea3"));
    assert_eq!(
        md.get_common("perf cmdline"),
        Some("/usr/sbin/perf record -o perf.data.callgraph.next -a -g -- sleep 2")
    );
    assert_eq!(p.metric(MetricId(1)).unit, perfscape_model::Unit::Cycles);
    // System-wide: the idle task (pid 0, tid 0) is one thread that ran on every CPU.
    assert!(p.threads().iter().all(|t| t.context == 0));
    let idle_cpus = p
        .metadata()
        .get(p.thread_index(ThreadId::new(0, 0, 0)).unwrap(), "cpus")
        .unwrap();
    assert!(idle_cpus.split(", ").count() >= 2, "{idle_cpus}");
    for &id in p.threads() {
        let t = p.thread_index(id).unwrap();
        assert!(md.get(t, "comm").is_some(), "{id}");
    }
    let idle = p.thread_index(ThreadId::new(0, 0, 0)).unwrap();
    assert_eq!(md.get(idle, "comm"), Some("swapper"));
    // The 4.4 file with three events: metrics per event, lost samples reported.
    let f = corpus().join("perf-data/perf-data-converter-quipper/perf.data.lost_samples-4.4");
    let l = open(&f, &OpenOptions::default()).unwrap();
    let names: Vec<&str> = l.profile.metrics().iter().map(|m| m.name.as_str()).collect();
    assert_eq!(
        names,
        vec![
            "samples (cycles:pp)",
            "period (cycles:pp)",
            "samples (instructions:pp)",
            "period (instructions:pp)",
            "samples (branch-instructions:pp)",
            "period (branch-instructions:pp)",
        ]
    );
    assert!(
        l.report
            .warnings
            .iter()
            .any(|w| w.message.contains("perf lost") && w.message.contains("LOST")),
        "{:?}",
        l.report.warnings
    );
}

// ------------------------------------------------------------------ perf script text

/// Independent count of a `perf script` text: samples per thread id and per leaf symbol
/// (the first frame line after a header; `[unknown]` leaves are counted as addresses).
fn count_script(text: &str) -> (BTreeMap<u32, f64>, BTreeMap<String, f64>) {
    let mut threads = BTreeMap::new();
    let mut leaves = BTreeMap::new();
    let mut expect_leaf = false;
    for line in text.lines() {
        if line.trim().is_empty() || line.starts_with('#') {
            expect_leaf = false;
            continue;
        }
        if !line.starts_with(char::is_whitespace) {
            // `comm  tid` or `comm  pid/tid`, then `[cpu]` or the time.
            let tok: Vec<&str> = line.split_whitespace().collect();
            let i = tok
                .iter()
                .position(|t| t.ends_with(':') && t.contains('.'))
                .unwrap();
            let mut j = i - 1;
            if tok[j].starts_with('[') {
                j -= 1;
            }
            let tid: u32 = tok[j].rsplit('/').next().unwrap().parse().unwrap();
            *threads.entry(tid).or_default() += 1.0;
            expect_leaf = true;
            continue;
        }
        if expect_leaf {
            let t = line.trim();
            let (addr, rest) = t.split_once(' ').unwrap();
            let sym = rest[..rest.rfind(" (").unwrap()].trim();
            let sym = sym.split("+0x").next().unwrap();
            let dso = &rest[rest.rfind(" (").unwrap() + 2..rest.len() - 1];
            let name = if sym == "[unknown]" {
                format!("0x{addr} ({})", dso.rsplit('/').next().unwrap())
            } else {
                sym.to_string()
            };
            *leaves.entry(name).or_default() += 1.0;
            expect_leaf = false;
        }
    }
    (threads, leaves)
}

#[test]
fn perf_script_corpus_equals_independent_counts() {
    let dir = corpus().join("perf-script/speedscope-linux-perf");
    let mut files = 0;
    for f in std::fs::read_dir(&dir).unwrap() {
        let f = f.unwrap().path();
        files += 1;
        assert_eq!(detect(&f).unwrap().name, "perf-script", "{}", f.display());
        let l = open(&f, &OpenOptions::default()).unwrap();
        assert_eq!(l.report.format, "perf-script");
        assert!(
            l.report.warnings.is_empty(),
            "{}: {:?}",
            f.display(),
            l.report.warnings
        );
        let p = &l.profile;
        let (threads, leaves) = count_script(&std::fs::read_to_string(&f).unwrap());
        let m = p.metric_by_name("samples").unwrap();
        let mut got_threads: BTreeMap<u32, f64> = BTreeMap::new();
        for &t in p.threads() {
            *got_threads.entry(t.thread).or_default() += thread_total(p, t, m);
        }
        assert_eq!(got_threads, threads, "{}", f.display());
        for (leaf, n) in &leaves {
            let e = p
                .event_by_name(leaf)
                .unwrap_or_else(|| panic!("{}: `{leaf}`", f.display()));
            let got: f64 = p.interval(e).values(ValueKind::Exclusive, m).iter().sum();
            assert_eq!(got, *n, "{}: {leaf}", f.display());
        }
        let again = open(
            &f,
            &OpenOptions {
                format: registry::named("perf-script"),
                ..OpenOptions::default()
            },
        )
        .unwrap();
        assert_eq!(again.profile, l.profile);
    }
    assert_eq!(files, 4);
    // The forks file prints `[cpu]`: each thread's CPUs are in its metadata.
    let p = open(&dir.join("forks.linux-perf.txt"), &OpenOptions::default())
        .unwrap()
        .profile;
    let mut cpus = std::collections::BTreeSet::new();
    for t in 0..p.threads().len() {
        assert_eq!(p.threads()[t].context, 0);
        if let Some(list) = p.metadata().get(t.into(), "cpus") {
            cpus.extend(list.split(", ").map(str::to_string));
        }
    }
    assert!(cpus.len() >= 3, "{cpus:?}");
    // With pid/tid, the node is the pid.
    let p = open(
        &dir.join("simple-with-pid.linux-perf.txt"),
        &OpenOptions::default(),
    )
    .unwrap()
    .profile;
    assert_eq!(p.threads(), &[ThreadId::new(9, 0, 9)]);
    assert_eq!(p.metrics().len(), 1, "no period column: only `samples`");
}

#[test]
fn both_readers_agree_on_the_same_recording() {
    // perf.data names frames by address, perf script by symbol: map one to the other with
    // the (address, file) -> symbol pairs perf script printed, then every call chain count
    // must agree, on every thread.
    let text = std::fs::read_to_string(fixture("hot.script.txt")).unwrap();
    let mut sym_of: BTreeMap<String, String> = BTreeMap::new();
    for line in text.lines().filter(|l| l.starts_with('\t')) {
        let f = script::parse_frame(line).unwrap();
        let dso = f.dso.unwrap().rsplit('/').next().unwrap().to_string();
        let sym = f
            .symbol
            .map_or_else(|| format!("0x{:x} ({dso})", f.addr), str::to_string);
        sym_of.insert(format!("0x{:x} ({dso})", f.addr), sym);
    }
    let from_data = open(&fixture("hot.perf.data"), &OpenOptions::default())
        .unwrap()
        .profile;
    let from_text = open(&fixture("hot.script.txt"), &OpenOptions::default())
        .unwrap()
        .profile;
    let sm = MetricId(0);
    let mut a: BTreeMap<(u32, String), f64> = BTreeMap::new();
    for e in from_data
        .event_ids()
        .filter(|&e| from_data.event(e).is_callpath())
    {
        let name: Vec<String> = from_data
            .event_name(e)
            .split(" => ")
            .map(|f| sym_of[f].clone())
            .collect();
        let col = from_data.interval(e);
        for (r, t) in col.threads().iter().enumerate() {
            *a.entry((from_data.thread(*t).thread, name.join(" => ")))
                .or_default() += col.values(ValueKind::Exclusive, sm)[r];
        }
    }
    let mut b: BTreeMap<(u32, String), f64> = BTreeMap::new();
    for e in from_text
        .event_ids()
        .filter(|&e| from_text.event(e).is_callpath())
    {
        let col = from_text.interval(e);
        for (r, t) in col.threads().iter().enumerate() {
            *b.entry((from_text.thread(*t).thread, from_text.event_name(e)))
                .or_default() += col.values(ValueKind::Exclusive, sm)[r];
        }
    }
    a.retain(|_, v| *v != 0.0);
    b.retain(|_, v| *v != 0.0);
    assert_eq!(a, b);
    assert!(a.len() > 5);
}

#[test]
fn source_lines_become_sample_events() {
    let l = open(&fixture("hot.script-srcline.txt"), &OpenOptions::default()).unwrap();
    assert!(l.report.warnings.is_empty(), "{:?}", l.report.warnings);
    let p = &l.profile;
    let e = p.event_by_name("[SAMPLE] work [{hot.c} {3}]").unwrap();
    assert_eq!(p.event(e).kind, EventKind::Sample);
    let src = p.event(e).source().unwrap();
    assert_eq!((src.file, src.line), ("hot.c", 3));
    // Independent: samples whose leaf frame line is followed by `hot.c:3`.
    let text = std::fs::read_to_string(fixture("hot.script-srcline.txt")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut want: BTreeMap<u32, f64> = BTreeMap::new();
    for (i, line) in lines.iter().enumerate() {
        if let Some(h) = script::parse_header(line)
            && lines.get(i + 2).is_some_and(|l| l.trim() == "hot.c:3")
        {
            *want.entry(h.tid as u32).or_default() += 1.0;
        }
    }
    let m = p.metric_by_name("samples").unwrap();
    let col = p.interval(e);
    let got: BTreeMap<u32, f64> = col
        .threads()
        .iter()
        .enumerate()
        .map(|(r, t)| (p.thread(*t).thread, col.values(ValueKind::Exclusive, m)[r]))
        .collect();
    assert_eq!(got, want);
    // The pid/tid form: node = pid.
    assert!(p.threads().iter().all(|t| t.node == 26332));
    assert!(
        l.report
            .notes
            .iter()
            .any(|n| n.contains("know their source line"))
    );
}

// ------------------------------------------------------------------ damaged input

#[test]
fn damaged_perf_data_fails_or_loads_in_part_with_the_reason() {
    let good = std::fs::read(fixture("hot.perf.data")).unwrap();
    // Version 1.
    let mut v1 = good.clone();
    v1[..8].copy_from_slice(b"PERFFILE");
    let e = data::parse_perf_data(&v1).unwrap_err();
    assert!(
        e.message.contains("version 1 perf.data") && e.offset == Some(0),
        "{e}"
    );
    // Not perf at all.
    let e = data::parse_perf_data(b"hello world, not a perf file").unwrap_err();
    assert!(e.message.contains("not a perf.data file"), "{e}");
    // Truncated header.
    let e = data::parse_perf_data(&good[..50]).unwrap_err();
    assert!(e.message.contains("truncated inside its header"), "{e}");
    // Attribute size 0 (would divide by zero in a naive reader).
    let mut bad = good.clone();
    bad[16..24].copy_from_slice(&0u64.to_le_bytes());
    let e = data::parse_perf_data(&bad).unwrap_err();
    assert!(
        e.message.contains("attribute size is 0") && e.offset == Some(16),
        "{e}"
    );
    // Attribute section past the end.
    let mut bad = good.clone();
    bad[24..32].copy_from_slice(&(good.len() as u64).to_le_bytes());
    let e = data::parse_perf_data(&bad).unwrap_err();
    assert!(
        e.message.contains("attribute section") && e.message.contains("past the end"),
        "{e}"
    );
    // Cut inside the data section: the records before the cut load, reported as partial.
    let data_off = u64::from_le_bytes(good[40..48].try_into().unwrap()) as usize;
    let data_size = u64::from_le_bytes(good[48..56].try_into().unwrap()) as usize;
    let full = data::parse_perf_data(&good).unwrap();
    let total = |p: &perfscape_formats::Parsed| -> f64 {
        p.profile
            .threads()
            .iter()
            .map(|&t| thread_total(&p.profile, t, MetricId(0)))
            .sum()
    };
    assert_eq!(total(&full), 410.0);
    let cut = data::parse_perf_data(&good[..data_off + data_size / 2]).unwrap();
    assert!(
        cut.partial.iter().any(|p| p.message.contains("truncated")),
        "{:?}",
        cut.partial
    );
    let n = total(&cut);
    assert!(n > 0.0 && n < 410.0, "{n}");
    // A record in the middle declaring 3 bytes: the records before it load, the feature
    // sections (host name) are kept, the damage is reported at its offset.
    let mut at = data_off;
    for _ in 0..100 {
        at += u16::from_le_bytes(good[at + 6..at + 8].try_into().unwrap()) as usize;
    }
    let mut bad = good.clone();
    bad[at + 6..at + 8].copy_from_slice(&3u16.to_le_bytes());
    let p = data::parse_perf_data(&bad).unwrap();
    assert!(
        p.partial
            .iter()
            .any(|w| w.offset == Some(at as u64) && w.message.contains("declares 3 bytes")),
        "{:?}",
        p.partial
    );
    let n = total(&p);
    assert!(n > 0.0 && n < 410.0, "{n}");
    assert_eq!(p.profile.metadata().get_common("perf hostname"), Some("vm"));
    // A corrupt event description section (feature bit 12; a count of 2^32-1 events):
    // reported, and the file loads with the attribute section's events.
    let features = u64::from_le_bytes(good[72..80].try_into().unwrap());
    assert!(features >> 12 & 1 == 1, "the recording has an event description");
    let index = (features & ((1 << 12) - 1)).count_ones() as usize;
    let entry = data_off + data_size + index * 16;
    let desc = u64::from_le_bytes(good[entry..entry + 8].try_into().unwrap()) as usize;
    let mut bad = good.clone();
    bad[desc..desc + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    let p = data::parse_perf_data(&bad).unwrap();
    assert!(
        p.warnings.iter().any(
            |w| w.message.contains("event description section is inconsistent")
                && w.offset == Some(desc as u64)
        ),
        "{:?}",
        p.warnings
    );
    assert_eq!(total(&p), 410.0);
    // Every cut and a sweep of byte flips never panic.
    for cut in (0..good.len()).step_by(97) {
        let _ = data::parse_perf_data(&good[..cut]);
    }
    for i in (0..good.len()).step_by(13) {
        let mut m = good.clone();
        m[i] ^= 0xa5;
        let _ = data::parse_perf_data(&m);
    }
}

#[test]
fn damaged_perf_script_is_reported() {
    let e = script::parse_perf_script(b"").unwrap_err();
    assert!(e.message.contains("not `perf script` output"), "{e}");
    let e = script::parse_perf_script(b"hello\nworld\n").unwrap_err();
    assert!(
        e.message.contains("line 1 (`hello`) is not a sample header"),
        "{e}"
    );
    let text = "x 1/2 [000] 1.5: 10 cycles: \n\t 400 main (/a)\nGARBAGE LINE\n\t 500 f (/a)\n";
    let p = script::parse_perf_script(text.as_bytes()).unwrap();
    assert!(
        p.warnings
            .iter()
            .any(|w| w.line == Some(3) && w.message.contains("GARBAGE")),
        "{:?}",
        p.warnings
    );
    assert!(
        p.warnings
            .iter()
            .any(|w| w.line == Some(4) && w.message.contains("before any sample header")),
        "{:?}",
        p.warnings
    );
    // Invalid UTF-8 is replaced and reported.
    let mut bytes = b"x 1/2 [000] 1.5: 10 cycles: \n\t 400 ma".to_vec();
    bytes.extend_from_slice(&[0xff, 0xfe]);
    bytes.extend_from_slice(b"in (/a)\n");
    let p = script::parse_perf_script(&bytes).unwrap();
    assert!(p.warnings.iter().any(|w| w.message.contains("UTF-8")));
    // Truncation at every byte of a real sample never panics.
    let text = std::fs::read_to_string(fixture("hot.script-srcline.txt")).unwrap();
    let head = &text.as_bytes()[..2000];
    for cut in 0..head.len() {
        let _ = script::parse_perf_script(&head[..cut]);
    }
}

/// `perf script` output as users keep and share it: `perf script | gzip > trace.perf.gz` (or
/// xz, zstd). Opened from its content, whatever the name, equal to the plain text.
#[test]
fn compressed_perf_script_output_reads_like_the_plain_text() {
    let dir = corpus().join("perf-script/speedscope-linux-perf");
    let tmp = tempfile::tempdir().unwrap();
    for name in ["forks.linux-perf.txt", "simple-with-pid.linux-perf.txt"] {
        let text = std::fs::read(dir.join(name)).unwrap();
        let plain = open(&dir.join(name), &OpenOptions::default()).unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(&text).unwrap();
        let mut xz = liblzma::write::XzEncoder::new(Vec::new(), 6);
        xz.write_all(&text).unwrap();
        for (suffix, bytes) in [
            ("perf.gz", gz.finish().unwrap()),
            ("txt.xz", xz.finish().unwrap()),
        ] {
            let f = tmp.path().join(format!("{name}.{suffix}"));
            std::fs::write(&f, &bytes).unwrap();
            assert_eq!(detect(&f).unwrap().name, "perf-script", "{}", f.display());
            let l = open(&f, &OpenOptions::default()).unwrap();
            assert_eq!(l.profile, plain.profile, "{}", f.display());
            assert!(!l.report.is_partial(), "{:?}", l.report.partial_files);
        }
    }
    // A gzip file cut short: the samples before the cut load, and the file is reported as
    // loaded in part, naming the compression.
    let text = std::fs::read(dir.join("forks.linux-perf.txt")).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&text).unwrap();
    let gz = gz.finish().unwrap();
    let f = tmp.path().join("cut.perf.gz");
    std::fs::write(&f, &gz[..gz.len() * 2 / 3]).unwrap();
    let l = open(&f, &OpenOptions::default()).unwrap();
    assert!(
        l.report
            .partial_files
            .iter()
            .any(|p| p.to_string().contains("cut.perf.gz")
                && p.message.contains("gzip data is corrupt or truncated")),
        "{:?}",
        l.report.partial_files
    );
    assert!(!l.profile.threads().is_empty());
}

/// A perf.data file found by the fuzzer (`fuzz-build-id-len.perf.data`): an MMAP2 record
/// claiming a build id longer than 20 bytes, on which linux-perf-event-reader 0.10 asserts. The
/// reading stops there like at any damaged record: the records before are kept and the file is
/// reported as read in part, naming the decoder's complaint.
#[test]
fn a_record_the_decoder_asserts_on_ends_the_reading_in_part() {
    let bytes = std::fs::read(fixture("fuzz-build-id-len.perf.data")).unwrap();
    match data::parse_perf_data(&bytes) {
        Ok(p) => assert!(
            p.partial
                .iter()
                .any(|w| w.message.contains("record decoder") && w.message.contains("build_id_len")),
            "{:?}",
            p.partial
        ),
        Err(e) => assert!(e.message.contains("build_id_len"), "{e}"),
    }
}
