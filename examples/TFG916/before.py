"""TFG916: Keras 3's `add_weight` takes the weight's name by keyword only.

A learned position embedding written for tf.keras 2, whose signature is
`add_weight(name, shape, ...)`: `self.add_weight("pos_emb", shape=...)`. Keras
3's `add_weight(shape=None, initializer=None, ...)` refuses a positional name:
building the layer raises `ValueError: `name` must be passed as a keyword
argument`. The fix passes `name=`.
"""
import numpy as np
import tensorflow as tf

EXPECT = "fixes-error"
EXPECT_ERROR = "ValueError"

SIZES = {"small": (8, 16), "large": (64, 64)}  # (tokens, features)


class PositionEmbedding(tf.keras.layers.Layer):
    def build(self, input_shape):
        self.pos_emb = self.add_weight("pos_emb", shape=(1, input_shape[1], input_shape[2]), initializer="ones")

    def call(self, x):
        return x + self.pos_emb


def main(size):
    tokens, d = SIZES[size]
    x = np.arange(tokens * d, dtype="float32").reshape(1, tokens, d)
    return PositionEmbedding()(x)
