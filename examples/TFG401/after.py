"""TFG401: a `tf.function` of fusable math, compiled op by op instead of by XLA.

`activation_block` is a bias add, a GELU, a few more elementwise ops and a
row normalisation: a dozen ops that each read and write the whole tensor when
TensorFlow runs the graph op by op. Nothing in it is rejected by XLA, so the
fix adds `jit_compile=True`, and XLA fuses the chain into a few kernels.
The results are the same up to float32 rounding: XLA fuses and reorders the
arithmetic (TF 2.21, CPU: max abs diff 3.8e-6 for "small", 5.7e-6 for "large",
on values up to about 30), hence `TOLERANCE`.
"""
import tensorflow as tf

EXPECT = "equivalent"
TOLERANCE = 1e-4  # absolute and relative; XLA's rounding differences here are below 6e-6

SIZES = {"small": (512, 20), "large": (2048, 20)}  # (n for an n x n input, calls)


@tf.function(jit_compile=True)
def activation_block(x, b):
    h = tf.nn.gelu(x + b)
    h = h * tf.sigmoid(h) - 0.5 * tf.square(h) + 0.1 * tf.tanh(h)
    mean = tf.reduce_mean(h, axis=-1, keepdims=True)
    var = tf.reduce_mean(tf.square(h - mean), axis=-1, keepdims=True)
    return (h - mean) * tf.math.rsqrt(var + 1e-5)


def main(size):
    n, calls = SIZES[size]
    x = tf.random.stateless_normal((n, n), seed=(4, 1))
    b = tf.random.stateless_normal((n,), seed=(4, 2))
    for _ in range(calls):
        y = activation_block(x, b)
    return y
