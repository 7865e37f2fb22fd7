#!/usr/bin/env python3
"""Reference tables for `perfscape diff`: Hatchet's GraphFrame subtraction of two TAU runs.

Run once (the tables are committed): `python3 scripts/ref/hatchet_diff.py` with
`pip install llnl-hatchet` (made with Hatchet 2026.2.0, pandas 2.3). Reads
`../shared/corpus` (read-only) and writes
`crates/perfscape-analysis/tests/fixtures/hatchet-diff/<pair>.csv`, one row per Hatchet node
of the unified graph and rank:

    callpath, line, in_a, in_b, rank, time_a, time_b, time_diff, time_inc_a, time_inc_b, time_inc_diff

`callpath` is the node's path of names joined by ` => ` (Hatchet cuts the source location off a
name; `line` is the leaf's line). `*_diff` is `(gf_b - gf_a).dataframe` (Hatchet unifies the
two graphs and fills a (node, rank) missing in one run with 0); `*_a`/`*_b` are each run's own
values (0 where it lacks the node or rank). `in_a`/`in_b`: the node is in that run's graph.
Values in the files' unit (TAU TIME: microseconds).
"""
import csv
import glob
import os
import re
import sys
import tempfile
import warnings

import hatchet as ht

warnings.filterwarnings("ignore")
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
CORPUS = os.environ.get("PERFSCAPE_CORPUS", os.path.join(ROOT, "..", "shared", "corpus"))
OUT = os.path.join(ROOT, "crates", "perfscape-analysis", "tests", "fixtures", "hatchet-diff")

SS = "tau/taucmdr-mm-strong-scaling-1to8rank/"
PAIRS = [
    ("mm-np2-np4", SS + "np2", SS + "np4"),
    ("mm-np4-np4", SS + "np4", SS + "np4"),
    ("mm-np3-np8", SS + "np3", SS + "np8"),
    # A one-rank GraphFrame has no `rank` level: Hatchet subtracts its rank 0 from every rank
    # of the other run (kept to document it, see `hatchet_broadcasts_a_one_rank_run_...`).
    ("mm-np1-np8", SS + "np1", SS + "np8"),
    ("stencil-np4-profile-compinst", "tau-real/mpi-stencil-np4-profile", "tau-real/mpi-stencil-np4-compinst-callpath"),
]


def key(node):
    names = [n.frame["name"] for n in node.path()]
    return " => ".join(str(n) for n in names)


def per_node(gf):
    """(callpath, line) -> {rank: (time, time_inc)} of one GraphFrame."""
    out = {}
    df = gf.dataframe.reset_index()
    for _, row in df.iterrows():
        k = (key(row["node"]), int(row["line"]))
        out.setdefault(k, {})[int(row["rank"])] = (float(row["time"]), float(row["time (inc)"]))
    return out


def read(run):
    """Hatchet's reading of the `profile.N.C.T` files of `run` only: they are copied to a
    temporary directory first, since `from_tau` walks sub-directories too and would also read
    ParaProf's `oracle/` files beside them (and fail on their decimal values). As for
    `corpus/oracle`, the user-event section is cut off (Hatchet does not read user events,
    and its reader fails on some: "'NoneType' object has no attribute 'group'")."""
    with tempfile.TemporaryDirectory() as tmp:
        for f in glob.glob(os.path.join(CORPUS, run, "profile.*")):
            with open(f) as src, open(os.path.join(tmp, os.path.basename(f)), "w") as dst:
                for line in src:
                    if re.match(r"^\d+ userevents", line):
                        break
                    dst.write(line)
        return ht.GraphFrame.from_tau(tmp)


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, pa, pb in PAIRS:
        gfa, gfb = read(pa), read(pb)
        a, b = per_node(gfa), per_node(gfb)
        d = per_node(gfb - gfa)
        rows = []
        for k in sorted(d):
            for rank in sorted(d[k]):
                ta, tia = a.get(k, {}).get(rank, (0.0, 0.0))
                tb, tib = b.get(k, {}).get(rank, (0.0, 0.0))
                td, tid = d[k][rank]
                rows.append([k[0], k[1], int(k in a), int(k in b), rank, ta, tb, td, tia, tib, tid])
        path = os.path.join(OUT, name + ".csv")
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["callpath", "line", "in_a", "in_b", "rank", "time_a", "time_b", "time_diff",
                        "time_inc_a", "time_inc_b", "time_inc_diff"])
            w.writerows(rows)
        print(f"{path}: {len(d)} nodes, {len(rows)} rows ({pa} -> {pb})", file=sys.stderr)


if __name__ == "__main__":
    main()
