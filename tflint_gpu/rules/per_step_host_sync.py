from __future__ import annotations

from typing import List, Set

import libcst as cst

from tflint_gpu.semantic.bindings import is_builtin, under_condition
from tflint_gpu.semantic.model import ITERATED, UNPACKED, dotted_name
from tflint_gpu.semantic.testcode import in_test_function
from tflint_gpu.rules.base import Rule, clean, flagged

_LOOPS = (cst.For, cst.While)
# Builtins that read a tensor's value on the host.
_BUILTINS = frozenset({"float", "int", "str", "print"})
# NumPy functions that read a tensor's value on the host (through ``__array__``).
_NUMPY = frozenset({"numpy.asarray", "numpy.array", "numpy.float32", "numpy.float64", "numpy.mean"})
# Between the loop and the conversion, these make it conditional (a logging interval, an error path).
_CONDITIONAL = (cst.If, cst.IfExp, cst.ExceptHandler, cst.Else, cst.BooleanOperation)


class PerStepHostSync(Rule):
    """A training loop that reads the step's result on the host at every step: the host waits for each step.

    ## What it does
    Finds a Python `for`/`while` loop (outside graph code and tests) that calls
    a training step at every iteration and, at every iteration too (not under
    an `if`, such as a logging interval `if step % 100 == 0:`), converts what
    that step returned to a Python or NumPy value: `loss.numpy()`,
    `float(loss)`, `int(...)`, `str(...)`, `np.asarray(...)`,
    `np.float32(...)`, `np.mean(...)`, or formats it (`print(loss)`,
    `f"{loss:.4f}"`, `"...".format(loss)`, `"%.4f" % loss`). A training step
    is a same-module function or method whose body holds a
    `tf.GradientTape` step that applies its gradients (`apply_gradients`,
    `minimize(..., tape=)`), or that calls one by name
    (`strategy.run(train_step, args=...)`); also a step written eagerly in
    the loop body (a `tf.GradientTape` block whose gradients the loop
    applies, which TFG405 reports too: moving it into a `tf.function` leaves
    this sync), whose results are what its tape block computes (`loss`). A
    step's dict of results read by value in an inner loop (`for name, value
    in logs.items(): print(f"{name}: {value:.4f}")`, `.values()`) counts;
    its keys do not. The first conversion in the loop body is reported: it
    is the one that waits (later ones find the value ready).

    Not flagged: a conversion under an `if` in the loop, or after the loop; a
    result accumulated as a tensor (`total += loss`); a loop whose body runs
    another loop every iteration (an epoch loop around the batches); values
    that are not the step's result (an RL agent's action, which the
    environment needs on the host); graph code (there, `.numpy()` is
    TFG101's).

    ## Why is this bad?
    On a GPU, TensorFlow runs asynchronously: calling the step queues its
    kernels and returns, so while the device computes step *n*, Python can
    fetch the next batch, run the loop's bookkeeping and queue step *n + 1*.
    Reading the result's value (`.numpy()`, `float()`, formatting) blocks
    until step *n* has finished and its value is copied back. Every Python
    statement after that point in the iteration then runs while the device
    is idle, and the device waits for the next step's kernels: the host's
    per-step time is added to the device's instead of overlapping it. The
    smaller the step (RL agents, small models, short sequences), the larger
    the share.

    ## Example
    ```python
    for step, (x, y) in enumerate(train_ds):
        loss = train_step(x, y)
        print(f"step {step} loss {loss.numpy():.4f}")
    ```

    Use instead:
    ```python
    for step, (x, y) in enumerate(train_ds):
        loss = train_step(x, y)
        if step % 100 == 0:
            print(f"step {step} loss {loss.numpy():.4f}")
    ```
    or keep the values on the device (`mean_loss.update_state(loss)`, a
    `keras.metrics.Mean`; a list of tensors) and read them after the loop.

    ## Fix safety
    No fix: logging less often, or later, changes what the program prints.

    ## Measured effect
    `benchmarks/host_sync.py`, TF 2.21 on the CPU (2 cores; the step's
    compute pinned to one of them so that the other plays the host), a
    Dense 256-512-512-10 `tf.function` step on batches of 128 from a
    prefetching `tf.data` pipeline, 3 ms of per-step Python after the
    conversion point, best of 5 rounds of 200 steps:
    * With TensorFlow's asynchronous execution, as a GPU runs
      (`tf.config.experimental.set_synchronous_execution(False)`): 8.8
      ms/step without a conversion, 12.1 ms/step with `float(loss)` every
      step (1.37x; 1.23x in an earlier run): the host's 3 ms no longer
      overlap the step.
    * With the CPU's default synchronous execution there is nothing to
      overlap: 12.2 against 11.8 ms/step (0.97x, noise). On a CPU-only
      machine the finding costs nothing; on a GPU it was not measured (no
      GPU is available to this project).
    * With no per-step Python after the conversion, no difference either
      way (1.01x, 1.02x): the cost is the host work the wait serialises.
    `examples/TFG203` (40 steps, every loss kept as a Python float; the
    rewrite keeps them as tensors and reads them after the loop), `tflint-gpu
    verify --rule TFG203 --device cpu --size small`: equivalent, the same
    losses, and no gain on this CPU (synchronous execution: none to expect;
    the ratio is in the measurement below).

    On real code: the labelled set's per-step-host-sync kind 3 of 8 (the
    progress line printing `batch_loss.numpy()` every batch; missed: host
    reads inside an eager step, an evaluation loop, a gradient round trip
    through NumPy), 6 findings on the checked-out projects, all true;
    reliability corpus 4, all true (two TF guide demo loops of 10 steps, the
    SavedModel guide's, a tensorflow_similarity training loop).
    """

    code = "TFG203"
    name = "per-step-host-sync"
    message = "the training step's result read on the host at every step"
    needs = (("GradientTape",),)
    fix_safety = None

    def visit_For(self, node: cst.For, ctx) -> None:
        self._check(node, ctx)

    def visit_While(self, node: cst.While, ctx) -> None:
        self._check(node, ctx)

    def _check(self, loop: cst.CSTNode, ctx) -> None:
        scope = ctx.scope
        if ctx.graph(scope) is not None or in_test_function(scope) or ctx.in_test_module:
            return
        nodes = list(ctx.descendants(loop.body))
        here = scope.function()
        steps: Set[int] = set()
        inner_loops = []
        for node in nodes:
            if node.__class__ is cst.Call and ctx.eager.loop_around(node, scope) is loop:
                callee = ctx.model_calls.callee(node, scope)
                if callee is not None and callee is not here and ctx.eager.step_function(callee) is not None:
                    steps.add(id(node))
            elif node.__class__ is cst.With and ctx.eager.loop_around(node, scope) is loop:
                step = ctx.eager.training_step(node, scope)
                if step is not None and step.loop is loop:
                    steps.add(id(node))  # an eager step written in the loop (TFG405's): its tape's values
            elif node.__class__ in _LOOPS and not under_condition(node, loop, scope, _CONDITIONAL):
                inner_loops.append(node)
        if not steps:
            return
        over_results = {id(loop)}
        for inner in inner_loops:
            if not (isinstance(inner, cst.For) and self._step_result(_container(inner.iter), steps, ctx, scope, inner)):
                return  # another loop at every iteration: an epoch loop around the steps (not one over its results)
            over_results.add(id(inner))
        for node in nodes:
            for value in _converted(node, ctx, scope):
                if self._step_result(value, steps, ctx, scope, node) \
                        and id(ctx.eager.loop_around(node, scope)) in over_results \
                        and not under_condition(node, loop, scope, _CONDITIONAL) \
                        and not _carried(node, nodes, scope):
                    what = dotted_name(value) if not isinstance(value, cst.Call) else None
                    shown = f"`{what}`" if what else "the step's result"
                    ctx.report(node, f"{shown} read on the host at every training step: the loop waits for each step "
                                     f"to finish before it can queue the next; keep it as a tensor (a "
                                     f"`keras.metrics.Mean`, `total += loss`) and read it every N steps or "
                                     f"after the loop")
                    return

    @staticmethod
    def _step_result(value: cst.BaseExpression, steps: Set[int], ctx, scope, at: cst.CSTNode) -> bool:
        while isinstance(value, cst.Subscript):
            value = value.value
        if isinstance(value, cst.Call):
            return id(value) in steps
        if not isinstance(value, cst.Name):
            return False
        found = ctx.assigned(value.value, at=at)
        if found is None or found.scope is not scope or found.writers or not found.own_values:
            return False
        for bound in found.own_values:
            if isinstance(bound, tuple):
                if bound[0] == ITERATED and isinstance(bound[1], cst.BaseExpression):
                    # `for name, v in logs.items()` / `for v in logs.values()` of a step's dict of results
                    loop = next((n for n in scope.ancestors(bound[1]) if isinstance(n, cst.For)), None)
                    if loop is not None and _result_element(loop, value.value) \
                            and PerStepHostSync._step_result(_container(bound[1]), steps, ctx, scope, loop):
                        continue
                    return False
                if bound[0] != UNPACKED:
                    return False
                bound = bound[1]
            if isinstance(bound, cst.Call) and id(bound) in steps:
                continue
            if isinstance(bound, cst.BaseExpression) and any(
                    n.__class__ is cst.With and id(n) in steps for n in scope.ancestors(bound)):
                continue  # computed in the eager step's tape block (`loss = ...`)
            return False
        return True


def _container(iterable: cst.BaseExpression) -> cst.BaseExpression:
    """The container a loop goes over: ``logs`` of ``logs.items()``/``.values()``."""
    if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute) and not iterable.args \
            and iterable.func.attr.value in ("items", "values"):
        return iterable.func.value
    return iterable


def _result_element(loop: cst.For, name: str) -> bool:
    """Does ``name`` take a value (not a key) of the dict ``loop`` goes over: ``v`` of ``for k, v in
    d.items()`` or of ``for v in d.values()``?"""
    iterable = loop.iter
    if not (isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute)):
        return False
    method = iterable.func.attr.value
    if method == "values":
        return isinstance(loop.target, cst.Name) and loop.target.value == name
    if method == "items" and isinstance(loop.target, (cst.Tuple, cst.List)) and len(loop.target.elements) == 2:
        second = loop.target.elements[1].value
        return isinstance(second, cst.Name) and second.value == name
    return False


def _carried(node: cst.CSTNode, nodes: List[cst.CSTNode], scope) -> bool:
    """Is ``node`` the value assigned to a name the loop body reads elsewhere (``image =
    result.numpy()`` feeding host-side work of the next iteration): the host needs it."""
    parent = next(scope.ancestors(node), None)
    if not isinstance(parent, cst.Assign) or parent.value is not node:
        return False
    names = {t.target.value for t in parent.targets if isinstance(t.target, cst.Name)}
    targets = {id(t.target) for t in parent.targets}
    return any(n.__class__ is cst.Name and n.value in names and id(n) not in targets for n in nodes)


def _converted(node: cst.CSTNode, ctx, scope) -> List[cst.BaseExpression]:
    """The expressions whose values ``node`` reads on the host."""
    cls = node.__class__
    if cls is cst.Call:
        func = node.func
        if isinstance(func, cst.Attribute):
            if func.attr.value == "numpy" and not node.args:
                return [func.value]
            if func.attr.value == "format" and isinstance(func.value, (cst.SimpleString, cst.ConcatenatedString)):
                return [arg.value for arg in node.args]
        if isinstance(func, cst.Name) and func.value in _BUILTINS and is_builtin(func.value, scope):
            return [arg.value for arg in node.args if arg.keyword is None] if func.value == "print" \
                else [node.args[0].value] if node.args else []
        if ctx.qualname(func, scope) in _NUMPY and node.args:
            return [node.args[0].value]
        return []
    if cls is cst.FormattedString:
        return [part.expression for part in node.parts if isinstance(part, cst.FormattedStringExpression)]
    if cls is cst.BinaryOperation and isinstance(node.operator, cst.Modulo) \
            and isinstance(node.left, (cst.SimpleString, cst.ConcatenatedString)):
        right = node.right
        return [e.value for e in right.elements] if isinstance(right, cst.Tuple) else [right]
    return []


_STEP = '''
    import tensorflow as tf

    model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
    optimizer = tf.keras.optimizers.SGD(0.1)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss
'''


PerStepHostSync.cases = [
    flagged(
        """
        import tensorflow as tf

        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        opt = tf.keras.optimizers.Adam()


        def train(ds):
            for x, y in ds:
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x) - y))
                grads = tape.gradient(loss, model.trainable_variables)
                opt.apply_gradients(zip(grads, model.trainable_variables))
                print(loss.numpy())


        @tf.function
        def step(x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x) - y))
            grads = tape.gradient(loss, model.trainable_variables)
            opt.apply_gradients(zip(grads, model.trainable_variables))
            return {"loss": loss}


        def fit(ds):
            for x, y in ds:
                logs = step(x, y)
                for name, value in logs.items():
                    print(f"{name}: {value:.4f}")


        def names(ds):
            for x, y in ds:
                logs = step(x, y)
                for name, value in logs.items():
                    print(name)
        """,
        at=[(13, 15, "`loss` read on the host at every training step"),
            (29, 19, "`value` read on the host at every training step")],
        note="issue 35: the eager step's own loss (TFG405 reports the step; the sync stays once it is a "
             "tf.function), and the values of a step's dict of results formatted every step; not its keys",
    ),
    flagged(
        _STEP + '''
    def train(dataset, epochs):
        for epoch in range(epochs):
            for step, (x, y) in enumerate(dataset):
                loss = train_step(x, y)
                print(f"epoch {epoch} step {step} loss {loss.numpy():.4f}")
        for x, y in dataset:
            losses = [float(train_step(x, y))]
        while True:
            total, acc = train_step(x, y)
            print("loss", total)
            print("%.3f" % total)
    ''',
        at=[(18, 53, "`loss` read on the host at every training step"),
            (20, 19, "the step's result read on the host"),
            (23, 9, "`total` read on the host")],
        note="a tf.function step, its result converted, formatted, printed; the first conversion per loop",
    ),
    flagged(
        '''
    import numpy as np
    import tensorflow as tf

    class Trainer:
        def __init__(self, model, optimizer):
            self.model, self.optimizer = model, optimizer

        def step(self, x, y):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(self.model(x) - y))
            grads = tape.gradient(loss, self.model.trainable_variables)
            self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
            return loss

        def fit(self, batches):
            history = []
            for x, y in batches:
                history.append(np.asarray(self.step(x, y)))
            return history
    ''',
        at=[(18, 28, "the step's result read on the host")],
        note="an eager method step: the caller's loop reads its result",
    ),
    flagged(
        '''
    import tensorflow as tf

    strategy = tf.distribute.MirroredStrategy()

    def step_fn(x):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(model(x))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    @tf.function
    def distributed_step(x):
        per_replica = strategy.run(step_fn, args=(x,))
        return strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica, axis=None)

    for x in dist_ds:
        loss = distributed_step(x)
        print('\\r{} loss {:.4f}'.format(1, loss), end="")
    ''',
        at=[(19, 11, "`loss` read on the host")],
        note="a distributed step that runs the tape step through strategy.run; str.format",
    ),
    clean(
        _STEP + '''
    import numpy as np

    mean = tf.keras.metrics.Mean()
    def train(dataset, env, policy):
        for step, (x, y) in enumerate(dataset):
            loss = train_step(x, y)
            mean.update_state(loss)
            if step % 100 == 0:
                print(f"step {step} loss {loss.numpy():.4f}")
        print(float(loss))
        for epoch in range(10):
            for x, y in dataset:
                loss = train_step(x, y)
            print(f"epoch {epoch} loss {float(loss):.4f}")
        total = 0.0
        for x, y in dataset:
            total += train_step(x, y)
            action = policy(x).numpy()
            env.step(np.argmax(action))
        for x, y in dataset:
            loss = train_step(x, y)
            ok = loss is None or print(float(loss))
        image = np.zeros((4, 1))
        for _ in range(10):
            image = np.roll(image, 1)
            y = train_step(image, 0.0)
            image = y.numpy()

    @tf.function
    def graph_loop(dataset):
        for x, y in dataset:
            loss = train_step(x, y)
            tf.print(loss)
    ''',
        note="a logging interval, after the loop, once per epoch, an accumulated tensor, an action, a value fed back "
             "to host work, graph code",
    ),
    clean(
        '''
    import tensorflow as tf

    @tf.function
    def forward(x):
        return model(x)

    def gradients_only(x):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(model(x))
        return tape.gradient(loss, model.trainable_variables)

    for x in batches:
        out = forward(x)
        print(out.numpy())
        g = gradients_only(x)
        print(float(g[0][0]))
    ''',
        note="an inference loop, and a step that applies no gradients",
    ),
]
