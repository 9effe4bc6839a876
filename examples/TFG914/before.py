"""TFG914: loading pretrained weights by assigning `layer.kernel = tf.Variable(...)`.

A script from a TF 2.x tutorial builds a `Dense` layer and sets its weights
by assigning new variables to `kernel` and `bias`. In Keras 3 `Dense.kernel`
is a read-only property: `AttributeError: property 'kernel' of 'Dense'
object has no setter`. The rewrite copies the values with `assign`.
"""
import numpy as np
import tensorflow as tf

EXPECT = "fixes-error"
EXPECT_ERROR = "AttributeError"

SIZES = {"small": (64, 8), "large": (4096, 64)}  # (samples, features)


def main(size):
    n, d = SIZES[size]
    x = np.linspace(-1.0, 1.0, n * d, dtype="float32").reshape(n, d)
    pretrained = np.arange(d * 4, dtype="float32").reshape(d, 4) / (d * 4)
    dense = tf.keras.layers.Dense(4)
    dense.build((None, d))
    dense.kernel = tf.Variable(pretrained)
    dense.bias = tf.Variable(np.full(4, 0.5, "float32"))
    return dense(x)
