"""TFG602: one optimizer for a GAN's two models breaks from TF 2.11 on (the rewrite: one each).

A GAN training step written for TF 2.0-2.10: one Adam optimizer applies the
discriminator's gradients, then the generator's. Since TF 2.11 an optimizer
creates its slots for the variables of its first `apply_gradients` and
refuses any other: Keras 3 raises `ValueError: Unknown variable ... This
optimizer can only be called for the variables it was originally built with`
(tf_keras 2.21: KeyError). The rewrite gives each model its own optimizer.
"""
import numpy as np
import tensorflow as tf

EXPECT = "fixes-error"
EXPECT_ERROR = "ValueError"

SIZES = {"small": (8, 16), "large": (64, 64)}  # (batch, features)


def main(size):
    batch, d = SIZES[size]
    tf.keras.utils.set_random_seed(0)
    generator = tf.keras.Sequential([tf.keras.Input((d,)), tf.keras.layers.Dense(d)])
    discriminator = tf.keras.Sequential([tf.keras.Input((d,)), tf.keras.layers.Dense(1)])
    d_optimizer = tf.keras.optimizers.Adam(1e-3)
    g_optimizer = tf.keras.optimizers.Adam(1e-3)
    x = tf.random.normal((batch, d), seed=1)

    @tf.function
    def train_step():
        with tf.GradientTape() as tape:
            d_loss = tf.reduce_mean(tf.nn.softplus(-discriminator(x))) + tf.reduce_mean(
                tf.nn.softplus(discriminator(generator(x))))
        grads = tape.gradient(d_loss, discriminator.trainable_variables)
        d_optimizer.apply_gradients(zip(grads, discriminator.trainable_variables))
        with tf.GradientTape() as tape:
            g_loss = tf.reduce_mean(tf.nn.softplus(-discriminator(generator(x))))
        grads = tape.gradient(g_loss, generator.trainable_variables)
        g_optimizer.apply_gradients(zip(grads, generator.trainable_variables))
        return tf.stack([d_loss, g_loss])

    losses = [train_step() for _ in range(3)]
    return tf.stack(losses).numpy()
