"""TFG104: a layer with weights built inside a Keras 3 `call` fails under `fit`.

`Regressor.call` creates its hidden `Dense` layer and a `Dropout` on every
call. Eagerly, each call gets new, random, untrained weights; under `fit`
Keras traces `call` into a `tf.function`, and creating variables there on
more than the first trace raises `ValueError: tf.function only supports
singleton tf.Variables created on the first call`. The rewrite creates both
layers once, in `__init__`, and only calls them in `call`.
"""
import keras
import numpy as np

EXPECT = "fixes-error"
EXPECT_ERROR = "ValueError"  # variables created in `call` while `fit` traces it

SIZES = {"small": (256, 16), "large": (16384, 64)}


class Regressor(keras.Model):
    def __init__(self, width, **kwargs):
        super().__init__(**kwargs)
        self.width = width
        self.out = keras.layers.Dense(1)

    def call(self, x, training=False):
        hidden = keras.layers.Dense(self.width, activation="relu")(x)
        hidden = keras.layers.Dropout(0.1)(hidden, training=training)
        return self.out(hidden)


def main(size):
    n, width = SIZES[size]
    rng = np.random.default_rng(0)
    features = rng.normal(0.0, 1.0, (n, width)).astype("float32")
    targets = features.sum(axis=1, keepdims=True)
    keras.utils.set_random_seed(0)
    model = Regressor(width)
    model.compile(optimizer="sgd", loss="mse")
    model.fit(features, targets, batch_size=64, epochs=2, verbose=0)
    return model.predict(features[:64], verbose=0)
