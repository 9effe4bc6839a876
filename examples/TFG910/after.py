"""TFG910: `self.compiled_loss(...)` in a custom `train_step`, a deprecated shim under Keras 3.

The custom `train_step` of Keras 2's "customizing fit" guide computes its
loss with `self.compiled_loss(y, y_pred, regularization_losses=self.losses)`.
Keras 3 keeps it only as a shim that warns (`model.compiled_loss() is
deprecated`) and calls `compute_loss`; the fix makes that call directly, and
the model trains to the same weights.
"""
import numpy as np
import tensorflow as tf

EXPECT = "equivalent"
TOLERANCE = 1e-6

SIZES = {"small": (64, 8), "large": (4096, 64)}  # (samples, features)


class Regressor(tf.keras.Model):
    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(x=None, y=y, y_pred=y_pred)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"loss": loss}


def main(size):
    n, d = SIZES[size]
    x = np.linspace(-1.0, 1.0, n * d, dtype="float32").reshape(n, d)
    y = x.sum(axis=1, keepdims=True)
    inputs = tf.keras.Input((d,))
    out = tf.keras.layers.Dense(1, kernel_initializer="zeros", kernel_regularizer="l2")(inputs)
    model = Regressor(inputs, out)
    model.compile(tf.keras.optimizers.SGD(learning_rate=0.01), "mse")
    model.fit(x, y, batch_size=32, epochs=2, shuffle=False, verbose=0)
    return model.predict(x, verbose=0)
