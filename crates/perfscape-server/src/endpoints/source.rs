//! `GET /api/source`: a source file of the run with the heat and statistics of its lines,
//! its text read only under the server's source roots ([`crate::sources`]).

use super::View;
use crate::error::ApiError;
use crate::request::{DisasmRequest, SourceRequest};
use crate::sources::{SourceRoots, check_name};
use perfscape_analysis::answers::{
    DisasmResponse, SourceOptions, SourceResponse, SourceText, disasm_view, source_file, source_view,
};
use std::path::Path;

/// Largest executable read (bytes): 1 GiB.
const MAX_BINARY_BYTES: u64 = 1 << 30;
use perfscape_analysis::lines::LineTable;
use perfscape_analysis::params::thread_index;

/// The source view for `q`, the file's text read under `roots`. A `file` with a `..`
/// component, a NUL byte or too long is a 400 and a file the run does not name a 404 (so no
/// request names any other path); a file the roots do not give (not found, refused, no roots) is answered with the
/// line statistics and a note saying why there is no text.
pub fn get(
    v: View<'_>,
    q: &SourceRequest,
    roots: &SourceRoots,
    binary: bool,
) -> Result<SourceResponse, ApiError> {
    if let Some(name) = &q.file {
        check_name(name).map_err(|e| ApiError::bad(format!("file: {e}")))?;
    }
    let values = q.values(v.profile.metrics())?;
    let thread = q.thread.map(|t| thread_index(v.profile, t.0)).transpose()?;
    let table = LineTable::new(v.profile);
    let file = source_file(&table, v.profile, q.file.as_deref(), q.event, values)?;
    let read = file.map(|f| roots.read(&f.name));
    let (path, note);
    let text = match &read {
        Some(Ok(found)) => {
            path = found.path.display().to_string();
            SourceText::Found {
                path: &path,
                text: &found.text,
            }
        }
        Some(Err(e)) => {
            note = e.to_string();
            SourceText::Missing(&note)
        }
        None => SourceText::Missing(""),
    };
    let options = SourceOptions {
        heat: q.heat.unwrap_or_default(),
        thread,
        skip: q.skip,
        bin: q.bin,
        reduce: q.reduce.unwrap_or_default(),
    };
    let mut answer = source_view(v.profile, &table, file, text, values, options)?;
    answer.disasm = binary;
    Ok(answer)
}

/// `GET /api/disasm`: the instructions of lines `first..=last` of `file` (a file the run names)
/// in the executable of `serve --binary`, each with its line's total. 404 without an executable
/// or for a file the run does not name; 400 for a missing or bad range, or an executable that
/// cannot be disassembled (why is said).
pub fn disasm(v: View<'_>, q: &DisasmRequest, binary: Option<&Path>) -> Result<DisasmResponse, ApiError> {
    let Some(binary) = binary else {
        return Err(ApiError::not_found(
            "no executable: start the server with --binary PATH (the program the run measured, built with -g), or put the executable the run's metadata names (`Executable`) under a --source-dir",
        ));
    };
    let name = q.file.as_deref().ok_or_else(|| ApiError::bad("file: required"))?;
    check_name(name).map_err(|e| ApiError::bad(format!("file: {e}")))?;
    let first = q.first.ok_or_else(|| ApiError::bad("first: required"))?;
    let last = q.last.unwrap_or(first);
    let values = q.values(v.profile.metrics())?;
    let table = LineTable::new(v.profile);
    let Some(file) = source_file(&table, v.profile, Some(name), None, values)? else {
        return Err(ApiError::not_found(format!(
            "the run names no source file `{name}`"
        )));
    };
    let shown = binary.display().to_string();
    let meta = std::fs::metadata(binary).map_err(|e| ApiError::not_found(format!("{shown}: {e}")))?;
    if !meta.is_file() || meta.len() > MAX_BINARY_BYTES {
        return Err(ApiError::bad(format!(
            "{shown}: not a regular file of at most 1 GiB"
        )));
    }
    let elf = std::fs::read(binary).map_err(|e| ApiError::not_found(format!("{shown}: {e}")))?;
    Ok(disasm_view(v.profile, file, &shown, &elf, first, last, values)?)
}

/// The executable the run's metadata names (TAU's `Executable`, the same on every thread),
/// found under the source roots as a source file is (by path, then by path suffix), if any.
pub fn executable(profile: &perfscape_model::Profile, roots: &SourceRoots) -> Option<std::path::PathBuf> {
    if roots.is_empty() {
        return None;
    }
    let name = profile.metadata().get_common("Executable")?;
    roots.find(name).ok()
}
