//! The files of a run directory the watcher cares about, and reading what was appended to one.

use perfscape_formats::tau::dumps::{dump_file_parts, parse_dump_time};
use perfscape_formats::tau::profile_file_thread;
use perfscape_formats::tau::snapshot::snapshot_file_thread;
use perfscape_model::ThreadId;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// What a file name says a file is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FileKind {
    /// `snapshot.N.C.T`.
    Snapshot(ThreadId),
    /// `dump__<ctime>__.N.C.T`, with the seconds read from the name.
    Dump(ThreadId, Option<i64>),
    /// `profile.N.C.T` (written by TAU at exit, through a temporary file and a rename).
    Profile(ThreadId),
}

impl FileKind {
    /// Classifies a file name; `None` for files the watcher ignores (TAU's `temp.N.C.T`,
    /// traces, anything else).
    pub(crate) fn of_name(name: &str) -> Option<FileKind> {
        if let Some(t) = snapshot_file_thread(name) {
            return Some(FileKind::Snapshot(t));
        }
        if let Some((time, t)) = dump_file_parts(name) {
            return Some(FileKind::Dump(t, parse_dump_time(time)));
        }
        profile_file_thread(name).map(FileKind::Profile)
    }

    /// Classifies a path by its file name.
    pub(crate) fn of_path(path: &Path) -> Option<FileKind> {
        FileKind::of_name(path.file_name()?.to_str()?)
    }
}

/// Identity of a file on disk (device and inode on Unix), to notice a file replaced by a
/// new one under the same name.
pub(crate) type Identity = Option<(u64, u64)>;

#[cfg(unix)]
fn identity(meta: &std::fs::Metadata) -> Identity {
    use std::os::unix::fs::MetadataExt;
    Some((meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
fn identity(_meta: &std::fs::Metadata) -> Identity {
    None
}

/// How many leading bytes of a file are kept to notice a rewrite (TAU's first block starts
/// with the thread id and the process id, so a new run of the program differs here).
const PREFIX: usize = 256;

/// Largest number of bytes read from one file in one go (the rest is read in the next
/// round, so one huge file does not delay the others).
pub(crate) const MAX_READ: u64 = 16 << 20;

/// Where reading of a growing file stands.
#[derive(Debug, Default)]
pub(crate) struct Tail {
    /// Bytes read so far (the next read starts here).
    pub(crate) offset: u64,
    identity: Identity,
    prefix: Vec<u8>,
}

/// What [`Tail::read`] found.
#[derive(Debug)]
pub(crate) enum TailRead {
    /// The file is gone (removed or renamed away).
    Gone,
    /// The bytes appended since the last read (maybe none), and whether more remain.
    Appended {
        /// The bytes.
        bytes: Vec<u8>,
        /// The read stopped at [`MAX_READ`]: read again.
        more: bool,
    },
    /// The file no longer continues what was read: it was truncated, replaced, or its first
    /// bytes changed. Reading starts again from the beginning; `bytes` are its first bytes.
    Rewritten {
        /// Why the file is considered rewritten.
        why: String,
        /// The file's content from the start (up to [`MAX_READ`]).
        bytes: Vec<u8>,
        /// More remains to be read.
        more: bool,
    },
}

impl Tail {
    /// Reads what was appended to `path` since the last read, noticing truncation and
    /// rewrites (a smaller size, a new inode, different first bytes).
    pub(crate) fn read(&mut self, path: &Path) -> io::Result<TailRead> {
        let mut f = match File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(TailRead::Gone),
            Err(e) => return Err(e),
        };
        let meta = f.metadata()?;
        let size = meta.len();
        let id = identity(&meta);
        let mut why = None;
        if self.identity.is_some() && id != self.identity {
            why = Some("it was replaced by a new file of the same name".to_string());
        } else if size < self.offset {
            why = Some(format!(
                "it was truncated to {size} bytes after {} bytes had been read",
                self.offset
            ));
        } else if !self.prefix.is_empty() {
            let mut head = vec![0; self.prefix.len()];
            f.read_exact(&mut head)?;
            if head != self.prefix {
                why = Some("its first bytes changed (it was rewritten)".to_string());
            }
        }
        self.identity = id;
        if why.is_some() {
            self.offset = 0;
            self.prefix.clear();
        }
        f.seek(SeekFrom::Start(self.offset))?;
        let mut bytes = Vec::with_capacity(usize::try_from(size.saturating_sub(self.offset)).unwrap_or(0));
        f.take(MAX_READ).read_to_end(&mut bytes)?;
        let more = bytes.len() as u64 >= MAX_READ;
        if self.prefix.len() < PREFIX && (self.offset as usize) < PREFIX {
            let want = PREFIX - self.prefix.len();
            self.prefix.extend_from_slice(&bytes[..want.min(bytes.len())]);
        }
        self.offset += bytes.len() as u64;
        Ok(match why {
            Some(why) => TailRead::Rewritten { why, bytes, more },
            None => TailRead::Appended { bytes, more },
        })
    }

    /// The file's size and identity now differ from what was read (cheap check for the
    /// polling fallback).
    pub(crate) fn differs(&self, meta: &std::fs::Metadata) -> bool {
        meta.len() != self.offset || (self.identity.is_some() && identity(meta) != self.identity)
    }
}

/// One entry of a directory listing the watcher cares about.
#[derive(Debug)]
pub(crate) struct Listed {
    pub(crate) path: PathBuf,
    pub(crate) kind: FileKind,
    pub(crate) meta: std::fs::Metadata,
}

/// Lists the files of `dir` the watcher cares about, plus the `profile.N.C.T` files in its
/// `MULTI__<metric>` subdirectories (multi-metric runs).
pub(crate) fn list(dir: &Path) -> io::Result<Vec<Listed>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let Ok(meta) = entry.metadata() else { continue };
        if meta.is_dir() {
            if name.starts_with("MULTI__") {
                let Ok(sub) = std::fs::read_dir(entry.path()) else {
                    continue;
                };
                for e in sub.flatten() {
                    if let (Some(FileKind::Profile(t)), Ok(meta)) =
                        (e.file_name().to_str().and_then(FileKind::of_name), e.metadata())
                    {
                        out.push(Listed {
                            path: e.path(),
                            kind: FileKind::Profile(t),
                            meta,
                        });
                    }
                }
            }
            continue;
        }
        if let Some(kind) = FileKind::of_name(name) {
            out.push(Listed {
                path: entry.path(),
                kind,
                meta,
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::io::Write;

    #[test]
    fn names_are_classified() {
        assert_eq!(
            FileKind::of_name("snapshot.3.0.1"),
            Some(FileKind::Snapshot(ThreadId::new(3, 0, 1)))
        );
        assert_eq!(
            FileKind::of_name("profile.0.0.12"),
            Some(FileKind::Profile(ThreadId::new(0, 0, 12)))
        );
        assert_eq!(
            FileKind::of_name("dump__Sat-Nov-21-19:41:49-2026__.2.0.0"),
            Some(FileKind::Dump(ThreadId::new(2, 0, 0), Some(1_795_290_109)))
        );
        for other in [
            "temp.0.0.0",
            "tautrace.0.0.0.trc",
            "events.0.edf",
            "snapshot.0.0",
            "README.md",
        ] {
            assert_eq!(FileKind::of_name(other), None, "{other}");
        }
    }

    #[test]
    fn appended_bytes_truncation_and_rewrites_are_told_apart() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("snapshot.0.0.0");
        let mut tail = Tail::default();
        assert!(matches!(tail.read(&p).unwrap(), TailRead::Gone));
        let mut f = std::fs::File::create(&p).unwrap();
        f.write_all(b"hello ").unwrap();
        match tail.read(&p).unwrap() {
            TailRead::Appended { bytes, more } => {
                assert_eq!((bytes.as_slice(), more), (&b"hello "[..], false))
            }
            other => panic!("{other:?}"),
        }
        match tail.read(&p).unwrap() {
            TailRead::Appended { bytes, .. } => assert!(bytes.is_empty()),
            other => panic!("{other:?}"),
        }
        f.write_all(b"world").unwrap();
        match tail.read(&p).unwrap() {
            TailRead::Appended { bytes, .. } => assert_eq!(bytes, b"world"),
            other => panic!("{other:?}"),
        }
        // Truncated and rewritten shorter.
        std::fs::write(&p, b"hel").unwrap();
        match tail.read(&p).unwrap() {
            TailRead::Rewritten { why, bytes, .. } => {
                assert!(why.contains("truncated to 3 bytes after 11"), "{why}");
                assert_eq!(bytes, b"hel");
            }
            other => panic!("{other:?}"),
        }
        // Rewritten longer with other first bytes (a new run of the program).
        std::fs::write(&p, b"HELLO world, again").unwrap();
        match tail.read(&p).unwrap() {
            TailRead::Rewritten { why, bytes, .. } => {
                assert!(why.contains("first bytes changed"), "{why}");
                assert_eq!(bytes, b"HELLO world, again");
            }
            other => panic!("{other:?}"),
        }
        // Replaced by a new file (rename over it).
        let q = dir.path().join("new");
        std::fs::write(&q, b"HELLO world, again and more").unwrap();
        std::fs::rename(&q, &p).unwrap();
        match tail.read(&p).unwrap() {
            TailRead::Rewritten { why, bytes, .. } => {
                assert!(why.contains("replaced"), "{why}");
                assert_eq!(bytes.len(), 27);
            }
            other => panic!("{other:?}"),
        }
    }
}
