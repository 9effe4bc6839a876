"""TFG922: `np.Inf` and `np.int` in a Keras training callback.

A U-Net project's early-stopping bookkeeping (bubbliiiing/unet-tf2
utils/callbacks.py) starts its best loss at `np.Inf`, and its metric casts
labels with `np.int`. TensorFlow 2.21 installs NumPy 2, where both raise
`AttributeError` (`np.Inf` was removed in NumPy 2.0, `np.int` in 1.24) at
the first epoch. The fix writes `np.inf` and `int`, the very objects NumPy 1
gave for those names.
"""
import numpy as np
import tensorflow as tf

EXPECT = "fixes-error"
EXPECT_ERROR = "AttributeError"

SIZES = {"small": (64, 3), "large": (2048, 5)}  # (samples, epochs)


class BestLoss(tf.keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.best = np.Inf
        self.history = []

    def on_epoch_end(self, epoch, logs=None):
        loss = logs["loss"]
        if loss < self.best:
            self.best = loss
        self.history.append(self.best)


def main(size):
    n, epochs = SIZES[size]
    x = np.linspace(-1.0, 1.0, n * 4, dtype="float32").reshape(n, 4)
    y = (x.sum(axis=1) > 0).astype(np.int)
    model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(1, kernel_initializer="zeros")])
    model.compile(tf.keras.optimizers.SGD(0.1), "mse")
    best = BestLoss()
    model.fit(x, y.astype("float32"), epochs=epochs, batch_size=16, verbose=0, callbacks=[best])
    return np.array(best.history)
