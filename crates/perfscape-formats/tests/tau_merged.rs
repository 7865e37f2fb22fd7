//! TAU's merged `tauprofile.xml`: every cell equals ParaProf's reading of the same file,
//! older TAU files (plain and gzip) load, and damaged files are reported precisely.
//! (perfscape's statistics against TAU's own derived blocks: `perfscape-analysis/tests/tau_derived.rs`.)

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::corpus;
use perfscape_formats::tau::merged::parse_merged;
use perfscape_formats::{OpenOptions, detect, open, registry};
use perfscape_model::{MetricId, ThreadId, ValueKind};
use std::io::Write;
use std::path::PathBuf;

fn merged_run() -> PathBuf {
    corpus().join("tau-real/mpi-stencil-np4-merged")
}

#[test]
fn every_cell_equals_paraprofs_conversion() {
    let dir = merged_run();
    assert_eq!(detect(&dir).unwrap().name, "tau-merged");
    assert_eq!(detect(&dir.join("tauprofile.xml")).unwrap().name, "tau-merged");
    let ours = open(&dir, &OpenOptions::default()).unwrap();
    assert_eq!(ours.report.format, "tau-merged");
    assert!(ours.report.warnings.is_empty(), "{:?}", ours.report.warnings);
    assert!(ours.report.notes.iter().any(|n| n.contains("mean_all")));
    let theirs = open(&dir.join("oracle/paraprof-dump"), &OpenOptions::default()).unwrap();
    let (p, q) = (&ours.profile, &theirs.profile);
    assert_eq!(p.threads(), q.threads());
    assert_eq!(p.threads().len(), 4);
    let mut cells = 0;
    for e in q.event_ids() {
        let name = &q.event_name(e);
        let col = q.interval(e);
        let pe = p.event_by_name(name).unwrap_or_else(|| panic!("no `{name}`"));
        let pcol = p.interval(pe);
        assert_eq!(pcol.threads(), col.threads(), "{name}");
        for kind in ValueKind::ALL {
            assert_eq!(
                pcol.values(kind, MetricId(0)),
                col.values(kind, MetricId(0)),
                "{kind:?} {name}"
            );
        }
        assert_eq!(p.event_groups_joined(pe), q.event_groups_joined(e), "{name}");
        cells += col.len();
    }
    assert_eq!(cells, p.interval_cell_count());
    assert_eq!(cells, 4 * 17 + 3, "smooth() runs on ranks 1-3 only");
    for (a, ev) in q.atomic_events().iter().enumerate() {
        let pa = p.atomic_event_by_name(&ev.name).unwrap();
        assert_eq!(
            p.atomic(pa),
            q.atomic(perfscape_model::AtomicEventId::from(a)),
            "{}",
            ev.name
        );
    }
    // Thread metadata comes from each rank's own <thread> block (rank 0 has two: merged).
    let t0 = p.thread_index(ThreadId::new(0, 0, 0)).unwrap();
    assert_eq!(p.metadata().get(t0, "pid"), Some("17273"));
    assert_eq!(p.metadata().get(t0, "program"), Some("mpi_stencil"));
}

#[test]
fn older_tau_files_load_plain_and_gzip() {
    let mpas = corpus().join("tau-xml/tau224-metadatacorrelation/tauprofile.xml");
    assert_eq!(detect(&mpas).unwrap().name, "tau-merged");
    let l = open(&mpas, &OpenOptions::default()).unwrap();
    assert_eq!(l.profile.threads().len(), 8);
    assert_eq!(l.profile.metrics()[0].name, "TIME");
    // Two user events named `MPI-IO Bytes Read` (ids 0 and 1) are merged per thread.
    assert!(
        l.report
            .warnings
            .iter()
            .any(|w| w.message.contains("listed more than once"))
    );

    let omp = corpus().join("tau-xml/tau224-classbreakdown-openmp/tauprofile.xml.gz");
    assert_eq!(detect(&omp).unwrap().name, "tau-merged");
    let l = open(&omp, &OpenOptions::default()).unwrap();
    let threads: Vec<ThreadId> = (0..12).map(|t| ThreadId::new(0, 0, t)).collect();
    assert_eq!(l.profile.threads(), threads);
    assert!(
        !l.profile.call_tree().is_empty(),
        "CDATA callpath names build a call tree"
    );
    // The compressed file opens the same as its content decompressed by flate2 (open
    // decompresses in front of the reader).
    let gz = std::fs::read(&omp).unwrap();
    let mut plain = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&gz[..]), &mut plain).unwrap();
    let a = parse_merged(&plain, &omp).unwrap();
    assert_eq!(l.profile, a.profile);
    assert_eq!(
        open(
            &omp,
            &OpenOptions {
                format: registry::named("tau-merged"),
                ..OpenOptions::default()
            }
        )
        .unwrap()
        .profile,
        a.profile
    );
}

#[test]
fn damaged_merged_files_are_reported_with_offsets() {
    let path = merged_run().join("tauprofile.xml");
    let bytes = std::fs::read(&path).unwrap();
    let full = parse_merged(&bytes, &path).unwrap();
    let text = String::from_utf8(bytes.clone()).unwrap();
    // Cut inside the derived blocks: all threads load, TAU's statistics are partly there,
    // and the cut is named.
    let cut = text.find("<derivedentity id=\"stddev_all\">").unwrap() + 40;
    let m = parse_merged(&bytes[..cut], &path).unwrap();
    assert_eq!(m.profile, full.profile);
    let entities: Vec<&str> = m.derived.iter().map(|d| d.entity.as_str()).collect();
    assert_eq!(entities, ["total", "mean_all", "mean_no_null"]);
    assert_eq!(m.warnings.len(), 1);
    let doc_start = text[..cut].rfind("<profile_xml>").unwrap();
    assert_eq!(m.warnings[0].byte_offset, Some(doc_start as u64));
    assert!(m.warnings[0].message.contains("incomplete"));

    // A thread block with a broken row: that rank is reported, the others load.
    let rank2 = text.find("<profile thread=\"2.0.0").unwrap();
    let row = text[rank2..].find("\n7 ").unwrap() + rank2 + 1;
    let mut bad = text.clone();
    bad.replace_range(row..row + 1, "x");
    let m = parse_merged(bad.as_bytes(), &path).unwrap();
    assert_eq!(m.profile.threads().len(), 3);
    let w = m
        .warnings
        .iter()
        .find(|w| w.message.contains("row id is `x`"))
        .unwrap();
    assert_eq!(w.byte_offset, Some(row as u64));
    assert_eq!(w.line, Some(text[..row].matches('\n').count() + 1));

    // Without the definitions there is nothing to name the values with.
    let first_end = text.find("</profile_xml>").unwrap();
    let e = parse_merged(&bytes[first_end + 14..], &path).unwrap_err();
    assert!(e.message.contains("event id 0, which is not defined"), "{e}");

    // A gzip file cut short: what decompresses is read, the corruption is named, never a panic.
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(&bytes).unwrap();
    let gz = enc.finish().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let cut_gz = tmp.path().join("tauprofile.xml.gz");
    std::fs::write(&cut_gz, &gz[..gz.len() / 2]).unwrap();
    // Half of the stream holds no complete thread block: nothing loads, and the error says
    // both why and that the gzip data broke off.
    let e = open(&cut_gz, &OpenOptions::default()).unwrap_err().to_string();
    assert!(
        e.contains("no thread <profile> block could be read")
            && e.contains("gzip data is corrupt or truncated"),
        "{e}"
    );
    for cut in (0..bytes.len()).step_by(211) {
        let _ = parse_merged(&bytes[..cut], &path);
    }
}
