#!/usr/bin/env python3
"""Benchmark `perfscape summary` on real and generated TAU runs; write BENCHMARKS.md.

usage: python3 bench/bench.py [--ranks 1024,4096] [--repeat 5] [--out BENCHMARKS.md] [--hatchet]
                             [--reopen-ranks 65536]

- Builds perfscape in release mode (cargo build --release).
- Generates the scale runs with ../shared/tools/tau_scale.py from
  ../shared/corpus/tau-real/mpi-stencil-np64-callpath-commmatrix (--lines 5000) into a cache
  directory (bench/.runs, git-ignored), once.
- Times `perfscape summary RUN --no-cache` REPEAT times per input (page cache warm: one untimed run
  first) and reports the median wall time and the peak resident memory (from wait4's ru_maxrss).
- Re-open from the cache: the same with `--refresh-cache` (load + write the cache) and from the
  cache, on every input and on the --reopen-ranks runs (65,536 ranks, 1.5 GB, by default).
- With --hatchet, also times Hatchet's GraphFrame.from_tau on the same runs made with
  --no-user-events (Hatchet's TAU reader fails on context user events), if `import hatchet` works.
- Reference figures of TAU's own tools (measured on this kind of machine, given in the issue)
  are printed beside ours; they are not re-measured here (TAU is not installed).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
CORPUS = SHARED / "corpus"
SRC_RUN = CORPUS / "tau-real" / "mpi-stencil-np64-callpath-commmatrix"
CACHE = ROOT / "bench" / ".runs"

# Reference figures (issue #2 / #4, measured on this kind of machine): seconds and GB.
PPROF_S = {1024: 0.31, 4096: 1.24, 16384: 5.1}
PARAPROF = {1024: (4.5, 0.76), 4096: (11.4, 2.2), 16384: (41.0, 6.3)}
# tau-real/README.md timings for np128 (pprof on MULTI__TIME only; ParaProf --pack of both metrics).
PPROF_S[128] = 0.026
PARAPROF[128] = (1.376, None)
HATCHET_REF = {1024: 11.3, 4096: 159.0}


def target_dir():
    return Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))


def build():
    subprocess.run(["cargo", "build", "--release", "-p", "perfscape-cli"], cwd=ROOT, check=True)
    exe = target_dir() / "release" / "perfscape"
    assert exe.exists(), exe
    return exe


def scale_run(ranks, user_events=True):
    name = f"np{ranks}-lines5000" + ("" if user_events else "-nouser")
    out = CACHE / name
    if not (out / f"profile.{ranks - 1}.0.0").exists():
        cmd = [sys.executable, str(SHARED / "tools" / "tau_scale.py"), str(SRC_RUN), str(out),
               "--ranks", str(ranks), "--lines", "5000"]
        if not user_events:
            cmd.append("--no-user-events")
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return out


def dir_bytes(path):
    return sum(p.stat().st_size for p in Path(path).rglob("profile.*") if "oracle" not in p.parts)


def timed(cmd, repeat):
    """Median wall seconds and max peak RSS (MB) of `cmd` over `repeat` runs."""
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # warm the page cache
    walls, rss = [], []
    for _ in range(repeat):
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(p.pid, 0)
        walls.append(time.perf_counter() - t0)
        rss.append(usage.ru_maxrss / 1024.0)
        if os.waitstatus_to_exitcode(status) not in (0, 3):
            raise SystemExit(f"failed: {' '.join(map(str, cmd))}")
    return statistics.median(walls), max(rss)


# tau-real/README.md: ParaProf reading the same snapshot / merged runs (`--pack`, incl. ~0.36 s JVM start).
PARAPROF_SERIES = {"mpi-stencil-np8-snapshot": 0.690, "mpi-stencil-np4-merged": 0.631}


def series_section(exe, repeat):
    """Snapshot / merged loads beside ParaProf, and the live-mode scale example."""
    lines = ["", "## TAU snapshots and merged profiles", "",
             "| input | perfscape `summary` wall | peak RSS | ParaProf `--pack` (ref.) |", "|---|---|---|---|"]
    for rel in ["tau-real/mpi-stencil-np8-snapshot", "tau-real/mpi-stencil-np4-merged",
                "tau-xml/tau224-classbreakdown-openmp/tauprofile.xml.gz"]:
        wall, rss = timed([str(exe), "summary", str(CORPUS / rel), "--no-cache"], repeat)
        ref = PARAPROF_SERIES.get(Path(rel).name)
        lines.append(f"| {rel} | {wall:.3f} s | {rss:.0f} MB | {'%.3f s' % ref if ref else '-'} |")
    out = subprocess.run(["cargo", "run", "--release", "-q", "-p", "perfscape-formats", "--example",
                          "series_scale", "--", "1024", "100"], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout.strip()
    lines += ["", "Live-mode path (`cargo run --release -p perfscape-formats --example series_scale -- 1024 100`,",
              "one thread; synthetic snapshot files fed block by block through `SnapshotStream` + `Integrator`):", "",
              "> " + out]
    return lines


def cache_file(exe, run):
    """The cache a load of `run` reads (beside a writable run, else in the user cache directory)."""
    out = subprocess.run([str(exe), "summary", str(run), "-f", "json"], check=True, capture_output=True,
                         text=True).stdout
    for note in json.loads(out)["notes"]:
        if note.startswith("read from the cache "):
            return Path(note[len("read from the cache "):])
    raise SystemExit(f"{run}: not read from the cache")


def reopen_section(exe, rows, inputs, repeat, extra_runs):
    """`perfscape summary` re-opening each run from its cache, beside the load from the files."""
    lines = ["", "## Re-open from the cache", "",
             "The first load writes a compact cache (`RUN/.perfscape-cache`, see CACHE.md); later loads read it",
             "after checking every source file's size and modification time. `summary` wall times and peak RSS as",
             "above: from the files (`--no-cache`), from the files writing the cache (`--refresh-cache`), and from",
             "the cache.", "",
             "| input | from the files | + writing the cache | cache size | cache / input | re-open from the cache | peak RSS (files / cache) |",
             "|---|---|---|---|---|---|---|"]
    by_run = {str(r[1]): row for r, row in zip(inputs, rows)}
    details = []
    for label, run, _ranks in inputs + extra_runs:
        row = by_run.get(str(run))
        if row is None:
            wall, rss = timed([str(exe), "summary", str(run), "--no-cache"], repeat)
            row = {"label": label, "mb": dir_bytes(run) / 1e6, "wall": wall, "rss": rss}
        w_wall, _ = timed([str(exe), "summary", str(run), "--refresh-cache"], repeat)
        size = cache_file(exe, run).stat().st_size / 1e6
        r_wall, r_rss = timed([str(exe), "summary", str(run)], repeat)
        lines.append("| %s | %.3f s | %.3f s | %.1f MB | %.2fx | **%.3f s** | %.0f MB / %.0f MB |" % (
            row["label"], row["wall"], w_wall, size, size / row["mb"], r_wall, row["rss"], r_rss))
        out = subprocess.run(["cargo", "run", "--release", "-q", "-p", "perfscape-formats", "--example",
                              "cache_reopen", "--", str(run), str(repeat)], cwd=ROOT, check=True,
                             capture_output=True, text=True).stdout.strip()
        details.append(f"- {row['label']}: {out}")
    lines += ["", "The same inside one process, `load()` only, no analysis",
              "(`cargo run --release -p perfscape-formats --example cache_reopen -- RUN`):", ""] + details
    return lines


def hatchet_cmd(run):
    code = ("import hatchet, sys; gf = hatchet.GraphFrame.from_tau(sys.argv[1]); "
            "print(len(gf.dataframe))")
    return [sys.executable, "-c", code, str(run)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", default="1024,4096")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", default=str(ROOT / "BENCHMARKS.md"))
    ap.add_argument("--hatchet", action="store_true")
    ap.add_argument("--no-serve", action="store_true", help="skip the serving benchmark (needs node + chromium)")
    ap.add_argument("--million", action="store_true",
                    help="also run the in-memory 1,000,000-thread x 1,000-event pyramid benchmark (about 90 s, 8 GB)")
    ap.add_argument("--reopen-ranks", default="65536",
                    help="extra tau_scale runs measured only in the cache section (comma-separated; '' for none)")
    a = ap.parse_args()
    exe = build()
    CACHE.mkdir(parents=True, exist_ok=True)
    inputs = [("tau-real np128 callpath multimetric (2 x 128 files)", CORPUS / "tau-real" / "mpi-stencil-np128-callpath-multimetric", 128)]
    for r in [int(x) for x in a.ranks.split(",") if x]:
        inputs.append((f"tau_scale {r} ranks, --lines 5000", scale_run(r), r))
    rows = []
    for label, run, ranks in inputs:
        mb = dir_bytes(run) / 1e6
        wall, rss = timed([str(exe), "summary", str(run), "--no-cache"], a.repeat)
        row = {"label": label, "ranks": ranks, "mb": mb, "wall": wall, "rss": rss}
        if a.hatchet and ranks in HATCHET_REF or (a.hatchet and ranks == 128):
            hrun = run if ranks == 128 else scale_run(ranks, user_events=False)
            try:
                row["hatchet"] = timed(hatchet_cmd(hrun), 1 if ranks >= 4096 else 3)
            except SystemExit as e:
                row["hatchet_error"] = str(e)
        rows.append(row)
        print(f"{label}: {wall:.3f} s, {rss:.0f} MB peak, input {mb:.1f} MB", file=sys.stderr)

    cpu = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    lines = [
        "# Benchmarks",
        "",
        "Regenerate with `python3 bench/bench.py%s` (builds release, generates the runs" % (" --hatchet" if a.hatchet else ""),
        " with `../shared/tools/tau_scale.py`, times each input "
        f"{a.repeat} times after one warm-up run and reports the median wall time and the peak RSS).",
        "",
        f"Machine: {os.cpu_count()} cores, {cpu}. Page cache warm.",
        "",
        "## Load + `perfscape summary`",
        "",
        "| input | input size | perfscape wall | perfscape peak RSS | RSS / input | TAU `pprof -s` (ref.) | ParaProf `--pack` (ref.) | speed-up vs pprof | vs ParaProf |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        pp = PPROF_S.get(r["ranks"])
        para = PARAPROF.get(r["ranks"])
        wall = r["wall"]
        pp_s = "%.2f s" % pp if pp else "-"
        para_s = ("%.1f s, %.2f GB" % para if para[1] else "%.2f s" % para[0]) if para else "-"
        up_pp = "%.1fx" % (pp / wall) if pp else "-"
        up_para = "%.0fx" % (para[0] / wall) if para else "-"
        lines.append("| %s | %.1f MB | %.3f s | %.0f MB | %.2fx | %s | %s | %s | %s |" % (
            r["label"], r["mb"], wall, r["rss"], r["rss"] / r["mb"], pp_s, para_s, up_pp, up_para))
    if a.hatchet:
        lines += ["", "## Hatchet `GraphFrame.from_tau` on the same runs (made with `--no-user-events`)", "",
                  "| input | Hatchet wall | Hatchet peak RSS | perfscape speed-up |", "|---|---|---|---|"]
        for r in rows:
            if "hatchet" in r:
                hw, hr = r["hatchet"]
                lines.append(f"| {r['label']} | {hw:.2f} s | {hr:.0f} MB | {hw / r['wall']:.0f}x |")
            elif "hatchet_error" in r:
                lines.append(f"| {r['label']} | failed: {r['hatchet_error']} | - | - |")
    extra = [(f"tau_scale {r} ranks, --lines 5000", scale_run(r), r)
             for r in [int(x) for x in a.reopen_ranks.split(",") if x] if r not in [i[2] for i in inputs]]
    lines += reopen_section(exe, rows, inputs, a.repeat, extra)
    lines += series_section(exe, a.repeat)
    if not a.no_serve and 4096 in [r["ranks"] for r in rows]:
        run4096 = [r for r in inputs if r[2] == 4096][0][1]
        out = subprocess.run(["node", str(ROOT / "bench" / "serve_bench.mjs"), str(exe), str(run4096), "200"],
                             check=True, capture_output=True, text=True).stdout
        sv = json.loads(out.strip().splitlines()[-1])
        lines += ["", "## `perfscape serve` on the 4,096-rank run", "",
                  "Server response time of 200 sequential requests each over loopback (gzip, JSON parsed by the client), and the page's",
                  "time from navigation to every view drawn in headless Chromium (SwiftShader software WebGL, median of 3 after a warm-up).", "",
                  "| request | p50 | p99 |", "|---|---|---|"]
        labels = [("matrix_whole", "heat map, whole run (165 event rows x 4,096 threads -> 165 x 400 cells)"),
                  ("matrix_zoom", "heat map, random zoomed regions (-> at most 200 x 400 cells)"),
                  ("matrix_lines", "heat map of source lines (%d lines x 4,096 threads -> 300 x 400)" % sv["lines"]),
                  ("overview_events", "overview of event rows (64 thread bins)"),
                  ("overview_lines", "overview of source lines (skip > 20, bins of 4, 3 strips)")]
        for key, label in labels:
            lines.append("| %s | %.1f ms | %.1f ms |" % (label, sv[key]["p50_ms"], sv[key]["p99_ms"]))
        lines += ["", "Time to first complete draw of the page (7 views, 4,096 ranks): %.2f s." % (sv["first_draw_ms"]["median"] / 1000.0)]
    if a.million:
        subprocess.run(["cargo", "build", "--release", "-p", "perfscape-analysis", "--example", "million"], cwd=ROOT, check=True)
        out = subprocess.run([str(target_dir() / "release" / "examples" / "million"), "1000000", "1000", "200"],
                             check=True, capture_output=True, text=True).stdout
        mm = json.loads(out.strip().splitlines()[-1])
        lines += ["", "## In memory: 1,000,000 threads x 1,000 events (10^9 values of one kind)", "",
                  "`cargo run --release -p perfscape-analysis --example million` builds the matrix with tau_scale.py's logic "
                  "(f32, %.1f GB), the max/sum pyramid (%.2f GB, built in %.1f s), and times 200 screen-sized requests of each kind "
                  "(the computation the server does; JSON encoding of the answer adds a few ms)." % (
                      mm["matrix_bytes"] / 1e9, mm["pyramid_bytes"] / 1e9, mm["pyramid_build_s"]), "",
                  "| request | p50 | p99 |", "|---|---|---|"]
        for key, label in [("heatmap_whole_ms", "heat map, whole run -> 200 x 400 cells"),
                           ("heatmap_zoom_ms", "heat map, random regions -> 200 x 400"),
                           ("heatmap_deep_zoom_ms", "heat map, 50 rows x 2,000 threads (below the stored levels)"),
                           ("overview_ms", "overview (skip > 20, bins of 4, 3 strips, 64 thread bins)"),
                           ("terrain_ms", "terrain grid 40 x 64")]:
            lines.append("| %s | %.1f ms | %.1f ms |" % (label, mm[key][0], mm[key][1]))
    base_wall, base_rss = timed([str(exe), "--help"], 3)
    lines += [
        "",
        "Process baseline (`perfscape --help`): %.0f MB peak RSS, so small runs are dominated by it." % base_rss,
        "",
        "Reference figures for TAU `pprof -s` and ParaProf were measured on this kind of machine (2 cores) and are",
        "quoted from the issues; TAU itself is not installed here.",
        "",
    ]
    Path(a.out).write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
