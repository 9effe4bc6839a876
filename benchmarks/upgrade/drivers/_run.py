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
import os
import re
import sys


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
