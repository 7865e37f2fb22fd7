"""perfscape in Python: the runs of parallel programs as Arrow tables, and SQL over them.

    import perfscape
    run = perfscape.open("examples/np4")                 # any format perfscape reads
    ev = run.table("event_values").to_pandas()           # pyarrow.Table -> pandas
    top = perfscape.sql(run, '''
        SELECT e.name, sum(v.exclusive) AS exclusive_us
        FROM event_values v JOIN events e USING (run, event)
        JOIN metrics m USING (run, metric)
        WHERE m.name = 'TIME' GROUP BY e.name ORDER BY exclusive_us DESC LIMIT 5''')
    perfscape.sql(["run-a", "run-b"], "SELECT run, count(*) FROM threads GROUP BY run")
    perfscape.sql(perfscape.Store("~/perf-store"), "SELECT * FROM runs")

The tables and every column are documented in TABLES.md; the SQL dialect is Apache
DataFusion's, read only, with `imbalance(x)` (max / mean). Tables come from the native module
through the Arrow C stream interface: the batches perfscape builds are not copied.
"""

from __future__ import annotations

import os
from typing import Iterable, Union

import pyarrow as pa

from . import _perfscape
from ._perfscape import PerfscapeError

__all__ = ["open", "sql", "table", "Run", "Store", "PerfscapeError", "TABLES", "__version__"]

__version__ = _perfscape.__version__

#: The table names, in TABLES.md's order.
TABLES: tuple = tuple(_perfscape.tables())


def _table(stream) -> pa.Table:
    """A pyarrow.Table from a native Arrow stream, without copying its batches."""
    return pa.RecordBatchReader.from_stream(stream).read_all()


class Run:
    """One opened run: `table(name)` gives a pyarrow.Table, `sql(query)` queries this run."""

    def __init__(self, native: "_perfscape.Run"):
        self._native = native

    @property
    def path(self) -> str:
        """Where the run was read from."""
        return self._native.path

    @property
    def format(self) -> str:
        """The name of the format it was read as."""
        return self._native.format

    @property
    def problems(self) -> list:
        """Files that did not load, loaded in part or with a warning, one line each."""
        return self._native.problems

    @property
    def partial(self) -> bool:
        """True when some file of the run did not load or loaded only in part."""
        return self._native.partial

    def table(self, name: str) -> pa.Table:
        """Every row of the table `name` (one of TABLES) as a pyarrow.Table."""
        return _table(self._native.table(name))

    def tables(self) -> dict:
        """Every table of the run, by name."""
        return {name: self.table(name) for name in TABLES}

    def sql(self, query: str) -> pa.Table:
        """The answer of a read-only SQL query over this run's tables."""
        return _table(self._native.sql(query))

    def __repr__(self) -> str:
        return repr(self._native)


class Store:
    """A store of runs made with `perfscape store add` (a directory of Parquet files and a
    catalog), for `sql`."""

    def __init__(self, path: Union[str, os.PathLike]):
        self.path = os.path.expanduser(os.fspath(path))

    def __repr__(self) -> str:
        return f"perfscape.Store({self.path!r})"


def open(path: Union[str, os.PathLike], format: str = None, cache: bool = True) -> Run:  # noqa: A001
    """Opens the run at `path` (a file or directory of any format perfscape reads).

    `format` names the format instead of detecting it (`perfscape formats` lists the names).
    With `cache`, parsed profiles are kept in the user's cache directory, as the command line
    keeps them, so the next open of the same files is quick.
    A run where some files are bad still opens; `Run.problems` lists them and a warning says
    so. Raises PerfscapeError when nothing of the run can be read.
    """
    native = _perfscape.open(os.fspath(path), format, cache)
    run = Run(native)
    if run.partial:
        import warnings

        warnings.warn(
            f"{run.path} loaded in part: " + "; ".join(run.problems[:3]), stacklevel=2
        )
    return run


RunsOrStore = Union[str, os.PathLike, Run, Store, Iterable[Union[str, os.PathLike, Run]]]


def sql(runs: RunsOrStore, query: str) -> pa.Table:
    """The answer of a read-only SQL query as a pyarrow.Table.

    `runs` is a Store, one run (a path or an opened Run), or a list of them, numbered 0, 1, ...
    in the `run` column in the order given. Raises PerfscapeError when the query is refused
    (anything but a query), does not parse (the message gives line and column) or fails.
    """
    if isinstance(runs, Store):
        return _table(_perfscape.sql_store(runs.path, query))
    if isinstance(runs, (str, os.PathLike, Run)):
        runs = [runs]
    opened = [r if isinstance(r, Run) else open(r) for r in runs]
    if not opened:
        raise PerfscapeError("give one or more runs, or a Store")
    return _table(_perfscape.sql_runs([r._native for r in opened], query))


def table(runs: Union[Run, Iterable[Run]], name: str) -> pa.Table:
    """The table `name` (one of TABLES) over several opened runs together, numbered 0, 1, ...
    in the `run` column in the order given (a Thicket-style stack of runs)."""
    if isinstance(runs, Run):
        runs = [runs]
    return _table(_perfscape.table_runs([r._native for r in runs], name))
