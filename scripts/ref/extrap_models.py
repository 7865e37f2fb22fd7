#!/usr/bin/env python3
"""Reference performance models made by Extra-P itself, for `pmnf_extrap.rs`.

Run with a Python that has Extra-P (`pip install extrap`; made with extrap 4.2.5, numpy 1.26):

    /tmp/refenv/bin/python scripts/ref/extrap_models.py

It writes, under `crates/perfscape-analysis/tests/fixtures/extrap/`:

* `cubeset.json`: `../shared/corpus/cube/extrap-mm-single-parameter-cubeset` (9 CUBE files,
  parameter x) read by Extra-P's own CUBE reader exactly as `extrap --cube DIR` does
  (`CubeFileReader2`, weak scaling, exclusive values, one measurement per location), and
  modelled with the default single-parameter modeler (`ModelGenerator(experiment)`, the
  `Default` = `Basic` modeler, mean of the values). One entry per callpath x metric.
* `tau-strong-scaling.json`: `../shared/corpus/tau/taucmdr-mm-strong-scaling-1to8rank/np{1..8}`
  parsed here (independently of perfscape): per flat event (no ` => ` in its name), the mean
  over ranks (over all files of the run; a rank without the event counts 0) of its exclusive
  and of its inclusive TIME, in microseconds as in the files. Events present in every run are
  written to an Extra-P text input (`PARAMETER p`, `POINTS`, `REGION`, `METRIC`, `DATA`), which
  Extra-P's text reader reads and the default modeler models.
* `synthetic.json`: made-up data sets (a seeded random generator) that exercise the modeler
  beyond the corpus runs: every candidate term with and without a constant, noise, several
  repetitions per point, shrinking data, parameter values below 1 (no log terms), zeros and
  negative values. Written as Extra-P text input (one file per set of parameter values) and
  modelled like the TAU input.

Every model entry holds the measurements Extra-P used (`x`, `values`, and Extra-P's `mean`) and
its model: constant, terms (coefficient, polynomial exponent as numerator/denominator, log
exponent), RSS, SMAPE, AR2 and the formula as Extra-P prints it. Floats are written with
`repr`, so they read back exactly.
"""
import json
import math
import re
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

import extrap
from extrap.entities.hypotheses import ConstantHypothesis
from extrap.entities.scaling_type import ScalingType
from extrap.fileio.file_reader.cube_file_reader2 import CubeFileReader2
from extrap.fileio.file_reader.text_file_reader import TextFileReader
from extrap.modelers.model_generator import ModelGenerator

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpus"
OUT = ROOT / "crates" / "perfscape-analysis" / "tests" / "fixtures" / "extrap"


def check_float(v):
    v = float(v)
    if not math.isfinite(v):
        raise ValueError(f"non-finite value {v}")
    return v


def model_entry(model, measurements, param):
    """One model as JSON: the measurements it was made from and Extra-P's hypothesis."""
    hyp = model.hypothesis
    fn = hyp.function
    terms = []
    for ct in fn.compound_terms:
        poly, log = (0, 1), 0
        for st in ct.simple_terms:
            if st.term_type == "polynomial":
                poly = (st.exponent.numerator, st.exponent.denominator)
            else:
                log = int(st.exponent)
        terms.append({"coefficient": check_float(ct.coefficient), "poly": list(poly), "log": log})
    points = []
    for m in measurements:
        values = np.ma.getdata(m.values).astype(float).ravel().tolist() if m.values is not None else [m.mean]
        merged = not np.ma.mean(np.ma.array(m.values)) == m.mean if m.values is not None else True
        points.append({
            "x": check_float(m.coordinate[0]),
            "values": [check_float(v) for v in values],
            "mean": check_float(m.mean),
            # True where Extra-P's mean is not the mean of `values` (a callpath merged into its
            # parent: Extra-P adds the means, not the values).
            "merged": bool(merged),
        })
    return {
        "constant": check_float(fn.constant_coefficient),
        "terms": terms,
        "is_constant_hypothesis": isinstance(hyp, ConstantHypothesis),
        "rss": check_float(hyp.RSS),
        "smape": check_float(hyp.SMAPE),
        "ar2": check_float(hyp.AR2),
        "formula": fn.to_string(param),
        "points": points,
    }


def sorted_names(message):
    """A reader warning with its list of metric names sorted (Extra-P lists a set, in hash order)."""
    m = re.match(r"(.*no data: )(.*)(\. For more.*)", message, re.S)
    if not m:
        return message
    return m.group(1) + ", ".join(sorted(m.group(2).split(", "))) + m.group(3)


def model_experiment(experiment):
    gen = ModelGenerator(experiment)  # modeler "Default", Measure.MEAN: what `extrap` runs
    assert type(gen.modeler).__name__ == "SingleParameterModeler", type(gen.modeler)
    gen.model_all()
    return gen.models


def cubeset():
    path = CORPUS / "cube" / "extrap-mm-single-parameter-cubeset"
    reader = CubeFileReader2()
    reader.scaling_type = ScalingType.WEAK  # `extrap --cube` default
    reader.keep_values = True  # only to write the values; the modelling is the same
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        experiment = reader.read_experiment(str(path))
    param = str(experiment.parameters[0])
    models = model_experiment(experiment)
    entries = []
    for (callpath, metric), model in models.items():
        e = {"callpath": callpath.name, "metric": metric.name}
        e.update(model_entry(model, experiment.measurements[(callpath, metric)], param))
        entries.append(e)
    return {
        "source": "../shared/corpus/cube/extrap-mm-single-parameter-cubeset",
        "extrap_version": extrap.__version__,
        "numpy_version": np.__version__,
        "reader": "CubeFileReader2, scaling weak, exclusive values, values = one per location",
        "parameter": param,
        "reader_warnings": sorted({sorted_names(str(w.message)) for w in caught}),
        "models": entries,
    }


TIMER = re.compile(r'^"(.*)"\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+GROUP="(.*)"\s*$')


def read_tau_profile(path):
    """{event name (trimmed): (exclusive, inclusive)} of the timers of one `profile.N.0.0`."""
    lines = path.read_text().splitlines()
    count = int(lines[0].split()[0])
    if "_MULTI_" in lines[0] and not lines[0].split()[1].endswith("TIME"):
        raise ValueError(f"{path}: not a TIME profile")
    out = {}
    for line in lines[2:2 + count]:
        m = TIMER.match(line)
        if not m:
            raise ValueError(f"{path}: bad timer line {line!r}")
        name = m.group(1).strip()
        out[name] = (float(m.group(4)), float(m.group(5)))
    return out


def tau_strong_scaling():
    base = CORPUS / "tau" / "taucmdr-mm-strong-scaling-1to8rank"
    runs = {}
    for np_ in range(1, 9):
        files = sorted((base / f"np{np_}").glob("profile.*.0.0"))
        assert len(files) == np_, files
        per_rank = [read_tau_profile(f) for f in files]
        names = {n for r in per_rank for n in r if " => " not in n}
        means = {}
        for n in names:
            for k, kind in enumerate(("exclusive", "inclusive")):
                total = sum(r[n][k] for r in per_rank if n in r)  # absent on a rank: 0
                means.setdefault(kind, {})[n] = total / len(files)
        runs[np_] = means
    points = sorted(runs)
    out = {
        "source": "../shared/corpus/tau/taucmdr-mm-strong-scaling-1to8rank/np{1..8}",
        "extrap_version": extrap.__version__,
        "numpy_version": np.__version__,
        "parameter": "p",
        "points": points,
        "kinds": {},
    }
    for kind in ("exclusive", "inclusive"):
        every = set.intersection(*(set(runs[p][kind]) for p in points))
        missing = sorted(set.union(*(set(runs[p][kind]) for p in points)) - every)
        events = sorted(every)
        text = ["PARAMETER p", "POINTS " + " ".join(str(p) for p in points), "", "METRIC time"]
        for i, ev in enumerate(events):
            # Extra-P's text format splits on whitespace: the region is named by index here and
            # mapped back to the event name in the JSON.
            text.append(f"REGION e{i}")
            for p in points:
                text.append("DATA " + repr(runs[p][kind][ev]))
        text_input = "\n".join(text) + "\n"
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            f.write(text_input)
            tmp = f.name
        reader = TextFileReader()
        reader.keep_values = True
        experiment = reader.read_experiment(tmp)
        Path(tmp).unlink()
        models = model_experiment(experiment)
        entries = []
        for (callpath, metric), model in models.items():
            ev = events[int(callpath.name[1:])]
            e = {"event": ev}
            e.update(model_entry(model, experiment.measurements[(callpath, metric)], "p"))
            assert [pt["values"] for pt in e["points"]] == [[runs[p][kind][ev]] for p in points]
            entries.append(e)
        out["kinds"][kind] = {
            "extrap_text_input": text_input,
            "events_missing_in_some_run": missing,
            "models": entries,
        }
    return out


def model_text_input(text_input, param):
    """Extra-P's models of a text input: {region: model entry}."""
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write(text_input)
        tmp = f.name
    reader = TextFileReader()
    reader.keep_values = True
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        experiment = reader.read_experiment(tmp)
        Path(tmp).unlink()
        models = model_experiment(experiment)
    return {cp.name: model_entry(model, experiment.measurements[(cp, metric)], param)
            for (cp, metric), model in models.items()}


def synthetic():
    rng = np.random.RandomState(20240611)
    blocks = [(0, 1, 1), (0, 1, 2), (1, 4, 0), (1, 3, 1), (1, 2, 0), (1, 2, 2), (2, 3, 0), (3, 4, 1),
              (1, 1, 0), (1, 1, 1), (1, 1, 2), (5, 4, 0), (3, 2, 0), (3, 2, 1), (2, 1, 0), (2, 1, 2),
              (5, 2, 0), (3, 1, 0), (3, 1, 1)]
    x_sets = {
        "cube": [1, 10, 25, 50, 100, 250, 500, 1000, 2000],
        "ranks": [1, 2, 3, 4, 5, 6, 7, 8],
        "pow2": [2, 4, 8, 16, 32, 64],
        "below1": [0.25, 0.5, 1, 2, 4, 8],
        "wide": [4, 8, 16, 32, 64, 128, 256, 512, 1024],
    }

    def term(x, a, b, c):
        v = 1.0
        if a:
            v *= x ** (a / b)
        if c:
            v *= math.log2(x) ** c
        return v

    out = {"extrap_version": extrap.__version__, "numpy_version": np.__version__, "sets": []}
    for set_name, xs in x_sets.items():
        datasets = []
        for (a, b, c) in blocks:
            if c and min(xs) < 1:
                continue
            for const in (0.0, 5.0):
                for noise, reps in ((0.0, 1), (0.1, 4)):
                    k = float(rng.uniform(0.01, 3.0))
                    values = [[(const + k * term(x, a, b, c)) * (1 + noise * rng.standard_normal())
                               for _ in range(reps)] for x in xs]
                    datasets.append((f"{const}+{k:.3g}*p^({a}/{b})*log2(p)^{c} noise {noise} x{reps}",
                                     values))
        for i in range(4):
            datasets.append((f"constant with noise {i}",
                             [[50.0 * (1 + 0.05 * rng.standard_normal()) for _ in range(3)] for _ in xs]))
        datasets.append(("strong scaling 100/p + 3", [[100.0 / x + 3.0] for x in xs]))
        datasets.append(("strong scaling 100/p noisy",
                         [[100.0 / x * (1 + 0.05 * rng.standard_normal()) for _ in range(4)] for x in xs]))
        datasets.append(("a zero point", [[0.0] if j == 1 else [1.0 + x] for j, x in enumerate(xs)]))
        datasets.append(("all zero", [[0.0, 0.0] for _ in xs]))
        datasets.append(("negative values", [[-2.0 - 0.5 * x + rng.standard_normal()] for x in xs]))
        datasets.append(("integers, constant", [[7.0, 7.0, 7.0] for _ in xs]))
        datasets.append(("tenths, constant", [[0.1, 0.1, 0.1] for _ in xs]))
        text = ["PARAMETER p", "POINTS " + " ".join(repr(float(x)) for x in xs), "", "METRIC m"]
        for i, (_, values) in enumerate(datasets):
            text.append(f"REGION d{i}")
            for v in values:
                text.append("DATA " + " ".join(repr(float(y)) for y in v))
        text_input = "\n".join(text) + "\n"
        models = model_text_input(text_input, "p")
        entries = []
        for i, (label, values) in enumerate(datasets):
            e = {"label": label}
            e.update(models[f"d{i}"])
            assert [pt["values"] for pt in e["points"]] == [[float(y) for y in v] for v in values], label
            entries.append(e)
        out["sets"].append({"name": set_name, "x": xs, "models": entries})
    return out


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    for name, data, indent in (("cubeset.json", cubeset(), 1), ("tau-strong-scaling.json", tau_strong_scaling(), 1),
                               ("synthetic.json", synthetic(), None)):
        (OUT / name).write_text(json.dumps(data, indent=indent, allow_nan=False) + "\n")
        print(f"wrote {OUT / name}", file=sys.stderr)


if __name__ == "__main__":
    main()
