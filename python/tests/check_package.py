"""Checks of the Python package, run by python/tests/package.rs with the package on PYTHONPATH.

    check_package.py CORPUS STORE REF_DIR FIXTURE

CORPUS is ../shared/corpus (read only), STORE a store holding the np64 run with the tag
case=np64, REF_DIR scripts/ref (for pandas_tables.reference), FIXTURE the pandas reference
answers crates/perfscape-sql/tests/fixtures/pandas_tables.json. Exits non-zero on the first
difference, naming it; prints what it checked.
"""
import json
import math
import sys

import pyarrow as pa

import perfscape

corpus, store_dir, ref_dir, fixture_path = sys.argv[1:5]
sys.path.insert(0, ref_dir)
import pandas_tables  # noqa: E402

RUNS = [
    "tau-real/mpi-stencil-np64-callpath-commmatrix",
    "tau-real/mpi-stencil-np8-snapshot",
    "chrome-trace/hta-pytorch-kineto-2rank/sampled_rank-0.json.gz",
]


def same(a, b):
    if isinstance(a, float) or isinstance(b, float):
        if a is None or b is None:
            return a is None and b is None
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    return a == b


def same_rows(what, got, want):
    assert len(got) == len(want), f"{what}: {len(got)} rows, the reference has {len(want)}"
    assert want, f"{what}: the reference checks something"
    for k, (g, w) in enumerate(zip(got, want)):
        assert len(g) == len(w), f"{what} row {k}: {g} vs {w}"
        for c, (x, y) in enumerate(zip(g, w)):
            assert same(x, y), f"{what} row {k} column {c}: {x!r}, the reference has {y!r}"


def raises(what, f, needle):
    try:
        f()
    except perfscape.PerfscapeError as e:
        assert needle in str(e), f"{what}: the message {str(e)!r} does not say {needle!r}"
        return
    raise AssertionError(f"{what}: no PerfscapeError")


fixture = json.load(open(fixture_path))
runs = [perfscape.open(f"{corpus}/{r}", cache=False) for r in RUNS]
assert [r.format for r in runs] == ["tau", "tau-snapshot", "chrome"], [r.format for r in runs]
assert not any(r.partial for r in runs)


def table(name):
    t = perfscape.table(runs, name)
    assert isinstance(t, pa.Table)
    df = t.to_pandas()
    df["run"] = df["run"].astype("int64")
    return df


# 1. Every table through the Arrow C stream, to pandas, gives the reference answers.
ref = pandas_tables.reference(table)
assert set(ref) == set(fixture), (set(ref), set(fixture))
for name, entry in ref.items():
    same_rows(f"table {name} (pandas over perfscape.table)", entry["rows"], fixture[name]["rows"])

# 2. SQL through Python gives them too, and a table's schema is the SQL table's.
for name, entry in fixture.items():
    got = perfscape.sql(runs, entry["sql"])
    same_rows(f"perfscape.sql for {name}", pandas_tables.rows(got.to_pandas()), entry["rows"])
for name in perfscape.TABLES:
    direct = runs[0].table(name).schema
    via_sql = runs[0].sql(f"SELECT * FROM {name} LIMIT 0").schema
    assert direct.names == via_sql.names, (name, direct.names, via_sql.names)
    assert direct.types == via_sql.types, (name, direct.types, via_sql.types)

# 3. One run's table holds its rows only, as batches of the Rust side (not one copied block).
ev = runs[0].table("event_values")
assert ev.num_rows == sum(r[3] for r in fixture["event_values"]["rows"] if r[0] == 0), ev.num_rows
assert set(ev.column("run").to_pylist()) == {0}

# 4. A store made by perfscape, queried from Python, answers as the run itself does.
q = "SELECT SUM(exclusive) AS x, COUNT(*) AS n FROM event_values"
from_store = perfscape.sql(perfscape.Store(store_dir), q).to_pylist()
from_run = runs[0].sql(q).to_pylist()
assert len(from_store) == 1 and same(from_store[0]["x"], from_run[0]["x"]), (from_store, from_run)
assert from_store[0]["n"] == from_run[0]["n"], (from_store, from_run)
tags = perfscape.sql(perfscape.Store(store_dir), "SELECT key, value FROM tags").to_pylist()
assert tags == [{"key": "case", "value": "np64"}], tags

# 5. Errors name what is wrong.
raises("a missing run", lambda: perfscape.open(f"{corpus}/no-such-run"), "no-such-run")
raises("an unknown format name", lambda: perfscape.open(f"{corpus}/{RUNS[0]}", format="nope"), "nope")
raises("an unknown table", lambda: runs[0].table("nope"), "the tables are")
raises("a write", lambda: runs[0].sql("DROP TABLE events"), "refused")
raises("a query that does not parse", lambda: runs[0].sql("SELECT FROM WHERE"), "line")
raises("no runs", lambda: perfscape.sql([], "SELECT 1"), "runs")
stream = runs[0]._native.table("threads")
pa.RecordBatchReader.from_stream(stream).read_all()
raises("a stream read twice", lambda: pa.RecordBatchReader.from_stream(stream), "already read")

print(f"checked {len(ref)} tables, {len(perfscape.TABLES)} schemas, the store and 7 errors")
