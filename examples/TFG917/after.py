"""TFG917: TensorFlow Addons fails to import under Keras 3.

A training script written for TF 2.3-2.15 takes AdamW from TensorFlow Addons.
tensorflow-addons 0.23.0, its last release, imports Keras 2's internals:
under TF 2.21 / Keras 3 `import tensorflow_addons` raises
`ModuleNotFoundError: No module named 'keras.src.engine'`. The rewrite uses
Keras's own AdamW (the rule's unsafe fix: Keras multiplies the weight decay
by the learning rate and tfa does not, so the decay is divided by the
constant rate to keep the update).
"""
import numpy as np
import tensorflow as tf

EXPECT = "fixes-error"
EXPECT_ERROR = "ModuleNotFoundError"

SIZES = {"small": (4, 16), "large": (32, 64)}  # (steps, features)


def main(size):
    import keras

    steps, d = SIZES[size]
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, d)).astype("float32")
    y = x.sum(axis=1, keepdims=True)
    model = tf.keras.Sequential([tf.keras.Input((d,)), tf.keras.layers.Dense(1, kernel_initializer="zeros")])
    optimizer = keras.optimizers.AdamW(weight_decay=1e-4 / 1e-2, learning_rate=1e-2)
    model.compile(optimizer, "mse")
    history = model.fit(x, y, epochs=steps, verbose=0)
    return np.array(history.history["loss"], dtype=np.float32)
