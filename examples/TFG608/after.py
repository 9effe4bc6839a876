"""TFG608: validation on the training data.

A classifier of noisy labels is fit with `validation_data=(x, y)`: the very
arrays it trains on. Keras evaluates them at each epoch's end and logs the
result as `val_loss`, so the validation loss is the training data's loss
(`model.evaluate(x, y)`), and it keeps falling while the model memorises the
noise. After: a fifth of the samples is held out and given as
`validation_data`; `val_loss` is then the loss on samples the model never saw,
above the training data's. The example returns the last epoch's `val_loss`
and the loss on the data `fit` trained on.
"""
import numpy as np
import tensorflow as tf

EXPECT = "fixes-behaviour"

SIZES = {"small": (320, 30), "large": (2560, 60)}  # (samples, epochs)


def main(size):
    n, epochs = SIZES[size]
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, 16)).astype("float32")
    y = (x[:, 0] + rng.standard_normal(n) > 0).astype("float32")  # a rule with label noise
    tf.keras.utils.set_random_seed(0)
    model = tf.keras.Sequential([tf.keras.Input((16,)), tf.keras.layers.Dense(64, activation="relu"),
                                 tf.keras.layers.Dense(1, activation="sigmoid")])
    model.compile("adam", loss="binary_crossentropy")
    cut = n // 5
    x_train, y_train, x_val, y_val = x[cut:], y[cut:], x[:cut], y[:cut]  # a held-out fifth
    history = model.fit(x_train, y_train, epochs=epochs, batch_size=32, verbose=0,
                        validation_data=(x_val, y_val))
    return np.array([history.history["val_loss"][-1], model.evaluate(x_train, y_train, verbose=0)])


def behaviour_changed(before, after):
    """Before: the validation loss is the training data's loss. After: it is the held-out samples',
    higher than the training data's (the overfitting the validation figure exists to show)."""
    return abs(before[0] - before[1]) <= 1e-5 * max(1.0, abs(before[1])) and after[0] > after[1] * 1.05
