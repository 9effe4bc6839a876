"""TFG929: a Keras 3 model trained only through `self.call(...)`, then saved.

A sequence model from a TF 2.x tutorial trains with its own `step`, which
runs the layers through `self.call(x, training=True)`, and saves its weights
at the end. Keras 3 marks a subclassed model built only when it is called
(`self(x)`): after training this way `save_weights` raises `ValueError: You
are saving a model that has not yet been built`. tf_keras saved it. The fix
calls the model itself.
"""
import os
import tempfile

import numpy as np
import tensorflow as tf

EXPECT = "fixes-error"
EXPECT_ERROR = "ValueError"

SIZES = {"small": (64, 50, 8), "large": (4096, 1000, 64)}  # (sequences, vocabulary, embedding width)


class Tagger(tf.keras.Model):
    def __init__(self, vocab, dim):
        super().__init__()
        self.embed = tf.keras.layers.Embedding(vocab, dim)
        self.out = tf.keras.layers.Dense(vocab)
        self.opt = tf.keras.optimizers.Adam(0.01)

    def call(self, x, training=None):
        return self.out(self.embed(x))

    @tf.function
    def step(self, x, y):
        with tf.GradientTape() as tape:
            logits = self.call(x, training=True)
            loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(y, logits, from_logits=True))
        grads = tape.gradient(loss, self.trainable_variables)
        self.opt.apply_gradients(zip(grads, self.trainable_variables))
        return loss


def main(size):
    n, vocab, dim = SIZES[size]
    rng = np.random.default_rng(0)
    x = rng.integers(0, vocab, size=(n, 6))
    y = np.roll(x, -1, axis=1)
    model = Tagger(vocab, dim)
    for _ in range(5):
        loss = model.step(x, y)
    model.save_weights(os.path.join(tempfile.mkdtemp(), "tagger.weights.h5"))
    return float(loss)
