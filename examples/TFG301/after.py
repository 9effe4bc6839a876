"""TFG301: `cache()` before an expensive deterministic `map`.

The pipeline caches the encoded PNG bytes and decodes and resizes every image
again in every epoch. The fix maps first and caches the decoded images: the
same values, decoded once.
"""
import tensorflow as tf

EXPECT = "equivalent"
TOLERANCE = 1e-6


def decode(png):
    image = tf.io.decode_png(png, channels=3)
    return tf.image.resize(image, (128, 128)) / 255.0


def main(size):
    count, epochs = (32, 3) if size == "small" else (256, 5)
    pixels = tf.random.stateless_uniform((16, 256, 256, 3), seed=(1, 2), maxval=256, dtype=tf.int32)
    pngs = tf.map_fn(tf.io.encode_png, tf.cast(pixels, tf.uint8), fn_output_signature=tf.string)
    pngs = tf.tile(pngs, [count // 16])
    ds = tf.data.Dataset.from_tensor_slices(pngs).map(decode).cache().batch(16)
    sums = []
    for _ in range(epochs):
        sums.append(sum(float(tf.reduce_sum(batch)) for batch in ds))
    return sums
