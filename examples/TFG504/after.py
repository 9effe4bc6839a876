"""TFG504: a per-replica mean loss in a step `strategy.run` runs.

A custom training loop under `tf.distribute.MirroredStrategy` over two
logical CPU devices (`LOGICAL_CPUS = 2`: the verify runner splits the CPU
before TensorFlow starts). The step averages the per-example loss with
`tf.reduce_mean`, a mean over its replica's half of the batch; the optimizer
sums the two replicas' gradients, so every update is twice the update of the
same loop on one device. The fix divides the mean by
`num_replicas_in_sync`. The example trains the same model from the same
weights on the same batches with two replicas and with one, and returns the
largest difference between the two runs' weights and both final losses.
"""
import numpy as np
import tensorflow as tf

EXPECT = "fixes-behaviour"
LOGICAL_CPUS = 2

SIZES = {"small": (512, 5), "large": (8192, 20)}  # (samples, epochs)
BATCH = 64


def train(devices, x, y, epochs):
    strategy = tf.distribute.MirroredStrategy(devices)
    tf.keras.utils.set_random_seed(0)
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.Input((8,)), tf.keras.layers.Dense(16, activation="tanh"),
                                     tf.keras.layers.Dense(1)])
        optimizer = tf.keras.optimizers.SGD(0.05)
    dataset = strategy.experimental_distribute_dataset(tf.data.Dataset.from_tensor_slices((x, y)).batch(BATCH))

    def step(features, labels):
        with tf.GradientTape() as tape:
            per_example = tf.reduce_sum(tf.square(labels - model(features, training=True)), axis=1)
            loss = tf.reduce_mean(per_example) / tf.distribute.get_strategy().num_replicas_in_sync
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    @tf.function
    def distributed_step(features, labels):
        return strategy.run(step, args=(features, labels))

    for _ in range(epochs):
        for features, labels in dataset:
            distributed_step(features, labels)
    weights = np.concatenate([w.numpy().ravel() for w in model.trainable_variables])
    final_loss = float(np.mean(np.square(y - model(x).numpy())))
    return weights, final_loss


def main(size):
    n, epochs = SIZES[size]
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, 8)).astype("float32")
    y = (np.sin(x[:, :1]) + 0.5 * x[:, 1:2]).astype("float32")
    devices = [d.name for d in tf.config.list_logical_devices("CPU")[:2]]
    two, two_loss = train(devices, x, y, epochs)
    one, one_loss = train(devices[:1], x, y, epochs)
    return np.array([np.max(np.abs(two - one)), two_loss, one_loss, len(devices)])


def behaviour_changed(before, after):
    """Two replicas (two logical CPUs both times) trained other weights than one device before,
    and the same weights after."""
    return before[3] == after[3] == 2 and before[0] > 1e-3 and after[0] < 1e-4
