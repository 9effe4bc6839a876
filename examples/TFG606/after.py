"""TFG606: softmax probabilities fed to a loss that takes logits.

The classifier ends in `Dense(10, activation="softmax")`, and the custom
training loop computes its loss with
`tf.nn.sparse_softmax_cross_entropy_with_logits` of the model's output: the
loss applies a second softmax to values already in (0, 1), so it trains on
the wrong loss (its gradients are squashed), with no warning. After: the same
loop with `keras.losses.sparse_categorical_crossentropy`, which takes
probabilities. The example trains both on the same data and seed and returns
the true cross-entropy of the predictions, the accuracy and the loss the loop
logged in its last epoch.
"""
import numpy as np
import tensorflow as tf

EXPECT = "fixes-behaviour"

SIZES = {"small": (512, 15), "large": (8192, 30)}  # (samples, epochs)


def main(size):
    n, epochs = SIZES[size]
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, 16)).astype("float32")
    y = np.argmax(x @ rng.standard_normal((16, 10)).astype("float32"), axis=1)  # a learnable rule
    tf.keras.utils.set_random_seed(0)
    model = tf.keras.Sequential([tf.keras.Input((16,)), tf.keras.layers.Dense(32, activation="relu"),
                                 tf.keras.layers.Dense(10, activation="softmax")])
    optimizer = tf.keras.optimizers.Adam(0.01)
    data = tf.data.Dataset.from_tensor_slices((x, y)).batch(32)

    @tf.function
    def train_step(batch_x, batch_y):
        with tf.GradientTape() as tape:
            probabilities = model(batch_x, training=True)
            loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(batch_y, probabilities))
        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        return loss

    logged = 0.0
    for _ in range(epochs):
        losses = [train_step(batch_x, batch_y) for batch_x, batch_y in data]
        logged = float(tf.reduce_mean(losses))
    predictions = model(x).numpy()
    true_loss = tf.keras.losses.sparse_categorical_crossentropy(y, predictions).numpy().mean()
    accuracy = (predictions.argmax(axis=1) == y).mean()
    return np.array([true_loss, accuracy, logged])


def behaviour_changed(before, after):
    """After: a lower true loss, a higher accuracy, and a logged loss that is the true one."""
    return after[0] < before[0] and after[1] > before[1] and abs(after[2] - after[0]) < abs(before[2] - before[0])
