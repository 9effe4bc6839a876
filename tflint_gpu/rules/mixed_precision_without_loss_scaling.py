from __future__ import annotations

import libcst as cst

from tflint_gpu.semantic.precision import LOSS_SCALE, MIXED_FLOAT16, PLAIN
from tflint_gpu.rules.base import Rule, clean, flagged


class MixedPrecisionWithoutLossScaling(Rule):
    """A custom training step under `mixed_float16` with no loss scaling: small float16 gradients underflow to zero.

    ## What it does
    In a module that sets the `mixed_float16` global policy, finds a
    GradientTape training step (`tape.gradient(...)` reaching
    `<optimizer>.apply_gradients(...)` in the same function) that scales no
    loss (no `.scale_loss(...)`/`.get_scaled_loss(...)` call in its function)
    when its optimizer is
    * a name bound to a plain Keras optimizer, `keras.optimizers.Adam(...)`
      and the like (Keras 3 or tf_keras): nothing scales the loss; or
    * a tf_keras `LossScaleOptimizer`: `self.optimizer` in a tf_keras model
      class (`compile` wraps it under `mixed_float16`), `model.optimizer` of
      a tf_keras model compiled in the module, or a name bound to
      `tf_keras.mixed_precision.LossScaleOptimizer(...)`: its
      `apply_gradients` does not unscale, so the step runs without scaling
      (tf_keras warns at run time).

    Not flagged: `mixed_bfloat16` (bfloat16 has float32's range: no scaling
    needed); a Keras 3 `LossScaleOptimizer` (TFG502: there the updates are
    too small, not underflowing); `optimizer.minimize(loss, vars, tape=tape)`
    (tf_keras's `LossScaleOptimizer.minimize` scales itself); an optimizer the
    engine cannot trace to one of the forms above (a parameter, an attribute).

    ## Why is this bad?
    With float16 activations, gradients below 6e-8 (float16's smallest
    subnormal) flush to zero on the way back through the layers, and those
    below 6e-5 lose precision. Loss scaling multiplies the loss (by 2**15
    initially) before differentiating and divides the float32 gradients
    afterwards; `fit` does it for you, a custom loop must use a
    `LossScaleOptimizer` and scale the loss: in Keras 3 `opt =
    keras.optimizers.LossScaleOptimizer(opt)`, `scaled = opt.scale_loss(loss)`
    inside the tape, then `opt.apply_gradients` (it unscales); in tf_keras
    `opt.get_scaled_loss(loss)` and `opt.get_unscaled_gradients(grads)`.
    How much is lost depends on the size of the gradients: nothing for a
    freshly initialised model with a loss near 1, a third of the gradients
    once they are near 1e-7 (a well-fit model, a mean over a large batch).

    ## Example
    ```python
    keras.mixed_precision.set_global_policy("mixed_float16")
    optimizer = keras.optimizers.Adam()

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
    ```

    Use instead:
    ```python
    optimizer = keras.optimizers.LossScaleOptimizer(keras.optimizers.Adam())

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
            scaled_loss = optimizer.scale_loss(loss)
        grads = tape.gradient(scaled_loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
    ```

    ## Fix safety
    No fix: it takes two coordinated edits in different places (wrap the
    optimizer where it is made, scale the loss in the step; in tf_keras also
    unscale the gradients), and wrapping an optimizer that other code also
    uses would divide that code's updates by the scale (TFG502).

    ## Measured effect
    TF 2.21, Keras 3.15, CPU: a 32-64-64-1 MLP under `mixed_float16`, batch
    256, MSE loss times a factor, gradients of the first kernel against a
    float32 model. Factor 1 (loss ~1): no gradient lost, 1.7% max relative
    error with or without scaling. Factor 1e-3 (gradients ~6e-5): 0.2% of the
    gradients flushed to zero without scaling, none with it. Factor 1e-5
    (gradients ~6e-7): 35.6% flushed to zero and 83% max relative error
    without scaling; none and 1.7% with a `LossScaleOptimizer` and
    `scale_loss`. tf_keras 2.21: a custom `train_step` with the compiled
    `LossScaleOptimizer` and no `get_scaled_loss` gives the same updates as
    unscaled float16 (and logs a warning). `examples/TFG503` (a nearly fit
    32-64-64-1 MLP, residuals 1e-3, batch 1024; `tflint-gpu verify --rule
    TFG503 --device cpu --size small`): fixes-behaviour; the share of the
    first kernel's gradients more than a tenth off their float32 values
    (`gradient_error` in the measurement below) falls from about half
    without scaling to what float16's forward rounding leaves with it. With
    residuals of 1e-4 instead (measured once by editing the pair): 91.8%
    against 12.3%, and 4.8% flushed to zero.
    """

    code = "TFG503"
    name = "mixed-precision-without-loss-scaling"
    message = "custom training step under mixed_float16 without loss scaling: small gradients underflow"
    needs = (("mixed_float16",), ("GradientTape",), ("apply_gradients",))

    def visit_With(self, node: cst.With, ctx) -> None:
        step = ctx.eager.training_step(node, ctx.scope)
        if step is None or step.gradient is None:
            return
        precision = ctx.precision
        if not precision.sets(MIXED_FLOAT16) or precision.loss_scaled(step.scope):
            return
        optimizer = step.optimizer
        if optimizer is None:
            return  # a hand-written update: no optimizer to wrap
        kind = precision.optimizer_kind(optimizer, step.where)
        spelled = cst.Module([]).code_for_node(optimizer)
        if kind is not None and kind[0] == PLAIN:
            message = (f"`{spelled}` is not a LossScaleOptimizer under mixed_float16: "
                       "small float16 gradients underflow to zero")
        elif kind == (LOSS_SCALE, "tf_keras"):
            message = (f"tf_keras `{spelled}` gets gradients of an unscaled loss: "
                       "use get_scaled_loss/get_unscaled_gradients")
        else:
            return
        ctx.report(step.update, message)

    cases = [
        flagged(
            """
            import keras
            import tensorflow as tf

            keras.mixed_precision.set_global_policy("mixed_float16")
            model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1, dtype="float32")])
            optimizer = keras.optimizers.Adam(1e-3)


            @tf.function
            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
                return loss
            """,
            at=[(14, 5, "`optimizer` is not a LossScaleOptimizer under mixed_float16")],
            note="the canonical custom loop with a plain optimizer",
        ),
        flagged(
            """
            import tensorflow as tf
            import tf_keras

            tf_keras.mixed_precision.set_global_policy("mixed_float16")


            class Custom(tf_keras.Model):
                def train_step(self, data):
                    x, y = data
                    with tf.GradientTape() as tape:
                        loss = self.compiled_loss(y, self(x, training=True))
                    grads = tape.gradient(loss, self.trainable_variables)
                    self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
                    return {"loss": loss}
            """,
            at=[(13, 9, "tf_keras `self.optimizer` gets gradients of an unscaled loss")],
            note="tf_keras custom train_step: compile's LossScaleOptimizer, no get_scaled_loss",
        ),
        clean(
            """
            import keras
            import tensorflow as tf

            keras.mixed_precision.set_global_policy("mixed_float16")
            optimizer = keras.optimizers.LossScaleOptimizer(keras.optimizers.Adam())
            plain = keras.optimizers.Adam()


            @tf.function
            def train_step(model, x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x) - y))
                    scaled_loss = optimizer.scale_loss(loss)
                grads = tape.gradient(scaled_loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))


            def guarded(model, x, opt):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(model(x))
                    scaled = opt.scale_loss(loss) if hasattr(opt, "scale_loss") else loss
                grads = tape.gradient(scaled, model.trainable_variables)
                plain.apply_gradients(zip(grads, model.trainable_variables))


            def unknown(model, x, opt):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(model(x))
                grads = tape.gradient(loss, model.trainable_variables)
                opt.apply_gradients(zip(grads, model.trainable_variables))
            """,
            note="a LossScaleOptimizer and scale_loss; a hasattr guard; an optimizer passed in (unknown)",
        ),
        clean(
            """
            import tensorflow as tf

            tf.keras.mixed_precision.set_global_policy("mixed_bfloat16")
            optimizer = tf.keras.optimizers.Adam()


            @tf.function
            def train_step(model, x):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(model(x))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
            """,
            note="mixed_bfloat16 needs no loss scaling",
        ),
        clean(
            """
            import tensorflow as tf
            import tf_keras

            tf_keras.mixed_precision.set_global_policy("mixed_float16")
            opt = tf_keras.mixed_precision.LossScaleOptimizer(tf_keras.optimizers.SGD())


            def step(model, x):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(model(x))
                opt.minimize(loss, model.trainable_variables, tape=tape)
            """,
            note="tf_keras LossScaleOptimizer.minimize scales and unscales itself",
        ),
    ]
