//! Building Arrow batches from the model's columns, for the projected columns only.
//!
//! A table's rows come in *units*: one per row for the small tables (runs, threads, metrics,
//! events), one per run for `metadata`, one per event for `event_values` (its threads × metrics), one
//! per user event, one per timer for `samples`, one per thread lane for `intervals`.
//! [`append`] adds a unit's rows to [`Columns`]; the scan emits a batch once it holds
//! [`BATCH_ROWS`] rows.

use crate::run::RunEntry;
use crate::table::Table;
use datafusion::arrow::array::builder::NullBufferBuilder;
use datafusion::arrow::array::{
    ArrayRef, BooleanArray, Float64Array, Int64Array, StringBuilder, UInt32Array, UInt64Array,
};
use datafusion::arrow::datatypes::{DataType, SchemaRef};
use datafusion::arrow::error::ArrowError;
use datafusion::arrow::record_batch::RecordBatch;
use perfscape_model::{AtomicEventId, EventId, MetricId, SampleId, ThreadIndex, ValueKind};
use std::sync::Arc;

/// Rows after which a table scan emits a batch: a batch holds the units appended until it
/// reached this many rows, so it can be larger by one unit (one event's threads × metrics).
pub const BATCH_ROWS: usize = 65_536;

/// One column being built.
enum Buf {
    /// Values, and the validity only once a null was appended (most u32 columns have none).
    U32(Vec<u32>, NullBufferBuilder),
    U64(Vec<u64>),
    I64(Vec<i64>),
    /// Values, and the validity only once a null was appended (a cell without a value).
    F64(Vec<f64>, NullBufferBuilder),
    Bool(Vec<bool>),
    Str(StringBuilder),
}

impl Buf {
    fn new(t: &DataType) -> Buf {
        match t {
            DataType::UInt32 => Buf::U32(Vec::new(), NullBufferBuilder::new(0)),
            DataType::UInt64 => Buf::U64(Vec::new()),
            DataType::Int64 => Buf::I64(Vec::new()),
            DataType::Float64 => Buf::F64(Vec::new(), NullBufferBuilder::new(0)),
            DataType::Boolean => Buf::Bool(Vec::new()),
            _ => Buf::Str(StringBuilder::new()),
        }
    }

    fn finish(&mut self) -> ArrayRef {
        match self {
            Buf::U32(v, nulls) => Arc::new(UInt32Array::new(std::mem::take(v).into(), nulls.finish())),
            Buf::U64(v) => Arc::new(UInt64Array::from(std::mem::take(v))),
            Buf::I64(v) => Arc::new(Int64Array::from(std::mem::take(v))),
            Buf::F64(v, nulls) => Arc::new(Float64Array::new(std::mem::take(v).into(), nulls.finish())),
            Buf::Bool(v) => Arc::new(BooleanArray::from(std::mem::take(v))),
            Buf::Str(b) => Arc::new(b.finish()),
        }
    }

    // Appenders: a call of the wrong type appends nothing, and the batch is then refused by
    // `RecordBatch::try_new` (columns of unequal length), never silently wrong.
    fn u32(&mut self, v: u32) {
        self.opt_u32(Some(v));
    }
    fn opt_u32(&mut self, v: Option<u32>) {
        if let Buf::U32(b, nulls) = self {
            b.push(v.unwrap_or(0));
            nulls.append(v.is_some());
        }
    }
    fn u32_n(&mut self, v: u32, n: usize) {
        if let Buf::U32(b, nulls) = self {
            b.extend(std::iter::repeat_n(v, n));
            nulls.append_n_non_nulls(n);
        }
    }
    fn u32_iter(&mut self, it: impl Iterator<Item = u32>) {
        if let Buf::U32(b, nulls) = self {
            let before = b.len();
            b.extend(it);
            nulls.append_n_non_nulls(b.len() - before);
        }
    }
    fn u64(&mut self, v: u64) {
        if let Buf::U64(b) = self {
            b.push(v);
        }
    }
    fn i64_n(&mut self, v: i64, n: usize) {
        if let Buf::I64(b) = self {
            b.extend(std::iter::repeat_n(v, n));
        }
    }
    fn i64_slice(&mut self, v: &[i64]) {
        if let Buf::I64(b) = self {
            b.extend_from_slice(v);
        }
    }
    fn f64_slice(&mut self, v: &[f64]) {
        if let Buf::F64(b, nulls) = self {
            b.extend_from_slice(v);
            nulls.append_n_non_nulls(v.len());
        }
    }
    /// Metric values: a NaN (a derived metric's cell without a value) becomes a null.
    fn value_slice(&mut self, v: &[f64]) {
        if let Buf::F64(b, nulls) = self {
            b.extend_from_slice(v);
            if v.iter().any(|x| x.is_nan()) {
                v.iter().for_each(|x| nulls.append(!x.is_nan()));
            } else {
                nulls.append_n_non_nulls(v.len());
            }
        }
    }
    fn f64_iter(&mut self, it: impl Iterator<Item = f64>) {
        if let Buf::F64(b, nulls) = self {
            let before = b.len();
            b.extend(it);
            nulls.append_n_non_nulls(b.len() - before);
        }
    }
    fn bool(&mut self, v: bool) {
        if let Buf::Bool(b) = self {
            b.push(v);
        }
    }
    fn str(&mut self, v: &str) {
        if let Buf::Str(b) = self {
            b.append_value(v);
        }
    }
    fn opt_str(&mut self, v: Option<&str>) {
        if let Buf::Str(b) = self {
            b.append_option(v);
        }
    }
    fn str_n(&mut self, v: &str, n: usize) {
        if let Buf::Str(b) = self {
            for _ in 0..n {
                b.append_value(v);
            }
        }
    }
}

/// The projected columns of one table being built.
pub(crate) struct Columns {
    schema: SchemaRef,
    /// Field index (in the table's full schema) of each buffer.
    fields: Vec<usize>,
    bufs: Vec<Buf>,
    rows: usize,
}

impl Columns {
    /// Buffers for `projection` (field indices of `full`; `None` = every field).
    pub(crate) fn new(full: &SchemaRef, projection: Option<&[usize]>) -> Result<Columns, ArrowError> {
        let fields: Vec<usize> =
            projection.map_or_else(|| (0..full.fields().len()).collect(), <[usize]>::to_vec);
        let schema = Arc::new(full.project(&fields)?);
        let bufs = fields
            .iter()
            .map(|&i| Buf::new(full.field(i).data_type()))
            .collect();
        Ok(Columns {
            schema,
            fields,
            bufs,
            rows: 0,
        })
    }

    /// The schema of the batches (the projected fields).
    pub(crate) fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// Rows appended since the last batch.
    pub(crate) fn rows(&self) -> usize {
        self.rows
    }

    /// The rows appended so far as a batch; the buffers start empty again.
    pub(crate) fn take_batch(&mut self) -> Result<RecordBatch, ArrowError> {
        let arrays = self.bufs.iter_mut().map(Buf::finish).collect();
        let rows = std::mem::take(&mut self.rows);
        let options = datafusion::arrow::record_batch::RecordBatchOptions::new().with_row_count(Some(rows));
        RecordBatch::try_new_with_options(self.schema.clone(), arrays, &options)
    }

    fn each(&mut self) -> impl Iterator<Item = (usize, &mut Buf)> {
        self.fields.iter().copied().zip(self.bufs.iter_mut())
    }
}

/// Number of units of `table` in `run`.
pub(crate) fn units(table: Table, run: &RunEntry) -> usize {
    let p = run.data.profile();
    match table {
        Table::Runs => 1,
        Table::Metadata => 1,
        Table::Threads => p.threads().len(),
        Table::Metrics => p.metrics().len(),
        Table::Events | Table::EventValues => p.events().len(),
        Table::UserEvents => p.atomic_events().len(),
        Table::Samples => run.data.series().map_or(0, |s| s.timer_count()),
        Table::Intervals => run.data.trace().map_or(0, |t| t.lanes().len()),
        Table::Tags => run.tags.len(),
    }
}

/// The metadata entries of a run: `(thread or None for all, key, value)`.
fn metadata_rows(run: &RunEntry) -> Vec<(Option<u32>, &str, &str)> {
    let md = run.data.profile().metadata();
    let mut rows: Vec<(Option<u32>, &str, &str)> = md
        .common()
        .iter()
        .map(|(k, v)| (None, k.as_str(), v.as_str()))
        .collect();
    for (k, per_thread) in md.varying() {
        rows.extend(
            per_thread
                .iter()
                .map(|(t, v)| (Some(t.0), k.as_str(), v.as_str())),
        );
    }
    if let Some(trace) = run.data.trace() {
        rows.extend(
            trace
                .metadata()
                .iter()
                .map(|(k, v)| (None, k.as_str(), v.as_str())),
        );
    }
    rows
}

/// Appends unit `u` of `table` in `run` to `cols`.
pub(crate) fn append(table: Table, run: &RunEntry, u: usize, cols: &mut Columns) {
    let p = run.data.profile();
    let r = run.run;
    let id = u32::try_from(u).unwrap_or(u32::MAX);
    let added = match table {
        Table::Runs => {
            let program = ["Executable", "executable", "program", "Program"]
                .iter()
                .find_map(|k| p.metadata().get_common(k));
            let samples = run.data.series().map_or(0, |s| s.len());
            for (f, b) in cols.each() {
                match f {
                    0 => b.u32(r),
                    1 => b.str(&run.name),
                    2 => b.str(&run.source),
                    3 => b.str(&run.format),
                    4 => b.opt_str(program),
                    5 => b.u64(p.threads().len() as u64),
                    6 => b.u64(p.events().len() as u64),
                    7 => b.u32(u32::try_from(p.metrics().len()).unwrap_or(u32::MAX)),
                    8 => b.u64(p.atomic_events().len() as u64),
                    _ => b.u64(samples as u64),
                }
            }
            1
        }
        Table::Metadata => {
            let rows = metadata_rows(run);
            for (f, b) in cols.each() {
                match f {
                    0 => b.u32_n(r, rows.len()),
                    1 => rows.iter().for_each(|x| b.opt_u32(x.0)),
                    2 => rows.iter().for_each(|x| b.str(x.1)),
                    _ => rows.iter().for_each(|x| b.str(x.2)),
                }
            }
            rows.len()
        }
        Table::Threads => {
            let t = p.thread(ThreadIndex(id));
            for (f, b) in cols.each() {
                match f {
                    0 => b.u32(r),
                    1 => b.u32(id),
                    2 => b.u32(t.node),
                    3 => b.u32(t.context),
                    4 => b.u32(t.thread),
                    _ => b.str(&t.to_string()),
                }
            }
            1
        }
        Table::Metrics => {
            let m = p.metric(MetricId(id));
            for (f, b) in cols.each() {
                match f {
                    0 => b.u32(r),
                    1 => b.u32(id),
                    2 => b.str(&m.name),
                    3 => b.str(m.unit.symbol()),
                    _ => b.str(m.combine.as_str()),
                }
            }
            1
        }
        Table::Events => {
            let e = p.event(EventId(id));
            for (f, b) in cols.each() {
                match f {
                    0 => b.u32(r),
                    1 => b.u32(id),
                    2 => b.str(&p.event_name(EventId(id))),
                    3 => b.str(e.leaf()),
                    4 => b.opt_u32(e.parent().map(|x| x.0)),
                    5 => b.opt_u32(e.routine().map(|x| x.0)),
                    6 => b.u32(e.depth),
                    7 => b.bool(e.is_callpath()),
                    8 => b.str(&p.event_groups_joined(EventId(id))),
                    9 => b.str(e.kind.as_str()),
                    10 => b.opt_str(e.source().map(|s| s.file)),
                    11 => b.opt_u32(e.source().map(|s| s.line)),
                    _ => b.bool(e.throttled),
                }
            }
            1
        }
        Table::EventValues => event_values(run, EventId(id), cols),
        Table::UserEvents => user_events(run, AtomicEventId(id), cols),
        Table::Samples => samples(run, EventId(id), cols),
        Table::Intervals => intervals(run, u, cols),
        Table::Tags => {
            let Some((k, v)) = run.tags.get(u) else {
                return;
            };
            for (f, b) in cols.each() {
                match f {
                    0 => b.u32(r),
                    1 => b.str(k),
                    _ => b.str(v),
                }
            }
            1
        }
    };
    cols.rows += added;
}

fn event_values(run: &RunEntry, e: EventId, cols: &mut Columns) -> usize {
    let p = run.data.profile();
    let col = p.interval(e);
    let n = col.len();
    for m in 0..p.metrics().len() {
        let metric = MetricId(u32::try_from(m).unwrap_or(u32::MAX));
        for (f, b) in cols.each() {
            match f {
                0 => b.u32_n(run.run, n),
                1 => b.u32_n(e.0, n),
                2 => b.u32_iter(col.threads().iter().map(|t| t.0)),
                3 => b.u32_n(metric.0, n),
                4 => b.f64_slice(col.calls()),
                5 => b.f64_slice(col.subcalls()),
                6 => b.value_slice(col.exclusive(metric)),
                _ => b.value_slice(col.inclusive(metric)),
            }
        }
    }
    n * p.metrics().len()
}

fn user_events(run: &RunEntry, a: AtomicEventId, cols: &mut Columns) -> usize {
    let p = run.data.profile();
    let ev = &p.atomic_events()[a.index()];
    let col = p.atomic(a);
    let n = col.len();
    for (f, b) in cols.each() {
        match f {
            0 => b.u32_n(run.run, n),
            1 => b.u32_n(a.0, n),
            2 => b.str_n(&ev.name, n),
            3 => {
                for _ in 0..n {
                    b.opt_u32(ev.context.map(|c| c.0));
                }
            }
            4 => {
                for _ in 0..n {
                    b.opt_str(ev.context_path.as_deref());
                }
            }
            5 => b.u32_iter(col.threads().iter().map(|t| t.0)),
            6 => b.f64_slice(col.count()),
            7 => b.f64_slice(col.min()),
            8 => b.f64_slice(col.max()),
            9 => b.f64_slice(col.mean()),
            _ => b.f64_slice(col.sum_squares()),
        }
    }
    n
}

/// The rows of timer `e` over every sample: present threads only (a thread missing from a
/// sample has no row; a thread that had not yet entered the timer has zeros).
fn samples(run: &RunEntry, e: EventId, cols: &mut Columns) -> usize {
    let Some(guard) = run.data.series() else {
        return 0;
    };
    let series: &perfscape_model::SampleSeries = &guard;
    let p = run.data.profile();
    // Series threads and metrics are mapped to the profile's by address and name.
    let thread_of = |t: ThreadIndex| {
        series
            .threads()
            .get(t.index())
            .and_then(|id| p.thread_index(*id))
            .map_or(t.0, |x| x.0)
    };
    let metric_of = |m: usize| {
        p.metric_by_name(&series.metrics()[m].name)
            .map_or(u32::try_from(m).unwrap_or(u32::MAX), |x| x.0)
    };
    let slots = series.timer_threads(e);
    let mut total = 0;
    for s in 0..series.len() {
        let sid = SampleId(u32::try_from(s).unwrap_or(u32::MAX));
        let Some(info) = series.sample(sid) else {
            continue;
        };
        let calls = series.timer_row(e, sid, ValueKind::Calls, MetricId(0));
        // Rows with a value (a NaN row is a thread missing from this sample).
        let present: Vec<usize> = (0..calls.len()).filter(|&j| !calls[j].is_nan()).collect();
        let n = present.len();
        if n == 0 {
            continue;
        }
        for m in 0..series.metrics().len() {
            let mid = MetricId(u32::try_from(m).unwrap_or(u32::MAX));
            let pick = |kind| {
                let row = series.timer_row(e, sid, kind, mid);
                present
                    .iter()
                    .map(move |&j| row.get(j).copied().unwrap_or(f64::NAN))
            };
            for (f, b) in cols.each() {
                match f {
                    0 => b.u32_n(run.run, n),
                    1 => b.u32_n(sid.0, n),
                    2 => b.str_n(info.name(), n),
                    3 => b.i64_n(info.timestamp_us(), n),
                    4 => b.u32_n(e.0, n),
                    5 => b.u32_iter(present.iter().map(|&j| thread_of(slots[j]))),
                    6 => b.u32_n(metric_of(m), n),
                    7 => b.f64_iter(pick(ValueKind::Calls)),
                    8 => b.f64_iter(pick(ValueKind::Subcalls)),
                    9 => b.f64_iter(pick(ValueKind::Exclusive)),
                    _ => b.f64_iter(pick(ValueKind::Inclusive)),
                }
            }
            total += n;
        }
    }
    total
}

/// Entry `i` of a string table, empty when out of range.
fn text(table: &[String], i: u32) -> &str {
    table.get(i as usize).map_or("", String::as_str)
}

fn intervals(run: &RunEntry, lane: usize, cols: &mut Columns) -> usize {
    let Some(trace) = run.data.trace() else {
        return 0;
    };
    let p = run.data.profile();
    let l = trace.lane(lane);
    let n = l.len();
    let thread = trace
        .threads()
        .get(lane)
        .and_then(|t| p.thread_index(t.id))
        .map_or(u32::try_from(lane).unwrap_or(u32::MAX), |t| t.0);
    for (f, b) in cols.each() {
        match f {
            0 => b.u32_n(run.run, n),
            1 => b.u32_n(thread, n),
            2 => b.i64_slice(l.start_ns()),
            3 => b.i64_slice(l.end_ns()),
            4 => l.name().iter().for_each(|&i| b.str(text(trace.names(), i))),
            5 => b.u32_iter(l.depth().iter().copied()),
            _ => l
                .category()
                .iter()
                .for_each(|&i| b.str(text(trace.categories(), i))),
        }
    }
    n
}
