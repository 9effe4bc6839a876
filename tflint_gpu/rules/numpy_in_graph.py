from __future__ import annotations

import libcst as cst

from tflint_gpu.rules.base import FIXES_ERROR, GRAPH_TEXT, Fix, Rule, Safety, clean, flagged
from tflint_gpu.semantic.ndarray_attributes import SHARED as _SHARED_WITH_TENSORS

# NumPy functions with a TensorFlow op of the same meaning and keywords.
_TF_EQUIVALENT = {
    "numpy.mean": "reduce_mean",
    "numpy.sum": "reduce_sum",
    "numpy.max": "reduce_max",
    "numpy.amax": "reduce_max",
    "numpy.min": "reduce_min",
    "numpy.amin": "reduce_min",
    "numpy.prod": "reduce_prod",
    "numpy.std": "math.reduce_std",
    "numpy.var": "math.reduce_variance",
    "numpy.square": "square",
    "numpy.sqrt": "sqrt",
    "numpy.exp": "exp",
    "numpy.log": "math.log",
    "numpy.abs": "abs",
    "numpy.tanh": "tanh",
}
_SAME_KEYWORDS = frozenset({"axis", "keepdims"})
_TO_ARRAY = frozenset({"numpy.array", "numpy.asarray", "numpy.asanyarray"})


def _numpy_only_read(node: cst.Call, ctx) -> bool:
    """Is the array ``node`` makes read as ``.name`` where ``name`` is NumPy's alone (``.tolist()``,
    ``.item()``, ``.clip(...)``, ``.T``) or means another thing on a tensor (``.device``)? A tensor in
    its place would raise: only ``semantic.ndarray_attributes.SHARED`` (derived under TensorFlow) read alike."""
    parent = next(ctx.scope.ancestors(node), None)
    return isinstance(parent, cst.Attribute) and parent.value is node \
        and parent.attr.value not in _SHARED_WITH_TENSORS


class NumpyInGraph(Rule):
    """`.numpy()` or a NumPy function applied to a tensor in code that runs as a graph.

    ## What it does
    Finds `t.numpy()`, and NumPy functions such as `np.mean(t)` or
    `np.asarray(t)`, where `t` is a tensor and the code runs traced as a graph:
    inside a `tf.function`, a function given to `tf.data.Dataset.map` (and
    `filter`, `flat_map`, `interleave`, `reduce`, `scan`), a Keras `call` or
    `train_step` (also inherited from a mixin), a loss or metric Keras runs
    (given to `compile(loss=..., metrics=...)`, a Loss's `call`, a Metric's
    `update_state`/`result`), a `keras.layers.Lambda` function, a function
    that `tf.map_fn`, `tf.while_loop`, `tf.cond`, `tf.switch_case`, `tf.case`,
    `tf.scan` or `strategy.run` runs from graph code (called eagerly they run
    it eagerly: not reported), one given to `tf.vectorized_map` (traced even
    eagerly), or a function those call.

    `t` is a tensor when it is the result of a TensorFlow op, or (what graph
    code most often converts) the output of a Keras model or layer
    (`model(x)`, `self.dense(x)` for a layer assigned in `__init__`/`build`,
    `self(x)` in a Keras model), of a Keras loss or metric (`loss_fn(y, p)`,
    `keras.losses.mean_squared_error(y, p)`, `metric.result()`), a gradient
    (`tape.gradient(loss, vars)[0]`), a TensorFlow Probability distribution's
    `sample`, `log_prob`, `mean`..., or a same-module function whose every
    `return` is a tensor. `model.predict(x)` returns NumPy and is not flagged,
    nor is anything the linter cannot tell is a tensor (an object passed in
    as an unannotated parameter, a name also bound to something else).

    ## Why is this bad?
    While TensorFlow traces a graph, tensors are symbolic: they have no value
    yet. `.numpy()` fails at trace time with
    `AttributeError: 'SymbolicTensor' object has no attribute 'numpy'`, and
    NumPy functions fail with `NotImplementedError: Cannot convert a symbolic
    tf.Tensor ... to a numpy array`. Code that worked eagerly breaks as soon as
    it is wrapped in `tf.function` or handed to `Dataset.map`. Code handed to
    `tf.py_function` runs eagerly and is not flagged.

    ## Example
    ```python
    @tf.function
    def normalize(x):
        return x - np.mean(x) / tf.math.reduce_std(x).numpy()
    ```

    Use instead:
    ```python
    @tf.function
    def normalize(x):
        return x - tf.reduce_mean(x) / tf.math.reduce_std(x)
    ```

    ## Fix safety
    Unsafe. The fix drops `.numpy()`, `np.asarray(...)`, and replaces NumPy
    reductions and elementwise functions with their TensorFlow op
    (`np.mean` -> `tf.reduce_mean`, same `axis`/`keepdims`). The value becomes a
    tensor instead of a NumPy array, and TensorFlow keeps the input's dtype
    where NumPy may promote (`np.mean` of integers is float64; `tf.reduce_mean`
    of integers is an integer). Other NumPy calls get no fix, nor does a
    conversion whose array is then read as an attribute a tensor lacks or reads
    otherwise (`probs.numpy().tolist()`, `x.numpy().clip(0, 1).mean().item()`,
    `np.asarray(t).ravel()`, `.T`, `.device`): with the tensor in its place the
    code would raise. Only `shape`, `ndim` and `dtype` are read alike (the
    table `scripts/derive_ndarray_attributes.py` derives by comparing
    `np.ndarray` with eager and symbolic tensors, in
    `tflint_gpu/semantic/ndarray_attributes.py`).

    ## Measured effect
    The code raises at trace time before the fix and runs after it:
    `tflint-gpu verify --rule TFG101` records the error (see examples/RESULTS.md).
    """

    code = "TFG101"
    name = "numpy-in-graph"
    message = "NumPy conversion of a tensor in graph code fails at trace time"
    needs = (("numpy",), GRAPH_TEXT)
    fix_safety = Safety.UNSAFE

    def visit_Call(self, node: cst.Call, ctx) -> None:
        graph = ctx.graph()
        if graph is None:
            return
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "numpy" and not node.args:
            if ctx.qualname(func) is None and ctx.is_tensor(func.value):
                ctx.report(
                    node,
                    "`.numpy()` on a symbolic tensor in graph code: AttributeError at trace time",
                    None if _numpy_only_read(node, ctx) else Fix("Use the tensor itself", Safety.UNSAFE,
                                                                 {node: func.value}),
                )
            return
        qualname = ctx.qualname(func)
        if qualname is None or not qualname.startswith("numpy.") or qualname.startswith("numpy.random."):
            return
        positional = [a for a in node.args if a.keyword is None and not a.star]
        if not positional or not any(ctx.is_tensor(a.value) for a in positional):
            return
        short = qualname.split(".", 1)[1]
        message = f"`np.{short}` on a symbolic tensor in graph code: NotImplementedError at trace time"
        ctx.report(node, message, None if _numpy_only_read(node, ctx) else self._fix(node, qualname, positional, ctx))

    @staticmethod
    def _fix(node: cst.Call, qualname: str, positional, ctx):
        if qualname in _TO_ARRAY:
            if len(node.args) == 1:
                return Fix("Use the tensor itself", Safety.UNSAFE, {node: positional[0]})
            return None
        op = _TF_EQUIVALENT.get(qualname)
        if op is None or len(positional) != 1:
            return None
        if any(a.keyword is not None and a.keyword.value not in _SAME_KEYWORDS for a in node.args):
            return None
        spelled = ctx.module_expr("tensorflow", op)
        if spelled is None:
            return None
        func, imports = spelled
        return Fix(f"Use `tf.{op}`", Safety.UNSAFE, {node: node.with_changes(func=func)}, imports)

    cases = [
        flagged(
            """
            import tensorflow as tf
            import keras

            def scaled_mse(y_true, y_pred):
                scale = tf.reduce_mean(y_true).numpy()
                return tf.reduce_mean(tf.square(y_true - y_pred)) * scale

            model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1, kernel_initializer="ones")])
            model.compile("sgd", loss=scaled_mse)
            """,
            fixed="""
            import tensorflow as tf
            import keras

            def scaled_mse(y_true, y_pred):
                scale = tf.reduce_mean(y_true)
                return tf.reduce_mean(tf.square(y_true - y_pred)) * scale

            model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1, kernel_initializer="ones")])
            model.compile("sgd", loss=scaled_mse)
            """,
            at=[(5, 13, "`.numpy()` on a symbolic")],
            run='history = model.fit(tf.ones((4, 2)), tf.ones((4, 1)), epochs=2, verbose=0).history["loss"]',
            effect=FIXES_ERROR,
            note="a loss given to compile runs traced in Keras's steps (Keras 3.15: AttributeError under fit)",
        ),
        flagged(
            """
            import numpy as np
            import tensorflow as tf
            import keras

            class NormMetric(keras.metrics.Metric):
                def update_state(self, y_true, y_pred, sample_weight=None):
                    self.total.assign_add(np.linalg.norm(y_pred))

            class NormLoss(keras.losses.Loss):
                def call(self, y_true, y_pred):
                    return np.linalg.norm(y_pred - y_true)

            def rescale(t):
                return t / np.linalg.norm(t)

            class Mixin:
                def call(self, x):
                    return x / np.linalg.norm(x)

            class Scaled(Mixin, keras.layers.Layer):
                pass

            def branch():
                return np.linalg.norm(tf.ones([2]))

            def per_row(row):
                return row * np.linalg.norm(row)

            def body(i, v):
                return i + 1, v / np.linalg.norm(v)

            @tf.function
            def step(x):
                y = tf.map_fn(per_row, x)
                tf.while_loop(lambda i, v: i < 2, body, [0, x])
                return tf.cond(x[0, 0] > 0, branch, lambda: tf.reduce_sum(y))

            def eager_row(row):
                return row * np.linalg.norm(row)

            z = tf.vectorized_map(eager_row, tf.ones([3, 2]))
            model = keras.Sequential([keras.layers.Lambda(rescale)])
            """,
            at=[
                (7, 31, "`np.linalg.norm` on a symbolic"),
                (11, 16, "`np.linalg.norm` on a symbolic"),
                (14, 16, "`np.linalg.norm` on a symbolic"),
                (18, 20, "`np.linalg.norm` on a symbolic"),
                (24, 12, "`np.linalg.norm` on a symbolic"),
                (27, 18, "`np.linalg.norm` on a symbolic"),
                (30, 23, "`np.linalg.norm` on a symbolic"),
                (39, 18, "`np.linalg.norm` on a symbolic"),
            ],
            note="what Keras runs (a metric's update_state, a loss's call, a Lambda function, a call inherited "
                 "from a mixin), what tf.map_fn/tf.while_loop/tf.cond run from a tf.function, what "
                 "tf.vectorized_map traces even eagerly (measured: NotImplementedError, a symbolic tensor)",
        ),
        clean(
            """
            import numpy as np
            import tensorflow as tf
            import keras

            class MyLoss(keras.losses.Loss):
                def __init__(self, weights):
                    super().__init__()
                    self.scale = np.linalg.norm(tf.constant(weights))

                def call(self, y_true, y_pred):
                    return tf.reduce_mean(y_pred) * self.scale

            class MyMetric(keras.metrics.Metric):
                def reset_state(self):
                    self.total.assign(np.linalg.norm(tf.zeros([2])))

            def eager_row(row):
                return row * np.linalg.norm(row)

            def eager_branch():
                return tf.constant(np.linalg.norm(tf.ones([2])))

            def host(x):
                return x.numpy() * 2

            def per_row(x):
                return tf.py_function(host, [x], tf.float32)

            def debug_loss(y_true, y_pred):
                return tf.reduce_mean(y_pred) * y_pred.numpy().mean()

            @tf.function
            def step(x):
                return tf.map_fn(per_row, x)

            rows = tf.map_fn(eager_row, tf.ones([3, 2]))
            picked = tf.cond(tf.constant(True), eager_branch, eager_branch)
            model.compile("sgd", loss=debug_loss, run_eagerly=True)
            """,
            note="eager: a Loss's __init__, a metric's reset_state, what tf.map_fn/tf.cond run when called "
                 "eagerly (a Python loop, the branch taken), a tf.py_function body, a loss of a model "
                 "compiled with run_eagerly=True",
        ),
        flagged(
            """
            import tensorflow as tf

            @tf.function
            def f(x):
                return x - tf.reduce_mean(x).numpy()
            """,
            fixed="""
            import tensorflow as tf

            @tf.function
            def f(x):
                return x - tf.reduce_mean(x)
            """,
            at=[(5, 16, '`.numpy()` on a symbolic')],
            run="y = f(tf.constant([1.0, 2.0, 4.0]))",
            effect=FIXES_ERROR,
        ),
        flagged(
            """
            import tensorflow as tfl
            import numpy

            @tfl.function(jit_compile=False)
            def f(x):
                return numpy.mean(x, axis=0)
            """,
            fixed="""
            import tensorflow as tfl
            import numpy

            @tfl.function(jit_compile=False)
            def f(x):
                return tfl.reduce_mean(x, axis=0)
            """,
            at=[(6, 12, '`np.mean` on a symbolic')],
            run="y = f(tfl.constant([[1.0, 2.0], [3.0, 5.0]]))",
            effect=FIXES_ERROR,
            note="aliased imports, decorator called with arguments",
        ),
        flagged(
            """
            from tensorflow import function
            from numpy import asarray as arr

            @function
            def f(x):
                y = x * 2
                return arr(y)
            """,
            fixed="""
            from tensorflow import function
            from numpy import asarray as arr

            @function
            def f(x):
                y = x * 2
                return y
            """,
            at=[(7, 12, '`np.asarray` on a symbolic')],
            run="import tensorflow as tf\ny = f(tf.constant([1.0, 2.0]))",
            effect=FIXES_ERROR,
            note="from-imports; local tensor through a name",
        ),
        flagged(
            """
            import numpy as np
            import tensorflow as tf

            @tf.function
            def report(x):
                probs = tf.nn.softmax(x)
                listed = probs.numpy().tolist()
                score = x.numpy().clip(0, 1).mean().item()
                flat = np.asarray(probs).ravel()
                top = np.max(probs).item()
                transposed = probs.numpy().T
                where = probs.numpy().device
                return listed, score, flat, top, transposed, where
            """,
            at=[(7, 14, "`.numpy()` on a symbolic"), (8, 13, "`.numpy()` on a symbolic"),
                (9, 12, "`np.asarray` on a symbolic"), (10, 11, "`np.max` on a symbolic"),
                (11, 18, "`.numpy()` on a symbolic"), (12, 13, "`.numpy()` on a symbolic")],
            note="a NumPy-only method or attribute read on the array (tolist, clip, ravel, item, T; device means "
                 "another thing on a tensor): a tensor has none, so dropping the conversion is no fix",
        ),
        flagged(
            """
            import tensorflow as tf

            @tf.function
            def f(x):
                y = tf.square(x)
                return tf.reshape(y, y.numpy().shape) * tf.cast(y.numpy().ndim, y.numpy().dtype)
            """,
            fixed="""
            import tensorflow as tf

            @tf.function
            def f(x):
                y = tf.square(x)
                return tf.reshape(y, y.shape) * tf.cast(y.ndim, y.dtype)
            """,
            at=[(6, 26, "`.numpy()` on a symbolic"), (6, 53, "`.numpy()` on a symbolic"),
                (6, 69, "`.numpy()` on a symbolic")],
            run="z = f(tf.constant([1.0, -2.0, 3.0]))",
            effect=FIXES_ERROR,
            note="shape, ndim and dtype mean on a tensor what they mean on its array (the table "
                 "scripts/derive_ndarray_attributes.py derives): the conversion before them is dropped",
        ),
        flagged(
            """
            import tensorflow as tf

            def helper(t):
                return t.numpy()

            @tf.function
            def step(x):
                return helper(x)
            """,
            fixed="""
            import tensorflow as tf

            def helper(t):
                return t

            @tf.function
            def step(x):
                return helper(x)
            """,
            at=[(4, 12, '`.numpy()` on a symbolic')],
            run="y = step(tf.constant([1.0, 2.0]))",
            effect=FIXES_ERROR,
            note="a function called from a tf.function",
        ),
        flagged(
            """
            import tensorflow as tf

            ds = tf.data.Dataset.range(10)
            ds = ds.map(lambda x: tf.cast(x, tf.float32).numpy())
            """,
            fixed="""
            import tensorflow as tf

            ds = tf.data.Dataset.range(10)
            ds = ds.map(lambda x: tf.cast(x, tf.float32))
            """,
            at=[(4, 23, '`.numpy()` on a symbolic')],
            effect=FIXES_ERROR,
            note="a lambda given to Dataset.map",
        ),
        flagged(
            """
            import keras
            import numpy as np

            class Scale(keras.layers.Layer):
                def call(self, inputs, training=False):
                    return inputs / np.max(inputs)
            """,
            fixed="""
            import keras
            import numpy as np
            import tensorflow as tf

            class Scale(keras.layers.Layer):
                def call(self, inputs, training=False):
                    return inputs / tf.reduce_max(inputs)
            """,
            at=[(6, 25, '`np.max` on a symbolic tensor')],
            run="import tensorflow as tf\ny = tf.function(Scale())(tf.constant([[1.0, 2.0]]))",
            effect=FIXES_ERROR,
            note="Keras call; the fix adds the tensorflow import it needs",
        ),
        flagged(
            """
            import tensorflow as tf
            import numpy as np

            def preprocess(x):
                return np.percentile(x, 50)

            g = tf.function(preprocess)
            """,
            at=[(5, 12, '`np.percentile` on a symbolic')],
            note="wrapped function; no exact TF equivalent, so no fix",
        ),
        flagged(
            """
            import tensorflow as tf

            class Ops:
                @staticmethod
                @tf.function
                def center(x):
                    return x.numpy() - 1.0

            def scale(x):
                return x * tf.reduce_max(x).numpy()

            scale = tf.function(scale)
            """,
            fixed="""
            import tensorflow as tf

            class Ops:
                @staticmethod
                @tf.function
                def center(x):
                    return x - 1.0

            def scale(x):
                return x * tf.reduce_max(x)

            scale = tf.function(scale)
            """,
            at=[(7, 16, '`.numpy()` on a symbolic'), (10, 16, '`.numpy()` on a symbolic')],
            run="a = Ops.center(tf.constant([1.0, 3.0]))\nb = scale(tf.constant([1.0, 2.0]))",
            effect=FIXES_ERROR,
            note="a @staticmethod's first parameter is data, not self; `f = tf.function(f)` keeps f graph code",
        ),
        clean(
            """
            from tensorflow import function

            def function(f):
                return f

            @function
            def host(x):
                return x.numpy()
            """,
            note="a local def named like the import shadows it: `function` is not tf.function here",
        ),
        clean(
            """
            import tensorflow as tf

            def f(x):
                return tf.reduce_mean(x).numpy()
            """,
            note="eager code",
        ),
        clean(
            """
            import tensorflow as tf

            @tf.function
            def f(x):
                def host(v):
                    return v.numpy() * 2
                return tf.py_function(host, [x], tf.float32)
            """,
            note="runs eagerly inside tf.py_function",
        ),
        clean(
            """
            import tensorflow as tf
            import numpy as np

            @tf.function
            def f(x, scale=np.float32(2.0)):
                n = np.prod(x.shape)
                return x * np.sqrt(n)
            """,
            note="NumPy on static shapes and Python values",
        ),
        clean(
            """
            import tensorflow as tf
            import torch

            @tf.function
            def f(x):
                return torch.ones(3).numpy()
            """,
            note="not a tensorflow tensor",
        ),
        clean(
            """
            import tensorflow as tf

            items = [1, 2, 3]
            mapped = map(lambda x: x.numpy(), items)
            """,
            note="builtin map, not a dataset",
        ),
        # What graph code most often converts: the output of a model, a layer, a
        # loss, a metric, a gradient tape, a distribution, a helper function.
        flagged(
            """
            import keras
            import tensorflow as tf

            model = keras.Sequential([keras.layers.Dense(2)])

            @tf.function
            def predict(x):
                return model(x).numpy()
            """,
            fixed="""
            import keras
            import tensorflow as tf

            model = keras.Sequential([keras.layers.Dense(2)])

            @tf.function
            def predict(x):
                return model(x)
            """,
            at=[(8, 12, '`.numpy()` on a symbolic')],
            run="y = predict(tf.ones([1, 3]))",
            effect=FIXES_ERROR,
            note="a Keras model called in a tf.function",
        ),
        flagged(
            """
            import keras
            import tensorflow as tf

            class Head(keras.layers.Layer):
                def __init__(self):
                    super().__init__()
                    self.dense = keras.layers.Dense(2)

                def call(self, inputs):
                    logits = self.dense(inputs)
                    return tf.nn.softmax(logits.numpy())
            """,
            fixed="""
            import keras
            import tensorflow as tf

            class Head(keras.layers.Layer):
                def __init__(self):
                    super().__init__()
                    self.dense = keras.layers.Dense(2)

                def call(self, inputs):
                    logits = self.dense(inputs)
                    return tf.nn.softmax(logits)
            """,
            at=[(11, 30, '`.numpy()` on a symbolic')],
            run="y = tf.function(Head())(tf.ones([1, 3]))",
            effect=FIXES_ERROR,
            note="a layer assigned to self in __init__, called in a Keras call",
        ),
        flagged(
            """
            import keras
            import numpy as np
            import tensorflow as tf

            class Net(keras.Model):
                def __init__(self):
                    super().__init__()
                    self.dense = keras.layers.Dense(1)

                def call(self, inputs):
                    return self.dense(inputs)

                def train_step(self, data):
                    x, y = data
                    pred = self(x)
                    return {"mae": tf.reduce_mean(tf.abs(y - pred.numpy()))}
            """,
            fixed="""
            import keras
            import numpy as np
            import tensorflow as tf

            class Net(keras.Model):
                def __init__(self):
                    super().__init__()
                    self.dense = keras.layers.Dense(1)

                def call(self, inputs):
                    return self.dense(inputs)

                def train_step(self, data):
                    x, y = data
                    pred = self(x)
                    return {"mae": tf.reduce_mean(tf.abs(y - pred))}
            """,
            at=[(16, 50, '`.numpy()` on a symbolic')],
            run="""
            net = Net()
            net.compile(optimizer="sgd")
            history = net.fit(np.ones((4, 2), "float32"), np.zeros((4, 1), "float32"), epochs=1, verbose=0)
            mae = np.array(history.history["mae"])
            """,
            effect=FIXES_ERROR,
            note="self(x) in a Keras train_step, under fit",
        ),
        flagged(
            """
            import keras
            import tensorflow as tf

            loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

            @tf.function
            def evaluate(labels, logits):
                loss = loss_fn(labels, logits)
                return loss.numpy() * 2
            """,
            fixed="""
            import keras
            import tensorflow as tf

            loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

            @tf.function
            def evaluate(labels, logits):
                loss = loss_fn(labels, logits)
                return loss * 2
            """,
            at=[(9, 12, '`.numpy()` on a symbolic')],
            run="y = evaluate(tf.constant([0, 1]), tf.constant([[2.0, 1.0], [0.5, 1.5]]))",
            effect=FIXES_ERROR,
            note="a Keras loss object",
        ),
        flagged(
            """
            import tensorflow as tf

            @tf.function
            def error(y, p):
                return tf.keras.losses.mse(y, p).numpy()
            """,
            fixed="""
            import tensorflow as tf

            @tf.function
            def error(y, p):
                return tf.keras.losses.mse(y, p)
            """,
            at=[(5, 12, '`.numpy()` on a symbolic')],
            run="e = error(tf.constant([[1.0, 2.0]]), tf.constant([[1.5, 2.5]]))",
            effect=FIXES_ERROR,
            note="a Keras loss function, tf.keras spelling",
        ),
        flagged(
            """
            import keras
            import numpy as np
            import tensorflow as tf

            class Net(keras.Model):
                def __init__(self):
                    super().__init__()
                    self.dense = keras.layers.Dense(1)
                    self.tracker = keras.metrics.Mean(name="loss")

                def call(self, inputs):
                    return self.dense(inputs)

                def train_step(self, data):
                    x, y = data
                    self.tracker.update_state(tf.reduce_mean(tf.square(y - self(x))))
                    return {"loss": self.tracker.result().numpy()}
            """,
            fixed="""
            import keras
            import numpy as np
            import tensorflow as tf

            class Net(keras.Model):
                def __init__(self):
                    super().__init__()
                    self.dense = keras.layers.Dense(1)
                    self.tracker = keras.metrics.Mean(name="loss")

                def call(self, inputs):
                    return self.dense(inputs)

                def train_step(self, data):
                    x, y = data
                    self.tracker.update_state(tf.reduce_mean(tf.square(y - self(x))))
                    return {"loss": self.tracker.result()}
            """,
            at=[(17, 25, '`.numpy()` on a symbolic')],
            run="""
            net = Net()
            net.compile(optimizer="sgd")
            history = net.fit(np.ones((4, 2), "float32"), np.zeros((4, 1), "float32"), epochs=1, verbose=0)
            loss = np.array(history.history["loss"])
            """,
            effect=FIXES_ERROR,
            note="a metric's result() in a Keras train_step, under fit",
        ),
        flagged(
            """
            import tensorflow as tf

            w = tf.Variable([1.0, 2.0])

            @tf.function
            def grad_norm(x):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_sum(w * x)
                grads = tape.gradient(loss, [w])
                return tf.norm(grads[0].numpy())
            """,
            fixed="""
            import tensorflow as tf

            w = tf.Variable([1.0, 2.0])

            @tf.function
            def grad_norm(x):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_sum(w * x)
                grads = tape.gradient(loss, [w])
                return tf.norm(grads[0])
            """,
            at=[(10, 20, '`.numpy()` on a symbolic')],
            run="y = grad_norm(tf.constant([3.0, 4.0]))",
            effect=FIXES_ERROR,
            note="an element of tape.gradient's list of gradients",
        ),
        flagged(
            """
            import tensorflow as tf
            import tensorflow_probability as tfp

            tfd = tfp.distributions
            prior = tfd.Normal(loc=0.0, scale=1.0)

            @tf.function
            def log_likelihood(x):
                return tf.reduce_sum(prior.log_prob(x).numpy())
            """,
            fixed="""
            import tensorflow as tf
            import tensorflow_probability as tfp

            tfd = tfp.distributions
            prior = tfd.Normal(loc=0.0, scale=1.0)

            @tf.function
            def log_likelihood(x):
                return tf.reduce_sum(prior.log_prob(x))
            """,
            at=[(9, 26, '`.numpy()` on a symbolic')],
            run="y = log_likelihood(tf.constant([0.5, -1.0]))",
            effect=FIXES_ERROR,
            note="a TensorFlow Probability distribution (tfd = tfp.distributions)",
        ),
        flagged(
            """
            import tensorflow as tf

            def center(x):
                return x - tf.reduce_mean(x)

            @tf.function
            def score(x):
                return center(x).numpy()
            """,
            fixed="""
            import tensorflow as tf

            def center(x):
                return x - tf.reduce_mean(x)

            @tf.function
            def score(x):
                return center(x)
            """,
            at=[(8, 12, '`.numpy()` on a symbolic')],
            run="y = score(tf.constant([1.0, 2.0, 6.0]))",
            effect=FIXES_ERROR,
            note="a same-module function whose every return is a tensor",
        ),
        clean(
            """
            import keras
            import tensorflow as tf
            import tensorflow_probability as tfp

            model = keras.Sequential([keras.layers.Dense(2)])
            loss_fn = keras.losses.MeanSquaredError()
            w = tf.Variable([1.0, 2.0])

            def evaluate(x, y):
                with tf.GradientTape() as tape:
                    loss = loss_fn(y, model(x))
                grads = tape.gradient(loss, [w])
                dist = tfp.distributions.Normal(0.0, 1.0)
                return model(x).numpy(), loss.numpy(), grads[0].numpy(), dist.sample().numpy()
            """,
            note="the same objects in eager code",
        ),
        clean(
            """
            import keras
            import numpy as np
            import tensorflow as tf

            model = keras.Sequential([keras.layers.Dense(2)])

            @tf.function
            def f(x):
                rank = len(model(x).shape)
                return x * np.float32(rank) + np.asarray(model.predict(x)).sum()
            """,
            note="model.predict returns NumPy; a shape is static",
        ),
        clean(
            """
            import keras
            import numpy as np
            import tensorflow as tf

            def scale():
                return 2.0

            class Lookup:
                def __call__(self, x):
                    return np.ones(2, "float32")

            loss_fn = keras.losses.MeanSquaredError()
            loss_fn = lambda y, p: np.float32(0.5)

            class Head(keras.layers.Layer):
                def __init__(self):
                    super().__init__()
                    self.table = Lookup()

                def call(self, inputs):
                    weights = np.asarray(self.table(inputs)) * np.sqrt(scale())
                    return inputs * weights * np.asarray(loss_fn(inputs, inputs))
            """,
            note="a function returning a number, self.table not a Keras object, a name rebound to a Python function",
        ),
    ]
