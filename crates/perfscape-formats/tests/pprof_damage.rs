//! pprof reader on damaged input: truncation at every byte, a truncated gzip file, a file cut
//! in its last field, garbage and wrong wire types. Damage keeps what is complete and says
//! where; nothing panics.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::{corpus, decompressed, gzip};
use perfscape_formats::pprof::{self, proto};
use perfscape_formats::{OpenOptions, open, registry};
use perfscape_model::{EventKind, ValueKind};
use prost::Message;
use std::collections::BTreeSet;

#[test]
fn truncation_at_every_byte_never_panics_and_keeps_what_is_complete() {
    let f = corpus().join("pprof/parca-query-testdata/two-stacks.pb.gz");
    let gz = std::fs::read(&f).unwrap();
    let raw = pprof::decode(&decompressed(&gz)).unwrap().profile.encode_to_vec();
    let full = pprof::parse_pprof(&raw).unwrap();
    assert!(full.partial.is_empty());
    let boundaries = field_boundaries(&raw);
    let mut loaded = 0;
    for cut in 0..raw.len() {
        match pprof::parse_pprof(&raw[..cut]) {
            Ok(p) => {
                loaded += 1;
                // Anything cut inside a field is reported with the broken field's offset.
                if !boundaries.contains(&cut) {
                    assert!(
                        p.partial
                            .iter()
                            .any(|w| w.offset.is_some() && w.message.contains("truncated")),
                        "cut {cut}: {:?}",
                        p.partial
                    );
                }
            }
            Err(e) => assert!(!e.message.is_empty()),
        }
    }
    assert!(loaded > 0);
    // Truncated gzip: open reads the decompressed prefix and reports the damage.
    let tmp = tempfile::tempdir().unwrap();
    for cut in [10, gz.len() / 2, gz.len() - 4] {
        let file = tmp.path().join(format!("cut{cut}.pb.gz"));
        std::fs::write(&file, &gz[..cut]).unwrap();
        let named = OpenOptions {
            format: registry::named("pprof"),
            ..OpenOptions::default()
        };
        match open(&file, &named) {
            Ok(p) => assert!(
                p.report.partial_files.iter().any(|w| w.message.contains("gzip")),
                "cut {cut}: {:?}",
                p.report.partial_files
            ),
            Err(e) => assert!(e.to_string().contains("gzip"), "cut {cut}: {e}"),
        }
    }
    // Every prefix of a larger file, at a stride.
    let gz = std::fs::read(corpus().join("pprof/google-pprof-testdata/sample.cpu.pb.gz")).unwrap();
    let raw = pprof::decode(&decompressed(&gz)).unwrap().profile.encode_to_vec();
    for cut in (0..raw.len()).step_by(7) {
        let _ = pprof::parse_pprof(&raw[..cut]);
    }
}

/// Offsets where a top-level field ends (a cut there leaves a valid, shorter message).
fn field_boundaries(buf: &[u8]) -> BTreeSet<usize> {
    fn varint(buf: &[u8], pos: &mut usize) -> u64 {
        let mut v = 0u64;
        let mut shift = 0;
        loop {
            let b = buf[*pos];
            *pos += 1;
            v |= u64::from(b & 0x7f) << shift;
            shift += 7;
            if b & 0x80 == 0 {
                return v;
            }
        }
    }
    let mut out = BTreeSet::from([0]);
    let mut pos = 0;
    while pos < buf.len() {
        let key = varint(buf, &mut pos);
        match key & 7 {
            0 => {
                varint(buf, &mut pos);
            }
            2 => {
                let len = varint(buf, &mut pos) as usize;
                pos += len;
            }
            1 => pos += 8,
            5 => pos += 4,
            _ => panic!("unexpected wire type"),
        }
        out.insert(pos);
    }
    out
}

#[test]
fn a_truncated_file_loads_in_part_with_the_offset() {
    // Cut the decompressed sample profile inside its last field: the fields before load, the
    // report names the byte offset of the broken field and marks the file partial.
    let gz = std::fs::read(corpus().join("pprof/google-pprof-testdata/sample.cpu.pb.gz")).unwrap();
    let decoded = pprof::decode(&decompressed(&gz)).unwrap().profile;
    // Put the string table first, so that a cut in the samples still leaves names.
    let mut reordered = proto::Profile {
        string_table: decoded.string_table.clone(),
        function: decoded.function.clone(),
        location: decoded.location.clone(),
        mapping: decoded.mapping.clone(),
        sample_type: decoded.sample_type.clone(),
        ..Default::default()
    }
    .encode_to_vec();
    let head = reordered.len();
    let samples = proto::Profile {
        sample: decoded.sample.clone(),
        ..Default::default()
    }
    .encode_to_vec();
    reordered.extend_from_slice(&samples);
    let cut = head + samples.len() / 2;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cut.pb");
    std::fs::write(&path, &reordered[..cut]).unwrap();
    let l = open(&path, &OpenOptions::default()).unwrap();
    assert!(l.report.is_partial());
    let e = &l.report.partial_files[0];
    assert!(
        e.byte_offset
            .is_some_and(|o| o as usize >= head && (o as usize) < cut),
        "{e}"
    );
    assert!(e.message.contains("truncated"), "{e}");
    let m = l.profile.metric_by_name("samples").unwrap();
    let total: f64 = l
        .profile
        .event_ids()
        .filter(|&e| !l.profile.event(e).is_callpath() && l.profile.event(e).kind == EventKind::Timer)
        .map(|e| {
            l.profile
                .interval(e)
                .values(ValueKind::Exclusive, m)
                .iter()
                .sum::<f64>()
        })
        .sum();
    let full: i64 = decoded.sample.iter().map(|s| s.value[0]).sum();
    assert!(
        total > 0.0 && total < full as f64,
        "part of the {full} samples: {total}"
    );
}

#[test]
fn garbage_and_wrong_types_give_clear_errors() {
    let err = pprof::parse_pprof(b"").unwrap_err();
    assert!(err.message.contains("no data"), "{err}");
    let tmp = tempfile::tempdir().unwrap();
    let empty_gz = tmp.path().join("empty.pb.gz");
    std::fs::write(&empty_gz, gzip(b"")).unwrap();
    let err = open(&empty_gz, &OpenOptions::default()).unwrap_err().to_string();
    assert!(err.contains("decompresses to nothing"), "{err}");
    let err = pprof::parse_pprof(b"hello, world: this is not a profile").unwrap_err();
    assert!(err.message.contains("not a pprof"), "{err}");
    // sample_type (field 1) written as a varint: the field does not decode and is skipped,
    // leaving no sample types.
    let err = pprof::parse_pprof(&[0x08, 0x01]).unwrap_err();
    assert!(err.message.contains("not a pprof"), "{err}");
    // Random bytes never panic.
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for len in 0..400 {
        let bytes: Vec<u8> = (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 24) as u8
            })
            .collect();
        let _ = pprof::parse_pprof(&bytes);
    }
    // Not detected as pprof: text, JSON, TAU profiles.
    assert!(!pprof::looks_like_pprof(b"17 templated_functions_MULTI_TIME\n"));
    assert!(!pprof::looks_like_pprof(b"{\"traceEvents\": []}"));
    assert!(!pprof::looks_like_pprof(b"hello world"));
}
