from __future__ import annotations

import libcst as cst

from tflint_gpu.rules.base import GRAPH_TEXT, Rule, clean, flagged


class TfFunctionCreatedPerCall(Rule):
    """A `tf.function` made anew each time code runs, then called: traced every time.

    ## What it does
    Finds a `tf.function` object made in code that runs repeatedly — a `def`
    decorated with `tf.function`, `tf.function(f)` or `tf.function(lambda
    ...)` in a loop body, or in a function the engine knows runs many times
    (called from a loop, a Keras callback's per-batch method, a
    `Dataset.from_generator` generator...) — and then called in the same
    place: at once (`tf.function(f)(x)`), or by the name it was bound to,
    in the same loop iteration or the same run of the function.

    Not flagged: a `tf.function` made once (module level, `__init__`, a
    factory called once) or made in a loop and called only after it; one
    stored on an attribute or returned (the engine does not follow it);
    graph code (a `tf.function` made while tracing is traced once with it);
    one that closes over a value the loop around it rebinds, or, made per
    call of a function, over a model, layer, metric, optimizer or
    `tf.Variable` that function creates (a whole experiment per call): each
    is a different function. Given those objects as arguments, one shared
    `tf.function` would trace again for each new object anyway (TF 2.21: 3
    traces for 3 calls with a new Keras model and metric).

    ## Why is this bad?
    Traces are cached per `tf.function` object. A new object has an empty
    cache, so each call of a fresh one traces the Python function again and
    builds a new graph before running it, and TensorFlow warns about
    retracing. Made once and reused, it traces once per input signature.

    ## Example
    ```python
    for x in batches:
        step = tf.function(lambda x: tf.tanh(x @ w))
        y = step(x)
    ```

    Use instead:
    ```python
    step = tf.function(lambda x: tf.tanh(x @ w))
    for x in batches:
        y = step(x)
    ```

    ## Fix safety
    No fix. Hoisting is right only when the function captures nothing that
    changes between iterations (a loop variable, a tensor made in the loop:
    a tensor captured by closure is read at trace time and frozen into the
    graph); those must become arguments. Rewrite by hand.

    ## Measured effect
    TF 2.21, 2-core CPU, a 64 x 64 matmul and tanh, 50 calls: 0.13 ms a call
    with one `tf.function` reused; 8.4 ms with `tf.function(body)` made in
    the loop, 13.0 ms with a decorated `def` in the loop (50 traces), 12.1 ms
    with `tf.function(lambda ...)` called at once. `examples/TFG403` (a
    128 x 128 block, 30 steps), `tflint-gpu verify --rule TFG403 --device cpu
    --size small`: 30 traces a run before, 1 after, identical values, many
    times faster (the measurement below).
    """

    code = "TFG403"
    name = "tf-function-created-per-call"
    message = "a new `tf.function` is made and traced each time this runs: make it once and reuse it"
    needs = (GRAPH_TEXT,)
    fix_safety = None

    def visit_FunctionDef(self, node: cst.FunctionDef, ctx) -> None:
        self._check(node, ctx)

    def visit_Call(self, node: cst.Call, ctx) -> None:
        self._check(node, ctx)

    def _check(self, node: cst.CSTNode, ctx) -> None:
        scope = ctx.scope
        if ctx.graph(scope) is not None:
            return
        facts = ctx.retracing
        calls = facts.calls_of_created(node, scope)
        if not calls:
            return
        reason = ctx.runs_repeatedly(node, scope)
        if reason is None:
            return
        loops = facts.loops_around(node, scope)
        if loops:
            inner = loops[0]
            calls = [c for c in calls if any(loop is inner for loop in facts.loops_around(c, scope))]
            if not calls:
                return  # made in a loop, called after it: one trace
            if facts.captured_from_loop(node, scope, inner) is not None:
                return  # it closes over a value the loop rebinds: a different function each time
        elif facts.captured_per_call(node, scope) is not None:
            return  # it uses a model, metric or variable this call creates: a different function each call
        name = facts.created_tf_function(node, scope)
        what = f"`{name}`" if name else "here"
        when = "at every iteration" if loops else f"at every call of `{ctx.graphs.describe(scope.function())}`"
        ctx.report(node.name if isinstance(node, cst.FunctionDef) else node,
                   f"a new `tf.function` {what} is made and traced {when}: make it once and reuse it")

    cases = [
        flagged(
            """
            import tensorflow as tf

            def body(x):
                return tf.tanh(x)

            def run(batches, w):
                for x in batches:
                    step = tf.function(lambda x: tf.tanh(x @ w))
                    y = step(x)
                    tf.function(body)(x)

                    @tf.function
                    def inner(v):
                        return v * 2.0
                    inner(x)
                return y
            """,
            at=[(8, 16, "a new `tf.function` `step` is made and traced at every iteration"),
                (10, 9, "a new `tf.function` here is made and traced at every iteration"),
                (13, 13, "a new `tf.function` `inner` is made and traced at every iteration")],
            note="a wrapped lambda, a wrapper called at once, a decorated def: made and called in the loop",
        ),
        flagged(
            """
            import tensorflow as tf

            def evaluate(model, batches):
                @tf.function
                def step(x):
                    return model(x)
                for x in batches:
                    y = step(x)
                return y

            def main(model, batches, epochs):
                for _ in range(epochs):
                    evaluate(model, batches)
            """,
            at=[(5, 9, "a new `tf.function` `step` is made and traced at every call of `evaluate`")],
            note="made in a function called from a loop: traced again at each call",
        ),
        clean(
            """
            import tensorflow as tf

            def benchmark(augmenters, images):
                for make in augmenters:
                    layer = make()

                    @tf.function
                    def apply(x):
                        return layer(x)

                    apply(images)
            """,
            note="each iteration's tf.function closes over a value the loop rebinds (keras-cv benchmarks): "
                 "a different function each time, it cannot be made once before the loop",
        ),
        clean(
            """
            import tensorflow as tf

            def train_and_eval(width, strategy, datasets):
                model = tf.keras.Sequential([tf.keras.layers.Dense(width)])
                accuracy = tf.keras.metrics.Accuracy()

                def step_fn(x):
                    accuracy.update_state(x, model(x))

                @tf.function
                def eval_step(x):
                    strategy.run(step_fn, args=(x,))

                for x in datasets:
                    eval_step(x)

            def sweep(strategy, datasets):
                for width in [8, 16, 32]:
                    train_and_eval(width, strategy, datasets)
            """,
            note="a whole experiment per call: the tf.function uses the model and metric that call creates "
                 "(simclr colabs and tf2/run.py)",
        ),
        clean(
            """
            import tensorflow as tf

            def body(x):
                return x

            def factory():
                @tf.function
                def f(v):
                    return v
                return f

            def evaluate(model, x):
                @tf.function
                def step(v):
                    return model(v)
                return step(x)

            class M:
                def __init__(self):
                    self.f = tf.function(body)

            def run(xs, model):
                once = tf.function(body)
                for x in xs:
                    once(x)
                    g = factory()
                for x in xs:
                    last = tf.function(body)
                last(x)
                return evaluate(model, xs)
            """,
            note="made once (module level, __init__, before the loop, a function called once),"
                 " returned from a factory, or made in a loop but called after it",
        ),
        flagged(
            """
            import tensorflow as tf

            def step(x):
                f = tf.function(lambda v: v * 2)
                return f(x)

            for i in range(10):
                step(tf.constant(i))

            def step(x):
                return x * 2

            for i in range(10):
                step(tf.constant(i))
            """,
            at=[(4, 9, "a new `tf.function` `f` is made and traced at every call of `step`")],
            note="a script redefining `step` later: the first loop calls the def live there, which makes a "
                 "`tf.function` per call",
        ),
        clean(
            """
            import tensorflow as tf

            def step(x):
                f = tf.function(lambda v: v * 2)
                return f(x)

            step(tf.constant(1))

            def step(x):
                return x * 2

            for i in range(10):
                step(tf.constant(i))
            """,
            note="the def making a `tf.function` runs once; the loop calls the one redefined after it",
        ),
    ]
