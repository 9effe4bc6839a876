from __future__ import annotations

import libcst as cst

from tflint_gpu.semantic.api import positional_args
from tflint_gpu.semantic.positional_mode import positional_mode
from tflint_gpu.rules.base import FIXES_ERROR, Fix, Rule, Safety, clean, flagged


class Keras3PositionalTraining(Rule):
    """`self.dropout(x, training)`: a layer's mode passed by position, which Keras 3 refuses.

    ## What it does
    Finds calls of a Keras layer or model whose second argument, given by
    position, is a mode: `True`/`False`, or the `training` parameter of the
    enclosing `call` (a parameter named `training`/`is_training` or defaulting
    to a bool). The callee is an instance of a same-module Keras class, or of
    a Keras class whose `call` takes `training` second (`Dropout`,
    `BatchNormalization`, `GaussianNoise`, the spatial dropouts, `Sequential`,
    a functional `Model`...: derived from both Keras flavours by
    `scripts/derive_call_training.py`). Not reported: `training=` by keyword,
    `None` by position (Keras 3 accepts it), tf_keras objects.

    ## Why is this bad?
    Keras 2 bound the second positional argument of a layer call to the second
    parameter of its `call`, so `self.dropout(x, training)` switched dropout
    on in training. Measured under TensorFlow 2.21 with Keras 3.15: a Python
    bool passed by position raises `ValueError: Only input tensors may be
    passed as positional arguments` (a `TypeError` from a functional model and
    the preprocessing layers); and Keras 3's `fit` hands `call` a Python
    `training=True`, so the line fails at the first training step.

    ## Example
    ```python
    class Block(keras.layers.Layer):
        def call(self, x, training=None):
            return self.dropout(self.dense(x), training)
    ```

    Use instead:
    ```python
    class Block(keras.layers.Layer):
        def call(self, x, training=None):
            return self.dropout(self.dense(x), training=training)
    ```

    ## Fix safety
    Safe: the argument is passed by the keyword of the parameter Keras 2 bound
    it to (`training` for Keras's layers; for a same-module class, the name of
    its `call`'s second parameter), so the layer computes what it computed
    under Keras 2. No fix when more positional arguments follow, or when the
    callee's `call` has no second parameter. The tests run the original under
    tf_keras and the fixed code under Keras 3 and compare the outputs.

    ## Measured effect
    TensorFlow 2.21, Keras 3.15, CPU: the ValueError above, at the first call
    with a bool; tf_keras 2.21 ran the same line. examples/TFG924 (`tflint-gpu
    verify --rule TFG924`): fixes-error, `ValueError` before, the model trains
    after.
    """

    code = "TFG924"
    name = "keras3-positional-training"
    message = "Keras 3 refuses a layer's mode passed by position"
    needs = (("keras",),)
    fix_safety = Safety.SAFE
    migration = True

    def visit_Call(self, node: cst.Call, ctx) -> None:
        if len(node.args) < 2 or ctx.migration.guarded(node, ctx.scope):
            return
        found = positional_mode(node, ctx.scope, ctx.migration, ctx.training_layers)
        if found is None:
            return
        arg, keyword = found
        fix = None
        if keyword is not None and positional_args(node)[-1] is arg:  # a keyword may not precede a positional
            new = arg.with_changes(keyword=cst.Name(keyword), equal=cst.AssignEqual(
                whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")))
            fix = Fix(f"Pass it as `{keyword}=`", Safety.SAFE, {arg: new})
        how = f"pass `{keyword}=` by keyword" if keyword else "pass the mode by keyword"
        ctx.report(arg.value, f"Keras 3 refuses a mode passed by position (ValueError: only input tensors may be "
                              f"passed as positional arguments): {how}", fix)

    cases = [
        flagged(
            """
            import numpy as np
            import tensorflow as tf


            class Block(tf.keras.layers.Layer):
                def __init__(self):
                    super().__init__()
                    self.dense = tf.keras.layers.Dense(3, kernel_initializer="ones")
                    self.drop = tf.keras.layers.Dropout(0.5)
                    self.norm = tf.keras.layers.BatchNormalization()

                def call(self, x, training=None):
                    h = self.drop(self.dense(x), training)
                    return self.norm(h, False)


            class Net(tf.keras.Model):
                def __init__(self):
                    super().__init__()
                    self.block = Block()

                def call(self, x, training=False):
                    return self.block(x, training)


            net = Net()
            """,
            at=[(13, 38, "Keras 3 refuses a mode passed by position"),
                (14, 29, "Keras 3 refuses a mode passed by position"),
                (23, 30, "Keras 3 refuses a mode passed by position")],
            fixed="""
            import numpy as np
            import tensorflow as tf


            class Block(tf.keras.layers.Layer):
                def __init__(self):
                    super().__init__()
                    self.dense = tf.keras.layers.Dense(3, kernel_initializer="ones")
                    self.drop = tf.keras.layers.Dropout(0.5)
                    self.norm = tf.keras.layers.BatchNormalization()

                def call(self, x, training=None):
                    h = self.drop(self.dense(x), training=training)
                    return self.norm(h, training=False)


            class Net(tf.keras.Model):
                def __init__(self):
                    super().__init__()
                    self.block = Block()

                def call(self, x, training=False):
                    return self.block(x, training=training)


            net = Net()
            """,
            run="""
            x = np.arange(12, dtype=np.float32).reshape(4, 3)
            inference = net(x, training=False)
            """,
            effect=FIXES_ERROR,
            keras2_before=True,
            note="a Keras layer, a same-module layer whose call takes training second, a literal; "
                 "what tf_keras computed, Keras 3 computes",
        ),
        clean(
            """
            import tensorflow as tf
            import tf_keras


            class Block(tf.keras.layers.Layer):
                def __init__(self):
                    super().__init__()
                    self.drop = tf.keras.layers.Dropout(0.5)
                    self.old = tf_keras.layers.Dropout(0.5)
                    self.attention = tf.keras.layers.MultiHeadAttention(2, 4)

                def call(self, x, training=None):
                    a = self.drop(x, training=training)
                    b = self.drop(x, None)
                    c = self.old(x, training)
                    d = self.attention(x, x)
                    mask = x > 0
                    e = self.drop(x, mask)
                    return a + b + c + d + e
            """,
            note="by keyword; None by position; a tf_keras layer; a second tensor; a name that is no mode",
        ),
    ]
