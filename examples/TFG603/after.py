"""TFG603: a learning-rate schedule doing float math on its int64 step (TF 2.11+).

The Transformer tutorial's warm-up schedule as written for TF 2.0-2.10, whose
optimizers called it with a float32 step. From TF 2.11 (Keras 3, and
tf_keras's new optimizers) the schedule gets `optimizer.iterations`, an
int64 tensor, and `tf.math.rsqrt(step)` fails on the first step: in this
`tf.function`, `TypeError: Value passed to parameter 'x' has DataType int64
not in list of allowed values` (run eagerly, `InvalidArgumentError`). The fix casts the step to float32 first, as the old
optimizers did.
"""
import numpy as np
import tensorflow as tf

EXPECT = "fixes-error"
EXPECT_ERROR = "TypeError"

SIZES = {"small": (8, 16), "large": (64, 64)}  # (steps, features)


class CustomSchedule(tf.keras.optimizers.schedules.LearningRateSchedule):
    def __init__(self, d_model, warmup_steps=4):
        super().__init__()
        self.d_model = tf.cast(d_model, tf.float32)
        self.warmup_steps = warmup_steps

    def __call__(self, step):
        step = tf.cast(step, tf.float32)
        arg1 = tf.math.rsqrt(step)
        arg2 = step * (self.warmup_steps ** -1.5)
        return tf.math.rsqrt(self.d_model) * tf.math.minimum(arg1, arg2)


def main(size):
    steps, d = SIZES[size]
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, d)).astype("float32")
    y = x.sum(axis=1, keepdims=True)
    model = tf.keras.Sequential([tf.keras.Input((d,)), tf.keras.layers.Dense(1, kernel_initializer="zeros")])
    optimizer = tf.keras.optimizers.Adam(CustomSchedule(d))

    @tf.function
    def train_step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss

    losses = [train_step() for _ in range(steps)]
    return tf.stack(losses).numpy()
