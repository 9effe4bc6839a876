"""TFG610: ReduceLROnPlateau on a model whose optimizer was built on a LearningRateSchedule.

The optimizer takes its learning rate from `ExponentialDecay`; the callback
then sets the rate when the monitored loss stops improving. Under Keras 3
(TF 2.21) an optimizer built on a schedule has no settable learning rate:
the first reduction raises `TypeError: This optimizer was created with a
LearningRateSchedule object as its learning_rate constructor argument, hence
its learning rate is not settable`. After: a float rate, which the callback
may change (or keep the schedule and drop the callback).
"""
import numpy as np
import tensorflow as tf

EXPECT = "fixes-error"
EXPECT_ERROR = "TypeError"

SIZES = {"small": (3, 16), "large": (10, 64)}  # (epochs, features)


def main(size):
    epochs, d = SIZES[size]
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, d)).astype("float32")
    y = x.sum(axis=1, keepdims=True)
    model = tf.keras.Sequential([tf.keras.Input((d,)), tf.keras.layers.Dense(1, kernel_initializer="zeros")])
    model.compile(optimizer=tf.keras.optimizers.Adam(1e-2), loss="mse")
    # min_delta larger than any improvement: the rate is reduced at the end of the first epoch
    plateau = tf.keras.callbacks.ReduceLROnPlateau(monitor="loss", factor=0.5, patience=0, min_delta=1e9)
    history = model.fit(x, y, epochs=epochs, batch_size=16, verbose=0, shuffle=False, callbacks=[plateau])
    return np.array(history.history["loss"], dtype=np.float32)
