"""Shared helpers for the upgrade-set drivers (our own code, not the projects').

A driver runs one project's real training script with small synthetic or bundled data:
  * `exec_script` executes the script's own source under its own file name, with some
    single-line configuration assignments replaced *on the same line* (line numbers and
    tracebacks still point at the project's file), as a person editing the config would.
  * `--legacy` sets TF_USE_LEGACY_KERAS=1 (tf_keras, i.e. what tf.keras was before TF 2.16)
    and installs environment shims that stand in for the old environment, not for the
    project's code: NumPy-1 aliases (np.Inf ...) and tensorflow_addons' import of
    `keras.src.engine` (on TF <= 2.15 `keras` was Keras 2; here it is Keras 3).
"""
import contextlib
import json
import os
import re
import sys

# Set by run.py: where the losses of this run are written (one JSON line per fit), so that a
# Keras 2 run and a Keras 3 run of the same project can be compared from the same initial weights.
LOSSES = os.environ.get("UPGRADE_LOSSES")


def setup(legacy, legacy_optimizers=False):
    if legacy:
        os.environ["TF_USE_LEGACY_KERAS"] = "1"
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    if legacy:
        import numpy as np
        for old, new in (("Inf", "inf"), ("NaN", "nan"), ("float_", "float64")):
            if not hasattr(np, old):
                setattr(np, old, getattr(np, new))
        import tf_keras.src.engine as _eng
        import tf_keras.src.engine.keras_tensor as _kt
        sys.modules.setdefault("keras.src.engine", _eng)
        sys.modules.setdefault("keras.src.engine.keras_tensor", _kt)
    import tensorflow as tf
    import keras
    if legacy and legacy_optimizers:
        # TF <= 2.10: tf.keras.optimizers.Adam/SGD/... were what tf_keras now calls
        # optimizers.legacy.* (OptimizerV2: lr=, _decayed_lr, rebuild on new variables).
        import importlib
        mods = [importlib.import_module(m) for m in
                ("tensorflow.keras.optimizers", "tf_keras.optimizers", "tf_keras.api._v2.keras.optimizers")]
        mods.append(tf.keras.optimizers)
        for mod in mods:
            for n in ("Adam", "SGD", "RMSprop", "Adagrad", "Adadelta", "Adamax", "Nadam", "Ftrl"):
                setattr(mod, n, getattr(tf.keras.optimizers.legacy, n))
        print("DRIVER: shim tf.keras.optimizers.* = tf.keras.optimizers.legacy.* (TF <= 2.10)")
    if LOSSES:
        import random

        import numpy as np
        random.seed(0)
        np.random.seed(0)
        tf.random.set_seed(0)  # the same shuffles of the same data in both runs (one TensorFlow)
        _record_losses(tf.keras.Model)
    print("DRIVER: tf", tf.__version__, "| tf.keras ->", tf.keras.__name__,
          "| keras", keras.__version__, "| legacy" if legacy else "| keras3", flush=True)


def exec_script(path, overrides=None, run_name="__main__"):
    """Run `path` as a script; `overrides` maps a variable name to the source text of its new
    value; the first line `<indent>name = ...` is replaced in place (same line number)."""
    path = os.path.abspath(path)
    with open(path, encoding="utf-8") as f:
        src = f.read()
    for name, value in (overrides or {}).items():
        pat = re.compile(r"^([ \t]*)" + re.escape(name) + r"([ \t]*)=(?!=).*$", re.M)
        src, n = pat.subn(lambda m: f"{m.group(1)}{name}{m.group(2)}= {value}", src, count=1)
        if n != 1:
            raise SystemExit(f"DRIVER: override {name!r} not found in {path}")
    code = compile(src, path, "exec")
    g = {"__name__": run_name, "__file__": path, "__builtins__": __builtins__}
    d = os.path.dirname(path)
    if d not in sys.path:
        sys.path.insert(0, d)
    exec(code, g)
    return g


def _same_initial_weights(model):
    """Give every weight of ``model`` values that depend only on its position among the weights of
    the same shape and on its shape (so a Keras 2 and a Keras 3 build of one architecture start
    from the same point); Keras 3's random-seed state variables are left alone. Returns how many
    weights were set."""
    import numpy as np
    done = 0
    seen = {}
    for weight in (w for w in model.weights if "seed_generator" not in getattr(w, "path", getattr(w, "name", ""))):
        shape = tuple(int(d) for d in weight.shape)
        index = seen[shape] = seen.get(shape, -1) + 1  # the flavours may list weights of other shapes apart
        rng = np.random.default_rng([index] + list(shape))
        value = rng.uniform(-0.2, 0.2, size=shape).astype(np.dtype(weight.dtype.name if hasattr(
            weight.dtype, "name") else weight.dtype))
        name = getattr(weight, "path", weight.name)
        if "moving_variance" in name or "gamma" in name:
            value = 1.0 + value  # a variance stays positive; a scale near 1
        weight.assign(value)
        done += 1
    return done


def _first_batch(args, kwargs):
    """The first batch fit would see (x, y), or None when it cannot be read without consuming
    anything the script uses later."""
    x = args[0] if args else kwargs.get("x")
    y = args[1] if len(args) > 1 else kwargs.get("y")
    size = kwargs.get("batch_size") or 32
    if hasattr(x, "shape") and y is not None and hasattr(y, "shape"):
        return x[:size], y[:size]
    if hasattr(x, "__getitem__") and hasattr(x, "__len__") and not hasattr(x, "shape"):
        try:  # a keras.utils.Sequence / PyDataset
            batch = x[0]
            return (batch[0], batch[1]) if isinstance(batch, tuple) and len(batch) >= 2 else None
        except Exception:
            return None
    if hasattr(x, "take") and hasattr(x, "element_spec"):  # a tf.data.Dataset: take(1) starts a new iterator
        for batch in x.take(1):
            return (batch[0], batch[1]) if isinstance(batch, tuple) and len(batch) >= 2 else None
    return None


def _record_losses(model_class):
    """Wrap ``fit`` of ``model_class`` (and of keras.Model, tf_keras.Model): the first fit of each
    model starts from ``_same_initial_weights``; its loss on the first batch in inference mode
    (``evaluate``, no dropout, no update) and the losses fit logs are written to LOSSES."""
    import importlib
    classes = {model_class}
    for module in ("keras", "tf_keras"):
        try:
            classes.add(importlib.import_module(module).Model)
        except Exception:
            pass
    for cls in classes:
        original = cls.fit
        if getattr(original, "_upgrade_wrapped", False):
            continue

        def fit(self, *args, __original=original, **kwargs):
            record = {"model": type(self).__name__}
            batch = None
            if not getattr(self, "_upgrade_initialised", False):
                batch = _first_batch(args, kwargs)
                if not self.built and batch is not None:
                    try:  # a subclassed model is built by its first call, in its strategy's scope
                        strategy = getattr(self, "distribute_strategy", None)
                        with strategy.scope() if strategy is not None else contextlib.nullcontext():
                            self(batch[0], training=False)
                    except Exception as error:
                        record["build_error"] = f"{type(error).__name__}: {error}"[:200]
            if not getattr(self, "_upgrade_initialised", False) and self.built:
                self._upgrade_initialised = True
                record["weights_set"] = _same_initial_weights(self)
                if batch is not None:
                    try:
                        value = self.evaluate(batch[0], batch[1], verbose=0, batch_size=len(batch[0]))
                        record["initial_loss"] = float(value[0] if isinstance(value, (list, tuple)) else value)
                    except Exception as error:  # a model compiled without a loss, a custom test_step...
                        record["initial_loss_error"] = f"{type(error).__name__}: {error}"[:200]
            history = __original(self, *args, **kwargs)
            logs = getattr(history, "history", {}) or {}
            record["fit_loss"] = [float(v) for v in logs.get("loss", [])]
            with open(LOSSES, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(record) + "\n")
            return history

        fit._upgrade_wrapped = True
        cls.fit = fit
