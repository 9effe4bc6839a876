"""TFG923: the learning rate read from `history.history["lr"]`.

A regression script from a TF 2.x tutorial trains with `ReduceLROnPlateau`
and keeps the learning rate of every epoch from the History to plot it.
tf_keras logged the rate as "lr"; Keras 3 (tf.keras in TF 2.16+) logs it as
"learning_rate": `KeyError: 'lr'` after training. The fix reads
`learning_rate`.
"""
import numpy as np
import tensorflow as tf

EXPECT = "fixes-error"
EXPECT_ERROR = "KeyError"

SIZES = {"small": (256, 8, 6), "large": (4096, 64, 12)}  # (samples, features, epochs)


def main(size):
    n, d, epochs = SIZES[size]
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, d)).astype("float32")
    y = x @ rng.standard_normal((d, 1)).astype("float32")
    model = tf.keras.Sequential([tf.keras.Input((d,)), tf.keras.layers.Dense(1, kernel_initializer="zeros")])
    model.compile(tf.keras.optimizers.SGD(learning_rate=0.05), "mse")
    reduce = tf.keras.callbacks.ReduceLROnPlateau(monitor="loss", factor=0.5, patience=0, min_delta=10.0)
    history = model.fit(x, y, batch_size=64, epochs=epochs, verbose=0, callbacks=[reduce])
    rates = np.array(history.history["learning_rate"])
    return rates, np.array(history.history["loss"])
