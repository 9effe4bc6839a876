"""TFG903: modules and names Keras 3 and TensorFlow 2 removed.

An image model from a TF 2.3-era tutorial: the preprocessing layers come from
`tf.keras.layers.experimental.preprocessing`, the augmentation noise from
`tf.random_normal` and a diagonal scaling from `tf.diag`. Under TF 2.21 /
Keras 3 the first raises `AttributeError: module 'tensorflow.keras.layers'
has no attribute 'experimental'`. The derived migration table says each is
the same object as a name Keras 3 / TF 2 keeps (`tf.keras.layers.Rescaling`,
`tf.random.normal`, `tf.linalg.tensor_diag`): the fix spells those.
"""
import numpy as np
import tensorflow as tf

EXPECT = "fixes-error"
EXPECT_ERROR = "AttributeError"

SIZES = {"small": (16, 8), "large": (256, 32)}  # (images, side)


def main(size):
    n, side = SIZES[size]
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, (n, side, side, 3)).astype("float32")
    scale = tf.keras.layers.experimental.preprocessing.Rescaling(1 / 255)
    resize = tf.keras.layers.experimental.preprocessing.Resizing(side // 2, side // 2)
    x = resize(scale(images))
    noise = tf.random_normal(tf.shape(x), stddev=0.01, seed=1)
    weights = tf.diag(tf.ones(3) * 0.5)
    x = tf.tensordot(x + noise, weights, axes=1)
    return tf.reduce_mean(x, axis=[1, 2])
