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
        "reader_warnings": sorted({str(w.message) for w in caught}),
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


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    for name, data in (("cubeset.json", cubeset()), ("tau-strong-scaling.json", tau_strong_scaling())):
        (OUT / name).write_text(json.dumps(data, indent=1, allow_nan=False) + "\n")
        print(f"wrote {OUT / name}", file=sys.stderr)


if __name__ == "__main__":
    main()
