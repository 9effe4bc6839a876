"""TFG405: a custom training loop whose GradientTape step never leaves eager mode.

`train` builds a small Keras MLP and runs a hand-written training step over a
`tf.data` pipeline. Nothing traces `train_step`, so every step dispatches the
forward pass, the gradient and the Adam update op by op from Python. The step
is graph-safe (no `.numpy()`, `print` or Python state), so the fix decorates
it with `@tf.function`: one trace, then one graph call per step. The losses
and weights are the same (TF 2.21, CPU: bit-identical here); `TOLERANCE`
allows for kernel rounding on other machines.
"""
import keras
import tensorflow as tf

EXPECT = "equivalent"
TOLERANCE = 1e-5  # absolute and relative: graph and eager kernels may round differently

SIZES = {"small": (64, 120), "large": (256, 400)}  # (batch, steps)


def train(batch, steps):
    keras.utils.set_random_seed(0)
    model = keras.Sequential([
        keras.Input((32,)),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(10),
    ])
    optimizer = keras.optimizers.Adam(1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    x = tf.random.stateless_normal((batch * steps, 32), seed=(5, 1))
    y = tf.random.stateless_uniform((batch * steps,), seed=(5, 2), maxval=10, dtype=tf.int32)
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(batch)

    def train_step(features, labels):
        with tf.GradientTape() as tape:
            logits = model(features, training=True)
            loss = loss_fn(labels, logits)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    losses = []
    for features, labels in dataset:
        losses.append(train_step(features, labels))
    return tf.stack(losses), model.trainable_variables[-1]


def main(size):
    batch, steps = SIZES[size]
    return train(batch, steps)
