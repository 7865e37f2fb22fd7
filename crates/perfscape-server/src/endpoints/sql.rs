//! `POST /api/sql`: one read-only SQL query over the served runs' tables (TABLES.md): the
//! main run is `run` 0, the runs served beside it for comparison 1, 2, ...; or, with
//! `"over": "store"`, over every run of the store served with `serve --store DIR`, which
//! `GET /api/store` lists.

use crate::error::ApiError;
use crate::state::AppState;
use perfscape_model::{Profile, SampleSeries, Trace};
use perfscape_sql::arrow::array::{Array, AsArray};
use perfscape_sql::arrow::datatypes::{DataType, Float64Type, Int64Type, UInt32Type, UInt64Type};
use perfscape_sql::arrow::util::display::{ArrayFormatter, FormatOptions};
use perfscape_sql::{QueryLimits, RunData, RunSet, SqlError, SqlSession};
use serde::{Deserialize, Serialize};
use std::ops::Deref;
use std::sync::Arc;
use std::time::{Duration, Instant};
use ts_rs::TS;

/// Rows an answer carries at most; `truncated` says when there were more.
pub const MAX_ROWS: usize = 10_000;

/// Limits of a served query: 30 s, 1 GiB for the engine's operators, [`MAX_ROWS`] rows.
pub const LIMITS: QueryLimits = QueryLimits {
    time: Duration::from_secs(30),
    memory_bytes: 1 << 30,
    max_rows: Some(MAX_ROWS),
};

/// The body of `POST /api/sql` (JSON).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct SqlRequest {
    /// One read-only statement: `SELECT`, `WITH`, `VALUES`, `EXPLAIN`, `DESCRIBE`, `SHOW`.
    pub query: String,
    /// What the tables hold: the served runs (default) or the runs of the served store.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub over: Option<SqlOver>,
    /// Values of the query's placeholders (`$event`, `$thread`, `$sample`, `$metric`, `$run`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub params: Option<SqlParams>,
}

/// Values of a query's placeholders, from the page's selection: `$event` (an event id, the
/// `event` column), `$thread` (a thread as `N.C.T`, bound as its `thread` number), `$sample`,
/// `$metric` and `$run` (numbers). An absent or `null` value binds SQL NULL.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(deny_unknown_fields)]
#[ts(export)]
pub struct SqlParams {
    /// `$event`: an event id of run 0.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub event: Option<u32>,
    /// `$thread`: a thread of run 0 as `N.C.T` (bound as its number in `threads`).
    #[serde(default)]
    #[ts(optional = nullable)]
    pub thread: Option<String>,
    /// `$sample`: a sample number.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub sample: Option<u32>,
    /// `$metric`: a metric id.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub metric: Option<u32>,
    /// `$run`: the run compared with run 0 (`serve A B C`: the compare panel's B, 1 for B, 2
    /// for C, as the `run` column numbers them); the page sends `null` when it serves one run.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub run: Option<u32>,
}

impl SqlParams {
    /// The bindings of the five placeholders; a thread is found in `profile` (its index).
    ///
    /// # Errors
    /// 400 for a thread that is not `N.C.T` or not in the run.
    fn bindings(&self, profile: Option<&Profile>) -> Result<[(&'static str, Option<u32>); 5], ApiError> {
        let thread = match &self.thread {
            None => None,
            Some(t) => {
                let id: perfscape_model::ThreadId = t
                    .parse()
                    .map_err(|_| ApiError::bad(format!("params.thread `{t}`: expected a thread as N.C.T")))?;
                let index = profile.and_then(|p| p.thread_index(id)).ok_or_else(|| {
                    ApiError::bad(format!("params.thread `{t}`: no such thread in the run"))
                })?;
                Some(index.0)
            }
        };
        Ok([
            ("event", self.event),
            ("thread", thread),
            ("sample", self.sample),
            ("metric", self.metric),
            ("run", self.run),
        ])
    }
}

/// The runs a query reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
#[ts(export)]
pub enum SqlOver {
    /// The served run (`run` 0) and the runs compared with it (1, 2, ...).
    #[default]
    Runs,
    /// Every run of the store given with `serve --store DIR` (their store numbers).
    Store,
}

/// One run of the served store (`GET /api/store`).
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export)]
pub struct StoreRunInfo {
    /// Its number in the store: the `run` column of `"over": "store"` queries.
    pub run: u32,
    /// Its name (the last component of its source path).
    pub name: String,
    /// Where it was read from when it was added.
    pub source: String,
    /// The format it was read as.
    pub format: String,
    /// Its tags (`store add --tag key=value`), by key.
    pub tags: std::collections::BTreeMap<String, String>,
    /// Its threads.
    #[ts(type = "number")]
    pub threads: u64,
    /// When it was added, seconds since 1970-01-01 UTC.
    #[ts(type = "number")]
    pub added_unix_s: u64,
}

/// `GET /api/store`: the served store and its runs, oldest first.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export)]
pub struct StoreListing {
    /// The store's directory.
    pub dir: String,
    /// Its runs.
    pub runs: Vec<StoreRunInfo>,
}

/// The served store's runs.
///
/// # Errors
/// 404 when the server has no store, 503 naming the catalog when it cannot be read.
pub fn store(state: &AppState) -> Result<StoreListing, ApiError> {
    let dir = state.store.as_ref().ok_or_else(|| {
        ApiError::not_found("this server has no store of runs: perfscape serve RUN --store DIR")
    })?;
    let catalog = perfscape_sql::store::Store::new(dir)
        .catalog()
        .map_err(|e| ApiError::unavailable(e.to_string()))?;
    Ok(StoreListing {
        dir: dir.display().to_string(),
        runs: catalog
            .runs
            .into_iter()
            .map(|r| StoreRunInfo {
                run: r.run,
                name: r.name,
                source: r.source,
                format: r.format,
                tags: r.tags,
                threads: r.threads,
                added_unix_s: r.added_unix_s,
            })
            .collect(),
    })
}

/// A column of an answer.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export)]
pub struct SqlColumn {
    /// Its name.
    pub name: String,
    /// Its Arrow type (`UInt32`, `Float64`, `Utf8`, ...).
    pub data_type: String,
}

/// The answer of `POST /api/sql`.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export)]
pub struct SqlAnswer {
    /// The result's columns.
    pub columns: Vec<SqlColumn>,
    /// The rows, one array per row in column order: numbers as JSON numbers (NaN and
    /// infinities as `null`, integers beyond 2^53 as text), NULL as `null`, other values as
    /// text.
    #[ts(type = "Array<Array<number | string | boolean | null>>")]
    pub rows: Vec<Vec<serde_json::Value>>,
    /// True when the result had more than [`MAX_ROWS`] rows; the first are given.
    pub truncated: bool,
    /// Time the query took, milliseconds.
    pub elapsed_ms: f64,
}

/// A served run as the tables read it.
enum Served {
    Main(Arc<AppState>),
    /// A live run: its newest sample's profile, and its samples so far.
    Live(Arc<AppState>, Arc<Profile>),
    Compared(Arc<AppState>, usize),
}

impl RunData for Served {
    fn profile(&self) -> &Profile {
        match self {
            Served::Main(s) => s.run.as_ref().map(|r| &r.profile).unwrap_or_else(|_| empty()),
            Served::Live(_, p) => p,
            Served::Compared(s, i) => s.compared[*i]
                .run
                .as_ref()
                .map(|r| &r.profile)
                .unwrap_or_else(|_| empty()),
        }
    }
    fn series(&self) -> Option<Box<dyn Deref<Target = SampleSeries> + '_>> {
        match self {
            Served::Main(s) | Served::Live(s, _) => s.series.series().map(|x| x.read()),
            Served::Compared(..) => None,
        }
    }
    fn trace(&self) -> Option<&Trace> {
        match self {
            Served::Main(s) => s.trace.as_ref().map(|t| t.trace()),
            Served::Live(..) | Served::Compared(..) => None,
        }
    }
}

/// An empty profile, for a run that did not load (it is then not in the set).
fn empty() -> &'static Profile {
    static EMPTY: std::sync::OnceLock<Profile> = std::sync::OnceLock::new();
    EMPTY.get_or_init(|| perfscape_model::ProfileBuilder::new(Vec::new()).finish().0)
}

/// Runs `q` over the state's runs (blocking: call it on the blocking pool).
pub fn query(state: &Arc<AppState>, q: &SqlRequest) -> Result<SqlAnswer, ApiError> {
    let session = match q.over.unwrap_or_default() {
        SqlOver::Runs => runs_session(state)?,
        SqlOver::Store => {
            let dir = state.store.as_ref().ok_or_else(|| {
                ApiError::bad(
                    "\"over\": \"store\": this server has no store of runs (perfscape serve RUN --store DIR)",
                )
            })?;
            perfscape_sql::store::Store::new(dir)
                .session(LIMITS)
                .map_err(|e| ApiError::unavailable(e.to_string()))?
        }
    };
    let live = live_profile(state);
    let params = match &q.params {
        None => Vec::new(),
        Some(p) => {
            let profile = state.run.as_ref().ok().map(|r| &r.profile).or(live.as_deref());
            p.bindings(profile)?.to_vec()
        }
    };
    answer(&session, &q.query, &params)
}

/// A live run's newest sample's profile (None before its first sample, or for a run that is
/// not live).
fn live_profile(state: &AppState) -> Option<Arc<Profile>> {
    if state.run.is_ok() {
        return None;
    }
    match state
        .series
        .pick(&state.cache, crate::request::At::default(), None)
    {
        Ok(crate::series::Picked::Sample(p, _)) => Some(p),
        _ => None,
    }
}

/// A session over the served runs (a live run: its newest sample and its samples so far).
fn runs_session(state: &Arc<AppState>) -> Result<SqlSession, ApiError> {
    let mut set = RunSet::new();
    let _main = match (&state.run, live_profile(state)) {
        (Ok(main), _) => set.add(
            &state.path,
            main.report.format,
            Arc::new(Served::Main(state.clone())),
        ),
        (Err(_), Some(p)) => set.add(
            &state.path,
            state.live_format,
            Arc::new(Served::Live(state.clone(), p)),
        ),
        (Err(e), None) => {
            return Err(ApiError::unavailable(format!(
                "the run did not load, so there is nothing to query: {e}"
            )));
        }
    };
    for (i, c) in state.compared.iter().enumerate() {
        if let Ok(r) = &c.run {
            set.add(
                &c.path,
                r.report.format,
                Arc::new(Served::Compared(state.clone(), i)),
            );
        }
    }
    SqlSession::new(&set, LIMITS).map_err(|e| ApiError::internal(e.to_string()))
}

/// Runs `query` in `session` and turns the result into JSON rows.
fn answer(session: &SqlSession, query: &str, params: &[(&str, Option<u32>)]) -> Result<SqlAnswer, ApiError> {
    let start = Instant::now();
    let result = session
        .query_blocking_with_params(query, params)
        .map_err(|e| match e {
            SqlError::TimeLimit { .. } | SqlError::MemoryLimit { .. } => ApiError {
                status: 422,
                message: e.to_string(),
            },
            SqlError::Execution(_) => ApiError {
                status: 422,
                message: e.to_string(),
            },
            other => ApiError::bad(other.to_string()),
        })?;
    let elapsed_ms = start.elapsed().as_secs_f64() * 1e3;
    let columns = result
        .schema
        .fields()
        .iter()
        .map(|f| SqlColumn {
            name: f.name().clone(),
            data_type: f.data_type().to_string(),
        })
        .collect();
    let mut rows = Vec::with_capacity(result.rows);
    let options = FormatOptions::default();
    for b in &result.batches {
        let cells: Vec<Vec<serde_json::Value>> = b
            .columns()
            .iter()
            .map(|c| json_cells(c.as_ref(), &options))
            .collect();
        for r in 0..b.num_rows() {
            rows.push(cells.iter().map(|c| c[r].clone()).collect());
        }
    }
    Ok(SqlAnswer {
        columns,
        rows,
        truncated: result.truncated,
        elapsed_ms,
    })
}

/// One column's cells as JSON values.
fn json_cells(a: &dyn Array, options: &FormatOptions) -> Vec<serde_json::Value> {
    use serde_json::Value;
    let n = a.len();
    let num = |x: f64| serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number);
    let big = |x: u64| {
        if x <= (1u64 << 53) {
            Value::from(x)
        } else {
            Value::String(x.to_string())
        }
    };
    let mut out = Vec::with_capacity(n);
    match a.data_type() {
        DataType::Float64 => out.extend(
            a.as_primitive::<Float64Type>()
                .iter()
                .map(|v| v.map_or(Value::Null, num)),
        ),
        DataType::UInt32 => out.extend(
            a.as_primitive::<UInt32Type>()
                .iter()
                .map(|v| v.map_or(Value::Null, Value::from)),
        ),
        DataType::UInt64 => out.extend(
            a.as_primitive::<UInt64Type>()
                .iter()
                .map(|v| v.map_or(Value::Null, big)),
        ),
        DataType::Int64 => out.extend(a.as_primitive::<Int64Type>().iter().map(|v| {
            v.map_or(Value::Null, |x| {
                if x.unsigned_abs() <= (1u64 << 53) {
                    Value::from(x)
                } else {
                    Value::String(x.to_string())
                }
            })
        })),
        DataType::Boolean => out.extend(a.as_boolean().iter().map(|v| v.map_or(Value::Null, Value::Bool))),
        _ => match ArrayFormatter::try_new(a, options) {
            Ok(f) => out.extend((0..n).map(|i| {
                if a.is_null(i) {
                    Value::Null
                } else {
                    Value::String(f.value(i).to_string())
                }
            })),
            Err(_) => out.resize(n, Value::Null),
        },
    }
    out
}
