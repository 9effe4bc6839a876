"""A longer look at (b) of measure.py: a slow map (10 ms a call) and a slow consumer (10 ms an element).

    /tmp/tf213/bin/python benchmarks/versions/prefetch_long.py [n]

One pass each, in a fresh process (nothing else ran before): default options,
``prefetch(AUTOTUNE)``, ``prefetch(1)``, and ``inject_prefetch = False``; the
total time and its two halves (does an overlap start at once or only later?).
"""
from __future__ import annotations

import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf  # noqa: E402


def slow(x):
    def work(v):
        time.sleep(0.01)
        return v
    return tf.py_function(work, [x], tf.int64)


def main(n: int) -> None:
    off = tf.data.Options()
    off.experimental_optimization.inject_prefetch = False
    plain = tf.data.Dataset.range(n).map(slow)  # noqa: TFG307 (a latency-bound map, on purpose)
    variants = (("default", plain), ("prefetch(AUTOTUNE)", plain.prefetch(tf.data.AUTOTUNE)),
                ("prefetch(1)", plain.prefetch(1)), ("inject_prefetch=False", plain.with_options(off)))
    for label, ds in variants:
        stamps = []
        start = time.perf_counter()
        for _ in ds:
            time.sleep(0.01)
            stamps.append(time.perf_counter() - start)
        half = stamps[n // 2 - 1]
        second = stamps[-1] - half
        print(f"TF {tf.__version__} {label}: {stamps[-1]:.2f} s (first half {half:.2f}, second {second:.2f})",
              flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
