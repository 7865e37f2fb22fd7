//! Helpers shared by the CLI tests (each test binary uses some of them).

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The shared corpus of real files: `$PERFSCAPE_CORPUS`, else `../shared/corpus` beside the
/// repository. Read only.
pub fn corpus() -> PathBuf {
    let p = std::env::var_os("PERFSCAPE_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"));
    assert!(p.is_dir(), "the shared corpus is expected at {}", p.display());
    p
}

/// Runs the binary with the profile cache on, in a temporary cache directory of this call
/// alone (never the user's cache, never shared with another test; removed afterwards).
/// `tests/cache.rs` checks the cache itself.
pub fn perfscape(args: &[&str]) -> Output {
    let cache = tempfile::tempdir().unwrap();
    Command::new(env!("CARGO_BIN_EXE_perfscape"))
        .env("PERFSCAPE_CACHE_DIR", cache.path())
        .env_remove("PERFSCAPE_CACHE_MAX_BYTES")
        .args(args)
        .output()
        .unwrap()
}

/// The standard output of a run, as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

/// The standard error of a run, as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}
