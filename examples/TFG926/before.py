"""TFG926: `tf.compat.v1.disable_v2_behavior()` kept in a Keras 3 program.

A regression script ported from TensorFlow 1 switches the process to graph
mode at the start, then builds and trains a `tf.keras` model. tf_keras
trained it in graph mode; Keras 3 (tf.keras in TF 2.16+) runs eagerly only:
`RuntimeError: tf.data.Dataset only supports Python-style iteration in eager
mode or within tf.function.` at `fit`. The hand fix drops the call.
"""
import numpy as np
import tensorflow as tf

EXPECT = "fixes-error"
EXPECT_ERROR = "RuntimeError"

SIZES = {"small": (256, 8), "large": (4096, 64)}  # (samples, features)


def main(size):
    tf.compat.v1.disable_v2_behavior()
    n, d = SIZES[size]
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, d)).astype("float32")
    y = x @ rng.standard_normal((d, 1)).astype("float32")
    model = tf.keras.Sequential([tf.keras.Input((d,)), tf.keras.layers.Dense(1, kernel_initializer="zeros")])
    model.compile(tf.keras.optimizers.SGD(learning_rate=0.05), "mse")
    history = model.fit(x, y, batch_size=64, epochs=2, verbose=0)
    return np.array(history.history["loss"])
