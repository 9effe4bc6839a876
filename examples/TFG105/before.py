"""TFG105: `print` of a tensor in a tf.function prints once per trace, and no value.

`log_step` prints the loss it computes. Wrapped in `tf.function` and called
several times with one input signature, its Python body runs only while
TensorFlow traces it: `print` runs once in all and shows the symbolic tensor
(`Tensor("mul:0", shape=(), dtype=float32)`), not a value. After the fix,
`tf.print` is an op of the graph: it prints the loss on every call (to
standard error). `main` counts the lines each prints.
"""
import io
import os
import sys
import tempfile

import tensorflow as tf

EXPECT = "fixes-behaviour"
CALLS = {"small": 3, "large": 100}


def log_step(x):
    loss = tf.reduce_sum(x * x)
    print("loss", loss)
    return loss


def main(size):
    step = tf.function(log_step)  # a new tf.function: traced afresh on every main()
    buffer, stdout = io.StringIO(), sys.stdout
    saved, capture = os.dup(2), tempfile.TemporaryFile()
    sys.stdout = buffer
    os.dup2(capture.fileno(), 2)  # tf.print writes to file descriptor 2 from C++
    try:
        losses = [step(tf.constant([1.0, float(i)])) for i in range(CALLS[size])]
    finally:
        sys.stdout = stdout
        os.dup2(saved, 2)
        os.close(saved)
    capture.seek(0)
    text = buffer.getvalue() + capture.read().decode()
    capture.close()
    printed = sum(1 for line in text.splitlines() if line.startswith("loss"))
    return {"printed": printed, "calls": CALLS[size], "losses": tf.stack(losses)}


def behaviour_changed(before, after):
    """Before: printed once (at trace). After: once per call, the same losses."""
    same_losses = (before["losses"] == after["losses"]).all()
    return before["printed"] == 1 and after["printed"] == after["calls"] and same_losses
