//! The on-disk cache of loaded profiles: re-opening a run reads one compact file instead of
//! parsing every text file again. The byte layout is documented in `CACHE.md` at the
//! repository root.
//!
//! # Where the cache lives
//! - Beside the input when its directory is writable: `RUN/.perfscape-cache` for a run
//!   directory, `DIR/.NAME.perfscape-cache` for an input file `DIR/NAME`. A directory whose
//!   mode has no write permission at all is treated as read-only even for root.
//! - Otherwise in the user's cache directory: [`OpenOptions::cache_dir`](crate::OpenOptions)
//!   when given, else `$XDG_CACHE_HOME/perfscape/`, else `~/.cache/perfscape/`, as
//!   `<name>-<16 hex digits of a hash of the canonical input path>.cache`.
//!
//! # When it is used
//! The cache records the files the load could read and their size and modification time (in
//! ns): for a directory input every file in it and in sub-directories up to two levels down
//! (TAU's `MULTI__<metric>/`), for an HPCToolkit `experiment.xml`/`meta.db` file every file
//! of its database directory, for any other file the file itself. It is used only when the
//! same walk finds exactly the same files with the same sizes and times, the input was named
//! the same way (detected, or the same `--input-format`), and the cache was written by this
//! very perfscape build (its version and the size and time of its executable): a new build
//! never reads a cache whose data an older reader produced. Anything else (a file touched,
//! changed, added, removed; a damaged or truncated cache, caught by its checksums) rebuilds it
//! and says why in the report's notes.
//!
//! The cache is not written when a source file was modified less than
//! [`RACY_WINDOW`] before the load started (it may still be changing, and a change within the
//! file system's timestamp granularity would go unseen), nor when the load failed. Writing is
//! atomic (a temporary file in the same directory, renamed); a failure to write only adds a
//! note. The file is not synced to disk: a cache torn by a crash fails its checksum and is
//! rebuilt.
//!
//! What it cannot see: a file rewritten with the same size and its modification time set
//! back to the old value (e.g. by `touch -d`); use `--refresh-cache` then.

use crate::error::{FileError, LoadError, LoadReport};
use crate::format::Opened;
use crate::options::{CacheMode, OpenOptions};
use perfscape_model::binary::{DecodeError, Reader, Writer, checksum};
use perfscape_model::{Profile, ThreadId};
use rayon::prelude::*;
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// File name of the cache beside a run directory's files.
pub const CACHE_FILE_NAME: &str = ".perfscape-cache";
/// First 8 bytes of a cache file.
pub const CACHE_MAGIC: [u8; 8] = *b"PSCACHE\0";
/// Version of the cache file layout (the profile inside has its own version,
/// [`perfscape_model::binary::PROFILE_FORMAT_VERSION`]).
pub const CACHE_FORMAT_VERSION: u32 = 1;
/// Source files modified less than this long before a load started are not trusted to be
/// complete: the cache is then not written.
pub const RACY_WINDOW: Duration = Duration::from_secs(2);
/// How many directory levels below a directory input are watched.
const MAX_DEPTH: usize = 2;
/// Bytes of the cache file header: magic, version, flags, meta length, meta CRC, reserved.
const FILE_HEADER_LEN: usize = 32;

/// Which files a cache depends on (given by [`crate::open`] from the format's
/// [`crate::format::Format::file_scope`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheScope {
    /// The input file only.
    File = 0,
    /// Every file of the input directory (up to two levels down: TAU's `MULTI__<metric>/`).
    Dir = 1,
    /// Every file of the input file's directory (HPCToolkit database files).
    ParentDir = 2,
}

/// One source file as the cache saw it: path relative to the scope's root (as bytes), size
/// and modification time. Unreadable entries have size `u64::MAX` and time `i64::MIN`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Source {
    rel: Vec<u8>,
    size: u64,
    mtime_ns: i64,
}

/// The validation part of a cache file.
#[derive(Debug)]
struct Meta {
    build: String,
    request: String,
    scope: CacheScope,
    input: Vec<u8>,
    canonical: Vec<u8>,
    started_ns: i64,
    sources: Vec<Source>,
    report: LoadReport,
}

/// The cache files an input may have: beside it, and in the user's cache directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CachePaths {
    /// `RUN/.perfscape-cache` or `DIR/.NAME.perfscape-cache`.
    pub beside: PathBuf,
    /// `<user cache dir>/perfscape/<name>-<hash>.cache`, when a user cache directory is known.
    pub user: Option<PathBuf>,
}

/// Where the cache of `input` would be (see the module documentation); `cache_dir` overrides
/// the user cache directory. Errors when the input does not exist.
pub fn cache_paths(input: &Path, cache_dir: Option<&Path>) -> io::Result<CachePaths> {
    let canonical = fs::canonicalize(input)?;
    Ok(paths_for(input, &canonical, cache_dir))
}

fn paths_for(input: &Path, canonical: &Path, cache_dir: Option<&Path>) -> CachePaths {
    let name = canonical
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "root".to_string());
    let beside = if input.is_dir() {
        input.join(CACHE_FILE_NAME)
    } else {
        let dir = input.parent().unwrap_or(Path::new(""));
        let mut file = std::ffi::OsString::from(".");
        file.push(input.file_name().unwrap_or(canonical.as_os_str()));
        file.push(CACHE_FILE_NAME);
        dir.join(file)
    };
    let user_dir = cache_dir.map(Path::to_path_buf).or_else(default_user_dir);
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    let user = user_dir.map(|d| d.join(format!("{safe}-{:016x}.cache", fnv1a(&path_bytes(canonical)))));
    CachePaths { beside, user }
}

fn default_user_dir() -> Option<PathBuf> {
    let xdg = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute());
    let base = xdg.or_else(|| {
        std::env::var_os("HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .map(|h| h.join(".cache"))
    })?;
    Some(base.join("perfscape"))
}

/// FNV-1a, 64 bits: a stable hash for cache file names (not a checksum).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(unix)]
fn path_bytes(p: &Path) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    p.as_os_str().as_bytes().to_vec()
}

#[cfg(not(unix))]
fn path_bytes(p: &Path) -> Vec<u8> {
    p.to_string_lossy().into_owned().into_bytes()
}

#[cfg(unix)]
fn path_from_bytes(b: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    PathBuf::from(std::ffi::OsStr::from_bytes(b))
}

#[cfg(not(unix))]
fn path_from_bytes(b: &[u8]) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(b).into_owned())
}

/// Identifies this perfscape build: a cache written by any other build is rebuilt, so a fixed
/// reader never serves data an older one produced.
fn build_id() -> &'static str {
    static ID: OnceLock<String> = OnceLock::new();
    ID.get_or_init(|| {
        let exe = std::env::current_exe()
            .and_then(fs::metadata)
            .map(|m| format!("{} bytes, modified {} ns", m.len(), mtime_ns(&m)))
            .unwrap_or_else(|_| "unknown executable".to_string());
        format!(
            "perfscape-formats {} (cache {CACHE_FORMAT_VERSION}, profile {}); {exe}",
            env!("CARGO_PKG_VERSION"),
            perfscape_model::binary::PROFILE_FORMAT_VERSION
        )
    })
}

fn mtime_ns(m: &fs::Metadata) -> i64 {
    m.modified().map_or(i64::MIN, system_time_ns)
}

fn system_time_ns(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_nanos()).unwrap_or(i64::MAX),
        Err(e) => i64::try_from(e.duration().as_nanos()).map_or(i64::MIN, |n| -n),
    }
}

/// True for the cache's own files (never sources).
fn is_cache_name(name: &[u8]) -> bool {
    name.windows(CACHE_FILE_NAME.len())
        .any(|w| w == CACHE_FILE_NAME.as_bytes())
}

fn scope_root(input: &Path, scope: CacheScope) -> PathBuf {
    match scope {
        CacheScope::Dir => input.to_path_buf(),
        CacheScope::File | CacheScope::ParentDir => match input.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        },
    }
}

/// The sources of `input` under `scope`, sorted by path.
fn walk(input: &Path, scope: CacheScope) -> io::Result<Vec<Source>> {
    let mut out = Vec::new();
    match scope {
        CacheScope::File => {
            let m = fs::metadata(input)?;
            let name = input
                .file_name()
                .map(|n| path_bytes(Path::new(n)))
                .unwrap_or_default();
            out.push(Source {
                rel: name,
                size: m.len(),
                mtime_ns: mtime_ns(&m),
            });
        }
        CacheScope::Dir | CacheScope::ParentDir => {
            let root = scope_root(input, scope);
            walk_dir(&root, &mut Vec::new(), 0, &mut out)?;
        }
    }
    out.sort_by(|a, b| a.rel.cmp(&b.rel));
    Ok(out)
}

fn unreadable(rel: Vec<u8>) -> Source {
    Source {
        rel,
        size: u64::MAX,
        mtime_ns: i64::MIN,
    }
}

fn source_of(rel: Vec<u8>, m: &fs::Metadata) -> Source {
    Source {
        rel,
        size: m.len(),
        mtime_ns: mtime_ns(m),
    }
}

/// Lists `dir` (names only: the entry types come with the listing), recurses into
/// sub-directories up to [`MAX_DEPTH`], then stats the plain files in parallel (a run of
/// 65,536 files is 65,536 `stat` calls: the bulk of checking a cache).
fn walk_dir(dir: &Path, rel: &mut Vec<u8>, depth: usize, out: &mut Vec<Source>) -> io::Result<()> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if depth == 0 => return Err(e),
        Err(_) => {
            out.push(unreadable(rel.clone()));
            return Ok(());
        }
    };
    let mut files: Vec<(Vec<u8>, fs::DirEntry)> = Vec::new();
    for entry in entries {
        let entry = entry?;
        let name = path_bytes(Path::new(&entry.file_name()));
        if is_cache_name(&name) {
            continue;
        }
        let len = rel.len();
        if !rel.is_empty() {
            rel.push(b'/');
        }
        rel.extend_from_slice(&name);
        let ft = entry.file_type()?;
        if ft.is_file() {
            files.push((rel.clone(), entry));
        } else if ft.is_dir() {
            if depth < MAX_DEPTH {
                walk_dir(&entry.path(), rel, depth + 1, out)?;
            }
        } else if ft.is_symlink() {
            match fs::metadata(entry.path()) {
                Ok(m) if m.is_dir() => {
                    if depth < MAX_DEPTH {
                        walk_dir(&entry.path(), rel, depth + 1, out)?;
                    }
                }
                Ok(m) if m.is_file() => out.push(source_of(rel.clone(), &m)),
                Ok(_) => {}
                Err(_) => out.push(unreadable(rel.clone())),
            }
        } // sockets, fifos, devices: no reader reads them
        rel.truncate(len);
    }
    let stat = |(rel, entry): (Vec<u8>, fs::DirEntry)| match entry.metadata() {
        Ok(m) => source_of(rel, &m),
        Err(_) => unreadable(rel),
    };
    if files.len() > 256 {
        out.par_extend(files.into_par_iter().map(stat));
    } else {
        out.extend(files.into_iter().map(stat));
    }
    Ok(())
}

/// Why the cached sources differ from the current ones, in words.
fn difference(cached: &[Source], now: &[Source]) -> String {
    let show = |s: &Source| String::from_utf8_lossy(&s.rel).into_owned();
    let (mut i, mut j) = (0, 0);
    while i < cached.len() || j < now.len() {
        match (cached.get(i), now.get(j)) {
            (Some(a), Some(b)) if a.rel == b.rel => {
                if a != b {
                    return format!("`{}` changed", show(b));
                }
                i += 1;
                j += 1;
            }
            (Some(a), Some(b)) if a.rel < b.rel => return format!("`{}` was removed", show(a)),
            (Some(a), None) => return format!("`{}` was removed", show(a)),
            (_, Some(b)) => return format!("`{}` is new", show(b)),
            (None, None) => break,
        }
    }
    "the source files differ".to_string()
}

/// Loads `input` through the cache according to `opts.cache`: `request` is the format named
/// by the caller (`None` = detected); `load` reads the files.
pub(crate) fn load_with_cache(
    input: &Path,
    request: Option<&str>,
    scope: CacheScope,
    opts: &OpenOptions<'_>,
    load: impl FnOnce() -> Result<Opened, LoadError>,
) -> Result<Opened, LoadError> {
    if opts.cache == CacheMode::Off {
        return load();
    }
    let Ok(canonical) = fs::canonicalize(input) else {
        return load(); // the loader reports the missing input
    };
    let paths = paths_for(input, &canonical, opts.cache_dir);
    let request = request.unwrap_or("");
    let mut notes = Vec::new();
    if opts.cache == CacheMode::ReadWrite {
        let candidates = std::iter::once((&paths.beside, false)).chain(paths.user.iter().map(|u| (u, true)));
        for (path, in_user_dir) in candidates {
            match read_cache(path, in_user_dir, input, &canonical, request) {
                Ok(Some(mut loaded)) => {
                    if let Some(p) = opts.progress {
                        p.finish();
                    }
                    loaded
                        .report
                        .notes
                        .push(format!("read from the cache {}", path.display()));
                    return Ok(loaded);
                }
                Ok(None) => {}
                Err(why) => notes.push(format!(
                    "the cache {} {why}; the files were read instead",
                    path.display()
                )),
            }
        }
    }
    let started_ns = system_time_ns(SystemTime::now());
    let sources = walk(input, scope);
    let mut loaded = load()?;
    let sources = match sources {
        Ok(s) => s,
        Err(e) => {
            notes.push(format!("not cached: cannot list the source files ({e})"));
            loaded.report.notes.extend(notes);
            return Ok(loaded);
        }
    };
    let racy_after = started_ns.saturating_sub(i64::try_from(RACY_WINDOW.as_nanos()).unwrap_or(i64::MAX));
    if let Some(s) = sources.iter().find(|s| s.mtime_ns > racy_after) {
        notes.push(format!(
            "not cached: `{}` was modified less than {} s before loading (it may still be changing)",
            String::from_utf8_lossy(&s.rel),
            RACY_WINDOW.as_secs()
        ));
        loaded.report.notes.extend(notes);
        return Ok(loaded);
    }
    let meta = Meta {
        build: build_id().to_string(),
        request: request.to_string(),
        scope,
        input: path_bytes(input),
        canonical: path_bytes(&canonical),
        started_ns,
        sources,
        report: loaded.report.clone(),
    };
    match write_cache(&paths, &meta, &loaded.profile) {
        Ok(written) if opts.cache == CacheMode::Refresh => {
            notes.push(format!(
                "the files were read and the cache {} rewritten, as asked",
                written.display()
            ));
        }
        Ok(_) => {}
        Err(e) => notes.push(format!(
            "the cache could not be written ({e}); the next load reads the files again"
        )),
    }
    loaded.report.notes.extend(notes);
    Ok(loaded)
}

/// Reads and validates one cache file: `Ok(None)` when there is none (or it belongs to
/// another input), `Err(why)` when it exists but cannot be used.
fn read_cache(
    path: &Path,
    in_user_dir: bool,
    input: &Path,
    canonical: &Path,
    request: &str,
) -> Result<Option<Opened>, String> {
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
    let rest = file_len - FILE_HEADER_LEN as u64;
    let mut meta_bytes =
        vec![0u8; usize::try_from(meta_len).map_err(|_| "is damaged: huge metadata".to_string())?];
    file.read_exact(&mut meta_bytes)
        .map_err(|e| format!("cannot be read ({e})"))?;
    let meta = check_meta(&meta_bytes, meta_crc)?;
    if meta.build != build_id() {
        return Err("was written by another perfscape build".to_string());
    }
    // A cache beside the input moves with its directory; one in the user's directory names
    // its input by canonical path (its file name is only a hash of it).
    if in_user_dir && meta.canonical != path_bytes(canonical) {
        return Err(format!(
            "belongs to another input ({})",
            path_from_bytes(&meta.canonical).display()
        ));
    }
    if meta.request != request {
        let named = |r: &str| {
            if r.is_empty() {
                "a detected format".to_string()
            } else {
                format!("format `{r}`")
            }
        };
        return Err(format!(
            "holds {} but {} was asked for",
            named(&meta.request),
            named(request)
        ));
    }
    // Check the sources and decode the profile at the same time: both take a similar time on
    // large runs (65,536 `stat` calls; ~100 MB to read and decode), and the decoded profile is
    // only dropped in the rare case the sources changed.
    let blob_len = usize::try_from(rest - meta_len).unwrap_or(0);
    let (now, profile) = std::thread::scope(|s| {
        let walker = s.spawn(|| walk(input, meta.scope));
        let profile = (|| {
            let mut blob = Vec::with_capacity(blob_len);
            file.read_to_end(&mut blob)
                .map_err(|e| format!("cannot be read ({e})"))?;
            decode_profile(&blob, FILE_HEADER_LEN as u64 + meta_len)
        })();
        (walker.join(), profile)
    });
    let now = match now {
        Ok(Ok(now)) => now,
        Ok(Err(e)) => return Err(format!("cannot be checked: listing the sources failed ({e})")),
        Err(_) => return Err("cannot be checked: listing the sources failed".to_string()),
    };
    if now != meta.sources {
        return Err(format!("is out of date: {}", difference(&meta.sources, &now)));
    }
    let profile = profile?;
    let mut report = meta.report;
    let stored_input = path_from_bytes(&meta.input);
    if stored_input != input {
        for e in report
            .bad_files
            .iter_mut()
            .chain(report.warnings.iter_mut())
            .chain(report.partial_files.iter_mut())
        {
            if let Ok(rest) = e.path.strip_prefix(&stored_input) {
                e.path = if rest.as_os_str().is_empty() {
                    input.to_path_buf()
                } else {
                    input.join(rest)
                };
            }
        }
    }
    Ok(Some(Opened::profile(profile, report)))
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

/// Decodes a whole cache file held in memory: the profile and the load report it stores,
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

/// Writes the cache beside the input when its directory is writable, else in the user cache
/// directory; returns the path written.
fn write_cache(paths: &CachePaths, meta: &Meta, profile: &Profile) -> io::Result<PathBuf> {
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
    let write_to = |target: &Path| -> io::Result<()> {
        let dir = target.parent().unwrap_or(Path::new("."));
        let tmp = dir.join(format!(
            "{CACHE_FILE_NAME}.tmp-{}-{}",
            std::process::id(),
            system_time_ns(SystemTime::now())
        ));
        let result = (|| {
            let mut f = File::options().write(true).create_new(true).open(&tmp)?;
            f.write_all(&header)?;
            f.write_all(&meta_bytes)?;
            profile.encode_to(f)?;
            fs::rename(&tmp, target)
        })();
        if result.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        result
    };
    let beside_dir = paths.beside.parent().unwrap_or(Path::new("."));
    let writable = fs::metadata(if beside_dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        beside_dir
    })
    .map(|m| !m.permissions().readonly())
    .unwrap_or(false);
    let beside_err = if writable {
        match write_to(&paths.beside) {
            Ok(()) => return Ok(paths.beside.clone()),
            Err(e) => Some(e),
        }
    } else {
        None
    };
    let Some(user) = &paths.user else {
        return Err(beside_err.unwrap_or_else(|| {
            io::Error::other(
                "the run directory is read-only and no user cache directory is known (HOME unset)",
            )
        }));
    };
    if let Some(dir) = user.parent() {
        fs::create_dir_all(dir)?;
    }
    write_to(user).map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", user.display())))?;
    Ok(user.clone())
}

fn encode_meta<W: Write>(w: &mut Writer<W>, m: &Meta) -> io::Result<()> {
    w.str(&m.build)?;
    w.str(&m.request)?;
    w.u8(m.scope as u8)?;
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
    let format: &'static str = if format_name.is_empty() {
        ""
    } else {
        crate::registry::named(&format_name)
            .map(|f| f.name)
            .ok_or_else(|| DecodeError::at(at, format!("unknown format name `{format_name}`")))?
    };
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_are_named() {
        let s = |rel: &str, size| Source {
            rel: rel.as_bytes().to_vec(),
            size,
            mtime_ns: 5,
        };
        let old = vec![s("a", 1), s("b", 2), s("c", 3)];
        assert_eq!(
            difference(&old, &[s("a", 1), s("b", 9), s("c", 3)]),
            "`b` changed"
        );
        assert_eq!(difference(&old, &[s("a", 1), s("c", 3)]), "`b` was removed");
        assert_eq!(difference(&old, &[s("a", 1), s("b", 2)]), "`c` was removed");
        assert_eq!(
            difference(&old, &[s("a", 1), s("b", 2), s("bb", 1), s("c", 3)]),
            "`bb` is new"
        );
        assert_eq!(
            difference(&old, &[s("0", 1), s("a", 1), s("b", 2), s("c", 3)]),
            "`0` is new"
        );
    }

    #[test]
    fn cache_file_names_skip_the_cache_itself() {
        assert!(is_cache_name(b".perfscape-cache"));
        assert!(is_cache_name(b".perfscape-cache.tmp-12-34"));
        assert!(is_cache_name(b".profile.cubex.perfscape-cache"));
        assert!(!is_cache_name(b"profile.0.0.0"));
    }

    #[test]
    fn user_cache_names_are_stable_and_safe() {
        let p = paths_for(
            Path::new("/nonexistent/run dir"),
            Path::new("/nonexistent/run dir"),
            Some(Path::new("/c")),
        );
        assert_eq!(p.beside, Path::new("/nonexistent/.run dir.perfscape-cache"));
        let user = p.user.unwrap();
        let name = user.file_name().unwrap().to_str().unwrap();
        assert!(name.starts_with("run_dir-") && name.ends_with(".cache"), "{name}");
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
