#!/usr/bin/env python3
"""Reference tables for `perfscape compare` (groups of runs, Welch's t-test): SciPy.

Run once (the tables are committed): `python3 scripts/ref/scipy_groups.py` with
`pip install llnl-hatchet scipy` (made with Hatchet 2026.2.0, SciPy 1.17.1). Reads
`../shared/corpus` (read-only); writes `crates/perfscape-analysis/tests/fixtures/groups/<set>.csv`,
one row per event:

    event, <g>_values (run values joined by ';', in run order), <g>_mean, <g>_sd, <g>_min,
    <g>_max for each group g, t, df, p

`sd` is the sample standard deviation (ddof=1); t, df, p are
`scipy.stats.ttest_ind(last_group, first_group, equal_var=False)` (empty when undefined). A run
without the event counts 0. Each run's value of an event is read here independently of
perfscape:

- `tau-mm`: TAU text profiles of `tau/taucmdr-mm-strong-scaling-1to8rank`, groups np2-np4 vs
  np5-np8; per flat timer (no ` => `) the exclusive TIME (µs) summed over the run's
  `profile.N.0.0` files and divided by their number (per thread, as `--normalize per-thread`).
- `tau-scale-seeds`: `tools/tau_scale.py` runs of the np64 example, 16 ranks, `--lines 200`, seeds
  1-3 vs 4-6 (made in a temporary directory; the test makes the same runs: the generator is
  deterministic); per flat timer the exclusive TIME (µs) summed over the run's files (the runs
  have the same threads: `--normalize total`).
- `caliper-lulesh`: `caliper/thicket-mpi-scaling`, groups 27+64 cores vs 125+216+343 cores; per
  Hatchet node (`from_caliperreader`, names of its path joined by ` => `) the `Avg time/rank`
  (s) of the node (one value per run, the file holds one profile).
"""
import csv
import glob
import math
import os
import re
import subprocess
import sys
import tempfile
import warnings

import hatchet as ht
from scipy import stats

warnings.filterwarnings("ignore")
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
CORPUS = os.environ.get("PERFSCAPE_CORPUS", os.path.join(ROOT, "..", "shared", "corpus"))
OUT = os.path.join(ROOT, "crates", "perfscape-analysis", "tests", "fixtures", "groups")
TIMER = re.compile(r'^"(.*)" (\S+) (\S+) (\S+) (\S+) (\S+) GROUP=')


def tau_run(d, per_thread=True):
    files = sorted(glob.glob(os.path.join(d, "profile.*")))
    sums = {}
    for f in files:
        with open(f) as fh:
            n = int(fh.readline().split()[0])
            fh.readline()
            for _ in range(n):
                m = TIMER.match(fh.readline())
                name = " ".join(m.group(1).split())
                if " => " in name:
                    continue
                sums[name] = sums.get(name, 0.0) + float(m.group(4))
    return {k: v / len(files) if per_thread else v for k, v in sums.items()}


def cali_run(f):
    gf = ht.GraphFrame.from_caliperreader(f)
    out = {}
    for _, r in gf.dataframe.reset_index().iterrows():
        key = " => ".join(n.frame["name"] for n in r["node"].path())
        out[key] = out.get(key, 0.0) + float(r["Avg time/rank"])
    return out


def write(name, groups):
    events = []
    for g in groups:
        for run in g[1]:
            for k in run:
                if k not in events:
                    events.append(k)
    path = os.path.join(OUT, name + ".csv")
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        header = ["event"]
        for g in groups:
            header += [f"{g[0]}_{c}" for c in ("values", "mean", "sd", "min", "max")]
        w.writerow(header + ["t", "df", "p"])
        for e in events:
            row = [e]
            samples = []
            for g in groups:
                vals = [run.get(e, 0.0) for run in g[1]]
                samples.append(vals)
                sd = stats.tstd(vals) if len(vals) > 1 else 0.0
                row += [";".join(repr(v) for v in vals), repr(sum(vals) / len(vals)), repr(float(sd)),
                        repr(min(vals)), repr(max(vals))]
            r = stats.ttest_ind(samples[-1], samples[0], equal_var=False)
            cells = [float(r.statistic), float(r.df), float(r.pvalue)]
            row += ["" if math.isnan(c) else repr(c) for c in cells]
            w.writerow(row)
    print(f"{path}: {len(events)} events")


def main():
    os.makedirs(OUT, exist_ok=True)
    ss = os.path.join(CORPUS, "tau", "taucmdr-mm-strong-scaling-1to8rank")
    write("tau-mm", [
        ("small", [tau_run(os.path.join(ss, f"np{k}")) for k in (2, 3, 4)]),
        ("large", [tau_run(os.path.join(ss, f"np{k}")) for k in (5, 6, 7, 8)]),
    ])
    with tempfile.TemporaryDirectory() as tmp:
        runs = {}
        for seed in range(1, 7):
            out = os.path.join(tmp, f"seed{seed}")
            subprocess.run([sys.executable, os.path.join(CORPUS, "..", "tools", "tau_scale.py"),
                            os.path.join(CORPUS, "tau-real", "mpi-stencil-np64-callpath-commmatrix"), out,
                            "--ranks", "16", "--lines", "200", "--seed", str(seed)],
                           check=True, stdout=subprocess.DEVNULL)
            runs[seed] = tau_run(out, per_thread=False)
        write("tau-scale-seeds", [
            ("before", [runs[s] for s in (1, 2, 3)]),
            ("after", [runs[s] for s in (4, 5, 6)]),
        ])
    cs = os.path.join(CORPUS, "caliper", "thicket-mpi-scaling")
    write("caliper-lulesh", [
        ("small", [cali_run(os.path.join(cs, f"{n}_cores.cali")) for n in (27, 64)]),
        ("large", [cali_run(os.path.join(cs, f"{n}_cores.cali")) for n in (125, 216, 343)]),
    ])


if __name__ == "__main__":
    main()
