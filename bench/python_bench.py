#!/usr/bin/env python3
"""Benchmark of the Python package beside Hatchet, same runs, same machine, same run.

usage: python3 bench/python_bench.py [--ranks 1024,4096] [--repeat 3] [--out FILE.md]

- Builds the package's extension module in release mode (`cargo build --release -p
  perfscape-python`) and lays it out as `pip install ./python` would, in a temporary directory.
- Makes a virtual environment in the user's cache with llnl-hatchet, pyarrow and pandas (once).
- For each rank count: the tau_scale.py run without user events (bench.py's, `--lines 5000
  --no-user-events`; Hatchet's TAU reader fails on context user events), then
  `perfscape.open(RUN, cache=False).table("event_values").to_pandas()` (median of --repeat, each a
  new Python process, page cache warm) and `hatchet.GraphFrame.from_tau(RUN)` (once; it takes
  minutes), both with their import time, with peak RSS (GNU time).
- Prints a Markdown section (machine, load before and after); --out writes it.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
VENV = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "perfscape" / "bench-hatchet-venv"


def python_with_hatchet():
    py = VENV / "bin" / "python"
    ok = py.exists() and subprocess.run([str(py), "-c", "import hatchet, pyarrow, pandas"],
                                        capture_output=True).returncode == 0
    if not ok:
        shutil.rmtree(VENV, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                        "llnl-hatchet", "pyarrow==26.0.1", "pandas"], check=True)
    return py


def build_package(dest):
    subprocess.run(["cargo", "build", "--release", "-p", "perfscape-python"], cwd=ROOT, check=True)
    lib = bench.target_dir() / "release" / "lib_perfscape.so"
    pkg = dest / "perfscape"
    pkg.mkdir(parents=True)
    shutil.copy(ROOT / "python" / "perfscape" / "__init__.py", pkg / "__init__.py")
    shutil.copy(lib, pkg / "_perfscape.abi3.so")
    return dest


# Each prints the rows it got and the seconds of the call alone, after the imports (pandas too:
# Hatchet imports it with itself, and `to_pandas()` would otherwise import it inside the call).
PERFSCAPE_CODE = ("import pandas, perfscape, sys, time; t = time.perf_counter(); "
                  "df = perfscape.open(sys.argv[1], cache=False).table('event_values').to_pandas(); "
                  "print(len(df), time.perf_counter() - t)")
HATCHET_CODE = ("import hatchet, sys, time; t = time.perf_counter(); "
                "gf = hatchet.GraphFrame.from_tau(sys.argv[1]); "
                "print(len(gf.dataframe), time.perf_counter() - t)")


def call_seconds(py, code, run, repeat):
    """Median rows and seconds of the call alone, over `repeat` new processes."""
    got = []
    for _ in range(repeat):
        out = subprocess.run([str(py), "-c", code, str(run)], capture_output=True, text=True, check=True).stdout.split()
        got.append((int(out[0]), float(out[1])))
    return got[0][0], statistics.median(s for _, s in got)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", default="1024,4096")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out")
    a = ap.parse_args()
    load_before = os.getloadavg()
    py = python_with_hatchet()
    hatchet_version = subprocess.run([str(py), "-c", "import hatchet; print(hatchet.__version__)"],
                                     capture_output=True, text=True).stdout.strip()
    work = Path(tempfile.mkdtemp(prefix="perfscape-pybench-"))
    try:
        site = build_package(work / "site")
        os.environ["PYTHONPATH"] = str(site)
        rows = []
        for ranks in [int(r) for r in a.ranks.split(",")]:
            run = bench.scale_run(ranks, user_events=False)
            ps_cmd = [py, "-c", PERFSCAPE_CODE, run]
            ps_s, ps_mb = bench.timed(ps_cmd, a.repeat)
            n, ps_call = call_seconds(py, PERFSCAPE_CODE, run, a.repeat)
            wall, mb, code, out, err = bench.run_once([py, "-c", HATCHET_CODE, run], bench.HATCHET_TIMEOUT_S,
                                                      capture=True)
            if code == 0:
                hn, h_call = out.split()
                h = f"{wall:.2f} s, {mb:.0f} MB | {float(h_call):.2f} s ({hn} dataframe rows)"
                ratio = f"{wall / ps_s:.0f}x | {float(h_call) / ps_call:.0f}x"
            else:
                last = (err.strip().splitlines() or ["no message"])[-1]
                h = f"failed after {wall:.0f} s: {last[:120]} | -"
                ratio = "- | -"
            rows.append(f"| tau_scale {ranks} ranks, --lines 5000 --no-user-events | {ps_s:.3f} s, {ps_mb:.0f} MB | "
                        f"{ps_call:.3f} s ({n} rows) | {h} | {ratio} |")
        load_after = os.getloadavg()
        lines = [
            "", "## Python: `perfscape.open(run).table(\"event_values\").to_pandas()` beside Hatchet", "",
            f"`python3 bench/python_bench.py --ranks {a.ranks} --repeat {a.repeat}`: the release extension module, "
            f"Python {sys.version.split()[0]}, pyarrow 26.0.1, Hatchet {hatchet_version}; each figure is a new Python "
            "process from start to exit (imports included), wall seconds (perfscape: median of "
            f"{a.repeat}; Hatchet: one run) and peak RSS, and the call alone, timed inside the process after "
            "the imports (perfscape: median of as many more processes); page cache warm. Machine: "
            f"{os.cpu_count()} cores; "
            f"load average {load_before[0]:.2f} before, {load_after[0]:.2f} after.", "",
            "| Run | perfscape process | perfscape call (rows of event_values) | Hatchet process | Hatchet call "
            "(dataframe rows) | Hatchet / perfscape, process | call |",
            "|---|---|---|---|---|---|---|",
        ] + rows
        text = "\n".join(lines) + "\n"
        print(text)
        if a.out:
            Path(a.out).write_text(text)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
