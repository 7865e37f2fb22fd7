#!/usr/bin/env python3
"""Paired alternation of perfscape binaries on one input: the figure for a change of a few
milliseconds, which the medians of bench/peers.py's 7 rounds cannot see on a machine whose speed
drifts.

usage: BINS='{"before": "/path/old", "after": "/path/new"}' python3 bench/paired.py RUN ROUNDS

- One untimed warm-up of each binary (page cache), then ROUNDS rounds of `summary RUN --no-cache`
  with each binary in turn, the order swapped every round.
- Prints, per binary, the median wall time and the median user + system CPU time of its runs
  (this process's children's rusage), and for two binaries the median of the paired wall
  differences (second minus first, round by round), with the load average before and after.
"""
import json
import os
import resource
import statistics
import subprocess
import sys
import time


def one(binary, run):
    """Wall and CPU seconds of one `summary --no-cache` of `run` by `binary`."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    done = subprocess.run([binary, "summary", run, "--no-cache"], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL)
    # 3: the summary was written, with warnings about the input (see `perfscape --help`).
    if done.returncode not in (0, 3):
        raise subprocess.CalledProcessError(done.returncode, done.args)
    wall = time.perf_counter() - t
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def main():
    run, rounds = sys.argv[1], int(sys.argv[2])
    bins = json.loads(os.environ["BINS"])
    print("load average before:", " ".join(f"{x:.2f}" for x in os.getloadavg()))
    for b in bins.values():
        one(b, run)
    res = {k: [] for k in bins}
    for i in range(rounds):
        order = list(bins.items()) if i % 2 == 0 else list(reversed(bins.items()))
        for k, b in order:
            res[k].append(one(b, run))
    for k, v in res.items():
        print(f"{k}: wall {statistics.median(x[0] for x in v) * 1000:.1f} ms, "
              f"CPU {statistics.median(x[1] for x in v) * 1000:.1f} ms ({rounds} rounds)")
    if len(bins) == 2:
        a, b = res.values()
        d = [(y[0] - x[0]) * 1000 for x, y in zip(a, b)]
        print(f"median paired wall difference (second - first): {statistics.median(d):+.1f} ms")
    print("load average after:", " ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
