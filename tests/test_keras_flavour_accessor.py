"""RuleContext.keras_flavour: which Keras a constructor or a class belongs to."""
from __future__ import annotations

import libcst as cst

from tflint_gpu.engine.lint import analyse

SOURCE = """
import keras
import tf_keras
import tensorflow as tf
from tensorflow.python import keras as old
from tensorflow.keras import layers as L
import numpy as np

class New(keras.layers.Layer):
    pass

class Old(tf_keras.layers.Layer):
    pass

class Plain:
    pass

a = keras.layers.Dropout(0.5)
b = tf_keras.layers.Dropout(0.5)
c = tf.keras.layers.Dropout(0.5)
d = L.Dropout(0.5)
e = old.layers.Dropout(0.5)
f = np.zeros(3)
"""


def test_keras_flavour_of_constructors_and_classes():
    module = cst.parse_module(SOURCE)
    ctx = analyse(module, [])
    calls = {}
    for statement in module.body:
        line = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) else None
        if isinstance(line, cst.Assign) and isinstance(line.value, cst.Call):
            calls[line.targets[0].target.value] = line.value.func
    got = {name: ctx.keras_flavour(func, ctx.model.root) for name, func in calls.items()}
    assert got == {"a": "keras3", "b": "tf_keras", "c": "keras3", "d": "keras3", "e": "tf_keras", "f": None}
    classes = ctx.model.root.classes
    assert ctx.keras_flavour(classes["New"]) == "keras3"
    assert ctx.keras_flavour(classes["Old"]) == "tf_keras"
    assert ctx.keras_flavour(classes["Plain"]) is None
    assert ctx.keras_flavour(ctx.model.root) is None
