"""TFG616: the generator's gradients taken from a tape that never ran it.

A small GAN on 2-D Gaussian data. The training step makes the fake samples
once, before the two tapes, and reuses them: fine for the discriminator, but
the generator's tape records only the discriminator, so the generator's
gradients are all None and `apply_gradients` raises ValueError ("No
gradients provided for any variable"). After: the generator runs inside its
own tape. The example returns the two losses after a few steps.
"""
import numpy as np
import tensorflow as tf

EXPECT = "fixes-error"
EXPECT_ERROR = "ValueError"

SIZES = {"small": (64, 20), "large": (512, 200)}  # (batch, steps)

bce = tf.keras.losses.BinaryCrossentropy(from_logits=True)


def build():
    tf.keras.utils.set_random_seed(0)
    generator = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(16, activation="relu"),
                                     tf.keras.layers.Dense(2)])
    discriminator = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(16, activation="relu"),
                                         tf.keras.layers.Dense(1)])
    return generator, discriminator, tf.keras.optimizers.Adam(1e-3), tf.keras.optimizers.Adam(1e-3)


def main(size):
    batch, steps = SIZES[size]
    generator, discriminator, g_opt, d_opt = build()
    rng = np.random.default_rng(0)

    @tf.function
    def train_step(real, noise):
        fake = generator(noise)
        with tf.GradientTape() as tape:
            real_logits, fake_logits = discriminator(real), discriminator(fake)
            d_loss = bce(tf.ones_like(real_logits), real_logits) + bce(tf.zeros_like(fake_logits), fake_logits)
        grads = tape.gradient(d_loss, discriminator.trainable_variables)
        d_opt.apply_gradients(zip(grads, discriminator.trainable_variables))
        with tf.GradientTape() as tape:
            fake_logits = discriminator(fake)
            g_loss = bce(tf.ones_like(fake_logits), fake_logits)
        grads = tape.gradient(g_loss, generator.trainable_variables)
        g_opt.apply_gradients(zip(grads, generator.trainable_variables))
        return d_loss, g_loss

    for _ in range(steps):
        real = rng.normal([2.0, -1.0], 0.5, (batch, 2)).astype("float32")
        noise = rng.standard_normal((batch, 4)).astype("float32")
        d_loss, g_loss = train_step(real, noise)
    return np.array([float(d_loss), float(g_loss)])
