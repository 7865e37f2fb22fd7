//! The per-line table and the source view against ParaProf, on the event-based-sampling run
//! `tau-real/omp-matmul-t4-tauexec-ebs`: every line's per-thread values are exactly the
//! `[SAMPLE]` rows of `oracle/paraprof.csv` (`paraprof --text`) for that file and line, and the
//! line statistics equal both those computed here from the csv (sum, mean, min and max with
//! their threads, population standard deviation) and ParaProf's derived profiles
//! (`oracle/paraprof-derived/profile.Total|Mean|Min|Max|StandardDeviation`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use perfscape_analysis::answers::{LineHeat, SourceOptions, SourceText, source_file, source_view};
use perfscape_analysis::lines::{LineTable, line_summary, line_values};
use perfscape_analysis::params::Values;
use perfscape_formats::tau::parse_profile_file;
use perfscape_model::{MetricId, SourceLocation, ThreadId, ValueKind};
use std::collections::BTreeMap;

const RUN: &str = "tau-real/omp-matmul-t4-tauexec-ebs";

/// `[SAMPLE]` rows of the csv: file → line → thread → (exclusive TIME, calls).
type Csv = BTreeMap<String, BTreeMap<u32, BTreeMap<ThreadId, (f64, f64)>>>;

fn paraprof_samples() -> Csv {
    let text = std::fs::read_to_string(common::corpus().join(RUN).join("oracle/paraprof.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split('\t').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (fun, excl, calls) = (col("Function"), col("Exclusive TIME"), col("NumCalls"));
    let mut out = Csv::new();
    for l in lines.filter(|l| !l.trim().is_empty()) {
        let f: Vec<&str> = l.split('\t').collect();
        let name = f[fun];
        if !name.starts_with("[SAMPLE]") || name.contains("=>") {
            continue;
        }
        let Some(loc) = SourceLocation::parse_from_name(name) else {
            continue;
        };
        let t = ThreadId::new(
            f[0].parse().unwrap(),
            f[1].parse().unwrap(),
            f[2].parse().unwrap(),
        );
        let cell = out
            .entry(loc.file)
            .or_default()
            .entry(loc.line)
            .or_default()
            .entry(t)
            .or_default();
        cell.0 += f[excl].parse::<f64>().unwrap();
        cell.1 += f[calls].parse::<f64>().unwrap();
    }
    out
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()) + 1e-6
}

#[test]
fn line_values_are_paraprofs_sample_values() {
    let p = common::load(RUN);
    let table = LineTable::new(&p);
    let csv = paraprof_samples();
    assert!(!csv.is_empty(), "the csv has [SAMPLE] rows with lines");
    // The same files, the same lines.
    let ours: Vec<&str> = table
        .files
        .iter()
        .filter(|f| !f.lines.is_empty())
        .map(|f| f.name.as_str())
        .collect();
    let theirs: Vec<&str> = csv.keys().map(String::as_str).collect();
    assert_eq!(ours, theirs);
    let time = Values {
        metric: MetricId(0),
        kind: ValueKind::Exclusive,
    };
    let calls = Values {
        metric: MetricId(0),
        kind: ValueKind::Calls,
    };
    let mut cells = 0;
    for (file, lines) in &csv {
        let f = table.file(file).unwrap();
        assert_eq!(
            f.lines.iter().map(|l| l.line).collect::<Vec<_>>(),
            lines.keys().copied().collect::<Vec<_>>(),
            "{file}"
        );
        for (line, threads) in lines {
            let events = &f.line(*line).unwrap().events;
            let lv = line_values(&p, events, time);
            let lc = line_values(&p, events, calls);
            let got: BTreeMap<ThreadId, (f64, f64)> = lv
                .threads
                .iter()
                .zip(&lv.values)
                .map(|(t, v)| (p.thread(*t), (*v, lc.of(*t).unwrap())))
                .collect();
            assert_eq!(&got, threads, "{file}:{line}");
            cells += got.len();

            // The statistics, computed here from the csv alone.
            let vals: Vec<(ThreadId, f64)> = threads.iter().map(|(t, v)| (*t, v.0)).collect();
            let n = vals.len() as f64;
            let sum: f64 = vals.iter().map(|v| v.1).sum();
            let mean = sum / n;
            let sd = (vals.iter().map(|v| (v.1 - mean).powi(2)).sum::<f64>() / n).sqrt();
            let (min_t, min) = vals
                .iter()
                .copied()
                .fold((vals[0].0, f64::INFINITY), |a, v| if v.1 < a.1 { v } else { a });
            let (max_t, max) =
                vals.iter().copied().fold(
                    (vals[0].0, f64::NEG_INFINITY),
                    |a, v| if v.1 > a.1 { v } else { a },
                );
            let s = line_summary(&p, &lv, time);
            assert!(
                close(s.total, sum) && close(s.mean, mean) && close(s.stddev, sd),
                "{file}:{line}: {s:?}"
            );
            assert_eq!((s.min, s.max), (min, max), "{file}:{line}");
            assert_eq!(s.min_thread.map(|t| p.thread(t)), Some(min_t), "{file}:{line}");
            assert_eq!(s.max_thread.map(|t| p.thread(t)), Some(max_t), "{file}:{line}");
            assert!(close(s.mean_all, sum / p.threads().len() as f64));
        }
    }
    // omp_matmul.c:12 on all 4 threads, :11 on one.
    assert!(cells >= 5, "{cells} cells");
    let m = table
        .files
        .iter()
        .find(|f| f.name.ends_with("omp_matmul.c"))
        .unwrap();
    assert_eq!(m.lines.iter().map(|l| l.line).collect::<Vec<_>>(), vec![11, 12]);
}

#[test]
fn line_statistics_equal_paraprof_derived_profiles() {
    let p = common::load(RUN);
    let table = LineTable::new(&p);
    let time = Values {
        metric: MetricId(0),
        kind: ValueKind::Exclusive,
    };
    let derived = common::corpus().join(RUN).join("oracle/paraprof-derived");
    let mut compared = 0;
    for (file, pick) in [
        (
            "profile.Total",
            (|s: &perfscape_analysis::Summary| s.total) as fn(&perfscape_analysis::Summary) -> f64,
        ),
        ("profile.Mean", |s| s.mean),
        ("profile.Mean,AllThreads", |s| s.mean_all),
        ("profile.Min", |s| s.min),
        ("profile.Max", |s| s.max),
        ("profile.StandardDeviation", |s| s.stddev),
        ("profile.StandardDeviation,AllThreads", |s| s.stddev_all),
    ] {
        let d = parse_profile_file(&std::fs::read(derived.join(file)).unwrap()).unwrap();
        for f in &table.files {
            for l in &f.lines {
                // A line of one [SAMPLE] event is that event: ParaProf's statistics of it.
                let [e] = l.events.as_slice() else { continue };
                let name = p.event_name(*e);
                let theirs = d
                    .timers
                    .iter()
                    .find(|t| t.name == name)
                    .unwrap_or_else(|| panic!("{file}: no `{name}`"));
                let s = line_summary(&p, &line_values(&p, &l.events, time), time);
                let ours = pick(&s);
                let slack = (8.0 * f64::EPSILON * (s.stddev.powi(2) + s.mean.powi(2))).sqrt();
                assert!(
                    (ours - theirs.exclusive).abs() <= 1e-9 * ours.abs().max(theirs.exclusive.abs()) + slack,
                    "{file} {name}: perfscape {ours}, ParaProf {}",
                    theirs.exclusive
                );
                compared += 1;
            }
        }
    }
    assert!(compared >= 14, "{compared} values compared");
}

#[test]
fn the_source_view_marks_the_sampled_lines_of_the_text() {
    let p = common::load(RUN);
    let table = LineTable::new(&p);
    let time = Values {
        metric: MetricId(0),
        kind: ValueKind::Exclusive,
    };
    let text = std::fs::read_to_string(common::corpus().join("tau-real/src/omp_matmul.c")).unwrap();
    let f = source_file(&table, &p, None, None, time).unwrap().unwrap();
    assert!(f.name.ends_with("omp_matmul.c"), "the hottest file: {}", f.name);
    let found = SourceText::Found {
        path: "omp_matmul.c",
        text: &text,
    };
    let v = source_view(&p, &table, Some(f), found, time, SourceOptions::default()).unwrap();
    assert_eq!(v.line_count as usize, text.lines().count());
    let csv = paraprof_samples();
    let lines = &csv[&f.name];
    assert_eq!(v.lines.len(), lines.len());
    for l in &v.lines {
        let sum: f64 = lines[&l.line].values().map(|c| c.0).sum();
        assert!(close(l.heat.unwrap(), sum), "line {}", l.line);
        let max = lines[&l.line]
            .values()
            .map(|c| c.0)
            .fold(f64::NEG_INFINITY, f64::max);
        assert_eq!(l.stats.max, max);
    }
    assert_eq!(v.max, v.lines.iter().filter_map(|l| l.heat).reduce(f64::max));
    // The overview covers every line but the skipped empty runs, which it counts.
    let covered = |v: &perfscape_analysis::answers::SourceResponse| -> u32 {
        v.overview
            .iter()
            .map(|b| b.last - b.first + 1 + b.skipped_before)
            .sum::<u32>()
            + v.skipped_at_end
    };
    assert_eq!(covered(&v), v.line_count);
    // Lines 13-34 have no samples: a run longer than the default 10, skipped at the end.
    assert_eq!((v.overview.last().unwrap().last, v.skipped_at_end), (12, 22));
    let o = SourceOptions {
        skip: Some(5),
        bin: Some(4),
        ..Default::default()
    };
    let binned = source_view(&p, &table, Some(f), found, time, o).unwrap();
    assert_eq!(covered(&binned), v.line_count);
    assert_eq!(
        binned.overview[0].skipped_before, 10,
        "lines 1-10 skipped with skip=5"
    );
    assert_eq!((binned.overview[0].first, binned.overview[0].last), (11, 14));
    assert_eq!(binned.overview[0].value, v.max, "MAX of lines 11 and 12");
    // One thread's heat is that thread's value.
    let t = p.thread_index(ThreadId::new(0, 0, 2)).unwrap();
    let o = SourceOptions {
        heat: LineHeat::Thread,
        thread: Some(t),
        ..Default::default()
    };
    let v2 = source_view(&p, &table, Some(f), found, time, o).unwrap();
    for l in &v2.lines {
        assert_eq!(
            l.heat,
            lines[&l.line].get(&ThreadId::new(0, 0, 2)).map(|c| c.0),
            "line {}",
            l.line
        );
    }
    assert!(
        source_view(
            &p,
            &table,
            Some(f),
            found,
            time,
            SourceOptions {
                heat: LineHeat::Thread,
                ..Default::default()
            }
        )
        .is_err()
    );
    // Without the text: a note, the sampled lines still there.
    let v3 = source_view(
        &p,
        &table,
        Some(f),
        SourceText::Missing("not found"),
        time,
        SourceOptions::default(),
    )
    .unwrap();
    assert_eq!(
        (v3.text.as_deref(), v3.note.as_deref()),
        (None, Some("not found"))
    );
    assert_eq!(v3.lines.len(), lines.len());
    assert!(source_file(&table, &p, Some("/etc/passwd"), None, time).is_err());
}
