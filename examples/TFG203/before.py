"""TFG203: a training loop that reads the step's loss on the host at every step.

`train` runs a `tf.function` training step over a prefetching `tf.data`
pipeline and, at every step, turns the returned loss into a Python float to
keep it. On a GPU (asynchronous execution) each `float(loss)` blocks
until that step has finished, so the loop's own Python work after it cannot
overlap the device's work. The rewrite (`after.py`) keeps every loss as a
tensor and reads them all once after the loop: the same losses. On a
CPU-only machine TensorFlow runs synchronously, so the timings show no gain
there (see the rule's measured effect).
"""
import numpy as np
import tensorflow as tf

EXPECT = "equivalent"

SIZES = {"small": 40, "large": 400}  # training steps


def train(steps):
    tf.keras.utils.set_random_seed(0)
    model = tf.keras.Sequential([
        tf.keras.Input((32,)),
        tf.keras.layers.Dense(64, activation="relu"),
        tf.keras.layers.Dense(1),
    ])
    optimizer = tf.keras.optimizers.SGD(0.01)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((steps * 16, 32)).astype("float32")
    y = rng.standard_normal((steps * 16, 1)).astype("float32")
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(16).prefetch(tf.data.AUTOTUNE)

    @tf.function
    def train_step(xb, yb):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(xb, training=True) - yb))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    history = []
    for xb, yb in dataset:
        loss = train_step(xb, yb)
        history.append(float(loss))
    return np.array(history, dtype="float32")


def main(size):
    return train(SIZES[size])
