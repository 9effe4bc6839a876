"""TFG101: NumPy on a tensor inside a `tf.function` fails at trace time.

`normalize` standardises a batch feature by feature. Written eagerly it works;
under `tf.function` the batch is a symbolic tensor, so `np.mean(batch, ...)`
raises `NotImplementedError: Cannot convert a symbolic tf.Tensor ...` and
`.numpy()` raises `AttributeError: 'SymbolicTensor' object has no attribute
'numpy'`. The fix uses `tf.reduce_mean` and drops `.numpy()`.
"""
import numpy as np
import tensorflow as tf

EXPECT = "fixes-error"
EXPECT_ERROR = "NotImplementedError"  # np.mean on the symbolic batch, while tracing

SHAPES = {"small": (256, 32), "large": (65536, 512)}
EPSILON = np.float32(1e-6)  # NumPy on a Python value is fine in a graph


@tf.function(jit_compile=True)
def normalize(batch):
    mean = tf.reduce_mean(batch, axis=0)
    std = tf.math.reduce_std(batch, axis=0)
    return (batch - mean) / (std + EPSILON)


def main(size):
    batch = tf.random.stateless_normal(SHAPES[size], seed=(1, 2), mean=3.0, stddev=2.0)
    return normalize(batch)
