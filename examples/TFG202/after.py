"""TFG202: arrays built once with NumPy on the host, then converted to tensors.

Every array here comes from a deterministic NumPy creator and is handed to
`tf.constant`, `tf.convert_to_tensor` or `tf.Variable`: it is computed in
host memory and then copied to the device. The fix creates each one with the
TensorFlow op and NumPy's dtype spelled out (`float64` for `np.zeros`,
`np.eye`, `np.full(..., 0.5)`; `int64` for `np.arange(8)`), so the results,
dtypes included, are identical. `scale`, a literal table, is left alone.
On a GPU the "large" size moves a few hundred MB per call across the bus
before the fix and none after it.
"""
import numpy as np
import tensorflow as tf

EXPECT = "equivalent"

SIZES = {"small": 256, "large": 4096}


def main(size):
    n = SIZES[size]
    weights = tf.Variable(tf.ones((n, n), dtype=tf.float32))
    offset = tf.fill((n, n), tf.constant(0.5, dtype=tf.float64))
    mask = tf.eye(n, dtype=tf.float64)
    acc = tf.zeros((n,), dtype=tf.float64)
    picks = tf.range(8, dtype=tf.int64)
    scale = tf.constant(np.array([0.5, 2.0, 4.0, 8.0]))
    mixed = tf.cast(offset + mask, tf.float32) * weights
    row_sums = tf.reduce_sum(mixed, axis=1)
    acc = acc + tf.linalg.trace(offset - mask) + tf.cast(row_sums, tf.float64)
    return {
        "row_sums": tf.gather(row_sums, picks % n),
        "acc": acc[:16],
        "scaled": acc[:4] * scale,
        "picks": picks * 3,
        "total": tf.reduce_sum(acc),
    }
