"""Derive which TensorFlow Addons names have an exact Keras 3 counterpart, by executing both.

Run by a developer with TensorFlow 2.16+, tf_keras, tensorflow-addons 0.23.0 and Keras 3 installed
(never at lint time):

    python scripts/derive_tfa_equivalents.py > tflint_gpu/semantic/data/tfa_equivalents.json

tensorflow-addons 0.23 is loaded on tf_keras (``TF_USE_LEGACY_KERAS=1``, its ``keras.src.engine``
import pointed at tf_keras's, as under TF <= 2.15 where ``keras`` was Keras 2) and Keras 3 by
``import keras`` in the same process. Each entry names a tfa object, its nearest Keras 3 object and
how a call's arguments map onto it (``params``: tfa's positional parameters, each written as a
keyword; ``keywords``: tfa keyword -> Keras keyword; ``add``: keywords the Keras call needs besides;
``defaults``: tfa defaults that differ from Keras's and must be written out; ``divide``: a Keras
value that is tfa's divided by another argument; ``refuse``: tfa keywords with no counterpart).
``to_keras`` applies that mapping to the argument sets of the entry's check, both objects run on
the same inputs and weights (layers: the same weights set; optimizers: the same variable, loss and
steps; metrics: the same updates), and the largest absolute difference is recorded. ``identical``:
every check's difference is 0; ``exact``: within float32 rounding of values of order 1
(``ROUNDING``: the same arithmetic done in another order, as the optimizers' updates are). The lint
rule TFG917 offers a fix only for exact entries (a safe one for identical entries) and names the Keras
object and the difference otherwise.
"""
import json
import os
import sys
import warnings

os.environ["TF_USE_LEGACY_KERAS"] = "1"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
warnings.filterwarnings("ignore")

import numpy as np  # noqa: E402
import tf_keras.src.engine as _engine  # noqa: E402
import tf_keras.src.engine.keras_tensor as _keras_tensor  # noqa: E402

sys.modules.setdefault("keras.src.engine", _engine)
sys.modules.setdefault("keras.src.engine.keras_tensor", _keras_tensor)

import contextlib  # noqa: E402
import io  # noqa: E402

import tensorflow as tf  # noqa: E402

with contextlib.redirect_stdout(io.StringIO()):
    import tensorflow_addons as tfa  # noqa: E402
import keras  # noqa: E402

ROUNDING = 2e-6  # float32 rounding of values of order 1 (two orders of the same arithmetic)
RNG = np.random.default_rng(0)


def _get(root, dotted):
    for part in dotted.split(".")[1:]:
        root = getattr(root, part)
    return root


def to_keras(entry, args=(), kwargs=None):
    """The Keras call's (args, kwargs) for tfa's, as the entry maps them (what the rule writes)."""
    kwargs = dict(kwargs or {})
    named = dict(zip(entry.get("params", []), args))
    rest = list(args[len(named):])
    named.update(kwargs)
    for key in entry.get("refuse", []):
        assert key not in named, key
    for key, value in entry.get("defaults", {}).items():
        named.setdefault(key, eval(value))
    out = {}
    for key, value in named.items():
        if key not in entry.get("drop", []):
            out[entry["keywords"].get(key, key)] = value
    for key, by in entry.get("divide", {}).items():
        if key in named:
            out[entry["keywords"].get(key, key)] = named[key] / named[by]
    for key, value in entry.get("add", {}).items():
        out[key] = eval(value)
    return rest, out


def diff(a, b):
    return float(np.max(np.abs(np.asarray(a, "float64") - np.asarray(b, "float64"))))


# -- checks: each returns the largest difference over its argument sets ----------------------------

def layer_check(entry, settings, shape=(2, 6, 6, 8), weights=True):
    worst = []
    for args, kwargs in settings:
        x = (RNG.normal(size=shape) * 3 + 1).astype("float32")
        a = _get(tfa, entry["tfa"])(*args, **kwargs)
        k_args, k_kwargs = to_keras(entry, args, kwargs)
        b = _get(keras, entry["keras"])(*k_args, **k_kwargs)
        a.build(x.shape)
        b.build(x.shape)
        if weights:
            values = [RNG.normal(size=w.shape).astype("float32") for w in a.get_weights()]
            a.set_weights(values)
            b.set_weights(values)
        worst.append(diff(a(x), b(x)))
    return worst


def function_check(entry, settings):
    worst = []
    z = (RNG.normal(size=(4, 7)) * 3).astype("float32")
    for args, kwargs in settings:
        k_args, k_kwargs = to_keras(entry, args, kwargs)
        worst.append(diff(_get(tfa, entry["tfa"])(z, *args, **kwargs),
                          _get(keras, entry["keras"])(z, *k_args, **k_kwargs)))
    return worst


def optimizer_check(entry, settings, steps=5):
    worst = []
    w0 = RNG.normal(size=(3, 4)).astype("float32")
    c = RNG.normal(size=(3, 4)).astype("float32")
    t = RNG.normal(size=(3, 4)).astype("float32")
    for args, kwargs in settings:
        v = tf.Variable(w0)
        opt = _get(tfa, entry["tfa"])(*args, **kwargs)
        for _ in range(steps):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum((v * c - t) ** 2)
            opt.apply_gradients([(tape.gradient(loss, v), v)])
        k_args, k_kwargs = to_keras(entry, args, kwargs)
        kv = keras.Variable(w0)
        kopt = _get(keras, entry["keras"])(*k_args, **k_kwargs)
        for _ in range(steps):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum((kv.value * c - t) ** 2)
            kopt.apply_gradients([(tape.gradient(loss, kv.value), kv)])
        worst.append(diff(v.numpy(), kv.numpy()))
    return worst


def loss_check(entry, settings):
    worst = []
    y = (RNG.random(size=(4, 3)) > 0.5).astype("float32")
    p = (RNG.random(size=(4, 3)) * 0.98 + 0.01).astype("float32")
    for args, kwargs in settings:
        k_args, k_kwargs = to_keras(entry, args, kwargs)
        worst.append(diff(_get(tfa, entry["tfa"])(*args, **kwargs)(y, p),
                          _get(keras, entry["keras"])(*k_args, **k_kwargs)(y, p)))
    return worst


def metric_check(entry, settings, regression=False):
    worst = []
    for args, kwargs in settings:
        a = _get(tfa, entry["tfa"])(*args, **kwargs)
        k_args, k_kwargs = to_keras(entry, args, kwargs)
        b = _get(keras, entry["keras"])(*k_args, **k_kwargs)
        for _ in range(3):
            if regression:
                y = RNG.normal(size=(6, 2)).astype("float32")
                p = (y + RNG.normal(size=(6, 2)) * 0.5).astype("float32")
            else:
                y = np.eye(3, dtype="float32")[RNG.integers(0, 3, size=6)]
                p = RNG.random(size=(6, 3)).astype("float32")
            a.update_state(y, p)
            b.update_state(y, p)
        worst.append(diff(a.result(), b.result()))
    return worst


def spectral_check(entry, settings):
    """The same kernel and the same power-iteration vector u in both; one training call."""
    worst = []
    x = RNG.normal(size=(2, 5)).astype("float32")
    for args, kwargs in settings:
        a = tfa.layers.SpectralNormalization(tf.keras.layers.Dense(4), *args, **kwargs)
        k_args, k_kwargs = to_keras(entry, args, kwargs)
        b = keras.layers.SpectralNormalization(keras.layers.Dense(4), *k_args, **k_kwargs)
        a.build(x.shape)
        b.build(x.shape)
        kernel = RNG.normal(size=(5, 4)).astype("float32")
        u = RNG.normal(size=(1, 4)).astype("float32")
        a.layer.kernel.assign(kernel)
        b.layer.kernel.assign(kernel)
        a.u.assign(u)
        b.vector_u.assign(u)
        worst.append(diff(a(x, training=True), b(x, training=True)))
    return worst


CHECKS = {"layer": layer_check, "function": function_check, "optimizer": optimizer_check,
          "loss": loss_check, "metric": metric_check, "spectral": spectral_check}

# kind: "function" (same call signature: a reference may be renamed too), "call" (a class made
# with mapped arguments). check: (kind of check, argument sets (args, kwargs), extra options).
ENTRIES = [
    dict(tfa="tfa.layers.InstanceNormalization", keras="keras.layers.GroupNormalization", kind="call",
         params=[], keywords={}, add={"groups": "-1"}, refuse=["groups"],
         check=("layer", [((), {}), ((), {"epsilon": 1e-5}), ((), {"center": False, "scale": True})])),
    dict(tfa="tfa.layers.GroupNormalization", keras="keras.layers.GroupNormalization", kind="call",
         params=["groups", "axis", "epsilon", "center", "scale"], keywords={},
         check=("layer", [((4,), {}), ((), {"groups": 2, "epsilon": 1e-5}), ((8, -1), {})])),
    dict(tfa="tfa.layers.GELU", keras="keras.layers.Activation", kind="call", params=["approximate"],
         keywords={}, add={"activation": "keras.ops.gelu"}, refuse=["approximate"],
         check=("layer", [((), {})], {"weights": False})),
    dict(tfa="tfa.layers.AdaptiveAveragePooling2D", keras="keras.layers.AdaptiveAveragePooling2D", kind="call",
         params=["output_size", "data_format"], keywords={},
         check=("layer", [((3,), {}), (((2, 3),), {})], {"weights": False})),
    dict(tfa="tfa.layers.AdaptiveMaxPooling2D", keras="keras.layers.AdaptiveMaxPooling2D", kind="call",
         params=["output_size", "data_format"], keywords={},
         check=("layer", [((3,), {}), (((2, 3),), {})], {"weights": False})),
    dict(tfa="tfa.layers.SpectralNormalization", keras="keras.layers.SpectralNormalization", kind="call",
         params=["layer", "power_iterations"], keywords={},
         check=("spectral", [((), {}), ((), {"power_iterations": 3})])),
    dict(tfa="tfa.activations.gelu", keras="keras.ops.gelu", kind="function", params=["approximate"],
         keywords={}, check=("function", [((), {}), ((), {"approximate": False}), ((True,), {})])),
    dict(tfa="tfa.activations.mish", keras="keras.activations.mish", kind="function", params=[],
         keywords={}, check=("function", [((), {})])),
    dict(tfa="tfa.activations.tanhshrink", keras="keras.activations.tanh_shrink", kind="function",
         params=[], keywords={}, check=("function", [((), {})])),
    dict(tfa="tfa.activations.hardshrink", keras="keras.activations.hard_shrink", kind="function",
         params=[], keywords={}, refuse=["lower", "upper"], check=("function", [((), {})]),
         note="Keras has one threshold (symmetric): tfa's lower=/upper= are not mapped"),
    dict(tfa="tfa.activations.softshrink", keras="keras.activations.soft_shrink", kind="function",
         params=[], keywords={}, refuse=["lower", "upper"], check=("function", [((), {})]),
         note="Keras has one threshold (symmetric): tfa's lower=/upper= are not mapped"),
    dict(tfa="tfa.activations.sparsemax", keras="keras.activations.sparsemax", kind="function",
         params=["axis"], keywords={"logits": "x"},
         check=("function", [((), {}), ((), {"axis": 0})]),
         note="Keras 3.15.1's sparsemax returns rows that do not sum to 1 where the support has two or more "
              "entries (a row [-2.35, 2.25, 4.90, 0.82, -3.70, -2.88, 4.80]: tfa 0.552/0.448, Keras all 0)"),
    dict(tfa="tfa.optimizers.AdamW", keras="keras.optimizers.AdamW", kind="call",
         params=["weight_decay", "learning_rate", "beta_1", "beta_2", "epsilon", "amsgrad", "name"],
         keywords={}, divide={"weight_decay": "learning_rate"}, defaults={"learning_rate": "0.001"},
         refuse=["lr", "decay", "clipnorm", "clipvalue", "global_clipnorm", "exclude_from_weight_decay"],
         check=("optimizer", [((1e-3,), {"learning_rate": 1e-2}), ((), {"weight_decay": 1e-4, "learning_rate": 3e-4}),
                              ((1e-2,), {"learning_rate": 1e-2, "amsgrad": True, "epsilon": 1e-6})]),
         note="tfa decays by weight_decay * var each step, Keras 3 by learning_rate * weight_decay * var: "
              "Keras's weight_decay is tfa's divided by the learning rate, exact only while the learning "
              "rate stays constant (no schedule, no callback or assignment changing it)"),
    dict(tfa="tfa.optimizers.SGDW", keras="keras.optimizers.SGD", kind="call",
         params=["weight_decay", "learning_rate", "momentum", "nesterov", "name"],
         keywords={}, divide={"weight_decay": "learning_rate"}, defaults={"learning_rate": "0.001"},
         refuse=["lr", "decay", "clipnorm", "clipvalue", "global_clipnorm", "exclude_from_weight_decay"],
         check=("optimizer", [((1e-3,), {"learning_rate": 1e-2}), ((1e-2,), {"learning_rate": 1e-2, "momentum": 0.9}),
                              ((1e-3,), {"momentum": 0.9, "nesterov": True})]),
         note="as AdamW: weight_decay divided by the (constant) learning rate; tfa's default learning rate "
              "0.001 (Keras SGD's is 0.01) is written out"),
    dict(tfa="tfa.optimizers.LAMB", keras="keras.optimizers.Lamb", kind="call",
         params=["learning_rate", "beta_1", "beta_2", "epsilon", "weight_decay"], keywords={},
         defaults={"epsilon": "1e-6"},
         refuse=["weight_decay", "exclude_from_weight_decay", "exclude_from_layer_adaptation", "lr", "decay",
                 "weight_decay_rate"],
         check=("optimizer", [((), {}), ((1e-2,), {}), ((), {"learning_rate": 1e-2, "beta_1": 0.8})]),
         note="without weight decay (tfa adds it to the update before the trust ratio; Keras 3 decays the "
              "variable by learning_rate * weight_decay first); tfa's epsilon 1e-6 (Keras's 1e-7) written out"),
    dict(tfa="tfa.losses.SigmoidFocalCrossEntropy", keras="keras.losses.BinaryFocalCrossentropy", kind="call",
         params=["from_logits", "alpha", "gamma", "reduction", "name"], keywords={},
         add={"apply_class_balancing": "True", "reduction": "None"}, refuse=["reduction"],
         check=("loss", [((), {})]),
         note="tfa sums the focal terms over the last axis, Keras averages them: tfa's loss is Keras's times "
              "the number of classes"),
    dict(tfa="tfa.metrics.F1Score", keras="keras.metrics.F1Score", kind="call",
         params=["num_classes", "average", "threshold", "name", "dtype"], keywords={}, drop=["num_classes"],
         check=("metric", [((3,), {}), ((3,), {"average": "macro"}), ((3,), {"average": "micro", "threshold": 0.5})])),
    dict(tfa="tfa.metrics.FBetaScore", keras="keras.metrics.FBetaScore", kind="call",
         params=["num_classes", "average", "beta", "threshold", "name", "dtype"], keywords={}, drop=["num_classes"],
         check=("metric", [((3,), {"beta": 2.0}), ((3, "weighted"), {"beta": 0.5})])),
    dict(tfa="tfa.metrics.RSquare", keras="keras.metrics.R2Score", kind="call",
         params=["name", "dtype"], keywords={}, refuse=["multioutput", "num_regressors", "y_shape"],
         defaults={"name": "'r_square'"},
         check=("metric", [((), {})], {"regression": True}),
         note="tfa's multioutput= values differ from Keras's class_aggregation= ones: not mapped; tfa's default "
              "name r_square (Keras's r2_score) written out, so the logs keep their key"),
]


def run(entry):
    kind, settings, *options = entry["check"]
    try:
        each = CHECKS[kind](entry, settings, **(options[0] if options else {}))
        worst, error = max(each), None
    except Exception as exc:  # noqa: BLE001 - a check that raises records why
        each, worst, error = [], None, f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}"
    name = "tensorflow_addons" + entry["tfa"][len("tfa"):]
    record = {
        "keras": entry["keras"], "kind": entry["kind"],
        "identical": worst == 0.0, "exact": worst is not None and worst <= ROUNDING,
        "max_abs_diff": worst, "params": entry.get("params", []),
        "keywords": entry["keywords"],
        "drop": entry.get("drop", []), "add": entry.get("add", {}), "defaults": entry.get("defaults", {}),
        "divide": entry.get("divide", {}), "refuse": entry.get("refuse", []),
        "checked": [[list(a), dict(kw), d] for (a, kw), d in zip(settings, each)],
    }
    if error:
        record["error"] = error
    if entry.get("note"):
        record["note"] = entry["note"]
    return name, record


def _tf_keras_version():
    import tf_keras

    return tf_keras.__version__


def main():
    table = {"_generated_by": "scripts/derive_tfa_equivalents.py",
             "_versions": {"tensorflow": tf.__version__, "keras": keras.__version__,
                           "tensorflow_addons": tfa.__version__, "tf_keras": _tf_keras_version()}}
    for entry in ENTRIES:
        name, record = run(entry)
        table[name] = record
    json.dump(table, sys.stdout, indent=1, sort_keys=True, default=repr)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
