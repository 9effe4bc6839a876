"""Value kinds (semantic/values.py): one answer per expression, from the engine's facts."""
from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from tflint_gpu.semantic import values
from tflint_gpu.engine.lint import analyse
from tflint_gpu.rules.base import REGISTRY, all_rules

SOURCE = textwrap.dedent("""
    import keras
    import numpy as np
    import tensorflow as tf

    table = {"a": 1}
    rate = 0.5
    nothing = None
    arr = np.zeros((2, 2))
    noise = np.random.normal(size=3)
    one_draw = np.random.normal()
    var = tf.Variable(1.0)
    ds = tf.data.Dataset.range(3).map(lambda x: x + 1)
    dense = keras.layers.Dense(3)
    loss_fn = keras.losses.MeanSquaredError()
    t = tf.zeros(3)
    again = table
    rebound = 1
    rebound = "x"

    class Block(keras.layers.Layer):
        def build(self, shape):
            self.w = self.add_weight(shape=(3,))

    @tf.function
    def f(x):
        y = dense(x)
        return y
""")


@pytest.fixture(scope="module")
def ctx():
    list(all_rules())
    return analyse(cst.parse_module(SOURCE), [REGISTRY["TFG101"]])


@pytest.mark.parametrize("text,kind", [
    ("table", values.PY_CONTAINER),
    ("rate", values.PY_SCALAR),
    ("nothing", values.PY_NONE),
    ("arr", values.NUMPY_ARRAY),
    ("noise", values.NUMPY_ARRAY),
    ("one_draw", values.UNKNOWN),  # a Python float, not an array: NumPy's scalar draw
    ("var", values.VARIABLE),
    ("ds", values.DATASET),
    ("dense", values.KERAS),
    ("loss_fn", values.LOSS),
    ("t", values.TENSOR),
    ("again", values.PY_CONTAINER),
    ("rebound", values.UNKNOWN),  # bound twice: no single answer
    ("undefined_name", values.UNKNOWN),
])
def test_module_level_value_kinds(ctx, text, kind):
    assert ctx.value_kind(cst.parse_expression(text), ctx.model.root) == kind


def test_kinds_inside_functions_and_methods(ctx):
    calls = {ctx.module.code_for_node(node): (node, scope) for node, scope in ctx.model.index["Call"]}
    weight, scope = calls["self.add_weight(shape=(3,))"]
    assert ctx.value_kind(weight, scope) == values.VARIABLE
    layer_call, scope = calls["dense(x)"]
    assert ctx.value_kind(layer_call, scope) == values.TENSOR
