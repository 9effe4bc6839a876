"""TFG102: a Python `if` on a tensor in a Keras 3 `call` fails when the model is traced.

`SoftClip` scales a batch down when its largest magnitude exceeds a limit.
Called eagerly on concrete data it works, but Keras 3 does not run AutoGraph
on `call`: building the functional model on `keras.Input`, `fit` and `predict`
all trace it, and the Python `if` on a tensor raises
`OperatorNotAllowedInGraphError: Using a symbolic tf.Tensor as a Python bool
is not allowed`. The fix turns the `if`/`else` into `keras.ops.cond`.
"""
import keras
import numpy as np
import tensorflow as tf

EXPECT = "fixes-error"
EXPECT_ERROR = "OperatorNotAllowedInGraphError"  # the `if` on a tensor, when Keras traces `call`

SIZES = {"small": (256, 16), "large": (16384, 64)}


class SoftClip(keras.layers.Layer):
    def __init__(self, limit=4.0, **kwargs):
        super().__init__(**kwargs)
        self.limit = limit

    def call(self, x):
        peak = tf.reduce_max(tf.abs(x))
        y = keras.ops.cond(peak > self.limit, lambda: x * (self.limit / peak), lambda: x)
        return y


def main(size):
    n, width = SIZES[size]
    rng = np.random.default_rng(0)
    features = rng.normal(0.0, 3.0, (n, width)).astype("float32")
    targets = features.sum(axis=1, keepdims=True)
    keras.utils.set_random_seed(0)
    inputs = keras.Input((width,))
    hidden = SoftClip()(keras.layers.Dense(width)(inputs))
    model = keras.Model(inputs, keras.layers.Dense(1)(hidden))
    model.compile(optimizer="sgd", loss="mse")
    model.fit(features, targets, batch_size=64, epochs=2, verbose=0)
    return model.predict(features[:64], verbose=0)
