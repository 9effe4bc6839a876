"""The engine's names for what `super().__init__(...)` and `super().method(...)` run in a subclass of a
Keras 3 class (`RuleContext.keras3_callables`): the base's constructor or method, as the migration table
names them (TensorSpeech/TensorFlowTTS: `super(AdamWeightDecay, self).__init__(learning_rate, beta_1,
beta_2, epsilon, amsgrad, name)` in a subclass of `tf.keras.optimizers.Adam`)."""
from __future__ import annotations

import textwrap

import libcst as cst

from tflint_gpu.engine.lint import analyse

SOURCE = """
import keras
import tensorflow as tf
import tf_keras

class AdamWeightDecay(tf.keras.optimizers.Adam):
    def __init__(self, name="AdamWeightDecay", **kwargs):
        super(AdamWeightDecay, self).__init__(0.1, 0.9, 0.99, 1e-7, False, name, **kwargs)

class Net(keras.Model):
    def compile(self, optimizer, loss):
        super().compile(optimizer, loss)

class Child(AdamWeightDecay):
    def __init__(self):
        super().__init__("child")
        super(AdamWeightDecay, self).__init__(0.1)

class Old(tf_keras.optimizers.Adam):
    def __init__(self):
        super().__init__(0.1)

def helper(opt):
    return super().__init__(0.1)
"""


def test_super_calls_name_the_keras_3_base_they_run():
    ctx = analyse(cst.parse_module(textwrap.dedent(SOURCE).lstrip("\\n")), [])
    got = []
    for scope in ctx.model.scopes:
        if scope.kind != "function":
            continue
        ctx.scope = scope
        for node in ctx.descendants(scope.node.body):
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
                names = ctx.keras3_callables(node)
                got.append((scope.name, node.func.attr.value, names[:1]))
    assert got == [
        ("__init__", "__init__", ["keras.optimizers.Adam"]),  # the base's constructor
        ("compile", "compile", ["keras.Model.compile"]),
        ("__init__", "__init__", []),  # Child: its same-module base defines __init__
        ("__init__", "__init__", []),  # super(AdamWeightDecay, self) in Child: another class's next base
        ("__init__", "__init__", []),  # a Keras 2 (tf_keras) base
        ("helper", "__init__", []),  # not in a method
    ]
