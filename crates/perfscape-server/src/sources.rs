//! Source roots: where the program's source files are read from, and the only places they are
//! ever read from (`serve --source-dir DIR`, `--source-map FROM=TO`; `perfscape source`).
//!
//! A run names its files as they were on the measured machine (`/home/user/tauprogs/x.c`). A
//! name is looked up, in this order (in the spirit of pprof's `-source_path`/`-trim_path`):
//! 1. each `--source-map FROM=TO` whose `FROM` is a leading part of the name (whole path
//!    components): `TO` joined with the rest;
//! 2. the name itself, when it is absolute, or joined to each root when it is relative;
//! 3. by path suffix: each root joined with the name's last k components, k from all of them
//!    down to the file name alone (`ROOT/home/user/tauprogs/x.c`, `ROOT/user/tauprogs/x.c`, …,
//!    `ROOT/x.c`), the first root first.
//!
//! The first candidate that exists and lies inside a root is read. Every candidate is
//! canonicalized (symbolic links resolved) and must lie under a root's canonical path (the
//! `TO` of a map is a root too); a candidate that exists only outside the roots (an absolute
//! name elsewhere, a link leading out) is refused unless a later candidate lies inside.
//! Refused outright: names with a `..` component, NUL bytes or longer than [`MAX_NAME_BYTES`];
//! files larger than [`MAX_FILE_BYTES`], with a NUL byte (binary) or not UTF-8.

use std::fmt;
use std::path::{Component, Path, PathBuf};

/// Longest file name accepted (bytes).
pub const MAX_NAME_BYTES: usize = 4096;

/// Largest source file read (bytes): 8 MiB.
pub const MAX_FILE_BYTES: u64 = 8 << 20;

/// Why a source file was not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceError {
    /// No source roots were given.
    NoRoots,
    /// The name or the file it leads to may not be read (the reason says which rule).
    Refused(String),
    /// No candidate exists under the roots (the message lists the roots).
    NotFound(String),
}

impl fmt::Display for SourceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SourceError::NoRoots => write!(
                f,
                "no source directory was given: start the server with --source-dir DIR (and --source-map FROM=TO for a run measured elsewhere)"
            ),
            SourceError::Refused(why) | SourceError::NotFound(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for SourceError {}

/// A source file read under the roots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceFile {
    /// Its canonical path.
    pub path: PathBuf,
    /// Its text.
    pub text: String,
}

/// The source roots and path maps (see the module documentation).
#[derive(Debug, Clone, Default)]
pub struct SourceRoots {
    /// Canonical root directories, in the order given.
    roots: Vec<PathBuf>,
    /// `FROM` (as given) → canonical `TO`.
    maps: Vec<(PathBuf, PathBuf)>,
}

impl SourceRoots {
    /// Roots `dirs` and maps `maps` (`FROM=TO`).
    ///
    /// # Errors
    /// A root or map target that is not a directory, or a map without `=`.
    pub fn new(dirs: &[PathBuf], maps: &[String]) -> Result<Self, String> {
        let dir = |d: &Path, what: &str| -> Result<PathBuf, String> {
            let c = d
                .canonicalize()
                .map_err(|e| format!("{what} {}: {e}", d.display()))?;
            if c.is_dir() {
                Ok(c)
            } else {
                Err(format!("{what} {} is not a directory", d.display()))
            }
        };
        let mut out = SourceRoots::default();
        for d in dirs {
            out.roots.push(dir(d, "source directory")?);
        }
        for m in maps {
            let (from, to) = m
                .split_once('=')
                .filter(|(f, t)| !f.is_empty() && !t.is_empty())
                .ok_or_else(|| format!("--source-map `{m}`: expected FROM=TO"))?;
            let to = dir(Path::new(to), "source map target")?;
            out.maps.push((PathBuf::from(from), to.clone()));
            out.roots.push(to);
        }
        Ok(out)
    }

    /// True when no root is given.
    pub fn is_empty(&self) -> bool {
        self.roots.is_empty()
    }

    /// The canonical roots (the map targets included).
    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// Finds and reads the file the run names `name` (see the module documentation).
    ///
    /// # Errors
    /// [`SourceError`]: no roots, a refused name or file, nothing found.
    pub fn read(&self, name: &str) -> Result<SourceFile, SourceError> {
        read_checked(&self.find(name)?)
    }

    /// The canonical path, under a root, of the file the run names `name`, found as
    /// [`SourceRoots::read`] finds it (the executable the run's metadata names is found so),
    /// without reading it.
    ///
    /// # Errors
    /// [`SourceError`]: no roots, a refused name, a file only outside the roots, nothing found.
    pub fn find(&self, name: &str) -> Result<PathBuf, SourceError> {
        if self.roots.is_empty() {
            return Err(SourceError::NoRoots);
        }
        check_name(name)?;
        let mut outside: Option<PathBuf> = None;
        for cand in self.candidates(Path::new(name)) {
            let Ok(canon) = cand.canonicalize() else { continue };
            if !canon.is_file() {
                continue;
            }
            if !self.roots.iter().any(|r| canon.starts_with(r)) {
                outside.get_or_insert(cand);
                continue;
            }
            return Ok(canon);
        }
        Err(match outside {
            Some(p) => SourceError::Refused(format!(
                "`{name}` leads out of the source directories ({} → a file outside {}): not read",
                p.display(),
                self.roots_list()
            )),
            None => SourceError::NotFound(format!(
                "`{name}` was not found under the source directories {} (looked up by its path and by path suffix)",
                self.roots_list()
            )),
        })
    }

    fn roots_list(&self) -> String {
        self.roots
            .iter()
            .map(|r| r.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The candidates for `name`, in lookup order.
    fn candidates(&self, name: &Path) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for (from, to) in &self.maps {
            if let Ok(rest) = name.strip_prefix(from) {
                out.push(to.join(rest));
            }
        }
        if name.is_absolute() {
            out.push(name.to_path_buf());
        } else {
            out.extend(self.roots.iter().map(|r| r.join(name)));
        }
        let parts: Vec<&std::ffi::OsStr> = name
            .components()
            .filter_map(|c| match c {
                Component::Normal(s) => Some(s),
                _ => None,
            })
            .collect();
        for k in (1..=parts.len()).rev() {
            let tail: PathBuf = parts[parts.len() - k..].iter().collect();
            out.extend(self.roots.iter().map(|r| r.join(&tail)));
        }
        out
    }
}

/// Refuses empty names and names with `..`, NUL bytes, or longer than [`MAX_NAME_BYTES`].
///
/// # Errors
/// [`SourceError::Refused`] naming the rule.
pub fn check_name(name: &str) -> Result<(), SourceError> {
    if name.is_empty() {
        return Err(SourceError::Refused("an empty file name".into()));
    }
    if name.len() > MAX_NAME_BYTES {
        return Err(SourceError::Refused(format!(
            "a file name of {} bytes (at most {MAX_NAME_BYTES})",
            name.len()
        )));
    }
    if name.contains('\0') {
        return Err(SourceError::Refused("a file name with a NUL byte".into()));
    }
    if Path::new(name).components().any(|c| c == Component::ParentDir) {
        return Err(SourceError::Refused(format!(
            "`{name}` has a `..` component: not read"
        )));
    }
    Ok(())
}

/// Reads a regular file of at most [`MAX_FILE_BYTES`] that is UTF-8 text without NUL bytes.
fn read_checked(path: &Path) -> Result<SourceFile, SourceError> {
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| SourceError::NotFound(format!("{shown}: {e}")))?;
    if meta.len() > MAX_FILE_BYTES {
        return Err(SourceError::Refused(format!(
            "{shown} has {} bytes, more than the {MAX_FILE_BYTES} a source file may have: not read",
            meta.len()
        )));
    }
    let bytes = std::fs::read(path).map_err(|e| SourceError::NotFound(format!("{shown}: {e}")))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(SourceError::Refused(format!(
            "{shown} grew beyond {MAX_FILE_BYTES} bytes while read: not read"
        )));
    }
    if bytes.contains(&0) {
        return Err(SourceError::Refused(format!(
            "{shown} is binary (it has NUL bytes): not shown"
        )));
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        SourceError::Refused(format!(
            "{shown} is not UTF-8 text (byte {}): not shown",
            e.utf8_error().valid_up_to()
        ))
    })?;
    Ok(SourceFile {
        path: path.to_path_buf(),
        text,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn tree() -> (tempfile::TempDir, tempfile::TempDir) {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("src/sub")).unwrap();
        std::fs::write(root.path().join("src/sub/a.c"), "int a;\n").unwrap();
        std::fs::write(root.path().join("b.c"), "int b;\n").unwrap();
        std::fs::write(root.path().join("bin.c"), b"\x7fELF\0\0").unwrap();
        std::fs::write(root.path().join("latin1.c"), b"caf\xe9\n").unwrap();
        std::fs::write(outside.path().join("secret.c"), "secret\n").unwrap();
        std::fs::write(root.path().join("big.c"), vec![b'x'; MAX_FILE_BYTES as usize + 1]).unwrap();
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(outside.path().join("secret.c"), root.path().join("link.c")).unwrap();
            std::os::unix::fs::symlink(outside.path(), root.path().join("out")).unwrap();
        }
        (root, outside)
    }

    #[test]
    fn files_are_found_by_path_map_and_suffix() {
        let (root, _o) = tree();
        let r = SourceRoots::new(&[root.path().to_path_buf()], &[]).unwrap();
        assert_eq!(r.read("/home/user/progs/src/sub/a.c").unwrap().text, "int a;\n");
        assert_eq!(r.read("/elsewhere/b.c").unwrap().text, "int b;\n");
        assert_eq!(r.read("src/sub/a.c").unwrap().text, "int a;\n");
        let abs = root.path().join("b.c");
        assert_eq!(r.read(abs.to_str().unwrap()).unwrap().text, "int b;\n");
        let m = SourceRoots::new(
            &[],
            &[format!("/home/user/progs={}", root.path().join("src").display())],
        )
        .unwrap();
        let f = m.read("/home/user/progs/sub/a.c").unwrap();
        assert!(f.path.ends_with("src/sub/a.c"), "{f:?}");
        assert!(matches!(
            m.read("/home/user/progs/nope.c"),
            Err(SourceError::NotFound(_))
        ));
    }

    #[test]
    fn escapes_binaries_and_huge_files_are_refused() {
        let (root, outside) = tree();
        let r = SourceRoots::new(&[root.path().to_path_buf()], &[]).unwrap();
        let refused = |name: &str| match r.read(name) {
            Err(SourceError::Refused(why)) => why,
            other => panic!("{name}: {other:?}"),
        };
        assert!(refused("../b.c").contains(".."));
        assert!(refused("src/../../secret.c").contains(".."));
        let secret = outside.path().join("secret.c");
        assert!(refused(secret.to_str().unwrap()).contains("leads out"));
        assert!(refused("link.c").contains("leads out"));
        assert!(refused("out/secret.c").contains("leads out"));
        assert!(refused("bin.c").contains("binary"));
        assert!(refused("latin1.c").contains("UTF-8"));
        assert!(refused("big.c").contains("bytes"));
        assert!(refused(&"a/".repeat(3000)).contains("bytes"));
        assert!(refused("a\0b.c").contains("NUL"));
        // A FIFO (whose read would block) is never taken for a source file.
        #[cfg(unix)]
        {
            let fifo = root.path().join("fifo.c");
            assert!(
                std::process::Command::new("mkfifo")
                    .arg(&fifo)
                    .status()
                    .unwrap()
                    .success()
            );
            assert!(matches!(r.read("fifo.c"), Err(SourceError::NotFound(_))));
        }
        assert_eq!(SourceRoots::default().read("b.c"), Err(SourceError::NoRoots));
        assert!(SourceRoots::new(&[root.path().join("b.c")], &[]).is_err());
        assert!(SourceRoots::new(&[], &["nothing".into()]).is_err());
    }
}
