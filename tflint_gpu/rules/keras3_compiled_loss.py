from __future__ import annotations

from typing import List, Optional

import libcst as cst

from tflint_gpu.semantic.migration import KERAS3
from tflint_gpu.rules.base import IDENTICAL, Fix, Rule, Safety, clean, flagged

_LOSS_PARAMS = ("y", "y_pred", "sample_weight", "regularization_losses")


class Keras3CompiledLoss(Rule):
    """`self.compiled_loss(...)` in a Keras 3 `train_step`: a deprecated shim of `compute_loss`.

    ## What it does
    Finds, in a method of a Keras 3 `Model` subclass (`keras.Model`, or
    `tf.keras.Model` under TensorFlow 2.16+), the Keras 2 custom-training
    idiom `self.compiled_loss(y, y_pred, ...)`. Its companion
    `self.compiled_metrics.update_state(...)`, which logs a wrong loss, is
    TFG911. Not reported: tf_keras subclasses, a class that defines or
    assigns its own `compiled_loss`, a file that mentions
    `TF_USE_LEGACY_KERAS`, branches that never run under Keras 3.

    ## Why is this bad?
    Keras 3 keeps it only as a deprecated shim (source:
    `keras/src/backend/tensorflow/trainer.py`) that warns at every trace and
    calls `compute_loss(x=None, y, y_pred, sample_weight)`, ignoring
    `regularization_losses=` (it adds the model's `losses` itself); code
    written against it usually pairs it with `compiled_metrics`, which is
    silently wrong (TFG911). Measured under TensorFlow 2.21 with Keras 3.15, a
    `train_step` computing `loss = self.compiled_loss(y, p,
    regularization_losses=self.losses)` and calling
    `self.compiled_metrics.update_state(y, p)`, compiled with `"mse"` and
    `metrics=["mae"]`, three epochs: `UserWarning: model.compiled_loss() is
    deprecated. Instead, use model.compute_loss(x, y, y_pred, sample_weight,
    training)`; the model trains as before (the `mae` history 3.0281,
    2.9664, 2.9061 is the same as with `compute_loss` and as under
    tf_keras).

    ## Example
    ```python
    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compiled_loss(y, y_pred, regularization_losses=self.losses)
        self.optimizer.apply_gradients(zip(tape.gradient(loss, self.trainable_variables),
                                           self.trainable_variables))
        return {"loss": loss}
    ```

    Use instead:
    ```python
    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(x=None, y=y, y_pred=y_pred)
        self.optimizer.apply_gradients(zip(tape.gradient(loss, self.trainable_variables),
                                           self.trainable_variables))
        return {"loss": loss}
    ```

    ## Fix safety
    `self.compiled_loss(y, y_pred, sample_weight, regularization_losses=...)`
    → `self.compute_loss(x=None, y=y, y_pred=y_pred, sample_weight=...)`:
    safe, it is the call Keras 3's shim makes (which adds the model's own
    `losses` itself and ignores `regularization_losses`), without the
    warning. No fix when another argument is passed.

    ## Measured effect
    TensorFlow 2.21, Keras 3.15, CPU: the warning above; the weights after
    two epochs are the same before and after the fix (the fix-execution
    test). examples/TFG910 (`tflint-gpu verify --rule TFG910`): equivalent.
    """

    code = "TFG910"
    name = "keras3-compiled-loss"
    message = "Keras 3 keeps `compiled_loss` only as a deprecated shim"
    needs = (("compiled_loss",),)
    fix_safety = Safety.SAFE
    migration = True

    def visit_Attribute(self, node: cst.Attribute, ctx) -> None:
        name = node.attr.value
        if name != "compiled_loss":
            return
        if not keras3_self(node, ctx) or ctx.migration.guarded(node, ctx.scope):
            return
        call = self._called(node, ctx)
        ctx.report(node.attr, "Keras 3 keeps `compiled_loss()` only as a deprecated shim (UserWarning): call "
                              "`self.compute_loss(x=x, y=y, y_pred=y_pred)`",
                   self._fix(call, ctx) if call is not None else None)

    @staticmethod
    def _called(node: cst.Attribute, ctx) -> Optional[cst.Call]:
        parent = next(iter(ctx.scope.ancestors(node)), None)
        return parent if isinstance(parent, cst.Call) and parent.func is node else None

    @staticmethod
    def _fix(call: cst.Call, ctx) -> Optional[Fix]:
        found = {}
        positional = 0
        for arg in call.args:
            if arg.star:
                return None
            if arg.keyword is None:
                if positional >= 3:
                    return None
                found[_LOSS_PARAMS[positional]] = arg.value
                positional += 1
            elif arg.keyword.value in _LOSS_PARAMS and arg.keyword.value not in found:
                found[arg.keyword.value] = arg.value
            else:
                return None
        if "y" not in found or "y_pred" not in found:
            return None
        args: List[cst.Arg] = [cst.Arg(cst.Name("None"), keyword=cst.Name("x"), equal=_EQUAL,
                                       comma=_COMMA)]
        for key in ("y", "y_pred", "sample_weight"):
            if key in found:
                args.append(cst.Arg(found[key], keyword=cst.Name(key), equal=_EQUAL, comma=_COMMA))
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        func = call.func
        assert isinstance(func, cst.Attribute)
        return Fix("Call `self.compute_loss()`", Safety.SAFE,
                   {call: call.with_changes(func=func.with_changes(attr=cst.Name("compute_loss")), args=args)})

    cases = [
        flagged(
            """
            import numpy as np
            import tensorflow as tf

            class Model(tf.keras.Model):
                def train_step(self, data):
                    x, y = data
                    with tf.GradientTape() as tape:
                        y_pred = self(x, training=True)
                        loss = self.compiled_loss(y, y_pred, regularization_losses=self.losses)
                    grads = tape.gradient(loss, self.trainable_variables)
                    self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
                    return {"loss": loss}

            def train():
                inputs = tf.keras.Input((3,))
                model = Model(inputs, tf.keras.layers.Dense(1, kernel_initializer="zeros")(inputs))
                model.compile(tf.keras.optimizers.SGD(0.01), "mse")
                x = np.linspace(-1, 1, 24, dtype="float32").reshape(8, 3)
                model.fit(x, x.sum(axis=1, keepdims=True), epochs=2, verbose=0)
                return model.get_weights()
            """,
            fixed="""
            import numpy as np
            import tensorflow as tf

            class Model(tf.keras.Model):
                def train_step(self, data):
                    x, y = data
                    with tf.GradientTape() as tape:
                        y_pred = self(x, training=True)
                        loss = self.compute_loss(x=None, y=y, y_pred=y_pred)
                    grads = tape.gradient(loss, self.trainable_variables)
                    self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
                    return {"loss": loss}

            def train():
                inputs = tf.keras.Input((3,))
                model = Model(inputs, tf.keras.layers.Dense(1, kernel_initializer="zeros")(inputs))
                model.compile(tf.keras.optimizers.SGD(0.01), "mse")
                x = np.linspace(-1, 1, 24, dtype="float32").reshape(8, 3)
                model.fit(x, x.sum(axis=1, keepdims=True), epochs=2, verbose=0)
                return model.get_weights()
            """,
            at=[(9, 25, "Keras 3 keeps `compiled_loss()` only as a deprecated shim (UserWarning)")],
            run="weights = train()",
            effect=IDENTICAL,
            note="the shim calls compute_loss(x=None, y, y_pred, sample_weight): same weights after training",
        ),
        flagged(
            """
            import keras
            import tensorflow as tf

            class GAN(keras.Model):
                def test_step(self, data):
                    x, y = data
                    y_pred = self(x, training=False)
                    self.compiled_loss(y, y_pred, sample_weight, self.losses, extra)
                    return {m.name: m.result() for m in self.metrics}
            """,
            at=[(8, 14, "Keras 3 keeps `compiled_loss()` only as a deprecated shim")],
            note="no exact rewrite: an argument compute_loss has no place for",
        ),
        clean(
            """
            import tf_keras
            import keras

            class Old(tf_keras.Model):
                def train_step(self, data):
                    x, y = data
                    y_pred = self(x, training=True)
                    loss = self.compiled_loss(y, y_pred)
                    self.compiled_metrics.update_state(y, y_pred)
                    return {"loss": loss}

            class Own(keras.Model):
                def __init__(self):
                    super().__init__()
                    self.compiled_loss = keras.losses.MeanSquaredError()

                def train_step(self, data):
                    return {"loss": self.compiled_loss(data[1], self(data[0]))}

            class Trainer:
                def step(self):
                    return self.compiled_loss(1, 2)

            class New(keras.Model):
                def train_step(self, data):
                    x, y = data
                    y_pred = self(x, training=True)
                    loss = self.compute_loss(x=x, y=y, y_pred=y_pred)
                    for metric in self.metrics:
                        metric.update_state(y, y_pred)
                    return {"loss": loss}
            """,
            note="tf_keras models keep both; an attribute of the class's own; no Keras class; migrated Keras 3 code",
        ),
    ]


def keras3_self(node: cst.Attribute, ctx) -> bool:
    """Is ``node`` (``self.<name>``) read in a method of a Keras 3 Model subclass
    that neither defines nor assigns ``<name>``?"""
    objects = ctx.graphs.objects
    cls = objects.self_class(node.value, ctx.scope)
    if cls is None or ctx.migration.legacy_env or ctx.graphs.keras_flavour(cls) != KERAS3:
        return False
    name = node.attr.value
    if objects.defines(cls, name) or objects.attribute_bindings(cls, name, family=True):
        return False
    base = ctx.migration.class_base(cls)
    return base is not None and base.split(".")[-1] in ("Model", "Sequential", "Functional")


_EQUAL = cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))
_COMMA = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
