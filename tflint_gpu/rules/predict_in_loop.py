from __future__ import annotations

from typing import List, Set

import libcst as cst

from tflint_gpu.semantic.api import argument, keyword
from tflint_gpu.semantic.bindings import loop_around
from tflint_gpu.semantic.loops import COMPREHENSIONS, few_iterations, heavy_iteration
from tflint_gpu.semantic.testcode import in_test_function
from tflint_gpu.rules.base import Rule, clean, flagged

_LOOPS = (cst.For, cst.While) + COMPREHENSIONS
# Keyword arguments that say the data is a sizeable set, not one item.
_SET_KEYWORDS = ("batch_size", "steps")
# Per-iteration training on whole data: the inference call is not what the iteration costs.
# At most this many batches taken to look at (`ds.take(3)`) is a handful.


class PredictInLoop(Rule):
    """Keras `predict` / `predict_on_batch` / `evaluate` on one item or a small batch at every loop iteration.

    ## What it does
    Finds `m.predict(x)`, `m.predict_on_batch(x)` and `m.evaluate(x, y)` on a
    Keras model `m` (built by `Sequential`/`Model`/a subclass, loaded by
    `load_model`, returned by a same-module `create_model()`, held in
    `self.model` or in another object's attribute such as `self.critic.model`)
    that run at every iteration of a Python loop with data that changes per
    iteration: the loop is in the same function and `x` reads a name the loop
    binds (its target, or `state = next_state` in its body), or `x` is built as
    one sample with a batch axis of 1 (`np.reshape(s, [1, n])`,
    `s.reshape(1, -1)`, `np.expand_dims(s, 0)`, `s[None]`, `np.array([s])`,
    `x[i:i + 1]`) in a function that runs repeatedly (called from a loop, also
    from another module of the project, from a callee of one, a Keras
    callback's per-batch method...). A same-module wrapper that only passes
    its parameter on (`def predict(self, s): return self.model.predict(s)`) is
    judged at each of its call sites, and reported there. `evaluate` is
    reported only for one sample or for a batch taken from a dataset the loop
    iterates (`for x, y in ds: model.evaluate(x, y)`).

    Not flagged (whole data, or an iteration that costs far more): a loop over a
    handful of things written out (`for ds in [train_ds, val_ds]`, over a dict
    display's items, `dataset.take(3)` batches to display); data that does not
    change in the loop (`for epoch in range(E): ... model.evaluate(x_val,
    y_val)`, `for path in checkpoints: model.load_weights(path);
    model.evaluate(test)`, a hyper-parameter search evaluating the same test
    set); a loop whose body holds another loop run at every iteration (not
    under an `if`: the call runs once per epoch or episode, beside the inner
    loop over batches or steps) or a `fit` (one training per iteration: k-fold,
    a search); a
    tf.data dataset passed as the data; `batch_size=`/`steps=` passed without
    per-item evidence (a batch the loop takes from a dataset, `for x in ds:
    model.predict(x, batch_size=n)`, is reported whatever the keywords and the
    rest of the iteration: an inner loop saving the batch's samples is no
    loop over batches); code in graph functions and tests; objects whose
    same-module class defines the method itself. Eager `model(x)` calls in hot
    loops are not reported (whether the per-iteration work is small cannot be
    told reliably from the code).

    ## Why is this bad?
    Each `predict` call sets up Keras's whole inference loop: a data adapter
    over the input, a callback list, a progress bar, an iterator, and a
    `tf.function` step (cached on the model after the first call) run batch by
    batch, then NumPy conversion and concatenation of the outputs. For one
    sample that fixed cost is many times the model's own compute; `evaluate`
    adds metric resets and results. A direct call `model(x, training=False)` on
    a small array does the forward pass alone, and a `tf.function` around it
    removes the eager dispatch too.

    ## Example
    ```python
    while not done:
        q = model.predict(np.reshape(state, [1, state_dim]), verbose=0)[0]
        state, reward, done, _ = env.step(np.argmax(q))
    ```

    Use instead:
    ```python
    while not done:
        q = model(np.reshape(state, [1, state_dim]), training=False).numpy()[0]
        state, reward, done, _ = env.step(np.argmax(q))
    ```
    or, when every item is known beforehand, one call on the whole batch
    (`model.predict(np.stack(items))`).

    ## Fix safety
    No fix. `predict` returns NumPy arrays and the direct call a tensor, so code
    that indexes, assigns into or hands the result to NumPy may change
    (`targets[i, a] = r` raises on a tensor); `.numpy()` restores the type but
    not for multi-output models (a list or dict of outputs), nor for the inputs
    `predict` accepts and a call does not (a generator, a `PyDataset`, a
    dataset). `predict` also runs in batches of 32, so for more than 32 items
    its values come from several forward passes: measured (TF 2.21 CPU, Keras 3
    and tf_keras, a Dense and a conv model), the direct call's values equal
    `predict`'s to the bit for 1 and 8 items and differ by up to 1.1e-6 for 64
    and 100 (the matmul/conv kernels round differently per batch size). Types
    differ always (`ndarray` vs `EagerTensor`). The example's rewrite
    (`model(x, training=False).numpy()`, a single-output model, one state) gave
    the same actions and Q-values.

    ## Measured effect
    `benchmarks/predict_in_loop.py --quick --calls 30`, TF 2.21, Keras 3.15.1
    and tf_keras 2.21, 2-core CPU shared with other jobs (load average 10-15:
    absolute times are many times a quiet machine's; the ratios are the
    point). A 32-64-10 Dense model and a small conv model (Conv2D 8, pool,
    Dense 10 on 28x28x1), a fresh model per run, per-call mean over a loop of
    30 calls (first call's trace included) for `predict` / `evaluate` /
    `predict_on_batch` / `model(x, training=False)` / a `tf.function` call:
    * Keras 3, Dense, batch 1: 2316 / 2112 / 56 / 80 / 60 ms; batch 8: 2052 /
      2111 / 53 / 131 / 50 ms; batch 64: 2091 / 1764 / 57 / 65 / 22 ms.
      Conv, batch 1: 1562 / 2097 / 51 / 24 / 9 ms; batch 8: 709 / 1058 / 19 /
      69 / 31 ms; batch 64: 1187 / 897 / 40 / 102 / 39 ms. Steady state (after
      10 calls), Dense batch 1: `predict` 2106 ms, the call 75 ms, the
      `tf.function` 7 ms.
    * tf_keras, Dense, batch 1: 2135 / 1856 / 309 / 75 / 58 ms; batch 64: 1611
      / 1961 / 237 / 75 / 49 ms; conv batch 1: 1568 / 1299 / 137 / 106 / 40 ms;
      batch 64: 536 / 894 / 82 / 80 / 36 ms.
    * `predict` per call is 10-65x the direct eager call (Keras 3) and 7-50x
      (tf_keras) at batch 1 to 64, whatever the loop length (10 or 30: the
      first call's trace is not what costs); `evaluate` the same. The ratio
      falls with the batch only once the model's compute is large (conv, 64:
      6-12x). It matters for any loop of more than a few iterations.
    * Traces: over 30 `predict` calls on one model with a fixed input shape
      the model's `call` ran once (Keras 3 and tf_keras cache the predict
      function on the model): no retracing; varying the batch size (1 to 5)
      made Keras 3 warn "5 out of the last 40 calls to
      `one_step_on_data_distributed` triggered tf.function retracing", tf_keras
      did not retrace. Memory: resident size flat over 100 more `predict`
      calls (Keras 3 609 -> 609 MB, tf_keras 621 -> 612 MB): no leak.
    * `predict_on_batch` skips most of the set-up (its function is cached too):
      Keras 3 close to a traced call, tf_keras 2-4x the eager call; it still
      converts to NumPy every call.
    `examples/TFG601` (20 environment steps with a batch of one), `tflint-gpu
    verify --rule TFG601 --device cpu --size small`: equivalent (same
    actions and Q-values), many times faster after the fix (the measurement
    below).

    On real code (the labelled set, `benchmarks/realcode`): 20 of the 32
    predict-in-loop labels found, 21 findings all true (the 12 missed labels
    are eager `model(x)` calls, not reported); 48 findings over the eleven
    checked-out projects, all read, all true (RL agents' per-step `predict`,
    Grad-CAM-style masking per channel, per-image test loops); on the
    reliability corpus 2 (a YOLO video loop's `predict_on_batch` per frame, the
    TF music-generation tutorial's `predict` per generated note), both true.
    """

    code = "TFG601"
    name = "predict-in-loop"
    message = "Keras `predict` on one item per loop iteration"
    needs = (("predict", "evaluate"),)
    fix_safety = None

    def visit_Call(self, node: cst.Call, ctx) -> None:
        calls = ctx.model_calls
        scope = ctx.scope
        got = calls.inference(node, scope)
        via = None
        if got is not None:
            method, data = got
        else:
            if not isinstance(node.func, (cst.Attribute, cst.Name)) or not calls.any_forwarder():
                return
            callee = calls.callee(node, scope)
            if callee is None:
                return
            forwarded = calls.forwarder(callee)
            if forwarded is None:
                return
            inner, index, method = forwarded
            params = [p.name.value for p in callee.node.params.params]
            if callee.binds_instance:
                params = params[1:]
            data = argument(node, index, params[index])
            via = (callee, inner)
        if data is None or ctx.graph(scope) is not None or in_test_function(scope) or ctx.in_test_module:
            return
        reason = ctx.runs_repeatedly(node)
        if reason is None or ctx.is_dataset(data):
            return
        item = calls.per_item(data, scope, node)
        loop = loop_around(node, scope, comprehensions=True)
        # A batch the loop takes from a dataset: one call a batch, whatever `batch_size=` says or the rest
        # of the iteration does (an inner loop over the batch's samples is no epoch's loop over batches).
        batch = loop is not None and _batch_of_dataset(loop, data, scope, ctx)
        if not item and not batch and any(keyword(node, k) is not None for k in _SET_KEYWORDS):
            return
        if loop is not None:
            if few_iterations(loop, scope, ctx.repetition) or heavy_iteration(loop, node, scope) and not batch:
                return
            bound = _loop_bindings(loop, ctx)
            varies = _reads(data, ctx) & bound
            if not item and not varies:
                return
            if method == "evaluate" and not item and not _batch_of_dataset(loop, data, scope, ctx):
                return
        elif not item:
            return
        if via is None:
            what = f"`{method}`"
        else:
            owner = via[0].enclosing_class
            where = f"{owner.name}.{via[0].name}" if owner is not None else via[0].name
            what = f"`{_text(node.func) or method}` (which runs `{_text(via[1].func) or method}` in `{where}`)"
        size = "one sample" if item else "new data"
        advice = ("call the model directly, `model(x, training=False)` (wrapped in a `tf.function` for a hot loop), "
                  "or collect the items and call `predict` once on the batch")
        if method == "evaluate":
            advice = "compute the loss and metrics on the batch directly, or evaluate once on the whole dataset"
        ctx.report(node, f"Keras {what} on {size} at every iteration ({reason}): each call sets up Keras's "
                         f"whole inference loop; {advice}")

    cases = [
        flagged(
            """
            import numpy as np
            import tensorflow as tf

            class ActionStateModel:
                def __init__(self, state_dim, action_dim):
                    self.state_dim = state_dim
                    self.model = self.create_model(action_dim)

                def create_model(self, action_dim):
                    model = tf.keras.Sequential([tf.keras.layers.Dense(action_dim)])
                    model.compile(loss="mse")
                    return model

                def predict(self, state):
                    return self.model.predict(state, verbose=0)

                def get_action(self, state):
                    state = np.reshape(state, [1, self.state_dim])
                    return np.argmax(self.predict(state)[0])

            class Agent:
                def __init__(self, env):
                    self.env = env
                    self.model = ActionStateModel(4, 2)
                    self.target = ActionStateModel(4, 2)

                def replay(self, buffer):
                    for _ in range(10):
                        states, next_states = buffer.sample()
                        targets = self.target.predict(states)
                        best = self.target.predict(next_states).max(axis=1)

                def run(self):
                    done, state = False, self.env.reset()
                    while not done:
                        action = self.model.get_action(state)
                        state, reward, done, _ = self.env.step(action)
                        self.replay(self.buffer)  # ten replay steps at every environment step
            """,
            at=[(19, 26, "Keras `self.predict` (which runs `self.model.predict` in "
                         "`ActionStateModel.predict`) on one sample"),
                (30, 23, "Keras `self.target.predict` (which runs `self.model.predict` in "
                         "`ActionStateModel.predict`) on new"),
                (31, 20, "Keras `self.target.predict`")],
            note="marload/DeepRL-TensorFlow2 DQN shape: a wrapper judged at its call sites",
        ),
        flagged(
            """
            import numpy as np
            from tensorflow import keras

            model = keras.models.load_model("m.keras")
            images = np.load("x.npy")
            for i in range(len(images)):
                p = model.predict(images[i:i + 1])
            probs = [model.predict_on_batch(img[None]) for img in images]
            for x, y in keras.utils.image_dataset_from_directory("d"):
                model.evaluate(x, y, verbose=0)
            """,
            at=[(7, 9, "Keras `predict` on one sample at every iteration (inside a `for` loop)"),
                (8, 10, "Keras `predict_on_batch` on one sample"),
                (10, 5, "Keras `evaluate` on new data")],
        ),
        flagged(
            """
            import numpy as np
            import tensorflow as tf

            def predict_on_dataset(dataset: tf.data.Dataset, model: tf.keras.Model, save_dir: str):
                for _, inputs in enumerate(dataset):
                    batch_size = inputs["image"].shape[0]
                    outputs = model.predict(x=inputs, batch_size=batch_size)
                    for sample_index in range(batch_size):
                        np.save(f"{save_dir}/{sample_index}.npy", outputs[sample_index])
                for inputs in dataset.take(2):
                    model.predict(inputs, batch_size=8)
            """,
            at=[(7, 19, "Keras `predict` on new data at every iteration (inside a `for` loop)")],
            note="DeepRegNet/DeepReg predict.py:84: one predict a batch of the dataset the loop iterates, its "
                 "samples saved in an inner loop (Keras 3.15, 20 batches of 32 through a small Dense model: "
                 "2617 ms with predict per batch, 32 ms calling the model, the same values); a few batches taken "
                 "to look at are not reported",
        ),
        flagged(
            """
            import numpy as np
            import tensorflow as tf

            class Critic:
                def __init__(self):
                    self.model = tf.keras.Sequential([tf.keras.layers.Dense(1)])

            class Agent:
                def __init__(self):
                    self.critic = Critic()

                def td_target(self, reward, next_state, done):
                    v = self.critic.model.predict(np.reshape(next_state, [1, 3]))
                    return reward + 0.99 * v[0]

                def run(self, env):
                    for episode in range(100):
                        state = env.reset()
                        target = self.td_target(1.0, state, False)
            """,
            at=[(13, 13, "Keras `predict` on one sample at every iteration (called inside a `for` loop")],
            note="another object's attribute; a function repeated through its caller",
        ),
        flagged(
            """
            import numpy as np
            import tensorflow as tf

            actor = tf.keras.Sequential([tf.keras.layers.Dense(2, activation="softmax")])

            def run(env, interval, epochs):
                states, done, state = [], False, env.reset()
                while not done:
                    probs = actor.predict(np.reshape(state, [1, 4]), verbose=0)
                    state, reward, done, _ = env.step(np.argmax(probs[0]))
                    states.append(state)
                    if len(states) >= interval:
                        for _ in range(epochs):
                            update(np.stack(states))
                        states = []
            """,
            at=[(9, 17, "Keras `predict` on one sample at every iteration (inside a `while` loop)")],
            note="an inner loop under an `if` (PPO's update every few steps) does not make the step loop an epoch loop",
        ),
        clean(
            """
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            model.compile(loss="mse")
            train_ds = tf.data.Dataset.range(4)
            for ds in [train_ds, train_ds.take(2)]:
                model.evaluate(ds)
            for name, split in {"train": x_train, "val": x_val}.items():
                model.predict(split)
            for path in checkpoints:
                model.load_weights(path)
                model.evaluate(x_test, y_test)
            for epoch in range(10):
                for x, y in train_ds:
                    train_step(x, y)
                val = model.predict(x_val)
                noise = tf.random.normal((16, 8))
                images = model.predict(noise)
            for lr in [1e-3, 1e-4]:
                model.fit(x_train, y_train)
                model.evaluate(x_test, y_test)
            for fold in range(5):
                x_fold = x_train[folds[fold]]
                model.fit(x_fold, y_train[folds[fold]])
                pred = model.predict(x_train[held[fold]])
            for epoch in range(3):
                loss = model.evaluate(x_val, y_val)
            scores = [model.evaluate(split) for split in (x_train, x_test)]

            def show_predictions(dataset, num=1):
                for image, mask in dataset.take(num):
                    display([image[0], mask[0], model.predict(image)])
            for image, mask in train_ds.take(3):
                display([image[0], mask[0], model.predict(image)])
            """,
            note="whole datasets, loop-invariant data, epoch loops, k-fold training, a few batches to display",
        ),
        clean(
            """
            import numpy as np
            import tensorflow as tf
            from sklearn.linear_model import LinearRegression

            clf = LinearRegression()
            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
            for x in xs:
                clf.predict(x[None])

            @tf.function
            def step(x):
                return model(x)

            for x in xs:
                step(x)
                model(x, training=False)

            def predict_all(batches):
                for b in batches:
                    out = model.predict(b, batch_size=256)
                return out

            def once(x):
                return model.predict(x)

            for x in xs:
                model.predict(np.concatenate(list_of_arrays), batch_size=64)

            class Wrapper(tf.keras.Model):
                def predict(self, x):
                    return x

            w = Wrapper()
            for x in xs:
                w.predict(x[None])
            """,
            note="not a Keras model; direct calls; batch_size given; wrapper called once; own predict",
        ),
        clean(
            """
            import numpy as np
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.layers.Dense(1)])

            def sample(x):
                return model.predict(np.expand_dims(x, 0))

            y = sample(np.zeros(3))

            def test_predictions():
                for x in np.zeros((3, 2)):
                    model.predict(x[None])
            """,
            note="called once; a test",
        ),
    ]


def _loop_bindings(loop: cst.CSTNode, ctx) -> Set[str]:
    """Names (and ``self.x`` texts) a loop binds once per iteration."""
    found: Set[str] = set()
    parts: List[cst.CSTNode] = []
    if isinstance(loop, cst.For):
        parts = [loop.target, loop.body]
    elif isinstance(loop, cst.While):
        parts = [loop.body]
    else:
        comp = loop.for_in
        while comp is not None:
            parts.append(comp.target)
            comp = comp.inner_for_in
    for part in parts:
        for inner in ctx.descendants(part):
            targets: List[cst.CSTNode] = []
            if isinstance(inner, cst.Assign):
                targets = [t.target for t in inner.targets]
            elif isinstance(inner, (cst.AugAssign, cst.AnnAssign)):
                targets = [inner.target]
            elif isinstance(inner, (cst.For, cst.CompFor)):
                targets = [inner.target]
            elif isinstance(inner, cst.NamedExpr):
                targets = [inner.target]
            elif isinstance(inner, cst.AsName):
                targets = [inner.name]
            for target in targets:
                found |= _target_names(target)
    if isinstance(loop, cst.For):
        found |= _target_names(loop.target)
    return found


def _target_names(target: cst.CSTNode) -> Set[str]:
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        names: Set[str] = set()
        for element in target.elements:
            names |= _target_names(element.value)
        return names
    if isinstance(target, cst.StarredElement):
        return _target_names(target.value)
    if isinstance(target, cst.Attribute):
        text = _text(target)
        return {text} if text else set()
    return set()


def _reads(expr: cst.BaseExpression, ctx) -> Set[str]:
    """Names an expression reads, and its ``a.b`` texts."""
    found: Set[str] = set()
    attrs = set()
    for inner in ctx.descendants(expr):
        if isinstance(inner, cst.Attribute):
            attrs.add(id(inner.attr))
            text = _text(inner)
            if text:
                found.add(text)
        elif isinstance(inner, cst.Arg) and inner.keyword is not None:
            attrs.add(id(inner.keyword))
        elif isinstance(inner, cst.Name) and id(inner) not in attrs:
            found.add(inner.value)
    return found


def _text(expr: cst.BaseExpression) -> str:
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute):
        inner = _text(expr.value)
        return f"{inner}.{expr.attr.value}" if inner else ""
    return ""


def _batch_of_dataset(loop: cst.CSTNode, data: cst.BaseExpression, scope, ctx) -> bool:
    """``for x, y in ds: model.evaluate(x, y)``: the data is a batch of a dataset the loop iterates."""
    if not isinstance(loop, cst.For):
        return False
    iterable = loop.iter
    if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) \
            and iterable.func.value in ("enumerate", "zip") and iterable.args:
        iterable = iterable.args[0].value
    if not ctx.is_dataset(iterable, scope):
        return False
    return bool(_reads(data, ctx) & _target_names(loop.target))
