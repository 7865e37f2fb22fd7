//! [`open`]: the one way to open a run, whatever its format — detect once, read once.

use crate::error::{LoadError, LoadReport};
use crate::format::{FileScope, Format, OpenOptions, Opened, Read};
use crate::input::{decompress, read_file};
use crate::options::CacheMode;
use crate::problem::{Parsed, Problem};
use std::borrow::Cow;
use std::path::Path;

/// Opens a run (a file or a directory): detects its format from the content (or takes
/// [`OpenOptions::format`]), reads it once, and returns the profile with the samples over time
/// and the trace when the input has them and [`OpenOptions::parts`] asks for them.
///
/// A compressed single-file input (gzip, zstd, xz) is decompressed first, whatever its format
/// ([`crate::input`]). With [`OpenOptions::cache`] on, a request that needs nothing but the
/// profile is answered from a valid cache of an earlier load of the same files, and a fresh
/// load writes one (see [`crate::cache`]).
///
/// # Errors
/// When the path cannot be read or is not a regular file or directory, its format is not
/// recognized or not read by perfscape, or no file of the run could be loaded. A run where only
/// some files are bad opens, with those files in [`LoadReport::bad_files`] (and
/// [`LoadReport::is_partial`] true).
pub fn open(path: &Path, opts: &OpenOptions<'_>) -> Result<Opened, LoadError> {
    let (format, listing) = match opts.format {
        Some(f) => (f, None),
        None => crate::registry::detect_listed(path)?,
    };
    // The reader of a directory gets the detection's listing instead of listing it again.
    let opts = &OpenOptions {
        listing: listing.as_deref(),
        ..*opts
    };
    if opts.cache == CacheMode::Off || opts.parts.wants_any_of(format.gives) {
        return read_as(format, path, opts);
    }
    let scope = if path.is_dir() {
        crate::cache::CacheScope::Dir
    } else {
        match format.file_scope {
            FileScope::File => crate::cache::CacheScope::File,
            FileScope::Directory => crate::cache::CacheScope::ParentDir,
        }
    };
    let request = opts.format.map(|f| f.name);
    crate::cache::load_with_cache(path, request, scope, opts, || read_as(format, path, opts))
}

/// Reads `path` as `format` (no detection, no cache), keeping only the parts asked for.
fn read_as(format: &'static Format, path: &Path, opts: &OpenOptions<'_>) -> Result<Opened, LoadError> {
    let mut opened = match format.read {
        Read::Bytes(parse) => read_bytes_input(path, format.name, opts, |data: Vec<u8>| parse(&data))?,
        Read::OwnedBytes(parse) => read_bytes_input(path, format.name, opts, parse)?,
        Read::Path(read) => read(path, opts)?,
    };
    if !opts.parts.series {
        opened.series = None;
    }
    if !opts.parts.trace {
        opened.trace = None;
    }
    Ok(opened)
}

/// Reads a single-file input whole, decompresses it, and parses it with a pure parser; the
/// parser's problems are attached to the file. Offsets in a compressed input count in the
/// decompressed data, and the messages say so.
fn read_bytes_input(
    path: &Path,
    format: &'static str,
    opts: &OpenOptions<'_>,
    parse: impl FnOnce(Vec<u8>) -> Result<Parsed, Problem>,
) -> Result<Opened, LoadError> {
    opts.progress_start(1);
    let raw = read_file(path)?;
    let bytes_read = raw.len() as u64;
    let content = decompress(&raw);
    let (codec, problem) = (content.codec, content.problem);
    let decompressed = match content.data {
        Cow::Owned(v) => Some(v),
        Cow::Borrowed(_) => None,
    };
    // Only one copy of the input is kept while it is parsed: the compressed bytes are freed
    // once decompressed.
    let data = decompressed.unwrap_or(raw);
    let mark = |mut p: Problem| {
        if let (Some(codec), Some(_)) = (codec, p.offset) {
            p.message = format!(
                "{} (byte offset in the {}-decompressed data)",
                p.message,
                codec.name()
            );
        }
        p
    };
    let parsed = parse(data).map_err(|e| {
        let mut errors = vec![mark(e).in_file(path)];
        if let Some(p) = &problem {
            errors.push(p.clone().in_file(path));
        }
        LoadError::NothingLoaded {
            path: path.to_path_buf(),
            errors,
        }
    })?;
    opts.progress_advance(1);
    opts.progress_finish();
    let Parsed {
        profile,
        trace,
        warnings,
        mut partial,
        notes,
    } = parsed;
    partial.extend(problem);
    Ok(Opened {
        profile,
        series: None,
        trace,
        report: LoadReport {
            format,
            files_read: 1,
            bytes_read,
            warnings: warnings.into_iter().map(|w| mark(w).in_file(path)).collect(),
            partial_files: partial.into_iter().map(|w| mark(w).in_file(path)).collect(),
            notes,
            ..LoadReport::default()
        },
    })
}
