"""TFG402: a `tf.function` given a new Python float every epoch traces once per epoch.

`train_step` takes the learning rate as an argument, and the loop passes a
Python float computed from the epoch (`0.1 * 0.5 ** epoch`). A `tf.function`
keys its traces on the values of Python arguments, so every epoch traces
`train_step` again and builds a new graph. The rewrite passes the rate as a
float32 tensor (`tf.constant(...)`): one trace for all epochs, the same
values (the Python float is converted to float32 in both cases).
"""
import tensorflow as tf

EXPECT = "equivalent"

SIZES = {"small": (256, 8, 5), "large": (1024, 20, 10)}  # (n, epochs, steps per epoch)


@tf.function
def train_step(w, x, lr):
    h = tf.tanh(tf.matmul(x, w))
    grad = tf.matmul(x, h, transpose_a=True) / tf.cast(tf.shape(x)[0], tf.float32)
    return w - lr * grad


def main(size):
    n, epochs, steps = SIZES[size]
    x = tf.random.stateless_normal((n, n), seed=(1, 2))
    w = tf.random.stateless_normal((n, n), seed=(3, 4)) * 0.01
    for epoch in range(epochs):
        lr = tf.constant(0.1 * 0.5 ** epoch)  # a float32 tensor: one trace
        for _ in range(steps):
            w = train_step(w, x, lr)
    return w
