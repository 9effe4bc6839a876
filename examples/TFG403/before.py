"""TFG403: a `tf.function` made inside the loop that calls it is traced at every iteration.

`main` wraps the same computation in a new `tf.function` at each step and
calls it at once. Traces are cached per `tf.function` object, and each new
object starts with an empty cache, so every step traces the Python function
again and builds a new graph before running it. The rewrite makes the
`tf.function` once, before the loop: one trace, the same values.
"""
import tensorflow as tf

EXPECT = "equivalent"

SIZES = {"small": (128, 30), "large": (512, 60)}  # (n, steps)


def block(x, w):
    return tf.tanh(tf.matmul(x, w)) * 0.5 + x * 0.5


def main(size):
    n, steps = SIZES[size]
    x = tf.random.stateless_normal((n, n), seed=(5, 6))
    w = tf.random.stateless_normal((n, n), seed=(7, 8)) * 0.05
    for _ in range(steps):
        step = tf.function(block)
        x = step(x, w)
    return x
