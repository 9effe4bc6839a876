from __future__ import annotations

from typing import Optional

import libcst as cst

from tflint_gpu.autofix.metrics import at_zero, binary_accuracy_class, keras_prefix, named_at_zero
from tflint_gpu.semantic.api import argument
from tflint_gpu.semantic.compiled import BINARY, CLASS, FUNCTION, STRING, THRESHOLDS, compiled_metrics, logits_loss
from tflint_gpu.semantic.model_outputs import LINEAR
from tflint_gpu.semantic.names import normalize
from tflint_gpu.rules.base import CHANGES, Fix, Rule, Safety, clean, flagged

# The import a Keras spelled ``<root>....`` is read through: (module, the attribute chain to its Keras).
_ROOTS = (("tensorflow.", "tensorflow", ("keras",)), ("tf_keras.", "tf_keras", ()), ("keras.", "keras", ()))


class AccuracyOnLogits(Rule):
    """A binary accuracy (or precision, recall) compiled on a model that outputs logits: it thresholds them at 0.5.

    ## What it does
    Finds `model.compile(...)` where the model's last layer has no activation
    (a `Dense`/`Conv` layer without `activation=`, read as TFG605 reads it;
    a name bound more than once, such as a notebook's `model` or one rebuilt
    in a loop, is read as the model it holds at that `compile`),
    the loss takes the output for logits and is a binary one
    (`BinaryCrossentropy(from_logits=True)`,
    `BinaryFocalCrossentropy(from_logits=True)`,
    `functools.partial(binary_crossentropy, from_logits=True)`, a lambda or
    same-module function passing its second parameter as the logits of such
    a loss or of `tf.nn.sigmoid_cross_entropy_with_logits`), and a compiled
    metric is a binary accuracy with Keras's default threshold 0.5:
    `"binary_accuracy"`, `keras.metrics.BinaryAccuracy()` (or
    `threshold=0.5`), the function `keras.metrics.binary_accuracy`, a name
    bound to a `BinaryAccuracy()`, or `"accuracy"`/`"acc"` when the last
    layer is a `Dense` whose `units` is the literal 1 (Keras resolves them by
    the output's width: binary accuracy for one unit, an argmax accuracy for
    more). Also `Precision()` and `Recall()` (without `top_k`) at their
    default `thresholds` 0.5: the same comparison.

    Not reported: a sigmoid last layer with `from_logits=False` (the outputs
    are probabilities); `BinaryAccuracy(threshold=0.0)` (or any threshold
    other than 0.5; a list of thresholds; a top-k precision); `"accuracy"`
    of a wider output or of an output whose width is not a literal;
    categorical and sparse categorical losses with
    `"accuracy"` (an argmax, the same on logits); a model whose last layer
    the linter cannot read (a `Lambda`, a custom layer, a subclassed or a
    loaded model); `from_logits=True` with an activation in the last layer
    (TFG606's); a loss with `from_logits=False` on a linear model (TFG605's,
    which rewrites its metrics with its own fix: the two never report the
    same `compile`); test modules. Not covered: `AUC()` without
    `from_logits=True` on logits (its thresholds span [0, 1]), and metrics
    updated by hand in a custom loop.

    ## Why is this bad?
    `BinaryAccuracy` counts `y_pred > threshold` as the positive class,
    with `threshold=0.5` meant for probabilities. On logits that is
    `sigmoid(z) > 0.62`: every positive sample whose logit is in (0, 0.5]
    counts as negative, so the logged accuracy (the progress bar, the
    History, a callback monitoring it, `evaluate`) is wrong while the model
    itself is fine, and nothing warns. `sigmoid(z) > 0.5` is `z > 0`:
    `BinaryAccuracy(threshold=0.0)` is the accuracy of the model's
    predictions.

    Measured under TensorFlow 2.21 with Keras 3.15 and with tf_keras 2.21
    (the same in both; CPU): a `Dense(1)` model with weights 1 and bias 0 on
    six samples whose logits are 0.1, 0.2, 0.3, 0.4 (label 1) and -0.1, -0.3
    (label 0), right on every one, compiled with
    `BinaryCrossentropy(from_logits=True)`: `"accuracy"`, `"acc"`,
    `"binary_accuracy"`, `BinaryAccuracy()` and `keras.metrics.binary_accuracy`
    all report 0.333, and so does `"accuracy"` with
    `BinaryFocalCrossentropy(from_logits=True)`;
    `BinaryAccuracy(name="accuracy", threshold=0.0)` reports 1.0.
    `Precision()` and `Recall()` report 0.0 and 0.0 there; with
    `thresholds=0.0`, 1.0 and 1.0. A three-unit model compiled with `CategoricalCrossentropy(from_logits=True)`
    or `SparseCategoricalCrossentropy(from_logits=True)` and `"accuracy"`
    gets categorical / sparse categorical accuracy (an argmax): 1.0, right,
    and not reported.

    ## Example
    ```python
    model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16, activation="relu"),
                              keras.layers.Dense(1)])
    model.compile("adam", keras.losses.BinaryCrossentropy(from_logits=True), metrics=["accuracy"])
    ```

    Use instead:
    ```python
    model.compile("adam", keras.losses.BinaryCrossentropy(from_logits=True),
                  metrics=[keras.metrics.BinaryAccuracy(name="accuracy", threshold=0.0)])
    ```

    ## Fix safety
    Unsafe: the logged metric changes (that is the point), and so does
    whatever reads it (`EarlyStopping`/`ModelCheckpoint` monitoring it, a
    History). A string metric becomes `BinaryAccuracy(name=<the same
    string>, threshold=0.0)` (the logged name, and callbacks monitoring it,
    are unchanged), `keras.metrics.binary_accuracy` becomes
    `BinaryAccuracy(name="binary_accuracy", threshold=0.0)`, and a
    `BinaryAccuracy(...)` built in the list gets `threshold=0.0` (added, or
    replacing its 0.5), and so does a `Precision(...)`/`Recall(...)`
    (`thresholds=0.0`). The class is spelled through the metric's or the
    loss's own module (`tf.keras.metrics.` after `tf.keras.losses.`), else
    through the file's import of the Keras the loss comes from; no fix where
    there is none, or for a metric object built elsewhere (it may be used
    elsewhere too).

    ## Measured effect
    The figures above; the cases' fixes are executed under Keras 3.15 and
    tf_keras 2.21 (accuracy 0.333 -> 1.0 on the model above, precision and
    recall 0.0 -> 1.0, the loss unchanged). examples/TFG611 (`tflint-gpu verify --device cpu --size small
    --rule TFG611`, 1024 training samples of a noisy linear rule, a
    `Dense(1)` logistic regression, `Adam(0.01)`, 20 epochs): fixes-behaviour,
    the logged held-out accuracy 0.9131 against 0.9199 for the model's own
    predictions (`model(x) > 0`) before, 0.9199 and 0.9199 after.
    """

    code = "TFG611"
    name = "accuracy-on-logits"
    message = "A compiled metric thresholds logits at 0.5"
    needs = (("from_logits", "_with_logits"), ("acc", "Precision", "Recall"))
    fix_safety = Safety.UNSAFE

    def visit_Call(self, node: cst.Call, ctx) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "compile") or ctx.in_test_module:
            return
        loss = argument(node, 1, "loss")
        if loss is None or logits_loss(loss, ctx.model_outputs, ctx.graphs, ctx.scope) != "binary":
            return
        model = func.value  # the model the name holds at this compile (a notebook rebinds `model`)
        if ctx.model_outputs.final_activation(model, ctx.scope, at=model) != LINEAR:
            return
        metrics = compiled_metrics(node, model, ctx.model_outputs, ctx.scope, at=model)
        for metric in metrics or ():
            if metric.kind not in (BINARY, THRESHOLDS) or metric.starred or not _half(metric.threshold):
                continue
            advice = "`BinaryAccuracy(threshold=0.0)`" if metric.kind == BINARY else "`thresholds=0.0`"
            ctx.report(metric.node,
                       f"The model outputs logits (no activation in its last layer, a `from_logits=True` loss), but "
                       f"{_spelled(metric)} thresholds them at 0.5 (sigmoid > 0.62): use {advice}",
                       self._fix(metric, loss, model, ctx))

    def _fix(self, metric, loss: cst.BaseExpression, model: cst.BaseExpression, ctx) -> Optional[Fix]:
        if metric.form == CLASS:
            made = at_zero(metric.node) if metric.kind == BINARY else at_zero(metric.node, "thresholds", 0)
        elif metric.form in (STRING, FUNCTION) and metric.kind == BINARY:
            module = _metrics_module(metric, loss, model, ctx)
            if module is None:
                return None
            name = metric.node if metric.form == STRING else cst.SimpleString('"binary_accuracy"')
            made = named_at_zero(binary_accuracy_class(module), name)
        else:
            return None
        return Fix("Threshold the metric at 0 (logits)", Safety.UNSAFE, {metric.node: made}) \
            if made is not None else None


def _half(threshold: Optional[cst.BaseExpression]) -> bool:
    """The default threshold, or 0.5 written out."""
    return threshold is None or (isinstance(threshold, cst.Float) and threshold.evaluated_value == 0.5)


def _spelled(metric) -> str:
    if metric.form == STRING:
        return f"`{metric.node.value}`"
    if metric.form == CLASS:
        func = metric.node.func
        return f"`{func.attr.value if isinstance(func, cst.Attribute) else cst.Module([]).code_for_node(func)}()`"
    return f"`{cst.Module([]).code_for_node(metric.node)}`"


def _metrics_module(metric, loss: cst.BaseExpression, model: cst.BaseExpression,
                    ctx) -> Optional[cst.BaseExpression]:
    """The Keras module to spell ``BinaryAccuracy`` through: as the metric function, the loss (its
    class, or the function a ``partial`` wraps) or the model's constructor spell Keras
    (``tf.keras`` of ``tf.keras.losses.BinaryCrossentropy``); else the file's import of the Keras
    the loss (or the model) comes from (``tf.keras`` after ``from tensorflow.keras.losses import
    ...``); None where there is none."""
    outputs, resolver, scope = ctx.model_outputs, ctx.resolver, ctx.scope
    spelled = [(metric.node, scope)] if metric.form == FUNCTION else []
    for made in (outputs.made_by(loss, scope), outputs.made_by(model, scope, at=model)):
        if made is not None:
            spelled.append((made[0].func, made[1]))
            if made[0].args and resolver.qualname(made[0].func, made[1]) == "functools.partial":
                spelled.append((made[0].args[0].value, made[1]))
    for expr, where in spelled:
        module = keras_prefix(expr, resolver, where)
        if module is not None and normalize(resolver.raw_qualname(module, scope) or "") == "keras":
            return module  # it means Keras at the compile too
    for expr, where in spelled:
        origin = resolver.raw_qualname(expr, where) or ""
        for prefix, root, chain in _ROOTS:
            if origin.startswith(prefix):
                alias = resolver.module_alias(root, scope, exact=True)
                if alias is None:
                    return None
                module: cst.BaseExpression = cst.Name(alias)
                for attr in chain:
                    module = cst.Attribute(module, cst.Name(attr))
                return module
    return None


_RUN_ONE_UNIT = """
model.set_weights([np.ones((1, 1), "float32"), np.zeros((1,), "float32")])
x = np.array([[0.1], [0.2], [0.3], [0.4], [-0.1], [-0.3]], "float32")
result = model.evaluate(x, np.array([[1], [1], [1], [1], [0], [0]], "float32"), verbose=0, return_dict=True)
"""

AccuracyOnLogits.cases = [
    flagged(
        """
        import numpy as np
        import tensorflow as tf

        model = tf.keras.Sequential([tf.keras.Input((1,)), tf.keras.layers.Dense(1)])
        model.compile("sgd", loss=tf.keras.losses.BinaryCrossentropy(from_logits=True), metrics=["accuracy"])
        """,
        fixed="""
        import numpy as np
        import tensorflow as tf

        model = tf.keras.Sequential([tf.keras.Input((1,)), tf.keras.layers.Dense(1)])
        model.compile("sgd", loss=tf.keras.losses.BinaryCrossentropy(from_logits=True), metrics=[tf.keras.metrics.BinaryAccuracy(name="accuracy", threshold=0.0)])
        """,
        at=[(5, 90, "The model outputs logits (no activation in its last layer, a `from_logits=True` loss), but "
                    "`\"accuracy\"` thresholds them at 0.5 (sigmoid > 0.62): use `BinaryAccuracy(threshold=0.0)`")],
        run=_RUN_ONE_UNIT,
        effect=CHANGES,
        note="Keras 3.15: 'accuracy' of a one-unit output is binary accuracy at 0.5; on logits 0.1-0.4 of positives "
             "and -0.1, -0.3 of negatives (every prediction right) it reports 0.333, after the fix 1.0 under the "
             "same name; the loss is the same",
    ),
    flagged(
        """
        import os
        os.environ["TF_USE_LEGACY_KERAS"] = "1"
        import numpy as np
        import tensorflow as tf

        loss_fn = tf.keras.losses.BinaryFocalCrossentropy(from_logits=True)
        inputs = tf.keras.Input((1,))
        model = tf.keras.Model(inputs, tf.keras.layers.Dense(units=1)(inputs))
        model.compile(optimizer="sgd", loss=loss_fn, metrics=["acc", tf.keras.metrics.binary_accuracy])
        """,
        fixed="""
        import os
        os.environ["TF_USE_LEGACY_KERAS"] = "1"
        import numpy as np
        import tensorflow as tf

        loss_fn = tf.keras.losses.BinaryFocalCrossentropy(from_logits=True)
        inputs = tf.keras.Input((1,))
        model = tf.keras.Model(inputs, tf.keras.layers.Dense(units=1)(inputs))
        model.compile(optimizer="sgd", loss=loss_fn, metrics=[tf.keras.metrics.BinaryAccuracy(name="acc", threshold=0.0), tf.keras.metrics.BinaryAccuracy(name="binary_accuracy", threshold=0.0)])
        """,
        at=[(9, 55, "The model outputs logits (no activation in its last layer, a `from_logits=True` loss), but "
                    "`\"acc\"` thresholds them"),
            (9, 62, "The model outputs logits (no activation in its last layer, a `from_logits=True` loss), but "
                    "`tf.keras.metrics.binary_accuracy` thresholds them")],
        run=_RUN_ONE_UNIT,
        effect=CHANGES,
        note="tf_keras 2.21 (TF_USE_LEGACY_KERAS before importing tensorflow: this case runs there): 'acc' of a "
             "one-unit functional model and the function binary_accuracy both report 0.333 on logits, 1.0 after "
             "the fix, names kept; a focal loss built once and named",
    ),
    flagged(
        """
        import functools
        import numpy as np
        import keras

        model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)])
        model.compile("sgd", lambda y, p: keras.losses.binary_crossentropy(y, p, from_logits=True),
                      metrics=[keras.metrics.BinaryAccuracy(name="bin"), keras.metrics.BinaryAccuracy("half", None, 0.5),
                               keras.metrics.AUC(from_logits=True), keras.metrics.Precision(), keras.metrics.Recall(0.5),
                               keras.metrics.Precision(top_k=1, name="top"), keras.metrics.Recall(thresholds=[0.3, 0.7])],
                      weighted_metrics=["binary_accuracy"])
        wide = keras.Sequential([keras.Input((1,)), keras.layers.Dense(3)])
        wide.compile("sgd", functools.partial(keras.losses.binary_crossentropy, from_logits=True),
                     metrics=["accuracy", "binary_accuracy"])
        """,
        fixed="""
        import functools
        import numpy as np
        import keras

        model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1)])
        model.compile("sgd", lambda y, p: keras.losses.binary_crossentropy(y, p, from_logits=True),
                      metrics=[keras.metrics.BinaryAccuracy(name="bin", threshold=0.0), keras.metrics.BinaryAccuracy("half", None, 0.0),
                               keras.metrics.AUC(from_logits=True), keras.metrics.Precision(thresholds=0.0), keras.metrics.Recall(0.0),
                               keras.metrics.Precision(top_k=1, name="top"), keras.metrics.Recall(thresholds=[0.3, 0.7])],
                      weighted_metrics=[keras.metrics.BinaryAccuracy(name="binary_accuracy", threshold=0.0)])
        wide = keras.Sequential([keras.Input((1,)), keras.layers.Dense(3)])
        wide.compile("sgd", functools.partial(keras.losses.binary_crossentropy, from_logits=True),
                     metrics=["accuracy", keras.metrics.BinaryAccuracy(name="binary_accuracy", threshold=0.0)])
        """,
        at=[(7, 24, "The model outputs logits (no activation in its last layer, a `from_logits=True` loss), but "
                    "`BinaryAccuracy()` thresholds them"),
            (7, 66, "The model outputs logits (no activation in its last layer, a `from_logits=True` loss), but "
                    "`BinaryAccuracy()` thresholds them"),
            (8, 61, "The model outputs logits (no activation in its last layer, a `from_logits=True` loss), but "
                    "`Precision()` thresholds them at 0.5 (sigmoid > 0.62): use `thresholds=0.0`"),
            (8, 88, "The model outputs logits (no activation in its last layer, a `from_logits=True` loss), but "
                    "`Recall()` thresholds them at 0.5 (sigmoid > 0.62): use `thresholds=0.0`"),
            (10, 33, "The model outputs logits (no activation in its last layer, a `from_logits=True` loss), but "
                     "`\"binary_accuracy\"` thresholds them"),
            (13, 35, "The model outputs logits (no activation in its last layer, a `from_logits=True` loss), but "
                     "`\"binary_accuracy\"` thresholds them")],
        run=_RUN_ONE_UNIT + """
wide.set_weights([np.array([[1.0, 0.5, -0.2]], "float32"), np.zeros((3,), "float32")])
labels = np.array([[1, 1, 0], [1, 1, 0], [1, 1, 0], [1, 1, 0], [0, 0, 1], [0, 0, 1]], "float32")
multi = wide.evaluate(x, labels, verbose=0, return_dict=True)
""",
        effect=CHANGES,
        note="Keras 3: a lambda and a partial of binary_crossentropy with from_logits=True; BinaryAccuracy built in the "
             "list (no threshold, or 0.5 given by position) gets threshold 0.0; weighted_metrics too; Precision() and "
             "Recall(0.5) get thresholds=0.0 (0.0 -> 1.0 here); AUC(from_logits=True), a top-k precision and a list "
             "of thresholds are left; a three-unit multi-label output: 'binary_accuracy' thresholds every logit (0.444 on "
             "these, 1.0 after), 'accuracy' there is categorical accuracy (argmax), not reported",
    ),
    flagged(
        """
        import tensorflow as tf
        from tensorflow.keras.losses import BinaryCrossentropy
        from tensorflow.keras.layers import Dense
        from tensorflow.keras.models import Sequential

        def loss(y_true, y_pred):
            return tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y_true, logits=y_pred))

        accuracy = tf.keras.metrics.BinaryAccuracy()
        a = Sequential([Dense(8, activation="relu"), Dense(1)])
        a.compile("adam", loss, metrics=[accuracy])
        b = Sequential([Dense(8, activation="relu"), Dense(1)])
        b.compile("adam", BinaryCrossentropy(from_logits=True), metrics=["accuracy"])
        """,
        at=[(11, 34, "The model outputs logits (no activation in its last layer, a `from_logits=True` loss), but "
                     "`accuracy` thresholds them"),
            (13, 66, "The model outputs logits (no activation in its last layer, a `from_logits=True` loss), but "
                     "`\"accuracy\"` thresholds them")],
        fixed="""
        import tensorflow as tf
        from tensorflow.keras.losses import BinaryCrossentropy
        from tensorflow.keras.layers import Dense
        from tensorflow.keras.models import Sequential

        def loss(y_true, y_pred):
            return tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y_true, logits=y_pred))

        accuracy = tf.keras.metrics.BinaryAccuracy()
        a = Sequential([Dense(8, activation="relu"), Dense(1)])
        a.compile("adam", loss, metrics=[accuracy])
        b = Sequential([Dense(8, activation="relu"), Dense(1)])
        b.compile("adam", BinaryCrossentropy(from_logits=True), metrics=[tf.keras.metrics.BinaryAccuracy(name="accuracy", threshold=0.0)])
        """,
        run="""
import numpy as np
x = np.array([[0.1, 0.2], [0.3, -0.4], [-0.2, 0.1]], "float32")
y = np.array([[1], [0], [1]], "float32")
b.build((None, 2))
b.set_weights([np.eye(2, 8, dtype="float32"), np.zeros((8,), "float32"), np.full((8, 1), 0.5, "float32"),
               np.zeros((1,), "float32")])
result = b.evaluate(x, y, verbose=0, return_dict=True)
""",
        effect=CHANGES,
        note="a same-module loss function passing its y_pred as sigmoid_cross_entropy_with_logits's logits; a "
             "BinaryAccuracy object built elsewhere (reported, no fix: it may be used elsewhere); classes imported "
             "from tensorflow.keras: BinaryAccuracy spelled through the file's tf (tf.keras)",
    ),
    flagged(
        """
        import tensorflow as tf

        model = "https://tfhub.dev/google/tf2-preview/gnews-swivel-20dim/1"
        for epochs in (5, 10):
            model = tf.keras.Sequential()
            model.add(tf.keras.layers.Dense(16, activation="relu"))
            model.add(tf.keras.layers.Dense(1))
            model.compile("adam", loss=tf.losses.BinaryCrossentropy(from_logits=True), metrics=["accuracy"])

        model = tf.keras.Sequential()
        model.add(tf.keras.layers.Dense(1))
        model.compile("adam", loss=tf.losses.BinaryCrossentropy(from_logits=True), metrics=["accuracy"])
        linear = model
        model = tf.keras.Sequential()
        model.add(tf.keras.layers.Dense(1, activation="sigmoid"))
        model.compile("adam", loss=tf.losses.BinaryCrossentropy(from_logits=True), metrics=["accuracy"])
        model = tf.keras.Sequential()
        model.add(tf.keras.layers.Dense(3))
        model.compile("adam", loss=tf.losses.BinaryCrossentropy(from_logits=True), metrics=["accuracy"])
        """,
        fixed="""
        import tensorflow as tf

        model = "https://tfhub.dev/google/tf2-preview/gnews-swivel-20dim/1"
        for epochs in (5, 10):
            model = tf.keras.Sequential()
            model.add(tf.keras.layers.Dense(16, activation="relu"))
            model.add(tf.keras.layers.Dense(1))
            model.compile("adam", loss=tf.losses.BinaryCrossentropy(from_logits=True), metrics=[tf.keras.metrics.BinaryAccuracy(name="accuracy", threshold=0.0)])

        model = tf.keras.Sequential()
        model.add(tf.keras.layers.Dense(1))
        model.compile("adam", loss=tf.losses.BinaryCrossentropy(from_logits=True), metrics=[tf.keras.metrics.BinaryAccuracy(name="accuracy", threshold=0.0)])
        linear = model
        model = tf.keras.Sequential()
        model.add(tf.keras.layers.Dense(1, activation="sigmoid"))
        model.compile("adam", loss=tf.losses.BinaryCrossentropy(from_logits=True), metrics=["accuracy"])
        model = tf.keras.Sequential()
        model.add(tf.keras.layers.Dense(3))
        model.compile("adam", loss=tf.losses.BinaryCrossentropy(from_logits=True), metrics=["accuracy"])
        """,
        at=[(8, 89, "The model outputs logits"), (12, 85, "The model outputs logits")],
        run="""
import numpy as np
linear.build((None, 1))
linear.set_weights([np.ones((1, 1), "float32"), np.zeros((1,), "float32")])
x = np.array([[0.1], [0.2], [0.3], [0.4], [-0.1], [-0.3]], "float32")
result = linear.evaluate(x, np.array([[1], [1], [1], [1], [0], [0]], "float32"), verbose=0, return_dict=True)
""",
        effect=CHANGES,
        note="a name rebound (a notebook's `model`, a sweep rebuilding it in a loop): the model it holds at each "
             "compile, with the layers added to that one (a later sigmoid or three-unit model is not the linear "
             "one-unit model before it)",
    ),
    clean(
        """
        import tensorflow as tf
        from tensorflow import keras

        units = 1
        a = keras.Sequential([keras.layers.Dense(1, activation="sigmoid")])
        a.compile("adam", keras.losses.BinaryCrossentropy(), metrics=["accuracy"])
        b = keras.Sequential([keras.layers.Dense(1)])
        b.compile("adam", keras.losses.BinaryCrossentropy(from_logits=True),
                  metrics=[keras.metrics.BinaryAccuracy(threshold=0.0), keras.metrics.BinaryAccuracy("x", None, 0)])
        c = keras.Sequential([keras.layers.Dense(3)])
        c.compile("adam", keras.losses.CategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
        d = keras.Sequential([keras.layers.Dense(3)])
        d.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["acc"])
        e = keras.Sequential([keras.layers.Dense(1), keras.layers.Lambda(lambda t: t)])
        e.compile("adam", keras.losses.BinaryCrossentropy(from_logits=True), metrics=["accuracy"])
        f = keras.Sequential([keras.layers.Dense(1, activation="sigmoid")])
        f.compile("adam", keras.losses.BinaryCrossentropy(from_logits=True), metrics=["accuracy"])
        g = keras.Sequential([keras.layers.Dense(units)])
        g.compile("adam", keras.losses.BinaryCrossentropy(from_logits=True), metrics=["accuracy"])
        h = keras.Sequential([keras.layers.Dense(1)])
        h.compile("adam", keras.losses.BinaryCrossentropy(from_logits=flag), metrics=["accuracy"])
        i = keras.models.load_model("m.keras")
        i.compile("adam", keras.losses.BinaryCrossentropy(from_logits=True), metrics=["accuracy"])
        j = keras.Sequential([keras.layers.Dense(1)])
        j.compile("adam", keras.losses.BinaryCrossentropy(from_logits=True), metrics=[keras.metrics.AUC(from_logits=True)])
        k = keras.Sequential([keras.layers.Dense(1)])
        k.compile("adam", keras.losses.BinaryCrossentropy(), metrics=["accuracy"])
        """,
        note="a sigmoid output with from_logits=False; BinaryAccuracy at 0.0 (or 0); categorical and sparse "
             "categorical losses with 'accuracy' (argmax); a last layer not told; from_logits=True on a sigmoid "
             "(TFG606's); a width that is not a literal; from_logits not told; a loaded model; AUC(from_logits=True); "
             "from_logits=False on a linear model (TFG605's)",
    ),
]
