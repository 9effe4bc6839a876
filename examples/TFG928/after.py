"""TFG928: a metric function Keras 3 calls with uncast float64 targets.

A segmentation project (bubbliiiing/unet-tf2's utils_metrics.f_score) feeds
`fit` from a `keras.utils.Sequence` whose NumPy targets are float64, and
compiles `metrics=[f_score()]`. tf_keras's metric wrapper cast `y_true` and
`y_pred` to float32 before calling the function; Keras 3 passes the batch as
the Sequence gave it, and `y_true[..., :-1] * y_pred` raises `TypeError:
Input 'y' of 'Mul' Op has type float32 that does not match type float64`. The
fix casts both to floatx at the top of the function, as tf_keras did.
"""
import numpy as np
import tensorflow as tf
from tensorflow.keras import backend

EXPECT = "fixes-error"
EXPECT_ERROR = "TypeError"

SIZES = {"small": (4, 16, 3), "large": (16, 64, 10)}  # (batches, image side, epochs)


def f_score(beta=1, smooth=1e-5, threshold=0.5):
    def _f_score(y_true, y_pred):
        y_true = backend.cast(y_true, backend.floatx())
        y_pred = backend.cast(y_pred, backend.floatx())
        y_pred = backend.greater(y_pred, threshold)
        y_pred = backend.cast(y_pred, backend.floatx())

        tp = backend.sum(y_true[..., :-1] * y_pred, axis=[0, 1, 2])
        fp = backend.sum(y_pred, axis=[0, 1, 2]) - tp
        fn = backend.sum(y_true[..., :-1], axis=[0, 1, 2]) - tp
        return ((1 + beta ** 2) * tp + smooth) / ((1 + beta ** 2) * tp + beta ** 2 * fn + fp + smooth)
    return _f_score


class Batches(tf.keras.utils.Sequence):
    def __init__(self, batches, side):
        super().__init__()
        rng = np.random.default_rng(0)
        self.x = rng.random((batches, 4, side, side, 3))
        masks = (self.x[..., :1] > 0.5).astype("float64")
        self.y = np.concatenate([masks, 1.0 - masks, np.ones_like(masks)], axis=-1)  # float64, with a last channel

    def __len__(self):
        return len(self.x)

    def __getitem__(self, index):
        return self.x[index], self.y[index]


def loss(y_true, y_pred):
    return tf.reduce_mean(tf.square(tf.cast(y_true[..., :-1], y_pred.dtype) - y_pred))


def main(size):
    batches, side, epochs = SIZES[size]
    tf.keras.utils.set_random_seed(0)
    model = tf.keras.Sequential([tf.keras.Input((side, side, 3)),
                                 tf.keras.layers.Conv2D(8, 3, padding="same", activation="relu"),
                                 tf.keras.layers.Conv2D(2, 1, activation="sigmoid")])
    model.compile(loss=loss, optimizer=tf.keras.optimizers.Adam(1e-2), metrics=[f_score()])
    history = model.fit(Batches(batches, side), epochs=epochs, verbose=0)
    return np.array(history.history["_f_score"])
