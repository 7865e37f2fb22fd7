#!/usr/bin/env python3
"""Reference answers for crates/perfscape-sql/tests/pandas_tables.rs, computed by pandas
(pyarrow) from the Parquet that `perfscape export` wrote, one query per table.

    perfscape export ../shared/corpus/tau-real/mpi-stencil-np64-callpath-commmatrix \
        ../shared/corpus/tau-real/mpi-stencil-np8-snapshot \
        ../shared/corpus/chrome-trace/hta-pytorch-kineto-2rank/sampled_rank-0.json.gz /tmp/exp
    python3 scripts/ref/pandas_tables.py /tmp/exp > crates/perfscape-sql/tests/fixtures/pandas_tables.json

Each entry: the SQL the Rust test runs over the same runs in memory, and pandas' rows for
it (the export's Hive partitions give the `run` column back). Needs pandas and pyarrow.

`reference(table)` is also what python/tests/check_package.py runs over the tables of the
Python package, so the package is held to the same answers.
"""
import json
import sys

import pandas as pd
import pyarrow.dataset as ds


def rows(df):
    return [[None if (isinstance(v, float) and v != v) else (v.item() if hasattr(v, "item") else v) for v in r]
            for r in df.itertuples(index=False, name=None)]


def reference(table):
    """The reference entries, with `table(name)` giving a table as a pandas DataFrame with an
    int64 `run` column."""
    ref = {}

    r = table("runs").sort_values("run")
    ref["runs"] = {
        "sql": "SELECT run, name, format, thread_count, event_count, user_event_count, sample_count FROM runs ORDER BY run",
        "rows": rows(r[["run", "name", "format", "thread_count", "event_count", "user_event_count", "sample_count"]]),
    }

    m = table("metadata")
    m["common"] = m["thread"].isna()
    g = m.groupby(["run", "common"]).size().reset_index(name="n").sort_values(["run", "common"])
    ref["metadata"] = {
        "sql": "SELECT run, thread IS NULL AS common, COUNT(*) AS n FROM metadata GROUP BY 1, 2 ORDER BY 1, 2",
        "rows": rows(g),
    }

    t = table("threads")
    g = t.groupby("run").agg(n=("thread", "size"), nodes=("node", "nunique"), max_tic=("thread_in_context", "max")).reset_index()
    ref["threads"] = {
        "sql": "SELECT run, COUNT(*) AS n, COUNT(DISTINCT node) AS nodes, MAX(thread_in_context) AS max_tic FROM threads GROUP BY run ORDER BY run",
        "rows": rows(g.sort_values("run")),
    }

    t = table("metrics").sort_values(["run", "metric"])
    ref["metrics"] = {
        "sql": "SELECT run, metric, name, unit, combine FROM metrics ORDER BY run, metric",
        "rows": rows(t[["run", "metric", "name", "unit", "combine"]]),
    }

    e = table("events")
    g = e.groupby("run").agg(
        n=("event", "size"),
        callpaths=("is_callpath", "sum"),
        max_depth=("depth", "max"),
        with_source=("source_file", "count"),
        roots=("parent", lambda s: int(s.isna().sum())),
    ).reset_index()
    ref["events"] = {
        "sql": "SELECT run, COUNT(*) AS n, SUM(CAST(is_callpath AS BIGINT)) AS callpaths, MAX(depth) AS max_depth, "
        "COUNT(source_file) AS with_source, SUM(CASE WHEN parent IS NULL THEN 1 ELSE 0 END) AS roots FROM events GROUP BY run ORDER BY run",
        "rows": rows(g.sort_values("run")),
    }

    v = table("event_values")
    g = v.groupby(["run", "event", "metric"]).agg(
        n=("thread", "size"), x=("exclusive", "sum"), i=("inclusive", "sum"), c=("calls", "sum"), mx=("exclusive", "max")
    ).reset_index().sort_values(["run", "event", "metric"])
    ref["event_values"] = {
        "sql": "SELECT run, event, metric, COUNT(*) AS n, SUM(exclusive) AS x, SUM(inclusive) AS i, SUM(calls) AS c, "
        "MAX(exclusive) AS mx FROM event_values GROUP BY 1, 2, 3 ORDER BY 1, 2, 3",
        "rows": rows(g),
    }

    u = table("user_events")
    g = u.groupby(["run", "user_event"]).agg(
        n=("count", "sum"), mx=("max", "max"), mn=("min", "min"), ss=("sum_squares", "sum")
    ).reset_index().sort_values(["run", "user_event"])
    ref["user_events"] = {
        "sql": "SELECT run, user_event, SUM(count) AS n, MAX(max) AS mx, MIN(min) AS mn, SUM(sum_squares) AS ss "
        "FROM user_events GROUP BY 1, 2 ORDER BY 1, 2",
        "rows": rows(g),
    }

    s = table("samples")
    g = s.groupby(["run", "sample"]).agg(n=("thread", "size"), x=("exclusive", "sum"), ts=("timestamp_us", "max")).reset_index()
    ref["samples"] = {
        "sql": "SELECT run, sample, COUNT(*) AS n, SUM(exclusive) AS x, MAX(timestamp_us) AS ts FROM samples GROUP BY 1, 2 ORDER BY 1, 2",
        "rows": rows(g.sort_values(["run", "sample"])),
    }

    i = table("intervals")
    i["dur"] = i["end_ns"] - i["start_ns"]
    g = i.groupby(["run", "thread"]).agg(n=("name", "size"), dur=("dur", "sum"), max_depth=("depth", "max"),
                                         names=("name", "nunique")).reset_index()
    ref["intervals"] = {
        "sql": "SELECT run, thread, COUNT(*) AS n, SUM(end_ns - start_ns) AS dur, MAX(depth) AS max_depth, "
        "COUNT(DISTINCT name) AS names FROM intervals GROUP BY 1, 2 ORDER BY 1, 2",
        "rows": rows(g.sort_values(["run", "thread"])),
    }

    return ref


def export_table(out_dir):
    def table(name):
        d = ds.dataset(f"{out_dir}/{name}", format="parquet", partitioning="hive")
        df = d.to_table().to_pandas()
        df["run"] = df["run"].astype("int64")
        return df

    return table


if __name__ == "__main__":
    json.dump(reference(export_table(sys.argv[1])), sys.stdout, separators=(",", ":"))
    print()
