"""The results table of benchmarks/versions/README.md, from measure.py's JSON files.

    python benchmarks/versions/table.py results/*.json
"""
from __future__ import annotations

import json
import sys


def _yes(value) -> str:
    return "yes" if value is True else ("no" if isinstance(value, str) and value.startswith("no") else "-")


def _default(doc: str) -> str:
    if "defaults to True" in doc:
        return "True"
    if "defaults to False" in doc:
        return "False"
    return "?"


def rows(reports):
    yield ("| TF | map_parallelization (doc) | stateless map runs as ParallelMap (off: not) | map s: default / "
           "num_parallel_calls / off | inject_prefetch (doc) | Prefetch appended (off: not) | prefetch s: default / "
           "explicit / off | Keras | compile jit_compile default | model.jit_compile (CPU) |")
    yield "|" + "---|" * 10
    for r in sorted(reports, key=lambda r: [int(p) for p in r["tensorflow"].split(".")[:2]]):
        m, p, k = r["map_parallelization"], r["inject_prefetch"], r["keras"]
        ms, ps = m.get("seconds", {}), p.get("seconds", {})
        map_s = " / ".join(f"{ms[key]:.2f}" for key in ("default", "num_parallel_calls", "optimization_off")
                           if key in ms) or "-"
        pre_s = " / ".join(f"{ps[key]:.2f}" for key in ("default", "explicit_prefetch", "injection_off")
                           if key in ps) or "-"
        keras = k.get("tf.keras") if k.get("tf.keras") not in (None, "?") else k.get("keras package")
        if k.get("Model class", "").startswith("tf_keras"):
            keras = f"tf_keras {k.get('tf_keras package') or ''}".strip()
        label = r["tensorflow"] + (" (TF_USE_LEGACY_KERAS=1)" if r.get("legacy_keras") else "")
        yield (f"| {label} | {_default(m.get('doc', ''))} | {_yes(m.get('runs_as_default'))} "
               f"({_yes(m.get('runs_as_when_off'))}) | {map_s} | {_default(p.get('doc', ''))} | "
               f"{_yes(p.get('runs_as_default'))} ({_yes(p.get('runs_as_when_off'))}) | {pre_s} | {keras} | "
               f"{k.get('compile default')} | {k.get('model.jit_compile after fit')} |")


def main(paths) -> int:
    reports = []
    for path in paths:
        with open(path) as handle:
            reports.append(json.load(handle))
    print("\n".join(rows(reports)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
