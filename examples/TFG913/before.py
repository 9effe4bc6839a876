"""TFG913: `tf.keras.Input(shape=n_features)` with an int.

A tabular-data model from a TF 2.x tutorial reads the number of features
from the data and passes it as the input's shape. tf_keras read the int as a
1-D shape; Keras 3 raises `ValueError: Cannot convert '8' to a shape.` The
fix writes the one-element tuple.
"""
import numpy as np
import tensorflow as tf

EXPECT = "fixes-error"
EXPECT_ERROR = "ValueError"

SIZES = {"small": (64, 8), "large": (4096, 64)}  # (samples, features)


def main(size):
    n, d = SIZES[size]
    x = np.linspace(-1.0, 1.0, n * d, dtype="float32").reshape(n, d)
    n_features = x.shape[1]
    inputs = tf.keras.Input(shape=n_features)
    hidden = tf.keras.layers.Dense(16, activation="relu", kernel_initializer="ones")(inputs)
    model = tf.keras.Model(inputs, tf.keras.layers.Dense(1, kernel_initializer="ones")(hidden))
    return model.predict(x, batch_size=32, verbose=0)
