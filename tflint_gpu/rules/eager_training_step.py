from __future__ import annotations

import re

from typing import Set

import libcst as cst

from tflint_gpu.engine.context import KERAS_GRAPH_METHODS
from tflint_gpu.rules.base import CLOSE, Fix, Rule, Safety, clean, flagged


# Test code runs eagerly on purpose, and its speed does not matter.
_TEST_FUNCTION = re.compile(r"test|setUp|tearDown")


def in_test(scope) -> bool:
    """Is ``scope`` a test function or inside one (``test_*``, ``setUp``...)?"""
    return any(s.is_function and _TEST_FUNCTION.match(s.name) for s in scope.chain())


class EagerTrainingStep(Rule):
    """A GradientTape training step called in a loop with no `tf.function` on it: every step runs eagerly.

    ## What it does
    Finds a training step, a `with tf.GradientTape() as tape:` block whose
    `tape.gradient(...)` reaches `optimizer.apply_gradients(...)` (or
    `.minimize(..., tape=tape)`) in the same function, when
    * the function holding it is called repeatedly (from a `for`/`while` loop,
      or from a function that is) and neither it nor any caller runs as a
      graph (`tf.function`, `tf.function(f)`, a Keras `train_step`...); or
    * the step is written inline in the body of a `for`/`while` loop of eager
      code (no function to decorate: reported without a fix).

    Not flagged: a step already in graph code (decorated or wrapped with
    `tf.function`, or called from a `tf.function`); a Keras
    `train_step`/`test_step` (`fit` compiles it) and any method of that name in
    a class with bases; a function handed to `tf.py_function`; a step that
    runs once (not in a loop); gradients that reach no optimizer call.

    ## Why is this bad?
    Eagerly, every op of the forward pass, the gradient and the optimizer
    update is dispatched from Python one at a time: on a small model the step
    time is all Python overhead. Traced once by `tf.function`, the same step is
    one graph call.

    ## Example
    ```python
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    for x, y in dataset:
        train_step(x, y)
    ```

    Use instead:
    ```python
    @tf.function
    def train_step(x, y):
        ...
    ```

    ## Fix safety
    Unsafe. The fix adds `@tf.function` above the `def` (in the file's own
    spelling of TensorFlow), and is offered only for a function with no other
    decorator whose body, nested functions and same-module callees hold
    nothing the engine knows to break or change under tracing
    (`engine/eager.py`, `graph_hazards`): `.numpy()`/`.item()`, `print` and
    other builtins but a few pure ones, calls into non-TensorFlow modules
    (NumPy, `time`, `random`, `logging`...), Keras `fit`/`predict`/`save`,
    construction of Keras or TensorFlow objects (a `tf.Variable` or layer made
    per call), `global`/`nonlocal`, stores to attributes or outer containers,
    in-place methods on outer containers, a Python `if`/`while` on a tensor,
    returning a Python value, and reads of enclosing names that are rebound
    (the value at trace would be kept). Nor when a call site passes a Python
    number that changes per call (a `range`/`enumerate` counter, a name
    augmented in place): each new value would trace again. What remains
    unsafe: calls into other modules are not checked, the first call now
    traces (twice when it creates the optimizer's or model's variables), each
    new input shape or dtype traces again (a smaller last batch: one more
    trace), and float results may differ by rounding (graph kernels and op
    ordering): equal in our measurements, declared `close`.

    ## Measured effect
    TF 2.21, Keras 3.15, 2-core CPU: a 32-64-64-10 MLP, batch 64, Adam: 8.1-9.0
    ms a step eagerly, 0.29-0.50 ms under `tf.function` (about 20x), same
    losses. `examples/TFG405` (`tflint-gpu verify --rule TFG405 --device cpu
    --size small`): see the docs' figures in the example.
    """

    code = "TFG405"
    name = "eager-training-step"
    message = "training step runs eagerly in a loop: no `tf.function` on it or its callers"
    needs = (("GradientTape",), ("apply_gradients", "minimize"))
    fix_safety = Safety.UNSAFE

    def __init__(self) -> None:
        self._loops_reported: Set[int] = set()

    def visit_With(self, node: cst.With, ctx) -> None:
        step = ctx.eager.training_step(node, ctx.scope)
        if step is None:
            return
        scope = step.scope
        if scope.kind == "class" or ctx.graph(scope) is not None or in_test(scope) \
                or ctx.eager.debug_guarded(node, scope):
            return
        function = scope.function()
        if function is not None and function.excluded:
            return
        if step.loop is not None:
            if id(step.loop) not in self._loops_reported:  # one finding a loop (a GAN's two steps)
                self._loops_reported.add(id(step.loop))
                ctx.report(node, "training step runs eagerly in a loop: move it into a `tf.function`")
            return
        if function is None or function is not scope or not isinstance(function.node, cst.FunctionDef):
            return
        cls = function.enclosing_class
        if cls is not None and function.name in KERAS_GRAPH_METHODS and (
                ctx.graphs.is_keras_class(cls) or (isinstance(cls.node, cst.ClassDef) and cls.node.bases)):
            return
        if ctx.runs_repeatedly(function.node, function) is None:
            return
        sites = ctx.eager.call_sites(function)
        if sites and all(ctx.eager.debug_guarded(call, caller) for call, caller in sites):
            return  # called only in a debugging mode
        defn = function.node
        message = f"training step `{function.name}` runs eagerly in a loop: no `tf.function` on it or its callers"
        ctx.report(defn.name, message, self._fix(function, ctx))

    @staticmethod
    def _fix(function, ctx):
        defn = function.node
        if defn.decorators or ctx.eager.graph_hazards(function) or ctx.eager.retracing_arguments(function):
            return None
        spelled = ctx.module_expr("tensorflow", "function", function.parent)
        if spelled is None:
            return None
        expr, imports = spelled
        new = defn.with_changes(decorators=[cst.Decorator(expr)])
        return Fix("Decorate with `@tf.function`", Safety.UNSAFE, {defn: new}, imports)

    cases = [
        flagged(
            """
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(3)])
            optimizer = tf.keras.optimizers.SGD(0.1)

            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x) - y))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
                return loss

            def train(data):
                for x, y in data:
                    loss = train_step(x, y)
                return loss
            """,
            fixed="""
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(3)])
            optimizer = tf.keras.optimizers.SGD(0.1)

            @tf.function
            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x) - y))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
                return loss

            def train(data):
                for x, y in data:
                    loss = train_step(x, y)
                return loss
            """,
            at=[(6, 5, "training step `train_step` runs eagerly")],
            run="""
            tf.keras.utils.set_random_seed(0)
            x = tf.random.stateless_normal((8, 4), seed=(1, 2))
            y = tf.random.stateless_normal((8, 3), seed=(1, 3))
            loss = train([(x, y)] * 5)
            weights = model.trainable_variables[0]
            """,
            effect=CLOSE,
            note="the canonical custom training loop",
        ),
    ]
