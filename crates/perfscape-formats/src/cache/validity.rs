//! When a cache entry is valid: the build that wrote it, and the source files it was made
//! from (listed with their size and modification time, compared on every read).

use super::{CACHE_FORMAT_VERSION, CacheScope, path_bytes};
use rayon::prelude::*;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

/// How many directory levels below a directory input are watched (TAU's `MULTI__<metric>/`).
const MAX_DEPTH: usize = 2;

/// One source file as the cache saw it: path relative to the scope's root (as bytes), size
/// and modification time. Unreadable entries have size `u64::MAX` and time `i64::MIN`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Source {
    pub(super) rel: Vec<u8>,
    pub(super) size: u64,
    pub(super) mtime_ns: i64,
}

/// Identifies this perfscape build: an entry written by any other build is rebuilt, so a
/// fixed reader never serves data an older one produced.
pub(super) fn build_id() -> &'static str {
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

/// Modification time of `m` in ns since the Unix epoch (`i64::MIN` when unknown).
pub(super) fn mtime_ns(m: &fs::Metadata) -> i64 {
    m.modified().map_or(i64::MIN, system_time_ns)
}

/// `t` in ns since the Unix epoch (negative before it; saturating).
pub(super) fn system_time_ns(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_nanos()).unwrap_or(i64::MAX),
        Err(e) => i64::try_from(e.duration().as_nanos()).map_or(i64::MIN, |n| -n),
    }
}

/// True for perfscape's own cache files: entries and temporary files in a cache directory,
/// and the `.perfscape-cache` files older versions wrote beside their inputs. They are never
/// sources of an input.
pub(super) fn is_cache_name(name: &[u8]) -> bool {
    let marker = super::ENTRY_SUFFIX.as_bytes();
    name.windows(marker.len()).any(|w| w == marker)
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

/// The sources of `input` under `scope`, sorted by path. Errors when the input (or the
/// scope's directory) cannot be listed.
pub(super) fn walk(input: &Path, scope: CacheScope) -> io::Result<Vec<Source>> {
    let mut out = Vec::new();
    match scope {
        CacheScope::File => {
            let m = fs::metadata(input)?;
            let name = input
                .file_name()
                .map(|n| path_bytes(Path::new(n)))
                .unwrap_or_default();
            out.push(source_of(name, &m));
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

/// Why the cached sources differ from the current ones, in words (``"`profile.3.0.0` changed"``).
pub(super) fn difference(cached: &[Source], now: &[Source]) -> String {
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

/// The first source modified after `racy_after_ns` (or in the future): it may still be
/// changing, so the entry is not written.
pub(super) fn racy_source(sources: &[Source], racy_after_ns: i64) -> Option<&Source> {
    sources.iter().find(|s| s.mtime_ns > racy_after_ns)
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
    fn cache_file_names_are_never_sources() {
        assert!(is_cache_name(b".perfscape-cache"));
        assert!(is_cache_name(b".perfscape-cache.tmp-12-34"));
        assert!(is_cache_name(b".profile.cubex.perfscape-cache"));
        assert!(is_cache_name(b"run-0123456789abcdef.perfscape-cache"));
        assert!(is_cache_name(b".perfscape-cache-write-Ab12Cd"));
        assert!(!is_cache_name(b"profile.0.0.0"));
    }
}
