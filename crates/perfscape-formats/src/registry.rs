//! The registry of formats: the one table ([`FORMATS`]) from which detection, the names
//! `--input-format` takes, help texts, the "perfscape reads: …" list of errors and the cache's
//! scope are derived. Adding a format is one module with a `pub const FORMAT: Format` and one
//! line in [`FORMATS`].
//!
//! Detection is by content, never by a file name's extension alone: a directory by the names
//! of the files in it, a file by its first bytes after decompression
//! ([`crate::input::read_head`]). Formats perfscape does not read yet are still recognized
//! ([`RECOGNIZED`]), so that the error says what the input is instead of "unknown".

use crate::error::LoadError;
use crate::format::{Format, Probe};
use crate::input::{Codec, read_head};
use std::path::Path;

/// Every format perfscape reads, in the order detection tries them (the first whose sniffer
/// accepts the input wins: TAU profiles before TAU snapshots, so that a directory holding
/// both reads the profiles; pyinstrument, whose sniffer wants the first key, before Caliper
/// and Chrome, whose sniffers look for a key anywhere in the first bytes).
pub static FORMATS: &[&Format] = &[
    &crate::tau::run::FORMAT,
    &crate::tau::snapshot::FORMAT,
    &crate::tau::merged::FORMAT,
    &crate::tau::dumps::FORMAT,
    &crate::tau::trace::FORMAT,
    &crate::ppk::FORMAT,
    &crate::hpctoolkit::FORMAT,
    &crate::pyinstrument::FORMAT,
    &crate::caliper::FORMAT,
    &crate::perf::data::FORMAT,
    &crate::cube::FORMAT,
    &crate::otf2::FORMAT,
    &crate::chrome::FORMAT,
    &crate::perf::script::FORMAT,
    &crate::pprof::FORMAT,
];

/// An input perfscape recognizes but does not read: what it is, and its sniffer.
pub struct Recognized {
    /// What the input is, as the error says it ("a Charm++ Projections summary file (.sts)").
    pub what: &'static str,
    /// Recognizes it (see [`Format::sniff`]).
    pub sniff: fn(&Probe<'_>) -> bool,
}

/// Inputs recognized only to say what they are, tried after [`FORMATS`].
pub static RECOGNIZED: &[Recognized] = &[
    Recognized {
        what: "a TAU trace event definition file (.edf)",
        sniff: |p| {
            p.text(4096)
                .is_some_and(|t| t.lines().next().unwrap_or("").ends_with("dynamic_trace_events"))
        },
    },
    Recognized {
        what: "a Charm++ Projections summary file (.sts)",
        sniff: |p| p.text(64).is_some_and(|t| t.starts_with("PROJECTIONS_ID")),
    },
    Recognized {
        what: "a Score-P configuration file (scorep.cfg), not a measurement",
        sniff: |p| p.text(64).is_some_and(|t| t.starts_with("SCOREP_")),
    },
    Recognized {
        what: "a JSON document that is none of the JSON formats read here (Chrome traces, Caliper json-split, pyinstrument profiles)",
        sniff: |p| {
            p.text(64)
                .is_some_and(|t| t.starts_with('{') || t.starts_with('['))
        },
    },
    Recognized {
        what: "an XML document that is none of the XML formats read here (HPCToolkit experiment.xml, TAU snapshots, TAU merged profiles)",
        sniff: |p| p.text(64).is_some_and(|t| t.starts_with('<')),
    },
];

/// The format named `name` (one of the [`FORMATS`]' names), if any.
pub fn named(name: &str) -> Option<&'static Format> {
    FORMATS.iter().copied().find(|f| f.name == name)
}

/// The format named `name`, or an error listing the known names.
pub fn named_or_err(name: &str) -> Result<&'static Format, LoadError> {
    named(name).ok_or_else(|| LoadError::UnknownFormatName {
        name: name.to_string(),
        known: names().join(", "),
    })
}

/// The names of every format, in registry order.
pub fn names() -> Vec<&'static str> {
    FORMATS.iter().map(|f| f.name).collect()
}

/// "perfscape reads: …": every format's description, one per line, for error messages.
pub fn reads() -> String {
    let list: String = FORMATS
        .iter()
        .map(|f| format!("\n  - {}", f.description))
        .collect();
    format!("perfscape reads:{list}")
}

/// Detects the format of a file or directory from its content.
///
/// # Errors
/// [`LoadError::Io`] when the path cannot be read; [`LoadError::NotAFile`] for a device, FIFO
/// or socket; [`LoadError::UnsupportedFormat`] for an input recognized but not read (a Charm++
/// Projections log, ...); [`LoadError::UnknownFormat`] when nothing recognizes it. The last two list
/// what perfscape reads.
pub fn detect(path: &Path) -> Result<&'static Format, LoadError> {
    detect_listed(path).map(|(f, _)| f)
}

/// [`detect`], also giving the directory entries it listed when `path` is a directory (for
/// [`crate::format::OpenOptions::listing`]).
pub(crate) fn detect_listed(
    path: &Path,
) -> Result<(&'static Format, Option<Vec<std::fs::DirEntry>>), LoadError> {
    let meta = crate::input::check_regular(path)?;
    let (names, head);
    let mut entries = None;
    let probe = if meta.is_dir() {
        let listed = list_dir(path)?;
        names = listed
            .iter()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect::<Vec<String>>();
        entries = Some(listed);
        Probe::Dir { path, names: &names }
    } else {
        head = read_head(path)?;
        Probe::File { path, head: &head }
    };
    if let Some(f) = FORMATS.iter().copied().find(|f| (f.sniff)(&probe)) {
        return Ok((f, entries));
    }
    let unsupported = |what: String| LoadError::UnsupportedFormat {
        path: path.to_path_buf(),
        detail: format!(
            "recognized as {what}, which this version of perfscape does not read yet\n{}",
            reads()
        ),
    };
    if let Some(r) = RECOGNIZED.iter().find(|r| (r.sniff)(&probe)) {
        return Err(unsupported(r.what.to_string()));
    }
    let detail = match probe {
        Probe::Dir { names: [], .. } => "the directory is empty".to_string(),
        Probe::Dir { names, .. } => {
            let mut shown: Vec<&str> = names.iter().map(String::as_str).collect();
            shown.sort_unstable();
            let more = if shown.len() > 8 { ", ..." } else { "" };
            shown.truncate(8);
            format!(
                "no profile files recognized in this directory (it holds: {}{more})",
                shown.join(", ")
            )
        }
        Probe::File { head, .. } => {
            let mut raw = [0u8; 6];
            let n = std::fs::File::open(path)
                .and_then(|mut f| std::io::Read::read(&mut f, &mut raw))
                .unwrap_or(0);
            match Codec::of(&raw[..n]) {
                Some(c) if head.is_empty() => format!("the {} data decompresses to nothing", c.name()),
                Some(c) => {
                    return Err(unsupported(format!(
                        "a {}-compressed file whose content is none of the formats read here",
                        c.name()
                    )));
                }
                None if head.is_empty() => "the file is empty".to_string(),
                None => "the content is not a profile format perfscape recognizes".to_string(),
            }
        }
    };
    Err(LoadError::UnknownFormat {
        path: path.to_path_buf(),
        detail: format!("{detail}\n{}", reads()),
    })
}

/// The entries of directory `path`.
fn list_dir(path: &Path) -> Result<Vec<std::fs::DirEntry>, LoadError> {
    let io = |source| LoadError::Io {
        path: path.to_path_buf(),
        source,
    };
    std::fs::read_dir(path)
        .map_err(io)?
        .map(|entry| entry.map_err(io))
        .collect()
}

/// Recognizes the format of a file's first bytes (decompressed), without touching the file
/// system: the [`FORMATS`] whose sniffer accepts them, or the [`Recognized`] input they are.
/// For fuzzing and tests; [`detect`] is the entry point.
pub fn sniff_head(head: &[u8]) -> Option<Result<&'static Format, &'static str>> {
    let probe = Probe::File {
        path: Path::new(""),
        head,
    };
    if let Some(f) = FORMATS.iter().copied().find(|f| (f.sniff)(&probe)) {
        return Some(Ok(f));
    }
    RECOGNIZED.iter().find(|r| (r.sniff)(&probe)).map(|r| Err(r.what))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_every_format_is_described() {
        let mut n = names();
        n.sort_unstable();
        n.dedup();
        assert_eq!(n.len(), FORMATS.len());
        for f in FORMATS {
            assert!(!f.description.is_empty() && !f.example.is_empty(), "{}", f.name);
            assert_eq!(named(f.name), Some(*f));
        }
        assert!(named("nope").is_none());
        let e = named_or_err("nope").unwrap_err().to_string();
        assert!(
            e.contains("nope") && e.contains("tau-snapshot") && e.contains("perf-data"),
            "{e}"
        );
    }

    fn sniffed(head: &[u8]) -> Option<&'static str> {
        sniff_head(head).map(|r| match r {
            Ok(f) => f.name,
            Err(_) => "recognized",
        })
    }

    #[test]
    fn sniffing_file_heads() {
        assert_eq!(
            sniffed(b"12 templated_functions_MULTI_TIME\n# Name Calls"),
            Some("tau")
        );
        assert_eq!(
            sniffed(b"<profile_xml>\n<thread id=\"0.0.0.0\""),
            Some("tau-snapshot")
        );
        assert_eq!(
            sniffed(b"<profile_xml>\n\n<definitions thread=\"*\">"),
            Some("tau-merged")
        );
        assert_eq!(sniffed(b"  {\"traceEvents\": []}"), Some("chrome"));
        assert_eq!(sniffed(b"{\"data\": [], \"columns\": []}"), Some("caliper"));
        assert_eq!(sniffed(b"HPCTOOLKITmeta\x04\x00"), Some("hpctoolkit"));
        assert_eq!(
            sniffed(b"<?xml version=\"1.0\"?>\n<HPCToolkitExperiment version=\"2.0\">"),
            Some("hpctoolkit")
        );
        assert_eq!(sniffed(b"__rec=node,id=1,attr=8,data=x\n"), Some("caliper"));
        assert_eq!(
            sniffed(b"{\n  \"start_time\": 1.5,\n  \"duration\": 0.4,\n  \"root_frame\": {"),
            Some("pyinstrument")
        );
        assert_eq!(sniffed(b"{\n    \"data\": [\n [1, 2]"), Some("caliper"));
        let mut tar = vec![0u8; 512];
        tar[257..262].copy_from_slice(b"ustar");
        assert_eq!(sniffed(&tar), Some("cube"));
        assert_eq!(sniffed(&[0, b'P', 0, b'P', 0, b'K', 0, 0, 0, 2]), Some("ppk"));
        assert_eq!(sniffed(b"PERFILE2\x68\0\0\0"), Some("perf-data"));
        assert_eq!(sniffed(b"\x03BOTF2\x00\x03\x02\x02"), Some("otf2"));
        for head in [
            &b"126 dynamic_trace_events\n# FunctionId Group Tag"[..],
            b"PROJECTIONS_ID \nVERSION 11.0\n",
            b"SCOREP_ENABLE_PROFILING=false\n",
            b"{\"some\": \"json\"}",
            b"<?xml version=\"1.0\"?><other/>",
        ] {
            assert_eq!(sniffed(head), Some("recognized"), "{head:?}");
        }
        assert_eq!(
            sniffed(b"a.out 12/12 [001] 5.000001: 100 cycles: \n\t 4004f6 main (/a.out)\n"),
            Some("perf-script")
        );
        // A raw pprof protocol buffer: sample_type {type: 1, unit: 2}, string_table.
        assert_eq!(
            sniffed(&[
                0x0a, 0x04, 0x08, 0x01, 0x10, 0x02, 0x32, 0x00, 0x32, 0x03, b'c', b'p', b'u'
            ]),
            Some("pprof")
        );
        assert_eq!(sniffed(b"hello world"), None);
        assert_eq!(sniffed(b""), None);
    }
}
