"""TFG501: under mixed_float16 the output layer computes in float16 and overflows.

A small classifier is trained under the `mixed_float16` policy on unnormalised
inputs (values up to 255, as raw pixels). Its last `Dense` layer has no dtype
of its own, so its logits are float16: those beyond 65504 become `inf` and the
loss `NaN`. The fix gives the last layer `dtype="float32"`: finite logits and
losses (the rest of the model still computes in float16).
"""
import keras
import numpy as np

EXPECT = "fixes-behaviour"
SIZES = {"small": 64, "large": 1024}


def main(size):
    n = SIZES[size]
    keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        keras.utils.set_random_seed(0)
        x = np.random.RandomState(0).uniform(0, 255, (n, 64)).astype("float32")
        y = np.random.RandomState(1).randint(0, 3, n)
        model = keras.Sequential([
            keras.Input((64,)),
            keras.layers.Dense(3, kernel_initializer=keras.initializers.Constant(10.0)),
        ])
        model.compile(keras.optimizers.SGD(1e-6), keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        logits = model.predict(x, verbose=0)
        history = model.fit(x, y, batch_size=32, epochs=1, verbose=0)
        return {"logits": logits.astype("float32"), "loss": np.float32(history.history["loss"][-1])}
    finally:
        keras.mixed_precision.set_global_policy("float32")


def behaviour_changed(before, after):
    """Before: inf logits and a NaN loss. After: finite logits and loss."""
    return (not np.isfinite(before["logits"]).all() and np.isnan(before["loss"])
            and np.isfinite(after["logits"]).all() and np.isfinite(after["loss"]))
