//! One query per table over runs in memory equals pandas computing it from the Parquet that
//! `perfscape export` wrote of the same runs (`scripts/ref/pandas_tables.py` made the fixture);
//! and an export read back by DataFusion gives the same tables.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{close, column_f64, column_str, session};
use perfscape_sql::Table;
use perfscape_sql::arrow::datatypes::DataType;
use perfscape_sql::export::{ExportFormat, export};

const RUNS: [&str; 3] = [
    "tau-real/mpi-stencil-np64-callpath-commmatrix",
    "tau-real/mpi-stencil-np8-snapshot",
    "chrome-trace/hta-pytorch-kineto-2rank/sampled_rank-0.json.gz",
];

#[test]
fn every_table_equals_pandas_on_the_export() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pandas_tables.json");
    let fixture: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let s = session(&RUNS);
    for t in Table::ALL {
        if t == Table::Tags {
            // Runs given on the command line have no tags (tests/store.rs checks them).
            assert_eq!(s.query_blocking("SELECT * FROM tags").unwrap().rows, 0);
            continue;
        }
        let entry = &fixture[t.name()];
        let sql = entry["sql"].as_str().unwrap();
        let want = entry["rows"].as_array().unwrap();
        let r = s.query_blocking(sql).unwrap();
        assert_eq!(r.rows, want.len(), "{}: rows of {sql}", t.name());
        assert!(!want.is_empty(), "{}: the fixture checks something", t.name());
        for (c, field) in r.schema.fields().iter().enumerate() {
            let numeric = field.data_type().is_numeric();
            let (nums, texts) = if numeric {
                (column_f64(&r, field.name()), Vec::new())
            } else {
                (Vec::new(), column_str(&r, field.name()))
            };
            for (k, row) in want.iter().enumerate() {
                let w = &row[c];
                let what = format!("{} row {k} column {}", t.name(), field.name());
                if numeric {
                    let wv = w.as_f64().unwrap_or(f64::NAN);
                    assert!(close(nums[k], wv), "{what}: {} vs pandas {wv}", nums[k]);
                } else if let Some(b) = w.as_bool() {
                    assert_eq!(texts[k], b.to_string(), "{what}");
                } else {
                    assert_eq!(texts[k], w.as_str().unwrap_or("").to_string(), "{what}");
                }
            }
        }
    }
}

#[test]
fn parquet_export_reads_back_as_the_same_tables() {
    let s = session(&RUNS);
    let mut set = perfscape_sql::RunSet::new();
    for r in RUNS {
        let o = common::load(r);
        let f = o.report.format;
        set.add(r, f, std::sync::Arc::new(o));
    }
    let dir = tempfile::tempdir().unwrap();
    let written = export(&set, dir.path(), ExportFormat::Parquet).unwrap();
    assert!(written.iter().all(|w| w.bytes > 0 && w.rows > 0));
    let rt = tokio::runtime::Runtime::new().unwrap();
    let ctx = perfscape_sql::datafusion::prelude::SessionContext::new();
    for t in Table::ALL {
        if !written.iter().any(|w| w.table == t.name()) {
            // Not written because empty (the runs have no tags).
            assert_eq!(
                s.query_blocking(&format!("SELECT * FROM {}", t.name()))
                    .unwrap()
                    .rows,
                0,
                "{}",
                t.name()
            );
            continue;
        }
        let opts = perfscape_sql::datafusion::prelude::ParquetReadOptions::default()
            .table_partition_cols(vec![("run".to_string(), DataType::UInt32)]);
        let loc = format!("{}/{}/", dir.path().display(), t.name());
        rt.block_on(ctx.register_parquet(t.name(), &loc, opts)).unwrap();
        let cols: Vec<String> = t
            .schema()
            .fields()
            .iter()
            .map(|f| format!("\"{}\"", f.name()))
            .collect();
        let q = format!(
            "SELECT {} FROM {} ORDER BY {}",
            cols.join(", "),
            t.name(),
            cols.join(", ")
        );
        let back = rt.block_on(async { ctx.sql(&q).await?.collect().await }).unwrap();
        let mine = s.query_blocking(&q).unwrap();
        let back_rows: usize = back.iter().map(|b| b.num_rows()).sum();
        assert_eq!(back_rows, mine.rows, "{}", t.name());
        let a = perfscape_sql::arrow::util::pretty::pretty_format_batches(&back)
            .unwrap()
            .to_string();
        let b = perfscape_sql::arrow::util::pretty::pretty_format_batches(&mine.batches)
            .unwrap()
            .to_string();
        assert!(a == b, "{}: the Parquet read back differs", t.name());
    }
    // CSV and JSON lines: every row, with a header line in CSV.
    for (format, ext) in [(ExportFormat::Csv, "csv"), (ExportFormat::Json, "json")] {
        let d = tempfile::tempdir().unwrap();
        let written = export(&set, d.path(), format).unwrap();
        for w in &written {
            let text = std::fs::read_to_string(&w.path).unwrap();
            let lines = text.lines().count() as u64;
            let header = u64::from(ext == "csv");
            assert_eq!(lines, w.rows + header, "{}", w.path.display());
        }
    }
}
