"""TFG617: an evaluation step that runs the model in training mode.

A regression model with a `BatchNormalization` layer is trained with a
custom loop; its `test_step` calls it with `training=True`, so each
evaluation batch is normalised with its own statistics and the layer's
moving mean and variance are pulled toward the evaluation data, which here
is shifted from the training data. After: `training=False`; the evaluation
uses the statistics learnt in training and leaves them as they were. The
example returns the evaluation loss and how far the evaluation moved the
moving mean.
"""
import numpy as np
import tensorflow as tf

EXPECT = "fixes-behaviour"

SIZES = {"small": (256, 10), "large": (4096, 20)}  # (samples, epochs)


def main(size):
    n, epochs = SIZES[size]
    rng = np.random.default_rng(0)
    x = rng.normal(0.0, 1.0, (n, 8)).astype("float32")
    w = rng.normal(size=(8, 1))
    y = (x @ w).astype("float32")
    x_test = (rng.normal(0.0, 1.0, (n // 4, 8)) + 2.0).astype("float32")  # shifted inputs
    y_test = (x_test @ w).astype("float32")
    tf.keras.utils.set_random_seed(0)
    model = tf.keras.Sequential([tf.keras.Input((8,)), tf.keras.layers.Dense(16),
                                 tf.keras.layers.BatchNormalization(), tf.keras.layers.Dense(1)])
    optimizer = tf.keras.optimizers.Adam(1e-2)

    @tf.function
    def train_step(xb, yb):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(xb, training=True) - yb))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    @tf.function
    def test_step(xb, yb):
        return tf.reduce_mean(tf.square(model(xb, training=False) - yb))

    data = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(n, seed=0).batch(32)
    for _ in range(epochs):
        for xb, yb in data:
            train_step(xb, yb)
    trained_mean = model.layers[1].moving_mean.numpy().copy()
    losses = [float(test_step(x_test[i:i + 32], y_test[i:i + 32])) for i in range(0, len(x_test), 32)]
    moved = float(np.abs(model.layers[1].moving_mean.numpy() - trained_mean).max())
    return np.array([np.mean(losses), moved])


def behaviour_changed(before, after):
    """Before: evaluating moved the moving mean. After: it left it where training put it."""
    return before[1] > 1e-3 and after[1] == 0.0
