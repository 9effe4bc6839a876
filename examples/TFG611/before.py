"""TFG611: a binary accuracy compiled on a model that outputs logits.

The classifier ends in `Dense(1)` with no activation and is trained with
`BinaryCrossentropy(from_logits=True)`: its outputs are logits, which is
right. But `metrics=["accuracy"]` on a one-unit output is Keras's binary
accuracy, which counts `output > 0.5` as positive: on logits that is
`sigmoid(z) > 0.62`, so the logged accuracy is not the model's. The fix
compiles `BinaryAccuracy(name="accuracy", threshold=0.0)`. The example trains
both on the same data and seed and returns the logged accuracy (`evaluate`)
and the accuracy of the model's predictions (`model(x) > 0`, i.e.
`sigmoid > 0.5`) on held-out data.
"""
import numpy as np
import tensorflow as tf

EXPECT = "fixes-behaviour"

SIZES = {"small": (1024, 20), "large": (16384, 20)}  # (samples, epochs)


def main(size):
    n, epochs = SIZES[size]
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2 * n, 8)).astype("float32")
    y = (x[:, :4].sum(axis=1) + 0.5 * rng.standard_normal(2 * n) > 0).astype("float32")[:, None]
    tf.keras.utils.set_random_seed(0)
    model = tf.keras.Sequential([tf.keras.Input((8,)), tf.keras.layers.Dense(1)])
    loss = tf.keras.losses.BinaryCrossentropy(from_logits=True)
    model.compile(tf.keras.optimizers.Adam(0.01), loss=loss, metrics=["accuracy"])
    model.fit(x[:n], y[:n], epochs=epochs, batch_size=32, verbose=0)
    logged = model.evaluate(x[n:], y[n:], verbose=0, return_dict=True)["accuracy"]
    predicted = (model(x[n:]).numpy() > 0).astype("float32")
    return np.array([logged, (predicted == y[n:]).mean()])


def behaviour_changed(before, after):
    """Before: the logged accuracy is not the predictions' accuracy; after: it is (to float32 rounding)."""
    return abs(before[0] - before[1]) > 1e-6 and abs(after[0] - after[1]) < 1e-6
