"""TFG201/TFG202 variants: every NumPy creator x shape forms x conversion and its dtype (one-time ones are TFG202's)."""
from __future__ import annotations

import itertools
from typing import Iterator

from fix_execution import Variant

SHAPES = ("3", "(3,)", "(2, 3)", "[2, 3]", "()", "(2, 0)")
DETERMINISTIC = (
    [f"np.zeros({s})" for s in SHAPES]
    + [f"np.ones({s})" for s in SHAPES]
    + [f"np.full({s}, {v})" for s in ("(2, 3)", "3", "()") for v in ("7", "1.5", "-2", "True", "-1.5")]
    + ["np.eye(3)", "np.eye(2, 3)", "np.eye(3, M=2)", "np.identity(3)", "np.eye(0)"]
    + ["np.arange(5)", "np.arange(2, 7)", "np.arange(0, 10, 3)", "np.arange(0.5, 3)", "np.arange(3.0)",
       "np.arange(-2, 2)", "np.arange(1, 2, 0.25)", "np.arange(5, 0, -1)", "np.arange(0)"]
    + ["np.zeros((2, 2), dtype=np.float32)", "np.ones(3, dtype='int32')", "np.zeros(3, dtype=int)",
       "np.ones((2,), dtype=float)", "np.full(3, 2, dtype=np.float32)", "np.full(3, 2.7, dtype=np.int64)",
       "np.eye(2, dtype=np.int32)", "np.arange(4, dtype=np.float32)", "np.arange(0.5, 3, dtype=np.int32)",
       "np.zeros(3, dtype=bool)", "np.ones(2, dtype=np.uint8)", "np.full(2, 300, dtype=np.uint8)"]
)
RANDOM = (
    "np.random.rand()", "np.random.rand(3)", "np.random.rand(2, 3)", "np.random.randn()", "np.random.randn(2, 3)",
    "np.random.random()", "np.random.random(3)", "np.random.random((2, 3))", "np.random.random_sample(size=(2,))",
    "np.random.uniform()", "np.random.uniform(0, 1)", "np.random.uniform(-1, 1, size=3)",
    "np.random.uniform(size=(2, 2))", "np.random.normal()", "np.random.normal(size=3)",
    "np.random.normal(0, 1, (2, 3))",
    "np.random.normal(loc=1.0, scale=2.0, size=(2,))", "np.random.standard_normal(3)", "np.random.standard_normal()",
    "np.random.standard_normal(size=(2, 3))", "np.random.uniform(0, 1, 4)", "np.random.normal(size=[2, 2])",
)
DTYPES = ("", "tf.float32", "tf.float64", "tf.int32", "tf.int64", "tf.float16", "tf.bool")
CONVERTERS = ("tf.constant", "tf.convert_to_tensor", "tf.Variable")


def _variants(creators, effect) -> Iterator[Variant]:
    for creator, converter, dtype in itertools.product(creators, CONVERTERS, DTYPES):
        argument = f", dtype={dtype}" if dtype else ""
        code = f"import numpy as np\nimport tensorflow as tf\n\nx = {converter}({creator}{argument})\n"
        yield Variant(f"{converter[3:]}({creator}{argument})", code, ("TFG201", "TFG202"), effect)
    # Through a local name bound once and used once.
    for creator in creators[::4]:
        code = (f"import numpy as np\nimport tensorflow as tf\n\ndef build():\n    w = {creator}\n"
                f"    return tf.Variable(w)\n")
        yield Variant(f"local-{creator}", code, ("TFG201", "TFG202"), effect, run="x = build()")


def variants() -> Iterator[Variant]:
    yield from _variants(DETERMINISTIC, "identical")
    yield from _variants(RANDOM, "random")
