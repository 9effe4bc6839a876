from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import libcst as cst

from tflint_gpu.autofix.numpy_to_tf import CREATORS, float64_by_default, rewrite, tf_dtype_of
from tflint_gpu.semantic import bindings
from tflint_gpu.semantic.api import argument, keyword
from tflint_gpu.rules.base import RANDOM, Fix, Rule, Safety, clean, flagged

_CONVERTERS = {
    "tensorflow.constant": "value",
    "tensorflow.convert_to_tensor": "value",
    "tensorflow.Variable": "initial_value",
}
_PASS_THROUGH = frozenset({"name"})  # conversion keywords the creation op accepts too


class NumpyCreatedThenConverted(Rule):
    """A NumPy array built on the host, again and again, only to be converted to a tensor.

    ## What it does
    Finds `tf.constant`, `tf.convert_to_tensor` and `tf.Variable` applied to an
    array made by a NumPy creation function (`np.zeros`, `np.ones`, `np.full`,
    `np.eye`, `np.identity`, `np.arange`, `np.random.rand/randn/normal/uniform`,
    ...), directly or through a local name bound once and used only there,
    where the conversion runs repeatedly (in a loop, in a function a loop or
    per-step code calls, in a Keras callback, in a dataset generator), and
    `tf.Variable(np.zeros(...))` without a dtype anywhere: a float64 variable
    by NumPy's default, which float32 inputs then fail to mix with.

    Conversions that run once (module level, setup code, graph code, which is
    traced once and keeps the tensor as a constant) are TFG202's, off by
    default: their copy costs next to nothing. So are the ones in a test
    suite (a module with test functions that imports a test framework): a
    test's loops run over a few cases, on small, often NumPy-seeded data, and
    its speed is not the product.

    ## Why is this bad?
    The array is computed and stored in host memory, then copied to the device.
    The TensorFlow creation op makes it where the tensor lives, with no host
    buffer and no copy. The conversion also carries NumPy's default dtypes,
    float64 and int64, where TensorFlow's are float32 and int32: mixing such a
    tensor with ordinary ones raises `InvalidArgumentError: ... expected to be a
    double tensor but is a float tensor`. The rewrite keeps NumPy's dtype
    explicitly, so the bug is visible and nothing changes silently.

    Not flagged: literal tables such as `np.array([0.485, 0.456, 0.406])`,
    arrays loaded from files, and arrays mutated or used elsewhere before the
    conversion.

    ## Example
    ```python
    w = tf.Variable(np.zeros((784, 10)))
    for step in range(steps):
        noise = tf.constant(np.random.randn(32, 10))
    ```

    Use instead:
    ```python
    w = tf.Variable(tf.zeros((784, 10), dtype=tf.float64))
    for step in range(steps):
        noise = tf.random.normal((32, 10), dtype=tf.float64)
    ```

    ## Fix safety
    Safe for deterministic creators: the TensorFlow op yields the same values
    with the same dtype (NumPy's, or the `dtype=` of the conversion). Unsafe for
    random creators: same distribution and dtype, different random stream.
    `np.linspace`, `np.empty`, `np.random.randint`, and `np.arange` over names
    (whose Python type decides NumPy's dtype) are flagged without a fix.

    ## Measured effect
    `tflint-gpu verify --rule TFG201` runs the example pair (a mask and a
    bias made in a loop) and records the device and the ratio, with its
    spread over the timed calls, in examples/RESULTS.md (the measurement
    below): on a 2-core CPU, where host and device share memory, the same
    values and no gain to measure. On a GPU the copy removed is a
    host-to-device transfer, made once per iteration here; no GPU is
    available to this project, so that is not measured.
    """

    code = "TFG201"
    name = "numpy-created-then-converted"
    message = "NumPy array created on the host and then converted to a tensor"
    needs = (("numpy",), ("constant", "convert_to_tensor", "Variable"))
    fix_safety = Safety.SAFE
    unsafe_fixes_too = True  # some cases only (their message says why)
    # TFG201 reports conversions that run repeatedly or leave a float64
    # variable; TFG202 (off by default) the one-time rest.
    one_time = False

    def __init__(self) -> None:
        self._name_counts: Dict[int, Dict[str, int]] = {}  # id(scope) -> bindings.name_counts

    def visit_Call(self, node: cst.Call, ctx) -> None:
        qualname = ctx.call_name(node)
        if qualname not in _CONVERTERS:
            return
        value = argument(node, 0, _CONVERTERS[qualname])
        if value is None:
            return
        via_name = None
        if isinstance(value, cst.Name):
            via_name = value
            value = self._single_binding(value, ctx)
            if value is None:
                return
        if not isinstance(value, cst.Call):
            return
        creator = ctx.qualname(value.func)
        if creator not in CREATORS:
            return
        short = creator[len("numpy."):]
        converter = qualname.split(".", 1)[1]
        repeated = None if ctx.in_test_module else ctx.runs_repeatedly(node)
        leak = qualname == "tensorflow.Variable" and keyword(node, "dtype") is None \
            and float64_by_default(value, creator)
        if (repeated is not None or leak) == self.one_time:
            return
        message = f"`np.{short}` builds the array on the host and `tf.{converter}` copies it to the device"
        if leak and repeated is None:
            message = f"`tf.Variable(np.{short}(...))` is a float64 variable by NumPy's default"
        ctx.report(node, message, self._fix(node, qualname, value, via_name is not None, ctx))

    def _single_binding(self, name: cst.Name, ctx) -> Optional[cst.BaseExpression]:
        """The value of ``name`` if it is bound once, in this scope, and used only by the conversion."""
        found = ctx.assigned(name.value)
        scope = ctx.scope.function() or ctx.model.root
        if found is None or found.scope is not scope or found.rebound or not isinstance(found.single_value, cst.Call):
            return None
        # Each function's names counted once per file (a rule instance lints
        # one file), not once per conversion in it.
        counts = self._name_counts.get(id(scope))
        if counts is None:
            counts = self._name_counts[id(scope)] = bindings.name_counts(scope.node)
        loads = counts.get(name.value, 0)
        # One Name for the binding target, one for the conversion.
        return found.single_value if loads == 2 else None

    @staticmethod
    def _fix(node: cst.Call, qualname: str, creation: cst.Call, via_name: bool, ctx) -> Optional[Fix]:
        dtype = None
        dtype_arg = keyword(node, "dtype")
        if dtype_arg is not None:
            dtype = tf_dtype_of(dtype_arg.value, ctx)
            if dtype is None:
                return None
        extras: List[str] = []
        replace_call = qualname != "tensorflow.Variable" and not via_name
        if replace_call:
            positional = [a for a in node.args if a.keyword is None]
            others = [a for a in node.args if a.keyword is not None and a.keyword.value not in ("dtype", "value")]
            if len(positional) > 1 or any(a.keyword.value not in _PASS_THROUGH for a in others):
                return None
            extras = [ctx.module.code_for_node(a).rstrip(", ") for a in others]
        result = rewrite(creation, ctx.qualname(creation.func), ctx, dtype, extras)
        if result is None:
            return None
        target: Tuple[cst.CSTNode, ...] = (node,) if replace_call else (creation,)
        return Fix(result.message, result.safety, {target[0]: result.expr}, result.imports)

    cases = [
        flagged(
            """
            import numpy as np
            import tensorflow as tf

            def train(steps, n):
                total = 0.0
                for step in range(steps):
                    mask = tf.convert_to_tensor(np.eye(n))
                    total += float(tf.reduce_sum(mask))
                return total
            """,
            fixed="""
            import numpy as np
            import tensorflow as tf

            def train(steps, n):
                total = 0.0
                for step in range(steps):
                    mask = tf.eye(n, dtype=tf.float64)
                    total += float(tf.reduce_sum(mask))
                return total
            """,
            at=[(7, 16, "`np.eye` builds the array on the host")],
            run="out = train(3, 4)",
            note="in a loop: the host array and the copy are made at every iteration",
        ),
        flagged(
            """
            import numpy as np
            import tensorflow as tf

            def batch_noise(n):
                return tf.constant(np.zeros((n, 2)))

            def run(batches):
                return [batch_noise(n) for n in batches]

            for epoch in range(2):
                out = run([1, 2])
            """,
            fixed="""
            import numpy as np
            import tensorflow as tf

            def batch_noise(n):
                return tf.zeros((n, 2), dtype=tf.float64)

            def run(batches):
                return [batch_noise(n) for n in batches]

            for epoch in range(2):
                out = run([1, 2])
            """,
            at=[(5, 12, "`np.zeros` builds the array on the host")],
            run="result = run([3])",
            note="in a function called (through another) from a loop",
        ),
        clean(
            """
            import numpy as np
            import tensorflow as tf

            x = tf.constant(np.zeros((3, 3)))

            def build(n):
                return tf.constant(np.eye(n), dtype=tf.float32)
            """,
            note="one-time setup conversions: TFG202 (off by default) reports them",
        ),
        clean(
            """
            import numpy as np
            import pytest
            import tensorflow as tf

            def run_dense_sample(iterations, optimizer, seed=0x2019):
                np.random.seed(seed)
                grad = tf.constant(np.random.standard_normal((2,)), dtype=tf.float32)
                return grad

            def test_dense_exact_ratio():
                for k in [5, 10, 100]:
                    run_dense_sample(k, None)
                for training in [False, True]:
                    x = tf.constant(np.ones((1, 2, 2, 1), dtype=np.float32))
            """,
            note="in a test suite (tensorflow/addons optimizer and layer tests): a few cases on seeded NumPy data",
        ),
        flagged(
            """
            import numpy as np
            import tensorflow as tf

            def build(n):
                w = np.eye(n)
                return tf.Variable(w)
            """,
            fixed="""
            import numpy as np
            import tensorflow as tf

            def build(n):
                w = tf.eye(n, dtype=tf.float64)
                return tf.Variable(w)
            """,
            at=[(6, 12, '`tf.Variable(np.eye(...))` is a float64 variable')],
            run="x = build(3)",
            note="through a local name bound once and used once",
        ),
        flagged(
            """
            import numpy as np
            import tensorflow as tf

            v = tf.Variable(np.random.randn(2, 3), trainable=True)
            """,
            fixed="""
            import numpy as np
            import tensorflow as tf

            v = tf.Variable(tf.random.normal((2, 3), dtype=tf.float64), trainable=True)
            """,
            at=[(4, 5, '`tf.Variable(np.random.randn(...))` is a float64')],
            effect=RANDOM,
            note="random creator: an unsafe fix",
        ),
        clean(
            """
            import numpy as np
            import tensorflow as tf

            mean = tf.constant(np.array([0.485, 0.456, 0.406]))
            """,
            note="a literal table",
        ),
        clean(
            """
            import numpy as np
            import tensorflow as tf

            w = np.zeros((3, 3))
            w[0, 0] = 1.0
            x = tf.constant(w)
            """,
            note="mutated before conversion",
        ),
        clean(
            """
            import numpy as np
            import tensorflow as tf

            data = tf.constant(np.load("weights.npy"))
            """,
            note="loaded from a file",
        ),
        clean(
            """
            import numpy as np
            import tensorflow as tf

            x = tf.zeros((3, 3), dtype=tf.float64)
            y = np.zeros((3, 3)) + 1
            """,
            note="already TensorFlow; NumPy that stays NumPy",
        ),
    ]


class NumpyCreatedOnceThenConverted(NumpyCreatedThenConverted):
    """A NumPy array built on the host once, at setup, only to be converted to a tensor.

    ## What it does
    The same finding as TFG201 (`tf.constant`, `tf.convert_to_tensor` or
    `tf.Variable` applied to an array made by a NumPy creation function),
    where the conversion runs once: at module level, in setup code, in a
    function no loop or per-step code calls, and in graph code (traced once,
    the tensor is a constant of the graph), and anywhere in a test suite.
    TFG201 reports the conversions that run repeatedly outside tests and the
    ones that make a float64 `tf.Variable`.

    Off by default: the copy happens once, so it costs next to nothing (on
    tensorflow/probability and tensorflow/agents all ~80 such sites were test
    setup). Select it (`--extend-select TFG202`) to make setup code use
    TensorFlow's creation ops and spell NumPy's dtype out.

    ## Why is this bad?
    It is not, much: one host buffer and one copy. The rewrite still states
    the dtype NumPy picked (float64, int64) where TensorFlow would pick float32
    and int32, which makes a later dtype mismatch visible in the source.

    ## Example
    ```python
    table = tf.constant(np.zeros((784, 10)))
    ```

    Use instead:
    ```python
    table = tf.zeros((784, 10), dtype=tf.float64)
    ```

    ## Fix safety
    As TFG201: safe for deterministic creators (same values and dtype),
    unsafe for random ones (same distribution and dtype, another stream).

    ## Measured effect
    `tflint-gpu verify --rule TFG202` runs the example pair (one-time
    conversions in `main`): the same results, and no measurable time
    difference on a 2-core CPU at the small size.
    """

    code = "TFG202"
    name = "numpy-created-once-then-converted"
    message = "NumPy array created on the host once and then converted to a tensor"
    default_enabled = False
    one_time = True

    cases = [
        flagged(
            """
            import numpy as np
            import tensorflow as tf

            x = tf.constant(np.zeros((3, 3)))
            """,
            fixed="""
            import numpy as np
            import tensorflow as tf

            x = tf.zeros((3, 3), dtype=tf.float64)
            """,
            at=[(4, 5, '`np.zeros` builds the array')],
            note="NumPy's float64 is kept",
        ),
        flagged(
            """
            import numpy
            import tensorflow as tfl

            x = tfl.convert_to_tensor(numpy.ones(8, dtype=numpy.float32), name="ones")
            """,
            fixed="""
            import numpy
            import tensorflow as tfl

            x = tfl.ones(8, dtype=tfl.float32, name="ones")
            """,
            at=[(4, 5, '`np.ones` builds the array on')],
            ),
        flagged(
            """
            from numpy import arange as ar
            from tensorflow import constant

            idx = constant(ar(5))
            """,
            fixed="""
            from numpy import arange as ar
            from tensorflow import constant
            import tensorflow as tf

            idx = tf.range(5, dtype=tf.int64)
            """,
            at=[(4, 7, '`np.arange` builds the array')],
            note="from-imports only: the fix adds `import tensorflow as tf`",
        ),
        flagged(
            """
            import numpy as np
            import tensorflow as tf

            x = tf.constant(np.full((2, 2), 7), dtype=tf.int32)
            """,
            fixed="""
            import numpy as np
            import tensorflow as tf

            x = tf.fill((2, 2), tf.constant(7, dtype=tf.int32))
            """,
            at=[(4, 5, '`np.full` builds the array on')],
            note="the conversion's dtype wins",
        ),
        flagged(
            """
            import numpy as np
            import tensorflow as tf

            def grid(n):
                return tf.constant(np.arange(n))
            """,
            at=[(5, 12, '`np.arange` builds the array')],
            note="np.arange over a name: dtype unknown statically, so no fix",
        ),
        flagged(
            """
            import numpy as np
            import tensorflow as tf

            x = tf.constant(np.arange(0.5, 3), dtype=tf.int32)
            y = tf.constant(np.full(3, 1.5), dtype=tf.int32)
            """,
            fixed="""
            import numpy as np
            import tensorflow as tf

            x = tf.cast(tf.range(0.5, 3, dtype=tf.float64), tf.int32)
            y = tf.cast(tf.fill(3, tf.constant(1.5, dtype=tf.float64)), tf.int32)
            """,
            at=[(4, 5, '`np.arange` builds the array'), (5, 5, '`np.full` builds the array on')],
            note="the conversion casts NumPy's float64 values: made as float64, then cast",
        ),
        flagged(
            """
            import numpy as np
            import tensorflow as tf

            x = tf.constant(np.random.normal(size=3))
            y = tf.constant(np.random.randn())
            z = tf.Variable(np.random.rand(2), dtype=tf.int32)
            """,
            fixed="""
            import numpy as np
            import tensorflow as tf

            x = tf.random.normal((3,), dtype=tf.float64)
            y = tf.random.normal((), dtype=tf.float32)
            z = tf.Variable(tf.cast(tf.random.uniform((2,), dtype=tf.float64), tf.int32), dtype=tf.int32)
            """,
            at=[(4, 5, '`np.random.normal` builds the'), (5, 5, '`np.random.randn` builds the'),
                (6, 5, '`np.random.rand` builds the')],
            effect=RANDOM,
            note="an int size becomes a shape; no size gives a Python float, which converts to float32",
        ),
        flagged(
            """
            import numpy as np
            import tensorflow as tf

            def noise(n):
                return tf.constant(np.random.normal(size=n))
            """,
            at=[(5, 12, '`np.random.normal` builds the')],
            note="a size we cannot see: an int or a shape; no fix",
        ),
        flagged(
            """
            import numpy as np
            from tensorflow import constant

            def make(tf):
                return constant(np.zeros(3)) * tf

            def make_local():
                tf = 2.0
                return constant(np.ones(2)) * tf

            def make_both(tf, tensorflow):
                return constant(np.ones(2)) * tf * tensorflow
            """,
            fixed="""
            import numpy as np
            from tensorflow import constant
            import tensorflow

            def make(tf):
                return tensorflow.zeros(3, dtype=tensorflow.float64) * tf

            def make_local():
                tf = 2.0
                return tensorflow.ones(2, dtype=tensorflow.float64) * tf

            def make_both(tf, tensorflow):
                return constant(np.ones(2)) * tf * tensorflow
            """,
            at=[(5, 12, '`np.zeros` builds the array'), (9, 12, '`np.ones` builds the array on'),
                (12, 12, '`np.ones` builds the array on')],
            run="x, y, z = make(2.0), make_local(), make_both(2.0, 3.0)",
            note="`tf` is a parameter or a local where the fix stands: spell TensorFlow another way, or no fix",
        ),
        clean(
            """
            import numpy as np
            import tensorflow as tf

            for step in range(3):
                mask = tf.constant(np.eye(4))
            """,
            note="a conversion in a loop: TFG201 reports it",
        ),
    ]
