#!/usr/bin/env python3
"""Benchmark of runs side by side: `perfscape diff A B` against one `summary`, and against Hatchet
doing the same diff (`gf_b - gf_a` after two `from_tau`), on the same runs in the same bench run.

usage: python3 bench/compare_bench.py [--ranks 4096,16384] [--hatchet-ranks 1024,4096]
                                      [--repeat 5] [--out FILE.md]

- Runs: `tau_scale.py` runs of the np64 example (`--lines 5000`), seed 1 (A, bench.py's runs) and
  seed 2 (B), in bench/.runs. perfscape rows read runs with user events; the Hatchet rows read runs
  made with `--no-user-events` (Hatchet's TAU reader fails on context user events), and perfscape
  is timed on those same runs beside it.
- perfscape: `summary A --no-cache` and `diff A B --no-cache` (both loads included), medians of
  --repeat runs after one warm-up that fills the page cache; peak RSS is GNU time's %M.
- Hatchet: one run of `python3 -c "gf_a = from_tau(A); gf_b = from_tau(B); d = gf_b - gf_a"` per
  input (it takes minutes at 4,096 ranks), killed after 10 minutes.
- Served: `perfscape serve A B` on the 4,096-rank pair; REQUESTS requests of `/api/diff`,
  `/api/diff/threads`, `/api/diff/matrix` and `/api/diff/calltree` with varied parameters (kinds, sorts, normalizations,
  B − A or B / A, events), one at a time from this process over loopback: latency percentiles
  per endpoint (an upper bound of the server-side time: it includes HTTP on loopback).
- Prints a Markdown section (machine, load average before and after, every figure); --out writes it.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402
import peers  # noqa: E402  (machine, load)

HATCHET_TIMEOUT_S = 600


def run_at(ranks, seed, user_events=True):
    """The tau_scale run of `ranks` ranks with `seed` (seed 1 with user events is bench.py's)."""
    if seed == 1:
        return bench.scale_run(ranks, user_events)
    name = f"np{ranks}-lines5000" + ("" if user_events else "-nouser") + f"-seed{seed}"
    out = bench.CACHE / name
    if not (out / f"profile.{ranks - 1}.0.0").exists():
        cmd = [sys.executable, str(bench.SHARED / "tools" / "tau_scale.py"), str(bench.SRC_RUN), str(out),
               "--ranks", str(ranks), "--lines", "5000", "--seed", str(seed)]
        if not user_events:
            cmd.append("--no-user-events")
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return out


def hatchet_diff_cmd(a, b):
    code = ("import hatchet, sys, warnings; warnings.filterwarnings('ignore'); "
            "ga = hatchet.GraphFrame.from_tau(sys.argv[1]); gb = hatchet.GraphFrame.from_tau(sys.argv[2]); "
            "d = gb - ga; print(len(d.dataframe))")
    return [sys.executable, "-c", code, str(a), str(b)]


def served_latencies(exe, ra, rb, requests):
    """Per endpoint: the latencies (ms) of `requests` varied requests to `serve A B`."""
    p = subprocess.Popen([str(exe), "serve", str(ra), str(rb), "--no-token", "--no-open", "--no-cache"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        url = None
        for line in p.stdout:
            m = re.search(r" at (http://\S+)", line)
            if m:
                url = m.group(1).rstrip("/")
                break
        get = lambda path: json.load(urllib.request.urlopen(url + path, timeout=60))  # noqa: E731
        events = [r["event_a"] for r in get("/api/diff?n=50")["rows"] if r["event_a"] is not None and r["event_b"] is not None]
        kinds = ["exclusive", "inclusive", "calls"]
        variants = {
            "diff": [f"/api/diff?kind={k}&sort={s}&normalize={n}&callpaths={c}" for k in kinds
                     for s in ("abs_delta", "delta", "ratio") for n in ("total", "per_thread") for c in ("false", "true")],
            "diff/threads": [f"/api/diff/threads?event={e}&kind={k}" for e in events for k in kinds],
            "diff/matrix": [f"/api/diff/matrix?kind={k}&show={s}&w={w}" for k in kinds
                            for s in ("delta", "log_ratio") for w in (200, 400, 1200)],
            "diff/calltree": [f"/api/diff/calltree?normalize={n}&metric=0" for n in ("total", "per_thread")],
        }
        out = {}
        for name, paths in variants.items():
            lat = []
            for i in range(requests):
                t0 = time.perf_counter()
                get(paths[i % len(paths)])
                lat.append((time.perf_counter() - t0) * 1000)
            lat.sort()
            out[name] = (statistics.median(lat), lat[int(0.95 * (len(lat) - 1))], lat[int(0.99 * (len(lat) - 1))], len(paths))
        return out
    finally:
        p.terminate()
        p.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", default="4096,16384")
    ap.add_argument("--hatchet-ranks", default="1024,4096")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--serve-ranks", type=int, default=4096)
    ap.add_argument("--out")
    a = ap.parse_args()
    exe = bench.build()
    before = peers.load()
    lines = ["## Runs side by side: `perfscape diff` (bench/compare_bench.py)", "",
             f"Machine: {peers.machine()}. Load average before: {before}. Medians of {a.repeat} runs, `--no-cache`;"
             " both loads are inside the diff's time.", "",
             "| runs (A seed 1, B seed 2) | input MB (A+B) | summary A s | MB | diff A B s | MB | diff / summary |",
             "|---|---|---|---|---|---|---|"]
    for ranks in [int(r) for r in a.ranks.split(",") if r]:
        ra, rb = run_at(ranks, 1), run_at(ranks, 2)
        mb = (bench.dir_bytes(ra) + bench.dir_bytes(rb)) / 1e6
        s_wall, s_rss = bench.timed([exe, "summary", ra, "--no-cache"], a.repeat)
        d_wall, d_rss = bench.timed([exe, "diff", ra, rb, "--no-cache"], a.repeat)
        lines.append(f"| tau_scale {ranks:,} ranks, with user events | {mb:.0f} | {s_wall:.3f} | {s_rss:.0f} "
                     f"| {d_wall:.3f} | {d_rss:.0f} | {d_wall / s_wall:.2f}x |")
        print(lines[-1], file=sys.stderr)
    ra, rb = run_at(a.serve_ranks, 1), run_at(a.serve_ranks, 2)
    lines += ["", f"`perfscape serve A B` on the {a.serve_ranks:,}-rank pair: {a.requests} requests per endpoint, one at a time"
              " over loopback, cycling through the parameter combinations (each request computed, nothing cached but"
              " the match of the two runs):", "",
              "| endpoint | combinations | p50 ms | p95 ms | p99 ms |", "|---|---|---|---|---|"]
    for name, (p50, p95, p99, combos) in served_latencies(exe, ra, rb, a.requests).items():
        lines.append(f"| `/api/{name}` | {combos} | {p50:.1f} | {p95:.1f} | {p99:.1f} |")
        print(lines[-1], file=sys.stderr)
    lines += ["", f"Hatchet {bench.hatchet_version()} doing the same diff on runs without user events"
              f" (one run each, killed after {HATCHET_TIMEOUT_S} s), perfscape `diff --no-cache` on the same runs:", "",
              "| runs (A seed 1, B seed 2, no user events) | Hatchet `gf_b - gf_a` s | MB | perfscape diff s | MB | speed-up |",
              "|---|---|---|---|---|---|"]
    for ranks in [int(r) for r in a.hatchet_ranks.split(",") if r]:
        ra, rb = run_at(ranks, 1, False), run_at(ranks, 2, False)
        d_wall, d_rss = bench.timed([exe, "diff", ra, rb, "--no-cache"], a.repeat)
        wall, rss, code, _out, err = bench.run_once(hatchet_diff_cmd(ra, rb), HATCHET_TIMEOUT_S, capture=True)
        if code != 0:
            last = ([x for x in err.strip().splitlines() if x.strip()][-1:] or ["no message"])[0].strip()
            why = f"killed after {HATCHET_TIMEOUT_S} s" if wall >= HATCHET_TIMEOUT_S else f"exit {code}: `{last}`"
            lines.append(f"| tau_scale {ranks:,} ranks | failed: {why} | - | {d_wall:.3f} | {d_rss:.0f} | - |")
        else:
            lines.append(f"| tau_scale {ranks:,} ranks | {wall:.2f} | {rss:.0f} | {d_wall:.3f} | {d_rss:.0f} "
                         f"| {wall / d_wall:.0f}x |")
        print(lines[-1], file=sys.stderr)
    lines += ["", f"Load average after: {peers.load()}."]
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        Path(a.out).write_text(text)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    main()
