"""TFG907: TensorFlow ops applied to Keras 3 symbolic tensors while building a functional model.

A two-branch model from a TF 2.x tutorial: the input is split in two with
`tf.split`, one half goes through a Dense layer, and the halves are joined
with `tf.concat` and averaged with `tf.reduce_mean`. Keras 2 wrapped each op
into a layer; Keras 3 raises `ValueError: A KerasTensor cannot be used as
input to a TensorFlow function` at the first one. The fix uses the
`keras.ops` twins, which build the same model.
"""
import numpy as np
import tensorflow as tf

EXPECT = "fixes-error"
EXPECT_ERROR = "ValueError"

SIZES = {"small": (64, 8), "large": (1024, 64)}  # (samples, features)


def main(size):
    n, d = SIZES[size]
    tf.keras.utils.set_random_seed(0)
    inputs = tf.keras.Input((d,))
    left, right = tf.split(inputs, 2, axis=-1)
    h = tf.keras.layers.Dense(d // 2, activation="relu", kernel_initializer="ones")(left)
    merged = tf.concat([h, right], axis=-1)
    pooled = tf.reduce_mean(merged, axis=-1, keepdims=True)
    model = tf.keras.Model(inputs, pooled)
    x = np.linspace(-1.0, 1.0, n * d, dtype="float32").reshape(n, d)
    return model.predict(x, batch_size=32, verbose=0)
