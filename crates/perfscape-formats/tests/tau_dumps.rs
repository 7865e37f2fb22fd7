//! TAU incremental dumps (`dump__<ctime>__.N.C.T`): integrated by each rank's own order,
//! checked against the snapshots TAU took at the same moments and the dump files themselves.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::corpus;
use perfscape_formats::tau::dumps::list_dump_files;
use perfscape_formats::tau::parse_profile_file;
use perfscape_formats::{OpenOptions, detect, open, registry};
use perfscape_model::{MetricId, SampleId, SampleMode, ThreadId, ValueKind};
use std::path::PathBuf;

/// Options that read the input as the named format (the run directory holds profiles,
/// snapshots and dumps; detection reads the profiles).
fn as_format(name: &str) -> OpenOptions<'static> {
    OpenOptions {
        format: Some(registry::named_or_err(name).unwrap()),
        ..OpenOptions::default()
    }
}

fn dir() -> PathBuf {
    corpus().join("tau-real/mpi-stencil-np4-dumpincr")
}

#[test]
fn dumps_are_grouped_by_each_ranks_own_order_not_by_their_names() {
    let files = list_dump_files(&dir()).unwrap();
    assert_eq!(files.len(), 4);
    // The second dumps carry different seconds on different ranks (:50 vs :51).
    let second: Vec<String> = files
        .values()
        .map(|v| v[1].1.file_name().unwrap().to_str().unwrap()[6..30].to_string())
        .collect();
    assert_ne!(second[0], second[2]);
    let loaded = open(&dir(), &as_format("tau-dumps")).unwrap();
    let s = loaded.series.as_ref().unwrap();
    let names: Vec<&str> = s.samples().iter().map(|x| x.name()).collect();
    assert_eq!(names, ["dump 1", "dump 2", "dump 3", "dump 4"]);
    assert!(s.samples().iter().all(|x| x.is_complete()));
    // Timestamps: the latest rank's name time; dump 1 of every rank says 19:41:49 UTC
    // (`date -u -d 2026-11-21T19:41:49Z +%s` = 1795290109).
    assert_eq!(s.samples()[0].timestamp_us(), 1_795_290_109_000_000);
    assert_eq!(s.samples()[1].timestamp_us(), 1_795_290_111_000_000);
    let r2 = s.thread_index(ThreadId::new(2, 0, 0)).unwrap();
    assert_eq!(
        s.samples()[1].thread_timestamp_us(r2),
        Some(1_795_290_110_000_000)
    );
    assert!(loaded.report.notes.iter().any(|n| n.contains("own order")));

    // TAU took a snapshot right before each dump (TAU_PROFILE_SNAPSHOT then TAU_DB_DUMP_INCR):
    // sample k of the dumps has the calls of snapshot k on every rank and every event, and the
    // same values except for the timers running across both (the dump comes a few µs later).
    let snaps = open(&dir(), &as_format("tau-snapshot")).unwrap().series.unwrap();
    assert_eq!(snaps.len(), 4);
    let running = [
        ".TAU application",
        "main int (int, char **)",
        "timestep_loop",
        "TAU_PROFILE_SNAPSHOT()",
    ];
    let m = MetricId(0);
    let mut compared = 0;
    for k in 0..4 {
        let d = s.profile_at(SampleId(k), SampleMode::Cumulative).unwrap();
        let p = snaps.profile_at(SampleId(k), SampleMode::Cumulative).unwrap();
        assert_eq!(d.threads(), p.threads());
        for e in d.event_ids() {
            let name = &d.event_name(e);
            let col = d.interval(e);
            let pe = p.event_by_name(name).unwrap();
            let pcol = p.interval(pe);
            assert_eq!(col.threads(), pcol.threads(), "{name}");
            assert_eq!(col.calls(), pcol.calls(), "dump {} calls of {name}", k + 1);
            assert_eq!(
                col.subcalls(),
                pcol.subcalls(),
                "dump {} subcalls of {name}",
                k + 1
            );
            if running.contains(&name.as_str()) {
                for i in 0..col.len() {
                    let (a, b) = (col.inclusive(m)[i], pcol.inclusive(m)[i]);
                    assert!(a > b && a - b < 1_000.0, "{name}: dump {a} vs snapshot {b}");
                }
            } else {
                for kind in [ValueKind::Exclusive, ValueKind::Inclusive] {
                    assert_eq!(col.values(kind, m), pcol.values(kind, m), "{kind:?} of {name}");
                }
            }
            compared += col.len();
        }
        for (a, ev) in d.atomic_events().iter().enumerate() {
            let pa = p.atomic_event_by_name(&ev.name).unwrap();
            assert_eq!(
                d.atomic(perfscape_model::AtomicEventId::from(a)),
                p.atomic(pa),
                "{}",
                ev.name
            );
        }
    }
    assert!(compared > 200);
}

#[test]
fn a_dumps_only_directory_loads_its_last_dumps() {
    let tmp = tempfile::tempdir().unwrap();
    for e in std::fs::read_dir(dir()).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_str().unwrap().to_string();
        if name.starts_with("dump__") {
            std::fs::copy(&p, tmp.path().join(&name)).unwrap();
        }
    }
    assert_eq!(detect(tmp.path()).unwrap().name, "tau-dumps");
    let loaded = open(tmp.path(), &OpenOptions::default()).unwrap();
    assert_eq!(loaded.report.format, "tau-dumps");
    assert_eq!(loaded.report.files_read, 16);
    let p = &loaded.profile;
    assert_eq!(p.threads().len(), 4);
    // Each thread's values are those of its last dump file, read on its own.
    for (t, files) in list_dump_files(tmp.path()).unwrap() {
        let f = parse_profile_file(&std::fs::read(&files.last().unwrap().1).unwrap()).unwrap();
        let ti = p.thread_index(t).unwrap();
        for line in &f.timers {
            let e = p.event_by_name(&line.name).unwrap();
            assert_eq!(p.value(e, ti, ValueKind::Calls, MetricId(0)), Some(line.calls));
            assert_eq!(
                p.value(e, ti, ValueKind::Inclusive, MetricId(0)),
                Some(line.inclusive)
            );
        }
    }
    // One dump file alone is a one-thread profile of the thread its name gives.
    let one = &list_dump_files(tmp.path()).unwrap()[&ThreadId::new(2, 0, 0)][0].1;
    assert_eq!(detect(one).unwrap().name, "tau");
    assert_eq!(
        open(one, &OpenOptions::default()).unwrap().profile.threads(),
        &[ThreadId::new(2, 0, 0)]
    );
    // A damaged dump: its rank misses that sample, reported with file and line.
    let victim = list_dump_files(tmp.path()).unwrap()[&ThreadId::new(1, 0, 0)][2]
        .1
        .clone();
    let text = std::fs::read_to_string(&victim).unwrap();
    std::fs::write(
        &victim,
        text.replacen("\"MPI_Init()  \" 1 0", "\"MPI_Init()  \" one 0", 1),
    )
    .unwrap();
    let s = open(
        tmp.path(),
        &OpenOptions {
            format: registry::named("tau-dumps"),
            ..OpenOptions::default()
        },
    )
    .unwrap();
    assert_eq!(s.report.bad_files.len(), 1);
    let bad = s.report.bad_files[0].to_string();
    assert!(
        bad.contains(":4:") && bad.contains("calls") && bad.contains("dump 3 of thread 1.0.0"),
        "{bad}"
    );
    let r1 = s
        .series
        .as_ref()
        .unwrap()
        .thread_index(ThreadId::new(1, 0, 0))
        .unwrap();
    assert_eq!(s.series.as_ref().unwrap().missing_threads(SampleId(2)), vec![r1]);
    // Its later dump keeps its place.
    assert_eq!(s.series.as_ref().unwrap().len(), 4);
    assert!(s.series.as_ref().unwrap().samples()[3].is_complete());
}
