"""TFG103: a global counter changed in a tf.function counts traces, not calls.

`count_call` adds 1 to a module-level counter. Wrapped in `tf.function` and
called several times with one input signature, its Python body runs only while
TensorFlow traces it, so the counter grows by 1 in all. After the fix the
counter is a `tf.Variable` changed by `assign_add` inside the graph: it grows
by 1 on every call.
"""
import tensorflow as tf

EXPECT = "fixes-behaviour"
CALLS = {"small": 3, "large": 100}

counter = tf.Variable(0)


def count_call(x):
    counter.assign_add(1)
    return x * 2.0


def main(size):
    step = tf.function(count_call)  # a new tf.function: traced afresh on every main()
    start = int(counter)
    x = tf.constant(1.0)
    for _ in range(CALLS[size]):
        step(x)
    return {"count": int(counter) - start, "calls": CALLS[size]}


def behaviour_changed(before, after):
    """Before: the body ran once (at trace). After: once per call."""
    return before["count"] == 1 and after["count"] == after["calls"]
