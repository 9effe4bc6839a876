"""TFG106: a tf.function that appends to a list it is given raises ValueError.

`collect` scales a batch and appends the result to the list `outputs` passed
in. While tracing, `tf.function` compares its arguments before and after the
Python body and stops at the first call: `ValueError: collect(x, outputs)
should not modify its Python input arguments`. The rewrite returns the value
and lets the caller keep the list.
"""
import tensorflow as tf

EXPECT = "fixes-error"
EXPECT_ERROR = "ValueError"
BATCHES = {"small": 4, "large": 64}


def main(size):
    @tf.function
    def collect(x, outputs):
        outputs.append(x * 2.0)
        return tf.reduce_sum(x)

    outputs = []
    totals = []
    for i in range(BATCHES[size]):
        totals.append(collect(tf.fill([256], float(i)), outputs))
    return {"outputs": tf.stack(outputs), "totals": tf.stack(totals)}
