//! `GET /api/source`: a source file of the run with the heat and statistics of its lines,
//! its text read only under the server's source roots ([`crate::sources`]).

use super::View;
use crate::error::ApiError;
use crate::request::SourceRequest;
use crate::sources::{SourceRoots, check_name};
use perfscape_analysis::answers::{SourceOptions, SourceResponse, SourceText, source_file, source_view};
use perfscape_analysis::lines::LineTable;
use perfscape_analysis::params::thread_index;

/// The source view for `q`, the file's text read under `roots`. A `file` with a `..`
/// component, a NUL byte or too long is a 400 and a file the run does not name a 404 (so no
/// request names any other path); a file the roots do not give (not found, refused, no roots) is answered with the
/// line statistics and a note saying why there is no text.
pub fn get(v: View<'_>, q: &SourceRequest, roots: &SourceRoots) -> Result<SourceResponse, ApiError> {
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
    Ok(source_view(v.profile, &table, file, text, values, options)?)
}
