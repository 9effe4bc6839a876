from __future__ import annotations

import libcst as cst

from tflint_gpu.semantic.api import keyword
from tflint_gpu.semantic.bindings import bound_names, is_builtin, mentions, target_names
from tflint_gpu.semantic.loops import few_iterations, heavy_iteration
from tflint_gpu.semantic.testcode import in_test_function
from tflint_gpu.rules.base import Rule, clean, flagged

_CALL_TEXT_LIMIT = 40


class EagerModelCallInLoop(Rule):
    """A Keras model called eagerly at every iteration of a Python loop: its layers run op by op.

    ## What it does
    Finds a direct call of a Keras model, `model(x)` (a `Sequential`, a
    functional `Model`, a subclassed model, a loaded one, an attribute bound
    to one), that runs at every iteration of a Python loop (greedy decoding
    per token, an environment step, an evaluation loop over batches), in code
    that runs eagerly.

    Not reported: graph code (a `tf.function`, a Keras `call` or
    `train_step`); a call while a `tf.GradientTape` records (directly, or in a
    function called, up to three calls deep, inside the tape's block: a
    training step, which TFG405 reports); a call with `training=True`; a
    call under an `if` in the loop (a logging interval, a first iteration),
    or, in a function run repeatedly with no loop of its own (a callback's
    `on_train_batch_end`), under an `if` of it or reached only through calls
    made under one (`if batch % self.every == 0: self.preview()`: the
    interval is in the caller; `semantic.repetition.sometimes`);
    a loop of at most 10 iterations (`range(9)`, `ds.take(1)`, a list
    display of 10 elements); a loop that
    binds the model itself (`for model in models:`, one call per model); a
    loop whose body runs another loop (an epoch loop around the batches) or
    asks for input (`input()`: each iteration waits for a person);
    Keras callbacks' `on_epoch_*`/`on_train_*` methods (once per epoch); a
    bare layer (`Concatenate()(...)`); tests.

    ## Why is this bad?
    Called eagerly, a Keras model dispatches every op of every layer from
    Python, one at a time; a `tf.function` around the same call runs one
    graph. Measured under TF 2.21 / Keras 3.15 on a 2-core CPU, 50 calls
    after warm-up, per call: a 6 x Dense(256) MLP, batch 1: 6.76 ms eager
    against 0.56 ms in a `tf.function` (12x), batch 256: 9.08 against 2.70 ms
    (3.4x); a 4-block transformer encoder (MultiHeadAttention, sequence 32),
    batch 1: 49.3 against 1.81 ms (27x), batch 64: 82.2 against 21.3 ms
    (3.9x). `predict_on_batch` was close to the `tf.function` (0.65 and
    1.99 ms at batch 1); `predict` is much slower per call (TFG601).

    ## Example
    ```python
    for _ in range(max_len):
        logits = model(tokens, training=False)
        tokens = tf.concat([tokens, tf.argmax(logits[:, -1:], -1)], axis=1)
    ```

    Use instead:
    ```python
    infer = tf.function(lambda x: model(x, training=False), reduce_retracing=True)
    for _ in range(max_len):
        logits = infer(tokens)
        tokens = tf.concat([tokens, tf.argmax(logits[:, -1:], -1)], axis=1)
    ```
    (made once, outside the loop; an input whose shape changes every
    iteration traces again per shape unless the function is given
    `reduce_retracing=True` or an `input_signature` with `None` dimensions).

    ## Fix safety
    No fix: where to make the `tf.function` once, and which input signature
    keeps it from tracing per shape, depend on the code around the loop.

    ## Measured effect
    The figures above. examples/TFG407 (`tflint-gpu verify --device cpu
    --size small --rule TFG407`): 100 steps of an agent loop calling an MLP
    on one sample, eagerly against through a `tf.function` made once: the
    same values, faster through the `tf.function` although each step also
    reads its action on the host (the measurement below).
    """

    code = "TFG407"
    name = "eager-model-call-in-loop"
    message = "A Keras model called eagerly at every loop iteration"
    needs = (("keras", "Model", "Sequential", "load_model"),)

    def visit_Call(self, node: cst.Call, ctx) -> None:
        func = node.func
        if not isinstance(func, (cst.Name, cst.Attribute)) or not node.args:
            return
        scope = ctx.scope
        if ctx.in_test_module or in_test_function(scope) or ctx.graph(scope) is not None:
            return
        given = keyword(node, "training")
        if given is not None and not (isinstance(given.value, cst.Name) and given.value.value in ("False", "None")):
            return  # a training forward pass, or a flag the linter cannot read
        if not ctx.model_calls.is_whole_model(func, scope):
            return
        function = scope.function()
        if function is not None and function.name.startswith(("on_epoch", "on_train", "on_test_begin",
                                                             "on_test_end", "on_predict_begin", "on_predict_end")):
            return  # a callback run once per epoch or per fit
        why = ctx.runs_repeatedly(node, scope)
        if why is None:
            return
        if ctx.repetition.sometimes(node, scope):
            return  # every few steps (`if step % 100 == 0:`, here or in every caller), or once
        loop = ctx.eager.loop_around(node, scope)
        if loop is not None:
            if few_iterations(loop, scope, ctx.repetition):
                return  # a handful of iterations (`range(9)` to plot a grid, `ds.take(1)`)
            bound = bound_names(loop.body) | (target_names(loop.target) if isinstance(loop, cst.For) else set())
            if mentions(func) & bound:
                return  # one model per iteration
            if heavy_iteration(loop, node, scope):
                return  # an epoch loop: the call runs once per epoch
            inner = ctx.descendants(loop.body)
            if any(isinstance(node_, cst.Call) and isinstance(node_.func, cst.Name) and node_.func.value == "input"
                   and is_builtin("input", scope) for node_ in inner):
                return  # each iteration waits for a person to type
        if ctx.eager.under_tape(node, scope, callers=3):
            return
        text = cst.Module([]).code_for_node(func)
        if len(text) > _CALL_TEXT_LIMIT:
            text = "the model"
        ctx.report(node, f"`{text}(...)` runs the Keras model eagerly at every iteration ({why}): its ops are "
                         f"dispatched one by one; call it through a `tf.function` made once")

    cases = [
        flagged(
            """
            import tensorflow as tf


            class Preview(tf.keras.callbacks.Callback):
                def __init__(self, images, every=100):
                    super().__init__()
                    self.images = images
                    self.every = every

                def on_train_batch_end(self, batch, logs=None):
                    if batch % self.every == 0:
                        self.show()
                    self.log()

                def show(self):
                    print(self.model(self.images, training=False).shape)

                def log(self):
                    print(self.model(self.images).shape)
            """,
            at=[(19, 15, "`self.model(...)` runs the Keras model eagerly at every iteration")],
            note="issue 35: the interval is in the caller (show runs only when batch % every == 0); log runs "
                 "at every batch",
        ),
        flagged(
            """
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(2)])

            def act(state):
                return tf.argmax(model(state[None], training=False)[0])

            def run(env):
                state, done = env.reset(), False
                while not done:
                    state, reward, done, _ = env.step(act(state))

            class Translator:
                def __init__(self):
                    self.transformer = tf.keras.models.load_model("t.keras")

                def translate(self, tokens):
                    for _ in range(40):
                        logits = self.transformer(tokens)
                        tokens = tf.concat([tokens, tf.argmax(logits[:, -1:], -1)], axis=1)
                    return tokens
            """,
            at=[(6, 22, "`model(...)` runs the Keras model eagerly at every iteration (called inside a `while` "
                        "loop in `run`)"),
                (19, 22, "`self.transformer(...)` runs the Keras model eagerly at every iteration (inside a `for` "
                         "loop)")],
            note="an environment step through a helper; greedy decoding on a model held in an attribute",
        ),
        clean(
            """
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(2)])
            opt = tf.keras.optimizers.Adam()
            infer = tf.function(lambda x: model(x, training=False))

            def loss_fn(x, y):
                return tf.reduce_mean((model(x) - y) ** 2)

            for x, y in data:
                with tf.GradientTape() as tape:
                    loss = loss_fn(x, y)
                    pred = model(x)
                opt.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
                infer(x)
                model(x, training=True)

            @tf.function
            def step(x):
                for _ in range(3):
                    x = model(x)
                return x

            for m in [model, tf.keras.Sequential([tf.keras.layers.Dense(1)])]:
                m(tf.zeros((1, 4)))
            for epoch in range(10):
                for x, y in data:
                    train(x, y)
                sample = model(tf.zeros((1, 4)))
            while True:
                text = input("> ")
                print(model(encode(text)))
            print(model(tf.zeros((1, 4))))
            """,
            note="under a tape (directly and in a helper called there); through a tf.function; training=True; "
                 "graph code; one call per model; once per epoch; an interactive loop; not in a loop",
        ),
    ]
