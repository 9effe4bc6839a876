from __future__ import annotations

import libcst as cst

from tflint_gpu.semantic.migration import KERAS3, is_model_class
from tflint_gpu.rules.base import FIXES_ERROR, Fix, Rule, Safety, clean, flagged

# What a Keras 3 model refuses while it is not built (ValueError: "... has not yet been built").
_NEEDS_BUILT = ("save_weights", "save", "summary")


class Keras3ModelNeverBuilt(Rule):
    """`self.call(x)` in a model's own training step: Keras 3 never marks the model built.

    ## What it does
    Finds `self.call(...)` in a method (not `call` itself) of a Keras 3
    `Model` subclass of the file when nothing in the file calls the model
    itself (`self(x)`, `model(x)`), the class has no `build`, and the file
    saves or summarizes an instance (`model.save_weights(...)`, `save`,
    `summary`). Not reported: tf_keras classes, a model the file calls, a
    class with its own `build`, a model the file never saves.

    ## Why is this bad?
    Keras 3 marks a subclassed model built when it is called through
    `__call__`; calling its `call` method directly runs the layers (they
    make their weights, training works) but never marks the model itself.
    Measured under TensorFlow 2.21 / Keras 3.15: a model trained through
    `self.call(x, y, training=True)` in its own `step` trains (the same
    losses as tf_keras 2.21), then `model.save_weights("m.weights.h5")`
    raises `ValueError: You are saving a model that has not yet been built`.
    tf_keras saved it. Real code (MorvanZhou/NLP-Tutorials: the Transformer,
    GPT, BERT and ELMo models) trains this way and saves at the end.

    ## Example
    ```python
    class GPT(keras.Model):
        def step(self, seqs, segs):
            with tf.GradientTape() as tape:
                logits = self.call(seqs, segs, training=True)
                ...

    model.save_weights("gpt.weights.h5")
    ```

    Use instead:
    ```python
    class GPT(keras.Model):
        def step(self, seqs, segs):
            with tf.GradientTape() as tape:
                logits = self(seqs, segs, training=True)
                ...
    ```

    ## Fix safety
    Unsafe: `self(...)` runs what `self.call(...)` ran, through Keras's
    `__call__`, which also casts floating inputs to the model's compute dtype
    (float64 NumPy arrays become float32, as a model called the usual way
    gets them), passes masks along, and marks the model built. Integer
    token ids and float32 tensors reach `call` unchanged (measured: the same
    losses, the same weights saved).

    ## Measured effect
    TensorFlow 2.21, CPU: an Embedding + Dense model trained three steps
    through its own `step`: losses 1.6003, 1.4691, 1.3470 under tf_keras
    2.21 with `self.call` and under Keras 3.15 with either spelling;
    `save_weights` raises under Keras 3 with `self.call`, and saves with
    `self(...)`. The fix case runs the original under tf_keras and the fix
    under Keras 3: identical values. examples/TFG929 (`tflint-gpu verify
    --rule TFG929`): fixes-error.
    """

    code = "TFG929"
    name = "keras3-model-never-built"
    message = "Keras 3 marks a model built only when it is called: `self.call(...)` never does"
    needs = (("self.call(",),)
    fix_safety = Safety.UNSAFE
    migration = True

    def visit_Call(self, node: cst.Call, ctx) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "call" and isinstance(func.value, cst.Name)):
            return
        objects = ctx.graphs.objects
        cls = objects.self_class(func.value, ctx.scope)
        method = next((scope for scope in ctx.scope.chain() if scope.enclosing_class is not None), None)
        if cls is None or method is None or method.name == "call":
            return  # `self.call` inside `call` recurses: the model's own call was made by Keras
        if ctx.graphs.keras_flavour(cls) != KERAS3 or not is_model_class(ctx.migration.class_base(cls)):
            return
        family = [cls] + objects.subclasses(cls)
        if any(objects.methods(member, "build") for member in family):
            return
        uses = [objects.instance_uses(member) for member in family]
        if any(use.get(None) for use in uses):
            return  # called through __call__ somewhere: Keras 3 marks it built there
        needed = sorted({name for use in uses for name in _NEEDS_BUILT if use.get(name)})
        if not needed:
            return
        fix = Fix("Call the model itself: `self(...)`", Safety.UNSAFE, {func: func.value})
        ctx.report(node, f"Keras 3 marks a model built only when it is called: through `self.call(...)` it never "
                         f"is, and its `{needed[0]}` raises ValueError (not yet built); call `self(...)`", fix)

    cases = [
        flagged(
            """
            import numpy as np
            import tensorflow as tf


            class Tagger(tf.keras.Model):
                def __init__(self):
                    super().__init__()
                    self.embed = tf.keras.layers.Embedding(10, 4)
                    self.out = tf.keras.layers.Dense(3)
                    self.opt = tf.keras.optimizers.SGD(0.1)

                def call(self, x, y, training=None):
                    return self.out(self.embed(x) + tf.cast(y, tf.float32)[..., None])

                def step(self, x, y):
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean(self.call(x, y, training=True) ** 2)
                    grads = tape.gradient(loss, self.trainable_variables)
                    self.opt.apply_gradients(zip(grads, self.trainable_variables))
                    return loss


            def train(path):
                tf.keras.utils.set_random_seed(0)
                model = Tagger()
                x, y = np.array([[1, 2, 3], [4, 5, 6]]), np.ones((2, 3), "float32")
                model.step(x, y)
                model.save_weights(path)
                again = Tagger()
                again.step(x, y)
                again.load_weights(path)
                return float(np.abs(again.call(x, y).numpy() - model.call(x, y).numpy()).max())
            """,
            fixed="""
            import numpy as np
            import tensorflow as tf


            class Tagger(tf.keras.Model):
                def __init__(self):
                    super().__init__()
                    self.embed = tf.keras.layers.Embedding(10, 4)
                    self.out = tf.keras.layers.Dense(3)
                    self.opt = tf.keras.optimizers.SGD(0.1)

                def call(self, x, y, training=None):
                    return self.out(self.embed(x) + tf.cast(y, tf.float32)[..., None])

                def step(self, x, y):
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean(self(x, y, training=True) ** 2)
                    grads = tape.gradient(loss, self.trainable_variables)
                    self.opt.apply_gradients(zip(grads, self.trainable_variables))
                    return loss


            def train(path):
                tf.keras.utils.set_random_seed(0)
                model = Tagger()
                x, y = np.array([[1, 2, 3], [4, 5, 6]]), np.ones((2, 3), "float32")
                model.step(x, y)
                model.save_weights(path)
                again = Tagger()
                again.step(x, y)
                again.load_weights(path)
                return float(np.abs(again.call(x, y).numpy() - model.call(x, y).numpy()).max())
            """,
            at=[(17, 35, "Keras 3 marks a model built only when it is called: through `self.call(...)` it never "
                         "is, and its `save_weights` raises ValueError (not yet built)")],
            run="""
            import os, tempfile
            gap = train(os.path.join(tempfile.mkdtemp(), "tagger.weights.h5"))
            """,
            effect=FIXES_ERROR,
            keras2_before=True,
            note="trained through its own step, saved, reloaded into a second model: the same predictions (gap "
                 "0.0) under tf_keras before and Keras 3 after",
        ),
        clean(
            """
            import tensorflow as tf
            import tf_keras


            class Called(tf.keras.Model):
                def __init__(self):
                    super().__init__()
                    self.out = tf.keras.layers.Dense(3)

                def call(self, x):
                    return self.out(x)

                def step(self, x):
                    return self.call(x)


            class Built(tf.keras.Model):
                def build(self, shape):
                    self.w = self.add_weight(shape=(shape[-1],))

                def call(self, x):
                    return x * self.w

                def step(self, x):
                    return self.call(x)


            class NeverSaved(tf.keras.Model):
                def call(self, x):
                    return x

                def step(self, x):
                    return self.call(x)


            class Old(tf_keras.Model):
                def call(self, x):
                    return x

                def step(self, x):
                    return self.call(x)


            class Recursive(tf.keras.Model):
                def call(self, x, depth=0):
                    return x if depth else self.call(x, depth + 1)


            called = Called()
            called(tf.ones((1, 2)))
            called.save_weights("called.weights.h5")
            Built().save_weights("built.weights.h5")
            NeverSaved().step(tf.ones((1, 2)))
            Old().save_weights("old.h5")
            Recursive().save_weights("recursive.weights.h5")
            """,
            note="a model the file calls; a class with its own build; a model never saved; tf_keras; `self.call` "
                 "inside `call`",
        ),
    ]
