from __future__ import annotations

from typing import Dict, Optional, Set

import libcst as cst

from tflint_gpu.autofix.numpy_to_tf import RANDOM as NUMPY_RANDOM_TO_TF
from tflint_gpu.autofix.numpy_to_tf import rewrite, tf_dtype_of
from tflint_gpu.semantic.api import argument, keyword
from tflint_gpu.rules.base import GRAPH_TEXT, RANDOM, Fix, Rule, Safety, clean, flagged

# Not draws: seeding and generator objects (their methods are not resolved).
_NUMPY_NOT_DRAWS = frozenset({
    "seed", "get_state", "set_state", "RandomState", "default_rng", "Generator", "SeedSequence", "BitGenerator",
    "PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64",
})
_PYTHON_DRAWS = frozenset({
    "random", "uniform", "randint", "randrange", "choice", "choices", "shuffle", "sample", "gauss",
    "normalvariate", "lognormvariate", "expovariate", "betavariate", "gammavariate", "triangular",
    "vonmisesvariate", "paretovariate", "weibullvariate", "getrandbits", "randbytes", "binomialvariate",
})
_CLOCKS = frozenset({
    "time.time", "time.time_ns", "time.perf_counter", "time.perf_counter_ns", "time.monotonic",
    "time.monotonic_ns", "time.process_time", "datetime.datetime.now", "datetime.datetime.utcnow",
    "datetime.datetime.today", "datetime.date.today",
})
_CONVERTERS = {"tensorflow.constant": "value", "tensorflow.convert_to_tensor": "value"}


class PythonRandomInGraph(Rule):
    """`np.random`, `random` or `time.time()` in graph code: one value per trace, reused by every call.

    ## What it does
    Finds calls of NumPy's random functions (`np.random.rand`, `uniform`,
    `normal`, `randint`, `choice`, `shuffle`, ...), of Python's `random`
    module (`random.random()`, `random.uniform`, `random.choice`, ...) and of
    clocks (`time.time()`, `time.perf_counter()`, `datetime.now()`...) in
    code that runs traced as a graph: a `tf.function`, a function given to
    `tf.data.Dataset.map` and friends, a Keras `call`/`train_step`, a loss
    or metric Keras runs, a `keras.layers.Lambda` function, a function
    `tf.cond`/`tf.while_loop`/`tf.map_fn`... run from graph code (not when
    called eagerly: each call draws anew), or a function those call. A
    NumPy random function given a tensor fails at
    trace time instead, and is reported as such (TFG101 leaves `np.random`
    to this rule).

    Not flagged: seeding (`np.random.seed`, `random.seed`), generator objects
    (`np.random.default_rng()`), a draw given as the `seed=` of a stateful TF
    random op (`tf.random.uniform(..., seed=random.randint(0, 99))`: the op
    still draws anew at every call), code that runs once on purpose (a lazy
    `if self.w is None:` block), functions handed to `tf.py_function` /
    `tf.numpy_function` (they run eagerly, at every call).

    ## Why is this bad?
    TensorFlow runs the Python body of a graph function only while tracing
    it. A Python or NumPy random draw, or a clock read, happens then, once;
    its result is baked into the graph as a constant, and every later call,
    step or dataset element reuses it. A "random" augmentation applies the
    same noise to every image; a random dropout decision is the same every
    step; timings measured with `time.time()` inside the graph are zero.

    ## Example
    ```python
    @tf.function
    def augment(x):
        noise = tf.constant(np.random.normal(0.0, 0.1, size=(32,)))
        return x + tf.cast(noise, x.dtype)
    ```

    Use instead:
    ```python
    @tf.function
    def augment(x):
        noise = tf.random.normal((32,), 0.0, 0.1, dtype=tf.float64)
        return x + tf.cast(noise, x.dtype)
    ```

    ## Fix safety
    Unsafe: a different random stream (and a tensor where there was a Python
    value). Offered only where the mapping keeps distribution, dtype and
    shape exactly: a NumPy `rand`, `randn`, `random`, `random_sample`,
    `uniform`, `standard_normal` or `normal` (the mapping of
    `tflint_gpu.autofix.numpy_to_tf`, the one TFG201 uses) converted by
    `tf.constant`/`tf.convert_to_tensor` (the whole conversion becomes
    `tf.random.*` in the conversion's dtype, or NumPy's float64) or cast by
    `tf.cast`; `time.time()` given to `tf.print`, or converted to float64,
    becomes `tf.timestamp()` (a float64 scalar read at every call). Elsewhere
    a NumPy float64 array or Python float mixes with float32 tensors where a
    float64 tensor would raise, so no fix is offered: use `tf.random.*` /
    `tf.random.Generator` with the dtype you need, or `tf.timestamp()`.

    ## Measured effect
    TensorFlow 2.21, CPU: in a `tf.function` called twice, `np.random.rand()`,
    `random.random()`, `time.time()` and `datetime.now().timestamp()` return
    the same value both times; `tf.timestamp()` differs (by the 10 ms slept
    between the calls). In a `Dataset.range(3).map(lambda i:
    tf.constant(np.random.rand()))` all three elements are equal.
    `np.random.permutation(t)` of a tensor raises `NotImplementedError` at
    trace time. examples/TFG108: a `tf.function` adding
    `np.random.normal` noise returns the same noise on every call before the
    fix and fresh noise after (`tflint-gpu verify --rule TFG108`).
    """

    code = "TFG108"
    name = "python-random-or-time-in-graph-code"
    message = "Python/NumPy random draw or clock read in graph code: one value per trace, reused by every call"
    needs = (("random", "time", "datetime"), GRAPH_TEXT)
    fix_safety = Safety.UNSAFE

    def __init__(self) -> None:
        self._skip: Set[int] = set()
        self._fixes: Dict[int, Fix] = {}

    def visit_Call(self, node: cst.Call, ctx) -> None:
        if ctx.graph() is None:
            return
        qualname = ctx.call_name(node)
        if qualname is None:
            return
        self._mark_arguments(node, qualname, ctx)
        what = _kind(qualname)
        if what is None or id(node) in self._skip:
            return
        function = ctx.scope.function()
        if function is not None and ctx.run_once.runs_once(node, function):
            return
        short = _spelling(qualname)
        if what == "numpy" and any(ctx.is_tensor(a.value) for a in node.args):
            ctx.report(node, f"`{short}` on a symbolic tensor in graph code: NotImplementedError at trace time")
            return
        if what == "clock":
            message = f"`{short}()` in graph code is read once per trace: every call sees the same time"
        else:
            message = (f"`{short}({'...' if node.args else ''})` in graph code draws once per trace: "
                       "every call reuses the same value")
        ctx.report(node, message, self._fixes.get(id(node)))

    # -- what the enclosing call does with a draw -------------------------------
    def _mark_arguments(self, node: cst.Call, qualname: str, ctx) -> None:
        """Seen before its arguments (the walk is in source order): skip a draw
        given as a stateful op's ``seed=``, and prepare the fixes of draws
        converted or cast here."""
        seed = keyword(node, "seed")
        if seed is not None and qualname.startswith(("tensorflow.", "keras.")) and "stateless" not in qualname:
            value = seed.value
            if isinstance(value, cst.Call) and ctx.call_name(value) == "int" and value.args:
                value = value.args[0].value
            self._skip.add(id(value))
        if qualname in _CONVERTERS:
            value = argument(node, 0, _CONVERTERS[qualname])
            if isinstance(value, cst.Call):
                fix = self._converted_fix(node, value, ctx)
                if fix is not None:
                    self._fixes[id(value)] = fix
        elif qualname == "tensorflow.cast":
            value = argument(node, 0, "x")
            inner = ctx.call_name(value) if isinstance(value, cst.Call) else None
            if inner in NUMPY_RANDOM_TO_TF:
                result = rewrite(value, inner, ctx, None, [])
                if result is not None:
                    self._fixes[id(value)] = Fix(result.message, Safety.UNSAFE, {value: result.expr}, result.imports)
        elif qualname == "tensorflow.print":
            for arg in node.args:
                if isinstance(arg.value, cst.Call) and ctx.call_name(arg.value) == "time.time" \
                        and not arg.value.args:
                    fix = self._timestamp_fix(arg.value, ctx)
                    if fix is not None:
                        self._fixes[id(arg.value)] = fix

    @staticmethod
    def _converted_fix(node: cst.Call, value: cst.Call, ctx) -> Optional[Fix]:
        """``tf.constant(np.random.X(...))`` -> ``tf.random.Y(..., dtype=...)``;
        ``tf.constant(time.time(), tf.float64)`` -> ``tf.timestamp()``."""
        creator = ctx.call_name(value)
        positional = [a for a in node.args if a.keyword is None]
        dtype_arg = keyword(node, "dtype") or (positional[1] if len(positional) == 2 else None)
        if len(positional) > 2 or any(a.keyword is not None and a.keyword.value not in ("value", "dtype")
                                      for a in node.args):
            return None
        dtype = tf_dtype_of(dtype_arg.value, ctx) if dtype_arg is not None else None
        if dtype_arg is not None and dtype is None:
            return None
        if creator == "time.time" and not value.args and dtype == "float64":
            return PythonRandomInGraph._timestamp_fix(node, ctx)
        if creator not in NUMPY_RANDOM_TO_TF:
            return None
        result = rewrite(value, creator, ctx, dtype, [])
        if result is None:
            return None
        return Fix(result.message, Safety.UNSAFE, {node: result.expr}, result.imports)

    @staticmethod
    def _timestamp_fix(node: cst.CSTNode, ctx) -> Optional[Fix]:
        spelled = ctx.module_expr("tensorflow", "timestamp")
        if spelled is None:
            return None
        func, imports = spelled
        return Fix("Read the clock at every call with `tf.timestamp()` (a float64 tensor)", Safety.UNSAFE,
                   {node: cst.Call(func)}, imports)

    cases = [
        flagged(
            """
            import numpy as np
            import tensorflow as tf
            import keras

            def jitter(t):
                return t + np.random.normal()

            def noisy():
                return tf.constant(1.0) + np.random.rand()

            @tf.function
            def pick(x):
                return tf.cond(x > 0, noisy, lambda: x)

            model = keras.Sequential([keras.layers.Lambda(jitter)])
            """,
            at=[
                (6, 16, "`np.random.normal()` in graph code draws once per trace"),
                (9, 31, "`np.random.rand()` in graph code draws once per trace"),
            ],
            note="a Lambda layer's function (measured: the same offset on every predict), a tf.cond branch "
                 "of a tf.function (the same value on every call)",
        ),
        clean(
            """
            import numpy as np
            import tensorflow as tf

            def noisy():
                return tf.constant(1.0) + np.random.rand()

            def per_element(x):
                return x + np.random.rand()

            value = tf.cond(tf.constant(True), noisy, noisy)
            values = tf.map_fn(per_element, tf.ones([3]))
            """,
            note="tf.cond and tf.map_fn called eagerly: a fresh draw each time",
        ),
        flagged(
            """
            import numpy as np
            import tensorflow as tf

            @tf.function
            def noisy(x):
                noise = tf.constant(np.random.normal(0.0, 0.1, size=(3,)))
                scale = tf.cast(np.random.rand(3), tf.float32)
                return x * scale + tf.cast(noise, tf.float32)
            """,
            fixed="""
            import numpy as np
            import tensorflow as tf

            @tf.function
            def noisy(x):
                noise = tf.random.normal((3,), mean=0.0, stddev=0.1, dtype=tf.float64)
                scale = tf.cast(tf.random.uniform((3,), dtype=tf.float64), tf.float32)
                return x * scale + tf.cast(noise, tf.float32)
            """,
            at=[(6, 25, "`np.random.normal(...)` in graph code draws once per trace"),
                (7, 21, "`np.random.rand(...)` in graph code draws once per trace")],
            run="a = noisy(tf.ones(3))\nb = noisy(tf.ones(3))",
            effect=RANDOM,
            note="converted and cast draws: the TFG201 mapping, NumPy's float64 kept",
        ),
        flagged(
            """
            import time
            import tensorflow as tf

            @tf.function
            def timed(x):
                tf.print("start", time.time())
                stamp = tf.constant(time.time(), dtype=tf.float64)
                return x * 2.0, stamp
            """,
            fixed="""
            import time
            import tensorflow as tf

            @tf.function
            def timed(x):
                tf.print("start", tf.timestamp())
                stamp = tf.timestamp()
                return x * 2.0, stamp
            """,
            at=[(6, 23, "`time.time()` in graph code is read once per trace"),
                (7, 25, "`time.time()` in graph code is read once per trace")],
            run="y, stamp = timed(tf.constant(1.0))",
            effect=RANDOM,
            note="time.time() printed or converted to float64: tf.timestamp()",
        ),
        flagged(
            """
            import random
            from datetime import datetime

            import numpy as np
            import tensorflow as tf

            def augment(image):
                if random.random() < 0.5:
                    image = tf.image.flip_left_right(image)
                return image * np.random.uniform(0.9, 1.1), datetime.now().second

            ds = tf.data.Dataset.from_tensor_slices(tf.ones((4, 2, 2, 1))).map(augment)
            """,
            at=[(8, 8, "`random.random()` in graph code draws once per trace"),
                (10, 20, "`np.random.uniform(...)` in graph code draws once per trace"),
                (10, 49, "`datetime.now()` in graph code is read once per trace")],
            note="a tf.data map function: one decision and one factor for every element; no exact fix "
                 "(a Python float mixes with the image's float32)",
        ),
        flagged(
            """
            import numpy as np
            import tensorflow as tf

            @tf.function
            def shuffled(x):
                return tf.gather(x, np.random.permutation(x))
            """,
            at=[(6, 25, "`np.random.permutation` on a symbolic tensor in graph code: NotImplementedError")],
            note="a NumPy random function given a tensor fails at trace (TFG101 leaves np.random here)",
        ),
        flagged(
            """
            import numpy as np
            import tensorflow as tf

            @tf.function
            def pair(x):
                return tf.random.stateless_uniform((3,), seed=[np.random.randint(9), 0])
            """,
            at=[(6, 52, "`np.random.randint(...)` in graph code draws once per trace")],
            note="the seed of a stateless op frozen: the same values every call",
        ),
        clean(
            """
            import random
            import time

            import numpy as np
            import tensorflow as tf

            @tf.function
            def seeded(x):
                np.random.seed(0)
                random.seed(1)
                rng = np.random.default_rng()
                return x + tf.random.uniform((3,), seed=random.randint(0, 99))

            def eager(x):
                start = time.time()
                return x * np.random.rand(), time.time() - start

            @tf.function
            def host(x):
                def draw(v):
                    return v * np.random.rand()
                return tf.py_function(draw, [x], tf.float32)
            """,
            note="seeding, a generator object, the seed of a stateful op, eager code, tf.py_function",
        ),
        clean(
            """
            import numpy as np
            import tensorflow as tf

            class Noise(tf.Module):
                def __init__(self):
                    self.w = None

                @tf.function
                def __call__(self, x):
                    if self.w is None:
                        self.w = tf.Variable(np.random.randn(3).astype("float32"))
                    return x * self.w
            """,
            note="an initial value drawn once in a lazy block: runs once on purpose",
        ),
    ]


def _kind(qualname: str) -> Optional[str]:
    if qualname.startswith("numpy.random."):
        name = qualname[len("numpy.random."):]
        return "numpy" if "." not in name and name not in _NUMPY_NOT_DRAWS else None
    if qualname.startswith("random.") and qualname[len("random."):] in _PYTHON_DRAWS:
        return "python"
    if qualname in _CLOCKS:
        return "clock"
    return None


def _spelling(qualname: str) -> str:
    if qualname.startswith("numpy."):
        return "np." + qualname[len("numpy."):]
    if qualname.startswith("datetime.datetime."):
        return "datetime." + qualname[len("datetime.datetime."):]
    return qualname
