"""Per-call cost of Keras inference entry points called once per item in a Python loop (TFG601).

For a small Dense model and a small conv model, at batch 1, 8 and 64 and loop lengths 10 and 100,
times ``model.predict(x)``, ``model.predict_on_batch(x)``, ``model.evaluate(x, y)``,
``model(x, training=False)`` and a ``tf.function``-wrapped call, each from a freshly built model
(so the first call's tracing is in the loop, as it is in user code). Also counts how many times
the model's ``call`` is traced (a Python counter in ``call``: an eager call runs it every time,
a traced function only when it traces), whether ``predict`` and the direct call give the same
values, and the process's resident memory over many ``predict`` calls.

Run: ``python benchmarks/predict_in_loop.py`` (Keras 3, then the same under tf_keras in a
subprocess with ``TF_USE_LEGACY_KERAS=1``); ``--flavour keras3|tf_keras`` runs one only;
``--quick`` fewer repeats. Prints a table per flavour; the numbers in the rule's docs come from here.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def run(flavour: str, quick: bool, calls_per_run: int = 100) -> dict:
    if flavour == "tf_keras":
        os.environ["TF_USE_LEGACY_KERAS"] = "1"
    import numpy as np
    import tensorflow as tf

    if flavour == "tf_keras":
        import tf_keras as keras
    else:
        import keras
    version = getattr(keras, "__version__", "?")

    traces = {"n": 0}

    class Counted(keras.layers.Layer):
        """Identity layer counting how often its Python ``call`` runs (once per trace in graph code)."""

        def call(self, x):
            traces["n"] += 1
            return x

    def dense_model():
        inputs = keras.Input(shape=(32,))
        h = Counted()(inputs)
        h = keras.layers.Dense(64, activation="relu")(h)
        outputs = keras.layers.Dense(10)(h)
        model = keras.Model(inputs, outputs)
        model.compile(loss="mse")
        return model

    def conv_model():
        inputs = keras.Input(shape=(28, 28, 1))
        h = Counted()(inputs)
        h = keras.layers.Conv2D(8, 3, activation="relu")(h)
        h = keras.layers.MaxPooling2D()(h)
        h = keras.layers.Flatten()(h)
        outputs = keras.layers.Dense(10)(h)
        model = keras.Model(inputs, outputs)
        model.compile(loss="mse")
        return model

    builders = {"dense": (dense_model, (32,)), "conv": (conv_model, (28, 28, 1))}
    rng = np.random.default_rng(0)

    def methods(model):
        wrapped = tf.function(lambda x: model(x, training=False))
        return {
            "predict": lambda x, y: model.predict(x, verbose=0),
            "predict_on_batch": lambda x, y: model.predict_on_batch(x),
            "evaluate": lambda x, y: model.evaluate(x, y, verbose=0),
            "call": lambda x, y: model(x, training=False),
            "tf.function": lambda x, y: wrapped(x),
        }

    results = []
    repeats = 1 if quick else 3
    batches = (1, 8, 64)
    for model_name, (build, shape) in builders.items():
        for batch in batches:
            x = rng.standard_normal((batch,) + shape).astype("float32")
            y = rng.standard_normal((batch, 10)).astype("float32")
            for method in ("predict", "predict_on_batch", "evaluate", "call", "tf.function"):
                # One fresh model per repeat (its first call traces, as in user code), 100 calls
                # timed one by one: loop 10 = the first 10 calls, loop 100 = all of them.
                per = {10: [], 100: []}
                runs = {10: 0, 100: 0}
                for _ in range(repeats):
                    keras.backend.clear_session()
                    model = build()
                    fn = methods(model)[method]
                    traces["n"] = 0
                    times = []
                    for i in range(calls_per_run):
                        start = time.perf_counter()
                        fn(x, y)
                        times.append(time.perf_counter() - start)
                        if i == 9:
                            runs[10] = traces["n"]
                    runs[100] = traces["n"]
                    per[10].append(sum(times[:10]) / 10 * 1e3)
                    per[100].append(sum(times) / len(times) * 1e3)
                    steady = statistics.median(times[10:]) * 1e3
                for loop, length in ((10, 10), (100, calls_per_run)):
                    results.append({"model": model_name, "batch": batch, "loop": length, "method": method,
                                    "ms_per_call": statistics.median(per[loop]), "call_runs": runs[loop],
                                    "steady_ms": steady})
                print(f"{flavour} {model_name} b={batch} {method}: loop10 {statistics.median(per[10]):.2f} ms/call, "
                      f"loop{calls_per_run} {statistics.median(per[100]):.2f} ms/call, steady {steady:.2f} ms, "
                      f"call ran {runs[100]}x in {calls_per_run}", flush=True)

    # Values: predict vs the direct call (predict runs batches of 32 and returns NumPy).
    values = {}
    for model_name, (build, shape) in builders.items():
        keras.backend.clear_session()
        model = build()
        for batch in (1, 8, 64, 100):
            x = rng.standard_normal((batch,) + shape).astype("float32")
            p = model.predict(x, verbose=0)
            c = model(x, training=False)
            c_np = np.asarray(c)
            values[f"{model_name}/{batch}"] = {
                "predict_type": type(p).__module__ + "." + type(p).__name__,
                "call_type": type(c).__module__ + "." + type(c).__name__,
                "max_abs_diff": float(np.max(np.abs(p - c_np))),
                "identical": bool(np.array_equal(p, c_np)),
            }

    # Memory and retracing over many predict calls on one model, with a new array each time.
    keras.backend.clear_session()
    model = dense_model()
    x = rng.standard_normal((1, 32)).astype("float32")
    model.predict(x, verbose=0)
    traces["n"] = 0
    memory = {"before_mb": rss_mb()}
    calls = 100 if quick else 1000
    for i in range(calls):
        model.predict(rng.standard_normal((1, 32)).astype("float32"), verbose=0)
        if i == calls // 2:
            memory["half_mb"] = rss_mb()
    memory["after_mb"] = rss_mb()
    memory["calls"] = calls
    memory["call_runs"] = traces["n"]
    # Varying batch sizes: does predict retrace per shape?
    traces["n"] = 0
    for batch in (1, 2, 3, 4, 5, 1, 2, 3):
        model.predict(rng.standard_normal((batch, 32)).astype("float32"), verbose=0)
    memory["varying_batch_call_runs"] = traces["n"]
    return {"flavour": flavour, "version": version, "tf": tf.__version__, "results": results,
            "values": values, "memory": memory}


def show(report: dict) -> None:
    print(f"\n## {report['flavour']} (Keras {report['version']}, TF {report['tf']}, CPU)")
    rows = report["results"]
    print("| model | batch | loop | predict | predict_on_batch | evaluate | call | tf.function | predict/call |")
    print("|---|---|---|---|---|---|---|---|---|")
    keyed = {(r["model"], r["batch"], r["loop"], r["method"]): r for r in rows}
    for model in ("dense", "conv"):
        for batch in (1, 8, 64):
            for loop in sorted({r["loop"] for r in rows}):
                cells = []
                for method in ("predict", "predict_on_batch", "evaluate", "call", "tf.function"):
                    r = keyed[(model, batch, loop, method)]
                    cells.append(f"{r['ms_per_call']:.2f} ms ({r['call_runs']})")
                ratio = keyed[(model, batch, loop, "predict")]["ms_per_call"] / \
                    keyed[(model, batch, loop, "call")]["ms_per_call"]
                print(f"| {model} | {batch} | {loop} | " + " | ".join(cells) + f" | {ratio:.1f}x |")
    print("(in parentheses: how many times the model's Python `call` ran over the loop = traces, or calls when eager)")
    print("\nvalues, predict vs model(x, training=False):")
    for key, value in report["values"].items():
        print(f"  {key}: {value}")
    print("memory/retracing over repeated predict:", report["memory"])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--flavour", choices=("keras3", "tf_keras"))
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", help="write the raw results here")
    parser.add_argument("--calls", type=int, default=100, help="calls per run (the long loop length)")
    args = parser.parse_args()
    if args.flavour:
        report = run(args.flavour, args.quick, args.calls)
        if args.json:
            with open(args.json, "w") as out:
                json.dump(report, out, indent=1)
        show(report)
        return
    for flavour in ("keras3", "tf_keras"):
        command = [sys.executable, __file__, "--flavour", flavour, "--calls", str(args.calls)] + \
            (["--quick"] if args.quick else [])
        if args.json:
            command += ["--json", f"{args.json}.{flavour}.json"]
        subprocess.run(command, check=True)


if __name__ == "__main__":
    main()
