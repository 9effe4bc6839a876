"""TFG908: a Keras 2 save/load round trip through a SavedModel directory and a TF checkpoint.

A training script from a TF 2.x tutorial: it checkpoints the weights with
`save_weights("<dir>/ckpt")`, saves the model to a SavedModel directory with
`model.save("<dir>/saved_model")` and reloads it with `load_model`. Keras 3
writes and reads Keras files only: `ValueError: The filename must end in
`.weights.h5`` (and `Invalid filepath extension for saving`). The rewrite
names `.weights.h5` and `.keras` files (a SavedModel for serving is
`model.export(path)`).
"""
import os
import tempfile

import numpy as np
import tensorflow as tf

EXPECT = "fixes-error"
EXPECT_ERROR = "ValueError"

SIZES = {"small": (64, 8), "large": (4096, 64)}  # (samples, features)


def main(size):
    n, d = SIZES[size]
    tf.keras.utils.set_random_seed(0)
    x = np.linspace(-1.0, 1.0, n * d, dtype="float32").reshape(n, d)
    y = x.sum(axis=1, keepdims=True)
    model = tf.keras.Sequential([tf.keras.Input((d,)), tf.keras.layers.Dense(1, kernel_initializer="zeros")])
    model.compile(tf.keras.optimizers.SGD(learning_rate=0.01), "mse")
    model.fit(x, y, batch_size=32, epochs=2, verbose=0)
    with tempfile.TemporaryDirectory() as folder:
        model.save_weights(os.path.join(folder, "ckpt.weights.h5"))
        model.load_weights(os.path.join(folder, "ckpt.weights.h5"))
        model.save(os.path.join(folder, "model.keras"))
        restored = tf.keras.models.load_model(os.path.join(folder, "model.keras"))
    return restored.predict(x, verbose=0)
