"""TFG927: a subclassed Keras model built with `model.build(input_shape)`, then reloaded.

An image classifier from a TF 2.x tutorial (a ResNet-style `tf.keras.Model`
subclass with its layers and residual blocks made in `__init__` and no `build`) makes its model in
`get_model()`, which calls `model.build(input_shape=(None, H, W, C))`; training
saves the weights, and evaluation loads them into a fresh `get_model()`.
tf_keras's `build` traced `call` and created every weight; Keras 3's creates
none ("`build()` was called on layer ..., however the layer does not have a
`build()` method"), so `load_weights` raises `ValueError: A total of N objects
could not be loaded`. The fix calls the model on
`tf.keras.Input(batch_shape=...)`.
"""
import os
import tempfile

import numpy as np
import tensorflow as tf

EXPECT = "fixes-error"
EXPECT_ERROR = "ValueError"

SIZES = {"small": (32, 16), "large": (512, 64)}  # (images, side)


class Residual(tf.keras.layers.Layer):
    def __init__(self, filters):
        super().__init__()
        self.conv = tf.keras.layers.Conv2D(filters, 3, padding="same")
        self.norm = tf.keras.layers.BatchNormalization()

    def call(self, inputs, training=None):
        return tf.nn.relu(self.norm(self.conv(inputs), training=training) + inputs)


class SmallResNet(tf.keras.Model):
    def __init__(self, classes):
        super().__init__()
        self.conv = tf.keras.layers.Conv2D(8, 3, padding="same")
        self.norm = tf.keras.layers.BatchNormalization()
        self.blocks = tf.keras.Sequential([Residual(8), Residual(8)])
        self.pool = tf.keras.layers.GlobalAveragePooling2D()
        self.head = tf.keras.layers.Dense(classes, activation="softmax")

    def call(self, inputs, training=None, mask=None):
        x = tf.nn.relu(self.norm(self.conv(inputs), training=training))
        x = self.blocks(x, training=training)
        return self.head(self.pool(x))


def resnet():
    return SmallResNet(classes=4)


def get_model(side):
    model = resnet()
    model(tf.keras.Input(batch_shape=(None, side, side, 3)), training=False)
    return model


def main(size):
    n, side = SIZES[size]
    rng = np.random.default_rng(0)
    x = rng.uniform(-1.0, 1.0, size=(n, side, side, 3)).astype("float32")
    y = rng.integers(0, 4, size=(n,))
    model = get_model(side)
    optimizer = tf.keras.optimizers.SGD(0.1)

    @tf.function
    def train_step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.keras.losses.sparse_categorical_crossentropy(y, model(x, training=True)))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))

    for _ in range(3):
        train_step()
    path = os.path.join(tempfile.mkdtemp(), "resnet.weights.h5")
    model.save_weights(path)
    restored = get_model(side)
    restored.load_weights(path)
    return restored(x, training=False).numpy()
