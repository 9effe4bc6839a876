from __future__ import annotations

from typing import Optional

import libcst as cst

from tflint_gpu.semantic.api import keyword
from tflint_gpu.semantic.migration import KERAS3
from tflint_gpu.semantic.model import ASSIGNED
from tflint_gpu.rules.base import FIXES_ERROR, Fix, Rule, Safety, clean, flagged

_INPUTS = frozenset({"keras.Input", "keras.layers.Input"})
_INPUT_LAYER = "keras.layers.InputLayer"


class Keras3InputShapeInt(Rule):
    """`keras.Input(shape=3)`: an int where Keras 3 wants a shape tuple (ValueError).

    ## What it does
    Finds `keras.Input(...)`, `keras.layers.Input(...)` and
    `keras.layers.InputLayer(input_shape=...)` in Keras 3 spelling (`keras`,
    or `tf.keras` under TensorFlow 2.16+) whose shape is an int: an integer
    literal, a name bound once to one, `len(...)`, `int(...)`, or
    `x.shape[i]`. Not reported: tuples and lists, names the linter cannot
    read, `batch_shape=`, tf_keras.

    ## Why is this bad?
    Measured under TensorFlow 2.21 with Keras 3.15: `keras.Input(shape=3)`,
    `keras.Input(3)`, `keras.layers.Input(shape=3)` and
    `keras.layers.InputLayer(input_shape=3)` raise `ValueError: Cannot convert
    '3' to a shape.`; tf_keras 2.21 took the int as a 1-D shape (`(None,
    3)`). `Dense(2, input_shape=3)` is not affected (a UserWarning only).

    ## Example
    ```python
    inputs = tf.keras.Input(shape=n_features)
    ```

    Use instead:
    ```python
    inputs = tf.keras.Input(shape=(n_features,))
    ```

    ## Fix safety
    Safe: the int becomes a one-element tuple, the shape tf_keras made of it;
    the fixed code also runs under tf_keras. The tests run the original,
    which raises, and the fixed model.

    ## Measured effect
    TensorFlow 2.21, Keras 3.15, CPU: the ValueError above, when the input
    is made; `shape=(3,)` and `shape=[3]` give `(None, 3)` as tf_keras did.
    examples/TFG913 (`tflint-gpu verify --rule TFG913`): fixes-error,
    `ValueError` before, the model predicts after.
    """

    code = "TFG913"
    name = "keras3-input-shape-int"
    message = "Keras 3 `Input` takes a shape tuple, not an int"
    needs = (("Input",),)
    fix_safety = Safety.SAFE
    migration = True

    def visit_Call(self, node: cst.Call, ctx) -> None:
        qualname = ctx.call_name(node)
        if qualname in _INPUTS:
            shape = self._argument(node, "shape", positional=True)
        elif qualname == _INPUT_LAYER:
            shape = self._argument(node, "input_shape", positional=False)
        else:
            return
        if shape is None or not self._is_int(shape.value, ctx, 0):
            return
        if ctx.migration.api_flavour(node.func, ctx.scope) != KERAS3 or ctx.migration.guarded(node, ctx.scope):
            return
        tuple_ = cst.Tuple([cst.Element(shape.value, comma=cst.Comma())])
        fix = Fix("Make the shape a one-element tuple", Safety.SAFE, {shape.value: tuple_})
        ctx.report(shape.value, "Keras 3 `Input` raises ValueError on an int shape (`Cannot convert '3' to a "
                                "shape`): write a tuple, `(n,)`", fix)

    @staticmethod
    def _argument(node: cst.Call, name: str, positional: bool) -> Optional[cst.Arg]:
        found = keyword(node, name)
        if found is not None:
            return found
        if positional and node.args and node.args[0].keyword is None and not node.args[0].star:
            return node.args[0]
        return None

    def _is_int(self, expr: cst.BaseExpression, ctx, depth: int) -> bool:
        if depth > 4:
            return False
        if isinstance(expr, cst.Integer):
            return True
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value in ("len", "int") \
                and ctx.binding(expr.func.value) is None:
            return True
        if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Attribute) \
                and expr.value.attr.value == "shape" and len(expr.slice) == 1 \
                and isinstance(expr.slice[0].slice, cst.Index) \
                and isinstance(expr.slice[0].slice.value, (cst.Integer, cst.UnaryOperation)):
            return True
        if isinstance(expr, cst.Name):
            found = ctx.binding(expr.value)
            if found is None or found.kind != ASSIGNED or found.rebound:
                return False
            value = found.single_value
            return isinstance(value, cst.BaseExpression) and self._is_int(value, ctx, depth + 1)
        return False

    cases = [
        flagged(
            """
            import numpy as np
            import tensorflow as tf

            features = np.ones((4, 3), np.float32)
            n_features = features.shape[1]
            inputs = tf.keras.Input(shape=n_features)
            extra = tf.keras.layers.Input(2)
            hidden = tf.keras.layers.Dense(4)(inputs)
            model = tf.keras.Model([inputs, extra], tf.keras.layers.Dense(1)(hidden))
            layer = tf.keras.layers.InputLayer(input_shape=len([1, 2, 3]))
            """,
            fixed="""
            import numpy as np
            import tensorflow as tf

            features = np.ones((4, 3), np.float32)
            n_features = features.shape[1]
            inputs = tf.keras.Input(shape=(n_features,))
            extra = tf.keras.layers.Input((2,))
            hidden = tf.keras.layers.Dense(4)(inputs)
            model = tf.keras.Model([inputs, extra], tf.keras.layers.Dense(1)(hidden))
            layer = tf.keras.layers.InputLayer(input_shape=(len([1, 2, 3]),))
            """,
            at=[(6, 31, "Keras 3 `Input` raises ValueError on an int shape"),
                (7, 31, "Keras 3 `Input` raises ValueError on an int shape"),
                (10, 48, "Keras 3 `Input` raises ValueError on an int shape")],
            run="y = model.predict([features, np.ones((4, 2), np.float32)], verbose=0)",
            effect=FIXES_ERROR,
            note="a name bound to x.shape[1], a positional int, InputLayer(input_shape=len(...))",
        ),
        clean(
            """
            import keras
            import tf_keras

            a = keras.Input(shape=(3,))
            b = keras.Input([3])
            c = keras.Input(shape=dims)
            d = keras.Input(batch_shape=(None, 3))
            e = tf_keras.Input(shape=3)
            f = keras.layers.Dense(2, input_shape=(3,))
            size = 3
            size = size * 2
            g = keras.Input(shape=size)
            """,
            note="tuples and lists; an unknown name; batch_shape; tf_keras accepts an int; a rebound name",
        ),
    ]
