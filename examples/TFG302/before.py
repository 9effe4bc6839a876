"""TFG302: `prefetch` in the middle of a tf.data pipeline.

`prefetch` buffers the source here, while `map` and `batch` after it still run
in the consumer's thread. The fix moves it to the end of the pipeline: the same
elements, with the buffer where it overlaps the whole pipeline with the
consumer. (With default options tf.data also injects a final prefetch itself,
so expect similar timings.)
"""
import tensorflow as tf

EXPECT = "equivalent"


def features(i):
    x = tf.cast(tf.range(20000), tf.float32) * tf.cast(i + 1, tf.float32)
    return tf.reduce_mean(tf.sin(x) * tf.cos(x))


def main(size):
    count = 256 if size == "small" else 4096
    ds = tf.data.Dataset.range(count).prefetch(tf.data.AUTOTUNE).map(features).batch(32)
    weights = tf.linspace(0.0, 1.0, 32)
    total = []
    for batch in ds:
        total.append(float(tf.reduce_sum(batch * weights[: tf.shape(batch)[0]])))
    return total
