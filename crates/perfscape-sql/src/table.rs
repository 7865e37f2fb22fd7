//! The tables: names, Arrow schemas and what each row is. `TABLES.md` documents every
//! column; a test checks that it names exactly the columns of these schemas.

use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use std::sync::Arc;

/// One table of a [`crate::RunSet`]. Every table starts with the `run` column (the run's
/// number in the set); ids (`event`, `thread`, `metric`, `user_event`, `sample`) are
/// positions inside their run, so joins between tables go through `(run, id)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Table {
    /// One row per run: name, source path, format, program, counts.
    Runs,
    /// One row per metadata entry: `(run, thread, key, value)`; `thread` is NULL for entries
    /// every thread has with the same value.
    Metadata,
    /// One row per thread: its index and TAU's node, context and thread numbers.
    Threads,
    /// One row per metric: name, unit and how values of the metric combine.
    Metrics,
    /// One row per interval event (timer), flat or callpath: the call tree as parent links.
    Events,
    /// One row per (event, thread, metric) cell measured: calls, subcalls, exclusive and
    /// inclusive values. Threads that never entered an event have no row.
    EventValues,
    /// One row per (user event, thread): count, min, max, mean, sum of squares.
    UserEvents,
    /// One row per (sample, event, thread, metric) of a run observed over time, cumulative.
    Samples,
    /// One row per interval of a trace: thread, start and end in ns, name, depth, category.
    Intervals,
    /// One row per tag of a run (`perfscape store add --tag key=value`).
    Tags,
}

impl Table {
    /// Every table, in the order `TABLES.md` documents them.
    pub const ALL: [Table; 10] = [
        Table::Runs,
        Table::Metadata,
        Table::Threads,
        Table::Metrics,
        Table::Events,
        Table::EventValues,
        Table::UserEvents,
        Table::Samples,
        Table::Intervals,
        Table::Tags,
    ];

    /// The SQL name (`runs`, `event_values`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Table::Runs => "runs",
            Table::Metadata => "metadata",
            Table::Threads => "threads",
            Table::Metrics => "metrics",
            Table::Events => "events",
            Table::EventValues => "event_values",
            Table::UserEvents => "user_events",
            Table::Samples => "samples",
            Table::Intervals => "intervals",
            Table::Tags => "tags",
        }
    }

    /// The table of an SQL name.
    pub fn by_name(name: &str) -> Option<Table> {
        Table::ALL.into_iter().find(|t| t.name() == name)
    }

    /// The Arrow schema. Column order is fixed; `TABLES.md` gives the meaning and unit of each.
    pub fn schema(self) -> SchemaRef {
        use DataType::{Boolean, Float64, Int64, UInt32, UInt64, Utf8};
        let f = |name: &str, t: DataType, nullable: bool| Field::new(name, t, nullable);
        let fields = match self {
            Table::Runs => vec![
                f("run", UInt32, false),
                f("name", Utf8, false),
                f("source", Utf8, false),
                f("format", Utf8, false),
                f("program", Utf8, true),
                f("thread_count", UInt64, false),
                f("event_count", UInt64, false),
                f("metric_count", UInt32, false),
                f("user_event_count", UInt64, false),
                f("sample_count", UInt64, false),
            ],
            Table::Metadata => vec![
                f("run", UInt32, false),
                f("thread", UInt32, true),
                f("key", Utf8, false),
                f("value", Utf8, false),
            ],
            Table::Threads => vec![
                f("run", UInt32, false),
                f("thread", UInt32, false),
                f("node", UInt32, false),
                f("context", UInt32, false),
                f("thread_in_context", UInt32, false),
                f("label", Utf8, false),
            ],
            Table::Metrics => vec![
                f("run", UInt32, false),
                f("metric", UInt32, false),
                f("name", Utf8, false),
                f("unit", Utf8, false),
                f("combine", Utf8, false),
            ],
            Table::Events => vec![
                f("run", UInt32, false),
                f("event", UInt32, false),
                f("name", Utf8, false),
                f("leaf", Utf8, false),
                f("parent", UInt32, true),
                f("routine", UInt32, true),
                f("depth", UInt32, false),
                f("is_callpath", Boolean, false),
                f("groups", Utf8, false),
                f("kind", Utf8, false),
                f("source_file", Utf8, true),
                f("line", UInt32, true),
                f("throttled", Boolean, false),
            ],
            Table::EventValues => vec![
                f("run", UInt32, false),
                f("event", UInt32, false),
                f("thread", UInt32, false),
                f("metric", UInt32, false),
                f("calls", Float64, false),
                f("subcalls", Float64, false),
                f("exclusive", Float64, true),
                f("inclusive", Float64, true),
            ],
            Table::UserEvents => vec![
                f("run", UInt32, false),
                f("user_event", UInt32, false),
                f("name", Utf8, false),
                f("context_event", UInt32, true),
                f("context_path", Utf8, true),
                f("thread", UInt32, false),
                f("count", Float64, false),
                f("min", Float64, false),
                f("max", Float64, false),
                f("mean", Float64, false),
                f("sum_squares", Float64, false),
            ],
            Table::Samples => vec![
                f("run", UInt32, false),
                f("sample", UInt32, false),
                f("sample_name", Utf8, false),
                f("timestamp_us", Int64, false),
                f("event", UInt32, false),
                f("thread", UInt32, false),
                f("metric", UInt32, false),
                f("calls", Float64, false),
                f("subcalls", Float64, false),
                f("exclusive", Float64, false),
                f("inclusive", Float64, false),
            ],
            Table::Intervals => vec![
                f("run", UInt32, false),
                f("thread", UInt32, false),
                f("start_ns", Int64, false),
                f("end_ns", Int64, false),
                f("name", Utf8, false),
                f("depth", UInt32, false),
                f("category", Utf8, false),
            ],
            Table::Tags => vec![
                f("run", UInt32, false),
                f("key", Utf8, false),
                f("value", Utf8, false),
            ],
        };
        Arc::new(Schema::new(fields))
    }
}
