from __future__ import annotations

from typing import Optional

import libcst as cst

from tflint_gpu.semantic.api import keyword
from tflint_gpu.semantic.literals import literal_value
from tflint_gpu.rules.base import CHANGES, Fix, Rule, Safety, clean, flagged

_CODE = cst.Module(body=[]).code_for_node


class TrainingModeInEvaluation(Rule):
    """A model holding BatchNormalization or dropout called with `training=True` in an evaluation step.

    ## What it does
    Finds `model(x, training=True)` in a function that evaluates: its name
    says so (`test_step`, `val_step`, `evaluate`, `_one_step_evaluate`,
    `predict_batch`...: `test`, `val`, `valid`, `eval`, `evaluate`,
    `predict`, `infer` as a word of the name) and its own body holds no
    training step (no gradients reaching an optimizer update;
    `semantic.training_layers`), where the model or layer called holds a
    `BatchNormalization`, a dropout layer or `GaussianNoise` the engine can
    see (`semantic.training_layers`, the facts TFG612 asks). Not reported: a
    function whose name speaks of prediction, inference or sampling (Monte
    Carlo dropout keeps dropout on at prediction to estimate an uncertainty,
    and inference code may keep a layer noisy on purpose), a dropout or noise
    layer itself called with `training=True` (it says what it wants), a
    Keras class's `call` (its `training` is its caller's), `training` given
    anything but the literal `True`, a model whose layers the engine cannot
    read, a test module.

    ## Why is this bad?
    `training=True` is the training mode: `BatchNormalization` normalises
    each evaluation batch with its own statistics and moves its moving mean
    and variance toward the evaluation data (the model changes every time it
    is evaluated), dropout drops units at random and `GaussianNoise` adds
    noise. The figures an evaluation step reports are then those of a noisy,
    batch-dependent model, and the model that is saved or served afterwards
    has had its statistics pulled toward the evaluation set.

    ## Example
    ```python
    @tf.function
    def test_step(images, labels):
        predictions = model(images, training=True)
        return loss_fn(labels, predictions)
    ```

    Use instead:
    ```python
    @tf.function
    def test_step(images, labels):
        predictions = model(images, training=False)
        return loss_fn(labels, predictions)
    ```

    ## Fix safety
    Unsafe: `training=False` changes the values the step computes (that is
    the point: inference mode) and stops the step from moving the model's
    moving statistics. Some code evaluates in training mode on purpose (a
    decoder's teacher forcing switched by the same flag); review before
    applying.

    ## Measured effect
    `examples/TFG617`, `tflint-gpu verify --rule TFG617 --device cpu --size
    small`: fixes-behaviour (see examples/RESULTS.md: the moving mean the
    evaluation moved, and the evaluation loss).
    """

    code = "TFG617"
    name = "training-mode-in-evaluation"
    message = "Evaluation step calls a model with BatchNormalization/dropout in training mode"
    needs = (("training",),)
    fix_safety = Safety.UNSAFE

    def visit_Call(self, node: cst.Call, ctx) -> None:
        given = keyword(node, "training")
        if given is None or not isinstance(node.func, (cst.Name, cst.Attribute)):
            return
        scope = ctx.scope
        if not scope.is_function or ctx.in_test_module or literal_value(given.value, scope) != (True,):
            return
        facts = ctx.training_layers
        if ctx.qualname(node.func) is not None or not facts.evaluates(scope) \
                or facts.training_on_purpose(node, scope):
            return
        held = facts.holds(node.func, scope)
        if not held:
            return
        held = held if " " in held else f"`{held}`"
        ctx.report(node, f"`{_CODE(node.func)}` holds {held} and is called with `training=True` in `{scope.name}`, "
                         f"an evaluation step: batch statistics, moving averages updated on evaluation data, dropout "
                         f"on", _fix(given))

    cases = [
        flagged(
            """
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(4),
                                         tf.keras.layers.BatchNormalization(), tf.keras.layers.Dense(1)])
            optimizer = tf.keras.optimizers.SGD(0.1)

            @tf.function
            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
                return loss

            @tf.function
            def test_step(x, y):
                return tf.reduce_mean(tf.square(model(x, training=True) - y))
            """,
            """
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(4),
                                         tf.keras.layers.BatchNormalization(), tf.keras.layers.Dense(1)])
            optimizer = tf.keras.optimizers.SGD(0.1)

            @tf.function
            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
                return loss

            @tf.function
            def test_step(x, y):
                return tf.reduce_mean(tf.square(model(x, training=False) - y))
            """,
            at=[(17, 37, "`model` holds `BatchNormalization` and is called with `training=True` in `test_step`")],
            run="""
            x = tf.reshape(tf.range(24, dtype=tf.float32), (8, 3)) / 10.0
            y = tf.ones((8, 1))
            before = model.layers[1].moving_mean.numpy().copy()
            result = [float(test_step(x + 5.0, y)), float(abs(model.layers[1].moving_mean.numpy() - before).max())]
            """,
            effect=CHANGES,
            note="a BN model: the training step trains it, the test step runs it in training mode (its moving "
                 "mean moves toward the test batch; after the fix it does not)",
        ),
        flagged(
            """
            import tensorflow as tf

            class Net(tf.keras.Model):
                def __init__(self):
                    super().__init__()
                    self.drop = tf.keras.layers.Dropout(0.5)
                    self.out = tf.keras.layers.Dense(2)

                def call(self, x, training=False):
                    return self.out(self.drop(x, training=training))

            class Trainer:
                def __init__(self):
                    self.net = Net()

                def _one_step_evaluate(self, batch):
                    return self.net(batch, training=True)
            """,
            """
            import tensorflow as tf

            class Net(tf.keras.Model):
                def __init__(self):
                    super().__init__()
                    self.drop = tf.keras.layers.Dropout(0.5)
                    self.out = tf.keras.layers.Dense(2)

                def call(self, x, training=False):
                    return self.out(self.drop(x, training=training))

            class Trainer:
                def __init__(self):
                    self.net = Net()

                def _one_step_evaluate(self, batch):
                    return self.net(batch, training=False)
            """,
            at=[(17, 16, "`self.net` holds `Dropout` and is called with `training=True` in `_one_step_evaluate`")],
            run="""
            tf.keras.utils.set_random_seed(0)
            trainer = Trainer()
            batch = tf.ones((4, 3))
            result = [trainer._one_step_evaluate(batch).numpy().tolist() for _ in range(2)]
            """,
            effect=CHANGES,
            note="a subclassed model holding dropout, through self (before: two evaluations of one batch differ)",
        ),
        clean(
            """
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1)])
            bn_model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.BatchNormalization()])
            optimizer = tf.keras.optimizers.SGD(0.1)

            def test_step(x, flag):
                a = model(x, training=True)
                b = bn_model(x, training=flag)
                return a, b, bn_model(x, training=False)

            def validate_and_train(x):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(bn_model(x, training=True))
                grads = tape.gradient(loss, bn_model.trainable_variables)
                optimizer.apply_gradients(zip(grads, bn_model.trainable_variables))

            def predict_with_uncertainty(x):
                return tf.stack([bn_model(x, training=True) for _ in range(10)])

            drop = tf.keras.layers.Dropout(0.2)

            def eval_step(x):
                return drop(x, training=True)

            class Block(tf.keras.layers.Layer):
                def __init__(self):
                    super().__init__()
                    self.bn = tf.keras.layers.BatchNormalization()

                def call(self, x, training=None):
                    return self.bn(x, training=True)

            def train_step(x):
                return bn_model(x, training=True)
            """,
            note="no BN/dropout; a flag or False; a step that trains despite its name; Monte Carlo prediction; "
                 "a dropout layer itself; a layer's call; a name that does not evaluate",
        ),
    ]


def _fix(given: cst.Arg) -> Optional[Fix]:
    return Fix("Call it with `training=False`", Safety.UNSAFE, {given.value: cst.Name("False")})
