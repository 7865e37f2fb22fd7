//! Helpers shared by the analysis tests (each test binary uses some of them).

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use perfscape_formats::{OpenOptions, open};
use perfscape_model::Profile;
use std::path::{Path, PathBuf};

/// The shared corpus of real files: `$PERFSCAPE_CORPUS`, else `../shared/corpus` beside the
/// repository. Read only.
pub fn corpus() -> PathBuf {
    let p = std::env::var_os("PERFSCAPE_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"));
    assert!(p.is_dir(), "the shared corpus is expected at {}", p.display());
    p
}

/// The profile of the corpus run at `run` (relative to the corpus), which must load whole.
pub fn load(run: &str) -> Profile {
    let o = open(&corpus().join(run), &OpenOptions::default()).unwrap();
    assert!(!o.report.is_partial(), "{run}");
    o.profile
}

/// A committed reference table or fixture under `tests/fixtures/`.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}
