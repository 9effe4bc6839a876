"""TFG902: Keras 2 methods that Keras 3 (tf.keras in TF 2.16+) removed.

A custom training loop from a TF 2.x tutorial: a `Mean` metric cleared with
`reset_states()` at the end of each epoch, and a model evaluated with
`evaluate_generator`. Keras 3 metrics and models have neither:
`AttributeError: 'Mean' object has no attribute 'reset_states'`. The fix
calls `reset_state()` and `evaluate(..., verbose=0)`.
"""
import numpy as np
import tensorflow as tf

EXPECT = "fixes-error"
EXPECT_ERROR = "AttributeError"

SIZES = {"small": (8, 16), "large": (64, 64)}  # (batches per epoch, features)


def main(size):
    steps, d = SIZES[size]
    rng = np.random.default_rng(0)
    w = rng.standard_normal((d, 1)).astype("float32")

    def batches():
        while True:
            x = rng.standard_normal((32, d)).astype("float32")
            yield x, x @ w

    model = tf.keras.Sequential([tf.keras.Input((d,)), tf.keras.layers.Dense(1, kernel_initializer="zeros")])
    model.compile(tf.keras.optimizers.SGD(learning_rate=0.05), "mse")
    optimizer = tf.keras.optimizers.SGD(learning_rate=0.05)
    train_loss = tf.keras.metrics.Mean()
    losses = []
    data = batches()

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        train_loss.update_state(loss)

    for epoch in range(2):
        for _ in range(steps):
            train_step(*next(data))
        losses.append(float(train_loss.result()))
        train_loss.reset_states()
    val_loss = model.evaluate_generator(batches(), steps=2)
    return np.array(losses), np.float32(val_loss)
