from __future__ import annotations

import libcst as cst

from tflint_gpu.semantic.migration import KERAS3
from tflint_gpu.rules.base import Rule, clean, flagged

# Keras 3.15 layers whose weight is a read-only property (derived: inspect.getattr_static on every class of
# keras.layers, a property without a setter).
_READ_ONLY = {
    "kernel": frozenset({"Dense", "EinsumDense", "Conv1D", "Conv2D", "Conv3D", "Convolution1D", "Convolution2D",
                         "Convolution3D"}),
    "embeddings": frozenset({"Embedding"}),
}


def _read_only(qualname, attribute: str) -> bool:
    if qualname is None or not qualname.startswith("keras.layers."):
        return False
    return qualname.rsplit(".", 1)[1] in _READ_ONLY.get(attribute, ())


class Keras3LayerWeightAssignment(Rule):
    """Assigning `layer.kernel = ...` (or `embeddings`) on a Keras 3 `Dense`, `Conv*D` or `Embedding`: AttributeError.

    ## What it does
    Finds assignments to `.kernel` on a Keras 3 `Dense`, `EinsumDense`,
    `Conv1D`/`Conv2D`/`Conv3D` (and their `Convolution*` aliases) and to
    `.embeddings` on an `Embedding`: on an object made by one of those
    classes (`layer = keras.layers.Dense(4)`, through names and `self.x`
    bound once), and `self.kernel = ...` in a subclass of one of them (a
    custom `build` that makes its own kernel). Not reported: tf_keras
    layers, a custom `Layer` (its `kernel` is an ordinary attribute),
    `layer.kernel.assign(value)`, other attributes (`bias` is writable).

    ## Why is this bad?
    In Keras 3 these weights are read-only properties (they route through
    LoRA and quantization). Measured under TensorFlow 2.21 with Keras 3.15:
    `layer.kernel = tf.Variable(...)` on a built `Dense` raises
    `AttributeError: property 'kernel' of 'Dense' object has no setter` (also
    before `build`, for a tensor, on `Conv2D`, and `embeddings` on
    `Embedding`), and so does `self.kernel = self.add_weight(...)` in the
    `build` of a `Dense` or `Conv2D` subclass. tf_keras 2.21 runs each (the
    subclass's own kernel is used: `[[3.0, 3.0]]` with ones).

    ## Example
    ```python
    dense = tf.keras.layers.Dense(2)
    dense.build((None, 3))
    dense.kernel = tf.Variable(pretrained)
    ```

    Use instead:
    ```python
    dense = tf.keras.layers.Dense(2)
    dense.build((None, 3))
    dense.kernel.assign(pretrained)
    ```
    (a subclass that builds its own weight: subclass `keras.layers.Layer`,
    or assign `self._kernel`, the attribute Keras 3's `Dense` reads).

    ## Fix safety
    No fix: `assign` copies values into the existing variable (the original
    shared a variable object), and `_kernel` is Keras's private attribute.

    ## Measured effect
    TensorFlow 2.21, Keras 3.15, CPU: the AttributeError above, at the
    assignment; `layer.bias = tf.Variable(...)` and `layer.kernel.assign(...)`
    run. examples/TFG914 (`tflint-gpu verify --rule TFG914`): fixes-error,
    `AttributeError` before, the layer computes with the given weights after.
    """

    code = "TFG914"
    name = "keras3-layer-weight-assignment"
    message = "Keras 3 layers' `kernel` is a read-only property"
    needs = ((".kernel", ".embeddings"),)
    migration = True

    def visit_Assign(self, node: cst.Assign, ctx) -> None:
        for target in node.targets:
            self._target(target.target, ctx)

    def visit_AnnAssign(self, node: cst.AnnAssign, ctx) -> None:
        if node.value is not None:
            self._target(node.target, ctx)

    def _target(self, target: cst.BaseExpression, ctx) -> None:
        if not isinstance(target, cst.Attribute) or target.attr.value not in _READ_ONLY:
            return
        attribute = target.attr.value
        owner = target.value
        cls = ctx.graphs.objects.self_class(owner, ctx.scope)
        if cls is not None:
            if ctx.migration.legacy_env or ctx.graphs.keras_flavour(cls) != KERAS3:
                return
            base = ctx.migration.class_base(cls)
            if not _read_only(base, attribute) or ctx.graphs.objects.defines(cls, attribute):
                return
            name = base.rsplit(".", 1)[1]
            message = (f"Keras 3's `{name}.{attribute}` is a read-only property (AttributeError: no setter): a "
                       f"subclass that makes its own weight should derive from `keras.layers.Layer`")
        else:
            made = ctx.migration.object_class(owner, ctx.scope)
            if not _read_only(made, attribute) or ctx.migration.object_flavour(owner, ctx.scope) != KERAS3:
                return
            name = made.rsplit(".", 1)[1]
            message = (f"Keras 3's `{name}.{attribute}` is a read-only property (AttributeError: no setter): "
                       f"use `{attribute}.assign(value)`")
        if not ctx.migration.guarded(target, ctx.scope):
            ctx.report(target, message)

    cases = [
        flagged(
            """
            import numpy as np
            import tensorflow as tf

            dense = tf.keras.layers.Dense(2)
            dense.build((None, 3))
            dense.kernel = tf.Variable(np.ones((3, 2), np.float32))
            dense.bias = tf.Variable(np.zeros(2, np.float32))
            emb = tf.keras.layers.Embedding(10, 4)
            emb.embeddings = tf.Variable(tf.zeros((10, 4)))

            class Tied(tf.keras.layers.Dense):
                def build(self, input_shape):
                    self.kernel = self.add_weight(name="kernel", shape=(input_shape[-1], self.units))
                    self.built = True

            class Holder:
                def __init__(self):
                    self.conv = tf.keras.layers.Conv2D(2, 3)

                def load(self, value):
                    self.conv.kernel = value
            """,
            at=[(6, 1, "Keras 3's `Dense.kernel` is a read-only property (AttributeError: no setter): use "
                       "`kernel.assign(value)`"),
                (9, 1, "Keras 3's `Embedding.embeddings` is a read-only property"),
                (13, 9, "Keras 3's `Dense.kernel` is a read-only property (AttributeError: no setter): a subclass"),
                (21, 9, "Keras 3's `Conv2D.kernel` is a read-only property")],
        ),
        clean(
            """
            import keras
            import tf_keras

            class Own(keras.layers.Layer):
                def build(self, input_shape):
                    self.kernel = self.add_weight(shape=(input_shape[-1], 2))

            class Lora(keras.layers.Dense):
                @property
                def kernel(self):
                    return self._kernel

                @kernel.setter
                def kernel(self, value):
                    self._kernel = value

                def build(self, input_shape):
                    self.kernel = self.add_weight(shape=(input_shape[-1], self.units))

            old = tf_keras.layers.Dense(2)
            old.kernel = None
            dense = keras.layers.Dense(2)
            dense.kernel.assign(value)
            dense.bias = None
            transpose = keras.layers.Conv2DTranspose(2, 3)
            transpose.kernel = None
            """,
            note="a custom Layer's own attribute; a subclass defining its own kernel property; tf_keras; assign(); "
                 "bias is writable; Conv2DTranspose has no kernel property",
        ),
    ]
