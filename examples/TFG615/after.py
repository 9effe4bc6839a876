"""TFG615: a masked loss averaged over padding too.

The loss of a translation model, written as TensorFlow's old neural machine
translation tutorial wrote it: a per-token cross-entropy, multiplied by a
mask that is 0 on padding, then `tf.reduce_mean`. The mean divides by every
position, padded ones included, so the same target sentences give a smaller
loss when the batch is padded further. The example computes the loss of one
batch padded to its own length and to twice, four times that length. After:
the sum is divided by the number of real positions, and the three losses are
the same.
"""
import numpy as np
import tensorflow as tf

EXPECT = "fixes-behaviour"

SIZES = {"small": (64, 20, 1000), "large": (256, 40, 8000)}  # (sentences, longest, vocabulary)

loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")


def loss_function(real, pred):
    mask = tf.math.logical_not(tf.math.equal(real, 0))
    loss_ = loss_object(real, pred)
    mask = tf.cast(mask, dtype=loss_.dtype)
    loss_ *= mask
    return tf.math.divide_no_nan(tf.reduce_sum(loss_), tf.reduce_sum(tf.broadcast_to(mask, tf.shape(loss_))))


def main(size):
    count, longest, vocabulary = SIZES[size]
    rng = np.random.default_rng(0)
    lengths = rng.integers(2, longest + 1, count)
    real = np.zeros((count, longest), dtype="int64")
    for row, length in enumerate(lengths):
        real[row, :length] = rng.integers(1, vocabulary, length)
    pred = rng.standard_normal((count, longest, vocabulary)).astype("float32")
    losses = []
    for factor in (1, 2, 4):
        pad = longest * (factor - 1)
        losses.append(float(loss_function(tf.constant(np.pad(real, [(0, 0), (0, pad)])),
                                          tf.constant(np.pad(pred, [(0, 0), (0, pad), (0, 0)])))))
    return np.array(losses)


def behaviour_changed(before, after):
    """Before: the loss falls as the padding grows (halves when the length doubles). After: it is the
    mean over real tokens, the same for every padding, and the largest of the before figures."""
    return before[1] < before[0] * 0.6 and np.allclose(after, after[0], rtol=1e-5) and after[0] > before[0]
