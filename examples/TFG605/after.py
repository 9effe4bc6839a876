"""TFG605: logits fed to a loss that expects probabilities.

The classifier ends in `Dense(4)` with no activation (raw logits), but is
compiled with `SparseCategoricalCrossentropy()`, whose default
`from_logits=False` takes its input for probabilities: it clips the logits
into (0, 1) and trains on that, with no warning. The fix passes
`from_logits=True`. The example trains both on the same data and seed and
returns the true cross-entropy of `softmax(outputs)` and the accuracy.
"""
import numpy as np
import tensorflow as tf

EXPECT = "fixes-behaviour"

SIZES = {"small": (512, 15), "large": (8192, 30)}  # (samples, epochs)


def main(size):
    n, epochs = SIZES[size]
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, 8)).astype("float32")
    y = np.argmax(x[:, :4] + 0.5 * x[:, 4:], axis=1)  # a learnable rule
    tf.keras.utils.set_random_seed(0)
    model = tf.keras.Sequential([tf.keras.Input((8,)), tf.keras.layers.Dense(16, activation="relu"),
                                 tf.keras.layers.Dense(4)])
    model.compile("adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(x, y, epochs=epochs, batch_size=32, verbose=0)
    probabilities = tf.nn.softmax(model(x)).numpy()
    true_loss = tf.keras.losses.sparse_categorical_crossentropy(y, probabilities).numpy().mean()
    accuracy = (probabilities.argmax(axis=1) == y).mean()
    return np.array([true_loss, accuracy])


def behaviour_changed(before, after):
    """After: a lower true loss and a higher accuracy than before."""
    return after[0] < before[0] and after[1] > before[1]
