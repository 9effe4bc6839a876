from __future__ import annotations

from typing import Any

import libcst as cst

from tflint_gpu.semantic.model import ITERATED, ScopeInfo
from tflint_gpu.semantic.trace_state import VALUE
from tflint_gpu.semantic.values import (DATASET, DISTRIBUTION, KERAS, LOSS, METRIC, PY_SCALAR, TAPE, TENSOR,
                                        VARIABLE)
from tflint_gpu.rules.base import GRAPH_TEXT, Rule, clean, flagged

# Values a graph captures by reference (a tf.Variable) or that are objects, not settings.
_NOT_SETTINGS = frozenset({VARIABLE, DATASET, KERAS, LOSS, METRIC, DISTRIBUTION, TAPE, TENSOR})


class PythonStateFrozenAtTrace(Rule):
    """Graph code reads a Python global or closure variable that is rebound after the trace.

    ## What it does
    Finds a read, in code that runs traced as a graph (a `tf.function`, a
    function given to `tf.data.Dataset.map` and friends, a Keras
    `call`/`train_step`, or a function those call), of a name bound by
    assignment at module level or in an eager enclosing function, when that
    name is rebound at a moment the graph may already have been traced:

    * at module level (or in the enclosing function) after a call that runs
      the graph code (`f(x)`; `ds.map(fn)`, which traces `fn`; a same-module
      function that reaches it), or in a loop that makes such a call
      (`for threshold in (0.5, 0.1): f(x)`);
    * through `global`/`nonlocal` in a function, after or in a loop with such
      a call, or in a function that itself runs repeatedly (called in a loop,
      a Keras callback's `on_epoch_end`...), or by a call of that function
      made after such a call.

    Also an instance attribute holding a Python value (`self.steps = 0` in
    `__init__`) read in a traced method (a `tf.function` method, Keras
    `train_step`) and changed in eager code: `self.steps += 1` in a method
    that calls the traced one, or a change in a Keras callback's per-batch or
    per-epoch method (also `self.model.steps += 1` in a callback, for a Keras
    model's `train_step`); not from a Keras `call` reached by an eager caller
    (an eager layer call runs `call`'s Python again), nor in a method that
    only set-up code calls in a loop (`Sequential.__init__` calling `add`).

    Not flagged: names bound only once; attributes set only in `__init__` or
    `build`, a `tf.Variable` attribute changed with `assign_add`; names rebound only before anything is
    traced (`x = 1` then `x = 2` at module top, a setup function run once
    before training, `global BATCH; BATCH = args.batch` in `main`); a
    `tf.Variable`, tensor, dataset, Keras model, layer, loss or metric
    (anything bound to one); imports, functions, classes, and names used as a
    callee (`act(x)`) or an object (`cfg.get(...)`); a function created inside
    the loop that rebinds the name (each turn makes a new function, traced
    afresh); a rebinding followed by `ds = <...>.map(fn)` made again (in the
    same block, before anything reads `ds`): `Dataset.map` traces a plain
    function afresh at each call (not a `tf.function`, whose traces are
    cached), so the new pipeline reads the new value; names a graph function
    itself writes through `global` (TFG103 reports those writes).

    ## Why is this bad?
    TensorFlow runs a graph function's Python only while tracing. A Python
    value read there (a number, a string, a list) is baked into the graph as a
    constant; later calls with the same input signature replay the graph and
    never read the name again. Changing `threshold` from 0.5 to 0.1 after the
    first call leaves the results unchanged, silently; a new input shape
    retraces and then picks up the new value, so results depend on call
    history.

    ## Example
    ```python
    threshold = 0.5

    @tf.function
    def count(x):
        return tf.reduce_sum(tf.cast(x > threshold, tf.int32))

    count(x)
    threshold = 0.1
    count(x)  # still counts against 0.5
    ```

    Use instead:
    ```python
    threshold = tf.Variable(0.5)

    @tf.function
    def count(x):
        return tf.reduce_sum(tf.cast(x > threshold, tf.int32))

    count(x)
    threshold.assign(0.1)
    count(x)
    ```
    (or pass the value as a tensor argument: `count(x, tf.constant(0.1))`).

    ## Fix safety
    No fix: whether to use a `tf.Variable` (and `assign` at every rebinding,
    also in other modules) or a tensor argument is a design choice.

    ## Measured effect
    TensorFlow 2.21, CPU: a module-level `threshold` changed from 0.5 to 0.1
    after the first call of a `tf.function` leaves its result unchanged (2 of
    [0.2, 0.3, 0.6, 0.9] above the threshold both times; 4 expected); the same
    through `for threshold in [0.5, 0.1]`, through a setter doing `global`,
    and for a closure variable of an eager function rebound in a loop after
    the `tf.function` was made. With a `tf.Variable` and `assign(0.1)` the
    second call counts 4. examples/TFG107 (`tflint-gpu verify --rule
    TFG107`) counts more values the same way: the second count changes with
    the threshold only after the fix (the measurement below).
    A rebound global tensor is frozen the same way (not reported).
    """

    code = "TFG107"
    name = "python-state-frozen-at-trace"
    message = "Graph code reads a Python value rebound after the trace: the graph keeps the traced value"
    needs = (GRAPH_TEXT,)
    fix_safety = None

    def visit_FunctionDef(self, node: cst.FunctionDef, ctx) -> None:
        self._check(ctx.model.scope_of_node[node], ctx)

    def visit_Lambda(self, node: cst.Lambda, ctx) -> None:
        self._check(ctx.model.scope_of_node[node], ctx)

    def _check(self, function: ScopeInfo, ctx) -> None:
        if ctx.graph(function) is None:
            return
        facts = ctx.trace_state
        for read in facts.outer_reads(function):
            binding = read.binding
            if read.use != VALUE or function in binding.writers:
                continue
            if not (binding.rebound or any(_iterated(v) for v, _ in binding.all_bindings())):
                continue
            if any(self._not_setting(value, scope, ctx) for value, scope in binding.all_bindings()):
                continue
            late = facts.late_rebinding(binding, function)
            if late is None:
                continue
            _site, _scope, why, text = late
            ctx.report(read.node, f"`{read.node.value}` is rebound {why} (`{text}`): graph code keeps the traced value")
        self._attributes(function, ctx)

    @staticmethod
    def _attributes(function: ScopeInfo, ctx) -> None:
        """``self.steps``, a Python number, read in graph code and changed in eager code."""
        facts = ctx.trace_state
        if not facts.attributes_may_change(function):
            return
        for read in facts.attribute_reads(function):
            if read.use != VALUE:
                continue
            attribute = ctx.values.attribute(read.node, function)
            if attribute is None or attribute.kind != PY_SCALAR:
                continue
            change = facts.eager_change(attribute, function)
            if change is None:
                continue
            binding, why = change
            first = next((b for b in attribute.bound if b.where != binding.where), None)
            origin = f" (set in `{first.where}`)" if first is not None else ""
            text = " ".join(cst.Module([]).code_for_node(binding.node).split())
            text = text if len(text) <= 40 else text[:37] + "..."
            ctx.report(read.node, f"`self.{attribute.name}` is a Python value{origin} changed in eager code "
                                  f"(`{text}` {why}): graph code keeps the value it had at trace; make it a "
                                  f"`tf.Variable` and `assign` it")

    @staticmethod
    def _not_setting(value: Any, scope: ScopeInfo, ctx) -> bool:
        if isinstance(value, tuple):
            return False
        if isinstance(value, cst.Lambda):
            return True
        return ctx.value_kind(value, scope) in _NOT_SETTINGS

    cases = [
        flagged(
            """
            import keras
            import tensorflow as tf


            class Trainer:
                def __init__(self):
                    self.steps = 0
                    self.warmup = 2

                @tf.function
                def step(self, x):
                    if self.steps < self.warmup:
                        return x * 0.0
                    return x

                def run(self, x):
                    self.steps += 1
                    return self.step(x)


            class Net(keras.Model):
                def __init__(self, *args, **kwargs):
                    super().__init__(*args, **kwargs)
                    self.epochs_seen = 0

                def train_step(self, data):
                    x, y = data
                    scale = 0.0 if self.epochs_seen < 1 else 1.0
                    return {"scale": tf.constant(scale)}


            class Bump(keras.callbacks.Callback):
                def on_epoch_end(self, epoch, logs=None):
                    self.model.epochs_seen += 1
            """,
            at=[(12, 12, "`self.steps` is a Python value (set in `__init__`) changed in eager code (`self.steps += 1` "
                         "in `run`, which calls `step(x)`)"),
                (28, 24, "`self.epochs_seen` is a Python value (set in `__init__`) changed in eager code "
                         "(`self.model.epochs_seen += 1` in `on_epoch_end`, which Keras runs repeatedly)")],
            note="measured (TF 2.21, Keras 3.15): the tf.function method took the warm-up branch on 4 of 4 calls; "
                 "train_step under fit saw epochs_seen 0 in all 3 epochs (the callback raised it to 3); the "
                 "warm-up length is set once in __init__ (not flagged)",
        ),
        clean(
            """
            import keras
            import tensorflow as tf


            class Trainer:
                def __init__(self, use_bias=True):
                    self.steps = tf.Variable(0)
                    self.limit = 3
                    self.limit = 4
                    self.calls = 0
                    self.use_bias = use_bias
                    self.seen = 0

                @tf.function
                def step(self, x):
                    self.seen += 1
                    if self.steps < self.limit:
                        return x * 0.0
                    return x + self.seen

                def run(self, x):
                    self.steps.assign_add(1)
                    return self.step(x)

                def describe(self):
                    self.calls += 1
                    return self.calls


            class Counter(keras.layers.Layer):
                def __init__(self):
                    super().__init__()
                    self.calls = 0

                def call(self, x):
                    return x * self.calls

                def forward(self, x):
                    self.calls += 1
                    return self(x)

                def on_epoch_end(self):
                    self.calls += 1


            class Stack(keras.Model):
                def __init__(self, blocks):
                    super().__init__()
                    self.depth = 0
                    for block in blocks:
                        self.add_block(block)

                def add_block(self, block):
                    self.depth += 1

                def train_step(self, data):
                    return {"depth": tf.constant(self.depth)}
            """,
            note="a tf.Variable counter (assign_add); an attribute rebound only in __init__; a Python counter bumped "
                 "in graph code (TFG103's write), or in eager code that runs no graph; a Keras call reading a "
                 "counter its caller bumps eagerly (an eager layer call runs call's Python again); a layer "
                 "method named like a callback is not one; a counter bumped by a method __init__ calls in a loop "
                 "(set-up, before any trace)",
        ),
        flagged(
            """
            import tensorflow as tf

            threshold = 0.5

            @tf.function
            def count(x):
                return tf.reduce_sum(tf.cast(x > threshold, tf.int32))

            x = tf.constant([0.2, 0.3, 0.6, 0.9])
            first = count(x)
            threshold = 0.1
            second = count(x)
            """,
            at=[(7, 38, "`threshold` is rebound after a call of `count` (`threshold = 0.1`)")],
            note="the measured case: a module-level rebinding after the first call",
        ),
        flagged(
            """
            import tensorflow as tf

            t2 = 0.5

            @tf.function
            def g(x):
                return tf.reduce_sum(tf.cast(x > t2, tf.int32))

            x = tf.constant([0.2, 0.6])
            results = []
            for t2 in [0.5, 0.1]:
                results.append(g(x))
            """,
            at=[(7, 38, "`t2` is rebound in a loop that calls `g` (`for t2 in [0.5, 0.1]`)")],
            note="a module-level loop rebinding the name and calling the function",
        ),
        flagged(
            """
            import tensorflow as tf

            lr = 0.1
            step_count = 0

            def set_lr(value):
                global lr
                lr = value

            @tf.function
            def step(w, g):
                return w - lr * g

            def train(w, g, epochs):
                global step_count
                for epoch in range(epochs):
                    w = step(w, g)
                    step_count = epoch
                return w

            w = step(tf.ones(2), tf.ones(2))
            set_lr(0.01)
            w = train(w, tf.ones(2), 3)
            """,
            at=[(12, 16, "`lr` is rebound after a call of `step` (`set_lr(0.01)`)")],
            note="a setter writing the global, called after the first call; step_count is never read in graph code",
        ),
        clean(
            """
            import tensorflow as tf

            scale = 2.0

            @tf.function
            def apply(x):
                return x * scale

            print(apply(tf.constant(1.0)))
            scale = 3.0
            """,
            note="rebound after the last call (a notebook's last cell): the traced graph never runs again",
        ),
        flagged(
            """
            import keras
            import tensorflow as tf

            margin = 1.0

            class Shrink(keras.callbacks.Callback):
                def on_epoch_end(self, epoch, logs=None):
                    global margin
                    margin = margin * 0.5

            @tf.function
            def loss_fn(y, p):
                return tf.reduce_mean(tf.maximum(0.0, margin - y * p))
            """,
            at=[(13, 43, "`margin` is rebound in `on_epoch_end`, which runs repeatedly")],
            note="a global write in a Keras callback's per-epoch method",
        ),
        flagged(
            """
            import tensorflow as tf

            def run(x):
                scale = 1.0

                @tf.function
                def f(v):
                    return v * scale

                out = []
                for scale in (1.0, 2.0):
                    out.append(f(x))
                return out

            def fresh(x):
                out = []
                for scale in (1.0, 2.0):
                    @tf.function
                    def f(v):
                        return v * scale
                    out.append(f(x))
                return out

            def early(x):
                scale = 1.0
                if x is None:
                    scale = 2.0

                @tf.function
                def f(v):
                    return v * scale
                return f(x)
            """,
            at=[(8, 20, "`scale` is rebound in a loop that calls `f` (`for scale in (1.0, 2.0)`)")],
            note="a closure variable rebound after the tf.function is made (run); not: a new tf.function every "
                 "turn (fresh), a rebinding before the function exists (early)",
        ),
        flagged(
            """
            import tensorflow as tf

            epoch = 0

            def augment(image):
                return image * (1.0 + 0.1 * epoch)

            ds = tf.data.Dataset.from_tensor_slices(tf.ones((4, 2))).map(augment)
            for epoch in range(3):
                for batch in ds:
                    pass
            """,
            at=[(6, 33, "`epoch` is rebound after a call of `map(augment)`")],
            note="Dataset.map traces the function when the pipeline is built: later epochs change nothing",
        ),
        clean(
            """
            import tensorflow as tf

            THRESHOLD = 0.5
            THRESHOLD = 0.4
            w = tf.Variable(1.0)
            bias = tf.constant(0.5)
            BATCH = 32
            act = tf.nn.relu

            def main(batch):
                global BATCH, act
                BATCH = batch
                act = tf.nn.elu
                return f(tf.ones(2))

            @tf.function
            def f(x):
                y = [t * 2 for t in range(3)]
                return act(x) * THRESHOLD * w + bias + BATCH

            f(tf.ones(2))
            w = tf.Variable(2.0)
            bias = tf.constant(0.1)
            t = 5
            """,
            note="rebound before any call; a setup function run once; a callee; a tf.Variable or tensor; "
                 "a comprehension variable",
        ),
        clean(
            """
            import tensorflow as tf

            counter = 0

            @tf.function
            def g(x):
                global counter
                counter += 1
                return x + counter

            g(tf.ones(2))
            g(tf.ones(2))
            """,
            note="a global written in the graph function itself: TFG103 reports the write",
        ),
        clean(
            """
            import tensorflow as tf

            config = {"scale": 1.0}
            model = None

            def build():
                global model
                model = tf.keras.Sequential([tf.keras.layers.Dense(1)])

            @tf.function
            def step(x):
                return model(x) * config["scale"]

            for i in range(3):
                build()
                config["scale"] = 2.0
                step(tf.ones((1, 2)))
            """,
            note="a dict mutated in place is not rebound; a model is used as a callee",
        ),
        clean(
            """
            import tensorflow as tf

            IMAGE_RES = 224

            def format_image(image, label):
                image = tf.image.resize(image, (IMAGE_RES, IMAGE_RES)) / 255.0
                return image, label

            training_set = tf.data.Dataset.from_tensor_slices((tf.ones((4, 8, 8, 3)), tf.ones(4)))
            train_batches = training_set.map(format_image).batch(2)
            for images, labels in train_batches:
                pass

            IMAGE_RES = 32
            train_batches = training_set.map(format_image).batch(2)
            for images, labels in train_batches:
                pass
            """,
            note="the pipeline is made again after the rebinding: Dataset.map traces a plain function afresh at "
                 "each call, so the new one resizes to 32 (tensorflow/examples l06c03 transfer-learning notebook)",
        ),
    ]


def _iterated(value: Any) -> bool:
    return isinstance(value, tuple) and value[0] == ITERATED
