"""TFG303: a tf.data pipeline consumed with no `prefetch` in it.

The loop reads batches from a pipeline whose `map` does real work (a
resize). With default options tf.data appends a prefetch itself, so the fix
(`.prefetch(tf.data.AUTOTUNE)` at the end) changes no value and, by default,
little time: it makes the overlap explicit, and keeps it when autotuning or
`inject_prefetch` is turned off.
"""
import tensorflow as tf

EXPECT = "equivalent"

SIZES = {"small": (64, 64), "large": (1024, 224)}


def resize(image):
    return tf.image.resize(image, (96, 96))


def main(size):
    count, side = SIZES[size]
    images = tf.random.stateless_uniform((count, side, side, 3), seed=(4, 2))
    ds = tf.data.Dataset.from_tensor_slices(images).map(resize).batch(16)
    sums = []
    for batch in ds:
        sums.append(float(tf.reduce_sum(batch)))
    return sums
