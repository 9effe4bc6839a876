from __future__ import annotations

import libcst as cst

from tflint_gpu.semantic.migration import KERAS3
from tflint_gpu.rules.base import Rule, clean, flagged

# The calls that switch TensorFlow to graph (TF1) mode for the whole process.
_GRAPH_MODE = frozenset({"tensorflow.compat.v1.disable_v2_behavior", "tensorflow.compat.v1.disable_eager_execution"})


class Keras3GraphMode(Rule):
    """`tf.compat.v1.disable_v2_behavior()` in Keras 3 code: `fit`, `predict` and `save` then raise.

    ## What it does
    Finds `tf.compat.v1.disable_v2_behavior()` and
    `tf.compat.v1.disable_eager_execution()` (also spelled through `import
    tensorflow.compat.v1 as tf`) in a file that uses Keras 3 (`keras`, or
    `tf.keras` / `tf.compat.v1.keras` under TensorFlow 2.16+, which are Keras
    3 there) and calls `fit`, `evaluate`, `predict` (`*_generator`), `save`
    or `save_weights` on what may be a Keras model. Not reported: a
    TensorFlow 1 script that uses no Keras, or only calls Keras layers on
    graph tensors and runs them in a `Session` (that still works, as does
    `train_on_batch`), tf_keras code, and a branch that never runs under
    Keras 3.

    ## Why is this bad?
    Keras 3 runs eagerly only. Measured under TensorFlow 2.21 with Keras 3.15,
    after either call: a `Sequential` model is built and can be called on a
    graph tensor (a `Conv2D` so called computes in a `Session`), but `fit`,
    `evaluate` and `predict` raise
    `RuntimeError: tf.data.Dataset only supports Python-style iteration in
    eager mode or within tf.function.` and `model.save("m.keras")` raises
    `NotImplementedError: numpy() is only available when eager execution is
    enabled.` (`save_weights` too). Under tf_keras 2.21 the same model trains in graph mode (the
    Keras 2 code this was written for).

    ## Example
    ```python
    import tensorflow as tf
    tf.compat.v1.disable_v2_behavior()
    model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    model.fit(x, y)
    ```

    Use instead (drop the call: Keras 3 trains in `tf.function`s of its own):
    ```python
    import tensorflow as tf
    model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    model.fit(x, y)
    ```
    or keep Keras 2: install `tf_keras` and set `TF_USE_LEGACY_KERAS=1`
    before TensorFlow is imported.

    ## Fix safety
    No fix: dropping the call changes how every `tf.compat.v1` graph, session
    and placeholder in the program runs; that port is by hand.

    ## Measured effect
    TensorFlow 2.21, Keras 3.15, CPU: the errors above, at the first `fit`,
    `predict` or `save`. examples/TFG926 (`tflint-gpu verify --rule
    TFG926`): fixes-error (the hand port drops the call).
    """

    code = "TFG926"
    name = "keras3-graph-mode"
    message = "Keras 3 runs eagerly only: after this call fit, predict and save raise"
    needs = (("disable_v2_behavior", "disable_eager_execution"),)
    migration = True

    def visit_Call(self, node: cst.Call, ctx) -> None:
        func = node.func
        if not isinstance(func, (cst.Attribute, cst.Name)):
            return
        short = func.attr.value if isinstance(func, cst.Attribute) else func.value
        if short not in ("disable_v2_behavior", "disable_eager_execution"):
            return
        if ctx.resolver.raw_qualname(func, ctx.scope) not in _GRAPH_MODE or ctx.keras_internals:
            return
        migration = ctx.migration
        if KERAS3 not in migration.module_flavours() or migration.legacy_env or migration.guarded(node, ctx.scope):
            return
        calls = ctx.eager_only.calls()
        if not calls:
            return  # layers called on graph tensors and run in a Session still work
        first, _ = calls[0]
        ctx.report(node, f"Keras 3 runs eagerly only: after `{short}()`, `fit`/`evaluate`/`predict` raise "
                         f"RuntimeError (tf.data iteration needs eager mode) and `save` NotImplementedError (this "
                         f"module calls `{first.func.attr.value}`); drop the call (and port the `tf.compat.v1` "
                         f"graph code) or stay on Keras 2 (`tf_keras` with `TF_USE_LEGACY_KERAS=1`)")

    cases = [
        flagged(
            """
            import numpy as np
            import tensorflow as tf

            tf.compat.v1.disable_v2_behavior()
            model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
            model.compile("sgd", "mse")
            model.fit(np.ones((8, 2), "float32"), np.zeros((8, 1), "float32"), verbose=0)
            """,
            at=[(4, 1, "Keras 3 runs eagerly only: after `disable_v2_behavior()`, `fit`/`evaluate`/`predict` "
                       "raise RuntimeError (tf.data iteration needs eager mode) and `save` NotImplementedError (this "
                       "module calls `fit`)")],
            note="the TF 1 switch kept from a Keras 2 project",
        ),
        flagged(
            """
            import tensorflow.compat.v1 as tf
            from tensorflow.compat.v1 import disable_eager_execution

            tf.disable_v2_behavior()
            disable_eager_execution()
            net = tf.keras.Sequential([tf.keras.layers.Dense(3)])

            def run(x):
                return net.predict(x)
            """,
            at=[(4, 1, "Keras 3 runs eagerly only: after `disable_v2_behavior()`"),
                (5, 1, "Keras 3 runs eagerly only: after `disable_eager_execution()`")],
            note="through the compat.v1 module and an imported name; tf.compat.v1.keras is Keras 3 too",
        ),
        clean(
            """
            import tensorflow.compat.v1 as tf

            tf.disable_v2_behavior()
            x = tf.placeholder(tf.float32, [None, 2])
            w = tf.Variable(tf.zeros([2, 1]))
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
            """,
            note="a TensorFlow 1 script without Keras: its graph code runs under TF 2.21",
        ),
        clean(
            """
            import tensorflow.compat.v1 as tf

            tf.disable_eager_execution()
            conv = tf.keras.layers.Conv2D(filters=4, kernel_size=2, use_bias=False)
            y = conv(tf.ones((1, 4, 4, 3)))
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                out = sess.run(y)
            """,
            note="a Keras 3 layer called on a graph tensor and run in a Session works (google/automl "
                 "efficientdet/utils_test.py)",
        ),
        clean(
            """
            import tensorflow as tf
            import tf_keras

            tf.compat.v1.disable_eager_execution()
            model = tf_keras.Sequential([tf_keras.layers.Dense(1)])
            """,
            note="tf_keras (Keras 2) trains in graph mode",
        ),
    ]
