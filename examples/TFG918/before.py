"""TFG918: arguments TensorFlow marks deprecated, each with a current spelling.

A generator-fed pipeline written against TF 2.3-era arguments:
`Dataset.from_generator(output_types=..., output_shapes=...)`, a per-row
`tf.map_fn(..., dtype=...)` and `tf.math.l2_normalize(..., dim=...)`. The fix
spells them `output_signature=` (a `tf.TensorSpec` per element),
`fn_output_signature=` and `axis=`: the same elements, `element_spec` and
values, with nothing left for TensorFlow to remove.
"""
import numpy as np
import tensorflow as tf

EXPECT = "equivalent"

SIZES = {"small": (256, 8), "large": (4096, 32)}  # (samples, features)


def main(size):
    n, d = SIZES[size]
    rng = np.random.default_rng(0)
    features = rng.standard_normal((n, d)).astype("float32")
    labels = rng.integers(0, 4, n).astype("int32")

    def rows():
        for x, y in zip(features, labels):
            yield x, y

    ds = tf.data.Dataset.from_generator(rows, output_types=(tf.float32, tf.int32),
                                        output_shapes=((d,), ()))
    ds = ds.batch(64).prefetch(tf.data.AUTOTUNE)
    outputs = []
    for x, y in ds:
        unit = tf.math.l2_normalize(x, dim=1)
        norms = tf.map_fn(lambda row: tf.reduce_sum(row * row), unit, dtype=tf.float32)
        outputs.append(norms + tf.cast(y, tf.float32))
    return tf.concat(outputs, axis=0), np.array([str(ds.element_spec)])
