//! The Python package: the extension module this crate builds, with `python/perfscape/`, is
//! imported by a Python with pyarrow and pandas (`$PERFSCAPE_PYTHON`; `scripts/test.sh` makes
//! one in the user's cache), which runs `python/tests/check_package.py`: every table of three
//! corpus runs held to the pandas reference answers (`scripts/ref/pandas_tables.py`) the SQL
//! tests use, SQL through Python equal to the same, a store made here queried from Python, and
//! the errors.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use perfscape_formats::{OpenOptions, Parts};
use perfscape_sql::RunSet;
use perfscape_sql::store::Store;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

fn manifest_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The shared corpus of real files: `$PERFSCAPE_CORPUS`, else `../shared/corpus` beside the
/// repository. Read only.
fn corpus() -> PathBuf {
    let p = std::env::var_os("PERFSCAPE_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest_dir().join("../../shared/corpus"));
    assert!(p.is_dir(), "the shared corpus is expected at {}", p.display());
    p
}

/// The extension module cargo built beside this test (`target/<profile>/lib_perfscape.so`).
fn extension_module() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    let candidates = [
        deps.join("lib_perfscape.so"),
        deps.parent().unwrap().join("lib_perfscape.so"),
    ];
    candidates
        .iter()
        .find(|p| p.is_file())
        .cloned()
        .unwrap_or_else(|| panic!("the extension module is expected at one of {candidates:?}"))
}

/// The Python with pyarrow and pandas: `$PERFSCAPE_PYTHON`.
fn python() -> PathBuf {
    match std::env::var_os("PERFSCAPE_PYTHON").map(PathBuf::from) {
        Some(p) if p.exists() => p,
        _ => panic!(
            "PERFSCAPE_PYTHON must name a Python with pyarrow and pandas: bash scripts/test.sh makes one"
        ),
    }
}

#[test]
fn the_package_gives_the_reference_tables_and_answers() {
    let work = tempfile::tempdir().unwrap();
    // The package as `pip install ./python` lays it out: the Python code and the module.
    let pkg = work.path().join("site/perfscape");
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::copy(
        manifest_dir().join("perfscape/__init__.py"),
        pkg.join("__init__.py"),
    )
    .unwrap();
    std::fs::copy(extension_module(), pkg.join("_perfscape.abi3.so")).unwrap();

    // A store of one run, for `perfscape.sql(perfscape.Store(...), ...)`.
    let corpus = corpus();
    let np64 = corpus.join("tau-real/mpi-stencil-np64-callpath-commmatrix");
    let opened = perfscape_formats::open(
        &np64,
        &OpenOptions {
            parts: Parts::ALL,
            ..OpenOptions::default()
        },
    )
    .unwrap();
    let mut set = RunSet::new();
    set.add_tagged(
        &np64.display().to_string(),
        "tau",
        vec![("case".into(), "np64".into())],
        Arc::new(opened),
    );
    let store = work.path().join("store");
    Store::new(&store).add(&set).unwrap();

    let out = Command::new(python())
        .arg(manifest_dir().join("tests/check_package.py"))
        .arg(&corpus)
        .arg(&store)
        .arg(manifest_dir().join("../scripts/ref"))
        .arg(manifest_dir().join("../crates/perfscape-sql/tests/fixtures/pandas_tables.json"))
        .env("PYTHONPATH", work.path().join("site"))
        .env("PERFSCAPE_CACHE_DIR", work.path().join("cache"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "check_package.py failed:\n{stdout}\n{stderr}"
    );
    // The script says what it checked; a run that checked nothing is a failure.
    assert!(stdout.contains("checked 9 tables"), "{stdout}\n{stderr}");
}
