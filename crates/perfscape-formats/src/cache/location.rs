//! Where the cache lives: the cache directory, the names of its entries, their size limit and
//! the eviction of the least recently used ones.
//!
//! An entry is a file `<name>-<16 hex digits>.perfscape-cache` directly in the cache directory
//! that starts with [`CACHE_MAGIC`](super::CACHE_MAGIC). Nothing else in the directory is
//! ever counted, evicted or cleared, so `--cache-dir` may name a directory that holds other
//! files. Writes go through temporary files named `.perfscape-cache-write-*` (persisted by
//! renaming); such a file older than [`ABANDONED_AFTER`] was left by a crash and is removed
//! by the next eviction or `clear`.

use super::validity::{mtime_ns, system_time_ns};
use super::{CACHE_MAGIC, ENTRY_SUFFIX, path_bytes};
use std::ffi::OsString;
use std::fs::{self, File};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// Environment variable naming the cache directory when [`OpenOptions::cache_dir`] is not
/// given (an empty value counts as unset).
///
/// [`OpenOptions::cache_dir`]: crate::OpenOptions::cache_dir
pub const CACHE_DIR_ENV: &str = "PERFSCAPE_CACHE_DIR";
/// Environment variable setting the size limit of the cache directory when
/// [`OpenOptions::cache_max_bytes`] is not given: bytes, or a number with a binary suffix
/// `K`, `M`, `G`, `T` (optionally followed by `iB` or `B`), e.g. `500M`, `4GiB`.
///
/// [`OpenOptions::cache_max_bytes`]: crate::OpenOptions::cache_max_bytes
pub const CACHE_MAX_BYTES_ENV: &str = "PERFSCAPE_CACHE_MAX_BYTES";
/// The default size limit of the cache directory's entries together: 2 GiB.
pub const DEFAULT_MAX_BYTES: u64 = 2 << 30;
/// Prefix of the temporary files entries are written through.
pub(super) const TEMP_PREFIX: &str = ".perfscape-cache-write-";
/// A temporary file older than this was abandoned by a crashed write.
pub const ABANDONED_AFTER: Duration = Duration::from_secs(3600);

/// The cache directory: `explicit` ([`OpenOptions::cache_dir`], the CLI's `--cache-dir`) when
/// given, else `$PERFSCAPE_CACHE_DIR`, else `perfscape/` in the user's cache directory
/// (`dirs::cache_dir()`: `$XDG_CACHE_HOME` or `~/.cache` on Linux, `~/Library/Caches` on
/// macOS, `%LOCALAPPDATA%` on Windows). `None` when none is known (no home directory).
/// The directory need not exist: it is created by the first write.
///
/// [`OpenOptions::cache_dir`]: crate::OpenOptions::cache_dir
pub fn cache_dir(explicit: Option<&Path>) -> Option<PathBuf> {
    resolve_dir(explicit, std::env::var_os(CACHE_DIR_ENV), dirs::cache_dir)
}

fn resolve_dir(
    explicit: Option<&Path>,
    env: Option<OsString>,
    user_cache: impl FnOnce() -> Option<PathBuf>,
) -> Option<PathBuf> {
    explicit
        .map(Path::to_path_buf)
        .or_else(|| env.filter(|v| !v.is_empty()).map(PathBuf::from))
        .or_else(|| user_cache().map(|d| d.join("perfscape")))
}

/// The size limit of the cache directory in bytes: `explicit`
/// ([`OpenOptions::cache_max_bytes`]) when given, else `$PERFSCAPE_CACHE_MAX_BYTES`, else
/// [`DEFAULT_MAX_BYTES`]. Errors (with a sentence naming the variable and its value) when the
/// variable is set but is not a size.
///
/// [`OpenOptions::cache_max_bytes`]: crate::OpenOptions::cache_max_bytes
pub fn cache_limit(explicit: Option<u64>) -> Result<u64, String> {
    if let Some(n) = explicit {
        return Ok(n);
    }
    match std::env::var_os(CACHE_MAX_BYTES_ENV) {
        Some(v) if !v.is_empty() => {
            let text = v.to_string_lossy();
            parse_size(&text).ok_or_else(|| {
                format!(
                    "{CACHE_MAX_BYTES_ENV}=`{text}` is not a size (bytes, or a number with K, M, G or T: 500M, 4G)"
                )
            })
        }
        _ => Ok(DEFAULT_MAX_BYTES),
    }
}

/// `123`, `500K`, `500M`, `2G`, `2GiB`, `1tb` (binary multiples; case-insensitive).
fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    let (number, unit) = t.split_at(digits);
    let n: u64 = number.parse().ok()?;
    let unit = unit.trim().to_ascii_lowercase();
    let unit = unit
        .strip_suffix("ib")
        .or_else(|| unit.strip_suffix('b'))
        .unwrap_or(&unit);
    let shift = match unit {
        "" => 0,
        "k" => 10,
        "m" => 20,
        "g" => 30,
        "t" => 40,
        _ => return None,
    };
    n.checked_mul(1u64 << shift)
}

/// `2.0 GiB`, `6.9 MiB`, `512 B`: sizes in notes.
pub(super) fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

/// FNV-1a, 64 bits: a stable hash for entry names (not a checksum).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The file name of the entry for the canonical input path `canonical` asked for as
/// `request` (`""` = the format detected): `<last path component, made safe>-<FNV-1a 64 of
/// the path bytes, a NUL and the request, 16 hex digits>.perfscape-cache`.
pub(super) fn entry_name(canonical: &Path, request: &str) -> String {
    let name = canonical
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "root".to_string());
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
    let mut key = path_bytes(canonical);
    key.push(0);
    key.extend_from_slice(request.as_bytes());
    format!("{safe}-{:016x}{ENTRY_SUFFIX}", fnv1a(&key))
}

/// The entry a load of `input` asked for as `request` (`None` = the format detected) uses in
/// the cache directory `dir` (see [`cache_dir`]). Errors when the input does not exist (the
/// entry is named after its canonical path).
pub fn entry_path(input: &Path, request: Option<&str>, dir: &Path) -> io::Result<PathBuf> {
    let canonical = fs::canonicalize(input)?;
    Ok(dir.join(entry_name(&canonical, request.unwrap_or(""))))
}

/// True for names of the form [`entry_name`] gives.
fn is_entry_name(name: &str) -> bool {
    let Some(stem) = name.strip_suffix(ENTRY_SUFFIX) else {
        return false;
    };
    let b = stem.as_bytes();
    b.len() >= 17
        && b[b.len() - 17] == b'-'
        && b[b.len() - 16..]
            .iter()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(c))
}

fn has_magic(path: &Path) -> bool {
    let mut magic = [0u8; 8];
    File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok_and(|()| magic == CACHE_MAGIC)
}

/// One entry file of a cache directory.
#[derive(Debug, Clone)]
pub(super) struct EntryFile {
    pub(super) path: PathBuf,
    pub(super) size: u64,
    pub(super) modified: SystemTime,
}

/// The entries in `dir` (by name and magic; see the module documentation). A directory that
/// does not exist has none.
pub(super) fn entry_files(dir: &Path) -> io::Result<Vec<EntryFile>> {
    let listing = match fs::read_dir(dir) {
        Ok(l) => l,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut out = Vec::new();
    for entry in listing {
        let entry = entry?;
        let name = entry.file_name();
        if !name.to_str().is_some_and(is_entry_name) {
            continue;
        }
        // Stat through the link-free entry: a symbolic link named like an entry is not one.
        let Ok(m) = entry.metadata() else { continue };
        if !m.is_file() || !has_magic(&entry.path()) {
            continue;
        }
        out.push(EntryFile {
            path: entry.path(),
            size: m.len(),
            modified: m.modified().unwrap_or(SystemTime::UNIX_EPOCH),
        });
    }
    Ok(out)
}

/// Temporary files in `dir` abandoned by crashed writes (older than [`ABANDONED_AFTER`]),
/// with their sizes.
fn abandoned_temp_files(dir: &Path) -> Vec<(PathBuf, u64)> {
    let Ok(listing) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let old = system_time_ns(SystemTime::now())
        .saturating_sub(i64::try_from(ABANDONED_AFTER.as_nanos()).unwrap_or(i64::MAX));
    listing
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_str().is_some_and(|n| n.starts_with(TEMP_PREFIX)))
        .filter_map(|e| {
            let m = e.metadata().ok()?;
            (m.is_file() && mtime_ns(&m) < old).then(|| (e.path(), m.len()))
        })
        .collect()
}

/// Marks an entry as used now (its modification time is its last use, see [`evict`]).
/// Best effort: an entry that cannot be marked only looks older to the eviction.
pub(super) fn mark_used(file: &File) {
    let _ = file.set_modified(SystemTime::now());
}

/// What [`evict`] did.
#[derive(Debug, Default)]
pub(super) struct Evicted {
    /// Entries removed (not counting the one just written).
    pub(super) removed: usize,
    /// Their bytes.
    pub(super) bytes: u64,
    /// The entry just written is alone larger than the limit and was removed.
    pub(super) too_large: Option<u64>,
}

/// Brings the entries of `dir` under `limit` bytes after `written` was written: removes the
/// least recently used entries (oldest modification time first) but never `written`, unless
/// `written` alone is larger than the limit. Also removes abandoned temporary files.
pub(super) fn evict(dir: &Path, limit: u64, written: &Path) -> io::Result<Evicted> {
    for (temp, _) in abandoned_temp_files(dir) {
        let _ = fs::remove_file(temp);
    }
    let mut files = entry_files(dir)?;
    let mut total: u64 = files.iter().map(|f| f.size).sum();
    let mut done = Evicted::default();
    if total <= limit {
        return Ok(done);
    }
    if let Some(i) = files.iter().position(|f| f.path == written) {
        let own = files.swap_remove(i);
        if own.size > limit {
            remove_entry(&own.path)?;
            total -= own.size;
            done.too_large = Some(own.size);
        }
    }
    files.sort_by(|a, b| a.modified.cmp(&b.modified).then_with(|| a.path.cmp(&b.path)));
    for f in files {
        if total <= limit {
            break;
        }
        remove_entry(&f.path)?;
        total -= f.size;
        done.removed += 1;
        done.bytes += f.size;
    }
    Ok(done)
}

/// Removes one entry; one another process removed first counts as removed.
fn remove_entry(path: &Path) -> io::Result<()> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// What [`clear`] removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cleared {
    /// Cache entries removed.
    pub entries: usize,
    /// Their total size in bytes.
    pub bytes: u64,
    /// Temporary files abandoned by crashed writes removed (older than [`ABANDONED_AFTER`]).
    pub abandoned_files: usize,
    /// Their total size in bytes.
    pub abandoned_bytes: u64,
}

/// Removes every perfscape cache entry from `dir` (files named and starting like one; other
/// files are left alone) and the temporary files abandoned by crashed writes. A directory
/// that does not exist is empty. Errors when the directory cannot be listed or an entry
/// cannot be removed (those removed before stay removed).
pub fn clear(dir: &Path) -> io::Result<Cleared> {
    let mut done = Cleared::default();
    for f in entry_files(dir)? {
        remove_entry(&f.path)?;
        done.entries += 1;
        done.bytes += f.size;
    }
    for (temp, size) in abandoned_temp_files(dir) {
        remove_entry(&temp)?;
        done.abandoned_files += 1;
        done.abandoned_bytes += size;
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_option_wins_over_the_environment_which_wins_over_the_user_cache_directory() {
        let user = || Some(PathBuf::from("/home/u/.cache"));
        let env = || Some(OsString::from("/env/dir"));
        assert_eq!(
            resolve_dir(Some(Path::new("/opt/dir")), env(), user),
            Some(PathBuf::from("/opt/dir"))
        );
        assert_eq!(resolve_dir(None, env(), user), Some(PathBuf::from("/env/dir")));
        assert_eq!(
            resolve_dir(None, Some(OsString::new()), user),
            Some(PathBuf::from("/home/u/.cache/perfscape"))
        );
        assert_eq!(
            resolve_dir(None, None, user),
            Some(PathBuf::from("/home/u/.cache/perfscape"))
        );
        assert_eq!(resolve_dir(None, None, || None), None);
    }

    #[test]
    fn sizes_parse_with_binary_suffixes() {
        assert_eq!(parse_size("123"), Some(123));
        assert_eq!(parse_size("500K"), Some(500 << 10));
        assert_eq!(parse_size("500m"), Some(500 << 20));
        assert_eq!(parse_size("2G"), Some(2 << 30));
        assert_eq!(parse_size("2GiB"), Some(2 << 30));
        assert_eq!(parse_size(" 1 TB "), Some(1 << 40));
        assert_eq!(parse_size(""), None);
        assert_eq!(parse_size("2.5G"), None);
        assert_eq!(parse_size("-1"), None);
        assert_eq!(parse_size("10X"), None);
        assert_eq!(parse_size("99999999999T"), None);
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(DEFAULT_MAX_BYTES), "2.0 GiB");
        assert_eq!(human_bytes(7_235_174), "6.9 MiB");
    }

    #[test]
    fn entry_names_are_stable_safe_and_recognized() {
        let a = entry_name(Path::new("/nonexistent/run dir"), "");
        assert!(a.starts_with("run_dir-") && a.ends_with(ENTRY_SUFFIX), "{a}");
        assert!(is_entry_name(&a));
        assert_eq!(a, entry_name(Path::new("/nonexistent/run dir"), ""));
        assert_ne!(a, entry_name(Path::new("/nonexistent/run dir"), "tau"));
        assert_ne!(a, entry_name(Path::new("/other/run dir"), ""));
        assert!(is_entry_name("x-0123456789abcdef.perfscape-cache"));
        assert!(!is_entry_name("x-0123456789ABCDEF.perfscape-cache"));
        assert!(!is_entry_name("x-0123456789abcde.perfscape-cache"));
        assert!(!is_entry_name(".perfscape-cache"));
        assert!(!is_entry_name("notes.txt"));
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
