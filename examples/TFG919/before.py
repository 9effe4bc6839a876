"""TFG919: a dtype passed by position where the op's next parameter is `name`.

`standardize` divides a batch by its standard deviation, written
`tf.sqrt(var, tf.float32)`: `tf.sqrt`'s second parameter is `name`, not a
dtype. Eagerly the name is ignored and the code works; inside the
`tf.function` the op is built in a graph and the dtype given as its name
raises `TypeError`. The rewrite (`after.py`) drops the misplaced argument (the
variance is float32 already), so nothing else changes.
"""
import numpy as np
import tensorflow as tf

EXPECT = "fixes-error"
EXPECT_ERROR = "TypeError"

SIZES = {"small": 256, "large": 65536}  # rows


@tf.function
def standardize(x):
    mean = tf.reduce_mean(x, axis=0)
    var = tf.reduce_mean(tf.square(x - mean), axis=0)
    return (x - mean) / tf.sqrt(var + 1e-6, tf.float32)


def main(size):
    x = np.random.default_rng(0).standard_normal((SIZES[size], 16)).astype("float32") * 3.0 + 1.0
    return standardize(tf.constant(x))
