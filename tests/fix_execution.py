"""Run sources under TensorFlow in a fresh process and collect what they computed.

Used by ``test_fix_execution.py``: the original and the fixed source of a fix
run in two fresh processes (each runs many sources one after the other, each
in its own namespace, with the random seeds reset), and the values they left
behind are compared.

What a source computed: every module-level name not starting with ``_`` whose
value is a tensor, a variable, a NumPy array or scalar, a Python number, a
``tf.data.Dataset`` (its elements, at most ``MAX_ELEMENTS``), or a list,
tuple or dict of those. Functions, classes and modules are not values.
"""
from __future__ import annotations

import json
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

MAX_ELEMENTS = 1000
SEED = 1234
LOGICAL_CPUS = 2  # the child's CPU as two logical devices (``tf.config.list_logical_devices("CPU")``)


@dataclass
class Outcome:
    values: Dict[str, Any] = field(default_factory=dict)  # name -> (kind, NumPy data)
    error: Optional[str] = None  # "Type: first line" when the source raised


def run_many(sources: Sequence[str], timeout: float = 600, legacy_keras: bool = False) -> List[Outcome]:
    """Execute each source in one fresh child process; one Outcome per source."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.pickle")
        process = start(sources, out, legacy_keras)
        return finish(process, out, timeout)


def start(sources: Sequence[str], out: str, legacy_keras: bool = False) -> subprocess.Popen:
    """``legacy_keras``: the child runs with ``TF_USE_LEGACY_KERAS=1`` from its start, so ``tf.keras``
    is tf_keras (Keras 2) there, as in a project that sets it before importing TensorFlow."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="-1", PYTHONHASHSEED="0")
    if legacy_keras:
        env["TF_USE_LEGACY_KERAS"] = "1"
    else:
        env.pop("TF_USE_LEGACY_KERAS", None)
    # stderr goes to a file: TensorFlow's warnings would fill a pipe and block the child.
    stderr = open(out + ".stderr", "w")
    process = subprocess.Popen([sys.executable, __file__, out], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                               stderr=stderr, env=env, text=True)
    stderr.close()
    assert process.stdin is not None
    process.stdin.write(json.dumps(list(sources)))
    process.stdin.close()
    return process


def finish(process: subprocess.Popen, out: str, timeout: float) -> List[Outcome]:
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        raise
    with open(out + ".stderr") as handle:
        stderr = handle.read()
    if process.returncode != 0 or not os.path.exists(out):
        raise RuntimeError(f"the child process failed ({process.returncode}):\n{stderr[-4000:]}")
    with open(out, "rb") as handle:
        return [Outcome(**fields) for fields in pickle.load(handle)]


# -- the child -------------------------------------------------------------

def _kind(value: Any, tf: Any, np: Any) -> Optional[str]:
    if isinstance(value, tf.Variable):
        return "variable"
    if isinstance(value, (tf.Tensor, tf.RaggedTensor, tf.SparseTensor)):
        return "tensor"
    if isinstance(value, tf.data.Dataset):
        return "dataset"
    if isinstance(value, (np.ndarray, np.generic)):
        return "ndarray"
    if isinstance(value, (bool, int, float, complex)):
        return "python"
    if isinstance(value, (list, tuple, dict)):
        items = value.values() if isinstance(value, dict) else value
        kinds = [_kind(item, tf, np) for item in items]
        if kinds and all(kinds):
            return type(value).__name__ + "[" + ",".join(sorted(set(kinds))) + "]"
    return None


def _collect(namespace: Dict[str, Any], tf: Any, np: Any, to_numpy: Any) -> Dict[str, Any]:
    values = {}
    for name, value in namespace.items():
        if name.startswith("_"):
            continue
        kind = _kind(value, tf, np)
        if kind is None:
            continue
        if kind == "dataset":
            data = [to_numpy(element, tf) for element in value.take(MAX_ELEMENTS)]
        else:
            data = to_numpy(value, tf)
        values[name] = (kind, data)
    return values


def _keras2_environment() -> None:
    """Where tf.keras is Keras 2, stand in for the environment Keras 2 code was written for (TF <= 2.15,
    where the ``keras`` package was Keras 2): tensorflow-addons 0.23 imports ``keras.src.engine``, which
    is tf_keras's engine there (as benchmarks/upgrade/drivers/_run.py does for the upgrade set). Code
    that does not import tensorflow-addons never reads these modules."""
    try:
        import tf_keras.src.engine as engine
        import tf_keras.src.engine.keras_tensor as keras_tensor
    except ImportError:  # pragma: no cover - tf_keras comes with the test extra
        return
    sys.modules.setdefault("keras.src.engine", engine)
    sys.modules.setdefault("keras.src.engine.keras_tensor", keras_tensor)


def _child(out: str) -> None:
    import contextlib
    import io
    import random

    import numpy as np
    import tensorflow as tf

    from tflint_gpu.verify.runner import describe_error, split_cpu, to_numpy

    split_cpu(tf, LOGICAL_CPUS)  # before any op: a case's MirroredStrategy gets two replicas (TFG504)
    if os.environ.get("TF_USE_LEGACY_KERAS") == "1":
        _keras2_environment()

    try:
        import keras as keras3  # Keras 3 itself, whatever tf.keras is here
    except ImportError:  # pragma: no cover - the test extra installs it
        keras3 = None
    out = os.path.abspath(out)
    sources = json.loads(sys.stdin.read())
    outcomes: List[Dict[str, Any]] = []  # plain data: the parent has no __main__.Outcome
    folder = tempfile.mkdtemp(prefix="cases-")
    # A case's relative paths (a weights file it saves, a log folder) land in the case folder, not in
    # the caller's working directory (the repository, under pytest), and go with it.
    os.chdir(folder)
    try:
        for number, source in enumerate(sources):
            # A real file: AutoGraph reads a function's source to convert it.
            path = os.path.join(folder, f"case_{number}.py")
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(source)
            if "keras" in source:
                tf.keras.backend.clear_session()  # ~160 ms: only where Keras state can leak
                # a mixed-precision policy set by an earlier source would change this one's dtypes
                tf.keras.mixed_precision.set_global_policy("float32")
                if keras3 is not None:
                    keras3.mixed_precision.set_global_policy("float32")
            tf.random.set_seed(SEED)
            np.random.seed(SEED)
            random.seed(SEED)
            tf.config.run_functions_eagerly(False)
            namespace: Dict[str, Any] = {"__name__": "__case__", "__file__": path}
            outcome = {"values": {}, "error": None}
            try:
                with contextlib.redirect_stdout(io.StringIO()):
                    exec(compile(source, path, "exec"), namespace)
            except BaseException as error:  # noqa: B902 - any failure is an outcome
                outcome["error"] = describe_error(error)
            else:
                try:
                    outcome["values"] = _collect(namespace, tf, np, to_numpy)
                except Exception as error:
                    outcome["error"] = "while collecting: " + describe_error(error)
            outcomes.append(outcome)
    finally:
        os.chdir(os.path.dirname(os.path.abspath(out)))
        shutil.rmtree(folder, ignore_errors=True)
    with open(out, "wb") as handle:
        pickle.dump(outcomes, handle)


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    _child(sys.argv[1])


@dataclass
class Variant:
    """A generated source for the fix-execution test (see ``fix_variants_*.py``)."""

    id: str
    code: str
    rules: Tuple[str, ...]  # the rule codes whose fixes are applied
    effect: str = "identical"  # how an unsafe fix may change the values (rules.base.EFFECTS)
    run: str = ""
