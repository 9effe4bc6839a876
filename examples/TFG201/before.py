"""TFG201: arrays built with NumPy on the host and converted to tensors in a loop.

Every step of the loop builds a mask and a bias with NumPy, in host memory,
and copies them to the device with `tf.convert_to_tensor` / `tf.constant`.
The fix creates them with `tf.eye` and `tf.fill` where the tensors live,
with NumPy's float64 spelled out, so the results, dtypes included, are
identical. On a GPU the "large" size moves about 130 MB across the bus per
step before the fix and none after it.
"""
import numpy as np
import tensorflow as tf

EXPECT = "equivalent"

SIZES = {"small": 256, "large": 4096}
STEPS = 4


def main(size):
    n = SIZES[size]
    x = tf.reshape(tf.range(n * n, dtype=tf.float64), (n, n)) / (n * n)
    total = tf.zeros((), dtype=tf.float64)
    for step in range(STEPS):
        mask = tf.convert_to_tensor(np.eye(n))
        bias = tf.constant(np.full((n,), 0.5))
        total += tf.reduce_sum(tf.linalg.matvec(x * mask, bias)) * (step + 1)
    return {"total": total, "last": bias[:8]}
