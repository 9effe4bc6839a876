from __future__ import annotations

import libcst as cst

from tflint_gpu.semantic.testcode import in_test_function
from tflint_gpu.rules.base import Rule, clean, flagged

_CODE = cst.Module(body=[]).code_for_node


class GradientOfUnrecordedModel(Rule):
    """`tape.gradient(loss, model.trainable_variables)` where the tape's block never runs `model`.

    ## What it does
    Finds `tape.gradient(target, M.trainable_variables)` (or
    `trainable_weights`, directly or through a name) whose
    `with tf.GradientTape() as tape:` block cannot run `M`: `M` is never read
    in the block, nor in the same-module functions and methods it calls
    (three calls deep), and every other object it calls is a fresh Keras
    layer, loss or metric, a `Sequential` of fresh layers, or an instance of
    a class of the module, built without `M` (`semantic.tape_models`). Two
    common shapes:
    * a GAN's generator output made before the tape, `fake = G(z)`, then
      `with tape: loss = loss_fn(D(fake))` and the generator's gradients;
    * a loss computed from the wrong model, `gen_loss = loss_fn(D(real))`.

    Not reported: a block that reads `M` anywhere, hands `self` on whole
    (`helper(self)`), or calls a method of `self` the module does not define
    (Keras's `compute_loss` may run the model), a functional
    `keras.Model(inputs, outputs)` or any object the engine cannot follow (it
    may share `M`'s layers), a tape whose name is bound more than once on
    the way, test code.

    ## Why is this bad?
    A `GradientTape` records the operations run inside its block; ops run
    before it (or the ops of another model) leave no trace from `M`'s
    variables to the target, so `tape.gradient` returns `None` for every one
    of them. Keras's optimizers then raise at `apply_gradients` (TensorFlow
    2.21 with Keras 3.15 and with tf_keras 2.21: `ValueError: No gradients
    provided for any variable`); code that filters `None` gradients out, or a
    legacy optimizer, trains nothing and says nothing.

    ## Example
    ```python
    fake = generator(noise)
    with tf.GradientTape() as tape:
        fake_logits = discriminator(fake)
        gen_loss = loss_fn(tf.ones_like(fake_logits), fake_logits)
    grads = tape.gradient(gen_loss, generator.trainable_variables)
    ```

    Use instead:
    ```python
    with tf.GradientTape() as tape:
        fake = generator(noise)
        fake_logits = discriminator(fake)
        gen_loss = loss_fn(tf.ones_like(fake_logits), fake_logits)
    grads = tape.gradient(gen_loss, generator.trainable_variables)
    ```

    ## Fix safety
    No fix: moving the model's call into the block, or computing the loss
    from the right model, is a change of the training step the author has
    to make.

    ## Measured effect
    TensorFlow 2.21 (CPU), a `Dense` generator's output computed before the
    tape and a `Dense` discriminator inside it: `tape.gradient` gave `[None,
    None]`; `Adam().apply_gradients` raised `ValueError: No gradients provided
    for any variable` under Keras 3.15 and under tf_keras 2.21.
    `examples/TFG616`, `tflint-gpu verify --rule TFG616 --device cpu --size
    small`: fixes-error.
    """

    code = "TFG616"
    name = "gradient-of-unrecorded-model"
    message = "Gradients for a model the tape's block never runs: all None"
    needs = (("GradientTape",), ("trainable_variables", "trainable_weights"))

    def visit_Call(self, node: cst.Call, ctx) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute) or func.attr.value != "gradient":
            return
        if in_test_function(ctx.scope) or ctx.in_test_module:
            return
        found = ctx.tape_models.unrecorded(node, ctx.scope)
        if found is None:
            return
        model = _CODE(found.model)
        ctx.report(node, f"The tape's block never runs `{model}`: every gradient of `{model}.trainable_variables` "
                         f"is None (made before the tape, or the loss does not use it); `apply_gradients` raises "
                         f"ValueError")

    cases = [
        flagged(
            """
            import tensorflow as tf

            class Generator(tf.keras.layers.Layer):
                def __init__(self):
                    super().__init__()
                    self.dense = tf.keras.layers.Dense(4)

                def call(self, x):
                    return self.dense(x)

            class Gan(tf.keras.Model):
                def __init__(self):
                    super().__init__()
                    self.G = Generator()
                    self.D = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    self.bce = tf.keras.losses.BinaryCrossentropy(from_logits=True)

                def gen_loss(self, logits):
                    return self.bce(tf.ones_like(logits), logits)

                def train_step(self, real):
                    fake = self.G(tf.random.normal(tf.shape(real)))
                    with tf.GradientTape() as tape:
                        d_loss = self.bce(tf.ones_like(real[:, :1]), self.D(real)) + self.bce(
                            tf.zeros_like(real[:, :1]), self.D(fake))
                    grads = tape.gradient(d_loss, self.D.trainable_variables)
                    self.optimizer.apply_gradients(zip(grads, self.D.trainable_variables))
                    with tf.GradientTape() as tape:
                        g_loss = self.gen_loss(self.D(fake))
                    grads = tape.gradient(g_loss, self.G.trainable_variables)
                    self.optimizer.apply_gradients(zip(grads, self.G.trainable_variables))
                    return {"d": d_loss, "g": g_loss}
            """,
            at=[(30, 17, "The tape's block never runs `self.G`: every gradient of `self.G.trainable_variables` "
                         "is None")],
            note="the generator's output made before both tapes: the discriminator's gradients are fine, the "
                 "generator's are all None; a method of the module and fresh Keras objects in the block",
        ),
        flagged(
            """
            import tensorflow as tf

            generator = tf.keras.Sequential([tf.keras.layers.Dense(4)])
            discriminator = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            optimizer = tf.keras.optimizers.Adam()

            def step(real, noise):
                with tf.GradientTape() as tape:
                    loss = -tf.reduce_mean(discriminator(real))
                variables = generator.trainable_weights
                optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
            """,
            at=[(11, 35, "The tape's block never runs `generator`")],
            note="the generator's loss computed on real data; the variables through a name",
        ),
        clean(
            """
            import tensorflow as tf

            generator = tf.keras.Sequential([tf.keras.layers.Dense(4)])
            discriminator = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            gan = tf.keras.Sequential([generator, discriminator])
            encoder = tf.keras.Sequential([tf.keras.layers.Dense(2)])
            inputs = tf.keras.Input((4,))
            autoencoder = tf.keras.Model(inputs, tf.keras.layers.Dense(4)(encoder(inputs)))

            def step(real, noise, loss_fn):
                with tf.GradientTape() as tape:
                    loss = -tf.reduce_mean(discriminator(generator(noise)))
                tape.gradient(loss, generator.trainable_variables)
                with tf.GradientTape() as tape:
                    loss = -tf.reduce_mean(gan(noise))
                tape.gradient(loss, generator.trainable_variables)
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(autoencoder(real) - real))
                tape.gradient(loss, encoder.trainable_variables)
                with tf.GradientTape() as tape:
                    loss = loss_fn(real)
                tape.gradient(loss, generator.trainable_variables)

            class Model(tf.keras.Model):
                def train_step(self, data):
                    x, y = data
                    with tf.GradientTape() as tape:
                        loss = self.compute_loss(x=x, y=y, y_pred=self.head(x))
                    self.optimizer.apply_gradients(zip(tape.gradient(loss, self.body.trainable_variables),
                                                       self.body.trainable_variables))
            """,
            note="the model run in the block; a Sequential holding it; a functional model sharing its layers; "
                 "an unknown loss function; a Keras method of self that may run it",
        ),
    ]
