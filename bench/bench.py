#!/usr/bin/env python3
"""Benchmark perfscape on real and generated runs; write BENCHMARKS.md (every figure the issues ask for).

usage: python3 bench/bench.py [--ranks 1024,4096] [--repeat 5] [--out BENCHMARKS.md] [--hatchet]
                             [--million] [--reopen-ranks 65536] [--serve-ranks 4096,65536]
                             [--no-serve] [--no-live] [--note TEXT] [--bin BIN] [--build-only]

Under the exclusive bench lock: `python3 bench/bench.py --build-only` first (builds the release binary
and every example), then `flock -x /tmp/bench.lock python3 bench/bench.py --bin BIN ...`, which then
compiles nothing.

- Builds perfscape in release mode (cargo build --release).
- Generates the scale runs with ../shared/tools/tau_scale.py from
  ../shared/corpus/tau-real/mpi-stencil-np64-callpath-commmatrix (--lines 5000) into a cache
  directory (bench/.runs, git-ignored; $PERFSCAPE_BENCH_RUNS names another, e.g. main's from a
  worktree), once.
- Times `perfscape summary RUN --no-cache` REPEAT times per input (page cache warm: one untimed run
  first) and reports the median wall time and the peak resident memory (GNU time's %M, see run_once).
- With --hatchet, also times Hatchet's GraphFrame.from_tau (if `import hatchet` works) on the np128
  corpus run and the 1,024 / 4,096-rank runs, all without user events (Hatchet's TAU reader fails on
  context user events): tau_scale --no-user-events, and for np128 a copy of its two metric
  directories cut after "0 aggregates" (Hatchet also walks into the run's oracle/ directory).
- Re-open from the cache: the same with `--refresh-cache` (load + write the cache) and from the
  cache, on every input and on the --reopen-ranks runs (65,536 ranks, 1.5 GB, by default). The
  cache directory is bench/.runs/profile-cache (PERFSCAPE_CACHE_DIR), not the user's.
- Other formats: `summary --no-cache` on the largest corpus file of each non-TAU reader (and every
  perf.data file, beside `perf script`).
- `perfscape serve` (node + chromium): p50/p99 of heat-map and overview requests and the page's
  first draw, on each --serve-ranks run (bench/serve_bench.mjs).
- Live mode: the live_latency and live_push_latency examples (64 and 1,024 ranks).
- With --million, the in-memory 1,000,000-thread x 1,000-event pyramid example.
- TAU's own tools are timed in the same run, alternating with perfscape on the same inputs
  (bench/peers.py's side_by_side): `pprof -s` built with g++ from ../shared/tools/tau-ref, and
  ParaProf `--pack` run headless from there (--paraprof-repeat rounds, or none with --no-paraprof).
  Every ratio in the output divides figures of this run; none is quoted from another day.
"""
import argparse
import json
import math
import os
import shlex
import shutil
import tempfile
import threading
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
CORPUS = SHARED / "corpus"
SRC_RUN = CORPUS / "tau-real" / "mpi-stencil-np64-callpath-commmatrix"
# Where the generated scale runs are kept (git-ignored). PERFSCAPE_BENCH_RUNS points a worktree's
# bench.py or peers.py at another checkout's runs instead of generating its own (1.5 GB at 65,536 ranks).
CACHE = Path(os.environ.get("PERFSCAPE_BENCH_RUNS") or ROOT / "bench" / ".runs")



def target_dir():
    return Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))


def build(sql=True):
    """The release binary; without `sql`, built without DataFusion (`perfscape sql`/`export`),
    which saves ~18 min of clean build when only loads are timed."""
    extra = [] if sql else ["--no-default-features"]
    subprocess.run(["cargo", "build", "--release", "-p", "perfscape-cli"] + extra, cwd=ROOT, check=True)
    exe = target_dir() / "release" / "perfscape"
    assert exe.exists(), exe
    return exe


# Every example a run may use, built by `--build-only` with the same commands `example` runs, so
# that a later run under the exclusive bench lock (with `--bin`) compiles nothing.
EXAMPLES = [("perfscape-formats", "series_scale"), ("perfscape-formats", "cache_reopen"),
            ("perfscape-analysis", "million"), ("perfscape-live", "live_latency"),
            ("perfscape-server", "live_push_latency"), ("perfscape-formats", "read_floor")]
# Set by main: with --bin, examples already built are run as they are (not rebuilt).
PREBUILT = False


def example(pkg, name):
    """The release binary of example `name` of package `pkg`: built here (`cargo build --release
    -p PKG --example NAME`) unless PREBUILT and it exists."""
    exe = target_dir() / "release" / "examples" / name
    if not (PREBUILT and exe.exists()):
        subprocess.run(["cargo", "build", "--release", "-q", "-p", pkg, "--example", name], cwd=ROOT, check=True)
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


GNU_TIME = "/usr/bin/time"


def run_once(cmd, timeout=None, capture=False):
    """Wall seconds, peak RSS (MB), exit code, stdout (if `capture`, else discarded) and stderr of one run
    of `cmd` (its process group killed after `timeout` s).

    The peak RSS is GNU time's %M (wait4's ru_maxrss of the command, forked from the small `time`
    process): ru_maxrss of a child spawned by Python directly starts at this Python process's own
    peak (the child execs out of the parent's address space), which would put a floor of 15-70 MB
    under every figure. The wall time is measured here and includes starting `time` (about 1 ms)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile("r") as rss_file:
        t0 = time.perf_counter()
        p = subprocess.Popen([GNU_TIME, "-f", "%M", "-o", rss_file.name] + [str(c) for c in cmd],
                             stdout=out if capture else subprocess.DEVNULL, stderr=err, start_new_session=True)
        timer = threading.Timer(timeout, lambda: os.killpg(p.pid, 9)) if timeout else None
        if timer:
            timer.start()
        p.wait()
        wall = time.perf_counter() - t0
        if timer:
            timer.cancel()
        # `time` writes "Command exited with non-zero status N" before the figure when the command fails.
        last = (rss_file.read().strip().splitlines() or ["0"])[-1]
        rss_kb = int(last) if last.isdigit() else 0
        out.seek(0)
        err.seek(0)
        return wall, rss_kb / 1024.0, p.returncode, out.read().decode(errors="replace"), \
            err.read().decode(errors="replace")


def timed(cmd, repeat, warm=True, timeout=None):
    """Median wall seconds and max peak RSS (MB) of `cmd` over `repeat` runs (exit 0, or 3 = loaded with
    warnings). Raises SystemExit with the last line of stderr if a run fails."""
    if warm:
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # warm the page cache
    walls, rss = [], []
    for _ in range(repeat):
        wall, mb, code, _out, err = run_once(cmd, timeout)
        if code not in (0, 3):
            last = [line for line in err.strip().splitlines() if line.strip()][-1:] or ["no message"]
            why = f"killed after {timeout:.0f} s" if timeout and wall >= timeout else f"exit {code}: {last[0].strip()}"
            raise SystemExit(why)
        walls.append(wall)
        rss.append(mb)
    return statistics.median(walls), max(rss)


def series_section(exe, repeat, peer):
    """Snapshot / merged loads beside ParaProf (timed alternating with perfscape, `peer`), and the
    live-mode scale example."""
    lines = ["", "## TAU snapshots and merged profiles", "",
             "| input | perfscape `summary` wall | peak RSS | ParaProf `--pack` (same run) | vs ParaProf |",
             "|---|---|---|---|---|"]
    for rel in ["tau-real/mpi-stencil-np8-snapshot", "tau-real/mpi-stencil-np4-merged",
                "tau-xml/tau224-classbreakdown-openmp/tauprofile.xml.gz"]:
        path = CORPUS / rel
        # What ParaProf reads there (tau-real/*/oracle/COMMANDS.txt): snapshot files with `-f snap`.
        snaps = sorted(str(p) for p in path.glob("snapshot.*")) if path.is_dir() else []
        merged = path / "tauprofile.xml"
        args = ["-f", "snap"] + snaps if snaps else [merged] if merged.exists() else [path]
        f = peer(path, pprof=False, paraprof_args=args)
        (wall, rss), pp = f["perfscape"], f.get("paraprof")
        pp_s = "%.3f s, %.0f MB" % pp if pp else "-"
        lines.append(f"| {rel} | {wall:.3f} s | {rss:.0f} MB | {pp_s} | {'%.0fx' % (pp[0] / wall) if pp else '-'} |")
    out = subprocess.run([example("perfscape-formats", "series_scale"), "1024", "100"], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout.strip()
    lines += ["", "Live-mode path (`cargo run --release -p perfscape-formats --example series_scale -- 1024 100`,",
              "one thread; synthetic snapshot files fed block by block through `SnapshotStream` + `Integrator`):", "",
              "> " + out]
    return lines


def cache_file(exe, run):
    """The cache entry a load of `run` reads (in $PERFSCAPE_CACHE_DIR, see main), found through the
    summary's notes."""
    out = subprocess.run([str(exe), "summary", str(run), "-f", "json"], check=True, capture_output=True,
                         text=True).stdout
    for note in json.loads(out)["notes"]:
        if note.startswith("read from the cache "):
            return Path(note[len("read from the cache "):])
    raise SystemExit(f"{run}: not read from the cache")


def reopen_section(exe, rows, inputs, repeat, extra_runs):
    """`perfscape summary` re-opening each run from its cache, beside the load from the files."""
    lines = ["", "## Re-open from the cache", "",
             "The first load writes a compact cache entry (in the cache directory, see CACHE.md); later loads read it",
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
        out = subprocess.run([example("perfscape-formats", "cache_reopen"), str(run), str(repeat)], cwd=ROOT,
                             check=True, capture_output=True, text=True).stdout.strip()
        details.append(f"- {row['label']}: {out}")
    lines += ["", "The same inside one process, `load()` only, no analysis",
              "(`cargo run --release -p perfscape-formats --example cache_reopen -- RUN`):", ""] + details
    return lines


HATCHET_RANKS = (128, 1024, 4096)
HATCHET_TIMEOUT_S = 600  # issue #4: Hatchet "where it finishes within 10 minutes"
NP128 = CORPUS / "tau-real" / "mpi-stencil-np128-callpath-multimetric"


def hatchet_cmd(run):
    code = ("import hatchet, sys; gf = hatchet.GraphFrame.from_tau(sys.argv[1]); "
            "print(len(gf.dataframe))")
    return [sys.executable, "-c", code, str(run)]


def corpus_nouser(src, out):
    """A copy of a corpus TAU run's metric directories (MULTI__*) with every profile file cut after its
    "0 aggregates" line (no user events) and without the run's oracle/ directory."""
    if out.exists():
        return out
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    for d in sorted(x for x in src.iterdir() if x.is_dir() and x.name.startswith("MULTI__")):
        (tmp / d.name).mkdir(parents=True)
        for f in sorted(d.glob("profile.*")):
            text = f.read_text()
            end = text.index("\n0 aggregates\n") + len("\n0 aggregates\n")
            (tmp / d.name / f.name).write_text(text[:end])
    tmp.rename(out)
    return out


def hatchet_section(exe, ranks_list, repeat):
    """Hatchet's GraphFrame.from_tau beside perfscape on the same runs without user events."""
    lines = ["", "## Hatchet `GraphFrame.from_tau` on the same runs without user events", "",
             "Hatchet's TAU reader fails on context user events, so both tools read runs without them:",
             "`tau_scale.py --no-user-events` runs, and for np128 a copy of its two metric directories with every file",
             "cut after `0 aggregates` (Hatchet also walks into the run's `oracle/` directory and fails on it).",
             "Hatchet reads only the callpath lines (its dataframe has one row per callpath node and thread);",
             "perfscape reads every line. Hatchet: %s of `python3 -c \"hatchet.GraphFrame.from_tau(RUN)\"`"
             % ("the median of 3 runs" if repeat >= 3 else "the median of %d run(s)" % repeat),
             "(one at 4,096 ranks), killed after %d s; perfscape `summary --no-cache` as above, which also warms the"
             % HATCHET_TIMEOUT_S,
             "page cache for Hatchet. Hatchet %s." % hatchet_version(), "",
             "| input | Hatchet wall | Hatchet peak RSS | Hatchet dataframe rows | perfscape wall, peak RSS | perfscape speed-up |",
             "|---|---|---|---|---|---|"]
    measured = {}
    for ranks in HATCHET_RANKS:
        if ranks == 128:
            run, label = corpus_nouser(NP128, CACHE / "np128-corpus-nouser"), "tau-real np128 callpath multimetric, no user events"
        else:
            run, label = scale_run(ranks, user_events=False), f"tau_scale {ranks} ranks, --lines 5000 --no-user-events"
        p_wall, p_rss = timed([str(exe), "summary", str(run), "--no-cache"], repeat)
        n = 1 if ranks >= 4096 else min(3, repeat)
        walls, rss, df_rows, error = [], [], "-", None
        for _ in range(n):
            wall, mb, code, out, err = run_once(hatchet_cmd(run), HATCHET_TIMEOUT_S, capture=True)
            if code != 0:
                last = [x for x in err.strip().splitlines() if x.strip()][-1:] or ["no message"]
                error = (f"killed after {HATCHET_TIMEOUT_S} s" if wall >= HATCHET_TIMEOUT_S
                         else f"exit {code}: `{last[0].strip()}`")
                break
            walls.append(wall)
            rss.append(mb)
            df_rows = out.strip().splitlines()[-1]
        if error:
            lines.append(f"| {label} | failed: {error} | - | - | {p_wall:.3f} s, {p_rss:.0f} MB | - |")
        else:
            hw = statistics.median(walls)
            measured[ranks] = hw
            lines.append(f"| {label} | {hw:.2f} s | {max(rss):.0f} MB | {int(df_rows):,} | {p_wall:.3f} s, {p_rss:.0f} MB "
                         f"| {hw / p_wall:.0f}x |")
        print(lines[-1], file=sys.stderr)
    for ranks in [r for r in ranks_list if r > max(HATCHET_RANKS)]:
        if 1024 in measured and 4096 in measured:
            growth = measured[4096] / measured[1024]
            est = measured[4096] * growth ** math.log(ranks / 4096, 4)
            why = ("not run: from 1,024 to 4,096 ranks its time grew %.1fx, so about %s s (%.1f h) expected, past the "
                   "%d-minute limit" % (growth, f"{est:,.0f}", est / 3600, HATCHET_TIMEOUT_S // 60))
        else:
            why = "not run"
        lines.append(f"| tau_scale {ranks} ranks, --lines 5000 --no-user-events | {why} | - | - | - | - |")
    return lines


def hatchet_version():
    try:
        out = subprocess.run([sys.executable, "-c", "import hatchet; print(hatchet.__version__)"],
                             capture_output=True, text=True, check=True).stdout.strip()
        return out or "(unknown version)"
    except (subprocess.CalledProcessError, OSError):
        return "(not importable)"


def largest(paths):
    paths = [p for p in paths if p.exists()]
    return max(paths, key=lambda p: size_of(p)) if paths else None


def size_of(path):
    path = Path(path)
    return path.stat().st_size if path.is_file() else sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def other_inputs():
    """(label, path, reference command or None) of the non-TAU inputs, found in the corpus."""
    c = CORPUS
    items = [
        ("Chrome trace, PyTorch Kineto", largest((c / "chrome-trace" / "hta-pytorch-kineto-ns-resolution").glob("*.json.gz"))),
        ("Chrome trace, catapult perf sampling",
         c / "chrome-trace" / "catapult-perf-sampling" / "perf_sampling_trace_with_trace_events.json.gz"),
        ("Chrome trace, TAU `trace.chrome.json` (4 ranks)", c / "tau-real" / "mpi-stencil-np4-trace" / "trace.chrome.json"),
        ("pprof", largest(c.rglob("large.cpu.pb.gz"))),
        ("pprof, 4 sample types", largest(c.rglob("alloc_objects.pb.gz"))),
    ]
    items = [(label, path, None) for label, path in items]
    for f in sorted((c / "perf-data").rglob("*"), key=lambda p: -p.stat().st_size):
        if f.is_file() and "perf.data" in f.name:
            items.append(("perf.data", f, ["perf", "script", "-i", str(f)]))
    items.append(("`perf script` text", largest((c / "perf-script").rglob("*.txt")), None))
    items.append(("CUBE", largest(c.rglob("*.cubex")), None))
    items.append(("ParaProf `.ppk`", largest(c.rglob("*.ppk")), None))
    hpc = [d for d in (c / "hpctoolkit").iterdir() if d.is_dir()]
    items.append(("HPCToolkit database (experiment.xml)", largest([d for d in hpc if (d / "experiment.xml").exists()]), None))
    items.append(("HPCToolkit database (meta.db, profile.db, cct.db)", largest([d for d in hpc if (d / "meta.db").exists()]), None))
    items.append(("Caliper `.cali`", largest((c / "caliper").rglob("*.cali")), None))
    items.append(("Caliper JSON", largest((c / "caliper").rglob("*.json")), None))
    return [(label, path, ref) for label, path, ref in items if path is not None]


def describe(exe, path):
    """A short account of what `summary` read (threads, events, warnings), from its JSON output."""
    out = subprocess.run([str(exe), "summary", str(path), "--no-cache", "-f", "json"], capture_output=True, text=True).stdout
    try:
        d = json.loads(out)
    except json.JSONDecodeError:
        return "?"
    ev = d.get("events", {})
    parts = [f"{d.get('format', '?')}", f"{d.get('threads', 0):,} thread(s)", f"{ev.get('flat', 0):,} flat events",
             f"{ev.get('callpath', 0):,} callpaths"]
    if ev.get("sample"):
        parts.append(f"{ev['sample']:,} sample events")
    if ev.get("user_events"):
        parts.append(f"{ev['user_events']:,} user events")
    if d.get("warnings"):
        parts.append(f"{len(d['warnings'])} warning(s)")
    return ", ".join(parts)


def other_formats_section(exe, repeat):
    lines = ["", "## Other formats: load + `perfscape summary`", "",
             "`perfscape summary FILE --no-cache` on the largest corpus input of each non-TAU reader (and every perf.data",
             "file), timed like the TAU runs above (median of %d after a warm-up, peak RSS). What was read comes from" % repeat,
             "`summary -f json`. The reference for perf.data is `perf script -i FILE > /dev/null` (%s), which decodes every"
             % perf_version(),
             "record too but does not aggregate; no `go tool pprof` is installed here.", "",
             "| input | input size | read as | perfscape wall | perfscape peak RSS | reference |",
             "|---|---|---|---|---|---|"]
    for label, path, ref in other_inputs():
        rel = path.relative_to(CORPUS)
        what = describe(exe, path)
        try:
            wall, rss = timed([str(exe), "summary", str(path), "--no-cache"], repeat)
            ours = (f"{wall:.3f} s", f"{rss:.0f} MB")
        except SystemExit as e:
            ours = (f"failed: {e}", "-")
        ref_s = "-"
        if ref:
            try:
                r_wall, r_rss = timed(ref, repeat)
                ref_s = f"{r_wall:.3f} s, {r_rss:.0f} MB"
            except SystemExit as e:
                ref_s = f"`perf script` failed: {e}"
        lines.append(f"| {label}: `{rel}` | {size_of(path) / 1e6:.2f} MB | {what} | {ours[0]} | {ours[1]} | {ref_s} |")
        print(lines[-1], file=sys.stderr)
    lines += ["", "A callpath event is a call-tree node (its parent and its own frame; the name is built when a view shows it), so",
              "a pprof file whose sampled stacks are nearly all distinct (`large.cpu`) becomes hundreds of thousands of nodes, not",
              "hundreds of thousands of full-path names; what its load and memory still spend is in \"Interning a call-tree node\" and",
              "\"Every cell in one arena\" below."]
    return lines


def perf_version():
    try:
        return subprocess.run(["perf", "--version"], capture_output=True, text=True, check=True).stdout.strip()
    except (subprocess.CalledProcessError, OSError):
        return "perf not installed"


def serve_section(exe, run, ranks, requests=200):
    out = subprocess.run(["node", str(ROOT / "bench" / "serve_bench.mjs"), str(exe), str(run), str(requests)],
                         check=True, capture_output=True, text=True).stdout
    sv = json.loads(out.strip().splitlines()[-1])
    th = f"{sv['threads']:,}"
    lines = ["", f"## `perfscape serve` on the {ranks:,}-rank run", "",
             f"`node bench/serve_bench.mjs perfscape {run.relative_to(ROOT)} {requests}`: the server's response time for {requests} sequential",
             "requests of each kind over loopback (gzip, JSON parsed by the client), and the page's time from navigation to every",
             "view drawn in headless Chromium (SwiftShader software WebGL, median of 3 after a warm-up).", "",
             "| request | p50 | p99 |", "|---|---|---|"]
    labels = [("matrix_whole", f"heat map, whole run ({sv['rows']} event rows x {th} threads -> {min(sv['rows'], 200)} x 400 cells)"),
              ("matrix_zoom", "heat map, random zoomed regions (-> at most 200 x 400 cells)"),
              ("matrix_lines", f"heat map of source lines ({sv['lines']:,} lines x {th} threads -> 300 x 400)"),
              ("overview_events", "overview of event rows (64 thread bins)"),
              ("overview_lines", "overview of source lines (skip > 20, bins of 4, 3 strips)")]
    for key, label in labels:
        lines.append("| %s | %.1f ms | %.1f ms |" % (label, sv[key]["p50_ms"], sv[key]["p99_ms"]))
    lines += ["", "Time to first complete draw of the page (7 views, %s ranks): %.2f s." % (th, sv["first_draw_ms"]["median"] / 1000.0)]
    return lines, sv


def million_section():
    wall, rss, code, out, err = run_once([example("perfscape-analysis", "million"), "1000000", "1000", "200"],
                                         capture=True)
    if code != 0:
        raise SystemExit(f"million example failed: {err.strip()[-500:]}")
    mm = json.loads(out.strip().splitlines()[-1])
    lines = ["", "## In memory: 1,000,000 threads x 1,000 events (10^9 values of one kind)", "",
             "`cargo run --release -p perfscape-analysis --example million -- 1000000 1000 200` builds the matrix with tau_scale.py's logic "
             "(f32, %.1f GB, generated in %.0f s), the max/sum pyramid (%.2f GB, built in %.1f s), and times 200 screen-sized "
             "requests of each kind (the computation the server does; JSON encoding of the answer adds a few ms). "
             "The whole example: %.0f s, %.1f GB peak RSS." % (
                 mm["matrix_bytes"] / 1e9, mm["generate_s"], mm["pyramid_bytes"] / 1e9, mm["pyramid_build_s"],
                 wall, rss / 1024), "",
             "| request | p50 | p99 |", "|---|---|---|"]
    for key, label in [("heatmap_whole_ms", "heat map, whole run -> 200 x 400 cells"),
                       ("heatmap_zoom_ms", "heat map, random regions -> 200 x 400"),
                       ("heatmap_deep_zoom_ms", "heat map, 50 rows x 2,000 threads (below the stored levels)"),
                       ("overview_ms", "overview (skip > 20, bins of 4, 3 strips, 64 thread bins)"),
                       ("terrain_ms", "terrain grid 40 x 64")]:
        lines.append("| %s | %.1f ms | %.1f ms |" % (label, mm[key][0], mm[key][1]))
    return lines, mm


LIVE_EXAMPLES = [
    ("perfscape-live", "live_latency",
     "From the moment the last rank's block of a sample is written to the moment the watcher announces the integrated "
     "sample (watch + integrate, no server), with inotify and with 100 ms polling; synthetic runs made of the real "
     "np8 snapshot files renamed to 64 / 1,024 ranks, every sample's blocks appended as fast as possible; last, a replay "
     "of the whole run at speed 0."),
    ("perfscape-server", "live_push_latency",
     "From the moment the last rank's block of a sample is written to the moment every one of 4 connected browser "
     "clients (WebSocket) has the sample's event, through the same path as `perfscape serve --watch` (watcher, "
     "integrator, session hub, WebSocket); the goal of issue #5 is <= 250 ms at 1,024 ranks."),
]


def live_section():
    lines = ["", "## Live mode: sample written -> integrated -> every browser client has it", ""]
    outs = {}
    for pkg, name, what in LIVE_EXAMPLES:
        cmd = ["cargo", "run", "--release", "-p", pkg, "--example", name, "--", "64", "1024"]
        out = subprocess.run([example(pkg, name), "64", "1024"], cwd=ROOT, check=True, capture_output=True,
                             text=True).stdout.strip()
        outs[name] = out
        lines += [f"`{' '.join(cmd)}`: {what}", "", out, ""]
    return lines[:-1], outs


def md_row(table, first):
    """The cells of the first row of a markdown `table` whose first cells equal `first`."""
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[:len(first)] == first:
            return cells
    return None


def ms(cell):
    return float(cell.split()[0]) if cell and cell.endswith(" ms") else None


def goals_section(rows, mm, live_outs, base_rss, served):
    """Where the issues' goals stand, computed from the figures above."""
    lines = ["", "## Goals of the issues, from the figures above", "", "| goal | measured | met |", "|---|---|---|"]

    def yes(ok):
        return "yes" if ok else "**no**"

    for r in rows:
        if r["ranks"] < 4096:
            continue
        if r.get("pprof"):
            up = r["pprof"][0] / r["wall"]
            lines.append(f"| >= 8x faster than TAU `pprof -s` at {r['ranks']:,} ranks (same run) | {up:.1f}x ({r['wall']:.3f} s vs {r['pprof'][0]:.3f} s) | {yes(up >= 8)} |")
        if r.get("paraprof"):
            up = r["paraprof"][0] / r["wall"]
            lines.append(f"| >= 100x faster than ParaProf `--pack` at {r['ranks']:,} ranks (same run) | {up:.0f}x ({r['wall']:.3f} s vs {r['paraprof'][0]:.2f} s) | {yes(up >= 100)} |")
    scale = [r for r in rows if r["ranks"] >= 1024]
    if scale:
        worst = max(scale, key=lambda r: r["rss"] / r["mb"])
        lines.append("| peak memory <= 1.5x the input (tau_scale runs) | at most %.2fx (%s: %.0f MB for %.1f MB) | %s |" % (
            worst["rss"] / worst["mb"], worst["label"], worst["rss"], worst["mb"], yes(worst["rss"] / worst["mb"] <= 1.5)))
    small = next((r for r in rows if r["ranks"] == 128), None)
    if small:
        lines.append("| (the same on np128, %.1f MB: %.0f MB, of which the process baseline is %.0f MB) | %.2fx | - |" % (
            small["mb"], small["rss"], base_rss, small["rss"] / small["mb"]))
    if mm:
        keys = ["heatmap_whole_ms", "heatmap_zoom_ms", "heatmap_deep_zoom_ms", "overview_ms", "terrain_ms"]
        worst = max(mm[k][1] for k in keys)
        lines.append(f"| any view request <= 50 ms at 10^6 threads x 10^3 events | slowest p99 {worst:.1f} ms | {yes(worst <= 50)} |")
    for ranks, sv in sorted(served.items()):
        keys = ["matrix_whole", "matrix_zoom", "matrix_lines", "overview_events", "overview_lines"]
        p50 = max(sv[k]["p50_ms"] for k in keys)
        p99 = max(sv[k]["p99_ms"] for k in keys)
        lines.append(f"| (for comparison: served over HTTP, {ranks:,} ranks, incl. JSON + gzip) | slowest p50 {p50:.1f} ms, slowest p99 {p99:.1f} ms | - |")
    push = live_outs.get("live_push_latency")
    row = md_row(push, ["1024"]) if push else None
    if row:
        p50, p95 = ms(row[3]), ms(row[4])
        lines.append(f"| live: sample written -> every browser client has it <= 250 ms at 1,024 ranks | p50 {p50} ms, p95 {p95} ms | {yes(p95 is not None and p95 <= 250)} |")
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", default="1024,4096")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--out", default=str(ROOT / "BENCHMARKS.md"))
    ap.add_argument("--hatchet", action="store_true")
    ap.add_argument("--no-serve", action="store_true", help="skip the serving benchmark (needs node + chromium)")
    ap.add_argument("--serve-ranks", default="4096,65536",
                    help="tau_scale runs the serving benchmark runs on (comma-separated)")
    ap.add_argument("--no-live", action="store_true", help="skip the live-mode latency examples")
    ap.add_argument("--million", action="store_true",
                    help="also run the in-memory 1,000,000-thread x 1,000-event pyramid benchmark (about 90 s, 8 GB)")
    ap.add_argument("--reopen-ranks", default="65536",
                    help="extra tau_scale runs measured only in the cache section (comma-separated; '' for none)")
    ap.add_argument("--note", default="", help="a sentence added to the introduction (e.g. on the machine's load)")
    ap.add_argument("--paraprof-repeat", type=int, default=3,
                    help="rounds of ParaProf --pack per TAU input (alternating with perfscape and pprof)")
    ap.add_argument("--no-paraprof", action="store_true", help="do not run ParaProf (Java 17)")
    ap.add_argument("--bin", help="the perfscape binary to time, built beforehand from this checkout "
                    "(default: build the release binary here; a timed run under the exclusive bench "
                    "lock should not compile; with it, examples already built are not rebuilt)")
    ap.add_argument("--build-only", action="store_true",
                    help="build the release binary and every example a run uses, then stop: run this "
                    "before taking the exclusive bench lock for a run with --bin")
    a = ap.parse_args()
    if a.build_only:
        build()
        for pkg, name in EXAMPLES:
            example(pkg, name)
        return
    global PREBUILT
    PREBUILT = bool(a.bin)
    command = "python3 bench/bench.py" + "".join(" " + shlex.quote(x) for x in sys.argv[1:])
    load_at_start = os.getloadavg()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", "crates", "Cargo.toml", "Cargo.lock", "web"],
                           cwd=ROOT, capture_output=True, text=True).stdout.strip()
    commit += " (with uncommitted changes in crates/ or web/)" if dirty else ""
    exe = Path(a.bin).resolve() if a.bin else build()
    CACHE.mkdir(parents=True, exist_ok=True)
    # Profile caches of the benchmark runs stay beside them in bench/.runs, not in the user's
    # cache directory (the 65,536-rank entry alone is ~100 MB); the examples run by cargo inherit it.
    os.environ["PERFSCAPE_CACHE_DIR"] = str(CACHE / "profile-cache")
    inputs = [("tau-real np128 callpath multimetric (2 x 128 files)", NP128, 128)]
    for r in [int(x) for x in a.ranks.split(",") if x]:
        inputs.append((f"tau_scale {r} ranks, --lines 5000", scale_run(r), r))
    import peers  # bench/peers.py (imports this module)
    tmp = Path(tempfile.mkdtemp(prefix="perfscape-bench-"))
    pprof_bin = peers.build_pprof(tmp)

    def peer(run, pprof=True, paraprof_args=None):
        return peers.side_by_side(exe, run, pprof_bin if pprof else None, tmp, a.repeat, a.paraprof_repeat,
                                  not a.no_paraprof, paraprof_args=paraprof_args)

    rows = []
    for label, run, ranks in inputs:
        mb = dir_bytes(run) / 1e6
        f = peer(run)
        wall, rss = f["perfscape"]
        # The floor under the load: listing and reading the same files, nothing else.
        floor = subprocess.run([example("perfscape-formats", "read_floor"), str(run), str(os.cpu_count()),
                                str(a.repeat)], cwd=ROOT, check=True, capture_output=True, text=True).stdout.strip()
        rows.append({"label": label, "ranks": ranks, "mb": mb, "wall": wall, "rss": rss,
                     "pprof": f.get("pprof"), "paraprof": f.get("paraprof"), "floor": floor})
        print(f"{label}: {wall:.3f} s, {rss:.0f} MB peak, input {mb:.1f} MB; peers {f}", file=sys.stderr)

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
        f"Regenerate with `{command}` (builds release, generates the runs",
        "with `../shared/tools/tau_scale.py` into `bench/.runs`, times each input "
        f"{a.repeat} times after one warm-up run and reports the median wall time and the peak RSS, GNU time's `%M` (wall times include about 1 ms for starting `time`);",
        "TAU's `pprof -s` (built from `../shared/tools/tau-ref`) and ParaProf `--pack` (%s) are timed in the same rounds, alternating with perfscape;"
        % ("not run" if a.no_paraprof else f"the first {a.paraprof_repeat} rounds"),
        "before this version the RSS was wait4's of a child of the Python script, which starts at the script's own peak,",
        "so small runs showed 15-20 MB that was Python's).",
        "",
        f"Machine: {os.cpu_count()} cores, {cpu}, {os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GB RAM. "
        f"Page cache warm. Built from commit {commit}. Load average (1/5/15 min) when the run started: "
        "%.2f / %.2f / %.2f." % load_at_start + (" " + a.note if a.note else ""),
        "",
        "## Load + `perfscape summary`",
        "",
        "| input | input size | perfscape wall | perfscape peak RSS | RSS / input | TAU `pprof -s` (same run) | ParaProf `--pack` (same run) | speed-up vs pprof | vs ParaProf |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        pp, para, wall = r["pprof"], r["paraprof"], r["wall"]
        pp_s = "%.3f s, %.0f MB" % pp if pp else "-"
        para_s = "%.2f s, %.2f GB" % (para[0], para[1] / 1024) if para else "-"
        up_pp = "%.1fx" % (pp[0] / wall) if pp else "-"
        up_para = "%.0fx" % (para[0] / wall) if para else "-"
        lines.append("| %s | %.1f MB | %.3f s | %.0f MB | %.2fx | %s | %s | %s | %s |" % (
            r["label"], r["mb"], wall, r["rss"], r["rss"] / r["mb"], pp_s, para_s, up_pp, up_para))
    lines += ["", "Reading the same files and nothing else, right after each input's rounds (the floor under a load: "
              "`cargo run --release -p perfscape-formats --example read_floor -- RUN %d %d`, listing included):" % (
                  os.cpu_count(), a.repeat), ""]
    lines += ["- %s: %s" % (r["label"], r["floor"]) for r in rows]
    if a.hatchet:
        lines += hatchet_section(exe, [i[2] for i in inputs], a.repeat)
    extra = [(f"tau_scale {r} ranks, --lines 5000", scale_run(r), r)
             for r in [int(x) for x in a.reopen_ranks.split(",") if x] if r not in [i[2] for i in inputs]]
    lines += reopen_section(exe, rows, inputs, a.repeat, extra)
    lines += series_section(exe, a.repeat, peer)
    lines += other_formats_section(exe, a.repeat)
    served = {}
    if not a.no_serve:
        for r in [int(x) for x in a.serve_ranks.split(",") if x]:
            try:
                section, served[r] = serve_section(exe, scale_run(r), r)
            except subprocess.CalledProcessError as e:
                # Node, playwright-core or Chromium missing (a new machine before .ci/run has
                # installed them), or the server failed: the run's other figures are kept.
                why = (e.stderr or "").strip().splitlines()[-1:] or [f"exit status {e.returncode}"]
                print(f"serve bench at {r} ranks failed: {e.stderr}", file=sys.stderr)
                section = ["", f"## `perfscape serve` on the {r:,}-rank run", "",
                           f"Not measured in this run: `bench/serve_bench.mjs` failed ({why[0]})."]
            lines += section
    mm = None
    if a.million:
        section, mm = million_section()
        lines += section
    live_outs = {}
    if not a.no_live:
        section, live_outs = live_section()
        lines += section
    base_wall, base_rss = timed([str(exe), "--help"], 3)
    lines += goals_section(rows, mm, live_outs, base_rss, served)
    lines += [
        "",
        "Process baseline (`perfscape --help`): %.0f MB peak RSS, a large part of the small runs' figures." % base_rss,
        "",
        "TAU's `pprof -s`, ParaProf and Hatchet were measured in this run, on this machine, alternating with perfscape.",
        "",
    ]
    shutil.rmtree(tmp, ignore_errors=True)  # the built pprof and ParaProf's working files
    Path(a.out).write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
