"""TFG906: `device=` given to a TensorFlow tensor creator.

A lookup table kept in host memory, written in PyTorch's style:
`tf.constant(table, device="/cpu:0")`. TensorFlow's creators take no
`device=`: `TypeError: constant() got an unexpected keyword argument
'device'`. The fix creates the tensor inside `with tf.device("/cpu:0"):`,
TensorFlow's way to place it.
"""
import numpy as np
import tensorflow as tf

EXPECT = "fixes-error"
EXPECT_ERROR = "TypeError"

SIZES = {"small": (1000, 16, 256), "large": (100000, 64, 8192)}  # (rows, width, lookups)


def main(size):
    rows, width, lookups = SIZES[size]
    rng = np.random.default_rng(0)
    values = rng.standard_normal((rows, width)).astype("float32")
    ids = rng.integers(0, rows, lookups)
    table = tf.constant(values, device="/cpu:0")
    picked = tf.gather(table, ids)
    return tf.reduce_sum(picked, axis=0)
