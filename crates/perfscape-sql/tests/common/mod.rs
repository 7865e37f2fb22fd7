//! Helpers shared by the SQL tests.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use perfscape_formats::{OpenOptions, Opened, Parts, open};
use perfscape_sql::arrow::array::{Array, AsArray};
use perfscape_sql::arrow::datatypes::{Float64Type, Int64Type, UInt32Type, UInt64Type};
use perfscape_sql::{QueryLimits, QueryResult, RunSet, SqlSession};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The shared corpus of real files: `$PERFSCAPE_CORPUS`, else `../shared/corpus` beside the
/// repository. Read only.
pub fn corpus() -> PathBuf {
    let p = std::env::var_os("PERFSCAPE_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"));
    assert!(p.is_dir(), "the shared corpus is expected at {}", p.display());
    p
}

/// The run at `path` (relative to the corpus) with its samples and trace, loaded whole.
pub fn load(run: &str) -> Opened {
    let opts = OpenOptions {
        parts: Parts {
            series: true,
            trace: true,
        },
        ..OpenOptions::default()
    };
    let o = open(&corpus().join(run), &opts).unwrap();
    assert!(!o.report.is_partial(), "{run}");
    o
}

/// A session over the corpus runs `runs`.
pub fn session(runs: &[&str]) -> SqlSession {
    let mut set = RunSet::new();
    for r in runs {
        let o = load(r);
        let format = o.report.format;
        set.add(r, format, Arc::new(o));
    }
    SqlSession::new(&set, QueryLimits::default()).unwrap()
}

/// The result's column `name` as numbers (NULL as NaN).
pub fn column_f64(r: &QueryResult, name: &str) -> Vec<f64> {
    let i = r.schema.index_of(name).unwrap();
    let mut out = Vec::new();
    for b in &r.batches {
        let a = b.column(i);
        let n = a.len();
        for k in 0..n {
            out.push(if a.is_null(k) {
                f64::NAN
            } else if let Some(x) = a.as_primitive_opt::<Float64Type>() {
                x.value(k)
            } else if let Some(x) = a.as_primitive_opt::<UInt32Type>() {
                f64::from(x.value(k))
            } else if let Some(x) = a.as_primitive_opt::<UInt64Type>() {
                x.value(k) as f64
            } else if let Some(x) = a.as_primitive_opt::<Int64Type>() {
                x.value(k) as f64
            } else {
                panic!("column {name} is not numeric")
            });
        }
    }
    out
}

/// The result's column `name` as text.
pub fn column_str(r: &QueryResult, name: &str) -> Vec<String> {
    let i = r.schema.index_of(name).unwrap();
    let mut out = Vec::new();
    for b in &r.batches {
        let a = b.column(i);
        let s =
            perfscape_sql::arrow::compute::cast(a, &perfscape_sql::arrow::datatypes::DataType::Utf8).unwrap();
        let s = s.as_string::<i32>();
        out.extend((0..s.len()).map(|k| s.value(k).to_string()));
    }
    out
}

/// True when `a` and `b` agree to 1e-9 relative (sums in another order differ in the last bits).
pub fn close(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1e-300)
}
