#!/usr/bin/env python3
"""Side-by-side benchmark: perfscape and the reference tools, on the same inputs, in the same run.

usage: python3 bench/peers.py [--ranks 4096,16384] [--repeat 7] [--paraprof-repeat 3]
                              [--no-paraprof] [--tree-contexts 1000000] [--chrome-mb 500]
                              [--tau-callpaths 1000000]
                              [--baseline OLD_PERFSCAPE] [--bin PERFSCAPE] [--out FILE.md]

- Builds perfscape (release) and TAU's own C++ `pprof` from ../shared/tools/tau-ref/ (g++, into a
  temporary directory), and runs ParaProf headless from there (`paraprof.sh --pack`, Java 17).
- TAU rows: the tau_scale runs of bench.py (bench/.runs or $PERFSCAPE_BENCH_RUNS, --lines 5000, with user events) at each
  --ranks. Per input, one untimed warm-up of each tool, then REPEAT rounds that alternate the tools
  (perfscape `summary --no-cache`, `pprof -s` run in the run's directory, ParaProf `--pack` to a
  new file in a temporary directory), so every ratio divides figures taken minutes apart under the
  same load. Medians of wall time and peak RSS (GNU time's %M).
- One large TAU file: a one-rank run of --tau-callpaths callpath lines (bench/gen_tau_callpaths.py,
  about 457 MB at 10^6), the three tools alternating as above (at most 3 rounds, ParaProf in 1).
- Call-tree rows (perfscape alone: no reference reader of pprof is installable here):
  pprof's large.cpu.pb.gz from the corpus, and a generated pprof profile with 10^6 calling
  contexts (bench/gen_pprof_tree.py, written to a temporary directory), and a generated Chrome
  trace of --chrome-mb MB (bench/gen_chrome_trace.py).
- --baseline OLD: an older perfscape binary timed in the same rounds, for before/after figures.
- --bin PERFSCAPE: time this binary instead of building one (so that a run under the exclusive
  bench lock, `flock -x /tmp/bench.lock python3 bench/peers.py --bin ...`, compiles nothing).
- Prints a Markdown section (machine, load average before and after, every figure) and writes it
  to --out when given.
"""
import argparse
import os
import platform
import statistics
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402  (scale_run, run_once, build, dir_bytes)

TAU_REF = bench.SHARED / "tools" / "tau-ref"


def load():
    return "%.2f %.2f %.2f" % os.getloadavg()


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def machine():
    cpus = os.cpu_count()
    mem = ""
    try:
        with open("/proc/meminfo") as f:
            kb = int(f.readline().split()[1])
            mem = f", {kb / 2**20:.0f} GiB"
    except OSError:
        pass
    return f"{platform.machine()}, {cpus} cores{mem}, {platform.system()} {platform.release()}"


def build_pprof(tmp):
    """TAU's own C++ `pprof`, built with g++ from ../shared/tools/tau-ref into `tmp` (about 2 s)."""
    pprof = Path(tmp) / "pprof"
    subprocess.run(["bash", str(TAU_REF / "build-pprof.sh"), str(pprof)], check=True, stdout=subprocess.DEVNULL)
    return pprof


def pprof_cmd(pprof, run):
    """(command, working directory) of `pprof -s` on `run`: it reads `profile.*` in the current
    directory, or with `-f MULTI__TIME/profile` the time metric of a multi-metric run."""
    run = Path(run)
    if (run / "MULTI__TIME").is_dir():
        return [pprof, "-s", "-f", "MULTI__TIME/profile"], run
    return [pprof, "-s"], run


def run_in(cmd, cwd, timeout=None):
    """bench.run_once of `cmd` started in `cwd`."""
    here = os.getcwd()
    os.chdir(cwd)
    try:
        return bench.run_once(cmd, timeout=timeout)
    finally:
        os.chdir(here)


def side_by_side(exe, run, pprof, tmp, repeat, paraprof_repeat, paraprof=True, ours=None, paraprof_args=None,
                 baseline=None):
    """perfscape (`ours`, default `summary --no-cache RUN`), TAU's `pprof -s` (when `pprof` is
    given) and ParaProf `--pack` (when `paraprof`) on one input, alternating: one untimed warm-up
    of each, then `repeat` rounds (ParaProf in the first `paraprof_repeat` of them). Returns
    {tool: (median wall s, median peak RSS MB)} for the tools that ran; every ratio taken from
    it divides figures measured minutes apart under the same load. `paraprof_args` are what
    ParaProf reads (default: the run directory; `-f snap FILES` for snapshots). ParaProf exits 0
    when it finds no profile, so a run that wrote no packed file is an error here. `baseline`, an
    older perfscape binary, is timed in the same rounds as "baseline" (before/after figures)."""
    ours = ours or [exe, "summary", "--no-cache", run]
    tools = {"perfscape": lambda k: bench.run_once(ours)}
    if baseline:
        tools["baseline"] = lambda k: bench.run_once([baseline] + list(ours[1:]))
    if pprof:
        cmd, cwd = pprof_cmd(pprof, run)
        tools["pprof"] = lambda k: run_in(cmd, cwd)

    def pack(k):
        out = Path(tmp) / f"pack-{os.getpid()}-{k}.ppk"
        try:
            args = paraprof_args or [Path(run).resolve()]
            r = run_in(["bash", TAU_REF / "paraprof.sh", "--pack", out] + list(args), tmp, timeout=600)
            if not out.exists():
                raise SystemExit(f"ParaProf wrote no packed profile for {run}: {r[4].strip()[-300:]}")
            return r
        finally:
            out.unlink(missing_ok=True)

    if paraprof and paraprof_repeat > 0:
        tools["paraprof"] = pack
    figures = {name: ([], []) for name in tools}
    for name, f in tools.items():
        if name != "paraprof":
            f(-1)  # warm the page cache
    for k in range(repeat):
        for name, f in tools.items():
            if name == "paraprof" and k >= paraprof_repeat:
                continue
            wall, peak, code = f(k)[:3]
            if code not in (0, 3):
                raise SystemExit(f"{name} failed on {run} (exit {code})")
            figures[name][0].append(wall)
            figures[name][1].append(peak)
    return {name: (median(w), median(r)) for name, (w, r) in figures.items() if w}


def tau_rows(label, mb, f, baseline):
    """The Markdown rows of one TAU input: `f` is what side_by_side gave (perfscape, pprof, and
    ParaProf and the baseline when they ran), `mb` the input's size."""
    (p, p_mb), (t, t_mb) = f["perfscape"], f["pprof"]
    pp = f.get("paraprof")
    rows = [f"| {label} | {mb:.0f} | {p:.3f} | {p_mb:.0f} | {t:.3f} | {t_mb:.0f} | "
            + (f"{pp[0]:.2f} | {pp[1]:.0f} | " if pp else "- | - | ")
            + f"{t / p:.1f}x | " + (f"{pp[0] / p:.0f}x |" if pp else "- |")]
    if "baseline" in f:
        rows.append(f"| (the baseline `{baseline}` in the same rounds: {f['baseline'][0]:.3f} s, "
                    f"{f['baseline'][1]:.0f} MB) | | | | | | | | | |")
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", default="4096,16384")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--paraprof-repeat", type=int, default=3)
    ap.add_argument("--no-paraprof", action="store_true")
    ap.add_argument("--tree-contexts", type=int, default=1_000_000)
    ap.add_argument("--tau-callpaths", type=int, default=1_000_000, help="callpath lines of the one-file TAU run (0: none)")
    ap.add_argument("--chrome-mb", type=int, default=500, help="size of the generated Chrome trace (0: none)")
    ap.add_argument("--baseline", help="an older perfscape binary, timed in the same rounds (before/after)")
    ap.add_argument("--bin", help="the perfscape binary to time (default: build the release binary)")
    ap.add_argument("--out")
    a = ap.parse_args()
    exe = Path(a.bin).resolve() if a.bin else bench.build(sql=False)
    tmp = Path(tempfile.mkdtemp(prefix="perfscape-peers-"))
    pprof = build_pprof(tmp)
    load_before = load()
    lines = ["## Side by side with TAU's tools (bench/peers.py)", "",
             f"Machine: {machine()}. Load average before: {load_before}."
             f" Medians of {a.repeat} alternating rounds (ParaProf: {a.paraprof_repeat}); `--no-cache`.", "",
             "| input | input MB | perfscape s | MB | pprof -s s | MB | ParaProf --pack s | MB | vs pprof | vs ParaProf |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for ranks in [int(r) for r in a.ranks.split(",") if r]:
        run = bench.scale_run(ranks)
        mb = bench.dir_bytes(run) / 1e6
        f = side_by_side(exe, run, pprof, tmp, a.repeat, a.paraprof_repeat, not a.no_paraprof, baseline=a.baseline)
        lines += tau_rows(f"tau_scale {ranks} ranks, --lines 5000", mb, f, a.baseline)
        print(lines[-1], file=sys.stderr)
    if a.tau_callpaths:
        one = tmp / "tau-callpaths"
        subprocess.run([sys.executable, str(Path(__file__).resolve().parent / "gen_tau_callpaths.py"), str(one),
                        "--callpaths", str(a.tau_callpaths)], check=True, stdout=subprocess.DEVNULL)
        mb = bench.dir_bytes(one) / 1e6
        f = side_by_side(exe, str(one), pprof, tmp, min(a.repeat, 3), 1, not a.no_paraprof, baseline=a.baseline)
        lines += tau_rows(f"gen_tau_callpaths.py --callpaths {a.tau_callpaths} (one file)", mb, f, a.baseline)
        print(lines[-1], file=sys.stderr)
        shutil.rmtree(one)
    lines += ["", "Call trees and a large trace (perfscape alone: no reference reader of these is installed here),"
              " `summary --no-cache`" + (f", alternating with the baseline `{a.baseline}`" if a.baseline else "") + ":", "",
              "| input | bytes (decompressed) | calling contexts | s | peak MB | baseline s | baseline MB |",
              "|---|---|---|---|---|---|---|"]
    here = Path(__file__).resolve().parent
    tree = tmp / "tree.pb.gz"
    subprocess.run([sys.executable, str(here / "gen_pprof_tree.py"), str(tree),
                    "--contexts", str(a.tree_contexts)], check=True, stderr=subprocess.DEVNULL)
    inputs = [("pprof large.cpu.pb.gz (corpus)", bench.CORPUS / "pprof" / "google-pprof-testdata" / "large.cpu.pb.gz"),
              (f"gen_pprof_tree.py --contexts {a.tree_contexts}", tree)]
    if a.chrome_mb:
        trace = tmp / "trace.json"
        subprocess.run([sys.executable, str(here / "gen_chrome_trace.py"), str(trace), "--mb", str(a.chrome_mb)],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        inputs.append((f"gen_chrome_trace.py --mb {a.chrome_mb} (Chrome JSON)", trace))
    import gzip
    for label, path in inputs:
        data = path.read_bytes()
        size = len(gzip.decompress(data)) if data[:2] == b"\x1f\x8b" else len(data)
        del data
        runs = {"perfscape": exe, "baseline": a.baseline} if a.baseline else {"perfscape": exe}
        figures = {name: ([], []) for name in runs}
        out = ""
        for name, binary in runs.items():
            bench.run_once([binary, "summary", "--no-cache", path])  # warm the page cache
        for _ in range(a.repeat):
            for name, binary in runs.items():
                wall, peak, code, stdout = bench.run_once([binary, "summary", "--no-cache", path], capture=True)[:4]
                assert code in (0, 3), (label, name, code)
                figures[name][0].append(wall)
                figures[name][1].append(peak)
                out = stdout if name == "perfscape" else out
        events = next((ln for ln in out.splitlines() if ln.startswith("Events:")), "")
        contexts = events.split(",")[1].strip().split()[0] if "," in events else "?"
        base = figures.get("baseline")
        lines.append(f"| {label} | {size / 1e6:.1f} MB | {contexts} | {median(figures['perfscape'][0]):.3f} | "
                     f"{median(figures['perfscape'][1]):.0f} | "
                     + (f"{median(base[0]):.3f} | {median(base[1]):.0f} |" if base else "- | - |"))
        print(lines[-1], file=sys.stderr)
    # The built pprof, the generated tree and trace: nothing is left in the temporary directory.
    shutil.rmtree(tmp, ignore_errors=True)
    lines += ["", f"Load average after: {load()}.", ""]
    text = "\n".join(lines)
    print(text)
    if a.out:
        Path(a.out).write_text(text)


if __name__ == "__main__":
    main()
