"""TFG911: `self.compiled_metrics.update_state(...)` in a custom `train_step` logs a wrong loss under Keras 3.

The custom `train_step` of Keras 2's "customizing fit" guide updates the
compiled metrics with `self.compiled_metrics.update_state(y, y_pred)` and
returns every metric's result. Keras 3's deprecated shim gives the `loss`
tracker the predictions: `fit` logs the mean prediction as the loss (0.0 on
the first epoch here), not the mean squared error. The rewrite updates
`self.metrics` itself, the `loss` tracker with the loss.
"""
import numpy as np
import tensorflow as tf

EXPECT = "fixes-behaviour"

SIZES = {"small": (64, 8), "large": (4096, 64)}  # (samples, features)


def behaviour_changed(before, after):
    # The same training (identical `mae` histories), a different logged loss: the mean prediction
    # before, the mean squared error after (at least 10x larger here).
    (loss_before, mae_before), (loss_after, mae_after) = before, after
    return bool(np.allclose(mae_before, mae_after) and np.all(loss_after > 10 * np.abs(loss_before)))


class Regressor(tf.keras.Model):
    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(x=x, y=y, y_pred=y_pred)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        for metric in self.metrics:
            if metric.name == "loss":
                metric.update_state(loss)
            else:
                metric.update_state(y, y_pred)
        return {m.name: m.result() for m in self.metrics}


def main(size):
    n, d = SIZES[size]
    x = np.linspace(-1.0, 1.0, n * d, dtype="float32").reshape(n, d)
    y = 3.0 * x.sum(axis=1, keepdims=True) + 2.0
    inputs = tf.keras.Input((d,))
    model = Regressor(inputs, tf.keras.layers.Dense(1, kernel_initializer="zeros")(inputs))
    model.compile(tf.keras.optimizers.SGD(learning_rate=0.001), "mse", metrics=["mae"])
    history = model.fit(x, y, batch_size=n, epochs=3, shuffle=False, verbose=0)
    return np.array(history.history["loss"]), np.array(history.history["mae"])
