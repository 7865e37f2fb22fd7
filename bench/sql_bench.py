#!/usr/bin/env python3
"""Benchmark of the tables (`perfscape sql`, `export`, `store`), with pandas beside it on the same
data in the same run.

usage: python3 bench/sql_bench.py [--threads 100000] [--pandas-threads 10000] [--events 1000]
                                  [--export-ranks 16384] [--store-runs 1000] [--repeat 3] [--out FILE.md]

- GROUP BY: `crates/perfscape-sql/examples/sql_scale.rs` builds a synthetic profile of THREADS
  threads x EVENTS flat events (one metric) and times `SELECT event, SUM, MAX, AVG ... GROUP BY
  event` over `event_values` (THREADS x EVENTS rows), three times. pandas beside it: the example at
  --pandas-threads writes the same rows (event, thread, exclusive) to Parquet; pandas reads it and
  runs the same aggregation (`groupby("event").agg(sum, max, mean)`), timed without the read, and
  perfscape is timed on that size too.
- Export: `perfscape export RUN --no-cache` of the tau_scale run of --export-ranks ranks (bench.py's
  run, with user events) against `perfscape summary RUN --no-cache`, alternating, medians of
  --repeat; the Parquet size against the TAU text.
- Store: `perfscape store add` of --store-runs copies of the 64-rank example (in batches of 100
  runs per command), then `perfscape sql --store` of a query across all of them, medians of
  --repeat.
- Prints a Markdown section (machine, load before and after); --out writes it.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402
import peers  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def build_example():
    subprocess.run(["cargo", "build", "--release", "-p", "perfscape-sql", "--example", "sql_scale"], cwd=ROOT,
                   check=True)
    exe = bench.target_dir() / "release" / "examples" / "sql_scale"
    assert exe.exists(), exe
    return exe


def scale(exe, threads, events, parquet=None):
    cmd = [str(exe), str(threads), str(events)] + (["--parquet", str(parquet)] if parquet else [])
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


PANDAS = """
import sys, time, pandas as pd
t0 = time.perf_counter(); df = pd.read_parquet(sys.argv[1]); t1 = time.perf_counter()
times = []
for _ in range(3):
    s = time.perf_counter(); g = df.groupby("event")["exclusive"].agg(["sum", "max", "mean"]); times.append(time.perf_counter() - s)
print(t1 - t0, sorted(times)[1], len(g), pd.__version__)
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=100_000)
    ap.add_argument("--pandas-threads", type=int, default=10_000)
    ap.add_argument("--events", type=int, default=1000)
    ap.add_argument("--export-ranks", type=int, default=16384)
    ap.add_argument("--store-runs", type=int, default=1000)
    ap.add_argument("--stream-runs", type=int, default=0,
                    help="also add this many runs of THREADS x EVENTS to a temporary store and GROUP BY over all of "
                         "them, streamed from the Parquet files (10 = 10^9 rows at the defaults; ~1 GB of disk per run)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--python", default=sys.executable, help="a Python with pandas and pyarrow")
    ap.add_argument("--out")
    a = ap.parse_args()
    # --export-ranks 0 / --store-runs 0 leave those parts out (then the CLI is not built).
    exe = bench.build() if a.export_ranks or a.store_runs else None
    ex = build_example()
    before = peers.load()
    lines = ["## The data as tables: `perfscape sql`, `export`, `store` (bench/sql_bench.py)", "",
             f"Machine: {peers.machine()}. Load average before: {before}.", ""]

    # GROUP BY, with pandas on the same rows.
    with tempfile.TemporaryDirectory() as tmp:
        pq = Path(tmp) / "event_values.parquet"
        small = scale(ex, a.pandas_threads, a.events, pq)
        p = subprocess.run([a.python, "-c", PANDAS, str(pq)], check=True, capture_output=True, text=True).stdout.split()
        read_s, pandas_s, groups, pandas_version = float(p[0]), float(p[1]), int(p[2]), p[3]
    big = scale(ex, a.threads, a.events)
    lines += ["| rows (threads x events) | perfscape GROUP BY event (median of 3) | pandas groupby (median of 3, read not included) | profile build | peak RSS |",
              "|---|---|---|---|---|"]
    for r, pan in [(small, f"{pandas_s:.3f} s (read {read_s:.2f} s; pandas {pandas_version})"), (big, "-")]:
        lines.append(f"| {r['rows']:,} ({r['threads']:,} x {r['events']:,}) | {statistics.median(r['group_by_s']):.3f} s "
                     f"| {pan} | {r['build_s']:.1f} s | {r['peak_rss_bytes'] / 1e9:.2f} GB |")
    assert groups == small["groups"], (groups, small["groups"])

    if a.stream_runs:
        lines += stream_section(a)
    if a.export_ranks:
        lines += export_section(exe, a)
    if a.store_runs:
        lines += store_section(exe, a)
    lines += ["", f"Load average after: {peers.load()}."]
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        Path(a.out).write_text(text)


def stream_section(a):
    """GROUP BY over a store of --stream-runs synthetic runs: more rows than fit in memory as profiles."""
    subprocess.run(["cargo", "build", "--release", "-p", "perfscape-sql", "--example", "sql_store_scale"], cwd=ROOT,
                   check=True)
    ex = bench.target_dir() / "release" / "examples" / "sql_store_scale"
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "store"
        out = subprocess.run([ex, "add", store, str(a.stream_runs), str(a.threads), str(a.events)], check=True,
                             capture_output=True, text=True).stdout
        adds = [json.loads(line) for line in out.splitlines()]
        gb = sum(f.stat().st_size for f in store.rglob("*.parquet")) / 1e9
        q = json.loads(subprocess.run([ex, "query", store], check=True, capture_output=True, text=True).stdout)
    add_s = sum(r["add_s"] for r in adds)
    return ["", f"Streamed from a store: {a.stream_runs} synthetic runs of {a.threads:,} x {a.events:,} added one at a time "
            f"({add_s:.0f} s of `Store::add` in all, peak RSS {max(r['peak_rss_bytes'] for r in adds) / 1e9:.2f} GB while "
            f"building and adding; {gb:.1f} GB of Parquet), then `GROUP BY event` over all {q['rows']:,} rows of "
            f"`event_values` in a process of its own: {q['group_by_s'][0]:.1f} s and {q['group_by_s'][1]:.1f} s, "
            f"{q['groups']} groups, peak RSS {q['peak_rss_bytes'] / 1e9:.2f} GB."]


def export_section(exe, a):
    """Export against summary."""
    run = bench.scale_run(a.export_ranks)
    text_mb = bench.dir_bytes(run) / 1e6
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "tables"
        s_walls, e_walls, s_rss, e_rss = [], [], [], []
        subprocess.run([exe, "summary", run, "--no-cache"], stdout=subprocess.DEVNULL)
        for _ in range(a.repeat):
            w, m, *_ = bench.run_once([exe, "summary", run, "--no-cache"])
            s_walls.append(w)
            s_rss.append(m)
            shutil.rmtree(out, ignore_errors=True)
            w, m, code, _o, err = bench.run_once([exe, "export", run, out, "--no-cache"])
            assert code == 0, err
            e_walls.append(w)
            e_rss.append(m)
        pq_mb = sum(f.stat().st_size for f in out.rglob("*.parquet")) / 1e6
    s, e = statistics.median(s_walls), statistics.median(e_walls)
    return ["", f"Export of the {a.export_ranks:,}-rank tau_scale run ({text_mb:.0f} MB of TAU text), alternating with "
              f"`summary`, medians of {a.repeat}, `--no-cache`:", "",
              "| command | wall | peak RSS |", "|---|---|---|",
              f"| `summary` | {s:.2f} s | {max(s_rss):.0f} MB |",
              f"| `export --format parquet` | {e:.2f} s ({e / s:.2f}x summary) | {max(e_rss):.0f} MB |",
              "", f"Parquet written: {pq_mb:.1f} MB = {pq_mb / text_mb:.3f}x the TAU text."]


def store_section(exe, a):
    """Store: many runs, one query across all."""
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "store"
        src = ROOT / "examples" / "tau" / "mpi-stencil-np64-callpath-commmatrix"
        t0 = time.perf_counter()
        done = 0
        while done < a.store_runs:
            n = min(100, a.store_runs - done)
            subprocess.run([exe, "store", "add", "--store", store, "--no-cache", "--tag", f"batch={done // 100}"]
                           + [src] * n, check=True, stdout=subprocess.DEVNULL)
            done += n
        add_s = time.perf_counter() - t0
        q = "SELECT run, SUM(exclusive) AS x, MAX(exclusive) AS mx FROM event_values WHERE metric = 0 GROUP BY run ORDER BY x DESC LIMIT 5"
        walls = []
        for _ in range(a.repeat):
            w, m, code, _o, err = bench.run_once([exe, "sql", "--store", store, q, "-f", "csv"])
            assert code == 0, err
            walls.append(w)
        store_mb = sum(f.stat().st_size for f in store.rglob("*.parquet")) / 1e6
    return ["", f"Store: `store add` of {a.store_runs:,} runs of 64 ranks (the example, {-(-a.store_runs // 100)} commands of up "
              f"to 100 runs): {add_s:.1f} s in all ({store_mb:.0f} MB of Parquet); `sql --store` of a GROUP BY run over all of "
              f"them (process start included): median {statistics.median(walls):.3f} s of {a.repeat}."]


if __name__ == "__main__":
    main()
