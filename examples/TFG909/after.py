"""TFG909: Keras 2 optimizer APIs in a custom training step: `get_scaled_loss` and `variables()`.

A model with the custom `train_step` of Keras 2's mixed precision guide: the
loss is scaled with `self.optimizer.get_scaled_loss(loss)`, and a callback-like
check counts the optimizer's slots with `self.optimizer.variables()`. Keras 3
optimizers spell it `scale_loss`, and `variables` is a list: `AttributeError:
'SGD' object has no attribute 'get_scaled_loss'`. The fix calls
`scale_loss(loss)` and reads `variables`.
"""
import numpy as np
import tensorflow as tf

EXPECT = "fixes-error"
EXPECT_ERROR = "AttributeError"

SIZES = {"small": (64, 8), "large": (4096, 64)}  # (samples, features)


class Regressor(tf.keras.Model):
    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            pred = self(x, training=True)
            loss = tf.reduce_mean(tf.square(pred - y))
            scaled = self.optimizer.scale_loss(loss)
        grads = tape.gradient(scaled, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"loss": loss, "slots": len(self.optimizer.variables)}


def main(size):
    n, d = SIZES[size]
    tf.keras.utils.set_random_seed(0)
    x = np.linspace(-1.0, 1.0, n * d, dtype="float32").reshape(n, d)
    y = x.sum(axis=1, keepdims=True)
    inputs = tf.keras.Input((d,))
    model = Regressor(inputs, tf.keras.layers.Dense(1, kernel_initializer="zeros")(inputs))
    model.compile(tf.keras.optimizers.SGD(learning_rate=0.01))
    history = model.fit(x, y, batch_size=32, epochs=2, verbose=0)
    return np.array(history.history["loss"]), np.array(history.history["slots"])
