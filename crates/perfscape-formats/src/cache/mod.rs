//! The on-disk cache of loaded profiles: re-opening a run reads one compact file instead of
//! parsing every text file again. Described in `CACHE.md` at the repository root (where,
//! when valid, byte layout).
//!
//! # Where the cache lives (`cache/location.rs`)
//! Only in the cache directory ([`cache_dir`]): [`OpenOptions::cache_dir`](crate::OpenOptions)
//! when given (the CLI's `--cache-dir`), else `$PERFSCAPE_CACHE_DIR`, else `perfscape/` in the
//! user's cache directory (`$XDG_CACHE_HOME` or `~/.cache` on Linux). Nothing is ever written
//! beside an input; `.perfscape-cache` files that older versions wrote there are ignored.
//! One entry per (canonical input path, format asked for), named by a hash of both. The
//! entries together are kept under a size limit ([`cache_limit`], default 2 GiB): after each
//! write the least recently used entries are removed. An entry's modification time is its
//! last use: a read sets it to now.
//!
//! # When an entry is valid (`cache/validity.rs`)
//! The entry records the files the load depended on (the caller's [`CacheScope`]) with their
//! size and modification time (in ns). It is used only when it was written by this very
//! perfscape build (its version and the size and time of its executable), for the same
//! canonical input path, format request and scope, and the same walk finds exactly the same
//! files with the same sizes and times. Anything else (a file touched, changed, added,
//! removed; a damaged or truncated entry, caught by its checksums) rebuilds it and says why in
//! the report's notes.
//!
//! The entry is not written when a source file was modified less than [`RACY_WINDOW`] before
//! the load started (it may still be changing, and a change within the file system's timestamp
//! granularity would go unseen), nor when the load failed. Writing is atomic (a temporary file
//! in the cache directory, renamed); a failure to write only adds a note. The file is not
//! synced to disk: an entry torn by a crash fails its checksum and is rebuilt.
//!
//! What it cannot see: a file rewritten with the same size and its modification time set
//! back to the old value (e.g. by `touch -d`); use `--refresh-cache` then.
//!
//! # Layout (`cache/file.rs`)
//! A 32-byte header, the metadata section, the encoded profile (`perfscape_model::binary`).

mod file;
mod location;
mod validity;

pub use file::parse_cache_file;
pub use location::{
    ABANDONED_AFTER, CACHE_DIR_ENV, CACHE_MAX_BYTES_ENV, Cleared, DEFAULT_MAX_BYTES, cache_dir, cache_limit,
    clear, entry_path,
};

use crate::error::{LoadError, LoadReport};
use crate::format::{OpenOptions, Opened};
use crate::options::CacheMode;
use location::{entry_name, human_bytes};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};
use validity::{build_id, difference, racy_source, system_time_ns, walk};

/// Which files an entry depends on: the caller (the format's reader) says, the cache lists
/// them with their size and modification time and compares on every read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheScope {
    /// The input file only (CUBE, ppk, pprof, ... files).
    File,
    /// Every file of the input directory and of its sub-directories up to two levels down
    /// (TAU's `MULTI__<metric>/`).
    Dir,
    /// Every file of the input file's directory, up to two levels down (HPCToolkit's
    /// `experiment.xml` or `meta.db`, read with the rest of their database).
    ParentDir,
}

impl CacheScope {
    /// Byte stored in the entry's metadata.
    pub(super) fn tag(self) -> u8 {
        match self {
            CacheScope::File => 0,
            CacheScope::Dir => 1,
            CacheScope::ParentDir => 2,
        }
    }

    /// In words, for notes.
    fn describe(self) -> &'static str {
        match self {
            CacheScope::File => "the input file",
            CacheScope::Dir => "the input directory",
            CacheScope::ParentDir => "the input file's directory",
        }
    }
}

/// First 8 bytes of a cache entry.
pub const CACHE_MAGIC: [u8; 8] = *b"PSCACHE\0";
/// Version of the cache entry layout (the profile inside has its own version,
/// [`perfscape_model::binary::PROFILE_FORMAT_VERSION`]).
pub const CACHE_FORMAT_VERSION: u32 = 1;
/// Source files modified less than this long before a load started are not trusted to be
/// complete: the entry is then not written.
pub const RACY_WINDOW: Duration = Duration::from_secs(2);
/// Every entry's file name ends with this; a file name containing it is never a source of an
/// input (this includes the `.perfscape-cache` files older versions wrote beside inputs).
pub const ENTRY_SUFFIX: &str = ".perfscape-cache";

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

/// One entry of a cache directory, as [`entries`] lists it.
#[derive(Debug, Clone)]
pub struct CacheEntry {
    /// The entry's file.
    pub path: PathBuf,
    /// Its size in bytes.
    pub size: u64,
    /// Its last use: when it was last written or read (its modification time).
    pub last_used: SystemTime,
    /// What it holds, or why its metadata cannot be read (a phrase: `is damaged: byte 40:
    /// ...`); such an entry is rewritten by the next load of its input, or evicted.
    pub about: Result<EntryAbout, String>,
}

/// What a [`CacheEntry`] holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryAbout {
    /// The canonical path of the input it was loaded from.
    pub input: PathBuf,
    /// The format asked for (`--input-format`), `None` when it was detected.
    pub request: Option<String>,
    /// The format read (one of the format names; `""` when unknown).
    pub format: &'static str,
    /// Written by this perfscape build; any other build's entry is rebuilt when its input is
    /// next loaded.
    pub current_build: bool,
}

/// The perfscape entries of the cache directory `dir`, most recently used first (other files
/// in `dir` are not listed). A directory that does not exist has none. Errors when `dir`
/// cannot be listed.
pub fn entries(dir: &Path) -> std::io::Result<Vec<CacheEntry>> {
    let mut out: Vec<CacheEntry> = location::entry_files(dir)?
        .into_iter()
        .map(|f| {
            let about = match file::open_entry(&f.path) {
                Ok(Some(e)) => Ok(EntryAbout {
                    input: path_from_bytes(&e.meta.canonical),
                    request: Some(e.meta.request).filter(|r| !r.is_empty()),
                    format: e.meta.report.format,
                    current_build: e.meta.build == build_id(),
                }),
                Ok(None) => Err("was removed while listing".to_string()),
                Err(why) => Err(why),
            };
            CacheEntry {
                path: f.path,
                size: f.size,
                last_used: f.modified,
                about,
            }
        })
        .collect();
    out.sort_by(|a, b| b.last_used.cmp(&a.last_used).then_with(|| a.path.cmp(&b.path)));
    Ok(out)
}

/// Loads `input` through the cache according to `opts.cache`: `request` is the format named
/// by the caller (`None` = detected), `scope` the files the result depends on, `load` reads
/// the files. A cache that cannot be read or written only adds a note to the report.
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
    let Some(dir) = cache_dir(opts.cache_dir) else {
        let mut loaded = load()?;
        loaded.report.notes.push(format!(
            "not cached: no cache directory is known (no home directory; set {CACHE_DIR_ENV} or --cache-dir)"
        ));
        return Ok(loaded);
    };
    let request = request.unwrap_or("");
    let entry = dir.join(entry_name(&canonical, request));
    let target = Target {
        input,
        canonical,
        request,
        scope,
        dir,
        entry,
    };
    let mut notes = Vec::new();
    if opts.cache == CacheMode::ReadWrite {
        match read_entry(&target) {
            Ok(Some(mut loaded)) => {
                opts.progress_finish();
                loaded
                    .report
                    .notes
                    .push(format!("read from the cache {}", target.entry.display()));
                return Ok(loaded);
            }
            Ok(None) => {}
            Err(why) => notes.push(format!(
                "the cache {} {why}; the files were read instead",
                target.entry.display()
            )),
        }
    }
    // The sources are listed before the files are read: a file changed during the load no
    // longer matches, and the next load rebuilds.
    let started_ns = system_time_ns(SystemTime::now());
    let sources = walk(input, scope);
    let mut loaded = load()?;
    match sources {
        Ok(sources) => write_after_load(&target, opts, &loaded, started_ns, sources, &mut notes),
        Err(e) => notes.push(format!("not cached: cannot list the source files ({e})")),
    }
    loaded.report.notes.extend(notes);
    Ok(loaded)
}

/// One load's entry: the input as given and as canonical path, the format asked for (`""` =
/// detected), the scope, the cache directory and the entry's path in it.
struct Target<'a> {
    input: &'a Path,
    canonical: PathBuf,
    request: &'a str,
    scope: CacheScope,
    dir: PathBuf,
    entry: PathBuf,
}

/// Writes the entry of a load that read the files (unless a source may still be changing),
/// then keeps the cache directory under its limit; says what happened in `notes`.
fn write_after_load(
    t: &Target<'_>,
    opts: &OpenOptions<'_>,
    loaded: &Opened,
    started_ns: i64,
    sources: Vec<validity::Source>,
    notes: &mut Vec<String>,
) {
    let racy_after = started_ns.saturating_sub(i64::try_from(RACY_WINDOW.as_nanos()).unwrap_or(i64::MAX));
    if let Some(s) = racy_source(&sources, racy_after) {
        notes.push(format!(
            "not cached: `{}` was modified less than {} s before loading (it may still be changing)",
            String::from_utf8_lossy(&s.rel),
            RACY_WINDOW.as_secs()
        ));
        return;
    }
    let limit = cache_limit(opts.cache_max_bytes).unwrap_or_else(|why| {
        notes.push(format!(
            "{why}; the default limit of {} applies",
            human_bytes(DEFAULT_MAX_BYTES)
        ));
        DEFAULT_MAX_BYTES
    });
    let meta = file::Meta {
        build: build_id().to_string(),
        request: t.request.to_string(),
        scope: t.scope,
        input: path_bytes(t.input),
        canonical: path_bytes(&t.canonical),
        started_ns,
        sources,
        report: loaded.report.clone(),
    };
    if let Err(e) = file::write_entry(&t.dir, &t.entry, &meta, &loaded.profile) {
        notes.push(format!(
            "the cache could not be written in {} ({e}); the next load reads the files again",
            t.dir.display()
        ));
        return;
    }
    match location::evict(&t.dir, limit, &t.entry) {
        Ok(ev) => {
            if let Some(size) = ev.too_large {
                notes.push(format!(
                    "not cached: the cache of this input ({}) is larger than the cache limit ({})",
                    human_bytes(size),
                    human_bytes(limit)
                ));
            } else if opts.cache == CacheMode::Refresh {
                notes.push(format!(
                    "the files were read and the cache {} rewritten, as asked",
                    t.entry.display()
                ));
            }
            if ev.removed > 0 {
                notes.push(format!(
                    "the cache directory {} was over its limit of {}: removed the {} least recently used entries ({})",
                    t.dir.display(),
                    human_bytes(limit),
                    ev.removed,
                    human_bytes(ev.bytes)
                ));
            }
        }
        Err(e) => notes.push(format!(
            "the cache directory {} could not be kept under its limit ({e})",
            t.dir.display()
        )),
    }
}

/// Reads and validates the entry of `t`: `Ok(None)` when there is none, `Err(why)` (a phrase
/// completing "the cache PATH ...") when it exists but cannot be used.
fn read_entry(t: &Target<'_>) -> Result<Option<Opened>, String> {
    let Some(mut entry) = file::open_entry(&t.entry)? else {
        return Ok(None);
    };
    let meta = &entry.meta;
    if meta.build != build_id() {
        return Err("was written by another perfscape build".to_string());
    }
    // The entry's name is only a hash of the input path and the request: both are checked.
    if meta.canonical != path_bytes(&t.canonical) {
        return Err(format!(
            "belongs to another input ({})",
            path_from_bytes(&meta.canonical).display()
        ));
    }
    if meta.request != t.request {
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
            named(t.request)
        ));
    }
    if meta.scope != t.scope {
        return Err(format!(
            "depends on {} but this load reads {}",
            meta.scope.describe(),
            t.scope.describe()
        ));
    }
    // Check the sources and decode the profile at the same time: both take a similar time on
    // large runs (65,536 `stat` calls; ~100 MB to read and decode), and the decoded profile is
    // only dropped in the rare case the sources changed.
    let (now, profile) = std::thread::scope(|s| {
        let walker = s.spawn(|| walk(t.input, t.scope));
        let profile = entry.read_profile();
        (walker.join(), profile)
    });
    let now = match now {
        Ok(Ok(now)) => now,
        Ok(Err(e)) => return Err(format!("cannot be checked: listing the sources failed ({e})")),
        Err(_) => return Err("cannot be checked: listing the sources failed".to_string()),
    };
    if now != entry.meta.sources {
        return Err(format!(
            "is out of date: {}",
            difference(&entry.meta.sources, &now)
        ));
    }
    let profile = profile?;
    location::mark_used(&entry.file);
    let mut report = entry.meta.report;
    let stored_input = path_from_bytes(&entry.meta.input);
    if stored_input != t.input {
        reroot(&mut report, &stored_input, t.input);
    }
    Ok(Some(Opened::profile(profile, report)))
}

/// Re-roots the file paths of a cached report loaded as `from` to the input path `to` (the
/// same canonical input named another way, e.g. a relative path or through a link).
fn reroot(report: &mut LoadReport, from: &Path, to: &Path) {
    for e in report
        .bad_files
        .iter_mut()
        .chain(report.warnings.iter_mut())
        .chain(report.partial_files.iter_mut())
    {
        if let Ok(rest) = e.path.strip_prefix(from) {
            e.path = if rest.as_os_str().is_empty() {
                to.to_path_buf()
            } else {
                to.join(rest)
            };
        }
    }
}
