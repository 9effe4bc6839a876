from __future__ import annotations

from typing import Optional

import libcst as cst

from tflint_gpu.semantic import values
from tflint_gpu.semantic.migration import KERAS3, is_model_class
from tflint_gpu.rules.base import FIXES_ERROR, Fix, Rule, Safety, clean, flagged

_LOSS_SCALE = "keras.mixed_precision.LossScaleOptimizer"
_SCALING = frozenset({"get_scaled_loss", "get_unscaled_gradients"})


def _is_optimizer_class(qualname: Optional[str]) -> bool:
    if qualname is None:
        return False
    parts = qualname.split(".")
    return qualname == _LOSS_SCALE or (len(parts) == 3 and parts[:2] == ["keras", "optimizers"]
                                       and parts[2][:1].isupper() and parts[2] != "schedules")


class Keras3OptimizerApi(Rule):
    """A Keras 2 optimizer API that changed in Keras 3: `optimizer.variables()`, `self.optimizer.get_scaled_loss(loss)`.

    ## What it does
    Finds, in Keras 3 code (`keras`, or `tf.keras` under TensorFlow 2.16+):

    * `optimizer.variables()` called, on a Keras optimizer (made by
      `keras.optimizers.X(...)` or `LossScaleOptimizer(...)`, through names
      and `self.x` bound once) or a Keras 3 model's `optimizer`
      (`model.optimizer`, `self.optimizer` in a `keras.Model` subclass);
    * `self.optimizer.get_scaled_loss(loss)` and
      `get_unscaled_gradients(grads)` on a Keras 3 model's `optimizer` (the
      custom `train_step` of Keras 2's mixed precision guide), where the
      optimizer's class cannot be read: on a `LossScaleOptimizer(...)` object
      TFG902 reports them from the migration table.

    Not reported: tf_keras code; models (`model.variables` is a list in
    Keras 2 too); a `tf.Module`; branches that never run under Keras 3 and
    code a test expects to raise.

    ## Why is this bad?
    Measured under TensorFlow 2.21 with Keras 3.15:
    * `opt.variables()`: `TypeError: 'list' object is not callable`
      (`variables` is a list property; tf_keras 2.21's is a `CallableList`,
      so both spellings ran there);
    * `self.optimizer.get_scaled_loss(loss)` in a `train_step` under the
      `mixed_float16` policy (where `compile` makes the optimizer a
      `LossScaleOptimizer`): `AttributeError: 'LossScaleOptimizer' object has
      no attribute 'get_scaled_loss'` at the first `fit` step; the same step
      trains under tf_keras 2.21. Keras 3 spells it `scale_loss(loss)` (on
      every optimizer: a plain one returns the loss), and its
      `LossScaleOptimizer.apply_gradients` unscales the gradients itself
      (measured: a gradient of 1 scaled by 32768 moves a variable by
      exactly -1 with SGD(1.0)), so `get_unscaled_gradients` has no
      counterpart: pass the scaled gradients to `apply_gradients`.

    ## Example
    ```python
    with tf.GradientTape() as tape:
        loss = self.compute_loss(x, y, self(x, training=True))
        scaled = self.optimizer.get_scaled_loss(loss)
    grads = self.optimizer.get_unscaled_gradients(tape.gradient(scaled, self.trainable_variables))
    self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
    slots = len(self.optimizer.variables())
    ```

    Use instead:
    ```python
    with tf.GradientTape() as tape:
        loss = self.compute_loss(x, y, self(x, training=True))
        scaled = self.optimizer.scale_loss(loss)
    grads = tape.gradient(scaled, self.trainable_variables)
    self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
    slots = len(self.optimizer.variables)
    ```

    ## Fix safety
    Safe: `variables()` → `variables` (the same list; it also runs under
    tf_keras) and `get_scaled_loss(loss)` → `scale_loss(loss)` (the same
    product, and the loss unchanged for an optimizer without loss scaling):
    the tests run the original, which raises, and the fixed code. No fix for
    `get_unscaled_gradients`: dropping it is right only when the gradients
    go to the same `LossScaleOptimizer`'s `apply_gradients`.
    Executed under tf_keras too (the fix-execution test's Keras 2 run):
    `.variables` gives the same values there.

    ## Measured effect
    TensorFlow 2.21, Keras 3.15, CPU: the errors above. tf_keras 2.21:
    `variables()` returns 3 variables after a step, and the mixed precision
    `train_step` runs two epochs. examples/TFG909 (`tflint-gpu verify --rule
    TFG909`): fixes-error, `AttributeError` before, the fixed `fit` runs after.
    """

    code = "TFG909"
    name = "keras3-optimizer-api"
    message = "This optimizer API changed in Keras 3"
    needs = (("variables", "get_scaled_loss", "get_unscaled_gradients"),)
    fix_safety = Safety.SAFE
    migration = True

    def visit_Call(self, node: cst.Call, ctx) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute):
            return
        method = func.attr.value
        if method == "variables" and not node.args:
            if self._optimizer(func.value, ctx, known_class=True) and not ctx.migration.guarded(node, ctx.scope):
                ctx.report(node, "Keras 3 optimizers' `variables` is a list, not a method (TypeError: 'list' "
                                 "object is not callable): drop the `()`",
                           Fix("Read `variables` without calling it", Safety.SAFE, {node: func}))
        elif method in _SCALING:
            if not self._optimizer(func.value, ctx, known_class=False) or ctx.migration.guarded(node, ctx.scope):
                return
            if method == "get_scaled_loss":
                fix = None
                if len(node.args) == 1 and not node.args[0].star and node.args[0].keyword is None:
                    fix = Fix("Call `scale_loss()`", Safety.SAFE, {func.attr: cst.Name("scale_loss")})
                ctx.report(func.attr, "Keras 3 optimizers have no `get_scaled_loss()` (AttributeError): use "
                                      "`scale_loss(loss)`", fix)
            else:
                ctx.report(func.attr, "Keras 3 optimizers have no `get_unscaled_gradients()` (AttributeError): "
                                      "a LossScaleOptimizer's `apply_gradients` unscales the gradients itself")

    @staticmethod
    def _optimizer(receiver: cst.BaseExpression, ctx, known_class: bool) -> bool:
        """Is ``receiver`` a Keras 3 optimizer: a Keras 3 model's ``optimizer``
        (any receiver), or (``known_class``) one made by a Keras optimizer class?"""
        if isinstance(receiver, cst.Attribute) and receiver.attr.value == "optimizer":
            owner = receiver.value
            cls = ctx.graphs.objects.self_class(owner, ctx.scope)
            if cls is not None:
                if ctx.migration.class_base(cls) is None or ctx.graphs.keras_flavour(cls) != KERAS3 \
                        or ctx.migration.legacy_env:
                    return False
                attribute = ctx.values.attribute(receiver, ctx.scope)
                if attribute is None or attribute.bound:
                    # An optimizer of its own: its class decides.
                    return attribute is not None and _is_optimizer_class(
                        ctx.migration.object_class(receiver, ctx.scope))
                return True
            if ctx.value_kind(owner) != values.KERAS:
                return False
            made = ctx.migration.object_class(owner, ctx.scope)
            return (made is None or is_model_class(made) or made.startswith("keras.applications.")) \
                and ctx.migration.object_flavour(owner, ctx.scope) == KERAS3
        if not known_class:
            return False
        return _is_optimizer_class(ctx.migration.object_class(receiver, ctx.scope)) \
            and ctx.migration.object_flavour(receiver, ctx.scope) == KERAS3

    cases = [
        flagged(
            """
            import numpy as np
            import tensorflow as tf

            opt = tf.keras.optimizers.Adam(learning_rate=0.1)
            w = tf.Variable(1.0)
            opt.apply_gradients([(tf.constant(1.0), w)])
            count = len(opt.variables())
            names = [v.name for v in opt.variables()]
            """,
            fixed="""
            import numpy as np
            import tensorflow as tf

            opt = tf.keras.optimizers.Adam(learning_rate=0.1)
            w = tf.Variable(1.0)
            opt.apply_gradients([(tf.constant(1.0), w)])
            count = len(opt.variables)
            names = [v.name for v in opt.variables]
            """,
            at=[(7, 13, "Keras 3 optimizers' `variables` is a list, not a method (TypeError"),
                (8, 26, "Keras 3 optimizers' `variables` is a list")],
            run="n = np.array(count)",
            effect=FIXES_ERROR,
            keras2=True,
        ),
        flagged(
            """
            import numpy as np
            import keras
            import tensorflow as tf

            class Model(keras.Model):
                def train_step(self, data):
                    x, y = data
                    with tf.GradientTape() as tape:
                        pred = self(x, training=True)
                        loss = tf.reduce_mean(tf.square(tf.cast(pred, "float32") - y))
                        scaled = self.optimizer.get_scaled_loss(loss)
                    grads = tape.gradient(scaled, self.trainable_variables)
                    self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
                    return {"loss": loss, "slots": len(self.optimizer.variables())}

            def train():
                inputs = keras.Input((3,))
                model = Model(inputs, keras.layers.Dense(1, kernel_initializer="zeros")(inputs))
                model.compile(keras.optimizers.SGD(0.01))
                history = model.fit(np.ones((8, 3), "float32"), np.ones((8, 1), "float32"), epochs=2, verbose=0)
                return np.array(history.history["loss"])
            """,
            fixed="""
            import numpy as np
            import keras
            import tensorflow as tf

            class Model(keras.Model):
                def train_step(self, data):
                    x, y = data
                    with tf.GradientTape() as tape:
                        pred = self(x, training=True)
                        loss = tf.reduce_mean(tf.square(tf.cast(pred, "float32") - y))
                        scaled = self.optimizer.scale_loss(loss)
                    grads = tape.gradient(scaled, self.trainable_variables)
                    self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
                    return {"loss": loss, "slots": len(self.optimizer.variables)}

            def train():
                inputs = keras.Input((3,))
                model = Model(inputs, keras.layers.Dense(1, kernel_initializer="zeros")(inputs))
                model.compile(keras.optimizers.SGD(0.01))
                history = model.fit(np.ones((8, 3), "float32"), np.ones((8, 1), "float32"), epochs=2, verbose=0)
                return np.array(history.history["loss"])
            """,
            at=[(11, 37, "Keras 3 optimizers have no `get_scaled_loss()` (AttributeError): use `scale_loss(loss)`"),
                (14, 44, "Keras 3 optimizers' `variables` is a list")],
            run="losses = train()",
            effect=FIXES_ERROR,
            note="self.optimizer of a Keras 3 model subclass: scale_loss without mixed precision returns the loss",
        ),
        flagged(
            """
            import keras

            def step(model, tape, loss):
                ...

            class Trainer(keras.Model):
                def train_step(self, data):
                    with tf.GradientTape() as tape:
                        loss = self.compute_loss(data[0], data[1], self(data[0]))
                        scaled = self.optimizer.get_scaled_loss(loss, extra)
                    grads = self.optimizer.get_unscaled_gradients(tape.gradient(scaled, self.trainable_variables))
                    return {}

            model = keras.Sequential([keras.layers.Dense(1)])
            state = model.optimizer.variables()
            """,
            fixed="""
            import keras

            def step(model, tape, loss):
                ...

            class Trainer(keras.Model):
                def train_step(self, data):
                    with tf.GradientTape() as tape:
                        loss = self.compute_loss(data[0], data[1], self(data[0]))
                        scaled = self.optimizer.get_scaled_loss(loss, extra)
                    grads = self.optimizer.get_unscaled_gradients(tape.gradient(scaled, self.trainable_variables))
                    return {}

            model = keras.Sequential([keras.layers.Dense(1)])
            state = model.optimizer.variables
            """,
            at=[(10, 37, "Keras 3 optimizers have no `get_scaled_loss()`"),
                (11, 32, "Keras 3 optimizers have no `get_unscaled_gradients()` (AttributeError): a LossScaleOptimizer"),
                (15, 9, "Keras 3 optimizers' `variables` is a list")],
            note="no exact rewrite for get_unscaled_gradients or a call with other arguments; a model's optimizer",
        ),
        clean(
            """
            import keras
            import tf_keras
            import tensorflow as tf

            opt = keras.optimizers.Adam()
            slots = opt.variables
            model = keras.Sequential([keras.layers.Dense(1)])
            weights = model.variables
            old = tf_keras.optimizers.Adam()
            n = len(old.variables())
            module = tf.Module()
            params = module.variables

            class Agent:
                def __init__(self):
                    self.optimizer = Optimizer()

                def step(self):
                    return self.optimizer.variables(), self.optimizer.get_scaled_loss(1.0)

            class Legacy(tf_keras.Model):
                def train_step(self, data):
                    return self.optimizer.get_scaled_loss(data)
            """,
            note="Keras 3 code already migrated; tf_keras optimizers (CallableList) and models; a class of the file's "
                 "own that is no Keras model",
        ),
        clean(
            """
            import tensorflow as tf

            opt = tf.keras.optimizers.Adam()
            if hasattr(opt, "get_scaled_loss"):
                scaled = opt.get_scaled_loss(loss)
            try:
                v = opt.variables
            except TypeError:
                v = opt.variables()
            """,
            note="guards: a hasattr branch never taken under Keras 3 (and not an optimizer model attribute), an "
                 "except fallback",
        ),
    ]
