"""TFG305: `shuffle` after `batch`.

`batch(8).shuffle(8)` shuffles whole batches: every epoch has the same eight
batches of consecutive elements, only in another order. The rewrite the docs
recommend shuffles the elements first, then batches them (no automatic fix:
the data the model sees changes).
"""
import tensorflow as tf

EXPECT = "fixes-behaviour"


def main(size):
    count, epochs = (64, 3) if size == "small" else (4096, 5)
    tf.random.set_seed(0)
    ds = tf.data.Dataset.range(count).shuffle(count).batch(8)
    return tf.stack([tf.stack(sorted(list(ds), key=lambda b: int(b[0]))) for _ in range(epochs)])


def behaviour_changed(before, after):
    """Before: the same set of batches every epoch. After: each epoch has its own."""
    def distinct(epochs):
        return len({tuple(map(tuple, sorted(e.tolist()))) for e in epochs})
    return distinct(before) == 1 and distinct(after) == len(after)
