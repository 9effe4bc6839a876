"""TFG407: a Keras model called eagerly at every loop iteration.

An agent-style loop calls a 6-layer MLP on one sample per step, eagerly:
Keras dispatches every layer's ops from Python one by one. After: the same
calls through a `tf.function` made once before the loop. The example returns
the chosen actions and the last step's outputs (the same values).
"""
import numpy as np
import tensorflow as tf

EXPECT = "equivalent"

SIZES = {"small": 100, "large": 1000}  # steps


def _model():
    tf.keras.utils.set_random_seed(0)
    layers = [tf.keras.layers.Dense(256, activation="relu") for _ in range(6)]
    return tf.keras.Sequential([tf.keras.Input((128,))] + layers + [tf.keras.layers.Dense(10)])


def main(size):
    model = _model()
    state = np.linspace(-1.0, 1.0, 128, dtype="float32")
    infer = tf.function(lambda x: model(x, training=False))
    actions = []
    for step in range(SIZES[size]):
        outputs = infer(state[None])
        action = int(tf.argmax(outputs[0]))
        actions.append(action)
        state = np.roll(state, action + 1)
    return np.array(actions), outputs.numpy()
