"""TFG920: a `tf.Variable` held by a Keras 3 layer is not tracked, so `fit` does not train it.

A learnable temperature written for tf.keras 2: `self.t = tf.Variable(1.0)` in
the layer's `__init__`. Keras 2 tracked it as a weight and trained it; Keras 3
(tf.keras in TF 2.16+) does not see it: it is not in `layer.weights`, `fit`
leaves it at 1.0 and `save_weights` would not save it. Nothing raises. The fix
makes it a `keras.Variable`, which Keras 3 tracks: `fit` then trains it.
"""
import numpy as np
import tensorflow as tf

EXPECT = "fixes-behaviour"

SIZES = {"small": (64, 2), "large": (1024, 8)}  # (samples, epochs)


class Temperature(tf.keras.layers.Layer):
    def __init__(self):
        super().__init__()
        self.t = tf.keras.Variable(1.0)

    def call(self, x):
        return x * self.t


def main(size):
    n, epochs = SIZES[size]
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, 1)).astype("float32")
    y = 3.0 * x
    layer = Temperature()
    model = tf.keras.Sequential([tf.keras.Input((1,)), layer])
    model.compile(tf.keras.optimizers.SGD(learning_rate=0.1), "mse")
    model.fit(x, y, epochs=epochs, batch_size=32, verbose=0)
    return np.float32(np.asarray(layer.t)), np.int32(len(layer.weights))


def behaviour_changed(before, after):
    """Before: the temperature stays 1.0 and the layer has no weight; after: it is tracked and trained toward 3."""
    return float(before[0]) == 1.0 and int(before[1]) == 0 and int(after[1]) == 1 and float(after[0]) > 1.5
