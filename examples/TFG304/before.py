"""TFG304: `shuffle` before `cache()`.

The cache stores the first epoch's shuffled order and replays it: every
epoch after the first sees the elements in the same order. The fix moves the
shuffle after the cache, so each epoch gets a new order (unsafe: the order
changes, on purpose).
"""
import tensorflow as tf

EXPECT = "fixes-behaviour"


def main(size):
    count, epochs = (64, 3) if size == "small" else (4096, 5)
    tf.random.set_seed(0)
    ds = tf.data.Dataset.range(count).shuffle(count).map(lambda x: x * 2).cache().batch(16)
    return tf.stack([tf.concat(list(ds), axis=0) for _ in range(epochs)])


def behaviour_changed(before, after):
    """Before: every epoch in the same order. After: the epochs differ."""
    def distinct(orders):
        return len({tuple(row) for row in orders.tolist()})
    return distinct(before) == 1 and distinct(after) == len(after)
