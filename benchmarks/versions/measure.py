"""What one TensorFlow version does by default, measured (run it with that version's Python).

    /tmp/tf212/bin/python benchmarks/versions/measure.py [--repeats 5] [--json out.json]

Three defaults the version-aware rules depend on (TFG306, TFG303, TFG401):

(a) does tf.data run a stateless ``map`` without ``num_parallel_calls`` in
    parallel (the ``map_parallelization`` optimization)? Read the option's
    value and docstring, ask tf.data which transformation it runs
    (``assert_next``), and time ``range(n).map(f)`` with a deterministic,
    CPU-heavy stateless ``f`` (one single-threaded op, ``encode_png``): default
    options, ``num_parallel_calls=AUTOTUNE``, and the optimization turned off;
(b) does tf.data append a final ``prefetch`` by itself (``inject_prefetch``)?
    Read the option, ask ``assert_next``, and time a slow map (10 ms a call)
    with a slow consumer (10 ms an element): default options, an explicit
    ``prefetch(AUTOTUNE)``, and the injection turned off;
(c) what ``jit_compile`` Keras ``compile`` gives a model by default (``tf.keras``
    of this version), read after ``compile`` and after one ``fit`` step on CPU.

Best of ``--repeats`` runs for every timing. Prints one JSON object. Never
imported by the linter or its tests.
"""
from __future__ import annotations

import argparse
import inspect
import json
import os
import platform
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf  # noqa: E402


def best(run, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times), times


def option_facts(name):
    """The option's default value and the first line of its docstring that says what None means."""
    options = tf.data.Options().experimental_optimization
    if not hasattr(options, name):
        return {"exists": False}
    doc = getattr(type(options), name).__doc__ or ""
    doc = " ".join(doc.split())
    return {"exists": True, "value": repr(getattr(options, name)), "doc": doc}


def _assert_next():
    try:
        return tf.data.experimental.assert_next
    except AttributeError:
        from tensorflow.python.data.experimental.ops import testing
        return testing.assert_next


def runs_as(dataset_fn, expected):
    """True when tf.data runs `expected` (a list of transformation names) after the source."""
    try:
        ds = dataset_fn(tf.data.Dataset.range(4).apply(_assert_next()(expected)))
        list(ds.as_numpy_iterator())
        return True
    except Exception as error:  # InvalidArgumentError: Asserted next ... but encountered ...
        return f"no: {type(error).__name__}: {str(error).splitlines()[0][:160]}"


# (a) ---------------------------------------------------------------------------------------------

def heavy(x):
    """Deterministic, stateless and CPU-bound in one single-threaded op: a 384x384 PNG at zlib level 9."""
    pixels = tf.math.floormod(tf.range(384 * 384 * 3, dtype=tf.int64) * (x + 7), 251)
    image = tf.reshape(tf.cast(pixels, tf.uint8), [384, 384, 3])
    return tf.strings.length(tf.io.encode_png(image, compression=9))


def _with(name, value):
    options = tf.data.Options()
    setattr(options.experimental_optimization, name, value)
    return options


def map_parallelization(n, repeats):
    facts = option_facts("map_parallelization")
    facts["runs_as_default"] = runs_as(lambda ds: ds.map(heavy), ["ParallelMap"])
    if facts["exists"]:  # the check tells the two apart: with the optimization off it must fail
        off = _with("map_parallelization", False)
        facts["runs_as_when_off"] = runs_as(lambda ds: ds.map(heavy).with_options(off), ["ParallelMap"])
    if repeats == 0:
        return facts
    plain = tf.data.Dataset.range(n).map(heavy)
    parallel = tf.data.Dataset.range(n).map(heavy, num_parallel_calls=tf.data.AUTOTUNE)
    off = tf.data.Options()
    off.experimental_optimization.map_parallelization = False
    sequential = plain.with_options(off) if facts["exists"] else plain
    for ds in (plain, parallel, sequential):
        list(ds.take(2).as_numpy_iterator())  # trace once
    result = {}
    for label, ds in (("default", plain), ("num_parallel_calls", parallel), ("optimization_off", sequential)):
        result[label], result[label + "_all"] = best(lambda: list(ds.as_numpy_iterator()), repeats)
    facts["seconds"] = result
    facts["n"] = n
    return facts


# (b) ---------------------------------------------------------------------------------------------

def slow_map(x):
    def work(v):
        time.sleep(0.01)
        return v
    return tf.py_function(work, [x], tf.int64)


def inject_prefetch(n, repeats):
    facts = option_facts("inject_prefetch")
    facts["runs_as_default"] = runs_as(lambda ds: ds.map(slow_map), ["Map", "Prefetch"])
    if facts["exists"]:
        off = _with("inject_prefetch", False)
        facts["runs_as_when_off"] = runs_as(lambda ds: ds.map(slow_map).with_options(off), ["Map", "Prefetch"])
    if repeats == 0:
        return facts
    plain = tf.data.Dataset.range(n).map(slow_map)  # noqa: TFG307 (a latency-bound stateful map, on purpose)
    explicit = plain.prefetch(tf.data.AUTOTUNE)
    off = tf.data.Options()
    if facts["exists"]:
        off.experimental_optimization.inject_prefetch = False
    no_injection = plain.with_options(off)

    def consume(ds):
        for _ in ds:
            time.sleep(0.01)

    for ds in (plain, explicit, no_injection):
        consume(ds.take(2))
    result = {}
    for label, ds in (("default", plain), ("explicit_prefetch", explicit), ("injection_off", no_injection)):
        result[label], result[label + "_all"] = best(lambda: consume(ds), repeats)
    facts["seconds"] = result
    facts["n"] = n
    return facts


# (c) ---------------------------------------------------------------------------------------------

def keras_jit_compile():
    keras = tf.keras
    facts = {"tf.keras": getattr(keras, "__version__", "?"), "module": type(keras).__name__,
             "Model class": f"{keras.Model.__module__}.{keras.Model.__qualname__}"}
    try:
        import keras as standalone
        facts["keras package"] = standalone.__version__
    except ImportError:
        facts["keras package"] = None
    try:
        import tf_keras
        facts["tf_keras package"] = tf_keras.__version__
    except ImportError:
        facts["tf_keras package"] = None
    signature = inspect.signature(keras.Model.compile)
    parameter = signature.parameters.get("jit_compile")
    facts["compile default"] = repr(parameter.default) if parameter is not None else "no such argument"
    model = keras.Sequential([keras.Input(shape=(4,)), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    facts["model.jit_compile after compile"] = repr(getattr(model, "jit_compile", "no attribute"))
    x = tf.ones([8, 4])
    model.fit(x, tf.ones([8, 1]), epochs=1, verbose=0)
    facts["model.jit_compile after fit"] = repr(getattr(model, "jit_compile", "no attribute"))
    function = getattr(model, "train_function", None)
    facts["train_function jit_compile"] = repr(getattr(function, "_jit_compile", "n/a"))
    facts["devices"] = [d.device_type for d in tf.config.list_physical_devices()]
    return facts


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5, help="0: only the options and assert_next checks")
    parser.add_argument("--map-n", type=int, default=24)
    parser.add_argument("--prefetch-n", type=int, default=100)
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    report = {
        "tensorflow": tf.__version__,
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "legacy_keras": os.environ.get("TF_USE_LEGACY_KERAS", "") not in ("", "0", "false", "False"),
        "map_parallelization": map_parallelization(args.map_n, args.repeats),
        "inject_prefetch": inject_prefetch(args.prefetch_n, args.repeats),
        "keras": keras_jit_compile(),
    }
    text = json.dumps(report, indent=1, default=str)
    if args.json:
        with open(args.json, "w") as handle:
            handle.write(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
