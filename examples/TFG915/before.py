"""TFG915: a weight-decay filter that selects variables by their Keras 2 scoped names.

A training loop from a TF 2.x tutorial adds an L2 penalty on every variable
except the batch-normalization ones, with `"batch_normalization" not in
v.name`. Keras 2 named variables `batch_normalization/gamma:0`; Keras 3 names
them `gamma`, so the filter keeps every variable and the normalization
scales are decayed too, silently. The fix reads `v.path`
(`batch_normalization/gamma`).
"""
import numpy as np
import tensorflow as tf

EXPECT = "fixes-behaviour"

SIZES = {"small": (64, 8), "large": (4096, 64)}  # (samples, features)


def behaviour_changed(before, after):
    # Before: every variable is decayed (6 of 6); after: the BatchNormalization ones are left out (4 of 6).
    return int(before[0]) == 6 and int(after[0]) == 4


def main(size):
    n, d = SIZES[size]
    tf.keras.utils.set_random_seed(0)
    x = np.linspace(-1.0, 1.0, n * d, dtype="float32").reshape(n, d)
    y = x.sum(axis=1, keepdims=True)
    inputs = tf.keras.Input((d,))
    hidden = tf.keras.layers.BatchNormalization()(tf.keras.layers.Dense(8, kernel_initializer="ones")(inputs))
    model = tf.keras.Model(inputs, tf.keras.layers.Dense(1, kernel_initializer="ones")(hidden))
    optimizer = tf.keras.optimizers.SGD(learning_rate=0.01)
    decayed = [v for v in model.trainable_variables if "batch_normalization" not in v.name]

    @tf.function
    def train_step(x_batch, y_batch):
        with tf.GradientTape() as tape:
            pred = model(x_batch, training=True)
            loss = tf.reduce_mean(tf.square(pred - y_batch))
            loss += 1e-2 * tf.add_n([tf.reduce_sum(tf.square(v)) for v in decayed])
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))

    for start in range(0, n, 32):
        train_step(x[start:start + 32], y[start:start + 32])
    return np.array(len(decayed)), model.predict(x, verbose=0)
