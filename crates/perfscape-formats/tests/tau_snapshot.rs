//! TAU snapshot files: the final state equals ParaProf's, the series is integrated in order,
//! deltas add up, the incremental reader gives exactly the one-shot result for any chunking,
//! live integration equals the batch load, and bad input gives clear errors.
//!
//! References: `oracle/paraprof-dump/` of the snapshot runs is ParaProf's own conversion of
//! the final state (`paraprof --dump -f snap snapshot.*`) to `profile.N.C.T` files, read here
//! with perfscape's TAU text reader; the profile-plus-snapshots run has TAU's own `profile.*`
//! written at exit beside its snapshots.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::corpus;
use perfscape_formats::tau::snapshot::{SnapshotStream, parse_snapshot};
use perfscape_formats::{OpenOptions, detect, open, registry};
use perfscape_model::{
    AtomicEventId, AtomicKind, EventId, Integrated, Integrator, IntegratorOptions, MetricId, Profile,
    SampleId, SampleMode, SampleSeries, ThreadId, ThreadSample, ValueKind,
};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Options that read a directory's snapshots (a directory with profiles beside them is read
/// as profiles when the format is detected).
fn snapshots() -> OpenOptions<'static> {
    OpenOptions {
        format: Some(registry::named_or_err("tau-snapshot").unwrap()),
        ..OpenOptions::default()
    }
}

fn run(name: &str) -> PathBuf {
    corpus().join("tau-real").join(name)
}

/// Every snapshot file of the corpus.
fn snapshot_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in [
        run("mpi-stencil-np8-snapshot"),
        run("pthread-heat-t4-snapshot"),
        run("mpi-stencil-np4-profile-plus-snapshots"),
        run("mpi-stencil-np4-dumpincr"),
        corpus().join("tau-snapshot/hecatoncheir-driver-snapshot"),
    ] {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.file_name().unwrap().to_str().unwrap().starts_with("snapshot.") {
                files.push(p);
            }
        }
    }
    files.sort();
    assert_eq!(files.len(), 8 + 5 + 4 + 4 + 1);
    files
}

/// Deterministic pseudo-random numbers (xorshift64*), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Asserts two profiles have the same threads, events, user events and every cell equal.
fn assert_same_cells(ours: &Profile, theirs: &Profile, ctx: &str) {
    assert_eq!(ours.threads(), theirs.threads(), "{ctx}: threads");
    assert_eq!(ours.metrics().len(), theirs.metrics().len(), "{ctx}: metrics");
    let with_values = |p: &Profile| {
        let mut v: Vec<String> = p
            .event_ids()
            .filter(|&e| !p.interval(e).is_empty())
            .map(|e| p.event_name(e))
            .collect();
        v.sort();
        v
    };
    assert_eq!(
        with_values(ours),
        with_values(theirs),
        "{ctx}: events with values"
    );
    let mut cells = 0;
    for e in theirs.event_ids() {
        let name = &theirs.event_name(e);
        let col = theirs.interval(e);
        if col.is_empty() {
            continue;
        }
        let oe = ours.event_by_name(name).unwrap();
        let ocol = ours.interval(oe);
        assert_eq!(ocol.threads(), col.threads(), "{ctx}: threads of `{name}`");
        assert_eq!(
            ours.event_groups_joined(oe),
            theirs.event_groups_joined(e),
            "{ctx}: groups of `{name}`"
        );
        for m in theirs.metric_ids() {
            for kind in ValueKind::ALL {
                assert_eq!(
                    ocol.values(kind, m),
                    col.values(kind, m),
                    "{ctx}: {kind:?} of `{name}`"
                );
            }
        }
        cells += col.len();
    }
    assert_eq!(cells, ours.interval_cell_count(), "{ctx}: cell count");
    assert_eq!(
        ours.atomic_events().len(),
        theirs.atomic_events().len(),
        "{ctx}: user events"
    );
    for (a, ev) in theirs.atomic_events().iter().enumerate() {
        let col = theirs.atomic(AtomicEventId::from(a));
        let oa = ours.atomic_event_by_name(&ev.name).unwrap();
        let ocol = ours.atomic(oa);
        let ctx = format!("{ctx}: user event `{}`", ev.name);
        assert_eq!(ocol.threads(), col.threads(), "{ctx}");
        assert_eq!(ocol.count(), col.count(), "{ctx} count");
        assert_eq!(ocol.max(), col.max(), "{ctx} max");
        assert_eq!(ocol.min(), col.min(), "{ctx} min");
        assert_eq!(ocol.mean(), col.mean(), "{ctx} mean");
        assert_eq!(ocol.sum_squares(), col.sum_squares(), "{ctx} sumsqr");
    }
}

#[test]
fn final_state_equals_paraprofs_conversion_cell_by_cell() {
    for name in ["mpi-stencil-np8-snapshot", "pthread-heat-t4-snapshot"] {
        let dir = run(name);
        assert_eq!(detect(&dir).unwrap().name, "tau-snapshot", "{name}");
        let ours = open(&dir, &OpenOptions::default()).unwrap();
        assert!(!ours.report.is_partial(), "{name}: {:?}", ours.report.bad_files);
        assert!(
            ours.report.warnings.is_empty(),
            "{name}: {:?}",
            ours.report.warnings
        );
        assert_eq!(ours.report.format, "tau-snapshot");
        let paraprof = open(&dir.join("oracle/paraprof-dump"), &OpenOptions::default()).unwrap();
        assert_same_cells(&ours.profile, &paraprof.profile, name);
        // And the metadata ParaProf kept (it adds its own File Type keys and drops none of TAU's).
        let t = perfscape_model::ThreadIndex(0);
        for key in ["Command Line", "Hostname", "TAU Version", "Starting Timestamp"] {
            assert_eq!(
                ours.profile.metadata().get(t, key),
                paraprof.profile.metadata().get(t, key),
                "{name}: metadata {key}"
            );
        }
    }
}

fn names(s: &SampleSeries) -> Vec<String> {
    s.samples().iter().map(|x| x.name().to_string()).collect()
}

fn iterations(step: usize, last: usize) -> Vec<String> {
    (1..=last / step)
        .map(|k| format!("iteration {}", k * step))
        .collect()
}

#[test]
fn series_are_integrated_in_program_order_with_missing_threads_reported() {
    let np8 = open(&run("mpi-stencil-np8-snapshot"), &OpenOptions::default()).unwrap();
    let mut expected = iterations(20, 400);
    expected.push("final".into());
    assert_eq!(names(np8.series.as_ref().unwrap()), expected);
    assert!(
        np8.series
            .as_ref()
            .unwrap()
            .samples()
            .iter()
            .all(|s| s.is_complete())
    );
    assert_eq!(np8.series.as_ref().unwrap().threads().len(), 8);
    for w in np8.series.as_ref().unwrap().samples().windows(2) {
        assert!(w[0].timestamp_us() < w[1].timestamp_us());
    }
    // The sample's timestamp is the latest thread's; rank 0's `final` block says 1795290107012815.
    let fin = np8.series.as_ref().unwrap().sample_by_name("final").unwrap();
    let info = np8.series.as_ref().unwrap().sample(fin).unwrap();
    assert_eq!(
        info.thread_timestamp_us(perfscape_model::ThreadIndex(0)),
        Some(1_795_290_107_012_815)
    );
    assert!(info.timestamp_us() >= 1_795_290_107_012_815);

    // Workers write `iteration 25..400` and `final`; the main thread `after_join` and `final`.
    let heat = open(&run("pthread-heat-t4-snapshot"), &OpenOptions::default()).unwrap();
    let mut expected = iterations(25, 400);
    expected.extend(["after_join".into(), "final".into()]);
    assert_eq!(names(heat.series.as_ref().unwrap()), expected);
    let main = heat
        .series
        .as_ref()
        .unwrap()
        .thread_index(ThreadId::new(0, 0, 0))
        .unwrap();
    for s in 0..16 {
        assert_eq!(
            heat.series.as_ref().unwrap().missing_threads(SampleId(s)),
            vec![main]
        );
    }
    assert_eq!(
        heat.series.as_ref().unwrap().missing_threads(SampleId(16)).len(),
        4
    );
    assert!(heat.series.as_ref().unwrap().samples()[17].is_complete());
    assert!(
        heat.report
            .notes
            .iter()
            .any(|n| n.contains("17 sample(s) were not written by every thread"))
    );

    let pps = open(&run("mpi-stencil-np4-profile-plus-snapshots"), &snapshots()).unwrap();
    assert_eq!(
        names(pps.series.as_ref().unwrap()),
        iterations(40, 400),
        "no final block without TAU_PROFILE_FORMAT=snapshot"
    );
    let hec = open(
        &corpus().join("tau-snapshot/hecatoncheir-driver-snapshot/snapshot.0.0.0"),
        &OpenOptions::default(),
    )
    .unwrap();
    assert_eq!(names(hec.series.as_ref().unwrap()), ["final"]);
    assert_eq!(hec.series.as_ref().unwrap().timer_count(), 95);
    assert_eq!(hec.series.as_ref().unwrap().user_event_count(), 391);
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs())
}

/// For every thread, event and quantity: the deltas over the samples the thread wrote add up
/// to its last cumulative value.
fn assert_deltas_sum_back(series: &SampleSeries, ctx: &str) -> usize {
    let mut checked = 0;
    let metrics: Vec<MetricId> = (0..series.metrics().len()).map(MetricId::from).collect();
    for e in (0..series.timer_count()).map(EventId::from) {
        for kind in ValueKind::ALL {
            for &m in &metrics {
                let slots = series.timer_threads(e);
                let mut sum = vec![0.0; slots.len()];
                let mut last = vec![0.0; slots.len()];
                for s in (0..series.len()).map(SampleId::from) {
                    let d = series.timer_values(e, s, kind, m, SampleMode::Delta);
                    let c = series.timer_values(e, s, kind, m, SampleMode::Cumulative);
                    for j in 0..d.values.len() {
                        if !d.values[j].is_nan() {
                            sum[j] += d.values[j];
                            last[j] = c.values[j];
                        }
                    }
                }
                for j in 0..slots.len() {
                    assert!(
                        close(sum[j], last[j]),
                        "{ctx}: `{}` {kind:?} thread {}: deltas sum to {} but the last value is {}",
                        series.timer_name(e),
                        series.threads()[slots[j].index()],
                        sum[j],
                        last[j]
                    );
                    checked += 1;
                }
            }
        }
    }
    for a in (0..series.user_event_count()).map(AtomicEventId::from) {
        for kind in [AtomicKind::Count, AtomicKind::SumSquares] {
            let slots = series.user_event_threads(a);
            let mut sum = vec![0.0; slots.len()];
            let mut last = vec![0.0; slots.len()];
            for s in (0..series.len()).map(SampleId::from) {
                let d = series.user_event_values(a, s, kind, SampleMode::Delta);
                let c = series.user_event_values(a, s, kind, SampleMode::Cumulative);
                for j in 0..d.values.len() {
                    if !d.values[j].is_nan() {
                        sum[j] += d.values[j];
                        last[j] = c.values[j];
                    }
                }
            }
            for j in 0..slots.len() {
                assert!(close(sum[j], last[j]), "{ctx}: user event {kind:?}");
                checked += 1;
            }
        }
    }
    checked
}

#[test]
fn deltas_between_samples_sum_back_to_the_final_values() {
    let mut checked = 0;
    for dir in [
        run("mpi-stencil-np8-snapshot"),
        run("pthread-heat-t4-snapshot"),
        run("mpi-stencil-np4-profile-plus-snapshots"),
        run("mpi-stencil-np4-dumpincr"),
    ] {
        let loaded = open(&dir, &snapshots()).unwrap();
        checked += assert_deltas_sum_back(loaded.series.as_ref().unwrap(), &dir.display().to_string());
        // A delta profile of the last sample plus the cumulative profile of the one before
        // gives the last cumulative profile (np8: every thread in every sample).
        let s = loaded.series.as_ref().unwrap();
        let last = SampleId::from(s.len() - 1);
        let prev = SampleId::from(s.len() - 2);
        let d = s.profile_at(last, SampleMode::Delta).unwrap();
        let p = s.profile_at(prev, SampleMode::Cumulative).unwrap();
        let c = s.profile_at(last, SampleMode::Cumulative).unwrap();
        for e in c.event_ids() {
            for (i, &t) in c.interval(e).threads().iter().enumerate() {
                let id = c.thread(t);
                let (Some(dt), Some(pt)) = (d.thread_index(id), p.thread_index(id)) else {
                    continue;
                };
                let dv = d.value(e, dt, ValueKind::Inclusive, MetricId(0)).unwrap_or(0.0);
                let pv = p.value(e, pt, ValueKind::Inclusive, MetricId(0)).unwrap_or(0.0);
                assert!(close(dv + pv, c.interval(e).inclusive(MetricId(0))[i]));
            }
        }
    }
    assert!(checked > 1500, "only {checked} sums checked");
}

#[test]
fn last_snapshot_differs_from_the_final_profile_only_where_timers_were_running() {
    // TAU_PROFILE_SNAPSHOT at iteration 400 is taken inside the loop: the timers on the call
    // stack then (.TAU application, main, timestep_loop, TAU_PROFILE_SNAPSHOT itself) are still
    // running and MPI_Finalize has not been called. Everything else is final.
    let dir = run("mpi-stencil-np4-profile-plus-snapshots");
    assert_eq!(detect(&dir).unwrap().name, "tau", "profiles stay the default");
    let profile = open(&dir, &OpenOptions::default()).unwrap();
    assert!(profile.report.notes.iter().any(|n| n.contains("snapshot")));
    let series = open(&dir, &snapshots()).unwrap().series.unwrap();
    let last = series.sample_by_name("iteration 400").unwrap();
    let snap = series.profile_at(last, SampleMode::Cumulative).unwrap();
    let fin = &profile.profile;
    let running = [
        ".TAU application",
        "main int (int, char **)",
        "timestep_loop",
        "TAU_PROFILE_SNAPSHOT()",
    ];
    let is_running = |name: &str| {
        let frames: Vec<&str> = name.split(" => ").collect();
        // A path is running when every frame is.
        frames.iter().all(|f| running.contains(f))
    };
    let m = MetricId(0);
    let mut equal = 0;
    for e in fin.event_ids() {
        let name = &fin.event_name(e);
        let col = fin.interval(e);
        if name.contains("MPI_Finalize()") {
            assert!(
                snap.event_by_name(name)
                    .is_none_or(|se| snap.interval(se).is_empty()),
                "{name}"
            );
            continue;
        }
        let se = snap
            .event_by_name(name)
            .unwrap_or_else(|| panic!("snapshot lacks `{name}`"));
        let scol = snap.interval(se);
        assert_eq!(scol.threads(), col.threads(), "{name}");
        assert_eq!(scol.calls(), col.calls(), "calls of {name}");
        if is_running(name) {
            for i in 0..col.len() {
                assert!(scol.inclusive(m)[i] < col.inclusive(m)[i], "{name} still running");
                assert!(scol.exclusive(m)[i] <= col.exclusive(m)[i], "{name}");
            }
            if name != ".TAU application" {
                assert_eq!(scol.subcalls(), col.subcalls(), "subcalls of {name}");
            } else {
                // MPI_Finalize is called after the last snapshot.
                let plus_one: Vec<f64> = scol.subcalls().iter().map(|s| s + 1.0).collect();
                assert_eq!(plus_one, col.subcalls());
            }
        } else {
            for kind in ValueKind::ALL {
                assert_eq!(scol.values(kind, m), col.values(kind, m), "{kind:?} of {name}");
            }
            equal += 1;
        }
    }
    assert!(equal >= 24, "only {equal} events compared equal");
    // The user events are all final at iteration 400.
    assert_eq!(snap.atomic_events().len(), fin.atomic_events().len());
    for (a, ev) in fin.atomic_events().iter().enumerate() {
        let sa = snap.atomic_event_by_name(&ev.name).unwrap();
        assert_eq!(snap.atomic(sa), fin.atomic(AtomicEventId::from(a)), "{}", ev.name);
    }
}

/// One-shot parse of a file.
fn one_shot(path: &Path) -> Vec<ThreadSample> {
    let f = parse_snapshot(&std::fs::read(path).unwrap(), path).unwrap();
    assert!(f.warnings.is_empty(), "{}: {:?}", path.display(), f.warnings);
    f.samples
}

/// Split points that cut inside a block and inside a name (a `<name>` of a snapshot, and a
/// CDATA event name when the file has one).
fn nasty_cuts(bytes: &[u8]) -> Vec<usize> {
    let text = String::from_utf8_lossy(bytes);
    let mut cuts = Vec::new();
    for pat in [
        "<name>iteration",
        "<name>final",
        "<interval_data",
        "<![CDATA[",
        "=&gt;",
        "</profile_xml>",
    ] {
        if let Some(i) = text.find(pat) {
            cuts.push(i + pat.len() / 2);
            cuts.push(i + pat.len() + 3);
        }
    }
    if let Some(i) = text.rfind("</profile_xml>") {
        cuts.push(i + 5);
    }
    cuts.retain(|&c| c <= bytes.len());
    cuts.sort_unstable();
    cuts.dedup();
    cuts
}

#[test]
fn incremental_reading_returns_every_snapshot_once_for_any_chunking() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut total = 0;
    for path in snapshot_files() {
        let bytes = std::fs::read(&path).unwrap();
        let expected = one_shot(&path);
        assert!(!expected.is_empty());
        let block_ends: Vec<usize> = String::from_utf8_lossy(&bytes)
            .match_indices("</profile>")
            .map(|(i, _)| i + "</profile>".len())
            .collect();
        for round in 0..6 {
            // Random chunk sizes, from single bytes to whole blocks, plus forced cuts.
            let mut cuts = nasty_cuts(&bytes);
            let mut pos = 0;
            while pos < bytes.len() {
                pos += 1 + match round {
                    0 => rng.below(16),
                    1 => rng.below(400),
                    _ => rng.below(8000),
                };
                cuts.push(pos.min(bytes.len()));
            }
            cuts.sort_unstable();
            cuts.dedup();
            let mut stream = SnapshotStream::new(&path);
            let mut got: Vec<ThreadSample> = Vec::new();
            let mut from = 0;
            for &to in &cuts {
                let pushed = stream.push(&bytes[from..to]);
                assert!(
                    pushed.errors.is_empty(),
                    "{}: {:?}",
                    path.display(),
                    pushed.errors
                );
                // Never more snapshots than complete blocks so far.
                let complete = block_ends.partition_point(|&end| end <= to);
                got.extend(pushed.samples);
                assert!(got.len() <= complete);
                from = to;
            }
            assert_eq!(stream.buffered(), 0, "nothing left over after the last block");
            assert!(stream.finish().is_empty());
            assert_eq!(got, expected, "{} round {round}", path.display());
            total += got.len();
        }
    }
    assert!(total > 6 * 100);
}

/// Same samples, threads, values (NaN = missing compares equal) in two series.
fn assert_same_series(a: &SampleSeries, b: &SampleSeries, ctx: &str) {
    assert_eq!(names(a), names(b), "{ctx}");
    let mut ta = a.threads().to_vec();
    let mut tb = b.threads().to_vec();
    ta.sort();
    tb.sort();
    assert_eq!(ta, tb, "{ctx}");
    assert_eq!(a.timer_count(), b.timer_count(), "{ctx}");
    let ids = |s: &SampleSeries, x: &perfscape_model::SampleInfo| {
        let mut v: Vec<ThreadId> = x.present_threads().map(|t| s.threads()[t.index()]).collect();
        v.sort();
        v
    };
    for (s, (x, y)) in a.samples().iter().zip(b.samples()).enumerate() {
        assert_eq!(ids(a, x), ids(b, y), "{ctx} sample {s}");
        let s = SampleId::from(s);
        for e in (0..a.timer_count()).map(EventId::from) {
            let eb = b.timer_by_name(a.timer_name(e)).unwrap();
            for t in x.present_threads() {
                let tb = b.thread_index(a.threads()[t.index()]).unwrap();
                for kind in ValueKind::ALL {
                    let m = MetricId(0);
                    assert_eq!(
                        a.timer_value(e, t, s, kind, m, SampleMode::Cumulative),
                        b.timer_value(eb, tb, s, kind, m, SampleMode::Cumulative),
                        "{ctx} {s:?} {}",
                        a.timer_name(e)
                    );
                    assert_eq!(
                        a.timer_value(e, t, s, kind, m, SampleMode::Delta),
                        b.timer_value(eb, tb, s, kind, m, SampleMode::Delta),
                        "{ctx} {s:?} {} delta",
                        a.timer_name(e)
                    );
                }
            }
        }
    }
}

/// Feeds a run's snapshot files into streams and an integrator the way live mode would: in
/// random-sized chunks, the threads interleaved, polling after every chunk. `delayed` threads
/// get their bytes only after everyone else finished.
fn live(
    dir: &Path,
    seed: u64,
    options: IntegratorOptions,
    delayed: &[ThreadId],
) -> (SampleSeries, Vec<Integrated>) {
    let mut rng = Rng(seed);
    let mut files: Vec<(ThreadId, Vec<u8>, usize, SnapshotStream)> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let p = e.unwrap().path();
            let t = perfscape_formats::tau::snapshot::snapshot_file_thread(p.file_name()?.to_str()?)?;
            Some((t, std::fs::read(&p).unwrap(), 0, SnapshotStream::new(p)))
        })
        .collect();
    files.sort_by_key(|f| (delayed.contains(&f.0), f.0));
    let mut integ = Integrator::new(options);
    for f in &files {
        integ.expect_thread(f.0);
    }
    let start = Instant::now();
    let mut clock = 0u64;
    let mut events = Vec::new();
    loop {
        let open: Vec<usize> = (0..files.len())
            .filter(|&i| files[i].2 < files[i].1.len())
            .filter(|&i| {
                !delayed.contains(&files[i].0)
                    || files.iter().all(|f| delayed.contains(&f.0) || f.2 == f.1.len())
            })
            .collect();
        if open.is_empty() {
            break;
        }
        let i = open[rng.below(open.len())];
        let f = &mut files[i];
        let n = (1 + rng.below(3000)).min(f.1.len() - f.2);
        let pushed = f.3.push(&f.1[f.2..f.2 + n]);
        f.2 += n;
        assert!(pushed.errors.is_empty());
        clock += 10;
        let now = start + Duration::from_millis(clock);
        for s in pushed.samples {
            integ.push(s, now).unwrap();
        }
        if f.2 == f.1.len() {
            integ.end_thread(f.0);
        }
        events.extend(integ.poll(now));
    }
    events.extend(integ.poll(start + Duration::from_millis(clock + 1)));
    assert_eq!(integ.pending(), 0);
    let (series, _) = integ.finish();
    (series, events)
}

#[test]
fn live_integration_of_growing_files_equals_the_batch_load() {
    for name in [
        "mpi-stencil-np8-snapshot",
        "pthread-heat-t4-snapshot",
        "mpi-stencil-np4-profile-plus-snapshots",
    ] {
        let dir = run(name);
        let batch = open(&dir, &snapshots()).unwrap().series.unwrap();
        for seed in [1, 2, 3] {
            let (series, events) = live(&dir, seed, IntegratorOptions::default(), &[]);
            // Every sample announced exactly once, in sequence, none amended.
            let expected: Vec<Integrated> = (0..batch.len())
                .map(|s| Integrated::Sample(SampleId::from(s)))
                .collect();
            assert_eq!(events, expected, "{name} seed {seed}");
            assert_same_series(&series, &batch, &format!("{name} seed {seed}"));
        }
    }
}

#[test]
fn a_late_rank_is_reported_missing_then_its_samples_are_added_not_lost() {
    let dir = run("mpi-stencil-np8-snapshot");
    let batch = open(&dir, &snapshots()).unwrap().series.unwrap();
    let late = ThreadId::new(3, 0, 0);
    let options = IntegratorOptions {
        max_wait: Some(Duration::from_millis(50)),
        ..IntegratorOptions::default()
    };
    let (series, events) = live(&dir, 7, options, &[late]);
    let late_i = series.thread_index(late).unwrap();
    let new: Vec<SampleId> = events
        .iter()
        .filter_map(|e| match e {
            Integrated::Sample(s) => Some(*s),
            Integrated::Amended { .. } => None,
        })
        .collect();
    let amended: Vec<(SampleId, perfscape_model::ThreadIndex)> = events
        .iter()
        .filter_map(|e| match e {
            Integrated::Amended { sample, thread } => Some((*sample, *thread)),
            Integrated::Sample(_) => None,
        })
        .collect();
    assert_eq!(
        new,
        (0..21).map(SampleId::from).collect::<Vec<_>>(),
        "each sample once, in order"
    );
    // Rank 3 delivered nothing until the others were done: every sample went out without it
    // and got its part later (other ranks may have been late for some samples too).
    let late_samples: Vec<SampleId> = amended
        .iter()
        .filter(|(_, t)| *t == late_i)
        .map(|(s, _)| *s)
        .collect();
    assert_eq!(late_samples, new, "rank 3 amended every sample, in order");
    let mut seen = std::collections::HashSet::new();
    for (s, t) in &amended {
        assert!(seen.insert((*s, *t)), "{s:?} amended twice for {t:?}");
    }
    for (s, _) in &amended {
        assert!(
            series.sample(*s).unwrap().is_complete(),
            "amended {s:?} is complete now"
        );
    }
    assert_same_series(&series, &batch, "late rank");
}

#[test]
fn damaged_files_load_as_far_as_they_are_valid_with_the_place_named() {
    let path = run("mpi-stencil-np8-snapshot/snapshot.2.0.0");
    let bytes = std::fs::read(&path).unwrap();
    let full = one_shot(&path);
    let text = String::from_utf8(bytes.clone()).unwrap();
    // Truncated inside the 6th block: five snapshots and a warning at the 6th's start.
    let starts: Vec<usize> = text.match_indices("<profile_xml>").map(|(i, _)| i).collect();
    let cut = starts[5] + 300;
    let f = parse_snapshot(&bytes[..cut], &path).unwrap();
    assert_eq!(f.samples, full[..5]);
    assert_eq!(f.warnings.len(), 1);
    let w = &f.warnings[0];
    assert_eq!(w.byte_offset, Some(starts[5] as u64));
    assert_eq!(w.line, Some(text[..starts[5]].matches('\n').count() + 1));
    assert!(w.message.contains("incomplete"), "{w}");
    assert!(w.to_string().starts_with(&format!("{}:", path.display())));

    // A bad number in block 3: that snapshot is reported and skipped, the others read.
    let row = text[starts[2]..].find("\n13 ").unwrap() + starts[2] + 1;
    let mut bad = text.clone();
    bad.replace_range(row..row + 2, "1x");
    let f = parse_snapshot(bad.as_bytes(), &path).unwrap();
    assert_eq!(f.samples.len(), full.len() - 1);
    assert_eq!(f.warnings.len(), 1, "{:?}", f.warnings);
    let w = &f.warnings[0];
    assert_eq!(w.line, Some(text[..row].matches('\n').count() + 1), "{w}");
    assert_eq!(w.byte_offset, Some(row as u64));
    assert!(w.message.contains("row id is `1x`"), "{w}");

    // Garbage between blocks, and a broken tag inside one.
    let mut junk = text.clone();
    junk.insert_str(starts[4], "GARBAGE\n");
    let second = junk[starts[1]..].find("</interval_data>").unwrap() + starts[1];
    junk.replace_range(second..second + 16, "</interval_dat>!");
    let f = parse_snapshot(junk.as_bytes(), &path).unwrap();
    assert_eq!(
        f.samples.len(),
        full.len() - 1,
        "block 2 is malformed, the rest reads"
    );
    assert_eq!(f.samples[0], full[0]);
    assert_eq!(f.samples[1], full[2]);
    assert_eq!(f.warnings.len(), 2, "{:?}", f.warnings);
    assert!(f.warnings.iter().any(|w| w.message.contains("malformed XML")));
    let g = f
        .warnings
        .iter()
        .find(|w| w.message.contains("unexpected content"))
        .unwrap();
    assert_eq!(g.byte_offset, Some(starts[4] as u64));
    assert_eq!(g.line, Some(text[..starts[4]].matches('\n').count() + 1));

    // Truncated at every point of a small file: never a panic; an error or a prefix of the
    // snapshots.
    let small = corpus().join("tau-real/pthread-heat-t4-snapshot/snapshot.0.0.0");
    let bytes = std::fs::read(&small).unwrap();
    let full = one_shot(&small);
    for cut in (0..bytes.len()).step_by(7) {
        match parse_snapshot(&bytes[..cut], &small) {
            Ok(f) => assert_eq!(f.samples, full[..f.samples.len()]),
            Err(e) => assert!(!e.message.is_empty()),
        }
    }
    // Not a snapshot at all.
    assert!(parse_snapshot(b"", &small).unwrap_err().message.contains("empty"));
    assert!(parse_snapshot(b"\x00\xff\x13 garbage", &small).is_err());
}

#[test]
fn a_run_with_one_bad_file_loads_the_others_and_reports_it() {
    let tmp = tempfile::tempdir().unwrap();
    let src = run("mpi-stencil-np8-snapshot");
    for e in std::fs::read_dir(&src).unwrap() {
        let p = e.unwrap().path();
        if p.is_file() && p.file_name().unwrap().to_str().unwrap().starts_with("snapshot.") {
            std::fs::copy(&p, tmp.path().join(p.file_name().unwrap())).unwrap();
        }
    }
    std::fs::write(tmp.path().join("snapshot.5.0.0"), b"<profile_xml>\n<thread id=").unwrap();
    let loaded = open(tmp.path(), &OpenOptions::default()).unwrap();
    assert!(loaded.report.is_partial());
    assert_eq!(loaded.report.threads_skipped, vec![ThreadId::new(5, 0, 0)]);
    assert_eq!(loaded.profile.threads().len(), 7);
    let msg = loaded.report.bad_files[0].to_string();
    assert!(
        msg.contains("snapshot.5.0.0") && msg.contains("incomplete"),
        "{msg}"
    );
    // One thread written by nobody: every sample is incomplete, nothing waits forever.
    let series = open(tmp.path(), &OpenOptions::default()).unwrap();
    assert_eq!(series.series.as_ref().unwrap().len(), 21);
    assert!(
        series
            .series
            .as_ref()
            .unwrap()
            .samples()
            .iter()
            .all(|s| s.is_complete()),
        "a bad file is not a thread of the run"
    );
}
