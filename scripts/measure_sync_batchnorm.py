"""Measure what replaces tf_keras's ``layers.experimental.SyncBatchNormalization`` under Keras 3.

Run by a developer (never at lint time): ``python scripts/measure_sync_batchnorm.py``. Each variant
trains one step (fit, SGD, a global batch of 8 whose halves differ in scale) under a
``MirroredStrategy`` over one and over two logical CPUs, each in a fresh process (several
collective-using models in one process can mismatch their collective instances), and the weights
and moving statistics are compared with tf_keras's ``SyncBatchNormalization`` at the same count.
Measured (TF 2.21, tf_keras 2.21.0, Keras 3.15.1): tf_keras ``SyncBatchNormalization``,
tf_keras ``BatchNormalization(synchronized=True)`` and Keras 3 ``BatchNormalization(synchronized=True)``
identical at either count (max abs diff 0); an
unsynchronized ``BatchNormalization`` differs by 5.5 (tf_keras) and 6.6 (Keras 3) at two replicas.
This backs ``semantic.migration_table.CALL_REPLACEMENTS`` (TFG903's fix).
"""
import json
import os
import subprocess
import sys

CHILD = r'''
import os, sys, json
legacy, n, name = sys.argv[1] == "legacy", int(sys.argv[2]), sys.argv[3]
if legacy:
    os.environ["TF_USE_LEGACY_KERAS"] = "1"
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np, tensorflow as tf
cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
K = tf.keras
x = np.linspace(-2, 3, 8 * 3, dtype="float32").reshape(8, 3)
x[4:] *= 3.0
make = {"SyncBatchNormalization": lambda: K.layers.experimental.SyncBatchNormalization(momentum=0.5),
        "BatchNormalization(synchronized=True)": lambda: K.layers.BatchNormalization(momentum=0.5, synchronized=True),
        "BatchNormalization()": lambda: K.layers.BatchNormalization(momentum=0.5)}[name]
strategy = tf.distribute.MirroredStrategy([f"/cpu:{i}" for i in range(n)])
with strategy.scope():
    inputs = K.Input((3,))
    model = K.Model(inputs, K.layers.Dense(1, kernel_initializer="ones")(make()(inputs)))
    model.compile(K.optimizers.SGD(0.1), "mse")
model.fit(x, x.sum(1, keepdims=True), batch_size=8, epochs=1, verbose=0, shuffle=False)
print(json.dumps([np.asarray(w).tolist() for w in model.get_weights()]))
'''


def run(flavour, replicas, name):
    out = subprocess.run([sys.executable, "-c", CHILD, flavour, str(replicas), name], capture_output=True, text=True,
                         env=dict(os.environ, CUDA_VISIBLE_DEVICES="-1"), check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    import numpy as np

    def diff(a, b):
        return max(float(np.max(np.abs(np.array(x) - np.array(y)))) for x, y in zip(a, b))

    variants = [("legacy", "SyncBatchNormalization"), ("legacy", "BatchNormalization(synchronized=True)"),
                ("legacy", "BatchNormalization()"), ("keras3", "BatchNormalization(synchronized=True)"),
                ("keras3", "BatchNormalization()")]
    for replicas in (1, 2):
        reference = run("legacy", replicas, "SyncBatchNormalization")
        for flavour, name in variants:
            found = run(flavour, replicas, name)
            print(f"{replicas} replica(s) {'tf_keras' if flavour == 'legacy' else 'Keras 3'} {name}: "
                  f"max abs diff {diff(reference, found):.3g}")


if __name__ == "__main__":
    main()
