"""TFG921: `compile(optimizer, loss, metrics)` with the metrics passed positionally.

Keras 2 reads `compile`'s third positional parameter as `metrics`; Keras 3's
third is `loss_weights`. Under Keras 3 this compiles, and `fit` then raises
`ValueError` (the metric names are taken for loss weights). The fix
(`after.py`) passes the metrics by keyword: the same training under both.
"""
import keras
import numpy as np

EXPECT = "fixes-error"
EXPECT_ERROR = "ValueError"

SIZES = {"small": 64, "large": 2048}  # training samples


def main(size):
    keras.utils.set_random_seed(0)
    n = SIZES[size]
    x = np.random.default_rng(0).standard_normal((n, 8)).astype("float32")
    y = (x[:, 0] + x[:, 1] > 0).astype("int32")
    model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16, activation="relu"),
                              keras.layers.Dense(2, activation="softmax")])
    model.compile("adam", "sparse_categorical_crossentropy", ["accuracy"])
    history = model.fit(x, y, epochs=2, batch_size=16, verbose=0, shuffle=False)
    return np.array(history.history["loss"])
