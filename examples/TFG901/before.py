"""TFG901: Keras 2 keyword arguments that Keras 3 (tf.keras in TF 2.16+) rejects.

A training script written for TF 2.x: the optimizer gets `lr=`, which Keras 3
rejects with `ValueError: Argument(s) not recognized: {'lr': ...}`, and
`compile` gets `experimental_compile=` (renamed `jit_compile` long ago:
TypeError). The fix renames both arguments to the names Keras 2 meant.
"""
import numpy as np
import tensorflow as tf

EXPECT = "fixes-error"
EXPECT_ERROR = "ValueError"

SIZES = {"small": (256, 16), "large": (4096, 64)}  # (samples, features)


def main(size):
    n, d = SIZES[size]
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, d)).astype("float32")
    y = x @ rng.standard_normal((d, 1)).astype("float32")
    model = tf.keras.Sequential([
        tf.keras.Input((d,)),
        tf.keras.layers.Dense(1, kernel_initializer="zeros"),
    ])
    optimizer = tf.keras.optimizers.SGD(lr=0.05)
    model.compile(optimizer, "mse", experimental_compile=False)
    history = model.fit(x, y, batch_size=32, epochs=2, shuffle=False, verbose=0)
    return np.array(history.history["loss"])
