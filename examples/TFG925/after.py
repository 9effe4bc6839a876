"""TFG925: a Keras 3 model that defines `def loss(self, ...)`.

A word-embedding model from a TF 2.x tutorial trains with its own loop and
computes its loss in a method named `loss`. Keras 3's `Model.__init__` sets
`self.loss = None`, which hides the method: `self.loss(x, y)` raises
`TypeError: 'NoneType' object is not callable`. tf_keras set `loss` only in
`compile`, which this model never calls. The fix renames the method.
"""
import numpy as np
import tensorflow as tf

EXPECT = "fixes-error"
EXPECT_ERROR = "TypeError"

SIZES = {"small": (256, 50, 8), "large": (8192, 1000, 64)}  # (pairs, vocabulary, embedding width)


class CBOW(tf.keras.Model):
    def __init__(self, vocab, dim):
        super().__init__()
        self.embeddings = tf.keras.layers.Embedding(vocab, dim)
        self.out = tf.keras.layers.Dense(vocab)
        self.opt = tf.keras.optimizers.Adam(0.01)

    def call(self, x):
        return self.out(tf.reduce_mean(self.embeddings(x), axis=1))

    def loss_fn(self, x, y):
        logits = self.call(x)
        return tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(y, logits, from_logits=True))

    @tf.function
    def step(self, x, y):
        with tf.GradientTape() as tape:
            loss = self.loss_fn(x, y)
        grads = tape.gradient(loss, self.trainable_variables)
        self.opt.apply_gradients(zip(grads, self.trainable_variables))
        return loss


def main(size):
    n, vocab, dim = SIZES[size]
    rng = np.random.default_rng(0)
    x = rng.integers(0, vocab, size=(n, 4))
    y = x[:, 0]
    model = CBOW(vocab, dim)
    for _ in range(5):
        loss = model.step(x, y)
    return float(loss)
