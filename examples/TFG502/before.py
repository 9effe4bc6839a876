"""TFG502: a Keras 3 custom train_step under mixed_float16 that never scales its loss.

`compile` wraps the optimizer in a `LossScaleOptimizer` because the model's
policy is `mixed_float16`. Its `apply_gradients` divides the gradients by the
loss scale (32768 at first), expecting gradients of
`self.optimizer.scale_loss(loss)`. The custom `train_step` differentiates the
plain loss, so every update is 32768 times too small and the model barely
moves. The fix differentiates `self.optimizer.scale_loss(loss)`, as the
built-in `train_step` does: the model trains.
"""
import keras
import numpy as np
import tensorflow as tf

EXPECT = "fixes-behaviour"
SIZES = {"small": 64, "large": 1024}


class Custom(keras.Model):
    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            pred = self(x, training=True)
            loss = self.compute_loss(x=x, y=y, y_pred=pred)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"loss": loss}


def main(size):
    keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        keras.utils.set_random_seed(0)
        n = SIZES[size]
        x = np.random.RandomState(0).randn(n, 8).astype("float32")
        y = x @ np.linspace(-1.0, 1.0, 8, dtype="float32")[:, None]
        inputs = keras.Input((8,))
        hidden = keras.layers.Dense(16, activation="relu")(inputs)
        outputs = keras.layers.Dense(1, dtype="float32")(hidden)
        model = Custom(inputs, outputs)
        model.compile(keras.optimizers.SGD(0.05), "mse")
        start = model.evaluate(x, y, verbose=0)
        model.fit(x, y, batch_size=16, epochs=3, verbose=0)
        return {"start": np.float32(start), "end": np.float32(model.evaluate(x, y, verbose=0))}
    finally:
        keras.mixed_precision.set_global_policy("float32")


def behaviour_changed(before, after):
    """Before: the loss hardly moves (updates / 32768). After: it falls by more than a third."""
    return (abs(before["end"] - before["start"]) < 0.01 * before["start"]
            and after["end"] < 0.66 * after["start"])
