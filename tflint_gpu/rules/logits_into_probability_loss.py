from __future__ import annotations

from typing import Optional

import libcst as cst

from tflint_gpu.semantic.api import argument, is_false, keyword
from tflint_gpu.semantic.model_outputs import LINEAR
from tflint_gpu.rules.base import CHANGES, Fix, Rule, Safety, clean, flagged


def _spelled(loss: cst.BaseExpression) -> str:
    if isinstance(loss, cst.SimpleString):
        return loss.value
    if isinstance(loss, cst.Call):
        func = cst.Module([]).code_for_node(loss.func)
        return f"{func.rsplit('.', 1)[-1]}()"
    return cst.Module([]).code_for_node(loss).rsplit(".", 1)[-1]


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
    No fix for a string or a function loss (the message names the class to
    use) or for a loss object built elsewhere (it may serve another model).

    ## Measured effect
    The figures above. examples/TFG605 (`tflint-gpu verify --device cpu
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
            self._report(loss, loss if isinstance(loss, cst.Call) else None, ctx)
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
                loss: Optional[cst.BaseExpression] = None) -> None:
        what = _spelled(loss if loss is not None else node)
        fix = None
        if ctor is not None and not any(a.star for a in ctor.args):
            # from_logits is the loss classes' first parameter: given by keyword, by position, or not at all
            given = keyword(ctor, "from_logits") or next((a for a in ctor.args if a.keyword is None), None)
            if given is not None:
                args = [a.with_changes(value=cst.Name("True")) if a is given else a for a in ctor.args]
            else:
                comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")) if ctor.args else cst.MaybeSentinel.DEFAULT
                args = [cst.Arg(cst.Name("True"), keyword=cst.Name("from_logits"), comma=comma,
                                equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))]
                args += list(ctor.args)
            fix = Fix("Pass `from_logits=True`", Safety.UNSAFE, {ctor: ctor.with_changes(args=args)})
        target = loss if loss is not None else node
        if isinstance(target, cst.Call) or fix is not None:
            advice = "pass `from_logits=True`"
        elif isinstance(target, cst.Name) and ctx.model_outputs.made_by(target, ctx.scope, at=target) is not None:
            advice = "build it with `from_logits=True`"
        else:
            advice = "use the loss class with `from_logits=True`"
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
