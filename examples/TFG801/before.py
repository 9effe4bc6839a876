"""TFG801: a Keras model loaded with safe mode off.

The model holds a `Lambda` layer of a Python `lambda`, so it is saved as
bytecode, and loading it back needs `safe_mode=False`: which lets any model
file this code is given run its own Python code while it loads. After: the
function is registered with `keras.utils.register_keras_serializable`, so
Keras saves it by name and loads it with the default safe mode. The example
saves, loads and runs the model both ways; the outputs are the same.
"""
import os
import tempfile

import numpy as np
import tensorflow as tf

EXPECT = "equivalent"

SIZES = {"small": 64, "large": 4096}  # rows


def main(size):
    keras = tf.keras
    inputs = keras.Input((4,))
    scaled = keras.layers.Lambda(lambda x: x * 2.0 + 1.0)(inputs)
    model = keras.Model(inputs, keras.layers.Dense(3, kernel_initializer="ones")(scaled))
    x = np.linspace(-1.0, 1.0, SIZES[size] * 4, dtype="float32").reshape(-1, 4)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.keras")
        model.save(path)
        loaded = keras.models.load_model(path, safe_mode=False)
    return loaded(x).numpy()
