"""TFG912: `super(Net, self).__init__(self)` in a subclassed Keras model.

A subclassed model from a TF 2.x tutorial passes `self` twice to its base's
`__init__`. tf_keras ignored the extra positional; Keras 3 raises `TypeError:
Layer.__init__() takes 1 positional argument but 2 were given` when the model
is made. The fix drops the extra `self`.
"""
import numpy as np
import tensorflow as tf

EXPECT = "fixes-error"
EXPECT_ERROR = "TypeError"

SIZES = {"small": (64, 8), "large": (4096, 64)}  # (samples, features)


class Net(tf.keras.Model):
    def __init__(self, units):
        super(Net, self).__init__(self, name="net")
        self.hidden = tf.keras.layers.Dense(units, activation="relu", kernel_initializer="ones")
        self.out = tf.keras.layers.Dense(1, kernel_initializer="ones")

    def call(self, x):
        return self.out(self.hidden(x))


def main(size):
    n, d = SIZES[size]
    x = np.linspace(-1.0, 1.0, n * d, dtype="float32").reshape(n, d)
    model = Net(d)
    return model.predict(x, batch_size=32, verbose=0)
