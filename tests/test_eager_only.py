"""semantic/eager_only.py: the Keras model calls Keras 3 cannot run in graph mode."""
from __future__ import annotations

import textwrap

import libcst as cst

from tflint_gpu.engine.lint import analyse

CODE = cst.Module(body=[]).code_for_node


def test_the_calls_that_need_eager_execution():
    ctx = analyse(cst.parse_module(textwrap.dedent("""
        import numpy as np
        import tensorflow as tf
        from PIL import Image

        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        model.fit(np.ones((2, 2)), np.ones((2, 1)))
        model.train_on_batch(np.ones((2, 2)), np.ones((2, 1)))
        model.save_weights("w.weights.h5")
        Image.open("a.png").save("b.png")
        saver = tf.compat.v1.train.Saver()
        saver.save(None, "ckpt")

        def run(net, x):
            return net.predict(x)
    """)), [])
    found = sorted(CODE(call.func) for call, _ in ctx.eager_only.calls())
    assert found == ["model.fit", "model.save_weights", "net.predict"]
