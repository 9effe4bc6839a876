"""TFG609: features and labels shuffled by two independent permutations.

A perfectly learnable two-class problem (the label is the sign of the first
feature). The training arrays are shuffled before `fit` with
`np.random.shuffle(x)` then `np.random.shuffle(y)`: two draws, two
permutations, so row i no longer has its label. The fix restores NumPy's
random state before the second shuffle, so both get the same permutation.
The example returns the accuracy on a correctly paired test set.
"""
import numpy as np
import tensorflow as tf

EXPECT = "fixes-behaviour"

SIZES = {"small": (1024, 30), "large": (8192, 30)}  # (samples, epochs)


def main(size):
    n, epochs = SIZES[size]
    data = np.random.default_rng(0)
    x = data.standard_normal((n, 4)).astype("float32")
    y = (x[:, 0] > 0).astype("int32")
    x_test = data.standard_normal((n, 4)).astype("float32")
    y_test = (x_test[:, 0] > 0).astype("int32")
    np.random.seed(0)
    np.random.shuffle(x)
    np.random.shuffle(y)
    tf.keras.utils.set_random_seed(0)
    model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(8, activation="relu"),
                                 tf.keras.layers.Dense(2)])
    model.compile("adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(x, y, epochs=epochs, batch_size=32, verbose=0)
    accuracy = (model.predict(x_test, verbose=0).argmax(axis=1) == y_test).mean()
    return np.array([accuracy])


def behaviour_changed(before, after):
    """After: the test accuracy of a learnable rule (near 1) is far above before's (near chance)."""
    return after[0] > before[0] + 0.2
