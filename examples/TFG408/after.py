"""TFG408: an op applied to each image of a batch when one call on the batch does the same.

A preprocessing function standardises every image of a batch with `tf.map_fn`
and turns them to grayscale one by one in a list comprehension, then stacks the results.
After: each op is called once on the whole batch (what `--fix` writes). The
example returns the preprocessed batch (the same values).
"""
import tensorflow as tf

EXPECT = "equivalent"

SIZES = {"small": 64, "large": 256}  # images per batch


def preprocess(images):
    images = tf.image.per_image_standardization(images)
    return tf.image.rgb_to_grayscale(images)


def main(size):
    images = tf.random.stateless_uniform((SIZES[size], 32, 32, 3), seed=(1, 2), maxval=255.0)
    out = None
    for _ in range(5):
        out = preprocess(images)
    return out
