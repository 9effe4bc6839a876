"""TFG614: a Keras attribute set under a wrong-case name.

Transfer learning: a "pretrained" base (here a small model fit on a first
task) is to be frozen while a new head is trained on a second task. The code
writes `base.Trainable = False`: Keras models accept any new attribute, so
this adds a plain `Trainable` and leaves `trainable` True, with no warning.
Fitting the new model then moves the base's weights too. After:
`base.trainable = False`, the base stays exactly as it was. The example
returns how far the base's weights moved, and how many trainable weights the
new model had.
"""
import numpy as np
import tensorflow as tf

EXPECT = "fixes-behaviour"

SIZES = {"small": (256, 5), "large": (2048, 20)}  # (samples, epochs)


def main(size):
    n, epochs = SIZES[size]
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, 8)).astype("float32")
    tf.keras.utils.set_random_seed(0)
    base = tf.keras.Sequential([tf.keras.Input((8,)), tf.keras.layers.Dense(16, activation="relu")])
    pretrain = tf.keras.Sequential([base, tf.keras.layers.Dense(1)])
    pretrain.compile("adam", "mse")
    pretrain.fit(x, x[:, :1], epochs=1, verbose=0)  # the first task
    kept = [w.numpy().copy() for w in base.weights]
    base.trainable = False
    model = tf.keras.Sequential([base, tf.keras.layers.Dense(1, activation="sigmoid")])
    model.compile("adam", "binary_crossentropy")
    model.fit(x, (x[:, 1] > 0).astype("float32"), epochs=epochs, batch_size=32, verbose=0)  # the second task
    moved = max(float(np.abs(w.numpy() - k).max()) for w, k in zip(base.weights, kept))
    return np.array([moved, len(model.trainable_weights)])


def behaviour_changed(before, after):
    """Before: the base's weights moved (it trained) and the new model trained all 4 weights. After:
    the base did not move at all and only the head's 2 weights trained."""
    return before[0] > 0 and before[1] == 4 and after[0] == 0 and after[1] == 2
