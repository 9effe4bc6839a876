"""TFG404: a recursive `tf.function` cannot be traced with a tensor argument.

`power` computes `x ** k` by recursion on `k`. Called with a tensor `k`,
AutoGraph turns `if k == 0:` into a `tf.cond` and traces both branches, so
the recursive call is traced again, and again: TensorFlow gives up with a
`StagingError` (a `RecursionError` underneath). The rewrite is a loop over
`tf.range(k)`, which AutoGraph turns into a `tf.while_loop`: one trace.
"""
import tensorflow as tf

EXPECT = "fixes-error"
EXPECT_ERROR = "StagingError"

SIZES = {"small": (64, 5), "large": (256, 8)}  # (n, exponent)


@tf.function
def power(x, k):
    result = tf.ones_like(x)
    for _ in tf.range(k):
        result = result * x
    return result


def main(size):
    n, k = SIZES[size]
    x = tf.random.stateless_uniform((n, n), seed=(9, 10), minval=0.5, maxval=1.5)
    return power(x, tf.constant(k))
