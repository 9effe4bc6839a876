"""TFG612: a model holding BatchNormalization and Dropout called in a training step without `training=True`.

A Dense-BatchNormalization-Dropout regressor on inputs far from zero is
trained by a custom `tf.function` step that calls `model(x)`. Called without
`training`, both layers run in inference mode: BatchNormalization normalises
with its moving mean and variance and never updates them (they stay at 0 and
1), Dropout drops nothing. After: `model(x, training=True)`, the moving mean
follows the batches' mean and Dropout drops. The example returns the largest
absolute value of the moving mean after training and the loss on held-out
samples (inference mode).
"""
import numpy as np
import tensorflow as tf

EXPECT = "fixes-behaviour"

SIZES = {"small": (512, 150), "large": (4096, 600)}  # (samples, steps)


def main(size):
    n, steps = SIZES[size]
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((n, 8)) * 2.0 + 5.0).astype("float32")
    y = (x @ rng.standard_normal((8, 1)) * 0.1).astype("float32")
    tf.keras.utils.set_random_seed(0)
    inputs = tf.keras.Input((8,))
    hidden = tf.keras.layers.Dense(32)(inputs)
    normed = tf.keras.layers.BatchNormalization(momentum=0.9)(hidden)
    dropped = tf.keras.layers.Dropout(0.2)(tf.keras.layers.ReLU()(normed))
    model = tf.keras.Model(inputs, tf.keras.layers.Dense(1)(dropped))
    optimizer = tf.keras.optimizers.Adam(1e-2)

    @tf.function
    def train_step(xb, yb):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(xb, training=True) - yb))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    cut = n // 4
    train = tf.data.Dataset.from_tensor_slices((x[cut:], y[cut:])).shuffle(n, seed=0).repeat().batch(64)
    for xb, yb in train.take(steps):
        train_step(xb, yb)
    norm = model.layers[2]
    test_loss = float(tf.reduce_mean(tf.square(model(x[:cut], training=False) - y[:cut])))
    return np.array([np.max(np.abs(norm.moving_mean.numpy())), test_loss])


def behaviour_changed(before, after):
    """Before: the moving mean never left 0 (BatchNormalization ran in inference mode). After: it
    follows the batches' mean of the Dense outputs (far from 0 on these inputs)."""
    return before[0] == 0.0 and after[0] > 0.1
