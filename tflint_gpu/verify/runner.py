"""Run one example file in this (fresh) process and pickle what happened.

    python -m tflint_gpu.verify.runner FILE --size small --repeat 5 --out OUT.pkl
        [--before-file BEFORE.py --before-result BEFORE.pkl] [--require-gpu]

Imports FILE as a module, calls ``main(size)`` once as a warm-up (tracing
happens here; an exception is recorded as ``"Type: first line"``, with its
class name and the phase it happened in), then ``repeat`` timed calls. A timed
call includes converting the result to NumPy, which also waits for a GPU to
finish. The result goes back as NumPy data (arrays nested in tuples, lists and
dicts; anything else as ``compare.Opaque``) so the parent can read it without
TensorFlow.

``traces`` counts every trace of every ``tf.function`` called while the
example ran, wherever it was made (module level, inside ``main``, a method,
Keras's ``fit``/``predict``): before the example is imported, the class of
``tf.function`` objects gets a ``__call__`` that adds the growth of
``experimental_get_tracing_count()`` during each call. It is ``None`` when no
``tf.function`` was made or called.

With ``--before-result``, and when this file ran, it also imports
BEFORE.py and records ``behaviour_changed(before_result, this_result)``.

An example whose top level sets ``LOGICAL_CPUS = n`` (a literal) runs with the first CPU split
into ``n`` logical devices, made before TensorFlow's first op (a ``MirroredStrategy`` over
``/cpu:0`` and ``/cpu:1`` on one machine).

``--probe`` only reports the device and the TensorFlow version (and, as every report,
``package``: the folder of the tflint_gpu package this process runs).

The harness starts it isolated from the current folder (``harness.child_command``:
``python -I``, an empty temporary folder as the working folder).
"""
from __future__ import annotations

import argparse
import functools
import importlib.util
import os
import pickle
import re
import statistics
import sys
import threading
import time
from typing import Any, Dict, List, Optional

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def original_error(error: BaseException) -> BaseException:
    """The error Keras re-raised with its own header (same type, chained), else ``error``."""
    inner = error.__cause__ or error.__context__
    while inner is not None and type(inner) is type(error):
        error = inner
        inner = error.__cause__ or error.__context__
    return error


def describe_error(error: BaseException) -> str:
    """``"Type: first line of the message"`` (the real line when TF wraps it in "in user code:",
    and the line after Keras's "Exception encountered when calling X.call()." header)."""
    error = original_error(error)
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(error))  # Keras bolds parts of its messages
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    name = type(error).__name__
    if not lines:
        return name
    first = lines[0]
    if first == "in user code:" and len(lines) > 1:
        first = lines[-1]
        for prefix in (f"{name}: ", f"{type(error).__module__}.{name}: "):
            if first.startswith(prefix):
                first = first[len(prefix):]
    if first.startswith("Exception encountered when calling") and len(lines) > 1:
        first = f"{first} {lines[1]}"
    if len(first) > 200:
        first = first[:197] + "..."
    return f"{name}: {first}"


def split_cpu(tf: Any, count: int) -> int:
    """Make the first CPU ``count`` logical devices (``/cpu:0`` ... ``/cpu:<count-1>``), for an example
    that runs a ``tf.distribute.MirroredStrategy`` over several replicas on one machine; must run before
    TensorFlow's first op. Returns how many logical CPUs there are (1 when it was too late)."""
    cpus = tf.config.list_physical_devices("CPU")
    if count > 1 and cpus:
        try:
            tf.config.set_logical_device_configuration(cpus[0], [tf.config.LogicalDeviceConfiguration()] * count)
        except RuntimeError:  # the runtime already started: the devices stay as they are
            pass
    return len(tf.config.list_logical_devices("CPU"))


def logical_cpus(path: str) -> int:
    """An example's literal top-level ``LOGICAL_CPUS = n`` (default 1)."""
    import ast

    try:
        with open(path, encoding="utf-8") as handle:
            tree = ast.parse(handle.read())
    except (OSError, SyntaxError, ValueError):
        return 1
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "LOGICAL_CPUS"
                                                 for t in stmt.targets):
            try:
                value = ast.literal_eval(stmt.value)
            except ValueError:
                return 1
            return value if isinstance(value, int) and value > 0 else 1
    return 1


def load_module(path: str, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def error_fields(error: BaseException, phase: str) -> Dict[str, Any]:
    """The report's error entries: the description, the class name, the class names of both
    the raised error and the one it re-raises (for ImportError checks), and the phase."""
    original = original_error(error)
    kinds: List[str] = []
    for cls in type(original).__mro__ + type(error).__mro__:
        if cls.__name__ not in kinds:
            kinds.append(cls.__name__)
    return {"error": describe_error(error), "error_type": type(original).__name__,
            "error_kinds": tuple(kinds), "phase": phase}


def to_numpy(value: Any, tf: Any = None) -> Any:
    """The value as NumPy data: tensors and variables become arrays, containers are kept."""
    import numpy as np

    from tflint_gpu.verify.compare import Opaque

    if value is None:
        return None
    if isinstance(value, dict):
        return {key: to_numpy(item, tf) for key, item in value.items()}
    if isinstance(value, tuple):
        return tuple(to_numpy(item, tf) for item in value)
    if isinstance(value, list):
        return [to_numpy(item, tf) for item in value]
    if tf is not None:
        if isinstance(value, tf.RaggedTensor):
            return {"flat_values": to_numpy(value.flat_values, tf),
                    "nested_row_splits": to_numpy(tuple(value.nested_row_splits), tf)}
        if isinstance(value, tf.SparseTensor):
            value = tf.sparse.to_dense(value)
    if callable(getattr(value, "numpy", None)):
        value = value.numpy()
    try:
        array = np.asarray(value)
    except Exception:
        array = np.asarray(None)  # object dtype: opaque
    if array.dtype == object:
        items = array.ravel().tolist()
        for kind in (bytes, str):  # string tensors come back as object arrays of bytes
            if items and all(isinstance(item, kind) for item in items):
                return array.astype(kind)
        # nothing the parent could unpickle without the producing library, nor compare
        return Opaque(type(value).__name__, repr(value)[:200])
    return array


def device_info(tf: Any) -> Dict[str, Any]:
    gpus = tf.config.list_physical_devices("GPU")
    for gpu in gpus:
        try:
            tf.config.experimental.set_memory_growth(gpu, True)
        except Exception:  # pragma: no cover - already initialised
            pass
    placed = (tf.zeros(()) + 1.0).device.rsplit("device:", 1)[-1]
    if placed.startswith("GPU") and gpus:
        try:
            details = tf.config.experimental.get_device_details(gpus[0])
        except Exception:  # pragma: no cover
            details = {}
        name = details.get("device_name")
        device = f"{placed} ({name})" if name else placed
    else:
        device = f"CPU ({os.cpu_count()} cores)"
    return {"device": device, "gpu": bool(gpus) and placed.startswith("GPU"), "tf_version": tf.__version__}


class TraceCounter:
    """Counts the traces of every ``tf.function`` called after ``install``, wherever it was made."""

    def __init__(self) -> None:
        self.traces = 0
        self.functions = 0  # tf.function objects made through ``tf.function`` after install
        self.called = False
        self._lock = threading.Lock()
        self._active = threading.local()

    @property
    def count(self) -> Optional[int]:
        """The traces, or None when no tf.function was made or called."""
        return self.traces if (self.functions or self.called) else None

    def install(self, tf: Any) -> None:
        function_class = type(tf.function(lambda: None))
        original_call = function_class.__call__
        counter = self

        @functools.wraps(original_call)
        def __call__(function, *args, **kwargs):
            active = counter._active.__dict__.setdefault("ids", set())
            if id(function) in active:  # a recursive call: the outer call counts its traces
                return original_call(function, *args, **kwargs)
            active.add(id(function))
            start = _tracing_count(function)
            try:
                return original_call(function, *args, **kwargs)
            finally:
                active.discard(id(function))
                grown = _tracing_count(function) - start
                with counter._lock:
                    counter.called = True
                    counter.traces += max(grown, 0)

        function_class.__call__ = __call__
        original_function = tf.function

        def note(made: Any) -> Any:
            if isinstance(made, function_class):
                with counter._lock:
                    counter.functions += 1
                return made
            if callable(made) and not isinstance(made, type):  # tf.function(jit_compile=True) -> a decorator
                @functools.wraps(made)
                def decorator(*args: Any, **kwargs: Any) -> Any:
                    return note(made(*args, **kwargs))
                return decorator
            return made

        @functools.wraps(original_function)
        def function(*args: Any, **kwargs: Any) -> Any:
            return note(original_function(*args, **kwargs))

        tf.function = function


def _tracing_count(function: Any) -> int:
    try:
        return int(function.experimental_get_tracing_count())
    except Exception:
        return 0


def run(args: argparse.Namespace) -> Dict[str, Any]:
    report: Dict[str, Any] = {"file": args.file, "device": None, "gpu": False, "tf_version": None,
                              "error": None, "error_type": None, "error_kinds": (), "phase": None,
                              "seconds": [], "median": None, "result": None, "traces": None, "changed": None,
                              "package": os.path.dirname(os.path.abspath(sys.modules["tflint_gpu"].__file__))}
    phase = "import tensorflow"
    counter = TraceCounter()
    try:
        import tensorflow as tf

        if args.file:
            split_cpu(tf, logical_cpus(args.file))  # before device_info's first op
        report.update(device_info(tf))
        if args.require_gpu and not report["gpu"]:
            report.update(error="no GPU visible to TensorFlow", phase="device")
            return report
        if args.probe:
            return report
        counter.install(tf)
        phase = "import"
        module = load_module(args.file, "tflint_gpu_example")
        entry = getattr(module, "main")
        phase = "warm-up"
        result = to_numpy(entry(args.size), tf)
        for i in range(args.repeat):
            phase = f"timed call {i + 1}"
            start = time.perf_counter()
            result = to_numpy(entry(args.size), tf)
            report["seconds"].append(time.perf_counter() - start)
        report["result"] = result
        report["median"] = statistics.median(report["seconds"]) if report["seconds"] else None
        report["traces"] = counter.count
    except BaseException as error:  # noqa: B902 - the example's failure is the data
        if isinstance(error, KeyboardInterrupt):
            raise
        report.update(error_fields(error, phase))
        report["traces"] = counter.count
        return report
    if args.before_result:
        report["changed"] = _behaviour_changed(args.before_file, args.before_result, report["result"])
    return report


def _behaviour_changed(before_file: str, before_pickle: str, after_result: Any) -> Optional[Any]:
    with open(before_pickle, "rb") as handle:
        before = pickle.load(handle)
    if before.get("error") is not None:
        return None
    try:
        module = load_module(before_file, "tflint_gpu_example_before")
        check = getattr(module, "behaviour_changed", None)
        if check is None:
            return None
        return bool(check(before["result"], after_result))
    except Exception as error:
        return describe_error(error)


def main(argv: Optional[list] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tflint_gpu.verify.runner")
    parser.add_argument("file", nargs="?", default="")
    parser.add_argument("--size", choices=("small", "large"), default="small")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", required=True)
    parser.add_argument("--before-file", default="")
    parser.add_argument("--before-result", default="")
    parser.add_argument("--require-gpu", action="store_true")
    parser.add_argument("--probe", action="store_true")
    args = parser.parse_args(argv)
    report = run(args)
    try:
        data = pickle.dumps(report)
    except Exception as error:
        report["result"] = None
        if report["error"] is None:
            report.update(error_fields(error, "result"))
            report["error"] = f"result cannot be pickled: {report['error']}"
        data = pickle.dumps(report)
    with open(args.out, "wb") as handle:
        handle.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
