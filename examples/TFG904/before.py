"""TFG904: deprecated spellings that still run, each with an exact current name.

An input pipeline and a training step written against TF 2.4-era names:
`tf.config.experimental.list_physical_devices`, `tf.data.experimental.AUTOTUNE`,
`tf.function(experimental_relax_shapes=True)` and Keras's `LeakyReLU(alpha=)`.
Each logs a deprecation warning under TF 2.21 / Keras 3; the fix spells the
same objects and settings by their current names (`tf.config.list_physical_devices`,
`tf.data.AUTOTUNE`, `reduce_retracing=True`, `negative_slope=`): the same
results, the same number of traces, no warnings.
"""
import numpy as np
import tensorflow as tf

EXPECT = "equivalent"

SIZES = {"small": (512, 16), "large": (8192, 64)}  # (samples, features)


def main(size):
    n, d = SIZES[size]
    devices = tf.config.experimental.list_physical_devices("CPU")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, d)).astype("float32")
    ds = (tf.data.Dataset.from_tensor_slices(x)
          .map(lambda row: row * 2.0, num_parallel_calls=tf.data.experimental.AUTOTUNE)
          .batch(100)
          .prefetch(tf.data.experimental.AUTOTUNE))
    layer = tf.keras.layers.Dense(8, kernel_initializer="ones")
    act = tf.keras.layers.LeakyReLU(alpha=0.1)

    @tf.function(experimental_relax_shapes=True)
    def step(batch):
        return tf.reduce_sum(act(layer(batch)), axis=1)

    outputs = [step(batch) for batch in ds]  # the last batch is shorter: one retrace, relaxed
    return tf.concat(outputs, axis=0), np.array([len(devices), step.experimental_get_tracing_count()])
