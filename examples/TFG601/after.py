"""TFG601: a greedy agent that calls `model.predict` on one state at every step.

`rollout` runs a small Q-network over a toy environment (a fixed random walk
of states): at every step it reshapes the state to a batch of one and calls
`model.predict`, which sets up Keras's whole inference loop (data adapter,
callbacks, iterator, a `tf.function` step, NumPy conversion) for a single row.
The rewrite (`after.py`) calls the model directly, `model(x, training=False)`,
and reads the result with `.numpy()`: the same actions and Q-values (a batch
of one is one forward pass either way; TF 2.21, CPU: bit-identical here),
many times faster. `TOLERANCE` allows for kernel rounding elsewhere.
"""
import keras
import numpy as np

EXPECT = "equivalent"
TOLERANCE = 1e-6

SIZES = {"small": 20, "large": 200}  # environment steps


def build(state_dim, actions):
    keras.utils.set_random_seed(0)
    model = keras.Sequential([
        keras.Input((state_dim,)),
        keras.layers.Dense(32, activation="relu"),
        keras.layers.Dense(16, activation="relu"),
        keras.layers.Dense(actions),
    ])
    model.compile(loss="mse", optimizer="adam")
    return model


def rollout(steps, state_dim=4, actions=2):
    model = build(state_dim, actions)
    walk = np.random.default_rng(0).standard_normal((steps + 1, state_dim)).astype("float32")
    state = walk[0]
    chosen, values = [], []
    for t in range(steps):
        q = model(np.reshape(state, [1, state_dim]), training=False).numpy()[0]
        action = int(np.argmax(q))
        chosen.append(action)
        values.append(q)
        state = walk[t + 1] * (1.0 if action else -1.0)
    return np.array(chosen), np.stack(values)


def main(size):
    return rollout(SIZES[size])
