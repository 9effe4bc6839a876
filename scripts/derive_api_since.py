"""Derive the first TensorFlow release that has each name a fix may write.

    python scripts/derive_api_since.py [--versions 2.1 2.2 ... 2.16] [--python python3.8] [--work DIR]

A fix that writes `tf.data.AUTOTUNE` or `reduce_retracing=` into a project pinned to an older
TensorFlow breaks it (`tf.data.AUTOTUNE` came in 2.4: under 2.3 the module raises AttributeError at
import). For every minor release given, this script makes a virtual environment with the Python
given (old releases have no wheels for new Pythons), installs that TensorFlow's CPU wheel, asks it
for each name (an attribute path, or a keyword of a function's signature), and writes the first
release that has it to ``tflint_gpu/semantic/data/tf_api_since.json``. The table's entries are the
names this project's fixes write; ``tests/test_api_since.py`` checks the table against the installed
TensorFlow (every name there) and that every fix-written name has an entry.
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE.parent / "tflint_gpu" / "semantic" / "data" / "tf_api_since.json"

# What the fixes write: attribute paths under tensorflow (every literal ``module_expr("tensorflow", ...)`` of
# the rules, checked by tests/test_api_since.py), and keywords of tensorflow functions.
NAMES = [
    "tensorflow.TensorSpec",
    "tensorflow.Variable",
    "tensorflow.cast",
    "tensorflow.cond",
    "tensorflow.device",
    "tensorflow.float32",
    "tensorflow.function",
    "tensorflow.print",
    "tensorflow.timestamp",
    "tensorflow.keras.Variable",
    "tensorflow.data.experimental.AUTOTUNE",
    "tensorflow.data.AUTOTUNE",
    "tensorflow.data.INFINITE_CARDINALITY",
    "tensorflow.data.UNKNOWN_CARDINALITY",
    "tensorflow.data.ThreadingOptions",
    "tensorflow.config.list_physical_devices",
    "tensorflow.config.list_logical_devices",
    "tensorflow.config.get_visible_devices",
    "tensorflow.config.set_visible_devices",
    "tensorflow.distribute.get_strategy",
    "tensorflow.math.divide_no_nan",
    "tensorflow.reduce_sum",
    "tensorflow.broadcast_to",
    "tensorflow.shape",
]
KEYWORDS = [
    ("tensorflow.function", "jit_compile"),
    ("tensorflow.function", "reduce_retracing"),
]

PROBE = r"""
import importlib, inspect, json, sys
import tensorflow as tf
names, keywords = json.loads(sys.argv[1])
found = {}
for name in names:
    obj = tf
    ok = True
    for part in name.split(".")[1:]:
        if not hasattr(obj, part):
            ok = False
            break
        obj = getattr(obj, part)
    found[name] = ok
for function, keyword in keywords:
    obj = tf
    for part in function.split(".")[1:]:
        obj = getattr(obj, part)
    try:
        found[function + "(" + keyword + "=)"] = keyword in inspect.signature(obj).parameters
    except (TypeError, ValueError):
        found[function + "(" + keyword + "=)"] = False
print("RESULT " + json.dumps({"version": tf.__version__, "found": found}))
"""


def probe(python: str) -> dict:
    done = subprocess.run([python, "-c", PROBE, json.dumps([NAMES, KEYWORDS])], capture_output=True, text=True,
                          check=True)
    line = [ln for ln in done.stdout.splitlines() if ln.startswith("RESULT ")][-1]
    return json.loads(line[len("RESULT "):])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--versions", nargs="+", default=[f"2.{m}" for m in range(1, 17)])
    parser.add_argument("--python-old", default="python3.7", help="the Python for 2.1 (no wheel for 3.8)")
    parser.add_argument("--python", default="python3.8", help="the Python for 2.2 to 2.13")
    parser.add_argument("--python-new", default=sys.executable, help="the Python for 2.14 and newer")
    parser.add_argument("--work", type=Path, default=None)
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="tf-since-"))
    results = {}
    for version in args.versions:
        minor = int(version.split(".")[1])
        python = args.python_old if minor <= 1 else args.python if minor <= 13 else args.python_new
        venv = work / f"tf{version}"
        shutil.rmtree(venv, ignore_errors=True)
        subprocess.run([python, "-m", "venv", str(venv)], check=True)
        pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        package = "tensorflow-cpu"
        pins = [f"{package}=={version}.*"] + (["numpy<1.24", "protobuf<3.21"] if minor <= 10 else [])
        install = subprocess.run(pip + pins, capture_output=True, text=True)
        if install.returncode != 0:
            print(f"tf {version}: not installed ({install.stderr.strip().splitlines()[-1:]})", file=sys.stderr)
            shutil.rmtree(venv, ignore_errors=True)
            continue
        got = probe(str(venv / "bin" / "python"))
        results[version] = got
        print(f"tf {got['version']}: " + ", ".join(k for k, v in got["found"].items() if not v), flush=True)
        shutil.rmtree(venv, ignore_errors=True)
    since = {}
    for key in [n for n in NAMES] + [f"{f}({k}=)" for f, k in KEYWORDS]:
        first = None
        for version in sorted(results, key=lambda v: int(v.split(".")[1])):
            if results[version]["found"].get(key):
                first = first or version
            else:
                first = None  # absent again: the first of the last unbroken run counts
        since[key] = first
    table = {"derived_from": {v: r["version"] for v, r in sorted(results.items(), key=lambda i: int(i[0].split('.')[1]))},
             "since": since}
    OUT.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
    print(json.dumps(since, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
