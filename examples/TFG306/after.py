"""TFG306: a random augmentation `map` without `num_parallel_calls`.

tf.data parallelizes a stateless `map` by itself, but not one whose function
draws random numbers: this augmentation runs one image at a time. The fix
adds `num_parallel_calls=tf.data.AUTOTUNE`. Flips keep each image's pixel
sum, and the element order is kept, so the per-image sums are the same;
which image gets which flip may differ (the fix is unsafe for that reason).
"""
import tensorflow as tf

EXPECT = "equivalent"
TOLERANCE = 1e-3


def augment(image):
    image = tf.image.resize(image, (192, 192))
    image = tf.image.random_flip_left_right(image)
    image = tf.image.random_flip_up_down(image)
    return tf.image.rot90(image, k=tf.random.uniform((), 0, 4, dtype=tf.int32))


def main(size):
    count = 64 if size == "small" else 512
    images = tf.random.stateless_uniform((count, 96, 96, 3), seed=(1, 2))
    ds = tf.data.Dataset.from_tensor_slices(images).map(augment, num_parallel_calls=tf.data.AUTOTUNE).batch(16)
    return tf.concat([tf.reduce_sum(batch, axis=[1, 2, 3]) for batch in ds], axis=0)
