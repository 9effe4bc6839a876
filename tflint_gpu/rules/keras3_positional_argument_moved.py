from __future__ import annotations

from typing import Optional

import libcst as cst

from tflint_gpu.semantic.api import named_positionals
from tflint_gpu.semantic.names import ordinal, short_name
from tflint_gpu.rules.base import FIXES_ERROR, Fix, Rule, Safety, clean, flagged

# `add_weight("kernel", ...)` is TFG916's (its message says what Keras 3 raises).
_OTHER_RULES = frozenset({"add_weight"})
# Methods judged on a model the file gets from elsewhere (a parameter, another library's factory).
_MODEL_METHODS = frozenset({"compile"})


def _table():
    from tflint_gpu.semantic.migration_table import table

    return table()



class Keras3PositionalArgumentMoved(Rule):
    """A positional argument that fills another parameter under Keras 3: `compile(opt, loss, ["accuracy"])`.

    ## What it does
    Finds calls of Keras callables whose positional parameters Keras 3
    reordered or dropped, with enough positional arguments to reach the
    change: `model.compile(optimizer, loss, metrics)` (Keras 3's third
    parameter is `loss_weights`), `keras.Sequential(layers, "name")` (Keras 3's
    second is `trainable`), `keras.Input(shape, batch_size, "name")` (Keras
    3's third is `dtype`), `keras.losses.Loss(reduction, name)` and
    `keras.metrics.Metric(name, dtype)` (swapped), `fit`/`predict`/`evaluate`
    with the Keras 2 data-loading parameters passed positionally (Keras 3 has
    fewer: a TypeError). The list is derived, not typed: for every public
    callable both Kerases have (functions, classes, the methods of models,
    layers, metrics and optimizers), `scripts/derive_migration.py` compares
    the two signatures and records the first position where they part, when
    the Keras 2 parameter exists elsewhere in Keras 3 or the Keras 3
    parameter there existed elsewhere in Keras 2 (a parameter renamed in its
    place, `alpha` -> `negative_slope`, may mean the same and is left out),
    and binds a call with that many positional arguments to Keras 3's
    signature, as Python does when the call runs (88 callables, those of
    `keras.applications` and `keras.datasets` included). Calls are those of
    Keras 3 objects and names (through `keras` or `tf.keras` under Keras 3),
    the Keras 3 base's constructor a subclass calls (`super().__init__(lr,
    beta_1, beta_2, epsilon, amsgrad, name)` in a subclass of `Adam`, whose
    sixth parameter is `weight_decay` in Keras 3; a `**kwargs` fills no
    positional parameter), and `compile` on a model made elsewhere (a parameter, another library's
    factory such as `segmentation_models.Unet`) in a file using Keras 3;
    `add_weight` is TFG916's.

    ## Why is this bad?
    Python binds positional arguments by place, so the same call means
    something else under Keras 3. Measured (Keras 3.15, CPU):
    `model.compile("sgd", "sparse_categorical_crossentropy", ["accuracy"])`
    compiles and then `fit` raises `ValueError: dtype='string' is not a valid
    dtype for Keras type promotion` (the metrics were taken for loss
    weights); `keras.Sequential([...], "my_model")` raises `ValueError:
    Expected trainable to be a boolean`; `keras.Input((3,), 8, "features")`
    raises `ValueError: Invalid dtype: features`; `keras.losses.Loss("sum",
    "my_loss")` raises for its reduction. Under tf_keras each of these runs
    and means what was written.

    ## Example
    ```python
    model.compile(optimizer, loss, ["accuracy"])
    ```

    Use instead:
    ```python
    model.compile(optimizer, loss, metrics=["accuracy"])
    ```

    ## Fix safety
    Safe, where Keras 3 takes every parameter the positional arguments meant
    under Keras 2 by keyword: those arguments are passed by keyword, with
    Keras 2's names. Under Keras 2 the call binds exactly as before (executed
    under tf_keras in the tests); under Keras 3 it then means what it meant
    there. No fix where Keras 3 has no such parameter (`fit(...,
    max_queue_size)` positionally; TFG901 reports it as a keyword).

    ## Measured effect
    `examples/TFG921` (a small classifier compiled with positional metrics):
    fixes-error, `ValueError` before, the same training after.

    On real code: the labelled set's positional-argument-trap labels 2/2 (two
    segmentation_models notebooks, `model.compile(optim, total_loss,
    metrics)` on `sm.Unet(...)`); keras/src, tf_keras/src and the
    reliability corpus: 0.
    """

    code = "TFG921"
    name = "keras3-positional-argument-moved"
    message = "a positional argument that fills another parameter under Keras 3"
    needs = (("keras",),)
    fix_safety = Safety.SAFE
    migration = True

    def visit_Call(self, node: cst.Call, ctx) -> None:
        positional = 0
        for arg in node.args:
            if arg.star == "*":
                return
            if arg.keyword is None and not arg.star:  # (``**kwargs`` fills no positional parameter)
                positional += 1
        if positional == 0:
            return
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in _OTHER_RULES:
            return
        entry = None
        known = _table().positional_members()
        names = ctx.keras3_callables(node, known)
        if not names and isinstance(func, cst.Attribute) and func.attr.value in _MODEL_METHODS \
                and func.attr.value in known \
                and ctx.unknown_keras3_model(func.value, func.attr.value, judge_maker=False):
            # a model a factory made (`sm.Unet(...)`), in Keras 3 code: only a Keras model's `compile`
            # takes an optimizer, a loss and a list of metrics
            names = [f"keras.Model.{func.attr.value}"]
        for qualname in names:
            entry = _table().moved_positional(qualname)
            if entry is not None:
                break
        if entry is None or positional <= entry["position"] or ctx.migration.guarded(node, ctx.scope):
            return
        position = entry["position"]
        what = short_name(entry["qualname"]).rsplit(".", 1)[-1] if entry["callable"] == "method" \
            else short_name(entry["qualname"])
        arg = [a for a in node.args if a.keyword is None and not a.star][position]
        if entry.get("keras3") is None:
            message = (f"Keras 3's `{what}` takes no {ordinal(position)} positional argument (Keras 2's "
                       f"`{entry['keras2']}`): TypeError")
        else:
            message = (f"the {ordinal(position)} positional argument of `{what}` is `{entry['keras3']}` in "
                       f"Keras 3 (`{entry['keras2']}` in Keras 2)")
        fix = _fix(node, entry, position)
        ctx.report(arg, message + ("; pass it by keyword" if fix is not None else ""), fix)


def _fix(node: cst.Call, entry: dict, position: int) -> Optional[Fix]:
    names = entry.get("keras2_names") or []
    keywords = set(entry.get("keras3_keywords") or [])
    replacements = named_positionals(node, names, position)
    if replacements is None or any(new.keyword.value not in keywords for new in replacements.values()):
        return None
    return Fix("Pass the arguments by keyword", Safety.SAFE, replacements)


_RUN = """
import numpy as np
x = np.random.default_rng(0).standard_normal((16, 4)).astype("float32")
y = (x[:, 0] > 0).astype("int32")
result = model.fit(x, y, epochs=2, verbose=0, shuffle=False).history["loss"]
"""

Keras3PositionalArgumentMoved.cases = [
    flagged(
        """
        import keras

        keras.utils.set_random_seed(0)
        model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2, activation="softmax")])
        model.compile("sgd", "sparse_categorical_crossentropy", ["accuracy"])
        """,
        """
        import keras

        keras.utils.set_random_seed(0)
        model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2, activation="softmax")])
        model.compile("sgd", "sparse_categorical_crossentropy", metrics=["accuracy"])
        """,
        at=[(5, 57, "the third positional argument of `compile` is `loss_weights` in Keras 3 (`metrics` in "
                    "Keras 2); pass it by keyword")],
        run=_RUN,
        effect=FIXES_ERROR,
        note="qubvel/segmentation_models notebooks: compile(optim, loss, metrics)",
    ),
    flagged(
        """
        import tensorflow as tf

        tf.keras.utils.set_random_seed(0)
        inputs = tf.keras.Input((4,), 16, "features")
        model = tf.keras.Sequential([tf.keras.layers.Dense(2)], "classifier")
        """,
        """
        import tensorflow as tf

        tf.keras.utils.set_random_seed(0)
        inputs = tf.keras.Input((4,), 16, name="features")
        model = tf.keras.Sequential([tf.keras.layers.Dense(2)], name="classifier")
        """,
        at=[(4, 35, "the third positional argument of `keras.Input` is `dtype` in Keras 3 (`name` in Keras 2)"),
            (5, 57, "the second positional argument of `keras.Sequential` is `trainable` in Keras 3")],
        run="import numpy as np\nresult = np.array([inputs.shape[0], inputs.shape[1], len(model.name)])",
        effect=FIXES_ERROR,
        keras2=True,
        note="tf.keras under Keras 3; the fix runs the same under tf_keras",
    ),
    flagged(
        """
        import keras

        def train(model, x, y):
            model.compile("sgd", "sparse_categorical_crossentropy", ["accuracy"])
            return model.fit(x, y, epochs=2, verbose=0, shuffle=False).history["loss"]
        """,
        """
        import keras

        def train(model, x, y):
            model.compile("sgd", "sparse_categorical_crossentropy", metrics=["accuracy"])
            return model.fit(x, y, epochs=2, verbose=0, shuffle=False).history["loss"]
        """,
        at=[(4, 61, "the third positional argument of `compile` is `loss_weights` in Keras 3")],
        run="""
        import numpy as np
        keras.utils.set_random_seed(0)
        x = np.random.default_rng(0).standard_normal((16, 4)).astype("float32")
        result = train(keras.Sequential([keras.Input((4,)), keras.layers.Dense(2, activation="softmax")]), x,
                       (x[:, 0] > 0).astype("int32"))
        """,
        effect=FIXES_ERROR,
        note="a model made elsewhere (segmentation_models' `sm.Unet(...)` in the labelled notebooks)",
    ),
    flagged(
        """
        import keras

        model = keras.models.load_model("m.keras")
        model.fit(x, y, 32, 1, 1, None, 0.0, None, True, None, None, 0, None, None, None, 1, 10)
        """,
        at=[(4, 86, "Keras 3's `fit` takes no 17th positional argument (Keras 2's `max_queue_size`): "
                    "TypeError")],
        note="a parameter Keras 3 dropped: no fix",
    ),
    flagged(
        """
        import tensorflow as tf

        class AdamWeightDecay(tf.keras.optimizers.Adam):
            def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, amsgrad=False,
                         name="AdamWeightDecay", **kwargs):
                super(AdamWeightDecay, self).__init__(learning_rate, beta_1, beta_2, epsilon, amsgrad, name, **kwargs)
        """,
        at=[(6, 87, "the fifth positional argument of `keras.optimizers.Adam` is `amsgrad` in Keras 3")],
        note="TensorSpeech/TensorFlowTTS adamweightdecay.py:93, written for TF 2.7's Adam (amsgrad, name): Keras "
             "3's sixth parameter is weight_decay, so weight_decay='AdamWeightDecay' and the first "
             "apply_gradients raises (Cast string to float, Keras 3.15, run by hand); the constructor a "
             "super().__init__ runs is the Keras base's",
    ),
    clean(
        """
        import keras
        import tf_keras

        class Base(keras.optimizers.Adam):
            def __init__(self, learning_rate, beta_1, beta_2, epsilon, amsgrad, name, **kwargs):
                super().__init__(learning_rate, beta_1, beta_2, epsilon, amsgrad=amsgrad, name=name, **kwargs)

            def apply_gradients(self, grads_and_vars, **kwargs):
                return super().apply_gradients(grads_and_vars, **kwargs)

        class Child(Base):
            def __init__(self):
                super().__init__(0.1, 0.9, 0.99, 1e-7, False, "child")

        class Old(tf_keras.optimizers.Adam):
            def __init__(self):
                super().__init__(0.1, 0.9, 0.99, 1e-7, False, True)

        class Other(keras.optimizers.Adam):
            def __init__(self, *args):
                super().__init__(*args)
        """,
        note="four positional arguments, then keywords and **kwargs (no positional argument); a same-module "
             "base's own __init__; a Keras 2 base; *args",
    ),
    clean(
        """
        import keras
        import tf_keras

        model = keras.Sequential([keras.layers.Dense(1)], name="m")
        model.compile("sgd", "mse", metrics=["mae"])
        model.compile("sgd", "mse")
        keras.layers.LeakyReLU(0.3)
        old = tf_keras.Sequential([tf_keras.layers.Dense(1)], "old")
        old.compile("sgd", "mse", ["mae"])
        args = ("sgd", "mse", ["mae"])
        model.compile(*args)

        class Net(keras.Model):
            def compile(self, optimizer, loss, metrics):
                super().compile(optimizer=optimizer, loss=loss, metrics=metrics)

        Net().compile("sgd", "mse", ["mae"])
        """,
        note="keywords, two positional arguments, a rename in place, Keras 2 objects, *args, an own compile",
    ),
]
