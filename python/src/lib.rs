//! `perfscape._perfscape`: the native part of the Python package `perfscape` (`python/`).
//!
//! Opens runs with [`perfscape_formats::open`] (the one way the command line and the server
//! open a run, every format) and hands their tables ([`perfscape_sql::Table`], documented in
//! `TABLES.md`) and the answers of SQL queries ([`perfscape_sql::SqlSession`]) to Python as
//! Arrow streams: objects with `__arrow_c_stream__` (the Arrow PyCapsule interface,
//! <https://arrow.apache.org/docs/format/CDataInterface/PyCapsuleInterface.html>), which
//! `pyarrow.RecordBatchReader.from_stream` imports without copying the batches. The Python
//! code in `python/perfscape/__init__.py` turns them into `pyarrow.Table`s.
//!
//! The interpreter lock is released while a run loads and while a query runs.

use perfscape_formats::{CacheMode, OpenOptions, Opened, Parts};
use perfscape_sql::arrow::datatypes::SchemaRef;
use perfscape_sql::arrow::ffi_stream::FFI_ArrowArrayStream;
use perfscape_sql::arrow::record_batch::{RecordBatchIterator, RecordBatchReader};
use perfscape_sql::{QueryLimits, RunEntry, RunSet, SqlError, SqlSession, Table, TableReader};
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

pyo3::create_exception!(
    _perfscape,
    PerfscapeError,
    PyException,
    "A run that cannot be opened, a table that does not exist, or a query that is refused, does not parse or fails; the message says which and where."
);

fn error(e: impl std::fmt::Display) -> PyErr {
    PerfscapeError::new_err(e.to_string())
}

/// The name pyarrow looks for on the capsule of an `ArrowArrayStream`.
const STREAM_CAPSULE: &std::ffi::CStr = c"arrow_array_stream";

/// A stream of Arrow record batches, readable once through `__arrow_c_stream__`.
#[pyclass(module = "perfscape._perfscape", frozen)]
pub struct ArrowStream {
    reader: Mutex<Option<Box<dyn RecordBatchReader + Send>>>,
    schema: SchemaRef,
}

impl ArrowStream {
    fn new(reader: Box<dyn RecordBatchReader + Send>) -> ArrowStream {
        ArrowStream {
            schema: reader.schema(),
            reader: Mutex::new(Some(reader)),
        }
    }
}

#[pymethods]
impl ArrowStream {
    /// The stream as a PyCapsule named `arrow_array_stream` holding an `ArrowArrayStream`
    /// (the Arrow C stream interface). `requested_schema` is not supported (the batches come
    /// in the table's own schema) and must be `None`.
    ///
    /// # Errors
    /// When the stream was already taken, or a schema is requested.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        if requested_schema.is_some_and(|s| !s.is_none()) {
            return Err(error(
                "perfscape's streams come in their own schema: requested_schema is not supported",
            ));
        }
        let reader = self
            .reader
            .lock()
            .map_err(|_| error("the stream's lock is poisoned"))?
            .take()
            .ok_or_else(|| error("this stream was already read (a stream is read once)"))?;
        let stream = FFI_ArrowArrayStream::new(reader);
        // pyarrow moves the struct out and marks it released; if it never does, dropping the
        // capsule's value releases the stream.
        PyCapsule::new_with_value(py, stream, STREAM_CAPSULE)
    }

    /// The names of the stream's columns.
    #[getter]
    fn column_names(&self) -> Vec<String> {
        self.schema.fields().iter().map(|f| f.name().clone()).collect()
    }
}

/// A session's answer as a stream.
fn answer(result: perfscape_sql::QueryResult) -> ArrowStream {
    let schema = result.schema.clone();
    let batches = result.batches.into_iter().map(Ok);
    ArrowStream::new(Box::new(RecordBatchIterator::new(batches, schema)))
}

/// Limits of a query from Python: the command line's (10 minutes, 4 GiB of operator memory,
/// every row), which the caller can interrupt.
fn limits() -> QueryLimits {
    QueryLimits::default()
}

/// The table called `name`, or an error listing the tables.
fn table_named(name: &str) -> PyResult<Table> {
    Table::by_name(name).ok_or_else(|| {
        let known: Vec<&str> = Table::ALL.iter().map(|t| t.name()).collect();
        error(format!("no table `{name}`; the tables are {}", known.join(", ")))
    })
}

/// The stream of the table `name` over every run of `set`.
fn table_stream(set: &RunSet, name: &str) -> PyResult<ArrowStream> {
    let reader = TableReader::new(set, table_named(name)?).map_err(error)?;
    Ok(ArrowStream::new(Box::new(reader)))
}

/// The answer of `query` over the tables of `set`, computed without the interpreter lock.
fn query_set(py: Python<'_>, set: &RunSet, query: &str) -> PyResult<ArrowStream> {
    let result = py.detach(|| SqlSession::new(set, limits())?.query_blocking(query));
    result.map(answer).map_err(error)
}

/// One opened run: its tables and SQL over them.
#[pyclass(module = "perfscape._perfscape", frozen)]
pub struct Run {
    /// The run, alone in its set (run 0).
    set: RunSet,
    problems: Vec<String>,
    partial: bool,
}

impl Run {
    /// The run's entry (its source, format and data).
    fn entry(&self) -> &RunEntry {
        &self.set.runs()[0]
    }
}

/// The load report's problems as lines, bad files first.
fn problems(opened: &Opened) -> Vec<String> {
    let r = &opened.report;
    let mut lines: Vec<String> = r.bad_files.iter().map(|f| format!("not loaded: {f}")).collect();
    lines.extend(r.partial_files.iter().map(|f| format!("loaded in part: {f}")));
    lines.extend(r.warnings.iter().map(|f| format!("warning: {f}")));
    lines
}

#[pymethods]
impl Run {
    /// Where the run was read from.
    #[getter]
    fn path(&self) -> &str {
        &self.entry().source
    }

    /// The name of the format it was read as (`perfscape formats` lists them).
    #[getter]
    fn format(&self) -> &str {
        &self.entry().format
    }

    /// What did not load, loaded in part, or loaded with a warning, one line each (empty
    /// when everything loaded).
    #[getter]
    fn problems(&self) -> Vec<String> {
        self.problems.clone()
    }

    /// True when some file of the run did not load or loaded only in part.
    #[getter]
    fn partial(&self) -> bool {
        self.partial
    }

    /// Every row of the table `name` (see `TABLES.md`) as a stream of Arrow batches, built
    /// while it is read.
    ///
    /// # Errors
    /// When `name` is not a table.
    fn table(&self, name: &str) -> PyResult<ArrowStream> {
        table_stream(&self.set, name)
    }

    /// The answer of a read-only SQL query over this run's tables.
    ///
    /// # Errors
    /// The query is refused, does not parse (the message gives the line and column), or
    /// fails.
    fn sql(&self, py: Python<'_>, query: &str) -> PyResult<ArrowStream> {
        query_set(py, &self.set, query)
    }

    fn __repr__(&self) -> String {
        format!("perfscape.Run({:?}, format={:?})", self.path(), self.format())
    }
}

/// Opens the run at `path` (a file or a directory of any format perfscape reads), detecting
/// its format unless `format` names one, with its samples over time and its trace when it
/// has them. With `cache` (the default), parsed profiles are cached in the user's cache
/// directory (`$PERFSCAPE_CACHE_DIR`, else e.g. `~/.cache/perfscape`), as the command line does.
///
/// # Errors
/// When the path cannot be read, its format is not recognized, or no file of it loads. A run
/// where only some files are bad opens, with them in `problems`.
#[pyfunction]
#[pyo3(signature = (path, format=None, cache=true))]
fn open(py: Python<'_>, path: PathBuf, format: Option<&str>, cache: bool) -> PyResult<Run> {
    let format = format
        .map(perfscape_formats::registry::named_or_err)
        .transpose()
        .map_err(error)?;
    let opened = py.detach(|| {
        let opts = OpenOptions {
            format,
            parts: Parts::ALL,
            cache: if cache {
                CacheMode::ReadWrite
            } else {
                CacheMode::Off
            },
            ..OpenOptions::default()
        };
        perfscape_formats::open(&path, &opts)
    });
    let opened = opened.map_err(|e| error(format!("cannot open {}: {e}", path.display())))?;
    let partial = opened.report.is_partial();
    let problems = problems(&opened);
    let mut set = RunSet::new();
    set.add(
        &path.display().to_string(),
        opened.report.format,
        Arc::new(opened),
    );
    Ok(Run {
        set,
        problems,
        partial,
    })
}

/// Several opened runs as one set, numbered 0, 1, … (the `run` column) in the order given.
fn run_set(runs: &[PyRef<'_, Run>]) -> RunSet {
    let mut set = RunSet::new();
    for r in runs {
        let entry = r.entry();
        set.add(&entry.source, &entry.format, entry.data.clone());
    }
    set
}

/// The table `name` over several opened runs together (numbered 0, 1, … in the `run`
/// column, in the order given).
///
/// # Errors
/// As [`Run::table`].
#[pyfunction]
fn table_runs(runs: Vec<PyRef<'_, Run>>, name: &str) -> PyResult<ArrowStream> {
    table_stream(&run_set(&runs), name)
}

/// The answer of a read-only SQL query over the tables of several opened runs together
/// (numbered 0, 1, … in the `run` column, in the order given).
///
/// # Errors
/// As [`Run::sql`].
#[pyfunction]
fn sql_runs(py: Python<'_>, runs: Vec<PyRef<'_, Run>>, query: &str) -> PyResult<ArrowStream> {
    query_set(py, &run_set(&runs), query)
}

/// The answer of a read-only SQL query over every run of the store in `dir` (made with
/// `perfscape store add`).
///
/// # Errors
/// When the store's catalog cannot be read, and as [`Run::sql`].
#[pyfunction]
fn sql_store(py: Python<'_>, dir: PathBuf, query: &str) -> PyResult<ArrowStream> {
    let result = py.detach(|| -> Result<_, SqlError> {
        perfscape_sql::store::Store::new(dir)
            .session(limits())?
            .query_blocking(query)
    });
    result.map(answer).map_err(error)
}

/// The names of the tables, in `TABLES.md`'s order.
#[pyfunction]
fn tables() -> Vec<&'static str> {
    Table::ALL.iter().map(|t| t.name()).collect()
}

/// The module `perfscape._perfscape`.
#[pymodule]
fn _perfscape(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Run>()?;
    m.add_class::<ArrowStream>()?;
    m.add_function(wrap_pyfunction!(open, m)?)?;
    m.add_function(wrap_pyfunction!(sql_runs, m)?)?;
    m.add_function(wrap_pyfunction!(table_runs, m)?)?;
    m.add_function(wrap_pyfunction!(sql_store, m)?)?;
    m.add_function(wrap_pyfunction!(tables, m)?)?;
    m.add("PerfscapeError", m.py().get_type::<PerfscapeError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
