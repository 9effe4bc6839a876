"""TFG924: `self.dropout(x, training)`: a layer's mode passed by position.

A transformer encoder block from a TF 2.x tutorial hands its `training`
argument to its dropout layers by position. tf_keras bound it to the
layer's `training` parameter; Keras 3's `fit` calls the model with a Python
`training=True`, and the dropout call raises `ValueError: Only input tensors
may be passed as positional arguments`. The fix passes it as `training=`.
"""
import numpy as np
import tensorflow as tf

EXPECT = "fixes-error"
EXPECT_ERROR = "ValueError"

SIZES = {"small": (64, 8, 16), "large": (1024, 32, 64)}  # (samples, sequence length, width)


class EncoderBlock(tf.keras.layers.Layer):
    def __init__(self, width):
        super().__init__()
        self.attention = tf.keras.layers.MultiHeadAttention(num_heads=2, key_dim=width // 2)
        self.dropout1 = tf.keras.layers.Dropout(0.1)
        self.dropout2 = tf.keras.layers.Dropout(0.1)
        self.norm1 = tf.keras.layers.LayerNormalization()
        self.norm2 = tf.keras.layers.LayerNormalization()
        self.dense = tf.keras.layers.Dense(width, activation="relu")

    def call(self, x, training=None):
        attended = self.dropout1(self.attention(x, x), training=training)
        x = self.norm1(x + attended)
        return self.norm2(x + self.dropout2(self.dense(x), training=training))


def main(size):
    n, length, width = SIZES[size]
    rng = np.random.default_rng(0)
    x = rng.normal(size=(n, length, width)).astype("float32")
    y = (x.mean(axis=(1, 2)) > 0).astype("float32")
    inputs = tf.keras.Input((length, width))
    hidden = EncoderBlock(width)(inputs)
    outputs = tf.keras.layers.Dense(1)(tf.keras.layers.GlobalAveragePooling1D()(hidden))
    model = tf.keras.Model(inputs, outputs)
    model.compile("adam", tf.keras.losses.BinaryCrossentropy(from_logits=True))
    history = model.fit(x, y, batch_size=16, epochs=1, verbose=0)
    return history.history["loss"][-1]
