from __future__ import annotations

from typing import Optional

import libcst as cst

from tflint_gpu.semantic.api import EAGER_WRAPPERS
from tflint_gpu.semantic.datasets import chains, flagged_calls, function_calls, map_function, method, short_name
from tflint_gpu.rules.base import Rule, clean, flagged

# Transformations whose first argument is a function tf.data traces.
_TAKES_FUNCTION = frozenset({"map", "filter", "flat_map", "interleave"})


class PyFunctionInDatasetMap(Rule):
    """`tf.py_function` / `tf.numpy_function` inside a `tf.data` transformation (a hint).

    ## What it does
    Finds a `map`, `filter`, `flat_map` or `interleave` whose function (a
    lambda, a `def`, a `functools.partial`, a callable object, and the
    functions of the module it calls) calls `tf.py_function`,
    `tf.numpy_function` or `tf.compat.v1.py_func`. Calls only under a Python
    flag (`if self._debug:`) are not counted.

    Off by default: wrapping Python is often the only way to use a library
    (a tokenizer, PIL, librosa), and the rule cannot tell. Enable it with
    `--extend-select TFG307` to review a pipeline's Python.

    ## Why is this bad?
    * The Python runs under the GIL: tf.data does not parallelize such a map
      by itself (a stateful function), and with `num_parallel_calls` the
      calls still take turns unless the Python releases the GIL (I/O,
      NumPy's larger kernels).
    * The output has an unknown shape (`TensorSpec(shape=<unknown>)`):
      later stages and the model see no shape unless you `set_shape` or
      `tf.ensure_shape` it.
    * The pipeline cannot be serialized (SavedModel, tf.data service,
      `Dataset.save` of the graph) and runs in the Python process only.

    ## Example
    ```python
    def parity(x):
        return tf.py_function(lambda v: v.numpy() % 2, [x], tf.int64)

    ds = tf.data.Dataset.range(100).map(parity)
    ```

    Use instead:
    ```python
    ds = tf.data.Dataset.range(100).map(lambda x: x % 2)
    ```

    ## Fix safety
    No fix: the Python has to be rewritten in TF ops by hand, where that is
    possible at all.

    ## Measured effect
    TF 2.21, CPU (2 cores, shared): 100 elements each doing a 60,000-step
    Python loop in a `tf.py_function`: 0.13 s sequential, 0.15-0.21 s with
    `num_parallel_calls=AUTOTUNE` (the GIL), 0.013-0.031 s with the same
    work as TF ops. `element_spec` of the py_function map:
    `TensorSpec(shape=<unknown>, dtype=tf.int64)`; of the TF-op map:
    `TensorSpec(shape=(), ...)`. `examples/TFG307` (a sum of squares per
    record, 256 records of 64 values, `tflint-gpu verify --device cpu --size
    small`): the same values, faster with TF ops than with `tf.py_function`
    (even with `num_parallel_calls`); the times are in the measurement
    below.
    """

    code = "TFG307"
    name = "py-function-in-dataset-map"
    message = "Python in a tf.data function: it runs under the GIL, with an unknown output shape"
    needs = (("py_function", "numpy_function", "py_func"),)
    default_enabled = False

    def visit_Module(self, node: cst.Module, ctx) -> None:
        for chain in chains(ctx):
            for stage in chain.stages:
                name = method(stage)
                if name in _TAKES_FUNCTION:
                    found = _python_call(stage, chain.scope, ctx)
                    if found is not None:
                        ctx.report(stage.func.attr, f"`{short_name(found)}` in a `{name}` runs Python under the "
                                                    "GIL, with an unknown output shape")

    cases = [
        flagged(
            """
            import tensorflow as tf

            def parity(x):
                return tf.py_function(lambda v: v.numpy() % 2, [x], tf.int64)

            ds = tf.data.Dataset.range(100).map(parity, num_parallel_calls=tf.data.AUTOTUNE)
            """,
            at=[(6, 33, "`tf.py_function` in a `map` runs Python under the GIL")],
        ),
        flagged(
            """
            import numpy as np
            import tensorflow as tf

            def decode(path):
                return np.float32(len(path))

            def load(path):
                value = tf.numpy_function(decode, [path], tf.float32)
                return tf.ensure_shape(value, ())

            files = tf.data.Dataset.from_tensor_slices(["a", "bb"])
            ds = files.map(lambda p: load(p)).filter(lambda v: tf.numpy_function(np.isfinite, [v], tf.bool))
            """,
            at=[(12, 12, "`tf.numpy_function` in a `map`"), (12, 35, "`tf.numpy_function` in a `filter`")],
            note="through a function the lambda calls; and in a filter",
        ),
        clean(
            """
            import tensorflow as tf

            ds = tf.data.Dataset.range(100).map(lambda x: x % 2)
            y = tf.py_function(lambda v: v, [tf.constant(1)], tf.int32)
            """,
            note="TF ops in the map; a py_function outside any pipeline",
        ),
        clean(
            """
            import tensorflow as tf

            class Load:
                def __init__(self, debug):
                    self._debug = debug

                def __call__(self, x):
                    if self._debug:
                        tf.py_function(print, [x], [])
                    return x * 2

            ds = tf.data.Dataset.range(3).map(Load(debug=False))
            """,
            note="only under a Python flag",
        ),
    ]


def _python_call(stage: cst.Call, scope, ctx) -> Optional[str]:
    func = map_function(stage)
    calls = function_calls(func, scope, ctx)
    if calls is None:
        return None
    skip = flagged_calls(func, scope, ctx)
    for call, inner in calls:
        qualname = ctx.qualname(call.func, inner)
        if qualname in EAGER_WRAPPERS and id(call) not in skip:
            return qualname
    return None
