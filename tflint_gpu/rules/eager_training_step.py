from __future__ import annotations

from typing import Set

import libcst as cst

from tflint_gpu.semantic.api import KERAS_GRAPH_METHODS
from tflint_gpu.semantic.testcode import in_test_function
from tflint_gpu.rules.base import CLOSE, Fix, Rule, Safety, clean, flagged


def _base_class_hook(function, ctx) -> bool:
    """A private method (``_train``) of a class with bases (other than ``object``) that nothing in its
    file calls: a hook the base class, in another module, calls, maybe from a
    `tf.function` (TF-Agents' `TFAgent.train` runs `_train` in one)."""
    cls = function.enclosing_class
    return cls is not None and ctx.graphs.objects.outside_bases(cls) \
        and function.name.startswith("_") and not function.name.startswith("__") \
        and not ctx.eager.call_sites(function)


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

    The update may be written by hand (`v.assign_sub(lr * g)` over the
    gradients) or be another library's (`opt.apply(grads, variables)`), and
    the tape may live in a helper that returns the gradients
    (`compute_gradients`) when a caller in the file hands them to an update,
    directly or through a function it passes them to: the helper is the part
    to trace. A step is found through the objects that hold it, also one
    handed to a constructor (`Worker(self.global_actor)` then
    `self.global_actor.train(...)` in the worker's loop, as A3C agents do).

    Not flagged: a step already in graph code (decorated or wrapped with
    `tf.function`, or called from a `tf.function`); a Keras
    `train_step`/`test_step` (`fit` compiles it) and any method of that name in
    a class with bases; a function handed to `tf.py_function`; a step that
    runs once, or whose loop is in another module (a function called from
    nowhere in its file; for a step inline in a loop, a private method of a
    class with bases that nothing in its file calls: a hook of a base class
    elsewhere, as TF-Agents' `_train`, which `TFAgent.train` runs in a
    `tf.function`); gradients that reach no optimizer call; eager on
    purpose: code in a test (`test_*`, `setUp`, `tearDown`), behind a
    debugging switch (an `if`/`while` whose test mentions "debug" or "eager",
    as `if FLAGS.mode == "eager_tf":`, or a function so named), and a
    function whose every call site is behind one.

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
    (`semantic/eager.py`, `graph_hazards`). The callees include the methods
    its calls on objects may run (`semantic/objects.py`): of an object whose
    class the file defines, and, on an object the file cannot tell (a
    parameter such as `optimizer`), every method of that name the file
    defines, so `optimizer.apply_gradients(...)` in a notebook that defines
    its own `Adam` is judged by that `Adam.apply_gradients` (tensorflow/docs
    `mlp_core.ipynb`: it counts steps in `self.t += 1.`; traced, 20 steps
    left `optimizer.t` at 3.0 instead of 21.0 and the final loss at 0.556079
    instead of 0.187688, TF 2.21); a call to a method the engine cannot find
    on an object of the file's own classes counts as a hazard. The hazards: `.numpy()`/`.item()`, `print` and
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
    losses. `examples/TFG405` (the same MLP, 120 steps a call, a fresh model
    and trace every call), `tflint-gpu verify --rule TFG405 --device cpu
    --size small`: equal losses and weights, several times faster after the
    fix (the measurement below; about half the gain while other jobs load
    the machine), 2 traces a call after the fix (the first call creates
    Adam's variables).
    The variants, same MLP and batch, 200 steps: a helper returning the
    gradients, applied by a traced function, 4.31 ms a step with the helper
    eager against 0.86 ms traced (5.0x); an SGD update written by hand with
    `assign_sub`, 3.12 against 0.30 ms (10.3x); equal final losses.
    """

    code = "TFG405"
    name = "eager-training-step"
    message = "training step runs eagerly in a loop: no `tf.function` on it or its callers"
    needs = (("GradientTape",), ("apply", "minimize", "assign"))
    fix_safety = Safety.UNSAFE

    def __init__(self) -> None:
        self._loops_reported: Set[int] = set()

    def visit_With(self, node: cst.With, ctx) -> None:
        step = ctx.eager.training_step(node, ctx.scope)
        if step is None:
            return
        scope = step.scope
        graph = ctx.graph(scope)
        # A function graph code hands to `strategy.run`/`tf.while_loop`... also runs
        # eagerly where eager code calls it: whether it repeats there decides.
        if scope.kind == "class" or (graph is not None and graph.kind != "handed") or in_test_function(scope) \
                or ctx.eager.debug_guarded(node, scope):
            return
        function = scope.function()
        if function is not None and function.excluded:
            return
        if step.loop is not None:
            if function is not None and _base_class_hook(function, ctx):
                return
            if id(step.loop) not in self._loops_reported:  # one finding a loop (a GAN's two steps)
                self._loops_reported.add(id(step.loop))
                ctx.report(node, "training step runs eagerly in a loop: move it into a `tf.function`")
            return
        if function is None or function is not scope or not isinstance(function.node, cst.FunctionDef):
            return
        cls = function.enclosing_class
        if cls is not None and function.name in KERAS_GRAPH_METHODS and (
                ctx.graphs.is_keras_class(cls) or ctx.graphs.objects.outside_bases(cls)):
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

            class Actor:
                def __init__(self):
                    self.model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    self.opt = tf.keras.optimizers.SGD(0.1)

                def train(self, states, targets):
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean(tf.square(self.model(states) - targets))
                    grads = tape.gradient(loss, self.model.trainable_variables)
                    self.opt.apply_gradients(zip(grads, self.model.trainable_variables))
                    return loss

            class Agent:
                def __init__(self):
                    self.actor = Actor()

                def replay(self, states, targets):
                    for _ in range(3):
                        loss = self.actor.train(states, targets)
                    return loss
            """,
            fixed="""
            import tensorflow as tf

            class Actor:
                def __init__(self):
                    self.model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    self.opt = tf.keras.optimizers.SGD(0.1)

                @tf.function
                def train(self, states, targets):
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean(tf.square(self.model(states) - targets))
                    grads = tape.gradient(loss, self.model.trainable_variables)
                    self.opt.apply_gradients(zip(grads, self.model.trainable_variables))
                    return loss

            class Agent:
                def __init__(self):
                    self.actor = Actor()

                def replay(self, states, targets):
                    for _ in range(3):
                        loss = self.actor.train(states, targets)
                    return loss
            """,
            at=[(8, 9, "training step `train` runs eagerly")],
            run="""
            tf.keras.utils.set_random_seed(0)
            states = tf.random.stateless_normal((8, 4), seed=(1, 2))
            targets = tf.random.stateless_normal((8, 1), seed=(1, 3))
            loss = Agent().replay(states, targets)
            """,
            effect=CLOSE,
            note="a reinforcement-learning agent: the step is a method of an object held in an attribute "
                 "(`self.actor = Actor()`), called in a loop of another class",
        ),
        clean(
            """
            import tensorflow as tf

            class Actor:
                def __init__(self):
                    self.model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
                    self.opt = tf.keras.optimizers.SGD(0.1)

                def train(self, states, targets):
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean(tf.square(self.model(states) - targets))
                    grads = tape.gradient(loss, self.model.trainable_variables)
                    self.opt.apply_gradients(zip(grads, self.model.trainable_variables))
                    return loss

            class Agent:
                def __init__(self, actor):
                    self.actor = actor

                def replay(self, states, targets):
                    for _ in range(3):
                        loss = self.actor.train(states, targets)
                    return loss
            """,
            note="the attribute holds a parameter: which `train` the loop calls cannot be told",
        ),
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
            weights = model.trainable_variables[0].numpy()
            """,
            effect=CLOSE,
            note="the canonical custom training loop",
        ),
        flagged(
            """
            import keras
            import tensorflow as tfl

            class Trainer:
                def __init__(self):
                    self.model = keras.Sequential([keras.layers.Dense(2)])
                    self.opt = keras.optimizers.Adam(0.01)

                def step(self, x, y, training=True):
                    with tfl.GradientTape() as tape:
                        loss = tfl.reduce_mean(tfl.square(self.model(x, training=training) - y))
                    grads = tape.gradient(loss, self.model.trainable_variables)
                    grads, _ = tfl.clip_by_global_norm(grads, 1.0)
                    self.opt.apply_gradients(zip(grads, self.model.trainable_variables))
                    return {"loss": loss}

                def fit(self, x, y, epochs):
                    for _ in range(epochs):
                        out = self.step(x, y, training=True)
                    return out["loss"]
            """,
            fixed="""
            import keras
            import tensorflow as tfl

            class Trainer:
                def __init__(self):
                    self.model = keras.Sequential([keras.layers.Dense(2)])
                    self.opt = keras.optimizers.Adam(0.01)

                @tfl.function
                def step(self, x, y, training=True):
                    with tfl.GradientTape() as tape:
                        loss = tfl.reduce_mean(tfl.square(self.model(x, training=training) - y))
                    grads = tape.gradient(loss, self.model.trainable_variables)
                    grads, _ = tfl.clip_by_global_norm(grads, 1.0)
                    self.opt.apply_gradients(zip(grads, self.model.trainable_variables))
                    return {"loss": loss}

                def fit(self, x, y, epochs):
                    for _ in range(epochs):
                        out = self.step(x, y, training=True)
                    return out["loss"]
            """,
            at=[(9, 9, "training step `step` runs eagerly")],
            run="""
            keras.utils.set_random_seed(0)
            trainer = Trainer()
            loss = trainer.fit(tfl.ones((4, 3)), tfl.zeros((4, 2)), 4)
            weights = trainer.model.trainable_variables[0].numpy()
            """,
            effect=CLOSE,
            note="a method called in a loop; gradients clipped on the way; aliased tf; a dict of tensors returned",
        ),
        flagged(
            """
            import numpy as np
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            opt = tf.keras.optimizers.SGD(0.1)
            history = []

            def step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean((model(x) - y) ** 2)
                grads = tape.gradient(loss, model.trainable_variables)
                opt.apply_gradients(zip(grads, model.trainable_variables))
                history.append(loss.numpy())
                print("loss", np.mean(history))

            def counted(x, y, epoch):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean((model(x) - y) ** 2)
                opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
                return loss

            for epoch in range(3):
                step(tf.ones((2, 2)), tf.ones((2, 1)))
                counted(tf.ones((2, 2)), tf.ones((2, 1)), epoch)
            """,
            at=[(8, 5, "training step `step` runs eagerly"), (16, 5, "training step `counted` runs eagerly")],
            note="no fix: .numpy(), print, NumPy and an outer list in the body; a loop counter passed as an "
                 "argument would retrace at every call",
        ),
        flagged(
            """
            import tensorflow as tf

            def train(model, optimizer, loss_fn, dataset, epochs):
                for epoch in range(epochs):
                    for x, y in dataset:
                        with tf.GradientTape() as tape:
                            loss = loss_fn(y, model(x, training=True))
                        grads = tape.gradient(loss, model.trainable_variables)
                        optimizer.apply_gradients(zip(grads, model.trainable_variables))
                    with tf.GradientTape() as tape:
                        loss = loss_fn(y, model(x, training=True))
                    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables),
                                                  model.trainable_variables))
            """,
            at=[(6, 13, "training step runs eagerly in a loop"), (10, 9, "training step runs eagerly in a loop")],
            note="inline in a loop: no function to decorate, no fix; one finding a loop",
        ),
        flagged(
            """
            import tensorflow as tf
            import tf_keras

            opt = tf_keras.optimizers.SGD(0.1)
            w = tf.Variable(1.0)

            def step():
                with tf.GradientTape() as g:
                    loss = w * w
                opt.minimize(loss, [w], tape=g)

            n = 0
            while n < 3:
                step()
                n = n + 1
            """,
            at=[(7, 5, "training step `step` runs eagerly")],
            fixed="""
            import tensorflow as tf
            import tf_keras

            opt = tf_keras.optimizers.SGD(0.1)
            w = tf.Variable(1.0)

            @tf.function
            def step():
                with tf.GradientTape() as g:
                    loss = w * w
                opt.minimize(loss, [w], tape=g)

            n = 0
            while n < 3:
                step()
                n = n + 1
            """,
            run="value = w.read_value()",
            effect=CLOSE,
            note="minimize with the tape (tf_keras optimizers); a while loop",
        ),
        clean(
            """
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

            def inner_step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x) - y))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))

            @tf.function
            def epoch(dataset):
                for x, y in dataset:
                    inner_step(x, y)

            def wrapped(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x) - y))
                optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables),
                                              model.trainable_variables))

            fast = tf.function(wrapped)
            for x, y in []:
                train_step(x, y)
                fast(x, y)
            """,
            note="already graph code: decorated, called from a tf.function, wrapped",
        ),
        clean(
            """
            import keras
            import tensorflow as tf

            class Custom(keras.Model):
                def train_step(self, data):
                    x, y = data
                    with tf.GradientTape() as tape:
                        loss = self.compute_loss(y=y, y_pred=self(x, training=True))
                    grads = tape.gradient(loss, self.trainable_variables)
                    self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
                    return {"loss": loss}

            class Sub(Custom):
                def train_step(self, data):
                    x, y = data
                    with tf.GradientTape() as tape:
                        loss = self.compute_loss(y=y, y_pred=self(x, training=True))
                    grads = tape.gradient(loss, self.trainable_variables)
                    self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
                    return {"loss": loss}

                def fit_loop(self, data):
                    for batch in data:
                        self.train_step(batch)
            """,
            note="Keras train_step: fit compiles it",
        ),
        clean(
            """
            import tensorflow as tf

            def train_step(model, optimizer, x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(model(x))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))

            def once(model, optimizer, x):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(model(x))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))

            def gradients_only(model, xs):
                for x in xs:
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean(model(x))
                    print(tape.gradient(loss, model.trainable_variables))

            once(None, None, 1)
            """,
            note="not called in a loop here (called from another module, or once); gradients reaching no optimizer",
        ),
        clean(
            """
            import tensorflow as tf
            from tf_agents.agents import tf_agent

            class PPOAgent(tf_agent.TFAgent):
                def _train(self, experience, weights):
                    for i_epoch in range(self._num_epochs):
                        with tf.GradientTape() as tape:
                            loss = self.get_loss(experience)
                        grads = tape.gradient(loss, self.variables_to_train)
                        self._optimizer.apply_gradients(zip(grads, self.variables_to_train))
            """,
            note="a base-class hook nothing in the file calls (tensorflow/agents PPO): TFAgent.train runs it "
                 "in a tf.function",
        ),
        flagged(
            """
            import tensorflow as tf

            class Trainer(object):
                def _fit(self, model, optimizer, data):
                    for x in data:
                        with tf.GradientTape() as tape:
                            loss = tf.reduce_mean(model(x))
                        grads = tape.gradient(loss, model.trainable_variables)
                        optimizer.apply_gradients(zip(grads, model.trainable_variables))

                def run(self, model, optimizer, data):
                    self._fit(model, optimizer, data)
            """,
            at=[(6, 13, "training step runs eagerly in a loop")],
            note="a private method its own file calls: eager",
        ),
        flagged(
            """
            import tensorflow as tf

            class Trainer(object):
                def __init__(self, model, optimizer):
                    self.model = model
                    self.optimizer = optimizer

                def train_step(self, x, y):
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean(tf.square(self.model(x, training=True) - y))
                    grads = tape.gradient(loss, self.model.trainable_variables)
                    self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
                    return loss

                def fit(self, data, epochs):
                    for _ in range(epochs):
                        for x, y in data:
                            loss = self.train_step(x, y)
                    return loss
            """,
            fixed="""
            import tensorflow as tf

            class Trainer(object):
                def __init__(self, model, optimizer):
                    self.model = model
                    self.optimizer = optimizer

                @tf.function
                def train_step(self, x, y):
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean(tf.square(self.model(x, training=True) - y))
                    grads = tape.gradient(loss, self.model.trainable_variables)
                    self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
                    return loss

                def fit(self, data, epochs):
                    for _ in range(epochs):
                        for x, y in data:
                            loss = self.train_step(x, y)
                    return loss
            """,
            at=[(8, 9, "training step `train_step` runs eagerly")],
            run="""
            tf.keras.utils.set_random_seed(0)
            x = tf.random.stateless_normal((8, 4), seed=(1, 2))
            y = tf.random.stateless_normal((8, 1), seed=(1, 3))
            model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(1)])
            loss = Trainer(model, tf.keras.optimizers.SGD(0.1)).fit([(x, y)] * 3, 2)
            weights = model.trainable_variables[0].numpy()
            """,
            effect=CLOSE,
            note="`class Trainer(object):` is a class with no base but object: its `train_step` is no Keras "
                 "hook and nothing compiles it (written `class Trainer:` it was found; with `(object)` it was not)",
        ),
        clean(
            """
            import tensorflow as tf
            from trainers.base import BaseTrainer

            class Trainer(BaseTrainer):
                def train_step(self, x, y):
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean(tf.square(self.model(x, training=True) - y))
                    grads = tape.gradient(loss, self.model.trainable_variables)
                    self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
                    return loss

                def fit(self, data):
                    for x, y in data:
                        self.train_step(x, y)
            """,
            note="a base from another module (which the file alone cannot see): its train_step may be a Keras "
                 "model's, which fit compiles",
        ),
        clean(
            """
            import tensorflow as tf

            def main(args, model, optimizer, dataset):
                if args.mode == "eager_tf":
                    for x, y in dataset:
                        with tf.GradientTape() as tape:
                            loss = tf.reduce_mean(model(x) - y)
                        grads = tape.gradient(loss, model.trainable_variables)
                        optimizer.apply_gradients(zip(grads, model.trainable_variables))
                else:
                    model.fit(dataset)

            def debug_step(model, optimizer, x):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(model(x))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))

            def test_training_converges(model, optimizer, x):
                for _ in range(10):
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean(model(x))
                    grads = tape.gradient(loss, model.trainable_variables)
                    optimizer.apply_gradients(zip(grads, model.trainable_variables))

            for i in range(3):
                debug_step(None, None, i)
            """,
            note="eager on purpose: a debug/eager mode (zzh8829/yolov3-tf2's eager_tf), a debug function, a test",
        ),
        clean(
            """
            import tensorflow as tf

            def host_step(model, optimizer, x):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(model(x))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))

            def run(model, optimizer, xs):
                for x in xs:
                    tf.py_function(lambda: host_step(model, optimizer, x), [], [])
                host = tf.py_function(host_step, [model, optimizer, xs], [])
            """,
            note="a function handed to tf.py_function runs eagerly on purpose",
        ),
        flagged(
            """
            import tensorflow as tf

            class Adam:
                def __init__(self, learning_rate=0.1):
                    self.learning_rate = learning_rate
                    self.t = 1.0

                def apply_gradients(self, grads, variables):
                    for g, v in zip(grads, variables):
                        v.assign_sub(self.learning_rate * g / (1.0 - 0.9 ** self.t))
                    self.t += 1.0

            def train_step(x, y, model, optimizer):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean((model(x) - y) ** 2)
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(grads, model.trainable_variables)
                return loss

            def train_model(model, optimizer, data):
                for x, y in data:
                    loss = train_step(x, y, model, optimizer)
                return loss
            """,
            at=[(13, 5, "training step `train_step` runs eagerly")],
            note="no fix: the optimizer, a parameter, may be the file's Adam, whose apply_gradients counts steps "
                 "in a Python attribute (`self.t += 1.0`): traced, it would count once (tensorflow/docs "
                 "mlp_core.ipynb, fix pass H456: optimizer.t 21.0 -> 3.0 after 20 steps, another loss)",
        ),
        flagged(
            """
            import tensorflow as tf

            class SGD:
                def __init__(self, learning_rate):
                    self.learning_rate = learning_rate

                def apply_gradients(self, grads, variables):
                    for g, v in zip(grads, variables):
                        v.assign_sub(self.learning_rate * g)

            w = tf.Variable([[0.5], [-0.3]])

            def train_step(x, y, optimizer):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean((tf.matmul(x, w) - y) ** 2)
                grads = tape.gradient(loss, [w])
                optimizer.apply_gradients(grads, [w])
                return loss

            def train_model(optimizer, data):
                for x, y in data:
                    loss = train_step(x, y, optimizer)
                return loss
            """,
            fixed="""
            import tensorflow as tf

            class SGD:
                def __init__(self, learning_rate):
                    self.learning_rate = learning_rate

                def apply_gradients(self, grads, variables):
                    for g, v in zip(grads, variables):
                        v.assign_sub(self.learning_rate * g)

            w = tf.Variable([[0.5], [-0.3]])

            @tf.function
            def train_step(x, y, optimizer):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean((tf.matmul(x, w) - y) ** 2)
                grads = tape.gradient(loss, [w])
                optimizer.apply_gradients(grads, [w])
                return loss

            def train_model(optimizer, data):
                for x, y in data:
                    loss = train_step(x, y, optimizer)
                return loss
            """,
            at=[(13, 5, "training step `train_step` runs eagerly")],
            run="""
            x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
            y = tf.constant([[1.0], [2.0]])
            loss = train_model(SGD(0.01), [(x, y)] * 5)
            weights = w.read_value()
            """,
            effect=CLOSE,
            note="the file's own optimizer is followed through the parameter and holds nothing tracing changes "
                 "(assign_sub on the variables): the fix stays",
        ),
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

            for x, y in data:
                train_step(x, y)

            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.abs(model(x) - y))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
                return loss

            for x, y in data:
                train_step(x, y)

            @tf.function
            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x) - y))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
                return loss

            for x, y in data:
                train_step(x, y)
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

            for x, y in data:
                train_step(x, y)

            @tf.function
            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.abs(model(x) - y))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
                return loss

            for x, y in data:
                train_step(x, y)

            @tf.function
            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x) - y))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
                return loss

            for x, y in data:
                train_step(x, y)
            """,
            at=[(6, 5, "training step `train_step` runs eagerly"), (16, 5, "training step `train_step` runs eagerly")],
            note="a notebook redefining `train_step` in later cells: each loop calls the def live where it stands, "
                 "the two eager ones are flagged although the last is a `tf.function`",
        ),
        flagged(
            """
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(3)])
            optimizer = tf.keras.optimizers.SGD(0.1)

            def compute_gradients(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x) - y))
                return tape.gradient(loss, model.trainable_variables)

            def apply(grads):
                optimizer.apply_gradients(zip(grads, model.trainable_variables))

            def sgd_step(x, y, lr=0.1):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x) - y))
                grads = tape.gradient(loss, model.trainable_variables)
                for v, g in zip(model.trainable_variables, grads):
                    v.assign_sub(lr * g)
                return loss

            def train(data):
                for x, y in data:
                    grads = compute_gradients(x, y)
                    apply(grads)
                    loss = sgd_step(x, y)
                return loss
            """,
            fixed="""
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(3)])
            optimizer = tf.keras.optimizers.SGD(0.1)

            @tf.function
            def compute_gradients(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x) - y))
                return tape.gradient(loss, model.trainable_variables)

            def apply(grads):
                optimizer.apply_gradients(zip(grads, model.trainable_variables))

            @tf.function
            def sgd_step(x, y, lr=0.1):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x) - y))
                grads = tape.gradient(loss, model.trainable_variables)
                for v, g in zip(model.trainable_variables, grads):
                    v.assign_sub(lr * g)
                return loss

            def train(data):
                for x, y in data:
                    grads = compute_gradients(x, y)
                    apply(grads)
                    loss = sgd_step(x, y)
                return loss
            """,
            at=[(6, 5, "training step `compute_gradients` runs eagerly"),
                (14, 5, "training step `sgd_step` runs eagerly")],
            run="""
            tf.keras.utils.set_random_seed(0)
            x = tf.random.stateless_normal((8, 4), seed=(1, 2))
            y = tf.random.stateless_normal((8, 3), seed=(1, 3))
            loss = train([(x, y)] * 5)
            weights = model.trainable_variables[0].numpy()
            """,
            effect=CLOSE,
            note="the tape in a helper returning the gradients, applied by the caller through another "
                 "function; an update written by hand (`v.assign_sub(lr * g)`)",
        ),
        flagged(
            """
            import threading
            import tensorflow as tf

            class Actor:
                def __init__(self):
                    self.model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
                    self.opt = tf.keras.optimizers.Adam()

                def train(self, states, targets):
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean((self.model(states) - targets) ** 2)
                    grads = tape.gradient(loss, self.model.trainable_variables)
                    self.opt.apply_gradients(zip(grads, self.model.trainable_variables))
                    return loss

            class Worker(threading.Thread):
                def __init__(self, global_actor):
                    threading.Thread.__init__(self)
                    self.global_actor = global_actor

                def run(self):
                    for states, targets in batches():
                        self.global_actor.train(states, targets)

            class Agent:
                def __init__(self):
                    self.global_actor = Actor()

                def train(self, n):
                    workers = [Worker(self.global_actor) for _ in range(n)]
                    for worker in workers:
                        worker.start()
            """,
            fixed="""
            import threading
            import tensorflow as tf

            class Actor:
                def __init__(self):
                    self.model = tf.keras.Sequential([tf.keras.layers.Dense(2)])
                    self.opt = tf.keras.optimizers.Adam()

                @tf.function
                def train(self, states, targets):
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean((self.model(states) - targets) ** 2)
                    grads = tape.gradient(loss, self.model.trainable_variables)
                    self.opt.apply_gradients(zip(grads, self.model.trainable_variables))
                    return loss

            class Worker(threading.Thread):
                def __init__(self, global_actor):
                    threading.Thread.__init__(self)
                    self.global_actor = global_actor

                def run(self):
                    for states, targets in batches():
                        self.global_actor.train(states, targets)

            class Agent:
                def __init__(self):
                    self.global_actor = Actor()

                def train(self, n):
                    workers = [Worker(self.global_actor) for _ in range(n)]
                    for worker in workers:
                        worker.start()
            """,
            run="""
            tf.keras.utils.set_random_seed(0)
            actor = Actor()
            x = tf.ones((4, 3))
            y = tf.zeros((4, 2))
            for _ in range(3):
                loss = actor.train(x, y)
            weights = actor.model.trainable_variables[0].numpy()
            """,
            effect=CLOSE,
            at=[(9, 9, "training step `train` runs eagerly")],
            note="A3C: the step of an object a worker holds, given to the worker's constructor",
        ),
        clean(
            """
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(3)])
            ema = [tf.Variable(tf.zeros_like(v)) for v in model.trainable_variables]

            def saliency(x):
                with tf.GradientTape() as tape:
                    tape.watch(x)
                    score = tf.reduce_max(model(x))
                return tape.gradient(score, x)

            def track(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x) - y))
                grads = tape.gradient(loss, model.trainable_variables)
                for e, v in zip(ema, model.trainable_variables):
                    e.assign(0.9 * e + 0.1 * v)
                return loss

            for x, y in data:
                maps = saliency(x)
                print(tf.norm(maps))
                track(x, y)
            """,
            note="gradients returned and only read (a saliency map); an assign of values that do not come "
                 "from the gradients",
        ),
        clean(
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

            train_step(x0, y0)

            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x) - y))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
                return loss

            train_step = tf.function(train_step)
            for x, y in data:
                train_step(x, y)
            """,
            note="the eager def is called once (a smoke test); the loop calls the redefined one, wrapped in "
                 "`tf.function`",
        ),
    ]
