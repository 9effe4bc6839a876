"""TFG905: `tf.gather(params, indices, 1)` gathers rows, not columns.

A classifier's probabilities for every sample (rows) over every class
(columns); the code keeps the columns of a few classes of interest with
`tf.gather(probs, classes, 1)`, as it would with `np.take(probs, classes, 1)`.
But `tf.gather`'s third positional parameter is the deprecated
`validate_indices`, which does nothing: the call gathers rows 1, 3 and 5, the
probabilities of three samples. No error, no warning; the result even has a
plausible shape when the counts line up. The fix passes `axis=1`.
"""
import numpy as np
import tensorflow as tf

EXPECT = "fixes-behaviour"

SIZES = {"small": (64, 10), "large": (4096, 100)}  # (samples, classes)


def main(size):
    n, k = SIZES[size]
    rng = np.random.default_rng(0)
    logits = tf.constant(rng.standard_normal((n, k)).astype("float32"))
    probs = tf.nn.softmax(logits, axis=1)
    classes = [1, 3, 5]
    picked = tf.gather(probs, classes, 1)  # meant: the columns of these classes
    return {"picked": picked, "expected": probs.numpy()[:, classes]}


def behaviour_changed(before, after):
    """Before: the rows of samples 1, 3, 5 (shape (3, k)). After: the class columns (shape (n, 3))."""
    return (before["picked"].shape != before["expected"].shape
            and after["picked"].shape == after["expected"].shape
            and np.allclose(after["picked"], after["expected"]))
