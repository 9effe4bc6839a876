"""semantic/names.py: tf.compat.v1/v2 spellings compose with the other aliases."""
from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from tflint_gpu.semantic.context import GraphAnalysis
from tflint_gpu.semantic.model import build_model
from tflint_gpu.semantic.names import Resolver, normalize


@pytest.mark.parametrize("raw, expected", [
    ("tensorflow.compat.v2.keras.Model", "keras.Model"),
    ("tensorflow.compat.v2.keras", "keras"),
    ("tensorflow.compat.v1.keras.metrics.Mean", "keras.metrics.Mean"),
    ("tensorflow.compat.v2.function", "tensorflow.function"),
    ("tensorflow.compat.v2.losses.mse", "keras.losses.mse"),
    # TF1's own modules under compat.v1 are not Keras's.
    ("tensorflow.compat.v1.losses.mean_squared_error", "tensorflow.losses.mean_squared_error"),
    ("tensorflow.compat.v1.metrics.mean", "tensorflow.metrics.mean"),
    ("tensorflow.compat.v1.train.AdamOptimizer", "tensorflow.train.AdamOptimizer"),
    ("tensorflow.compat.v2", "tensorflow"),
    ("tensorflow.keras.layers.Dense", "keras.layers.Dense"),
    ("tf_keras.layers.Dense", "keras.layers.Dense"),
    ("numpy.zeros", "numpy.zeros"),
])
def test_normalize(raw, expected):
    assert normalize(raw) == expected


def test_compat_v2_keras_class():
    module = cst.parse_module(textwrap.dedent("""
        import tensorflow.compat.v2 as tf

        class Net(tf.keras.Model):
            def call(self, x):
                return x

        m = tf.keras.metrics.Mean()
    """))
    model = build_model(module, ["Call"])
    resolver = Resolver()
    graphs = GraphAnalysis(model, resolver)
    graphs.run()
    assert graphs.is_keras_class(model.root.classes["Net"])
    [call] = [c for c, _ in model.index["Call"]]
    assert resolver.qualname(call.func, model.root) == "keras.metrics.Mean"
