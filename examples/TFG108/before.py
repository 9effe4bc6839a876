"""TFG108: NumPy noise drawn in a tf.function is drawn once, at trace time.

`add_noise` adds Gaussian noise from `np.random.normal` to its input. Wrapped
in `tf.function`, its Python body runs only while TensorFlow traces it, so the
"random" noise becomes a constant of the graph: every call adds the same
noise. After the fix the noise comes from `tf.random.normal` (same
distribution, same float64 dtype and shape), an op that draws anew at every
call.
"""
import numpy as np
import tensorflow as tf

EXPECT = "fixes-behaviour"
CALLS = {"small": 3, "large": 100}


def main(size):
    @tf.function
    def add_noise(x):
        noise = tf.constant(np.random.normal(0.0, 1.0, size=(1024,)))
        return x + tf.cast(noise, x.dtype)

    x = tf.zeros(1024)
    return [add_noise(x) for _ in range(CALLS[size])]


def behaviour_changed(before, after):
    """Before: every call returns the same noise. After: each call draws its own."""
    import numpy

    same = [numpy.array_equal(before[0], b) for b in before[1:]]
    fresh = [not numpy.array_equal(after[0], a) for a in after[1:]]
    return all(same) and all(fresh)
