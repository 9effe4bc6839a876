"""TFG930: a Keras 3 `Sequence` whose `__init__` does not call `super().__init__()`.

A batch generator from a Keras 2 segmentation project: a `keras.utils.Sequence`
subclass that sets its own attributes and never calls the base constructor
(tf_keras's `Sequence` had none). Keras 3's `Sequence` is its `PyDataset`,
which warns at every `fit` that `super().__init__(**kwargs)` should be called,
and trains with its default loading options. The fix calls it first: the same
losses, without the warning.
"""
import numpy as np
from tensorflow import keras

EXPECT = "equivalent"

SIZES = {"small": (8, 64, 16), "large": (64, 512, 64)}  # (batches, batch size, features)


class Batches(keras.utils.Sequence):
    def __init__(self, x, y, batch_size):
        super().__init__()
        self.x, self.y = x, y
        self.batch_size = batch_size

    def __len__(self):
        return len(self.x) // self.batch_size

    def __getitem__(self, i):
        part = slice(i * self.batch_size, (i + 1) * self.batch_size)
        return self.x[part], self.y[part]


def main(size):
    batches, batch_size, d = SIZES[size]
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batches * batch_size, d)).astype("float32")
    y = x.sum(axis=1, keepdims=True)
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((d,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    history = model.fit(Batches(x, y, batch_size), epochs=2, verbose=0, shuffle=False)
    return np.array(history.history["loss"], "float32"), model.layers[0].kernel.numpy()
