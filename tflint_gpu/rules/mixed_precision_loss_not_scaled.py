from __future__ import annotations

from typing import Optional

import libcst as cst

from tflint_gpu.semantic import bindings

from tflint_gpu.semantic.precision import LOSS_SCALE, MIXED_FLOAT16
from tflint_gpu.rules.base import CHANGES, Fix, Rule, Safety, clean, flagged


class MixedPrecisionLossNotScaled(Rule):
    """Gradients of an unscaled loss applied by a Keras 3 LossScaleOptimizer: every update is divided by the scale.

    ## What it does
    In a module that sets the `mixed_float16` global policy, finds a
    GradientTape training step (`tape.gradient(...)` reaching
    `<optimizer>.apply_gradients(...)` in the same function) whose optimizer is
    a Keras 3 `LossScaleOptimizer` and whose function never calls
    `<optimizer>.scale_loss(...)`. The optimizer is one when it is
    * `self.optimizer` in a Keras 3 model class (a custom `train_step`):
      `compile` wraps the optimizer in a `LossScaleOptimizer` when the model's
      policy is `mixed_float16`;
    * `model.optimizer` of a model the module builds and compiles (a custom
      loop reusing the compiled optimizer);
    * a name bound to `keras.optimizers.LossScaleOptimizer(...)`.

    Not flagged: `mixed_bfloat16` (no loss scaling: `compile` does not wrap the
    optimizer); tf_keras, and `tf.keras` where the project targets Keras 2 (TF
    2.15 and older, or tf_keras under 2.16+: the target the engine reads from
    the pins): Keras 2's `LossScaleOptimizer` has no `scale_loss` and its
    `apply_gradients` does not unscale; TFG503 reports that step and names
    Keras 2's `get_scaled_loss`/`get_unscaled_gradients`; a module that passes `auto_scale_loss=` to
    `compile`; a step whose function calls `scale_loss` or `get_scaled_loss`
    on anything (a `hasattr` guard included); an optimizer the engine cannot
    trace to one of the forms above. A parameter is traced through every
    call of its function in the module, an attribute through every binding
    of its class (`semantic.flow`): `train(model, optimizer)` called from
    `main()` with a `LossScaleOptimizer(...)` is one.

    ## Why is this bad?
    Keras 3's `LossScaleOptimizer.apply_gradients` divides the gradients by
    its loss scale (initially 2**15 = 32768) before the inner optimizer
    applies them: it expects gradients of `optimizer.scale_loss(loss)`. Fed
    the gradients of the plain loss, every update is 32768 times too small,
    and training silently stalls. The built-in `train_step` calls
    `self.optimizer.scale_loss(loss)` inside the tape; a custom one must too.

    ## Example
    ```python
    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            loss = self.compute_loss(x=x, y=y, y_pred=self(x, training=True))
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
    ```

    Use instead:
    ```python
        with tf.GradientTape() as tape:
            loss = self.compute_loss(x=x, y=y, y_pred=self(x, training=True))
            scaled_loss = self.optimizer.scale_loss(loss)
        grads = tape.gradient(scaled_loss, self.trainable_variables)
    ```

    ## Fix safety
    Unsafe, as it changes the updates on purpose (to those of the built-in
    `fit`). The fix adds `scaled_loss = <optimizer>.scale_loss(<loss>)` as the
    last statement of the tape's block and differentiates `scaled_loss`; the
    loss the step returns is unchanged. It is offered when the gradient's
    target is a name assigned in the tape's block, the `tape.gradient` call
    comes after the block, and `scaled_loss` is free in the function. With a
    plain optimizer (`compile(auto_scale_loss=False)`, `mixed_bfloat16`),
    `scale_loss` returns the loss unchanged, so the fix is harmless there.

    ## Measured effect
    TF 2.21, Keras 3.15, CPU, `mixed_float16`: an 8-16-1 MLP compiled with
    `SGD(0.1)` (wrapped: `LossScaleOptimizer`), one epoch of 4 steps. Built-in
    `fit`: the last kernel moves by 0.383 (norm), eval loss 0.860. Custom
    `train_step` without `scale_loss`: it moves by 2.2e-5 (17,700x less),
    eval loss 1.543 (untrained). With `scale_loss`: identical to the built-in
    step (0.383, 0.860, bit for bit). Under `mixed_bfloat16` all three are the
    same (the optimizer stays `SGD`). `examples/TFG502` (`tflint-gpu verify
    --rule TFG502 --device cpu --size small`): fixes-behaviour; over 3
    epochs the eval loss barely moves from its start before the fix and
    falls after it (the start and end losses in the measurement below).
    """

    code = "TFG502"
    name = "mixed-precision-loss-not-scaled"
    message = "gradients of an unscaled loss reach a LossScaleOptimizer: updates are 32768x too small"
    needs = (("mixed_float16", "LossScaleOptimizer"), ("GradientTape",), ("apply_gradients",))
    fix_safety = Safety.UNSAFE

    def visit_With(self, node: cst.With, ctx) -> None:
        step = ctx.eager.training_step(node, ctx.scope)
        if step is None or step.gradient is None:
            return
        precision = ctx.precision
        optimizer = step.optimizer
        if optimizer is None or precision.loss_scaled(step.scope):
            return
        if precision.optimizer_kind(optimizer, step.where) != (LOSS_SCALE, "keras3"):
            return
        # A LossScaleOptimizer made in this module divides whatever the policy; compile wraps under mixed_float16.
        if not isinstance(optimizer, cst.Name) and not precision.sets(MIXED_FLOAT16):
            return
        spelled = cst.Module([]).code_for_node(optimizer)
        message = f"gradients of an unscaled loss reach a LossScaleOptimizer: scale it with `{spelled}.scale_loss`"
        ctx.report(step.gradient, message, self._fix(step, optimizer, ctx))

    @staticmethod
    def _fix(step, optimizer: cst.BaseExpression, ctx) -> Optional[Fix]:
        gradient = step.gradient
        target = gradient.args[0].value if gradient.args and gradient.args[0].keyword is None else None
        body = step.tape.body
        if not isinstance(target, cst.Name) or not isinstance(body, cst.IndentedBlock):
            return None
        if ctx.binding("scaled_loss", scope=step.scope) is not None:
            return None
        # The gradient call must follow the block, and its target be assigned in it.
        if not bindings.comes_after(step.scope.node, step.tape, gradient):
            return None
        assigned_here = any(
            isinstance(stmt, cst.SimpleStatementLine) and any(
                isinstance(small, (cst.Assign, cst.AugAssign, cst.AnnAssign)) and target.value in _targets(small)
                for small in stmt.body)
            for stmt in body.body)
        if not assigned_here:
            return None
        statement = cst.parse_statement(
            f"scaled_loss = {cst.Module([]).code_for_node(optimizer)}.scale_loss({target.value})\n")
        new_tape = step.tape.with_changes(body=body.with_changes(body=list(body.body) + [statement]))
        new_args = [gradient.args[0].with_changes(value=cst.Name("scaled_loss"))] + list(gradient.args[1:])
        new_gradient = gradient.with_changes(args=new_args)
        return Fix("Differentiate `scaled_loss = optimizer.scale_loss(loss)`", Safety.UNSAFE,
                   {step.tape: new_tape, gradient: new_gradient})

    cases = [
        flagged(
            """
            import keras
            import tensorflow as tf

            keras.mixed_precision.set_global_policy("mixed_float16")


            def train(model, optimizer, data):
                for x, y in data:
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
                    grads = tape.gradient(loss, model.trainable_variables)
                    optimizer.apply_gradients(zip(grads, model.trainable_variables))
                return model


            def main():
                keras.utils.set_random_seed(0)
                model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1, dtype="float32")])
                optimizer = keras.optimizers.LossScaleOptimizer(keras.optimizers.SGD(0.1))
                return train(model, optimizer, [(tf.ones((8, 4)), tf.zeros((8, 1)))] * 3)
            """,
            fixed="""
            import keras
            import tensorflow as tf

            keras.mixed_precision.set_global_policy("mixed_float16")


            def train(model, optimizer, data):
                for x, y in data:
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
                        scaled_loss = optimizer.scale_loss(loss)
                    grads = tape.gradient(scaled_loss, model.trainable_variables)
                    optimizer.apply_gradients(zip(grads, model.trainable_variables))
                return model


            def main():
                keras.utils.set_random_seed(0)
                model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1, dtype="float32")])
                optimizer = keras.optimizers.LossScaleOptimizer(keras.optimizers.SGD(0.1))
                return train(model, optimizer, [(tf.ones((8, 4)), tf.zeros((8, 1)))] * 3)
            """,
            at=[(11, 17, "gradients of an unscaled loss reach a LossScaleOptimizer")],
            run="""
            weights = main().layers[-1].kernel.numpy()
            """,
            effect=CHANGES,
            note="issue 35: the LossScaleOptimizer made in main() reaches train()'s parameter (every call of the "
                 "module passes one: semantic.flow)",
        ),
        flagged(
            """
            import keras
            import tensorflow as tf

            keras.mixed_precision.set_global_policy("mixed_float16")


            class Custom(keras.Model):
                def train_step(self, data):
                    x, y = data
                    with tf.GradientTape() as tape:
                        pred = self(x, training=True)
                        loss = self.compute_loss(x=x, y=y, y_pred=pred)
                    grads = tape.gradient(loss, self.trainable_variables)
                    self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
                    return {"loss": loss}


            def build():
                keras.utils.set_random_seed(0)
                inputs = keras.Input((8,))
                hidden = keras.layers.Dense(16, activation="relu")(inputs)
                outputs = keras.layers.Dense(1, dtype="float32")(hidden)
                model = Custom(inputs, outputs)
                model.compile(keras.optimizers.SGD(0.1), "mse")
                return model
            """,
            fixed="""
            import keras
            import tensorflow as tf

            keras.mixed_precision.set_global_policy("mixed_float16")


            class Custom(keras.Model):
                def train_step(self, data):
                    x, y = data
                    with tf.GradientTape() as tape:
                        pred = self(x, training=True)
                        loss = self.compute_loss(x=x, y=y, y_pred=pred)
                        scaled_loss = self.optimizer.scale_loss(loss)
                    grads = tape.gradient(scaled_loss, self.trainable_variables)
                    self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
                    return {"loss": loss}


            def build():
                keras.utils.set_random_seed(0)
                inputs = keras.Input((8,))
                hidden = keras.layers.Dense(16, activation="relu")(inputs)
                outputs = keras.layers.Dense(1, dtype="float32")(hidden)
                model = Custom(inputs, outputs)
                model.compile(keras.optimizers.SGD(0.1), "mse")
                return model
            """,
            at=[(13, 17, "gradients of an unscaled loss reach a LossScaleOptimizer")],
            run="""
            import numpy as np
            model = build()
            x = np.random.RandomState(0).randn(32, 8).astype("float32")
            model.fit(x, x[:, :1], batch_size=8, epochs=1, verbose=0)
            weights = model.layers[-1].kernel.numpy()
            """,
            effect=CHANGES,
            note="a Keras 3 custom train_step: the last kernel moves 17,700x less before the fix",
        ),
        flagged(
            """
            import keras
            import tensorflow as tf

            keras.mixed_precision.set_global_policy("mixed_float16")
            model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1, dtype="float32")])
            model.compile(keras.optimizers.SGD(0.1), "mse")


            @tf.function
            def step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
                grads = tape.gradient(loss, model.trainable_variables)
                model.optimizer.apply_gradients(zip(grads, model.trainable_variables))
                return loss
            """,
            fixed="""
            import keras
            import tensorflow as tf

            keras.mixed_precision.set_global_policy("mixed_float16")
            model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1, dtype="float32")])
            model.compile(keras.optimizers.SGD(0.1), "mse")


            @tf.function
            def step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
                    scaled_loss = model.optimizer.scale_loss(loss)
                grads = tape.gradient(scaled_loss, model.trainable_variables)
                model.optimizer.apply_gradients(zip(grads, model.trainable_variables))
                return loss
            """,
            at=[(13, 13, "gradients of an unscaled loss reach a LossScaleOptimizer")],
            run="""
            keras.utils.set_random_seed(0)
            for _ in range(3):
                step(tf.ones((8, 4)), tf.zeros((8, 1)))
            weights = model.layers[-1].kernel.numpy()
            """,
            effect=CHANGES,
            note="a custom loop reusing the compiled model's optimizer (compile wrapped it)",
        ),
        flagged(
            """
            import tensorflow as tf

            opt = tf.keras.optimizers.LossScaleOptimizer(tf.keras.optimizers.Adam(1e-3))


            def train(model, dataset):
                for x, y in dataset:
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean(tf.square(model(x) - y))
                        grads = tape.gradient(loss, model.trainable_variables)
                    opt.apply_gradients(zip(grads, model.trainable_variables))
            """,
            at=[(10, 21, "gradients of an unscaled loss reach a LossScaleOptimizer")],
            note="an explicit Keras 3 LossScaleOptimizer divides whatever the policy (a real script: its "
                 "set_global_policy commented out); no fix: the gradient is taken inside the tape",
        ),
        clean(
            """
            import keras
            import tensorflow as tf

            keras.mixed_precision.set_global_policy("mixed_float16")


            class Scaled(keras.Model):
                def train_step(self, data):
                    x, y = data
                    with tf.GradientTape() as tape:
                        loss = self.compute_loss(x=x, y=y, y_pred=self(x, training=True))
                    loss = self.optimizer.scale_loss(loss)
                    grads = tape.gradient(loss, self.trainable_variables)
                    self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
                    return {"loss": loss}


            class GAN(keras.Model):
                def train_step(self, data):
                    with tf.GradientTape() as tape:
                        loss = self.loss_fn(self.discriminator(data))
                    grads = tape.gradient(loss, self.discriminator.trainable_weights)
                    self.d_optimizer.apply_gradients(zip(grads, self.discriminator.trainable_weights))
                    return {"loss": loss}
            """,
            note="scale_loss called (even outside the tape: finetune's form); an optimizer compile never wrapped",
        ),
        clean(
            """
            import keras
            import tensorflow as tf

            keras.mixed_precision.set_global_policy("mixed_bfloat16")


            class Custom(keras.Model):
                def train_step(self, data):
                    x, y = data
                    with tf.GradientTape() as tape:
                        loss = self.compute_loss(x=x, y=y, y_pred=self(x, training=True))
                    grads = tape.gradient(loss, self.trainable_variables)
                    self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
                    return {"loss": loss}
            """,
            note="mixed_bfloat16: compile does not wrap the optimizer (measured: same updates as fit)",
        ),
        clean(
            """
            import tensorflow as tf
            import tf_keras

            tf_keras.mixed_precision.set_global_policy("mixed_float16")
            opt = tf_keras.mixed_precision.LossScaleOptimizer(tf_keras.optimizers.Adam())


            class Custom(tf_keras.Model):
                def train_step(self, data):
                    x, y = data
                    with tf.GradientTape() as tape:
                        loss = self.compiled_loss(y, self(x, training=True))
                        scaled = self.optimizer.get_scaled_loss(loss)
                    grads = self.optimizer.get_unscaled_gradients(tape.gradient(scaled, self.trainable_variables))
                    self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
                    return {"loss": loss}


            def step(model, x):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(model(x))
                grads = tape.gradient(loss, model.trainable_variables)
                opt.apply_gradients(zip(grads, model.trainable_variables))
            """,
            note="tf_keras: its LossScaleOptimizer does not divide in apply_gradients (TFG503's business)",
        ),
    ]


def _targets(small: cst.CSTNode):
    if isinstance(small, cst.Assign):
        names = set()
        for t in small.targets:
            names |= bindings.target_names(t.target)
        return names
    return bindings.target_names(small.target)
