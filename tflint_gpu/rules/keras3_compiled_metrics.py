from __future__ import annotations

import libcst as cst

from tflint_gpu.rules.base import Rule, clean, flagged
from tflint_gpu.rules.keras3_compiled_loss import keras3_self


class Keras3CompiledMetrics(Rule):
    """`self.compiled_metrics.update_state(y, y_pred)` in a Keras 3 `train_step`: the logged loss is the mean prediction.

    ## What it does
    Finds, in a method of a Keras 3 `Model` subclass (`keras.Model`, or
    `tf.keras.Model` under TensorFlow 2.16+), the Keras 2 custom-training
    idiom `self.compiled_metrics.update_state(...)` in a step that returns
    `{m.name: m.result() for m in self.metrics}`. Not reported: a step that
    returns logs of its own (`{**results, "loss": loss, "crf_loss": ...}`:
    Keras 3 keeps a step's logs when their keys differ from the metrics'
    names, so the loss logged is the step's; the shim then only warns),
    tf_keras subclasses, a class that
    defines or assigns its own `compiled_metrics`, a file that mentions
    `TF_USE_LEGACY_KERAS`, branches that never run under Keras 3.

    ## Why is this bad?
    Keras 3 keeps `compiled_metrics` only as a deprecated shim (source:
    `keras/src/backend/tensorflow/trainer.py`) whose `update_state(y,
    y_pred)` updates every metric in `self.metrics`, and gives each `Mean`
    among them (the `loss` tracker `fit` logs) the predictions. Measured
    under TensorFlow 2.21 with Keras 3.15: a `train_step` that computes the
    loss with `compiled_loss` (or `compute_loss`), applies the gradients,
    calls `self.compiled_metrics.update_state(y, p)` and returns `{m.name:
    m.result() for m in self.metrics}`, compiled with `"mse"` and
    `metrics=["mae"]`, three epochs: `UserWarning: model.compiled_metrics()
    is deprecated`, the model trains as under tf_keras (`mae` 3.0281, 2.9664,
    2.9061 in both), but the logged `loss` is 0.0, 0.0143, 0.0283 where
    tf_keras 2.21 logs the true 13.4034, 12.8708, 12.36. Early stopping,
    `ModelCheckpoint(monitor="loss")`, `ReduceLROnPlateau` and the training
    curves then follow the mean prediction, silently.

    ## Example
    ```python
    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(x=x, y=y, y_pred=y_pred)
        self.optimizer.apply_gradients(zip(tape.gradient(loss, self.trainable_variables),
                                           self.trainable_variables))
        self.compiled_metrics.update_state(y, y_pred)
        return {m.name: m.result() for m in self.metrics}
    ```

    Use instead:
    ```python
        for metric in self.metrics:
            if metric.name == "loss":
                metric.update_state(loss)
            else:
                metric.update_state(y, y_pred)
        return {m.name: m.result() for m in self.metrics}
    ```

    ## Fix safety
    No fix: the `loss` tracker must be given the loss, a value the rewrite
    cannot name in general.

    ## Measured effect
    TensorFlow 2.21, Keras 3.15, CPU: the histories above; with the metric
    loop the logged loss is 13.4034, 12.8708, 12.36, as under tf_keras 2.21
    with the original code. examples/TFG911 (`tflint-gpu verify --rule
    TFG911`): fixes-behaviour, the logged losses before are the mean
    predictions, after the mean squared errors.
    """

    code = "TFG911"
    name = "keras3-compiled-metrics"
    message = "Keras 3's deprecated `compiled_metrics` gives the loss tracker the predictions"
    needs = (("compiled_metrics",),)
    reads_index = ("Return",)
    migration = True

    def visit_Attribute(self, node: cst.Attribute, ctx) -> None:
        if node.attr.value != "compiled_metrics":
            return
        if not keras3_self(node, ctx) or ctx.migration.guarded(node, ctx.scope):
            return
        if not self._logs_the_metrics(ctx):
            return
        ctx.report(node.attr, "Keras 3's deprecated `compiled_metrics.update_state()` gives the `loss` tracker the "
                              "predictions (the logged loss is wrong): update `self.metrics` yourself, the `loss` "
                              "one with the loss")

    @staticmethod
    def _logs_the_metrics(ctx) -> bool:
        """Does the method return ``{m.name: m.result() for m in self.metrics}``
        (so that ``fit`` logs the metrics' results, the ``loss`` tracker's among
        them: Keras 3 keeps the step's own logs only when their keys differ
        from the metrics' names)?"""
        function = ctx.scope.function()
        if function is None or not isinstance(function.node, cst.FunctionDef):
            return False
        for ret in ctx.nodes_in(function, "Return"):
            value = ret.value
            if isinstance(value, cst.DictComp):
                source = value.for_in.iter
                if isinstance(source, cst.Attribute) and source.attr.value == "metrics" \
                        and isinstance(source.value, cst.Name) and source.value.value == "self":
                    return True
        return False

    cases = [
        flagged(
            """
            import keras
            import tensorflow as tf

            class Model(tf.keras.Model):
                def train_step(self, data):
                    x, y = data
                    with tf.GradientTape() as tape:
                        y_pred = self(x, training=True)
                        loss = self.compute_loss(x=x, y=y, y_pred=y_pred)
                    self.optimizer.apply_gradients(zip(tape.gradient(loss, self.trainable_variables),
                                                       self.trainable_variables))
                    self.compiled_metrics.update_state(y, y_pred)
                    return {m.name: m.result() for m in self.metrics}

                def test_step(self, data):
                    x, y = data
                    metrics = self.compiled_metrics
                    metrics.update_state(y, self(x, training=False))
                    return {m.name: m.result() for m in self.metrics}

                def predict_step(self, data):
                    self.compiled_metrics.update_state(data[1], self(data[0]))
                    results = {m.name: m.result() for m in self.metrics}
                    return {**results, "loss": 0.0, "extra": 1.0}
            """,
            at=[(12, 14, "Keras 3's deprecated `compiled_metrics.update_state()` gives the `loss` tracker"),
                (17, 24, "Keras 3's deprecated `compiled_metrics.update_state()`")],
            note="a step returning its own logs (other keys) keeps its loss: not reported (tensorflow/addons "
                 "crf_wrapper.py)",
        ),
        clean(
            """
            import tf_keras
            import keras

            class Old(tf_keras.Model):
                def train_step(self, data):
                    x, y = data
                    self.compiled_metrics.update_state(y, self(x))
                    return {m.name: m.result() for m in self.metrics}

            class Own(keras.Model):
                def __init__(self):
                    super().__init__()
                    self.compiled_metrics = [keras.metrics.Mean()]

                def train_step(self, data):
                    for m in self.compiled_metrics:
                        m.update_state(data[1])
                    return {}

            class New(keras.Model):
                def train_step(self, data):
                    x, y = data
                    y_pred = self(x, training=True)
                    loss = self.compute_loss(x=x, y=y, y_pred=y_pred)
                    for metric in self.metrics:
                        if metric.name == "loss":
                            metric.update_state(loss)
                        else:
                            metric.update_state(y, y_pred)
                    return {m.name: m.result() for m in self.metrics}
            """,
            note="tf_keras models keep it; an attribute of the class's own; migrated Keras 3 code",
        ),
    ]
