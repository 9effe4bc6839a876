from __future__ import annotations

from typing import Dict, NamedTuple, Optional

import libcst as cst

from tflint_gpu.autofix.metrics import at_zero, binary_accuracy_class, keras_module_of, named_at_zero
from tflint_gpu.semantic.api import argument, is_false, keyword
from tflint_gpu.semantic.compiled import ACCURACY_BY_WIDTH, ARGMAX, BINARY, CLASS, STRING, compiled_metrics
from tflint_gpu.semantic.model_outputs import LINEAR
from tflint_gpu.rules.base import CHANGES, Fix, Rule, Safety, clean, flagged


def _spelled(loss: cst.BaseExpression) -> str:
    if isinstance(loss, cst.SimpleString):
        return loss.value
    if isinstance(loss, cst.Call):
        func = cst.Module([]).code_for_node(loss.func)
        return f"{func.rsplit('.', 1)[-1]}()"
    return cst.Module([]).code_for_node(loss).rsplit(".", 1)[-1]


class _Metrics(NamedTuple):
    changes: Optional[Dict[cst.CSTNode, cst.CSTNode]]  # what makes the metrics read logits; None: not known
    thresholded: bool  # a binary accuracy among them thresholds the outputs at 0.5 (or may)


def _metrics_plan(compile_call: cst.Call, model: cst.BaseExpression, loss: cst.BaseExpression, ctx) -> _Metrics:
    """What the compiled metrics become once the loss reads logits (how Keras resolves each one is
    ``semantic.compiled``'s): argmax metrics given as a string or built in the list are unchanged by
    logits; a binary accuracy given so, without a threshold, is made to threshold at 0
    (``sigmoid(z) > 0.5`` is ``z > 0``), keeping its name; anything else leaves the plan unknown."""
    metrics = compiled_metrics(compile_call, model, ctx.model_outputs, ctx.scope)
    if metrics is None:
        return _Metrics(None, False)
    changes: Optional[Dict[cst.CSTNode, cst.CSTNode]] = {}
    thresholded = False
    for metric in metrics:
        if metric.form not in (STRING, CLASS):  # a function or an object built elsewhere: not rewritten
            changes = None
            continue
        if metric.kind == ARGMAX:
            continue
        if metric.kind == ACCURACY_BY_WIDTH:
            thresholded, changes = True, None
            continue
        if metric.kind == BINARY and metric.form == STRING:
            thresholded = True
            made = _binary_accuracy(loss, ctx)
            if made is None or changes is None:
                changes = None
                continue
            changes[metric.node] = named_at_zero(made, metric.node)
            continue
        if metric.kind == BINARY and metric.form == CLASS:
            thresholded = True
            if changes is not None and not metric.starred and metric.threshold is None:
                changes[metric.node] = at_zero(metric.node)
                continue
        changes = None
    return _Metrics(changes, thresholded)


def _binary_accuracy(loss: cst.BaseExpression, ctx) -> Optional[cst.BaseExpression]:
    """``<keras>.metrics.BinaryAccuracy`` spelled as the loss class is (``tf.keras.losses.X`` ->
    ``tf.keras.metrics.BinaryAccuracy``), or through the module's ``keras`` import."""
    module = keras_module_of(loss.func if isinstance(loss, cst.Call) else None)
    if module is not None:
        return binary_accuracy_class(module)
    alias = ctx.resolver.module_alias("keras", ctx.scope)
    if alias is None:
        return None
    return binary_accuracy_class(cst.Name(alias))


class LogitsIntoProbabilityLoss(Rule):
    """A model whose last layer has no activation, trained with a loss that expects probabilities.

    ## What it does
    Finds a Keras model the file builds whose output is raw logits (its last
    layer is a `Dense` or `Conv` layer with no activation, in a `Sequential`
    list, the last `add`, or the `outputs` of a functional `Model`) when its
    output reaches a cross-entropy built to take probabilities:

    * `model.compile(loss="sparse_categorical_crossentropy")` (also
      `"categorical_crossentropy"`, `"binary_crossentropy"`, the functions
      `keras.losses.sparse_categorical_crossentropy`...), or
      `SparseCategoricalCrossentropy()` / `CategoricalCrossentropy()` /
      `BinaryCrossentropy()` without `from_logits=True`;
    * the same loss object called on the model's output in a custom loop:
      `loss_fn(y, model(x))`, or `logits = model(x)` then `loss_fn(y, logits)`.

    For `compile`, the message also says when a compiled metric would read
    the logits as probabilities once the loss takes logits (a binary
    accuracy thresholding them at 0.5, or a metric it cannot tell).

    Not reported: a last layer with `activation="softmax"`/`"sigmoid"`, an
    `Activation`/`Softmax` layer, `tf.nn.softmax` on the output; a loss with
    `from_logits=True` or a `from_logits=` the linter cannot read; a model
    whose last layer it cannot tell (a `Lambda`, a custom layer, a subclassed
    model, a loaded one).

    ## Why is this bad?
    The loss takes the logits for probabilities: it clips them into (0, 1)
    and takes their log, so the loss is wrong and so are its gradients, and
    nothing warns (Keras 3 warns only in the opposite case, a softmax output
    given to a `from_logits=True` loss, and then uses the logits itself).
    Measured under TensorFlow 2.21 / Keras 3.15 on the CPU (a `Dense(16,
    relu)` → `Dense(4)` model, 256 random samples of 4 classes, Adam, 20
    epochs, the same seed): with `SparseCategoricalCrossentropy()` the logged
    loss is 4.531 while the true cross-entropy of `softmax(outputs)` is 1.496,
    and the accuracy 0.266; with `from_logits=True`: logged 1.379, true 1.377,
    accuracy 0.324. No warning either way.

    Once the loss reads logits, the model learns logits, and a compiled
    metric that reads the outputs as probabilities goes wrong: Keras 3.15 and
    tf_keras 2.21 resolve `metrics=["accuracy"]` (or `"acc"`) by the output's
    last axis, binary accuracy (outputs > 0.5) when it is 1, else sparse
    categorical or categorical accuracy (argmax). Measured (both Kerases, a
    one-unit model right on every sample, logits 0.1-0.4 of positives):
    `from_logits=True` alone leaves `"accuracy"` reporting 0.0; with
    `BinaryAccuracy(name="accuracy", threshold=0.0)` it reports 1.0
    (`sigmoid(z) > 0.5` is `z > 0`). An argmax is the same on logits as on
    probabilities: a three-unit model's `"accuracy"` is the same before and
    after (0.75 both, executed in the tests).

    ## Example
    ```python
    model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16, activation="relu"),
                              keras.layers.Dense(4)])
    model.compile("adam", "sparse_categorical_crossentropy")
    ```

    Use instead:
    ```python
    model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    ```
    (or give the last layer `activation="softmax"`).

    ## Fix safety
    Unsafe: `from_logits=True` is added to a loss class built in the call
    (`compile(loss=SparseCategoricalCrossentropy())`), which changes the loss
    values and the training, on purpose (to what the model's output means).
    The same fix makes the compiled metrics read logits: a binary accuracy
    (`"binary_accuracy"`, `BinaryAccuracy(...)` without a threshold, and
    `"accuracy"`/`"acc"` when the last layer is a `Dense` whose `units` is
    the literal 1) becomes `BinaryAccuracy(name=<the same name>,
    threshold=0.0)` in `metrics=` and `weighted_metrics=` (the logged names,
    and callbacks monitoring them, are unchanged); argmax metrics
    (`"accuracy"` of a wider output, categorical, sparse and top-k
    accuracies) are left as they are. No fix, and the message says the
    metrics would read logits, where another metric is compiled (an `AUC`,
    `Precision`, a custom one, a name), where the output's width is not a
    literal and `"accuracy"` is asked for (the message names
    `BinaryAccuracy(threshold=0.0)`), or where a third positional argument
    is passed (metrics in tf_keras, loss weights in Keras 3). No fix for a
    string or a function loss (the message names the class to use) or for a
    loss object built elsewhere (it may serve another model).

    ## Measured effect
    The figures above; the cases' fixes are executed (accuracy 0.0 -> 1.0 on
    the one-unit model, the loss 1.508 -> 0.577). examples/TFG605 (`tflint-gpu verify --device cpu
    --size small --rule TFG605`, 512 samples of a learnable 4-class rule, 15
    epochs): fixes-behaviour, the true cross-entropy falls and the accuracy
    rises with `from_logits=True` (the measurement below shows both, as
    [cross-entropy, accuracy] before -> after).
    """

    code = "TFG605"
    name = "logits-into-probability-loss"
    message = "Logits fed to a loss that expects probabilities"
    needs = (("crossentropy", "Crossentropy"),)
    fix_safety = Safety.UNSAFE

    def visit_Call(self, node: cst.Call, ctx) -> None:
        if ctx.in_test_module:
            return  # a test's toy model trains on purpose with whatever loss (true, not worth acting on)
        outputs = ctx.model_outputs
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "compile":
            loss = argument(node, 1, "loss")
            if loss is None or outputs.probability_loss(loss, ctx.scope) is None:
                return
            if outputs.final_activation(func.value, ctx.scope) != LINEAR:
                return
            self._report(loss, loss if isinstance(loss, cst.Call) else None, ctx,
                         metrics=_metrics_plan(node, func.value, loss, ctx))
            return
        if not node.args or outputs.probability_loss(func, ctx.scope) is None:
            return
        given = argument(node, 2, "from_logits")  # the functions take it per call
        if given is not None and not is_false(given):
            return
        predicted = argument(node, 1, "y_pred")
        made = outputs.made_by(predicted, ctx.scope, at=predicted) if predicted is not None else None
        if made is None or outputs.final_activation(made[0].func, made[1]) != LINEAR:
            return
        self._report(predicted, None, ctx, func)

    def _report(self, node: cst.CSTNode, ctor: Optional[cst.Call], ctx,
                loss: Optional[cst.BaseExpression] = None, metrics: Optional["_Metrics"] = None) -> None:
        what = _spelled(loss if loss is not None else node)
        fix = None
        metrics = metrics if metrics is not None else _Metrics({}, False)
        if ctor is not None and not any(a.star for a in ctor.args) and metrics.changes is not None:
            # from_logits is the loss classes' first parameter: given by keyword, by position, or not at all
            given = keyword(ctor, "from_logits") or next((a for a in ctor.args if a.keyword is None), None)
            if given is not None:
                args = [a.with_changes(value=cst.Name("True")) if a is given else a for a in ctor.args]
            else:
                comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")) if ctor.args else cst.MaybeSentinel.DEFAULT
                args = [cst.Arg(cst.Name("True"), keyword=cst.Name("from_logits"), comma=comma,
                                equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))]
                args += list(ctor.args)
            changes = {ctor: ctor.with_changes(args=args), **metrics.changes}
            fix = Fix("Pass `from_logits=True`" + (" and read logits in `accuracy`" if metrics.changes else ""),
                      Safety.UNSAFE, changes)
        target = loss if loss is not None else node
        if isinstance(target, cst.Call) or fix is not None:
            advice = "pass `from_logits=True`"
        elif isinstance(target, cst.Name) and ctx.model_outputs.made_by(target, ctx.scope, at=target) is not None:
            advice = "build it with `from_logits=True`"
        else:
            advice = "use the loss class with `from_logits=True`"
        if metrics.thresholded:
            advice += " (and `BinaryAccuracy(threshold=0.0)` for `accuracy`, which would threshold logits at 0.5)"
        elif metrics.changes is None:
            advice += " (the compiled metrics would then read logits too)"
        ctx.report(node, f"The model's last layer has no activation (logits), but `{what}` takes probabilities: "
                         f"{advice}, or end the model in a softmax/sigmoid", fix)

    cases = [
        flagged(
            """
            import numpy as np
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(8, activation="relu"),
                                         tf.keras.layers.Dense(4)])
            model.compile("adam", loss=tf.keras.losses.SparseCategoricalCrossentropy())
            """,
            fixed="""
            import numpy as np
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(8, activation="relu"),
                                         tf.keras.layers.Dense(4)])
            model.compile("adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
            """,
            at=[(6, 28, "The model's last layer has no activation (logits), but `SparseCategoricalCrossentropy()` "
                        "takes probabilities")],
            run="""
            x = np.linspace(-1.0, 1.0, 12, dtype="float32").reshape(4, 3)
            value = model.loss(np.array([0, 1, 2, 3]), model(x))
            """,
            effect=CHANGES,
            note="the loss of the same outputs changes: probabilities clipped before, softmax of the logits after",
        ),
        flagged(
            """
            import numpy as np
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.Input((1,)), tf.keras.layers.Dense(1)])
            model.compile("sgd", loss=tf.keras.losses.BinaryCrossentropy(), metrics=["accuracy"])
            """,
            fixed="""
            import numpy as np
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.Input((1,)), tf.keras.layers.Dense(1)])
            model.compile("sgd", loss=tf.keras.losses.BinaryCrossentropy(from_logits=True), metrics=[tf.keras.metrics.BinaryAccuracy(name="accuracy", threshold=0.0)])
            """,
            at=[(5, 27, "The model's last layer has no activation (logits), but `BinaryCrossentropy()` takes "
                        "probabilities: pass `from_logits=True` (and `BinaryAccuracy(threshold=0.0)` for `accuracy`")],
            run="""
            model.set_weights([np.ones((1, 1), "float32"), np.zeros((1,), "float32")])
            x = np.array([[0.1], [0.2], [0.3], [0.4]], "float32")
            result = model.evaluate(x, np.ones((4, 1), "float32"), verbose=0, return_dict=True)
            """,
            effect=CHANGES,
            note="'accuracy' of a one-unit output is binary accuracy, outputs > 0.5: on logits 0.1-0.4 of "
                 "positives it reported 0.0 after a fix adding from_logits alone; BinaryAccuracy(threshold=0.0), "
                 "under the same name, reports 1.0 (and the loss changes, on purpose)",
        ),
        flagged(
            """
            import numpy as np
            import tensorflow as tf
            from tensorflow import keras

            inputs = keras.Input((1,))
            model = keras.Model(inputs, keras.layers.Dense(units=1)(inputs))
            model.compile("sgd", keras.losses.BinaryCrossentropy(label_smoothing=0.0),
                          metrics=["binary_accuracy", keras.metrics.BinaryAccuracy(name="bin"), "acc"],
                          weighted_metrics=["accuracy"])

            wide = keras.Sequential([keras.Input((2,)), keras.layers.Dense(3)])
            wide.compile("sgd", keras.losses.SparseCategoricalCrossentropy(), metrics=["accuracy", "sparse_top_k_categorical_accuracy"])
            """,
            fixed="""
            import numpy as np
            import tensorflow as tf
            from tensorflow import keras

            inputs = keras.Input((1,))
            model = keras.Model(inputs, keras.layers.Dense(units=1)(inputs))
            model.compile("sgd", keras.losses.BinaryCrossentropy(from_logits=True, label_smoothing=0.0),
                          metrics=[keras.metrics.BinaryAccuracy(name="binary_accuracy", threshold=0.0), keras.metrics.BinaryAccuracy(name="bin", threshold=0.0), keras.metrics.BinaryAccuracy(name="acc", threshold=0.0)],
                          weighted_metrics=[keras.metrics.BinaryAccuracy(name="accuracy", threshold=0.0)])

            wide = keras.Sequential([keras.Input((2,)), keras.layers.Dense(3)])
            wide.compile("sgd", keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy", "sparse_top_k_categorical_accuracy"])
            """,
            at=[(7, 22, "The model's last layer has no activation (logits), but `BinaryCrossentropy()` takes "
                        "probabilities: pass `from_logits=True` (and `BinaryAccuracy(threshold=0.0)`"),
                (12, 21, "The model's last layer has no activation (logits), but `SparseCategoricalCrossentropy()` "
                         "takes probabilities: pass `from_logits=True`, or end")],
            run="""
            model.set_weights([np.ones((1, 1), "float32"), np.zeros((1,), "float32")])
            x = np.array([[0.1], [-0.2], [0.3], [0.4]], "float32")
            binary = model.evaluate(x, np.array([[1], [0], [1], [1]], "float32"), verbose=0, return_dict=True)
            wide.set_weights([np.array([[1, 0, 0.5], [0, 1, 0.5]], "float32"), np.zeros((3,), "float32")])
            points = np.array([[0.3, 0.1], [0.1, 0.3], [0.2, 0.2], [-0.1, 0.4]], "float32")
            sparse = wide.evaluate(points, np.array([0, 1, 2, 1]), verbose=0, return_dict=True)
            """,
            effect=CHANGES,
            note="every binary accuracy (by string, class or a one-unit 'acc', weighted too) reads logits after the "
                 "fix, names kept; 'accuracy' of a three-unit output is sparse categorical accuracy (argmax, the "
                 "same on logits) and top-k is unchanged too",
        ),
        flagged(
            """
            import keras
            from keras import layers

            inputs = keras.Input((8,))
            hidden = layers.Dense(16, activation="relu")(inputs)
            logits = layers.Dense(3)(hidden)
            model = keras.Model(inputs, logits)
            model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])

            net = keras.Sequential()
            net.add(layers.Dense(1, activation="relu"))
            net.add(layers.Dense(1))
            net.compile("sgd", keras.losses.binary_crossentropy)
            """,
            at=[(8, 38, "The model's last layer has no activation (logits), but `\"sparse_categorical_crossentropy\"` "
                        "takes probabilities: use the loss class with `from_logits=True`"),
                (13, 20, "The model's last layer has no activation (logits), but `binary_crossentropy`")],
            note="a functional model and Sequential.add; a string and a function loss (no fix)",
        ),
        flagged(
            """
            import keras

            units = 1
            a = keras.Sequential([keras.Input((4,)), keras.layers.Dense(units)])
            a.compile("sgd", loss=keras.losses.BinaryCrossentropy(), metrics=["accuracy"])
            b = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
            b.compile("sgd", loss=keras.losses.BinaryCrossentropy(), metrics=[keras.metrics.AUC()])
            c = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
            c.compile("sgd", keras.losses.BinaryCrossentropy(), ["accuracy"])
            """,
            at=[(5, 23, "The model's last layer has no activation (logits), but `BinaryCrossentropy()` takes "
                        "probabilities: pass `from_logits=True` (and `BinaryAccuracy(threshold=0.0)` for `accuracy`, "
                        "which would threshold logits at 0.5)"),
                (7, 23, "The model's last layer has no activation (logits), but `BinaryCrossentropy()` takes "
                        "probabilities: pass `from_logits=True` (the compiled metrics would then read logits too)"),
                (9, 18, "The model's last layer has no activation (logits), but `BinaryCrossentropy()` takes "
                        "probabilities: pass `from_logits=True` (the compiled metrics would then read logits too)")],
            note="no fix where a metric would read logits and the fix cannot tell how: 'accuracy' of an output "
                 "whose width is not a literal (binary when it is 1), an AUC (its thresholds are in [0, 1]), a "
                 "third positional argument (metrics in tf_keras, loss_weights in Keras 3)",
        ),
        flagged(
            """
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
            loss_fn = tf.keras.losses.SparseCategoricalCrossentropy()

            def other(x, y):
                return tf.losses.categorical_crossentropy(tf.one_hot(y, 10), model(x), from_logits=True)

            @tf.function
            def step(x, y):
                with tf.GradientTape() as tape:
                    logits = model(x, training=True)
                    loss = loss_fn(y, logits)
                return tape.gradient(loss, model.trainable_variables)
            """,
            at=[(13, 27, "The model's last layer has no activation (logits), but `loss_fn` takes probabilities: "
                         "build it with `from_logits=True`")],
            note="a custom training step; the loss object is built elsewhere: no fix; the function form given "
                 "from_logits=True is right",
        ),
        clean(
            """
            import tensorflow as tf
            from tensorflow import keras

            a = keras.Sequential([keras.layers.Dense(4, activation="softmax")])
            a.compile("adam", "sparse_categorical_crossentropy")
            b = keras.Sequential([keras.layers.Dense(4), keras.layers.Softmax()])
            b.compile("adam", keras.losses.CategoricalCrossentropy())
            c = keras.Sequential([keras.layers.Dense(4)])
            c.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
            d = keras.Sequential([keras.layers.Dense(4), keras.layers.Lambda(lambda t: t)])
            d.compile("adam", "sparse_categorical_crossentropy")
            e = keras.models.load_model("m.keras")
            e.compile("adam", "sparse_categorical_crossentropy")
            f = keras.Sequential([keras.layers.Dense(1)])
            f.compile("adam", "mse")
            g = keras.Sequential([keras.layers.Dense(4, activation=tf.nn.softmax)])
            g.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=logits))
            h = keras.Sequential([keras.layers.Dense(4)])
            h.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=logits))
            """,
            note="softmax in the last layer or a Softmax layer; from_logits=True; a last layer not told; a loaded "
                 "model; mse; a from_logits the linter cannot read",
        ),
    ]
