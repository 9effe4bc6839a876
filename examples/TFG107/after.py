"""TFG107: a module-level threshold changed after the first call is ignored by the graph.

`count_above` counts the values above a module-level `threshold`. Wrapped in
`tf.function`, it reads `threshold` once, while TensorFlow traces it, and the
graph keeps 0.5 as a constant: lowering the threshold to 0.1 before the second
call changes nothing. After the rewrite `threshold` is a `tf.Variable`, which
the graph reads at every call: the second count sees 0.1.
"""
import tensorflow as tf

EXPECT = "fixes-behaviour"
SIZES = {"small": 1_000, "large": 1_000_000}

threshold = tf.Variable(0.5)


def count_above(x):
    return tf.reduce_sum(tf.cast(x > threshold, tf.int32))


def main(size):
    count = tf.function(count_above)  # a new tf.function: traced afresh on every main()
    x = tf.linspace(0.0, 1.0, SIZES[size])
    threshold.assign(0.5)
    first = count(x)
    threshold.assign(0.1)
    second = count(x)
    return {"first": first, "second": second}


def behaviour_changed(before, after):
    """Before: both counts use 0.5. After: the second uses 0.1 and counts more."""
    return int(before["first"]) == int(before["second"]) and int(after["second"]) > int(after["first"])
