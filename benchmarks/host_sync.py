"""What reading a training step's result on the host at every step costs (TFG203).

    python benchmarks/host_sync.py [--steps N] [--host-ms MS] [--repeat R]

Each configuration runs in a process of its own (TensorFlow's execution mode is
set once per process): a Dense 256-512-512-10 ``tf.function`` step on batches
of 128 from a prefetching ``tf.data`` pipeline, the step's compute pinned to
one core (``intra_op``/``inter_op`` threads 1) so that the other core plays
the host, and ``--host-ms`` of per-step Python after the point where the loop
converts the loss. Two loops are timed: no conversion in the loop (the loss
read once after it), and ``float(loss)`` every step. Under TensorFlow's
synchronous execution (the CPU default) and its asynchronous execution
(``tf.config.experimental.set_synchronous_execution(False)``, how GPUs run).
Prints milliseconds per step and the ratio, each measured in this run (the
best of ``--repeat`` rounds, alternating the two loops).
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import time

CHILD = "--child"


def child(asynchronous: bool, steps: int, host_ms: float, repeat: int) -> None:
    import os

    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import numpy as np
    import tensorflow as tf

    if asynchronous:
        tf.config.experimental.set_synchronous_execution(False)
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    import keras

    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((256,)), keras.layers.Dense(512, activation="relu"),
                              keras.layers.Dense(512, activation="relu"), keras.layers.Dense(10)])
    optimizer = keras.optimizers.SGD(0.01)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    x = np.random.default_rng(0).random((128 * 64, 256), dtype=np.float32)
    y = np.random.default_rng(1).integers(0, 10, 128 * 64)
    iterator = iter(tf.data.Dataset.from_tensor_slices((x, y)).batch(128).repeat().prefetch(tf.data.AUTOTUNE))

    @tf.function
    def step(xb, yb):
        with tf.GradientTape() as tape:
            loss = loss_fn(yb, model(xb, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    def host_work():  # the loop's own per-step Python (bookkeeping, logging set-up)
        end = time.perf_counter() + host_ms / 1000
        while time.perf_counter() < end:
            pass

    def loop(n: int, convert: bool) -> float:
        start = time.perf_counter()
        for _ in range(n):
            xb, yb = next(iterator)
            loss = step(xb, yb)
            if convert:
                float(loss)
            host_work()
        float(loss)  # the last step finished
        return (time.perf_counter() - start) / n * 1000

    loop(10, False)
    loop(10, True)
    plain, synced = [], []
    for _ in range(repeat):
        plain.append(loop(steps, False))
        synced.append(loop(steps, True))
    print(f"{min(plain):.2f} {min(synced):.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--host-ms", type=float, nargs="+", default=[0.0, 3.0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    for asynchronous in (False, True):
        mode = "asynchronous (as a GPU)" if asynchronous else "synchronous (CPU default)"
        for host_ms in args.host_ms:
            out = subprocess.run([sys.executable, __file__, CHILD, str(int(asynchronous)), str(args.steps),
                                  str(host_ms), str(args.repeat)], capture_output=True, text=True, check=True)
            plain, synced = map(float, out.stdout.split()[-2:])
            print(f"{mode}, {host_ms:g} ms of per-step Python: {plain:.2f} ms/step without a conversion, "
                  f"{synced:.2f} with float(loss) every step ({synced / plain:.2f}x)")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == CHILD:
        child(bool(int(sys.argv[2])), int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5]))
    else:
        main()
