"""TFG613: a callback that watches a validation figure, given to a `fit` with no validation data.

A classifier of noisy labels is fit with `EarlyStopping(monitor="val_loss",
patience=3, restore_best_weights=True)` but no `validation_data` or
`validation_split`: Keras logs no `val_loss`, warns that the metric is not
available, and the callback never stops anything: every epoch runs while the
model memorises the noise. After: `validation_split=0.2`, the same callback
sees `val_loss` rise and stops training early. The example returns the
number of epochs run, the epochs asked for and the loss on samples the model
never saw.
"""
import numpy as np
import tensorflow as tf

EXPECT = "fixes-behaviour"

SIZES = {"small": (400, 60), "large": (3200, 120)}  # (samples, epochs)


def main(size):
    n, epochs = SIZES[size]
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n + 1000, 16)).astype("float32")
    y = (x[:, 0] + rng.standard_normal(n + 1000) > 0).astype("float32")  # a rule with label noise
    x_test, y_test, x, y = x[n:], y[n:], x[:n], y[:n]
    tf.keras.utils.set_random_seed(0)
    model = tf.keras.Sequential([tf.keras.Input((16,)), tf.keras.layers.Dense(128, activation="relu"),
                                 tf.keras.layers.Dense(1, activation="sigmoid")])
    model.compile(tf.keras.optimizers.Adam(0.01), loss="binary_crossentropy")
    stop = tf.keras.callbacks.EarlyStopping(monitor="val_loss", patience=3, restore_best_weights=True)
    history = model.fit(x, y, epochs=epochs, batch_size=32, verbose=0, callbacks=[stop], validation_split=0.2)
    return np.array([len(history.history["loss"]), epochs, model.evaluate(x_test, y_test, verbose=0)])


def behaviour_changed(before, after):
    """Before: every epoch runs (the callback never acts). After: training stops early, and the
    restored best weights do better on unseen samples."""
    return before[0] == before[1] and after[0] < before[0] and after[2] < before[2]
