"""Derive the Keras 2 -> Keras 3 / TF 1 -> TF 2 migration table, then execute every entry.

Run by a developer with TensorFlow installed (never at lint time: the linter
never imports TensorFlow):

    python scripts/derive_migration.py            # writes tflint_gpu/semantic/data/keras3_migration.json
    python scripts/derive_migration.py --check    # exit 1 when the committed file differs
    python scripts/derive_migration.py --out -    # print it

What it compares (Keras 2 is ``tf_keras`` 2.21, which is what ``tf.keras``
was; Keras 3 is ``keras`` 3.x and ``tf.keras`` as TF 2.21 ships it):

* ``module``: public module paths of ``tf_keras`` (``layers.experimental``,
  ``preprocessing.text``...) that ``keras.X`` / ``tensorflow.keras.X`` no longer
  has: ``import`` and attribute access executed per spelling.
* ``name``: public names per module (``backend.eval``, ``utils.Sequence`` is
  kept...), ``getattr`` and ``from M import N`` executed per spelling (and, for
  the classes of ``legacy`` modules Keras 3 keeps by name, making one: a
  ``call`` outcome, ``optimizers.legacy.Adam()`` raises ImportError); the
  replacement is the same Keras 2 object under another path that Keras 3 has
  (exact: the rewrite is a no-op under Keras 2), else the same name in
  another Keras 3 module such as ``keras.ops`` (not exact).
* ``member``: public members (methods, properties) of the classes users
  subclass or call (Model, Sequential, Layer, Metric, Loss, Optimizer,
  LossScaleOptimizer, Callback, utils.Sequence and every layer, metric, loss,
  optimizer and callback class), ``getattr`` on a Keras 3 instance executed.
  A member only recorded on a base class (``Layer.add_update``) is not
  repeated on its subclasses. Replacement: a Keras 2 alias (the same
  function) or a one-line wrapper (``return self.reset_state()``) of a member
  Keras 3 keeps (exact when Keras 3's has the same parameters).
* ``keyword``: keyword parameters of constructors, methods and functions
  that Keras 2 takes and Keras 3's signature lacks, including the names Keras
  2's ``Layer`` takes through ``**kwargs`` (its ``allowed_kwargs``). Each is
  executed: a call with only that keyword where Keras 3's signature has no
  ``**kwargs`` (Python rejects it before the body runs), else a real
  construction/call with the required arguments filled in, first without the
  keyword (the baseline must run) then with it.
* ``tf_name``: names ``tf.compat.v1.M`` has and ``tf.M`` lacks (modules to depth
  3), ``getattr`` and ``from tensorflow.M import N`` executed; the replacement
  is the same object published by TF 2 (exact), else ``tf.compat.v1.M.N`` (not
  exact: TF 1 semantics such as graph mode).
* ``tf_keyword``: arguments TF's deprecation decorators mark (``deprecated_args``,
  ``deprecated_arg_values``) on TF 2 functions and methods, with the
  instructions TF gives and the current spelling when the instructions name a
  parameter of the same callable; a few are executed both ways and compared.

* ``safe_mode``: the public callables of Keras 3 and of tf_keras (the two
  flavours) with a ``safe_mode`` parameter (``load_model``,
  ``deserialize_keras_object``, ``Lambda.from_config``) and the switches that
  turn it off (``keras.config.enable_unsafe_deserialization``). Each is
  executed on a model or config holding a ``Lambda`` of a Python ``lambda``
  whose body records that it ran: saved as ``.keras`` and as ``.h5``, loaded
  by default and with ``safe_mode=False`` (the switch: by default after it),
  and the outcome per format is ``ran`` (the file's code ran in this process)
  or ``refused`` (the error Keras raised).

Each entry's ``outcome`` is what executing it raised (``error`` class and
``message``), a ``warning``, or nothing (``breaks`` false: not a breakage, kept
for the record). The output is sorted and free of addresses, so two runs give
the same file.
"""
from __future__ import annotations

import argparse
import ast
import contextlib
import copy
import importlib
import inspect
import io
import json
import logging
import os
import re
import sys
import tempfile
import textwrap
import types
import warnings
from typing import Any, Dict, Iterable, List, Optional, Tuple

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.pop("TF_USE_LEGACY_KERAS", None)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT = os.path.join(ROOT, "tflint_gpu", "semantic", "data", "keras3_migration.json")
FORMAT = 1

SPELLINGS = ("keras", "tensorflow.keras")
# Keras 2 modules that are not user API surface for this table.
_SKIP_MODULES = ("protobuf", "src", "estimator", "dtensor", "api", "internal")
_MAX_DEPTH = 4
_TF_DEPTH = 3
# Classes whose members are compared (Keras 2 path -> kind), besides every public class of these modules.
_MEMBER_CLASSES = ("Model", "Sequential", "layers.Layer", "metrics.Metric", "losses.Loss", "optimizers.Optimizer",
                   "mixed_precision.LossScaleOptimizer", "callbacks.Callback", "utils.Sequence")
_MEMBER_MODULES = ("layers", "metrics", "losses", "optimizers", "callbacks")
# Methods whose keyword arguments are compared, per member class.
_METHOD_CLASSES = ("Model", "Sequential", "layers.Layer", "metrics.Metric", "optimizers.Optimizer",
                   "callbacks.Callback")
_MESSAGE_LIMIT = 300


# -- outcomes -----------------------------------------------------------------
def _clean(text: str) -> str:
    text = re.sub(r"0x[0-9a-fA-F]+", "0x…", str(text))
    text = re.sub(r"/[^\s'\"]*site-packages/", "", text)
    text = re.sub(re.escape(tempfile.gettempdir()) + r"/tmp\w+", "<tmp>", text)
    text = re.sub(r"\s+", " ", text).strip()
    return text[:_MESSAGE_LIMIT]


class _Captured:
    def __init__(self) -> None:
        self.error: Optional[BaseException] = None
        self.warnings: List[str] = []
        self.value: Any = None


@contextlib.contextmanager
def _capture():
    """Run a block, keeping the error it raises and the warnings it gives."""
    captured = _Captured()
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    loggers = [logging.getLogger("tensorflow"), logging.getLogger("absl")]
    for logger in loggers:
        logger.addHandler(handler)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                yield captured
        except Exception as error:  # noqa: BLE001 - recording what it raises is the point
            captured.error = error
    for logger in loggers:
        logger.removeHandler(handler)
    captured.warnings = [f"{w.category.__name__}: {w.message}" for w in caught
                         if not issubclass(w.category, (ResourceWarning, ImportWarning))]
    logged = [line for line in stream.getvalue().splitlines() if "deprecat" in line.lower()]
    captured.warnings += [f"logged: {line}" for line in logged]


def _outcome(captured: _Captured) -> Dict[str, Any]:
    if captured.error is not None:
        return {"breaks": True, "error": type(captured.error).__name__, "message": _clean(captured.error)}
    if captured.warnings:
        return {"breaks": False, "warning": _clean(captured.warnings[0])}
    return {"breaks": False}


def _run(fn, /, *args, **kwargs) -> Dict[str, Any]:
    with _capture() as captured:
        captured.value = fn(*args, **kwargs)
    return _outcome(captured)


# -- module trees --------------------------------------------------------------
def _walk_modules(root: types.ModuleType, skip: Iterable[str] = _SKIP_MODULES,
                  depth: int = _MAX_DEPTH) -> Dict[str, types.ModuleType]:
    """Public submodules reachable as attributes, path ('' for the root) -> module."""
    found: Dict[str, types.ModuleType] = {}
    stack = [("", root)]
    while stack:
        path, module = stack.pop()
        if path in found:
            continue
        found[path] = module
        if path and path.count(".") + 1 >= depth:
            continue
        for name in sorted(dir(module)):
            if name.startswith("_") or (not path and name in skip):
                continue
            try:
                value = getattr(module, name)
            except Exception:  # noqa: BLE001
                continue
            if isinstance(value, types.ModuleType) and getattr(value, "__name__", "").split(".")[0] in (
                    root.__name__.split(".")[0], "keras", "tensorflow"):
                stack.append((f"{path}.{name}" if path else name, value))
    return found


def _public(module: Any) -> List[str]:
    return sorted(n for n in dir(module) if not n.startswith("_"))


def _keras3_root(spelling: str):
    if spelling == "keras":
        import keras

        return keras
    import tensorflow as tf

    return tf.keras


def _chain(root: Any, path: str) -> Any:
    value = root
    for part in path.split(".") if path else ():
        value = getattr(value, part)
    return value


def _module_outcomes(spelling: str, path: str) -> Dict[str, Any]:
    root = _keras3_root(spelling)
    return {
        "import": _run(importlib.import_module, f"{spelling}.{path}"),
        "attribute": _run(_chain, root, path),
    }


def _from_import(module: str, name: str) -> Dict[str, Any]:
    def run():
        namespace: Dict[str, Any] = {}
        exec(f"from {module} import {name}", namespace)  # noqa: S102 - the entry, executed

    return _run(run)


def _stub_outcome(spelling: str, path: str, name: str, value2: Any, keras) -> Optional[Dict[str, Any]]:
    """For a class of a Keras 2 `legacy` module that Keras 3 keeps by name: what making one raises
    (ImportError/NotImplementedError: a stub that says Keras 3 does not support it), else None."""
    if "legacy" not in path.split(".") or not inspect.isclass(value2):
        return None
    cls3 = _chain(_keras3_root(spelling), f"{path}.{name}")
    if not inspect.isclass(cls3):
        return None
    values = _fill(cls3, keras) or {}
    outcome = _run(cls3, **values)
    if outcome["breaks"] and outcome["error"] in ("ImportError", "NotImplementedError"):
        return outcome
    return None


# -- replacements ----------------------------------------------------------------
def _object_paths(modules: Dict[str, types.ModuleType]) -> Dict[int, List[Tuple[str, str]]]:
    paths: Dict[int, List[Tuple[str, str]]] = {}
    for path, module in sorted(modules.items()):
        for name in _public(module):
            try:
                value = getattr(module, name)
            except Exception:  # noqa: BLE001
                continue
            if callable(value) or isinstance(value, types.ModuleType):
                paths.setdefault(id(value), []).append((path, name))
    return paths


def _exists(spelling: str, path: str, name: str) -> bool:
    try:
        _chain(_keras3_root(spelling), f"{path}.{name}" if path else name)
        return True
    except Exception:  # noqa: BLE001
        return False


def _qual(path: str, name: str = "") -> str:
    parts = ["keras"] + ([path] if path else []) + ([name] if name else [])
    return ".".join(parts)


def _experimental(path: str) -> bool:
    return "experimental" in path.split(".") or "legacy" in path.split(".")


def _name_replacement(path: str, name: str, value: Any, spelling: str, k2_paths, k3_names) -> Optional[Dict[str, Any]]:
    """The Keras 2 object under another path Keras 3 keeps (exact), else the same name elsewhere in Keras 3."""
    candidates = [(p, n) for p, n in k2_paths.get(id(value), ()) if (p, n) != (path, name)]
    candidates.sort(key=lambda pn: (pn[1] != name, _experimental(pn[0]), pn[0].count("."), pn[0], pn[1]))
    for other_path, other_name in candidates:
        if _exists(spelling, other_path, other_name):
            return {"qualname": _qual(other_path, other_name), "exact": True,
                    "why": "the same object in Keras 2"}
    elsewhere = sorted(k3_names.get(name, ()), key=lambda p: (p != "ops", _experimental(p), p.count("."), p))
    for other_path in elsewhere:
        if other_path != path and _exists(spelling, other_path, name):
            return {"qualname": _qual(other_path, name), "exact": False,
                    "why": "the same name in another Keras 3 module (a different implementation)"}
    return None


# -- instances and calls under Keras 3 -------------------------------------------
_VALUES = {
    "units": 2, "filters": 2, "kernel_size": 1, "rate": 0.5, "target_shape": (2,), "dims": (1,), "n": 2,
    "input_dim": 4, "output_dim": 2, "num_heads": 1, "key_dim": 2, "size": 2, "cropping": 0, "padding": 1,
    "axis": -1, "stddev": 0.1, "l1": 0.01, "l2": 0.01, "activation": "relu", "function": None,
    "max_tokens": None, "num_bins": 2, "num_tokens": 2, "height": 2, "width": 2, "factor": 0.1,
    "scale": 1.0, "mean": 0.0, "variance": 1.0, "vocabulary": ["a"], "bin_boundaries": [0.0],
    "learning_rate": 0.01, "monitor": "loss", "filepath": "m.keras", "schedule": None, "root": ".",
    "log_dir": "logs", "name": "m", "epsilon": 1e-3, "fn": None, "patience": 1, "groups": 1,
    "depth_multiplier": 1, "upsampling": None, "output_mode": "int", "offset": 0.0, "value_range": (0, 1),
    "thresholds": 0.5, "num_thresholds": 3, "top_k": None, "class_id": None, "num_classes": 2,
    "inner_optimizer": None, "data_format": None, "strides": 1, "pool_size": 2, "threshold": 0.5,
    "height_factor": 0.1, "width_factor": 0.1, "axes": 1, "equation": "ab,bc->ac", "output_shape": 4,
}
# Optional parameters some constructors need to be made at all (Keras 3 checks them in __init__).
_EXTRA = {"CategoryEncoding": {"num_tokens": 4}, "InputLayer": {"shape": (2,)}}


def _required(sig: inspect.Signature) -> List[inspect.Parameter]:
    return [p for name, p in list(sig.parameters.items())[1:]
            if p.default is inspect.Parameter.empty and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]


def _fill(cls: type, keras) -> Optional[Dict[str, Any]]:
    """Keyword values for the required parameters of a Keras 3 constructor, or None."""
    try:
        sig = inspect.signature(cls.__init__)
    except (TypeError, ValueError):
        return {}
    values: Dict[str, Any] = {}
    for param in _required(sig):
        name = param.name
        if name in ("layer", "forward_layer"):
            values[name] = keras.layers.LSTM(2) if "Bidirectional" in cls.__name__ else keras.layers.Dense(2)
        elif name == "cell":
            values[name] = keras.layers.LSTMCell(2)
        elif name == "cells":
            values[name] = [keras.layers.LSTMCell(2)]
        elif name == "layers":
            values[name] = [keras.layers.Dense(2)]
        elif name == "inner_optimizer" or name == "optimizer":
            values[name] = keras.optimizers.SGD()
        elif name == "function" or name == "fn":
            values[name] = lambda x: x
        elif name == "schedule":
            values[name] = lambda epoch: 0.01
        elif name in _VALUES and _VALUES[name] is not None:
            values[name] = _VALUES[name]
        else:
            return None
    values.update(_EXTRA.get(cls.__name__, {}))
    return values


def _instance(path: str, keras, cache: Dict[str, Any]) -> Any:
    """A Keras 3 instance of the class at ``path`` (None when it cannot be made)."""
    if path in cache:
        return cache[path]
    made = None
    try:
        cls = _chain(keras, path)
        if path in ("Model",):
            inputs = keras.Input((2,))
            made = keras.Model(inputs, keras.layers.Dense(1)(inputs))
        elif path == "Sequential":
            made = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
        elif path == "utils.Sequence":
            class _Seq(cls):  # abstract: a minimal subclass
                def __len__(self):
                    return 1

                def __getitem__(self, i):
                    return 0
            made = _Seq()
        elif inspect.isabstract(cls) or path in ("metrics.Metric", "losses.Loss", "optimizers.Optimizer"):
            made = None
            if path == "optimizers.Optimizer":
                made = keras.optimizers.SGD()
            elif path == "metrics.Metric":
                made = keras.metrics.Mean()
            elif path == "losses.Loss":
                made = keras.losses.MeanSquaredError()
        else:
            values = _fill(cls, keras)
            if values is not None:
                with _capture() as captured:
                    captured.value = cls(**values)
                made = captured.value if captured.error is None else None
    except Exception:  # noqa: BLE001
        made = None
    cache[path] = made
    return made


def _method_call(cls_path: str, method: str, keras, tmp: str):
    """(callable, args, kwargs) running ``method`` for real on a fresh Keras 3 instance, or None."""
    import numpy as np

    x = np.ones((4, 2), "float32")
    y = np.ones((4, 1), "float32")
    if cls_path in ("Model", "Sequential"):
        model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
        model.compile("sgd", "mse")
        calls = {
            "fit": ((x, y), {"epochs": 1, "verbose": 0}), "evaluate": ((x, y), {"verbose": 0}),
            "predict": ((x,), {"verbose": 0}), "compile": (("sgd", "mse"), {}),
            "train_on_batch": ((x, y), {}), "test_on_batch": ((x, y), {}), "predict_on_batch": ((x,), {}),
            "save": ((os.path.join(tmp, "m.keras"),), {}), "save_weights": ((os.path.join(tmp, "m.weights.h5"),), {}),
            "summary": ((), {}), "to_json": ((), {}), "get_config": ((), {}), "__call__": ((x,), {}),
        }
        if method == "load_weights":
            model.save_weights(os.path.join(tmp, "l.weights.h5"))
            return model.load_weights, (os.path.join(tmp, "l.weights.h5"),), {}
        if method in calls:
            args, kwargs = calls[method]
            return getattr(model, method), args, kwargs
        return None
    if cls_path == "layers.Layer":
        layer = keras.layers.Dense(2)
        calls = {"add_weight": ((), {"shape": (1,)}), "__call__": ((x,), {}), "build": (((None, 2),), {})}
        if method in calls:
            args, kwargs = calls[method]
            return getattr(layer, method), args, kwargs
        return None
    return None


def _signature(fn: Any) -> Optional[inspect.Signature]:
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


def _names(sig: inspect.Signature) -> List[str]:
    return [p.name for p in sig.parameters.values() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]


def _has_var_keyword(sig: inspect.Signature) -> bool:
    return any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values())


def _sample(param: Optional[inspect.Parameter], name: str) -> Any:
    if param is not None and param.default is not inspect.Parameter.empty:
        return param.default
    return _KWARG_SAMPLES.get(name)


_KWARG_SAMPLES = {"input_dim": 2, "input_shape": (2,), "batch_input_shape": (None, 2), "batch_size": None,
                  "weights": None, "activity_regularizer": None, "autocast": True, "implementation": 1}


def _allowed_kwargs(cls: type) -> List[str]:
    """The names tf_keras's Layer.__init__ accepts through **kwargs (its `allowed_kwargs` set literal)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls.__init__)))
    except (OSError, TypeError, SyntaxError):
        return []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "allowed_kwargs"
                                                for t in node.targets) and isinstance(node.value, ast.Set):
            return sorted(e.value for e in node.value.elts if isinstance(e, ast.Constant))
    return []


# -- members -------------------------------------------------------------------------
def _wrapper_target(cls: type, member: str) -> Optional[str]:
    """B when Keras 2's member is `return self.B(<its own parameters>)` (or `self.B(...)`, or a property
    returning `self.B`), else None."""
    raw = inspect.getattr_static(cls, member, None)
    fn = raw.fget if isinstance(raw, property) else getattr(raw, "__func__", raw)
    if not isinstance(fn, types.FunctionType):
        return None
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return None
    func = tree.body[0]
    if not isinstance(func, ast.FunctionDef):
        return None
    body = [s for s in func.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if len(body) != 1 or not isinstance(body[0], (ast.Return, ast.Expr)) or body[0].value is None:
        return None
    value = body[0].value
    params = [a.arg for a in func.args.args[1:]]
    if isinstance(raw, property):
        if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) and value.value.id == "self":
            return value.attr
        return None
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
            and isinstance(value.func.value, ast.Name) and value.func.value.id == "self"):
        return None
    passed = [a.id for a in value.args if isinstance(a, ast.Name)]
    if len(passed) != len(value.args) or value.keywords and any(
            k.arg is None or not isinstance(k.value, ast.Name) or k.arg != k.value.id for k in value.keywords):
        return None
    if passed + [k.arg for k in value.keywords] != params or func.args.vararg or func.args.kwarg:
        return None
    return value.func.attr


def _member_replacement(cls2: type, cls3: type, member: str) -> Optional[Dict[str, Any]]:
    value = inspect.getattr_static(cls2, member, None)
    for other in _public(cls2):
        if other != member and hasattr(cls3, other) and value is not None \
                and inspect.getattr_static(cls2, other, None) is value:
            return {"member": other, "exact": True, "why": "the same function in Keras 2"}
    target = _wrapper_target(cls2, member)
    if target is not None and target != member and hasattr(cls3, target):
        sig2 = _signature(getattr(cls2, target, None))
        sig3 = _signature(getattr(cls3, target, None))
        exact = sig2 is not None and sig3 is not None and _names(sig2) == _names(sig3)
        return {"member": target, "exact": exact,
                "why": "Keras 2's member only calls it" + ("" if exact else " (Keras 3's takes other parameters)")}
    return None


# -- the derivation -----------------------------------------------------------------
def derive() -> Dict[str, Any]:
    import tensorflow as tf
    import keras
    import tf_keras

    keras.utils.set_random_seed(0)
    entries: List[Dict[str, Any]] = []
    k2_modules = {p: m for p, m in _walk_modules(tf_keras).items()}
    k2_paths = _object_paths(k2_modules)
    k3_modules = _walk_modules(keras)
    k3_names: Dict[str, List[str]] = {}
    for path, module in k3_modules.items():
        for name in _public(module):
            k3_names.setdefault(name, []).append(path)

    # modules and names
    for path in sorted(k2_modules):
        module2 = k2_modules[path]
        gone: Dict[str, Dict[str, Any]] = {}
        if path:
            outcomes = {s: _module_outcomes(s, path) for s in SPELLINGS}
            gone = {s: o for s, o in outcomes.items() if o["import"]["breaks"] or o["attribute"]["breaks"]}
            if gone:
                entries.append({"kind": "module", "qualname": _qual(path), "spellings": outcomes,
                                "breaks": sorted(gone)})
        if path.startswith("protobuf"):
            continue
        for name in _public(module2):
            try:
                value = getattr(module2, name)
            except Exception:  # noqa: BLE001
                continue
            if isinstance(value, types.ModuleType):
                continue  # a module entry of its own
            outcomes = {}
            broken = []
            for spelling in SPELLINGS:
                if spelling in gone:
                    outcomes[spelling] = {"via_module": True, "attribute": gone[spelling]["attribute"],
                                          "import": gone[spelling]["import"]}
                    broken.append(spelling)
                    continue
                if _exists(spelling, path, name):
                    stub = _stub_outcome(spelling, path, name, value, keras)
                    if stub is not None:  # kept as a name that raises when made (optimizers.legacy.Adam())
                        outcomes[spelling] = {"attribute": {"breaks": False}, "import": {"breaks": False},
                                              "call": stub}
                        broken.append(spelling)
                    continue
                outcomes[spelling] = {
                    "attribute": _run(_chain, _keras3_root(spelling), f"{path}.{name}" if path else name),
                    "import": _from_import(f"{spelling}.{path}" if path else spelling, name),
                }
                if outcomes[spelling]["attribute"]["breaks"] or outcomes[spelling]["import"]["breaks"]:
                    broken.append(spelling)
            if not outcomes:
                continue
            entry = {"kind": "name", "qualname": _qual(path, name), "spellings": outcomes, "breaks": sorted(broken)}
            replacements = {}
            for spelling in outcomes:
                found = _name_replacement(path, name, value, spelling, k2_paths, k3_names)
                if found is not None:
                    replacements[spelling] = found
            if replacements:
                entry["replacement"] = replacements
            entries.append(entry)

    # members
    cache: Dict[str, Any] = {}
    member_classes = set(_MEMBER_CLASSES)
    for module_path in _MEMBER_MODULES:
        for name in _public(k2_modules.get(module_path)):
            if inspect.isclass(getattr(k2_modules[module_path], name)):
                member_classes.add(f"{module_path}.{name}")
    removed_on: Dict[int, set] = {}  # id(Keras 2 class) -> members recorded for it
    classes2 = []
    for cls_path in sorted(member_classes):
        try:
            cls2 = _chain(tf_keras, cls_path)
            cls3 = _chain(keras, cls_path)
        except Exception:  # noqa: BLE001
            continue
        if inspect.isclass(cls2) and inspect.isclass(cls3):
            classes2.append((len(cls2.__mro__), cls_path, cls2, cls3))
    for _depth, cls_path, cls2, cls3 in sorted(classes2):
        missing = [m for m in _public(cls2) if not hasattr(cls3, m)]
        inherited = set()
        for base in cls2.__mro__[1:]:
            inherited |= removed_on.get(id(base), set())
        removed_on[id(cls2)] = set(missing) | inherited
        instance = _instance(cls_path, keras, cache)
        for member in missing:
            if member in inherited:
                continue
            target = instance if instance is not None else cls3
            outcome = _run(getattr, target, member)
            entry = {"kind": "member", "qualname": _qual(cls_path), "member": member,
                     "on": "instance" if instance is not None else "class", "outcome": outcome}
            replacement = _member_replacement(cls2, cls3, member)
            if replacement is not None:
                entry["replacement"] = replacement
            sig2 = _signature(getattr(cls2, member, None)) if callable(getattr(cls2, member, None)) else None
            if sig2 is not None and "node_index" in sig2.parameters:
                # Keras 2's layer-node API (``get_input_shape_at(node_index)``): no other library's name
                entry["node_api"] = True
            entries.append(entry)

    # A member recorded on a base (Layer.output_shape) that a subclass has under Keras 3 (a functional
    # Model's output_shape): an entry of its own, not a breakage, so that the loader's walk through the
    # bases stops there.
    recorded = {(e["qualname"], e["member"]): e for e in entries if e["kind"] == "member"}
    for _depth, cls_path, cls2, cls3 in sorted(classes2):
        qualname = _qual(cls_path)
        instance = _instance(cls_path, keras, cache)
        for base in _keras3_bases(cls3, keras):
            for (owner, member), entry in sorted(recorded.items()):
                if owner != base or (qualname, member) in recorded or not entry["outcome"]["breaks"]:
                    continue
                outcome = _run(getattr, instance if instance is not None else cls3, member)
                if not outcome["breaks"]:
                    override = {"kind": "member", "qualname": qualname, "member": member,
                                "on": "instance" if instance is not None else "class", "outcome": outcome,
                                "overrides": base}
                    recorded[(qualname, member)] = override
                    entries.append(override)

    # keywords
    callables = _shared_callables(keras, k2_modules, classes2)
    entries.extend(_keywords(callables, tf_keras, keras))
    entries.extend(_positionals(callables))
    # TensorFlow
    entries.extend(_tf_names(tf))
    entries.extend(_tf_keywords(tf))
    entries.extend(_tf_positionals(tf))
    entries.extend(_safe_modes(keras, tf_keras))  # last: a switch it executes stays on in this process

    entries.sort(key=lambda e: (e["kind"], e["qualname"], e.get("member", ""), e.get("keyword", "")))
    classes = {_qual(path): _keras3_bases(cls3, keras) for _d, path, _c2, cls3 in classes2}
    return {
        "classes": classes,
        "format": FORMAT,
        "generated_by": "scripts/derive_migration.py",
        "versions": {"tensorflow": tf.__version__, "keras": keras.__version__, "tf_keras": tf_keras.__version__},
        "entries": entries,
    }


def _keras3_bases(cls3: type, keras) -> List[str]:
    """Public Keras 3 paths of the class's bases that are member classes (Layer, Model, Metric...)."""
    found = []
    for path in _MEMBER_CLASSES:
        try:
            base = _chain(keras, path)
        except Exception:  # noqa: BLE001
            continue
        if inspect.isclass(base) and base is not cls3 and issubclass(cls3, base):
            found.append(_qual(path))
    return sorted(found)


def _shared_callables(keras, k2_modules, classes2) -> List[Tuple[str, Any, Any, str]]:
    """Every public callable both Kerases have: (qualname, Keras 2's, Keras 3's, "class"/"function"/"method")."""
    callables: List[Tuple[str, Any, Any, str]] = []
    for path in sorted(k2_modules):
        if path.startswith("protobuf"):
            continue
        module2 = k2_modules[path]
        for name in _public(module2):
            value2 = getattr(module2, name, None)
            if isinstance(value2, types.ModuleType) or not callable(value2) or not _exists("keras", path, name):
                continue
            value3 = _chain(keras, f"{path}.{name}" if path else name)
            if inspect.isclass(value2) != inspect.isclass(value3):
                continue
            callables.append((_qual(path, name), value2, value3, "class" if inspect.isclass(value2) else "function"))
    for _depth, cls_path, cls2, cls3 in classes2:
        if cls_path not in _METHOD_CLASSES:
            continue
        for member in _public(cls2):
            fn2 = inspect.getattr_static(cls2, member, None)
            if not isinstance(fn2, types.FunctionType) or not hasattr(cls3, member):
                continue
            fn3 = getattr(cls3, member)
            if callable(fn3):
                callables.append((f"{_qual(cls_path)}.{member}", getattr(cls2, member), fn3, "method"))
    return callables


def _signature_pairs(callables: List[Tuple[str, Any, Any, str]]):
    """Each callable once, by qualname, with both signatures (a class's ``__init__``): (qualname, Keras 2's,
    Keras 3's, what, Keras 2's signature, Keras 3's); those whose signature cannot be read are skipped."""
    seen = set()
    for qualname, fn2, fn3, what in sorted(callables, key=lambda c: c[0]):
        if qualname in seen:
            continue
        seen.add(qualname)
        sig2 = _signature(fn2.__init__ if what == "class" else fn2)
        sig3 = _signature(fn3.__init__ if what == "class" else fn3)
        if sig2 is not None and sig3 is not None:
            yield qualname, fn2, fn3, what, sig2, sig3


def _positional_names(sig: inspect.Signature) -> List[str]:
    """The parameters a positional argument can fill, in order (``*args`` as ``*name``, last), without
    ``self``/``cls``."""
    names: List[str] = []
    for param in sig.parameters.values():
        if param.kind in (param.POSITIONAL_ONLY, param.POSITIONAL_OR_KEYWORD):
            names.append(param.name)
        elif param.kind == param.VAR_POSITIONAL:
            names.append("*" + param.name)
            break
    return names[1:] if names[:1] in (["self"], ["cls"]) else names


def _positionals(callables: List[Tuple[str, Any, Any, str]]) -> List[Dict[str, Any]]:
    """Callables whose positional parameters differ from the first one on: a positional argument there
    fills another parameter under Keras 3 (``compile(opt, loss, ["accuracy"])``: Keras 2's ``metrics``
    is Keras 3's ``loss_weights``), or none (a TypeError). Each entry's binding is executed: Keras 3's
    signature binds a call with that many positional arguments (``inspect.Signature.bind``), which is
    what Python does when the call runs. Only parameters that Keras 2 names elsewhere or Keras 3 takes
    under Keras 2's name are kept: a parameter renamed in place (``alpha`` -> ``negative_slope``) may
    mean the same."""
    entries: List[Dict[str, Any]] = []
    for qualname, fn2, fn3, what, sig2, sig3 in _signature_pairs(callables):
        names2, names3 = _positional_names(sig2), _positional_names(sig3)
        for position, name in enumerate(names2):
            other = names3[position] if position < len(names3) else None
            if name.startswith("*") or (other is not None and other.startswith("*")):
                break
            if other == name:
                continue
            all3 = set(sig3.parameters)
            if other is not None and other not in names2 and name not in all3:
                break  # renamed in place: maybe the same meaning
            try:
                bound = sig3.bind(*([None] * (position + (0 if what == "function" else 1))), None)
                fills = list(bound.arguments)[-1]
                outcome = {"breaks": False, "binds": fills}
            except TypeError as error:
                fills, outcome = None, {"breaks": True, "error": "TypeError", "message": _clean(str(error))}
            after = [n for n in names2[position:] if not n.startswith("*")]
            entry = {"kind": "positional", "qualname": qualname, "callable": what, "position": position,
                     "keras2": name, "keras3": fills, "keyword_in_keras3": name in all3,
                     "keras2_names": after, "keras3_keywords": [n for n in after if n in all3],
                     "executed": "bound by Keras 3's signature", "outcome": outcome}
            entries.append(entry)
            break
    return entries


def _keywords(callables: List[Tuple[str, Any, Any, str]], tf_keras, keras) -> List[Dict[str, Any]]:
    entries: List[Dict[str, Any]] = []
    layer2 = tf_keras.layers.Layer
    allowed = _allowed_kwargs(layer2)
    with tempfile.TemporaryDirectory() as tmp:
        for qualname, fn2, fn3, what, sig2, sig3 in _signature_pairs(callables):
            names3 = set(_names(sig3))
            params2 = {p.name: p for p in sig2.parameters.values() if p.kind in (p.POSITIONAL_OR_KEYWORD,
                                                                                p.KEYWORD_ONLY)}
            params2.pop("self", None)
            extra = []
            base_params: Dict[str, inspect.Parameter] = {}
            if what == "class" and inspect.isclass(fn2) and _has_var_keyword(sig2):
                # **kwargs flows up to the bases' __init__ (BatchNormalization -> BatchNormalizationBase(fused=))
                for base in fn2.__mro__[1:]:
                    if base is object or "__init__" not in vars(base):
                        continue
                    base_sig = _signature(base.__init__)
                    if base_sig is None:
                        break
                    for param in base_sig.parameters.values():
                        if param.name != "self" and param.name not in params2 and param.name not in base_params \
                                and param.kind in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY):
                            base_params[param.name] = param
                            extra.append(param.name)
                    if not _has_var_keyword(base_sig) or base is layer2:
                        break
                if issubclass(fn2, layer2):
                    extra += [k for k in allowed if k not in params2 and k not in extra]
            for keyword in sorted(set(params2) | set(extra)):
                if keyword in names3:
                    continue
                value = _sample(params2.get(keyword, base_params.get(keyword)), keyword)
                entry = {"kind": "keyword", "qualname": qualname, "keyword": keyword, "callable": what,
                         "value": _clean(repr(value)), "through_kwargs": keyword not in params2}
                if not _has_var_keyword(sig3):
                    entry["outcome"] = _call_with_only(fn3, keyword, value)
                    entry["executed"] = "call with only this keyword (Keras 3 has no **kwargs)"
                else:
                    entry.update(_execute_keyword(qualname, what, fn3, keyword, value, keras, tmp))
                outcome = entry.get("outcome") or {}
                # the error names the keyword as unknown (not a complaint about the value passed)
                entry["rejects_name"] = bool(outcome.get("breaks")) and bool(_REJECTED.search(outcome["message"])) \
                    and not outcome.get("with_or_without")
                replacement = _keyword_replacement(keyword, sig2, sig3, entry.get("outcome"))
                if replacement is not None:
                    entry["replacement"] = replacement
                entries.append(entry)
    return entries


_REJECTED = re.compile(r"unexpected keyword argument|[Uu]nrecognized keyword|not recognized|[Ii]nvalid keyword"
                       r"|not supported|no longer supported|is deprecated|removed")


def _keyword_replacement(keyword: str, sig2: inspect.Signature, sig3: inspect.Signature,
                         outcome: Optional[Dict[str, Any]]) -> Optional[Dict[str, Any]]:
    """The Keras 3 parameter that Keras 3's own message names (`Use negative_slope instead`), else the one
    at the same position, required in both, under a name Keras 2 did not have (`to_categorical(y)` -> `x`); never exact."""
    names2, names3 = _names(sig2), _names(sig3)
    text = " ".join(str((outcome or {}).get(k, "")) for k in ("message", "warning"))
    for word in re.findall(r"`?([A-Za-z_][A-Za-z_0-9]*)`?", text):
        if word in names3 and word not in names2 and word != keyword and re.search(
                rf"[Uu]se `?{word}\b", text):
            return {"keyword": word, "exact": False, "why": "named by Keras 3's message"}
    params2, params3 = list(sig2.parameters.values()), list(sig3.parameters.values())
    if keyword in names2:
        index = names2.index(keyword)
        required = index < len(params2) and index < len(params3) and all(
            p.default is inspect.Parameter.empty and p.kind is p.POSITIONAL_OR_KEYWORD
            for p in (params2[index], params3[index]))
        if required and names3[index] not in names2 and names3[index] != "self":
            return {"keyword": names3[index], "exact": False, "why": "Keras 3's parameter at the same position"}
    return None


def _call_with_only(fn: Any, keyword: str, value: Any) -> Dict[str, Any]:
    return _run(fn, **{keyword: value})


def _execute_keyword(qualname: str, what: str, fn3: Any, keyword: str, value: Any, keras, tmp: str):
    if what == "class":
        values = _fill(fn3, keras)
        if values is None:
            return {"outcome": None, "executed": "not executed: required arguments unknown"}
        baseline = _run(fn3, **values)
        if baseline["breaks"]:
            # the class itself cannot be made under Keras 3 (a stub, or abstract): its own entry says so
            return {"outcome": dict(_run(fn3, **values, **{keyword: value}), with_or_without=True),
                    "executed": "constructed with and without it: both fail (the class itself breaks)"}
        return {"outcome": _run(fn3, **values, **{keyword: value}), "executed": "constructed with it"}
    if what == "method":
        cls_path, method = qualname[len("keras."):].rsplit(".", 1)
        call = _method_call(cls_path, method, keras, tmp)
        if call is None:
            owner = _chain(keras, cls_path)
            if not hasattr(owner, method):  # the method itself is gone: its member entry says so
                return {"outcome": dict(_run(getattr, owner, method), with_or_without=True),
                        "executed": "looked up: Keras 3's class has no such method (the member breaks)"}
            outcome = _run(_keyword_only_call(owner, method, keras), **{keyword: value})
            bare = _run(_keyword_only_call(owner, method, keras))
            if outcome["breaks"] and bare["breaks"] and bare.get("error") == outcome.get("error") \
                    and bare.get("message") == outcome.get("message"):
                outcome["with_or_without"] = True  # the method raises whatever it is given (`add_metric`)
            return {"outcome": outcome, "executed": "called with only this keyword on an instance (and without it)"}
        fn, args, kwargs = call
        baseline = _run(fn, *args, **kwargs)
        if baseline["breaks"]:
            return {"outcome": None, "executed": "not executed: the baseline call fails"}
        call = _method_call(cls_path, method, keras, tmp)
        fn, args, kwargs = call
        return {"outcome": _run(fn, *args, **kwargs, **{keyword: value}), "executed": "called with it"}
    recipe = _FUNCTION_CALLS.get(qualname)
    if recipe is None:
        return {"outcome": None, "executed": "not executed: Keras 3 takes **kwargs and no recipe runs it"}
    value = _FUNCTION_VALUES.get(keyword, value)  # a value that uses the keyword (its default may not)
    with _local_datasets(keras, tmp):
        args = recipe(keras, tmp)
        baseline = _run(fn3, *args)
        if baseline["breaks"]:
            return {"outcome": None, "executed": f"not executed: the baseline call fails ({baseline['error']})"}
        return {"outcome": _run(fn3, *recipe(keras, tmp), **{keyword: value}), "executed": "called with it",
                "value": _clean(repr(value))}


_FUNCTION_VALUES = {"layer_range": ["dense", "dense"], "cache_dir": "datasets", "normalize": True}


@contextlib.contextmanager
def _local_datasets(keras, tmp: str):
    """``keras.datasets`` loaders read a small local file instead of downloading theirs; ``plot_model``
    needs no graphviz program."""
    import numpy as np
    from keras.src.datasets import imdb

    path = os.path.join(tmp, "imdb.npz")
    ragged = np.empty(2, dtype=object)
    ragged[0], ragged[1] = [1, 5, 7], [1, 9]
    np.savez(path, x_train=ragged, y_train=np.array([0, 1]), x_test=ragged, y_test=np.array([1, 0]))
    original = imdb.get_file
    imdb.get_file = lambda *args, **kwargs: path
    # plot_model draws with the graphviz program, which a machine may lack (then it raises, or only
    # prints in IPython): taken as present, and the drawing as written, its arguments are what runs.
    import pydot
    from keras.src.utils import model_visualization

    checked, write = model_visualization.check_graphviz, pydot.Dot.write
    model_visualization.check_graphviz = lambda: True
    pydot.Dot.write = lambda self, *args, **kwargs: True
    try:
        yield
    finally:
        imdb.get_file = original
        model_visualization.check_graphviz, pydot.Dot.write = checked, write


def _small_model(keras):
    inputs = keras.Input((2,))
    return keras.Model(inputs, keras.layers.Dense(1)(inputs))


# Keras 3 functions that take **kwargs: the arguments of a real call (the keyword is added to them).
_FUNCTION_CALLS = {
    "keras.layers.dot": lambda keras, tmp: ([keras.Input((2,)), keras.Input((2,))], 1),
    "keras.datasets.imdb.load_data": lambda keras, tmp: (),
    "keras.models.save_model": lambda keras, tmp: (_small_model(keras), os.path.join(tmp, "s.keras")),
    "keras.saving.save_model": lambda keras, tmp: (_small_model(keras), os.path.join(tmp, "t.keras")),
    "keras.utils.model_to_dot": lambda keras, tmp: (_small_model(keras),),
    "keras.utils.plot_model": lambda keras, tmp: (_small_model(keras), os.path.join(tmp, "m.pdf")),  # no IPython
}


def _keyword_only_call(owner: type, method: str, keras):
    """A bound ``method`` of a small instance of ``owner`` (a Keras 3 model or layer)."""
    if issubclass(owner, keras.Model):
        return getattr(_small_model(keras), method)
    return getattr(keras.layers.Dense(2), method)


# -- TensorFlow ------------------------------------------------------------------------
def _tf_tree(tf) -> Dict[str, types.ModuleType]:
    return _walk_modules(tf, skip=("compat", "keras", "estimator", "contrib", "python", "core", "tools",
                                   "experimental", "summary", "losses", "metrics", "optimizers",
                                   "initializers"), depth=_TF_DEPTH)


def _tf_names(tf) -> List[Dict[str, Any]]:
    v1 = tf.compat.v1
    v1_modules = _walk_modules(v1, skip=("compat", "keras", "estimator"), depth=_TF_DEPTH)
    tf2 = _tf_tree(tf)
    tf2_paths = _object_paths(tf2)
    entries = []
    for path in sorted(v1_modules):
        module1 = v1_modules[path]
        if path and ".".join(["tensorflow", path]).count(".") > _TF_DEPTH:
            continue
        try:
            module2 = _chain(tf, path)
        except Exception:  # noqa: BLE001
            continue  # recorded as a removed name of its parent
        if not isinstance(module2, types.ModuleType) and not hasattr(module2, "__getattr__"):
            continue
        names2 = set(dir(module2))
        for name in _public(module1):
            if name in names2:
                continue
            try:
                value = getattr(module1, name)
            except Exception:  # noqa: BLE001
                continue
            qualname = ".".join(["tensorflow"] + ([path] if path else []) + [name])
            module_name = ".".join(["tensorflow"] + ([path] if path else []))
            entry = {"kind": "tf_name", "qualname": qualname,
                     "is_module": isinstance(value, types.ModuleType),
                     "outcome": {"attribute": _run(getattr, module2, name),
                                 "import": _from_import(module_name, name)}}
            entry["breaks"] = entry["outcome"]["attribute"]["breaks"]
            replacement = None
            if callable(value) or isinstance(value, types.ModuleType):
                same = sorted(tf2_paths.get(id(value), ()), key=lambda pn: (pn[1] != name, pn[0].count("."), pn))
                if same:
                    other_path, other_name = same[0]
                    replacement = {"qualname": ".".join(["tensorflow"] + ([other_path] if other_path else [])
                                                        + [other_name]),
                                   "exact": True, "why": "the same object in TensorFlow 2"}
            if replacement is None:
                replacement = {"qualname": ".".join(["tensorflow.compat.v1"] + ([path] if path else []) + [name]),
                               "exact": False, "why": "tf.compat.v1 keeps it (TensorFlow 1 semantics)"}
            entry["replacement"] = replacement
            entries.append(entry)
    return entries


_DEPRECATED_ARGS = re.compile(r"SOME ARGUMENTS ARE DEPRECATED: `\((.*?)\)`")
_DEPRECATED_VALUES = re.compile(r"SOME ARGUMENT VALUES ARE DEPRECATED: `\((.*?)\)`")
_INSTRUCTIONS = re.compile(r"Instructions for updating:\n(.*?)(?:\n\n|\Z)", re.S)
_USE = re.compile(r"[Uu]se `?([A-Za-z_][A-Za-z_0-9]*)`?(?:=\S*)? instead|[Uu]se `?([A-Za-z_][A-Za-z_0-9]*)`?")

# (qualname, keyword) -> (snippet, the deprecated arguments, their current spelling or None). Every
# entry runs with the deprecated arguments, then with the current spelling (outputs compared: an exact
# replacement), or without them when TF names none (outputs compared: is dropping them exact?).
# ``out`` is a list of plain values (numbers, strings, shapes, whether a gradient is None).
_GRAPH_DEF = """
g = tf.Graph()
with g.as_default():
    tf.constant(1.0, name="c")
with tf.Graph().as_default() as h:
    {fn}(g.as_graph_def(), name=""{args})
    out = [n.name for n in h.as_graph_def().node]
"""
_FOLD = """
def run(x):
    return {fn}{call}
x = tf.constant([1.0, 2.0, 3.0])
out = []
for f in (run, tf.function(run)):  # eagerly, then traced
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    out += [float(tf.reduce_sum(y)), tape.gradient(y, x) is None]
"""
_NORMALIZE = "out = {fn}(tf.constant([[3.0, 4.0], [1.0, 0.0]]){args}).numpy().tolist()"
_GENERATOR = """
def gen():
    yield [1, 2]
    yield [3, 4]
ds = tf.data.Dataset.from_generator(gen{args})
out = [x.numpy().tolist() for x in ds] + [str(ds.element_spec)]
"""
_RETRACES = """
traces = []
def f(x: tf.Tensor):
    traces.append(1)
    return tf.reduce_sum(x) * 2.0
g = tf.function(f{args})
out = [float(g(tf.ones([n]))) for n in range(1, 6)] + [float(g(1.0)), float(g(2.0)), len(traces)]
"""
_VERIFY = {
    ("tensorflow.Graph.create_op", "compute_shapes"): ("""
g = tf.Graph()
with g.as_default():
    a = tf.constant([1.0, 2.0])
    op = g.create_op("Identity", [a], [tf.float32]{args})
    out = [op.outputs[0].shape.as_list()]
""", ", compute_shapes=True", None),
    ("tensorflow.Variable", "caching_device"): (
        "v = tf.Variable([1.0, 2.0]{args})\nout = v.read_value().numpy().tolist()", ', caching_device="/cpu:0"',
        None),
    ("tensorflow.config.optimizer.set_jit", "jit_config"): (
        "tf.config.optimizer.set_jit({args})\nout = [tf.config.optimizer.get_jit()]\n"
        "tf.config.optimizer.set_jit(False)", "True", '"autoclustering"'),
    ("tensorflow.data.Dataset.from_generator", "output_types"): (
        _GENERATOR, ", output_types=tf.int32", ", output_signature=tf.TensorSpec(shape=None, dtype=tf.int32)"),
    ("tensorflow.data.Dataset.from_generator", "output_shapes"): (
        _GENERATOR, ", output_types=tf.int32, output_shapes=(2,)",
        ", output_signature=tf.TensorSpec(shape=(2,), dtype=tf.int32)"),
    ("tensorflow.foldl", "back_prop"): (
        _FOLD.replace("{call}", "(lambda a, v: a + v * v, x{args})"), ", back_prop=False", None),
    ("tensorflow.foldr", "back_prop"): (
        _FOLD.replace("{call}", "(lambda a, v: a + v * v, x{args})"), ", back_prop=False", None),
    ("tensorflow.scan", "back_prop"): (
        _FOLD.replace("{call}", "(lambda a, v: a + v * v, x{args})"), ", back_prop=False", None),
    ("tensorflow.map_fn", "back_prop"): (
        _FOLD.replace("{call}", "(lambda v: v * v, x{args})"), ", back_prop=False", None),
    ("tensorflow.while_loop", "back_prop"): (
        _FOLD.replace("{call}", "(lambda i, a: i < 3, lambda i, a: (i + 1, a * x), (0, x){args})[1]"),
        ", back_prop=False", None),
    ("tensorflow.map_fn", "dtype"): (
        "out = tf.map_fn(lambda v: tf.cast(v, tf.float32) * 2.0, tf.range(3){args}).numpy().tolist()",
        ", dtype=tf.float32", ", fn_output_signature=tf.float32"),
    ("tensorflow.function", "experimental_compile"): (
        "g = tf.function(lambda x: x * 2.0{args})\nout = [float(g(tf.constant(1.5)))]",
        ", experimental_compile=True", ", jit_compile=True"),
    ("tensorflow.function", "experimental_relax_shapes"): (
        _RETRACES, ", experimental_relax_shapes=True", ", reduce_retracing=True"),
    ("tensorflow.function", "experimental_follow_type_hints"): (
        _RETRACES, ", experimental_follow_type_hints=True", None),
    ("tensorflow.import_graph_def", "op_dict"): (
        _GRAPH_DEF.replace("{fn}", "tf.import_graph_def"), ", op_dict=None", None),
    ("tensorflow.graph_util.import_graph_def", "op_dict"): (
        _GRAPH_DEF.replace("{fn}", "tf.graph_util.import_graph_def"), ", op_dict=None", None),
    ("tensorflow.linalg.LinearOperator", "graph_parents"): ("""
class Op(tf.linalg.LinearOperator):
    def __init__(self, **kwargs):
        super().__init__(dtype=tf.float32, is_square=True, **kwargs)
    def _shape(self):
        return tf.TensorShape([2, 2])
    def _shape_tensor(self):
        return tf.constant([2, 2])
    def _matmul(self, x, adjoint=False, adjoint_arg=False):
        return x
out = [Op({args}).shape.as_list()]
""", "graph_parents=[]", None),
    ("tensorflow.train.CheckpointOptions", "experimental_enable_async_checkpoint"): (
        "out = [tf.train.CheckpointOptions({args}).enable_async]", "experimental_enable_async_checkpoint=True",
        "enable_async=True"),
}
for _fn in ("tf.linalg.l2_normalize", "tf.math.l2_normalize", "tf.nn.l2_normalize"):
    _VERIFY[("tensorflow." + _fn[3:], "dim")] = (_NORMALIZE.replace("{fn}", _fn), ", dim=1", ", axis=1")
for _key in ("tensorflow.foldl", "tensorflow.foldr", "tensorflow.scan", "tensorflow.map_fn", "tensorflow.while_loop"):
    _fn = "tf." + _key[len("tensorflow."):]
    _VERIFY[(_key, "back_prop")] = (_VERIFY[(_key, "back_prop")][0].replace("{fn}", _fn),) + _VERIFY[(_key, "back_prop")][1:]


def _callables(tf) -> List[Tuple[str, Any]]:
    found = []
    for path, module in sorted(_tf_tree(tf).items()):
        for name in _public(module):
            value = getattr(module, name, None)
            qualname = ".".join(["tensorflow"] + ([path] if path else []) + [name])
            if inspect.isclass(value):
                for member in sorted(vars(value)):
                    if member.startswith("_") and member != "__init__":
                        continue
                    raw = vars(value)[member]
                    fn = raw.__func__ if isinstance(raw, (staticmethod, classmethod)) else raw
                    if callable(fn):
                        found.append((f"{qualname}.{member}" if member != "__init__" else qualname, fn))
            elif callable(value):
                found.append((qualname, value))
    return found


# The TF modules whose functions are executed with a misplaced positional argument (ops on tensors; not
# files, summaries, distribution or configuration).
_TF_OP_MODULES = ("", "math", "nn", "linalg", "signal", "image", "strings", "random", "dtypes", "bitwise")
_TF_TRAPS = {"name": "a dtype", "keepdims": "a dtype"}


def _tf_positionals(tf) -> List[Dict[str, Any]]:
    """TF functions whose ``name`` or ``keepdims`` parameter a positional argument can reach, executed with
    a dtype there (``tf.sqrt(x, tf.float32)``, ``tf.reduce_mean(x, 0, tf.float32)``): eagerly, and traced
    in a ``tf.function``, each against the same call with the parameter by keyword. The arguments before
    it are a 2x2 float tensor where the parameter has no default, else its default. Only entries whose
    baseline runs are kept (``tried`` counts the others)."""
    import numpy as np

    entries = []
    tried = 0
    for path in _TF_OP_MODULES:
        module = _chain(tf, path) if path else tf
        for name in _public(module):
            fn = getattr(module, name, None)
            if inspect.isclass(fn) or not callable(fn) or isinstance(fn, types.ModuleType):
                continue
            sig = _signature(fn)
            if sig is None:
                continue
            names = _positional_names(sig)
            qualname = ".".join(["tensorflow"] + ([path] if path else []) + [name])
            for trap in _TF_TRAPS:
                if trap not in names:
                    continue
                position = names.index(trap)
                tried += 1
                args = []
                for param in list(sig.parameters.values())[:position]:
                    args.append(tf.constant([[1.0, 4.0], [9.0, 16.0]]) if param.default is param.empty
                                else param.default)
                keyword = {trap: "n" if trap == "name" else False}
                if _run(fn, *args, **keyword)["breaks"] or _run(_traced(fn, args, keyword))["breaks"]:
                    continue
                eager = _run(fn, *args, tf.float32)
                traced = _run(_traced(fn, args + [tf.float32], {}))
                entry = {"kind": "tf_positional", "qualname": qualname, "parameter": trap, "position": position,
                         "executed": f"called with {_TF_TRAPS[trap]} at position {position + 1}, eagerly and "
                                     "traced, and with the parameter by keyword",
                         "outcome": {"eager": eager, "traced": traced}}
                if trap == "keepdims" and not eager["breaks"]:
                    plain = fn(*args, keepdims=False)
                    kept = fn(*args, tf.float32)
                    entry["outcome"]["shape_changed"] = list(np.shape(plain)) != list(np.shape(kept))
                entries.append(entry)
    print(f"tf positional traps: {len(entries)} executed of {tried} tried", file=sys.stderr)
    return entries


def _traced(fn, args, kwargs):
    import tensorflow as tf

    return tf.function(lambda: fn(*args, **kwargs), autograph=False)


def _tf_keywords(tf) -> List[Dict[str, Any]]:
    from tensorflow.python.util import tf_decorator

    entries = []
    seen = set()
    for qualname, fn in _callables(tf):
        decorators, target = tf_decorator.unwrap(fn)
        for decorator in decorators:
            if decorator.decorator_name != "deprecated":
                continue
            doc = decorator.decorator_doc or fn.__doc__ or ""
            for pattern, kind in ((_DEPRECATED_ARGS, "argument"), (_DEPRECATED_VALUES, "value")):
                match = pattern.search(doc)
                if match is None:
                    continue
                instructions = _INSTRUCTIONS.search(doc[match.end():])
                text = _clean(instructions.group(1)) if instructions else ""
                sig = _signature(target)
                params = set(_names(sig)) if sig is not None else set()
                for part in match.group(1).split(","):
                    keyword = part.strip().split("=")[0].strip()
                    if not keyword or (qualname, keyword) in seen:
                        continue
                    seen.add((qualname, keyword))
                    new = None
                    for use in _USE.finditer(text):
                        word = use.group(1) or use.group(2)
                        if word in params and word != keyword:
                            new = word
                            break
                    entry = {"kind": "tf_keyword", "qualname": qualname, "keyword": keyword,
                             "deprecated": kind, "instructions": text}
                    if new is not None:
                        entry["replacement"] = {"keyword": new, "exact": False,
                                                "why": "named by TensorFlow's instructions"}
                    positional = [q.name for q in (sig.parameters.values() if sig is not None else ())
                                  if q.kind in (q.POSITIONAL_ONLY, q.POSITIONAL_OR_KEYWORD)]
                    if positional[:1] in (["self"], ["cls"]):
                        positional = positional[1:]  # a constructor or method: called without it
                    if keyword in positional:
                        entry["position"] = positional.index(keyword)
                    if sig is not None and keyword not in params and not _has_var_keyword(sig):
                        # the marker names no parameter (``set_jit``'s ``jit_config``): passing it is a TypeError
                        entry["in_signature"] = False
                    if kind == "value" and "=" in part:
                        entry["value"] = part.split("=", 1)[1].strip()
                    verdict = _verify_tf(tf, qualname, keyword)
                    entry["outcome"] = verdict["outcome"]
                    entry["executed"] = verdict["executed"]
                    if verdict.get("old") is not None:
                        entry["results"] = {"deprecated": verdict["old"], "current": verdict["new"]}
                    if verdict.get("spelling") is not None and new is None and kind == "value":
                        # a deprecated value whose current value TF names (``set_jit(True)`` -> "autoclustering")
                        entry["replacement"] = {"keyword": keyword, "exact": False,
                                                "why": "named by TensorFlow's instructions"}
                        new = keyword
                    if verdict.get("spelling") is not None and new is not None:
                        entry["replacement"]["arguments"] = verdict["spelling"].lstrip(", ")
                        before, after = _VERIFY[(qualname, keyword)][1].lstrip(", "), entry["replacement"]["arguments"]
                        # the same value under the new name (``dim=1`` -> ``axis=1``): a plain rename
                        entry["replacement"]["rename"] = new != keyword and before.count("=") == after.count("=") == 1 and \
                            before.split("=", 1) == [keyword, after.split("=", 1)[1]] and \
                            after.split("=", 1)[0] == new
                        if verdict["exact"]:
                            entry["replacement"].update(exact=True, why="executed both ways: identical outputs")
                    elif "old" in verdict and verdict.get("spelling") is None:
                        entry["dropped_exact"] = bool(verdict["exact"])
                    entries.append(entry)
    return entries


def _verify_tf(tf, qualname: str, keyword: str) -> Dict[str, Any]:
    """Run the entry's snippet with the deprecated arguments and with their current spelling (or
    without them): what the old spelling gives (its warning), and whether the outputs are the same."""
    recipe = _VERIFY.get((qualname, keyword))
    if recipe is None:
        return {"outcome": {"breaks": False, "deprecated": True},
                "executed": "not executed: no recipe (the argument is still accepted)"}
    snippet, old, new = recipe
    results: Dict[str, Any] = {}
    outcome: Dict[str, Any] = {}
    for which, args in (("old", old), ("new", new if new is not None else "")):
        namespace: Dict[str, Any] = {"tf": tf}
        with _capture() as captured:
            exec(snippet.replace("{args}", args), namespace)  # noqa: S102
        if which == "old":
            outcome = _outcome(captured)
            if not outcome["breaks"]:
                outcome["deprecated"] = True  # marked so by TF, whether or not it warns
        results[which] = None if captured.error is not None else repr(namespace.get("out"))
    same = results["old"] is not None and results["old"] == results["new"]
    how = "with the current spelling" if new is not None else "without the argument"
    return {"outcome": outcome, "executed": f"executed with the deprecated argument and {how}", "exact": same,
            "old": results["old"], "new": results["new"], "spelling": new}


_RAN = "_tflint_gpu_lambda_ran"


def _lambda_model(keras):
    """A model whose ``Lambda`` runs a Python ``lambda`` that records it ran (builtins flag)."""
    body = lambda x: (__import__("builtins").__dict__.__setitem__("_tflint_gpu_lambda_ran", True), x)[1]  # noqa: E731
    return keras.Sequential([keras.Input((2,)), keras.layers.Lambda(body)])


def _ran(fn, /, *args, **kwargs) -> Dict[str, Any]:
    """Call ``fn`` (then call what it returned on a batch, when it is a layer or model): ``ran`` when
    the lambda's body ran, else ``refused`` with the error."""
    import builtins

    builtins.__dict__.pop(_RAN, None)
    with _capture() as captured:
        try:
            made = fn(*args, **kwargs)
            if callable(made):
                import numpy as np

                made(np.zeros((1, 2), "float32"))
        except Exception as error:  # noqa: BLE001
            captured.error = error
    if builtins.__dict__.pop(_RAN, False):
        return {"result": "ran"}
    outcome = _outcome(captured)
    outcome.pop("warnings", None)
    if outcome.get("message"):
        outcome["message"] = re.sub(r"\S*/(keras3|tf_keras)\.(keras|h5)", r"\1.\2", outcome["message"])
    return {"result": "refused" if outcome.get("error") else "not run", **outcome}


def _safe_mode_callables(root, flavour: str) -> List[Tuple[str, Any, inspect.Signature]]:
    found: Dict[str, Tuple[str, Any, inspect.Signature]] = {}
    for path, module in sorted(_walk_modules(root).items()):
        for name in _public(module):
            value = getattr(module, name, None)
            targets = [(name, value)]
            if inspect.isclass(value):  # the class whose config holds a Python lambda
                targets = [(f"{name}.from_config", value.from_config)] if name == "Lambda" else []
            for spelled, fn in targets:
                sig = _signature(fn) if fn is not None else None
                if sig is not None and "safe_mode" in sig.parameters:
                    qualname = _qual(path, spelled)
                    found.setdefault(qualname, (qualname, fn, sig))
    return [found[q] for q in sorted(found)]


def _safe_modes(keras, tf_keras) -> List[Dict[str, Any]]:
    entries: List[Dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for flavour, root in (("keras3", keras), ("tf_keras", tf_keras)):
            model = _lambda_model(root)
            files = {}
            for suffix in (".keras", ".h5"):
                files[suffix] = os.path.join(tmp, f"{flavour}{suffix}")
                with _capture():
                    model.save(files[suffix])
            config = root.saving.serialize_keras_object(model.layers[-1])
            for qualname, fn, sig in _safe_mode_callables(root, flavour):
                params = [p for p in sig.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
                position = next(i for i, p in enumerate(params) if p.name == "safe_mode")
                if qualname.endswith("load_model"):
                    outcome = {suffix: {"default": _ran(fn, path), "safe_mode=False": _ran(fn, path, safe_mode=False)}
                               for suffix, path in files.items()}
                    executed = "a saved model with a Lambda of a Python lambda, loaded and called"
                else:  # deserialization pops keys from the config: a fresh copy per call
                    inner = config["config"] if qualname.endswith("from_config") else config
                    outcome = {"config": {"default": _ran(fn, copy.deepcopy(inner)),
                                          "safe_mode=False": _ran(fn, copy.deepcopy(inner), safe_mode=False)}}
                    executed = "a Lambda layer's config (a Python lambda), deserialized and called"
                entries.append({"kind": "safe_mode", "qualname": qualname, "flavour": flavour,
                                "position": position, "default": sig.parameters["safe_mode"].default,
                                "executed": executed, "outcome": outcome})
        for flavour, root in (("keras3", keras), ("tf_keras", tf_keras)):
            switch = getattr(getattr(root, "config", None), "enable_unsafe_deserialization", None)
            if switch is None:
                continue
            switch()
            load = root.saving.load_model
            outcome = {suffix: {"default": _ran(load, os.path.join(tmp, f"{flavour}{suffix}"))}
                       for suffix in (".keras", ".h5")}
            entries.append({"kind": "safe_mode", "qualname": "keras.config.enable_unsafe_deserialization",
                            "flavour": flavour, "switch": True,
                            "executed": "called, then the saved Lambda models loaded by default", "outcome": outcome})
    return entries


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=DEFAULT_OUT, help="where to write the table ('-': stdout)")
    parser.add_argument("--check", action="store_true", help="compare with --out instead of writing it")
    args = parser.parse_args(argv)
    text = json.dumps(derive(), indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    if args.check:
        with open(args.out, encoding="utf-8") as handle:
            same = handle.read() == text
        print("up to date" if same else f"{args.out} differs from a fresh derivation")
        return 0 if same else 1
    if args.out == "-":
        sys.stdout.write(text)
    else:
        os.makedirs(os.path.dirname(args.out), exist_ok=True)
        with open(args.out, "w", encoding="utf-8") as handle:
            handle.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
