#!/usr/bin/env python3
"""Side-by-side benchmark: perfscape and the reference tools, on the same inputs, in the same run.

usage: python3 bench/peers.py [--ranks 4096,16384] [--repeat 7] [--paraprof-repeat 3]
                              [--no-paraprof] [--tree-contexts 1000000] [--out FILE.md]

- Builds perfscape (release) and TAU's own C++ `pprof` from ../shared/tools/tau-ref/ (g++, into a
  temporary directory), and runs ParaProf headless from there (`paraprof.sh --pack`, Java 17).
- TAU rows: the tau_scale runs of bench.py (bench/.runs, --lines 5000, with user events) at each
  --ranks. Per input, one untimed warm-up of each tool, then REPEAT rounds that alternate the tools
  (perfscape `summary --no-cache`, `pprof -s` run in the run's directory, ParaProf `--pack` to a
  new file in a temporary directory), so every ratio divides figures taken minutes apart under the
  same load. Medians of wall time and peak RSS (GNU time's %M).
- Call-tree rows (perfscape alone: no reference reader of pprof is installable here):
  pprof's large.cpu.pb.gz from the corpus, and a generated pprof profile with 10^6 calling
  contexts (bench/gen_pprof_tree.py, written to a temporary directory).
- Prints a Markdown section (machine, load average before and after, every figure) and writes it
  to --out when given.
"""
import argparse
import os
import platform
import statistics
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", default="4096,16384")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--paraprof-repeat", type=int, default=3)
    ap.add_argument("--no-paraprof", action="store_true")
    ap.add_argument("--tree-contexts", type=int, default=1_000_000)
    ap.add_argument("--out")
    a = ap.parse_args()
    exe = bench.build()
    tmp = Path(tempfile.mkdtemp(prefix="perfscape-peers-"))
    pprof = tmp / "pprof"
    subprocess.run(["bash", str(TAU_REF / "build-pprof.sh"), str(pprof)], check=True,
                   stdout=subprocess.DEVNULL)
    load_before = load()
    lines = ["## Side by side with TAU's tools (bench/peers.py)", "",
             f"Machine: {machine()}. Load average before: {load_before}."
             f" Medians of {a.repeat} alternating rounds (ParaProf: {a.paraprof_repeat}); `--no-cache`.", "",
             "| input | input MB | perfscape s | MB | pprof -s s | MB | ParaProf --pack s | MB | vs pprof | vs ParaProf |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for ranks in [int(r) for r in a.ranks.split(",") if r]:
        run = bench.scale_run(ranks)
        mb = bench.dir_bytes(run) / 1e6
        times = {"perfscape": [], "pprof": [], "paraprof": []}
        rss = {"perfscape": [], "pprof": [], "paraprof": []}

        def ours():
            return bench.run_once([exe, "summary", "--no-cache", run])

        def theirs():
            cwd = os.getcwd()
            os.chdir(run)
            try:
                return bench.run_once([pprof, "-s"])
            finally:
                os.chdir(cwd)

        def paraprof(k):
            out = tmp / f"pack-{ranks}-{k}.ppk"
            cwd = os.getcwd()
            os.chdir(tmp)
            try:
                return bench.run_once(["bash", TAU_REF / "paraprof.sh", "--pack", out, run], timeout=600)
            finally:
                os.chdir(cwd)
                out.unlink(missing_ok=True)

        ours(), theirs()  # warm the page cache
        for k in range(a.repeat):
            for name, f in (("perfscape", ours), ("pprof", theirs)):
                wall, peak, code = f()[:3]
                assert code in (0, 3), (name, ranks, code)
                times[name].append(wall)
                rss[name].append(peak)
            if not a.no_paraprof and k < a.paraprof_repeat:
                wall, peak, code = paraprof(k)[:3]
                assert code == 0, ("paraprof", ranks, code)
                times["paraprof"].append(wall)
                rss["paraprof"].append(peak)
        p, t, pp = (median(times[n]) for n in ("perfscape", "pprof", "paraprof"))
        lines.append(
            f"| tau_scale {ranks} ranks, --lines 5000 | {mb:.0f} | {p:.3f} | {median(rss['perfscape']):.0f} "
            f"| {t:.3f} | {median(rss['pprof']):.0f} | "
            + (f"{pp:.2f} | {median(rss['paraprof']):.0f} | " if times["paraprof"] else "- | - | ")
            + f"{t / p:.1f}x | " + (f"{pp / p:.0f}x |" if times["paraprof"] else "- |"))
        print(lines[-1], file=sys.stderr)
    lines += ["", "Call trees (perfscape alone), `summary --no-cache`:", "",
              "| input | bytes (decompressed) | calling contexts | s | peak MB |", "|---|---|---|---|---|"]
    tree = tmp / "tree.pb.gz"
    subprocess.run([sys.executable, str(Path(__file__).resolve().parent / "gen_pprof_tree.py"), str(tree),
                    "--contexts", str(a.tree_contexts)], check=True, stderr=subprocess.DEVNULL)
    import gzip
    for label, path in (("pprof large.cpu.pb.gz (corpus)",
                         bench.CORPUS / "pprof" / "google-pprof-testdata" / "large.cpu.pb.gz"),
                        (f"gen_pprof_tree.py --contexts {a.tree_contexts}", tree)):
        size = len(gzip.decompress(path.read_bytes()))
        bench.run_once([exe, "summary", "--no-cache", path])
        walls, peaks, out = [], [], ""
        for _ in range(a.repeat):
            wall, peak, code, stdout = bench.run_once([exe, "summary", "--no-cache", path], capture=True)[:4]
            assert code in (0, 3), (label, code)
            walls.append(wall)
            peaks.append(peak)
            out = stdout
        events = next((ln for ln in out.splitlines() if ln.startswith("Events:")), "")
        contexts = events.split(",")[1].strip().split()[0] if "," in events else "?"
        lines.append(f"| {label} | {size / 1e6:.1f} MB | {contexts} | {median(walls):.3f} | {median(peaks):.0f} |")
        print(lines[-1], file=sys.stderr)
    lines += ["", f"Load average after: {load()}.", ""]
    text = "\n".join(lines)
    print(text)
    if a.out:
        Path(a.out).write_text(text)


if __name__ == "__main__":
    main()
