//! The layout of a cache entry (byte layout in `CACHE.md`): the 32-byte header, the metadata
//! section (what the entry was made from, and the load report) and the profile section
//! (`perfscape_model::binary`); reading it back with every length and checksum checked, and
//! writing it through a temporary file renamed into place.

use super::location::TEMP_PREFIX;
use super::validity::Source;
use super::{CACHE_FORMAT_VERSION, CACHE_MAGIC, CacheScope, path_bytes, path_from_bytes};
use crate::error::{FileError, LoadReport};

use perfscape_model::binary::{DecodeError, Reader, Writer, checksum};
use perfscape_model::{Profile, ThreadId};
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::Path;

/// The `&'static` name of the format named `name` in the registry (or `""` for none), for a
/// [`LoadReport::format`] decoded from bytes; `None` for any other name.
fn known_format(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        return Some("");
    }
    crate::registry::named(name).map(|f| f.name)
}

/// Bytes of the file header: magic, version, flags, meta length, meta CRC, reserved.
pub(super) const FILE_HEADER_LEN: usize = 32;

/// The metadata section of an entry: what it was made from, and the load report.
#[derive(Debug)]
pub(super) struct Meta {
    /// The build that wrote it ([`super::validity::build_id`]).
    pub(super) build: String,
    /// The format asked for, `""` when detected.
    pub(super) request: String,
    /// Which files it depends on.
    pub(super) scope: CacheScope,
    /// The input path as given to the load.
    pub(super) input: Vec<u8>,
    /// The canonical input path.
    pub(super) canonical: Vec<u8>,
    /// When the load started (ns since the Unix epoch).
    pub(super) started_ns: i64,
    /// The source files, sorted by path.
    pub(super) sources: Vec<Source>,
    /// The report of the load that made it.
    pub(super) report: LoadReport,
}

/// An entry opened and its header and metadata read and checked: the file is positioned at
/// the profile section.
pub(super) struct OpenedEntry {
    pub(super) file: File,
    pub(super) meta: Meta,
    /// Byte offset of the profile section.
    pub(super) profile_at: u64,
    /// Bytes of the profile section.
    pub(super) profile_len: u64,
}

/// Opens the entry at `path` and reads its header and metadata: `Ok(None)` when there is no
/// such file, `Err(why)` (a phrase completing "the cache PATH ...") when it cannot be read or
/// is damaged.
pub(super) fn open_entry(path: &Path) -> Result<Option<OpenedEntry>, String> {
    let mut file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot be opened ({e})")),
    };
    let file_len = file
        .metadata()
        .map_err(|e| format!("cannot be read ({e})"))?
        .len();
    let mut header = [0u8; FILE_HEADER_LEN];
    file.read_exact(&mut header).map_err(|_| {
        format!("is truncated: {file_len} bytes, shorter than its {FILE_HEADER_LEN}-byte header")
    })?;
    let (meta_len, meta_crc) = parse_header(&header, file_len)?;
    let mut meta_bytes =
        vec![0u8; usize::try_from(meta_len).map_err(|_| "is damaged: huge metadata".to_string())?];
    file.read_exact(&mut meta_bytes)
        .map_err(|e| format!("cannot be read ({e})"))?;
    let meta = check_meta(&meta_bytes, meta_crc)?;
    let profile_at = FILE_HEADER_LEN as u64 + meta_len;
    Ok(Some(OpenedEntry {
        file,
        meta,
        profile_at,
        profile_len: file_len - profile_at,
    }))
}

impl OpenedEntry {
    /// Reads and decodes the profile section.
    pub(super) fn read_profile(&mut self) -> Result<Profile, String> {
        let mut blob = Vec::with_capacity(usize::try_from(self.profile_len).unwrap_or(0));
        self.file
            .read_to_end(&mut blob)
            .map_err(|e| format!("cannot be read ({e})"))?;
        decode_profile(&blob, self.profile_at)
    }
}

/// Checks the 32-byte file header of a file of `file_len` bytes; returns the metadata length
/// and checksum.
fn parse_header(header: &[u8], file_len: u64) -> Result<(u64, u32), String> {
    let damaged = |e: DecodeError| format!("is damaged: {e}");
    let mut h = Reader::new(header);
    if h.raw(8, "magic").map_err(damaged)? != CACHE_MAGIC {
        return Err("is not a perfscape cache file (magic `PSCACHE` expected)".to_string());
    }
    let version = h.u32("version").map_err(damaged)?;
    if version != CACHE_FORMAT_VERSION {
        return Err(format!(
            "has layout version {version}, this perfscape writes version {CACHE_FORMAT_VERSION}"
        ));
    }
    let flags = h.u32("flags").map_err(damaged)?;
    if flags != 0 {
        return Err(format!("is damaged: byte 12: unknown flags {flags:#x}"));
    }
    let meta_len = h.u64("meta length").map_err(damaged)?;
    let meta_crc = h.u32("meta checksum").map_err(damaged)?;
    let rest = file_len.saturating_sub(FILE_HEADER_LEN as u64);
    if meta_len > rest {
        return Err(format!(
            "is truncated: its header announces {meta_len} bytes of metadata, {rest} bytes follow"
        ));
    }
    Ok((meta_len, meta_crc))
}

/// Checks the metadata section's checksum and decodes it.
fn check_meta(meta_bytes: &[u8], crc: u32) -> Result<Meta, String> {
    let actual = checksum(meta_bytes);
    if actual != crc {
        return Err(format!(
            "is damaged: byte {FILE_HEADER_LEN}: metadata checksum mismatch (CRC-32 {actual:#010x}, {crc:#010x} recorded)"
        ));
    }
    decode_meta(meta_bytes, FILE_HEADER_LEN as u64).map_err(|e| format!("is damaged: {e}"))
}

/// Decodes the profile section that starts at byte `offset` of the file.
fn decode_profile(blob: &[u8], offset: u64) -> Result<Profile, String> {
    Profile::decode(blob).map_err(|e| {
        format!(
            "is damaged: byte {}: {} (profile section)",
            e.offset + offset,
            e.message
        )
    })
}

/// Decodes a whole cache entry held in memory: the profile and the load report it stores,
/// without checking it against the source files (see [`crate::open`] for that). The error
/// says what is wrong, e.g. `is damaged: byte 40: metadata checksum mismatch (...)`. Used by
/// the fuzz target and by tools that inspect caches.
pub fn parse_cache_file(bytes: &[u8]) -> Result<(Profile, LoadReport), String> {
    let header = bytes.get(..FILE_HEADER_LEN).ok_or_else(|| {
        format!(
            "is truncated: {} bytes, shorter than its {FILE_HEADER_LEN}-byte header",
            bytes.len()
        )
    })?;
    let (meta_len, meta_crc) = parse_header(header, bytes.len() as u64)?;
    let meta_end =
        FILE_HEADER_LEN + usize::try_from(meta_len).map_err(|_| "is damaged: huge metadata".to_string())?;
    let meta = check_meta(&bytes[FILE_HEADER_LEN..meta_end], meta_crc)?;
    let profile = decode_profile(&bytes[meta_end..], meta_end as u64)?;
    Ok((profile, meta.report))
}

/// Writes the entry `target` in the directory `dir` (created if missing): through a
/// temporary file in `dir` (`tempfile`), renamed over `target` once complete, so a reader sees
/// the old or the new entry, never half of one. Not synced: a torn entry fails its checksum.
pub(super) fn write_entry(dir: &Path, target: &Path, meta: &Meta, profile: &Profile) -> io::Result<()> {
    let mut meta_bytes = Writer::new(Vec::new());
    encode_meta(&mut meta_bytes, meta)?;
    let meta_bytes = meta_bytes.finish()?;
    let mut header = Vec::with_capacity(FILE_HEADER_LEN);
    header.extend_from_slice(&CACHE_MAGIC);
    header.extend_from_slice(&CACHE_FORMAT_VERSION.to_le_bytes());
    header.extend_from_slice(&0u32.to_le_bytes());
    header.extend_from_slice(&(meta_bytes.len() as u64).to_le_bytes());
    header.extend_from_slice(&checksum(&meta_bytes).to_le_bytes());
    header.extend_from_slice(&0u32.to_le_bytes());
    std::fs::create_dir_all(dir)?;
    let mut temp = tempfile::Builder::new().prefix(TEMP_PREFIX).tempfile_in(dir)?;
    temp.write_all(&header)?;
    temp.write_all(&meta_bytes)?;
    profile.encode_to(temp.as_file_mut())?;
    temp.persist(target).map_err(|e| e.error)?;
    Ok(())
}

fn encode_meta<W: Write>(w: &mut Writer<W>, m: &Meta) -> io::Result<()> {
    w.str(&m.build)?;
    w.str(&m.request)?;
    w.u8(m.scope.tag())?;
    w.bytes(&m.input)?;
    w.bytes(&m.canonical)?;
    w.i64(m.started_ns)?;
    w.count(m.sources.len())?;
    for s in &m.sources {
        w.bytes(&s.rel)?;
        w.u64(s.size)?;
        w.i64(s.mtime_ns)?;
    }
    let r = &m.report;
    w.str(r.format)?;
    w.u64(r.files_read as u64)?;
    w.u64(r.bytes_read)?;
    let file_errors = |w: &mut Writer<W>, list: &[FileError]| -> io::Result<()> {
        w.count(list.len())?;
        for e in list {
            w.bytes(&path_bytes(&e.path))?;
            w.u8(u8::from(e.line.is_some()) | u8::from(e.byte_offset.is_some()) << 1)?;
            if let Some(l) = e.line {
                w.u64(l as u64)?;
            }
            if let Some(o) = e.byte_offset {
                w.u64(o)?;
            }
            w.str(&e.message)?;
        }
        Ok(())
    };
    file_errors(w, &r.bad_files)?;
    w.count(r.threads_skipped.len())?;
    for t in &r.threads_skipped {
        w.u32(t.node)?;
        w.u32(t.context)?;
        w.u32(t.thread)?;
    }
    file_errors(w, &r.warnings)?;
    file_errors(w, &r.partial_files)?;
    w.count(r.notes.len())?;
    for n in &r.notes {
        w.str(n)?;
    }
    Ok(())
}

fn decode_meta(bytes: &[u8], base: u64) -> Result<Meta, DecodeError> {
    let mut r = Reader::with_base(bytes, base);
    let build = r.str("build")?;
    let request = r.str("request")?;
    let at = r.offset();
    let scope = match r.u8("scope")? {
        0 => CacheScope::File,
        1 => CacheScope::Dir,
        2 => CacheScope::ParentDir,
        other => return Err(DecodeError::at(at, format!("unknown scope {other}"))),
    };
    let input = r.bytes("input path")?.to_vec();
    let canonical = r.bytes("canonical path")?.to_vec();
    let started_ns = r.i64("load start")?;
    let n = r.count(20, "source count")?;
    let mut sources = Vec::with_capacity(n);
    for _ in 0..n {
        sources.push(Source {
            rel: r.bytes("source path")?.to_vec(),
            size: r.u64("source size")?,
            mtime_ns: r.i64("source time")?,
        });
    }
    let at = r.offset();
    let format_name = r.str("format")?;
    let format = known_format(&format_name)
        .ok_or_else(|| DecodeError::at(at, format!("unknown format name `{format_name}`")))?;
    let at = r.offset();
    let files_read =
        usize::try_from(r.u64("files read")?).map_err(|_| DecodeError::at(at, "file count out of range"))?;
    let bytes_read = r.u64("bytes read")?;
    let file_errors = |r: &mut Reader<'_>| -> Result<Vec<FileError>, DecodeError> {
        let n = r.count(9, "file error count")?;
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            let path = path_from_bytes(r.bytes("file error path")?);
            let at = r.offset();
            let flags = r.u8("file error fields")?;
            if flags > 3 {
                return Err(DecodeError::at(
                    at,
                    format!("unknown file error fields {flags:#x}"),
                ));
            }
            let line = if flags & 1 != 0 {
                let at = r.offset();
                Some(usize::try_from(r.u64("line")?).map_err(|_| DecodeError::at(at, "line out of range"))?)
            } else {
                None
            };
            let byte_offset = if flags & 2 != 0 {
                Some(r.u64("byte offset")?)
            } else {
                None
            };
            let message = r.str("message")?;
            out.push(FileError {
                path,
                line,
                byte_offset,
                message,
            });
        }
        Ok(out)
    };
    let bad_files = file_errors(&mut r)?;
    let n = r.count(12, "skipped thread count")?;
    let mut threads_skipped = Vec::with_capacity(n);
    for _ in 0..n {
        threads_skipped.push(ThreadId::new(r.u32("node")?, r.u32("context")?, r.u32("thread")?));
    }
    let warnings = file_errors(&mut r)?;
    let partial_files = file_errors(&mut r)?;
    let n = r.count(4, "note count")?;
    let mut notes = Vec::with_capacity(n);
    for _ in 0..n {
        notes.push(r.str("note")?);
    }
    if r.remaining() != 0 {
        return Err(r.error(format!("{} bytes after the metadata", r.remaining())));
    }
    Ok(Meta {
        build,
        request,
        scope,
        input,
        canonical,
        started_ns,
        sources,
        report: LoadReport {
            format,
            files_read,
            bytes_read,
            bad_files,
            threads_skipped,
            warnings,
            partial_files,
            notes,
        },
    })
}
