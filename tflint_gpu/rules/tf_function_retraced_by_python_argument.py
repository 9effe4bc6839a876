from __future__ import annotations

import libcst as cst

from tflint_gpu.rules.base import GRAPH_TEXT, Rule, clean, flagged


class TfFunctionRetracedByPythonArgument(Rule):
    """A `tf.function` called in a loop with a Python value that changes every iteration.

    ## What it does
    Finds calls, in a loop of eager Python code, of a `tf.function` defined in
    the same module (`@tf.function def step`, `step = tf.function(f)`,
    `self.step` decorated with `tf.function` or bound to `tf.function(...)`)
    where an argument is a Python number, string or container that takes a
    new value at each iteration: the loop variable of `for i in range(...)`
    or the index of `enumerate(...)`, a counter (`step += 1`), arithmetic on
    such a value and Python constants (`epoch + 1`, `0.1 * 0.5 ** epoch`),
    `float(...)`/`int(...)`/`str(...)` or an f-string of one, a list, tuple
    or dict holding one, or a local computed from one in the loop body.

    Not flagged: an argument that is the same at every iteration (`f(x, 1)`,
    `training=True`); tensors and values of unknown kind (a parameter, an
    attribute, the result of a call the engine cannot see into); a bool
    (`epoch > 5`: two values, two traces at most); the element of a list of
    constants (`for lr in [0.1, 0.01]`: a bounded number of traces);
    a `tf.function` with an `input_signature` (Python values are converted
    to tensors: one trace; a float for an `int32` spec raises `TypeError`)
    or with `experimental_follow_type_hints`; calls from graph code (they
    trace once, when the caller is traced); Keras `fit`/`predict`.

    ## Why is this bad?
    A `tf.function` keys its traces on the *values* of Python arguments: each
    new value traces the Python function again and builds a new graph, which
    is slower than running it (TensorFlow warns "triggered tf.function
    retracing" after five). `reduce_retracing=True` does not help: it
    generalises tensor shapes, not Python values (measured: 10 traces for 10
    ints, floats, strings, tuples, lists or dicts, with or without it).
    A tensor argument of the same dtype and shape traces once.

    ## Example
    ```python
    @tf.function
    def train_step(x, y, lr):
        ...

    for epoch in range(epochs):
        lr = 0.1 * 0.5 ** epoch
        for x, y in dataset:
            train_step(x, y, lr)
    ```

    Use instead:
    ```python
    for epoch in range(epochs):
        lr = tf.constant(0.1 * 0.5 ** epoch)
        for x, y in dataset:
            train_step(x, y, lr)
    ```

    ## Fix safety
    No fix. Passing `tf.constant(i)` for a Python int changes what the body
    sees: an `int32` tensor instead of an `int`, so `range(i)` becomes a
    graph loop, a Python `if` on it becomes `tf.cond`, list indexing with it
    fails, and mixing it with a float tensor raises; `tf.constant(float(i))`
    or a `dtype=` is needed where the body does float math. Rewrite by hand.

    ## Measured effect
    TF 2.21, 2-core CPU: a `tf.function` called with 5 Python ints traced 5
    times (with or without `reduce_retracing=True`), with 5 scalar tensors
    once; a float computed per outer iteration gave 3 traces for 3 values.
    `examples/TFG402` (a training step on a 256 x 256 matrix, 8 epochs of 5
    steps, the learning rate a Python float set per epoch), `tflint-gpu
    verify --rule TFG402 --device cpu --size small`: 8 traces before, 1
    after, identical values. The traces all happen in the warm-up call,
    which is not timed (the function is defined at module level and every
    call passes the same 8 rates), so the timed calls in the measurement
    below take about as long before as after: what the fix saves is the
    tracing of a new process or of new values.
    """

    code = "TFG402"
    name = "tf-function-retraced-by-python-argument"
    message = "`tf.function` retraced for each new Python value of an argument: pass a tensor"
    needs = (GRAPH_TEXT,)
    fix_safety = None

    def visit_Call(self, node: cst.Call, ctx) -> None:
        scope = ctx.scope
        if ctx.graph(scope) is not None:
            return  # a call from graph code traces once, with its caller
        facts = ctx.retracing
        ref = facts.called_tf_function(node, scope)
        if ref is None or ref.converts_python_arguments:
            return
        for arg in node.args:
            if arg.star:
                continue
            reason = facts.per_iteration(arg.value, scope, node)
            if reason is None:
                continue
            text = ctx.module.code_for_node(arg.value).strip()
            if len(text) > 24:
                text = text[:21] + "..."
            ctx.report(arg.value, f"`{ref.name}` is retraced for each new Python value of `{text}`: pass a tensor")
            return

    cases = [
        flagged(
            """
            import tensorflow as tf

            @tf.function
            def train_step(x, lr):
                return x * lr

            def train(x, epochs):
                for epoch in range(epochs):
                    lr = 0.1 * 0.5 ** epoch
                    for _ in range(10):
                        train_step(x, lr)
            """,
            at=[(11, 27, "`train_step` is retraced for each new Python value of `lr`")],
            note="a float computed from the epoch (measured: one trace per epoch)",
        ),
        flagged(
            """
            import tensorflow as tf
            from tqdm import trange

            class Trainer:
                def __init__(self):
                    self.fn = tf.function(self._fn)

                def _fn(self, x, s):
                    return x

                @tf.function
                def step(self, x, s):
                    return x

                def fit(self, ds, epochs):
                    step = 0
                    for epoch in trange(epochs):
                        for x in ds:
                            self.step(x, step)
                            self.fn(x, epoch)
                            self.step(x, True)
                            step += 1
            """,
            at=[(19, 30, "`self.step` is retraced for each new Python value of `step`"),
                (20, 28, "`self.fn` is retraced for each new Python value of `epoch`")],
            note="a counter and a trange target; a decorated method and an attribute bound to tf.function(...)",
        ),
        flagged(
            """
            import tensorflow as tf

            def plain(x, s):
                return x

            wrapped = tf.function(plain)
            lam = tf.function(lambda x, s: x)

            def run(x, ds, n):
                for i, batch in enumerate(ds):
                    wrapped(batch, i)
                    lam(x, f"e{i}")
                    wrapped(x, [i, 1])
                    plain(x, i)
                j = 0
                while j < n:
                    wrapped(x, float(j))
                    j = j + 1
                return [wrapped(x, k + 1) for k in range(n)]
            """,
            at=[(11, 24, "`wrapped` is retraced for each new Python value of `i`"),
                (12, 16, "`lam` is retraced for each new Python value of `f\"e{i}\"`"),
                (13, 20, "`wrapped` is retraced for each new Python value of `[i, 1]`"),
                (17, 20, "`wrapped` is retraced for each new Python value of `float(j)`"),
                (19, 24, "`wrapped` is retraced for each new Python value of `k + 1`")],
            note="enumerate index, f-string, list, while counter, comprehension; the plain function is not traced",
        ),
        clean(
            """
            import tensorflow as tf

            @tf.function
            def step(x, s):
                return x * s

            @tf.function(input_signature=[tf.TensorSpec([4], tf.float32), tf.TensorSpec([], tf.int32)])
            def signed(x, s):
                return x * tf.cast(s, tf.float32)

            def train(x, ds, epochs, cfg, names):
                k = tf.constant(0)
                for epoch in range(epochs):
                    step(x, 1)
                    step(x, epoch > 3)
                    step(x, tf.constant(float(epoch)))
                    step(x, cfg.lr * epoch)
                    step(x, k)
                    signed(x, epoch)
                    step(x, epochs)
                    k += 1
                for lr in [0.1, 0.01]:
                    step(x, lr)
                for name in names:
                    step(x, name)
                for batch in ds:
                    step(batch, 2.0)
            """,
            note="constants, a bool, tensors, unknown kinds, an input_signature (ints become int32 tensors: one trace),"
                 " a loop over a list of constants, loop-invariant values",
        ),
        clean(
            """
            import tensorflow as tf

            @tf.function
            def inner(x, i):
                return x * i

            @tf.function
            def outer(x):
                for i in range(3):
                    x = inner(x, i)
                return x

            def run(x, n):
                for i in range(n):
                    pass
                inner(x, i)
                for e in range(n):
                    i = tf.constant(e)
                    inner(x, i)
            """,
            note="a call from graph code traces with its caller; a loop target read after its loop;"
                 " rebound to a tensor",
        ),
    ]
