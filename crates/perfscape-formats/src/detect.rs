//! Content-based format detection.
//!
//! A file is recognized by its first bytes, a directory by the files it holds; never by an
//! extension alone. Formats perfscape does not read yet are still recognized, so the error
//! says what the input is instead of "unknown".

use crate::error::LoadError;
use std::io::Read;
use std::path::Path;

/// Human-readable list of what perfscape reads (used in error messages and `--help`).
pub const SUPPORTED: &[&str] = &[
    "TAU profiles (a run directory of profile.N.C.T files or MULTI__<metric>/ directories, or one profile.N.C.T file)",
    "TAU snapshots (snapshot.N.C.T files: their final state, or the series of samples)",
    "TAU merged profiles (tauprofile.xml, tauprofile.xml.gz)",
    "TAU incremental dumps (dump__<time>__.N.C.T files)",
    "Score-P/Scalasca CUBE4 profiles (.cubex)",
    "ParaProf packed profiles (.ppk)",
    "HPCToolkit databases (a directory with experiment.xml + *.metric-db, or meta.db + profile.db)",
    "Caliper profiles (.cali, or json-split JSON)",
    "pprof profiles (perftools.profiles protocol buffer, gzip or raw: .pb.gz, .pb, .pprof)",
    "Chrome Trace Event Format JSON (array or {\"traceEvents\": ...} form, plain or gzip)",
    "Linux perf: `perf script` text output and binary perf.data files",
];

/// Names accepted by `--input-format`.
pub const FORMAT_NAMES: &[&str] = &[
    "tau",
    "tau-snapshot",
    "tau-merged",
    "tau-dumps",
    "cube",
    "ppk",
    "hpctoolkit",
    "caliper",
    "pprof",
    "chrome",
    "perf-script",
    "perf-data",
];

/// Bytes of a file read for detection (a gzip file's head is decompressed up to 64 KiB).
const HEAD_BYTES: usize = 1 << 16;

/// What detection found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Detected {
    /// A TAU run directory (profile.N.C.T files, possibly in MULTI__ directories).
    TauRunDirectory,
    /// One TAU text profile file.
    TauProfileFile,
    /// A directory of TAU snapshot files (`snapshot.N.C.T`) without `profile.N.C.T` files.
    TauSnapshotRun,
    /// One TAU snapshot file.
    TauSnapshotFile,
    /// A TAU merged profile (`tauprofile.xml`, maybe gzip), or a directory holding one.
    TauMerged,
    /// A directory of TAU incremental dumps (`dump__<time>__.N.C.T`) and no profiles or
    /// snapshots.
    TauDumps,
    /// A CUBE4 `.cubex` archive (a tar file).
    Cube,
    /// A ParaProf packed profile (`.ppk`, gzip-compressed).
    Ppk,
    /// An HPCToolkit database directory (classic or sparse), or its `experiment.xml` /
    /// `meta.db` file.
    Hpctoolkit,
    /// A Caliper `.cali` file or json-split JSON file.
    Caliper,
    /// A pprof protocol buffer (`perftools.profiles.Profile`), gzip-compressed or raw.
    Pprof,
    /// A Chrome Trace Event Format JSON file (plain or gzip).
    ChromeTrace,
    /// Text written by `perf script`.
    PerfScript,
    /// A binary perf.data file (`perf record`).
    PerfData,
    /// Recognized, but not read by this version; the name says what it is.
    Unsupported(&'static str),
}

/// Recognizes the content of a file from its first bytes.
pub fn sniff_bytes(head: &[u8]) -> Option<Detected> {
    let text = String::from_utf8_lossy(&head[..head.len().min(4096)]);
    let t = text.trim_start();
    let first_line = t.lines().next().unwrap_or("");
    let mut words = first_line.split_whitespace();
    if words.next().is_some_and(|w| w.parse::<u64>().is_ok())
        && words.next().is_some_and(|w| w.starts_with("templated_functions"))
    {
        return Some(Detected::TauProfileFile);
    }
    if crate::ppk::sniff(head) {
        return Some(Detected::Ppk);
    }
    if crate::compression::is_gzip(head) {
        let inner = crate::compression::head(head, 1 << 16);
        if !inner.is_empty()
            && !crate::compression::is_gzip(&inner)
            && let Some(d) = sniff_bytes(&inner)
        {
            return Some(d);
        }
        return Some(Detected::Unsupported(
            "a gzip-compressed file whose content is none of the formats read here (a ParaProf .ppk, compressed XML, ...)",
        ));
    }
    if head.starts_with(b"HPCTOOLKITmeta") || t.contains("<HPCToolkitExperiment") {
        return Some(Detected::Hpctoolkit);
    }
    if crate::caliper::sniff_cali(head) || crate::caliper::sniff_json(head) {
        return Some(Detected::Caliper);
    }
    if crate::perf::data::looks_like_perf_data(head) {
        return Some(Detected::PerfData);
    }
    if head.len() > 262 && &head[257..262] == b"ustar" {
        return Some(Detected::Cube);
    }
    if t.starts_with("<profile_xml") {
        // The merged format starts with the global definitions `thread="*"` and separates
        // documents with NUL bytes; a snapshot file starts with a <thread> declaration.
        if t.contains("thread=\"*\"") || head.contains(&0) {
            return Some(Detected::TauMerged);
        }
        return Some(Detected::TauSnapshotFile);
    }
    if crate::chrome::looks_like_chrome_trace(head) {
        return Some(Detected::ChromeTrace);
    }
    if t.starts_with('{') || t.starts_with('[') {
        return Some(Detected::Unsupported(
            "a JSON document (Chrome trace, Caliper, ...)",
        ));
    }
    if t.starts_with("<?xml") || t.starts_with('<') {
        return Some(Detected::Unsupported(
            "an XML document (HPCToolkit experiment.xml, ...)",
        ));
    }
    if crate::perf::script::looks_like_perf_script(head) {
        return Some(Detected::PerfScript);
    }
    if crate::pprof::looks_like_pprof(head) {
        return Some(Detected::Pprof);
    }
    // Formats recognized only to say what they are.
    if head.len() >= 6 && head[0] == 0x03 && head[1] == b'B' && &head[2..6] == b"OTF2" {
        return Some(Detected::Unsupported(
            "a Score-P OTF2 trace archive (anchor file)",
        ));
    }
    if first_line.ends_with("dynamic_trace_events") {
        return Some(Detected::Unsupported("a TAU trace event definition file (.edf)"));
    }
    if t.starts_with("PROJECTIONS_ID") {
        return Some(Detected::Unsupported("a Charm++ Projections summary file (.sts)"));
    }
    if t.starts_with("SCOREP_") {
        return Some(Detected::Unsupported(
            "a Score-P configuration file (scorep.cfg), not a measurement",
        ));
    }
    None
}

/// Detects the format of a file or directory.
pub fn detect(path: &Path) -> Result<Detected, LoadError> {
    let meta = std::fs::metadata(path).map_err(|source| LoadError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    if meta.is_dir() {
        if crate::tau::run::looks_like_run(path) {
            return Ok(Detected::TauRunDirectory);
        }
        let names: Vec<String> = std::fs::read_dir(path)
            .map_err(|source| LoadError::Io {
                path: path.to_path_buf(),
                source,
            })?
            .filter_map(|e| e.ok().and_then(|e| e.file_name().to_str().map(str::to_string)))
            .collect();
        let has = |p: &str| names.iter().any(|n| n.starts_with(p));
        if names
            .iter()
            .any(|n| crate::tau::snapshot::snapshot_file_thread(n).is_some())
        {
            return Ok(Detected::TauSnapshotRun);
        }
        if names
            .iter()
            .any(|n| n == "tauprofile.xml" || n == "tauprofile.xml.gz")
        {
            return Ok(Detected::TauMerged);
        }
        if names
            .iter()
            .any(|n| crate::tau::dumps::dump_file_parts(n).is_some())
        {
            return Ok(Detected::TauDumps);
        }
        if has("tautrace.") {
            return Ok(Detected::Unsupported(
                "a TAU trace (tautrace.N.C.T.trc + events.N.edf)",
            ));
        }
        if crate::hpctoolkit::is_classic(path) || crate::hpctoolkit::is_sparse(path) {
            return Ok(Detected::Hpctoolkit);
        }
        let mut shown: Vec<&String> = names.iter().take(8).collect();
        shown.sort();
        return Err(LoadError::UnknownFormat {
            path: path.to_path_buf(),
            detail: if names.is_empty() {
                "the directory is empty".to_string()
            } else {
                format!(
                    "no profile files recognized in this directory (it holds: {}{})",
                    shown.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", "),
                    if names.len() > 8 { ", ..." } else { "" }
                )
            },
        });
    }
    let mut head = Vec::with_capacity(HEAD_BYTES);
    std::fs::File::open(path)
        .and_then(|f| f.take(HEAD_BYTES as u64).read_to_end(&mut head))
        .map_err(|source| LoadError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    sniff_bytes(&head).ok_or_else(|| LoadError::UnknownFormat {
        path: path.to_path_buf(),
        detail: if head.is_empty() {
            "the file is empty".to_string()
        } else {
            "the content is not a profile format perfscape recognizes".to_string()
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffs_known_heads() {
        assert_eq!(
            sniff_bytes(b"17 templated_functions_MULTI_TIME\n# Name"),
            Some(Detected::TauProfileFile)
        );
        assert_eq!(
            sniff_bytes(b"18 templated_functions\n"),
            Some(Detected::TauProfileFile)
        );
        assert!(matches!(
            sniff_bytes(&[0x1f, 0x8b, 8, 0]),
            Some(Detected::Unsupported(_))
        ));
        assert_eq!(
            sniff_bytes(b"<profile_xml>\n\n<thread id=\"0.0.0.1\""),
            Some(Detected::TauSnapshotFile)
        );
        assert_eq!(
            sniff_bytes(b"<profile_xml>\n\n<definitions thread=\"*\">"),
            Some(Detected::TauMerged)
        );
        assert_eq!(
            sniff_bytes(b"  {\"traceEvents\": []}"),
            Some(Detected::ChromeTrace)
        );
        assert_eq!(
            sniff_bytes(b"{\"data\": [], \"columns\": []}"),
            Some(Detected::Caliper)
        );
        assert_eq!(sniff_bytes(b"HPCTOOLKITmeta\x04\x00"), Some(Detected::Hpctoolkit));
        assert_eq!(
            sniff_bytes(b"<?xml version=\"1.0\"?>\n<HPCToolkitExperiment version=\"2.0\">"),
            Some(Detected::Hpctoolkit)
        );
        assert_eq!(
            sniff_bytes(b"__rec=node,id=1,attr=8,data=x\n"),
            Some(Detected::Caliper)
        );
        assert_eq!(
            sniff_bytes(b"{\n    \"data\": [\n [1, 2]"),
            Some(Detected::Caliper)
        );
        let mut tar = vec![0u8; 512];
        tar[257..262].copy_from_slice(b"ustar");
        assert_eq!(sniff_bytes(&tar), Some(Detected::Cube));
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut gz, &[0, b'P', 0, b'P', 0, b'K', 0, 0, 0, 2]).unwrap();
        assert_eq!(sniff_bytes(&gz.finish().unwrap()), Some(Detected::Ppk));
        assert_eq!(sniff_bytes(b"PERFILE2\x68\0\0\0"), Some(Detected::PerfData));
        for head in [
            &b"\x03BOTF2\x00\x03\x02\x02"[..],
            b"126 dynamic_trace_events\n# FunctionId Group Tag",
            b"PROJECTIONS_ID \nVERSION 11.0\n",
            b"SCOREP_ENABLE_PROFILING=false\n",
        ] {
            assert!(
                matches!(sniff_bytes(head), Some(Detected::Unsupported(_))),
                "{head:?}"
            );
        }
        assert_eq!(
            sniff_bytes(b"a.out 12/12 [001] 5.000001: 100 cycles: \n\t 4004f6 main (/a.out)\n"),
            Some(Detected::PerfScript)
        );
        // A raw pprof protocol buffer: sample_type {type: 1, unit: 2}, string_table.
        assert_eq!(
            sniff_bytes(&[
                0x0a, 0x04, 0x08, 0x01, 0x10, 0x02, 0x32, 0x00, 0x32, 0x03, b'c', b'p', b'u'
            ]),
            Some(Detected::Pprof)
        );
        assert_eq!(sniff_bytes(b"hello world"), None);
        assert_eq!(sniff_bytes(b""), None);
    }
}
