//! HPCToolkit databases: the classic `experiment.xml` + `*.metric-db` files (hpcprof-mpi up to
//! 2020) and the sparse `meta.db` + `profile.db` format (HPCToolkit 2022 and later).
//!
//! Both describe a calling context tree whose nodes are procedures (procedure frames), loops,
//! source lines (statements) and, in the sparse format, single instructions, with metric
//! values per node and thread. Mapping into the model (see also `calltree`):
//! - **Events**: one callpath event per context node; names: a procedure by its name, a loop as
//!   `Loop [{file} {line}]`, a source line as `[SAMPLE] <procedure> [{file} {line}]` (TAU's
//!   name for time sampled on a line, with the enclosing procedure), an instruction as
//!   `[SAMPLE] <procedure> [{module} {0x<offset>}]`. Call sites are not nodes (as in Hatchet);
//!   same-named siblings (e.g. one procedure called from two lines of its caller) are combined
//!   into one event, as TAU combines callpaths by name.
//! - **Values**: exclusive = what is attributed to the node itself and not to a child node
//!   (so exclusive values add up to the root's inclusive value), inclusive = the node and
//!   everything below it. See each format's module for how that is read.
//! - **Metrics**: named without the unit hpcrun appends (`CPUTIME (usec)` is the metric
//!   `CPUTIME` in µs, [`metric_name_and_unit`]). Per-thread values are hpcrun's sampled
//!   measurements; they combine across threads the way the database says hpcprof combines
//!   them ([`combine_of`]): the classic `<MetricFormula t="combine">` of the metric's
//!   summary, the sparse `meta.db` summary statistic of its identity formula `$$` in the
//!   `execution` scope — `sum` in every database seen (metrics/default.yaml: `combine: sum`).
//! - **Threads**: `ThreadId{node: MPI rank, context: 0, thread: thread id}`.

pub mod experiment;
pub mod sparse;

use crate::error::{LoadError, LoadReport};
use crate::format::{self, FileScope, Format, OpenOptions, Opened, Parts, Probe};
use perfscape_model::{Combine, Unit};
use std::path::Path;

/// The kind of a calling-context node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeKind {
    /// A procedure (frame, or inlined procedure).
    Procedure,
    /// A loop.
    Loop,
    /// A source line (statement).
    Line,
    /// A single machine instruction.
    Instruction,
}

/// The event frame name of a node (see the module documentation). `procedure` is the
/// enclosing procedure's name for lines and instructions.
pub fn frame_name(kind: NodeKind, name: &str, file: &str, line: u64, procedure: &str) -> String {
    match kind {
        NodeKind::Procedure => name.to_string(),
        NodeKind::Loop => format!("Loop [{{{file}}} {{{line}}}]"),
        NodeKind::Line => format!("[SAMPLE] {procedure} [{{{file}}} {{{line}}}]"),
        NodeKind::Instruction => format!("[SAMPLE] {procedure} [{{{file}}} {{0x{line:x}}}]"),
    }
}

/// The unit of an HPCToolkit metric named like `CPUTIME (usec)` / `REALTIME (sec)` /
/// `cycles`.
pub fn unit_of(name: &str) -> Unit {
    let lower = name.to_ascii_lowercase();
    if lower.contains("(usec)") || lower.contains("(us)") {
        Unit::Microseconds
    } else if lower.contains("(nsec)") || lower.contains("(ns)") {
        Unit::Nanoseconds
    } else if lower.contains("(sec)") || lower.contains("(s)") || lower.starts_with("time") {
        Unit::Seconds
    } else if lower.contains("cyc") {
        Unit::Cycles
    } else if lower.contains("byte") {
        Unit::Bytes
    } else {
        Unit::Count
    }
}

/// The model name and unit of an HPCToolkit metric named like `CPUTIME (usec)`: the unit hpcrun
/// appends in parentheses (`usec`, `us`, `sec`, `s`, `nsec`, `ns`) becomes the metric's [`Unit`]
/// and leaves the name, so that the unit is shown once (`CPUTIME (µs)`, not
/// `CPUTIME (usec) (µs)`); any other name is kept whole, its unit from [`unit_of`].
pub fn metric_name_and_unit(name: &str) -> (String, Unit) {
    let trimmed = name.trim();
    if let Some(open) = trimmed.rfind(" (")
        && let Some(inner) = trimmed[open + 2..].strip_suffix(')')
        && matches!(
            inner.to_ascii_lowercase().as_str(),
            "usec" | "us" | "sec" | "s" | "nsec" | "ns"
        )
    {
        return (trimmed[..open].trim_end().to_string(), unit_of(trimmed));
    }
    (trimmed.to_string(), unit_of(trimmed))
}

/// How hpcprof combines a metric across threads, from the function of its `combine` formula
/// (experiment.xml `<MetricFormula t="combine" frm="sum($2, $2)"/>`) or the `combine` code of a
/// meta.db summary statistic (0 sum, 1 min, 2 max): sum, minimum, maximum; anything else is not
/// combinable.
pub fn combine_of(function: &str) -> Combine {
    match function.trim() {
        "sum" | "0" => Combine::Sum,
        "min" | "1" => Combine::Min,
        "max" | "2" => Combine::Max,
        _ => Combine::NotCombinable,
    }
}

/// True when `dir` holds a classic HPCToolkit database (`experiment.xml`).
pub fn is_classic(dir: &Path) -> bool {
    dir.join("experiment.xml").is_file()
}

/// True when `dir` holds a sparse HPCToolkit database (`meta.db` and `profile.db`).
pub fn is_sparse(dir: &Path) -> bool {
    dir.join("meta.db").is_file() && dir.join("profile.db").is_file()
}

/// HPCToolkit databases: a directory (classic or sparse), or its `experiment.xml` / `meta.db`
/// file (which reads the database files beside it).
pub const FORMAT: Format = Format {
    name: "hpctoolkit",
    description: "HPCToolkit databases (a directory with experiment.xml + *.metric-db, or meta.db + profile.db)",
    example: "hpctoolkit/pipit-ping-pong-hpctoolkit-db",
    sniff: |p| match p {
        Probe::Dir { path, .. } => is_classic(path) || is_sparse(path),
        Probe::File { head, .. } => {
            head.starts_with(b"HPCTOOLKITmeta")
                || p.text(4096).is_some_and(|t| t.contains("<HPCToolkitExperiment"))
        }
    },
    read: format::Read::Path(read_database),
    gives: Parts::PROFILE,
    file_scope: FileScope::Directory,
};

/// Loads an HPCToolkit database directory (or its `experiment.xml` / `meta.db` file):
/// the sparse format when `meta.db` and `profile.db` are present, else the classic one.
fn read_database(path: &Path, opts: &OpenOptions<'_>) -> Result<Opened, LoadError> {
    let dir = if path.is_file() {
        path.parent().unwrap_or(Path::new("."))
    } else {
        path
    };
    let loaded = if is_sparse(dir) {
        sparse::read_sparse(dir, opts)
    } else if is_classic(dir) {
        experiment::read_experiment(dir, opts)
    } else {
        Err(LoadError::UnknownFormat {
            path: path.to_path_buf(),
            detail: "not an HPCToolkit database: expected experiment.xml (classic) or meta.db and profile.db"
                .into(),
        })
    }?;
    Ok(loaded)
}

pub(crate) fn report(format: &'static str, files: usize, bytes: u64) -> LoadReport {
    LoadReport {
        format,
        files_read: files,
        bytes_read: bytes,
        ..LoadReport::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_leave_the_metric_names() {
        assert_eq!(
            metric_name_and_unit("CPUTIME (usec)"),
            ("CPUTIME".to_string(), Unit::Microseconds)
        );
        assert_eq!(
            metric_name_and_unit("CPUTIME (sec)"),
            ("CPUTIME".to_string(), Unit::Seconds)
        );
        assert_eq!(
            metric_name_and_unit("REALTIME (nsec)"),
            ("REALTIME".to_string(), Unit::Nanoseconds)
        );
        assert_eq!(
            metric_name_and_unit("PAPI_TOT_CYC"),
            ("PAPI_TOT_CYC".to_string(), Unit::Cycles)
        );
        assert_eq!(
            metric_name_and_unit("GPU ops (count)"),
            ("GPU ops (count)".to_string(), Unit::Count)
        );
        assert_eq!(combine_of("sum"), Combine::Sum);
        assert_eq!(combine_of("2"), Combine::Max);
        assert_eq!(combine_of("stddev"), Combine::NotCombinable);
    }
}
