from __future__ import annotations

from typing import Optional

import libcst as cst

from tflint_gpu.semantic.migration import KERAS3
from tflint_gpu.semantic.api import named_positionals
from tflint_gpu.rules.base import FIXES_ERROR, Fix, Rule, Safety, clean, flagged

# tf_keras's Layer.add_weight(name, shape, dtype, initializer, ...): the positional arguments the fix
# names, which Keras 3 takes by keyword with the same meaning.
_KERAS2_ORDER = ("name", "shape", "dtype", "initializer")


class Keras3AddWeightPositionalName(Rule):
    """`self.add_weight("kernel", shape=...)`: Keras 3 takes the weight's name by keyword only.

    ## What it does
    Finds `add_weight` called with a string as its first positional argument
    on `self` in a method of a Keras 3 layer or model subclass, or on a Keras
    3 layer object: a literal, an f-string, `"{}_pos".format(name)`, `"%s_w" %
    name`, a `+` with a string, `str(...)`, or a name, attribute or parameter
    every value of which the module shows is one (`semantic.literals.is_string`).

    ## Why is this bad?
    Keras 2's signature is `add_weight(name=None, shape=None, dtype=None,
    initializer=None, ...)`, so `add_weight("pos_emb", shape=(1, n, d))` named
    the weight. Keras 3's is `add_weight(shape=None, initializer=None,
    dtype=None, ...)` and it refuses a positional name: measured under TF
    2.21 / Keras 3.15, `ValueError: `name` must be passed as a keyword
    argument. Received: add_weight('w', ...)` when the layer is built; tf_keras
    2.21 builds the same layer.

    ## Example
    ```python
    def build(self, input_shape):
        self.pos_emb = self.add_weight("pos_emb", shape=(1, 65, 64))
    ```

    Use instead:
    ```python
    def build(self, input_shape):
        self.pos_emb = self.add_weight(name="pos_emb", shape=(1, 65, 64))
    ```

    ## Fix safety
    Safe: the positional arguments become the keywords Keras 2 gave them
    (`name`, `shape`, `dtype`, `initializer`, up to four), which mean the same
    to Keras 2 and Keras 3. No fix with more than four positional arguments
    or a `*args`. Not flagged: a first positional argument that is not a
    string, or not known to be one (Keras 3 takes it as the shape: a tuple,
    a parameter no call in the module gives), tf_keras layers, a class's own
    `add_weight`, Keras's own code (`keras.src`: its tests raise it on purpose).

    ## Measured effect
    TF 2.21 CPU: the ValueError above under Keras 3.15; the fixed layer
    builds under both Keras 3 and tf_keras 2.21, with the same weight
    (emla2805/vision-transformer model.py:109 and 112: its first crash after
    the imports).
    """

    code = "TFG916"
    name = "keras3-add-weight-positional-name"
    message = "Keras 3 `add_weight` takes the name by keyword only (ValueError)"
    needs = (("add_weight",),)
    fix_safety = Safety.SAFE
    migration = True

    def visit_Call(self, node: cst.Call, ctx) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute) or func.attr.value != "add_weight" or not node.args:
            return
        first = node.args[0]
        if first.keyword is not None or first.star or not ctx.is_string(first.value):
            return
        if ctx.keras_internals or not self._keras3_layer(func.value, ctx) \
                or ctx.migration.guarded(node, ctx.scope):
            return  # (Keras's own tests make this error on purpose)
        ctx.report(first, "Keras 3 `add_weight` takes the name by keyword only: this raises ValueError "
                          "(`name` must be passed as a keyword argument); pass `name=`", _fix(node))

    @staticmethod
    def _keras3_layer(receiver: cst.BaseExpression, ctx) -> bool:
        objects = ctx.graphs.objects
        cls = objects.self_class(receiver, ctx.scope)
        if cls is not None:
            if objects.defines(cls, "add_weight"):
                return False
            return ctx.keras_flavour(cls) == KERAS3 and not ctx.migration.legacy_env
        return ctx.migration.object_class(receiver, ctx.scope) is not None \
            and ctx.migration.object_flavour(receiver, ctx.scope) == KERAS3


def _fix(node: cst.Call) -> Optional[Fix]:
    replacements = named_positionals(node, _KERAS2_ORDER)
    if replacements is None:
        return None
    return Fix("Pass them by keyword", Safety.SAFE, replacements)


Keras3AddWeightPositionalName.cases = [
    flagged(
        """
        import tensorflow as tf

        class Embed(tf.keras.layers.Layer):
            def build(self, input_shape):
                self.pos_emb = self.add_weight("pos_emb", shape=(1, 4, 2))
                self.cls = self.add_weight("cls", (1, 1, 2), "float32", "zeros")

            def call(self, x):
                return x + self.pos_emb[:, :1] + self.cls

        out = Embed()(tf.ones((1, 1, 2)))
        """,
        fixed="""
        import tensorflow as tf

        class Embed(tf.keras.layers.Layer):
            def build(self, input_shape):
                self.pos_emb = self.add_weight(name="pos_emb", shape=(1, 4, 2))
                self.cls = self.add_weight(name="cls", shape=(1, 1, 2), dtype="float32", initializer="zeros")

            def call(self, x):
                return x + self.pos_emb[:, :1] + self.cls

        out = Embed()(tf.ones((1, 1, 2)))
        """,
        at=[(5, 40, "Keras 3 `add_weight` takes the name by keyword only"),
            (6, 36, "Keras 3 `add_weight` takes the name by keyword only")],
        run="""
        shape = tuple(out.shape)
        """,
        effect=FIXES_ERROR,
        note="emla2805/vision-transformer model.py:109/112 (ValueError under Keras 3, measured)",
    ),
    flagged(
        """
        import tensorflow as tf

        PREFIX = "emb"

        class Embed(tf.keras.layers.Layer):
            def __init__(self, tag="pos", **kwargs):
                super().__init__(**kwargs)
                self.tag = tag
                self.bias_name = "bias"

            def _weight(self, label, shape):
                return self.add_weight(label, shape, "float32", "ones")

            def build(self, input_shape):
                name = "scale"
                self.pos = self.add_weight("{}_pos".format(self.tag), shape=(1, 2), initializer="ones")
                self.cls = self.add_weight(f"{PREFIX}_cls", (1, 2), initializer="zeros")
                self.scale = self.add_weight(name, shape=(1, 2), initializer="ones")
                self.bias = self.add_weight(self.bias_name, shape=(2,), initializer="zeros")
                self.gain = self.add_weight(self.name + "_gain", shape=(2,), initializer="ones")
                self.extra = self._weight("extra", (2,))

            def call(self, x):
                return (x + self.pos + self.cls) * self.scale * self.gain * self.extra + self.bias

        layer = Embed()
        out = layer(tf.ones((1, 2)))
        """,
        fixed="""
        import tensorflow as tf

        PREFIX = "emb"

        class Embed(tf.keras.layers.Layer):
            def __init__(self, tag="pos", **kwargs):
                super().__init__(**kwargs)
                self.tag = tag
                self.bias_name = "bias"

            def _weight(self, label, shape):
                return self.add_weight(name=label, shape=shape, dtype="float32", initializer="ones")

            def build(self, input_shape):
                name = "scale"
                self.pos = self.add_weight(name="{}_pos".format(self.tag), shape=(1, 2), initializer="ones")
                self.cls = self.add_weight(name=f"{PREFIX}_cls", shape=(1, 2), initializer="zeros")
                self.scale = self.add_weight(name=name, shape=(1, 2), initializer="ones")
                self.bias = self.add_weight(name=self.bias_name, shape=(2,), initializer="zeros")
                self.gain = self.add_weight(name=self.name + "_gain", shape=(2,), initializer="ones")
                self.extra = self._weight("extra", (2,))

            def call(self, x):
                return (x + self.pos + self.cls) * self.scale * self.gain * self.extra + self.bias

        layer = Embed()
        out = layer(tf.ones((1, 2)))
        """,
        at=[(12, 32, "Keras 3 `add_weight` takes the name by keyword only"),
            (16, 36, "Keras 3 `add_weight` takes the name by keyword only"),
            (17, 36, "Keras 3 `add_weight` takes the name by keyword only"),
            (18, 38, "Keras 3 `add_weight` takes the name by keyword only"),
            (19, 37, "Keras 3 `add_weight` takes the name by keyword only"),
            (20, 37, "Keras 3 `add_weight` takes the name by keyword only")],
        run="""
        import numpy as np
        names = sorted(w.name.split("/")[-1].split(":")[0] for w in layer.weights)
        values = np.array(out)
        """,
        effect=FIXES_ERROR,
        keras2=True,
        note="names computed by .format (emla2805/vision-transformer's '{}_pos'.format(name) shape), an "
             "f-string, a local, an attribute bound to a string, a + with a string, a helper's parameter "
             "every call of which passes a string: ValueError under Keras 3 (measured); the fix runs the "
             "same under tf_keras",
    ),
    clean(
        """
        import tensorflow as tf

        class Shaped(tf.keras.layers.Layer):
            def __init__(self, shape, **kwargs):
                super().__init__(**kwargs)
                self.kernel_shape = (2, 2)
                self.given = shape

            def build(self, input_shape):
                dims = (1, 2)
                self.a = self.add_weight(dims, "zeros")
                self.b = self.add_weight(self.kernel_shape)
                self.c = self.add_weight(self.given)
                self.d = self.add_weight(tuple(input_shape[1:]))
        """,
        note="a shape first, Keras 3's own order (a local, an attribute bound to a tuple, a parameter the module "
             "never passes, a call): not a name",
    ),
    clean(
        """
        import tensorflow as tf
        import tf_keras

        class Ok(tf.keras.layers.Layer):
            def build(self, input_shape):
                self.w = self.add_weight(name="w", shape=(2,))
                self.v = self.add_weight((2,), "zeros")

        class Legacy(tf_keras.layers.Layer):
            def build(self, input_shape):
                self.w = self.add_weight("w", shape=(2,))

        class Own:
            def add_weight(self, name, shape):
                return name

            def build(self):
                return self.add_weight("w", (2,))
        """,
        note="by keyword; a shape first (Keras 3 takes it as the shape); tf_keras; no Keras base",
    ),
]
