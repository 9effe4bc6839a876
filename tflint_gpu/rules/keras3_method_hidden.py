from __future__ import annotations

import libcst as cst

from tflint_gpu.semantic.keras_hidden import hidden_names
from tflint_gpu.semantic.migration import KERAS3, is_model_class
from tflint_gpu.rules.base import Rule, clean, flagged


class Keras3MethodHidden(Rule):
    """`def loss(self, ...)` in a Keras 3 model: a method the model's own attribute hides.

    ## What it does
    Finds methods of a Keras 3 `Model` or `Layer` subclass whose name is an
    instance attribute Keras 3's constructor assigns: `loss`, `compiled`,
    `steps_per_execution`, `autocast`, `supports_jit`, `name`... for a model;
    `autocast`, `supports_jit`, `name`... for a layer (the names are derived by
    `scripts/derive_shadowed_methods.py`, which defines each method in a
    subclass of both flavours and reads it back from an instance). Not
    reported: tf_keras classes, other Keras classes, decorated methods
    (a property), names only a compiled model assigns.

    ## Why is this bad?
    An instance attribute hides a method of the same name. Keras 3's
    `Model.__init__` sets `self.loss = None`, so a model that defines its own
    `def loss(self, x, y)` and calls `self.loss(x, y)` in its training step
    raises `TypeError: 'NoneType' object is not callable` under TensorFlow
    2.21 with Keras 3.15. tf_keras 2.21 assigns `loss` only in `compile`, and
    a model trained by its own loop (never compiled) kept its method.

    ## Example
    ```python
    class Word2Vec(keras.Model):
        def loss(self, x, y):
            return tf.reduce_mean(tf.nn.nce_loss(...))

        def step(self, x, y):
            with tf.GradientTape() as tape:
                loss = self.loss(x, y)
    ```

    Use instead: rename the method (`nce_loss`) and its callers.

    ## Fix safety
    No fix: the method's callers may be in other modules.

    ## Measured effect
    TensorFlow 2.21, Keras 3.15, CPU: the TypeError above at the first call
    of the method; tf_keras 2.21 ran it. examples/TFG925 (`tflint-gpu verify
    --rule TFG925`): fixes-error, `TypeError` before, the renamed method
    trains after.
    """

    code = "TFG925"
    name = "keras3-method-hidden"
    message = "Keras 3's constructor hides this method with an attribute"
    needs = (("def ",),)
    migration = True

    def visit_FunctionDef(self, node: cst.FunctionDef, ctx) -> None:
        function = ctx.model.scope_of_node.get(node)
        cls = function.parent if function is not None else None
        if cls is None or cls.kind != "class" or not isinstance(cls.node, cst.ClassDef):
            return
        name = node.name.value
        tables = hidden_names()
        if name not in tables["model"] and name not in tables["layer"]:
            return
        if ctx.graphs.keras_flavour(cls) != KERAS3:
            return
        base = ctx.migration.class_base(cls)
        if base is None:
            return
        if is_model_class(base):
            kind = "model"
        elif base.startswith("keras.layers."):
            kind = "layer"
        else:
            return  # another Keras class (a dtype policy, a saveable): its own attributes
        if name not in tables[kind] or node.decorators:
            return  # a property or a wrapped method is another matter
        ctx.report(node.name, f"Keras 3's `{base.rsplit('.', 1)[-1]}.__init__` sets `self.{name}`, which hides "
                              f"this method (`self.{name}(...)` raises TypeError): rename it")

    cases = [
        flagged(
            """
            import tensorflow as tf


            class CBOW(tf.keras.Model):
                def __init__(self, vocab, dim):
                    super().__init__()
                    self.embeddings = tf.keras.layers.Embedding(vocab, dim)

                def call(self, x):
                    return tf.reduce_mean(self.embeddings(x), axis=1)

                def loss(self, x, y):
                    return tf.reduce_mean(tf.square(self.call(x) - y))


            class Scale(tf.keras.layers.Layer):
                def autocast(self):
                    return False
            """,
            at=[(12, 9, "Keras 3's `Model.__init__` sets `self.loss`, which hides this method"),
                (17, 9, "Keras 3's `Layer.__init__` sets `self.autocast`")],
        ),
        clean(
            """
            import tensorflow as tf
            import tf_keras


            class Old(tf_keras.Model):
                def loss(self, x, y):
                    return 0.0


            class Scale(tf.keras.layers.Layer):
                def loss(self, x):
                    return 0.0


            class Plain:
                def loss(self, x, y):
                    return 0.0


            class Named(tf.keras.layers.Layer):
                @property
                def name(self):
                    return "named"


            class Policy(tf.keras.DTypePolicy):
                def name(self):
                    return "policy"


            def loss(x, y):
                return 0.0
            """,
            note="tf_keras; `loss` on a layer (Keras 3's Layer sets none); not Keras; a property; a Keras class "
                 "that is no layer; a function",
        ),
    ]
