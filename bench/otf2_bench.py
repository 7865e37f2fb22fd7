#!/usr/bin/env python3
"""OTF2 load: perfscape against the `otf2` Python reader, on the same archive, in one run.

Writes a synthetic Score-P-like archive with the `otf2` Python writer (pip `otf2`): LOCATIONS
MPI ranks, each EVENTS enter/leave events (a `timestep` containing `compute`, `MPI_Isend`,
`MPI_Irecv`, `MPI_Wait`; an isend to the next rank and an irecv from the previous one per
timestep), then times, alternating, REPEAT times each:
- `perfscape summary ARCHIVE --no-cache -f json` (the release binary given), and
- the Python reader iterating over every event (`otf2.reader.open(...).events`),
with /usr/bin/time -v for the wall time and peak resident memory. Prints one table (median,
min) and the archive's size; every ratio comes from this run only.

Usage: otf2_bench.py PERFSCAPE_BIN OUTDIR [LOCATIONS] [EVENTS_PER_LOCATION] [REPEAT]
(defaults 64 100000 3). Needs `otf2` importable by the Python running this script.
"""

import os
import re
import statistics
import subprocess
import sys

import otf2
from otf2.enums import Paradigm, RegionRole, GroupType


def write(out, locations, events):
    with otf2.writer.open(out, timer_resolution=1_000_000_000) as trace:
        d = trace.definitions
        node = d.system_tree_node("node")
        locs = [d.location("Master thread", group=d.location_group(f"MPI Rank {r}", system_tree_parent=node))
                for r in range(locations)]
        d.group("", group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.MPI, members=locs)
        world = d.comm("MPI_COMM_WORLD", group=d.group("", group_type=GroupType.COMM_GROUP,
                                                       paradigm=Paradigm.MPI, members=locs))
        reg = {n: d.region(n, region_role=RegionRole.FUNCTION,
                           paradigm=Paradigm.MPI if n.startswith("MPI_") else Paradigm.USER)
               for n in ("timestep", "compute", "MPI_Isend", "MPI_Irecv", "MPI_Wait")}
        per_step = 10  # enter/leave events per timestep
        for r, loc in enumerate(locs):
            w = trace.event_writer_from_location(loc)
            t = 0
            for step in range(events // per_step):
                w.enter(t, reg["timestep"])
                w.enter(t + 10, reg["MPI_Irecv"])
                w.mpi_irecv_request(t + 11, request_id=2 * step + 1)
                w.leave(t + 20, reg["MPI_Irecv"])
                w.enter(t + 30, reg["MPI_Isend"])
                w.mpi_isend(t + 31, receiver=(r + 1) % locations, communicator=world, msg_tag=0,
                            msg_length=4096, request_id=2 * step)
                w.leave(t + 40, reg["MPI_Isend"])
                w.enter(t + 50, reg["compute"])
                w.leave(t + 500 + (r % 7) * 10, reg["compute"])
                w.enter(t + 600, reg["MPI_Wait"])
                w.mpi_isend_complete(t + 610, request_id=2 * step)
                w.mpi_irecv(t + 620, sender=(r - 1) % locations, communicator=world, msg_tag=0,
                            msg_length=4096, request_id=2 * step + 1)
                w.leave(t + 700, reg["MPI_Wait"])
                w.leave(t + 800, reg["timestep"])
                t += 1000


def timed(cmd):
    p = subprocess.run(["/usr/bin/time", "-v", *cmd], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{cmd[0]} failed: {p.stderr[-2000:]}")
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", p.stderr).group(1)
    secs = sum(float(x) * 60 ** i for i, x in enumerate(reversed(wall.split(":"))))
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr).group(1)) / 1024
    return secs, rss


def main():
    exe, out = sys.argv[1], sys.argv[2]
    locations = int(sys.argv[3]) if len(sys.argv) > 3 else 64
    events = int(sys.argv[4]) if len(sys.argv) > 4 else 100_000
    repeat = int(sys.argv[5]) if len(sys.argv) > 5 else 3
    if not os.path.exists(os.path.join(out, "traces.otf2")):
        write(out, locations, events)
    load = os.getloadavg()[0]
    size = sum(os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk(out) for f in fs)
    reader = ("import otf2,sys\nn=0\nwith otf2.reader.open(sys.argv[1]) as t:\n"
              "    for _ in t.events: n+=1\nprint(n)")
    runs = {"perfscape": [], "otf2 Python reader": []}
    for _ in range(repeat):
        runs["perfscape"].append(timed([exe, "summary", os.path.join(out, "traces.otf2"), "--no-cache", "-f", "json"]))
        runs["otf2 Python reader"].append(timed([sys.executable, "-c", reader, os.path.join(out, "traces.otf2")]))
    print(f"archive: {locations} locations x {events} events (+ messages), {size / 2**20:.1f} MiB; "
          f"load average before the timings: {load:.2f}")
    print("| reader | wall median (min) | peak RSS median |")
    print("|---|---|---|")
    for k, v in runs.items():
        walls = [w for w, _ in v]
        print(f"| {k} | {statistics.median(walls):.2f} s ({min(walls):.2f}) | "
              f"{statistics.median([r for _, r in v]):.0f} MiB |")
    p, q = (statistics.median([w for w, _ in runs[k]]) for k in runs)
    print(f"perfscape is {q / p:.1f}x faster; its peak RSS is "
          f"{statistics.median([r for _, r in runs['perfscape']]) * 2**20 / size:.2f}x the archive")


if __name__ == "__main__":
    main()
