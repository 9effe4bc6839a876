"""TFG406: `tf.config.run_functions_eagerly(True)` left on before training.

The switch is global: Keras' `fit` wraps its train step in a `tf.function`,
and with the switch on that function runs its Python body op by op at every
step. Nothing here needs eager execution, so the fix removes the call and
`fit` trains from the traced graph. The losses and weights are the same
(TF 2.21, CPU: bit-identical here); `TOLERANCE` allows for kernel rounding on
other machines.
"""
import keras
import tensorflow as tf

EXPECT = "equivalent"
TOLERANCE = 1e-5  # absolute and relative: graph and eager kernels may round differently

SIZES = {"small": (64, 300), "large": (256, 1000)}  # (batch, steps per epoch)


def main(size):
    tf.config.run_functions_eagerly(True)
    batch, steps = SIZES[size]
    keras.utils.set_random_seed(0)
    model = keras.Sequential([
        keras.Input((32,)),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(10),
    ])
    model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    x = tf.random.stateless_normal((batch * steps, 32), seed=(6, 1))
    y = tf.random.stateless_uniform((batch * steps,), seed=(6, 2), maxval=10, dtype=tf.int32)
    history = model.fit(x, y, batch_size=batch, epochs=1, shuffle=False, verbose=0)
    return tf.constant(history.history["loss"]), model.trainable_variables[-1]
