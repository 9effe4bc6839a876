"""TFG908: a Keras 2 training script that checkpoints to HDF5 and TF checkpoint names.

A training script from a TF 2.x tutorial: `ModelCheckpoint(..., save_weights_only=True)`
keeps the best weights in an `.hdf5` file, another `ModelCheckpoint` the whole
model in an `.hdf5` file, `save_weights` the last weights under a TF checkpoint
prefix (no suffix), and the script reloads all three. Keras 3 writes and reads
Keras files only: `ValueError: When using save_weights_only=True in
ModelCheckpoint, the filepath provided must end in .weights.h5` (and `must end in
.keras` for the whole model). The fix renames each file where its name is
written (`.weights.h5`, `.keras`), with the loads of the same name.
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
    with tempfile.TemporaryDirectory() as folder:
        best = tf.keras.callbacks.ModelCheckpoint(os.path.join(folder, "best_weights.hdf5"), monitor="loss",
                                                  save_weights_only=True, save_best_only=True)
        whole = tf.keras.callbacks.ModelCheckpoint(os.path.join(folder, "model.hdf5"))
        model.fit(x, y, batch_size=32, epochs=2, verbose=0, callbacks=[best, whole])
        model.save_weights(os.path.join(folder, "last"))
        model.load_weights(os.path.join(folder, "best_weights.hdf5"))
        restored = tf.keras.models.load_model(os.path.join(folder, "model.hdf5"))
        restored.load_weights(os.path.join(folder, "last"))
    return restored.predict(x, verbose=0)
