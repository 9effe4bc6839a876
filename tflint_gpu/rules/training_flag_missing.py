from __future__ import annotations

from typing import Optional

import libcst as cst

from tflint_gpu.semantic.testcode import in_test_function
from tflint_gpu.semantic.training_layers import dotted
from tflint_gpu.rules.base import CHANGES, Fix, Rule, Safety, clean, flagged


class TrainingFlagMissing(Rule):
    """A model holding BatchNormalization or Dropout called in a training step without `training=True`.

    ## What it does
    Finds a call `m(x)` with no `training` argument in a training step, where
    `m` is a Keras model or layer whose BatchNormalization, dropout
    (`Dropout`, `SpatialDropout1D/2D/3D`, `GaussianDropout`, `AlphaDropout`)
    or `GaussianNoise` layers the file shows (`semantic/training_layers.py`):
    a `keras.Sequential([...])` (also filled by `m.add(...)`), a functional
    `keras.Model(inputs, outputs)`, or a subclassed Model/Layer of the file
    whose methods make one (in `__init__`, `build`, a helper method, a list,
    a nested Sequential or another such class), followed through names,
    parameters, `self.x` attributes and the file's own functions; and, for
    a parameter of a top-level def that nothing in its file calls, what the
    project's other modules hand it (`train(model=DS2(...))` in a script,
    `DS2` a class of another module that makes a BatchNormalization or
    dropout layer anywhere in its body, or a def of one that makes one and
    returns a value: the project index's summaries).

    A training step is a `train_step` method of a Keras class (`fit` runs
    it), or a function whose own body differentiates a loss with a
    `tf.GradientTape` and applies the gradients (`apply_gradients`,
    `minimize`, `apply`, an `assign_sub` by hand), or, in module code (a
    script's or notebook's loop), the `with tf.GradientTape()` block of such
    a step; also a same-module def every call of which is made under such a
    step's tape (`loss = self._loss(states)`), for the models the step
    trains (`self.q` when called as `self._loss(...)`). The call is reported only
    when the same function reads the variables of `m` (or of an object `m` is
    an attribute of: `self.D.trainable_variables`, `self.trainable_variables`)
    for the update: a model that the step trains.

    Not reported: a call passing `training` (by keyword, in `**kwargs`, or in
    the place where the callee's `call` takes it: `self.D(x, y)` is not one
    when `call(self, x, y)`); a callee whose `call` declares `training=True`
    as its default (measured: then it trains); calls inside a layer's `call`
    (its caller passes `training` on); a frozen model called for its outputs
    only (a teacher, a target network: its variables are not read for the
    update; a target network's soft update reads `target.variables`, not its
    trainable variables); a mode passed under the name the callee's `call`
    passes on as `training=` (`conv(x, is_training=True)`); functions named
    as evaluation (`test`, `val`, `valid`, `eval`, `predict`, `infer` as a
    word of the name); test code; a module that calls tf_keras's
    `set_learning_phase`. Not seen: models made by `keras.applications` or
    loaded from files, layers of another library, a model reaching the step
    through a container or an attribute of another object.

    ## Why is this bad?
    Called without `training`, these layers run in inference mode, in a
    custom loop and in a custom `train_step` alike (`fit` sets no training
    mode for the code of a `train_step`): BatchNormalization normalises with
    its moving mean and variance, which it then never updates (they stay at
    their initial 0 and 1 for the whole training), and dropout does nothing,
    so the model trains without the regularisation it was built with and
    evaluates (`training=False`) with statistics that describe nothing. In a
    GAN, a generator and discriminator trained this way never learn batch
    statistics at all.

    ## Example
    ```python
    model = keras.Sequential([
        keras.layers.Dense(64), keras.layers.BatchNormalization(),
        keras.layers.Dropout(0.5), keras.layers.Dense(1),
    ])

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
    ```

    Use instead:
    ```python
            loss = loss_fn(y, model(x, training=True))
    ```

    ## Fix safety
    Unsafe: adding `training=True` changes what the step computes (that is
    its purpose): dropout now drops, BatchNormalization now normalises with
    the batch's statistics and updates its moving averages. Every Keras layer
    takes `training` through `__call__`, also a subclassed model whose
    `call(self, x)` declares no `training` parameter: Keras then passes it on
    to the layers inside (measured under both flavours below). No fix where
    the callee's `call` takes its mode under another name and passes it on
    (`def call(self, x, is_training=False): ... self.bn(x,
    training=is_training)`): the explicit `training=False` given to the inner
    layer wins over the outer `training=True` (measured in both flavours:
    `training=True` left the moving mean at 0.0, `is_training=True` moved
    it); such a call is reported without a fix. And under Keras 3 a
    functional model passes its own mode to every layer, also one built as
    `base(x, training=False)` (measured: Keras 3.15 moved that base's moving
    mean under an outer `training=True`, tf_keras 2.21 did not): the fix
    then also trains a base frozen that way (such a base alone is not
    reported).

    ## Measured effect
    TF 2.21 on CPU, Keras 3.15.1 and tf_keras 2.21.0 alike: a
    `Sequential([Dense(8), BatchNormalization(), Dropout(0.5), Dense(1)])`
    trained 3 steps with a GradientTape (eager or in a `tf.function`) calling
    `model(x)`: the moving mean stays at exactly 0.0; with `training=True` it
    moves (0.021, 0.094, 0.012...). `model(x)` equals `model(x,
    training=False)` and differs from `model(x, training=True)`; a
    `Dropout(0.5)` called without `training` zeroed 0 of 128 values, 61 with
    `training=True`. The same for `SpatialDropout2D`, `GaussianDropout`,
    `AlphaDropout`, `GaussianNoise` and `BatchNormalization` called alone (not
    for `LayerNormalization`, which has no training mode). A custom
    `train_step` run by `fit` (eagerly or compiled) calling `self(x)`: the
    model's `call` received `training=None` and the moving mean stayed 0.0.
    Not a finding, measured: a layer called inside an outer layer called
    with `training=True` (the call context passes it on: the inner moving
    mean moved); a `call` whose default is `training=True`; tf_keras after
    `set_learning_phase(1)`. A subclassed model whose `call(self, x)` has no
    `training` parameter accepts `training=True` and its BatchNormalization
    then updates, in both flavours. `examples/TFG612` (a functional
    Dense-BatchNormalization-Dropout regressor on inputs centred at 5, 150
    steps; `tflint-gpu verify --rule TFG612 --device cpu --size small`):
    fixes-behaviour, the largest moving mean 0.0 before the fix, 5.5 after;
    the held-out loss about the same: the example shows the mode, not a
    better model.
    """

    code = "TFG612"
    name = "training-flag-missing"
    message = "model with BatchNormalization/Dropout called in a training step without `training=True`"
    needs = (("GradientTape", "train_step"),)  # the layers may be made in another module
    fix_safety = Safety.UNSAFE

    def visit_Call(self, node: cst.Call, ctx) -> None:
        func = node.func
        if not isinstance(func, (cst.Name, cst.Attribute)):
            return
        scope = ctx.scope
        facts = ctx.training_layers
        if scope.is_function:
            if in_test_function(scope):
                return
            # the step's own body, or a helper every call of which is under a step's tape
            trained = facts.trained(scope) if facts.step(scope) else facts.helper_trained(scope)
            if trained is None:
                return
        else:
            trained = facts.inline_trained(node, scope)  # a script's or notebook's own loop
            if trained is None:
                return
        if ctx.in_test_module:
            return
        receiver = dotted(func)
        if receiver is None or ctx.qualname(func) is not None:
            return
        parts = receiver.split(".")
        if not any(".".join(parts[:n]) in trained for n in range(1, len(parts) + 1)):
            return
        if facts.training_given(node, scope):
            return
        signature = facts.call_signature(func, scope)
        if signature is not None and signature.trains_by_default:
            return
        held = facts.holds(func, scope)
        if not held or facts.learning_phase_set():
            return
        held = held if " " in held else f"`{held}`"  # a layer's class, or another module's maker
        message = (f"`{receiver}` holds {held} and is called in a training step without `training=True`: "
                   "it runs in inference mode")
        fixable = signature is None or set(signature.modes) <= {"training"}
        ctx.report(node, message, _fix(node) if fixable else None)

    cases = [
        flagged(
            """
            import keras
            import tensorflow as tf

            model = keras.Sequential([
                keras.Input((4,)), keras.layers.Dense(8), keras.layers.BatchNormalization(),
                keras.layers.Dropout(0.5), keras.layers.Dense(1),
            ])
            optimizer = keras.optimizers.SGD(0.01)


            @tf.function
            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x) - y))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
                return loss
            """,
            fixed="""
            import keras
            import tensorflow as tf

            model = keras.Sequential([
                keras.Input((4,)), keras.layers.Dense(8), keras.layers.BatchNormalization(),
                keras.layers.Dropout(0.5), keras.layers.Dense(1),
            ])
            optimizer = keras.optimizers.SGD(0.01)


            @tf.function
            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
                return loss
            """,
            at=[(14, 41, "`model` holds `BatchNormalization`")],
            run="""
            x = tf.random.stateless_normal((32, 4), seed=(1, 2)) + 3.0
            y = tf.random.stateless_normal((32, 1), seed=(1, 3))
            for _ in range(3):
                loss = train_step(x, y)
            moving_mean = model.layers[1].moving_mean.numpy()
            """,
            effect=CHANGES,
            note="the canonical custom loop: the moving mean stays 0 before the fix, moves after it",
        ),
        flagged(
            """
            import keras
            import tensorflow as tf


            class Net(keras.Model):
                def __init__(self):
                    super().__init__()
                    self.body = self._block(8)
                    self.out = keras.layers.Dense(1)

                def _block(self, units):
                    return [keras.layers.Dense(units), keras.layers.Dropout(0.5)]

                def call(self, inputs, training=None):
                    h = inputs
                    for layer in self.body:
                        h = layer(h, training=training)
                    return self.out(h)

                def train_step(self, data):
                    x, y = data
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean(tf.square(self(x) - y))
                    grads = tape.gradient(loss, self.trainable_variables)
                    self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
                    return {"loss": loss}
            """,
            fixed="""
            import keras
            import tensorflow as tf


            class Net(keras.Model):
                def __init__(self):
                    super().__init__()
                    self.body = self._block(8)
                    self.out = keras.layers.Dense(1)

                def _block(self, units):
                    return [keras.layers.Dense(units), keras.layers.Dropout(0.5)]

                def call(self, inputs, training=None):
                    h = inputs
                    for layer in self.body:
                        h = layer(h, training=training)
                    return self.out(h)

                def train_step(self, data):
                    x, y = data
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean(tf.square(self(x, training=True) - y))
                    grads = tape.gradient(loss, self.trainable_variables)
                    self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
                    return {"loss": loss}
            """,
            at=[(23, 45, "`self` holds `Dropout`")],
            run="""
            keras.utils.set_random_seed(0)
            x = tf.random.stateless_normal((32, 4), seed=(1, 2))
            y = tf.random.stateless_normal((32, 1), seed=(1, 3))
            net = Net()
            net.compile(optimizer=keras.optimizers.SGD(0.05))
            net.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0)
            kernel = net.out.kernel.numpy()
            """,
            effect=CHANGES,
            note="a custom train_step run by fit (fit sets no training mode): the Dropout is made in a helper "
                 "method's list",
        ),
        flagged(
            """
            import tensorflow as tf


            class Block(tf.keras.layers.Layer):
                def __init__(self, bn=True):
                    super().__init__()
                    self.forward = tf.keras.Sequential([tf.keras.layers.Dense(8)])
                    if bn:
                        self.forward.add(tf.keras.layers.BatchNormalization())

                def call(self, inputs):
                    return self.forward(inputs)


            class Critic(tf.keras.layers.Layer):
                def __init__(self):
                    super().__init__()
                    self.block = Block()
                    self.head = tf.keras.layers.Dense(1)

                def call(self, x, y):
                    return self.head(self.block(tf.concat([x, y], axis=-1)))


            class Gan(tf.keras.Model):
                def __init__(self):
                    super().__init__()
                    self.D = Critic()

                def train_step(self, data):
                    x, y = data
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean(self.D(x, y))
                    grads = tape.gradient(loss, self.D.trainable_variables)
                    self.optimizer.apply_gradients(zip(grads, self.D.trainable_variables))
                    return {"loss": loss}
            """,
            fixed="""
            import tensorflow as tf


            class Block(tf.keras.layers.Layer):
                def __init__(self, bn=True):
                    super().__init__()
                    self.forward = tf.keras.Sequential([tf.keras.layers.Dense(8)])
                    if bn:
                        self.forward.add(tf.keras.layers.BatchNormalization())

                def call(self, inputs):
                    return self.forward(inputs)


            class Critic(tf.keras.layers.Layer):
                def __init__(self):
                    super().__init__()
                    self.block = Block()
                    self.head = tf.keras.layers.Dense(1)

                def call(self, x, y):
                    return self.head(self.block(tf.concat([x, y], axis=-1)))


            class Gan(tf.keras.Model):
                def __init__(self):
                    super().__init__()
                    self.D = Critic()

                def train_step(self, data):
                    x, y = data
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean(self.D(x, y, training=True))
                    grads = tape.gradient(loss, self.D.trainable_variables)
                    self.optimizer.apply_gradients(zip(grads, self.D.trainable_variables))
                    return {"loss": loss}
            """,
            at=[(33, 35, "`self.D` holds `BatchNormalization`")],
            run="""
            tf.keras.utils.set_random_seed(0)
            x = tf.random.stateless_normal((16, 3), seed=(1, 2)) + 2.0
            y = tf.random.stateless_normal((16, 2), seed=(1, 3))
            gan = Gan()
            gan.compile(optimizer=tf.keras.optimizers.SGD(0.01))
            gan.fit(tf.data.Dataset.from_tensor_slices((x, y)).batch(8), epochs=1, verbose=0)
            moving_mean = [v.numpy() for v in gan.D.block.forward.layers[1].non_trainable_variables]
            """,
            effect=CHANGES,
            note="a GAN's critic (dslisleedh/GAN-tensorflow2 cgan.py): BatchNormalization added to a Sequential "
                 "attribute under an `if`, two classes down; `self.D(x, y)` passes no mode (its `call(self, x, "
                 "y)` takes none), and `training=True` is accepted by a `call` that declares no `training`",
        ),
        flagged(
            """
            import tensorflow as tf
            import tf_keras


            def build(units):
                inputs = tf_keras.Input((4,))
                h = tf_keras.layers.Dense(units, activation="relu")(inputs)
                h = tf_keras.layers.Dropout(0.5)(h)
                return tf_keras.Model(inputs, tf_keras.layers.Dense(1)(h))


            def fit_step(model, optimizer, x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x) - y))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
                return loss


            def train(x, y):
                model = build(16)
                optimizer = tf_keras.optimizers.SGD(0.1)
                return [fit_step(model, optimizer, x, y) for _ in range(3)]
            """,
            fixed="""
            import tensorflow as tf
            import tf_keras


            def build(units):
                inputs = tf_keras.Input((4,))
                h = tf_keras.layers.Dense(units, activation="relu")(inputs)
                h = tf_keras.layers.Dropout(0.5)(h)
                return tf_keras.Model(inputs, tf_keras.layers.Dense(1)(h))


            def fit_step(model, optimizer, x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
                return loss


            def train(x, y):
                model = build(16)
                optimizer = tf_keras.optimizers.SGD(0.1)
                return [fit_step(model, optimizer, x, y) for _ in range(3)]
            """,
            at=[(14, 41, "`model` holds `Dropout`")],
            run="""
            tf_keras.utils.set_random_seed(0)
            x = tf.random.stateless_normal((32, 4), seed=(1, 2))
            y = tf.random.stateless_normal((32, 1), seed=(1, 3))
            losses = train(x, y)
            """,
            effect=CHANGES,
            note="tf_keras: a functional model made by a function, reaching the step as a parameter",
        ),
        flagged(
            """
            import keras
            import numpy as np
            import tensorflow as tf

            keras.utils.set_random_seed(0)
            model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8), keras.layers.BatchNormalization(),
                                      keras.layers.Dense(1)])
            optimizer = keras.optimizers.SGD(0.01)
            x = np.random.default_rng(0).normal(3.0, 1.0, (32, 4)).astype("float32")
            y = np.ones((32, 1), "float32")

            for epoch in range(3):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x) - y))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))

            predictions = model(x)
            moving_mean = model.layers[1].moving_mean.numpy()
            """,
            fixed="""
            import keras
            import numpy as np
            import tensorflow as tf

            keras.utils.set_random_seed(0)
            model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8), keras.layers.BatchNormalization(),
                                      keras.layers.Dense(1)])
            optimizer = keras.optimizers.SGD(0.01)
            x = np.random.default_rng(0).normal(3.0, 1.0, (32, 4)).astype("float32")
            y = np.ones((32, 1), "float32")

            for epoch in range(3):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))

            predictions = model(x)
            moving_mean = model.layers[1].moving_mean.numpy()
            """,
            at=[(14, 41, "`model` holds `BatchNormalization`")],
            effect=CHANGES,
            note="a script's (or notebook's) own loop: the call under the step's tape; the prediction after the "
                 "loop is inference",
        ),
        flagged(
            """
            import tensorflow as tf


            class Agent:
                def __init__(self):
                    self.q = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(16),
                                                  tf.keras.layers.Dropout(0.5), tf.keras.layers.Dense(2)])
                    self.opt = tf.keras.optimizers.SGD(0.1)

                def _loss(self, states, targets):
                    return tf.reduce_mean(tf.square(self.q(states) - targets))

                def learn(self, states, targets):
                    with tf.GradientTape() as tape:
                        loss = self._loss(states, targets)
                    grads = tape.gradient(loss, self.q.trainable_variables)
                    self.opt.apply_gradients(zip(grads, self.q.trainable_variables))
                    return loss
            """,
            fixed="""
            import tensorflow as tf


            class Agent:
                def __init__(self):
                    self.q = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(16),
                                                  tf.keras.layers.Dropout(0.5), tf.keras.layers.Dense(2)])
                    self.opt = tf.keras.optimizers.SGD(0.1)

                def _loss(self, states, targets):
                    return tf.reduce_mean(tf.square(self.q(states, training=True) - targets))

                def learn(self, states, targets):
                    with tf.GradientTape() as tape:
                        loss = self._loss(states, targets)
                    grads = tape.gradient(loss, self.q.trainable_variables)
                    self.opt.apply_gradients(zip(grads, self.q.trainable_variables))
                    return loss
            """,
            at=[(11, 41, "`self.q` holds `Dropout`")],
            run="""
            tf.keras.utils.set_random_seed(0)
            agent = Agent()
            states = tf.random.stateless_normal((16, 4), seed=(1, 2))
            targets = tf.random.stateless_normal((16, 2), seed=(1, 3))
            losses = [agent.learn(states, targets) for _ in range(3)]
            """,
            effect=CHANGES,
            note="the forward pass in a helper method every call of which is under the step's tape",
        ),
        clean(
            """
            import tensorflow as tf


            class Agent:
                def __init__(self):
                    self.q = tf.keras.Sequential([tf.keras.layers.Dense(16), tf.keras.layers.Dropout(0.5)])
                    self.opt = tf.keras.optimizers.SGD(0.1)

                def _loss(self, states, targets):
                    return tf.reduce_mean(tf.square(self.q(states) - targets))

                def learn(self, states, targets):
                    with tf.GradientTape() as tape:
                        loss = self._loss(states, targets)
                    grads = tape.gradient(loss, self.q.trainable_variables)
                    self.opt.apply_gradients(zip(grads, self.q.trainable_variables))

                def report(self, states, targets):
                    return self._loss(states, targets)
            """,
            note="the helper is also called outside any training step (an evaluation): its mode is not told",
        ),
        flagged(
            """
            import tensorflow as tf


            class ConvNet(tf.keras.Model):
                def __init__(self):
                    super().__init__()
                    self.fc = tf.keras.layers.Dense(16)
                    self.dropout = tf.keras.layers.Dropout(0.5)

                def call(self, x, is_training=False):
                    return self.dropout(self.fc(x), training=is_training)


            net = ConvNet()
            optimizer = tf.keras.optimizers.Adam()


            def run_optimization(x, y):
                with tf.GradientTape() as g:
                    loss = tf.reduce_mean(tf.square(net(x) - y))
                gradients = g.gradient(loss, net.trainable_variables)
                optimizer.apply_gradients(zip(gradients, net.trainable_variables))
            """,
            at=[(20, 41, "`net` holds `Dropout`")],
            note="the mode is the callee's `is_training` (aymericdamien/TensorFlow-Examples' shape, which passes "
                 "it): reported, no fix (`training=True` would lose to the explicit `training=is_training`)",
        ),
        clean(
            """
            import keras
            import tensorflow as tf

            model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8), keras.layers.BatchNormalization(),
                                      keras.layers.Dense(1)])
            plain = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
            optimizer = keras.optimizers.SGD(0.01)


            @tf.function
            def train_step(x, y, mode):
                with tf.GradientTape() as tape:
                    a = model(x, training=True)
                    b = model(x, True)
                    c = model(x, training=mode)
                    d = plain(x)
                    loss = tf.reduce_mean(tf.square(a + b + c + d - y))
                variables = model.trainable_variables + plain.trainable_variables
                grads = tape.gradient(loss, variables)
                optimizer.apply_gradients(zip(grads, variables))
                return loss


            def val_step(x, y):
                return tf.reduce_mean(tf.square(model(x) - y))
            """,
            note="`training` given (keyword, positionally, a variable); a model with no such layer; an "
                 "evaluation step",
        ),
        clean(
            """
            import keras
            import tensorflow as tf


            class Student(keras.Model):
                def __init__(self):
                    super().__init__()
                    self.dense = keras.layers.Dense(4)
                    self.drop = keras.layers.Dropout(0.2)

                def call(self, x, training=True):
                    return self.drop(self.dense(x), training=training)


            class Conv(keras.Model):
                def __init__(self):
                    super().__init__()
                    self.bn = keras.layers.BatchNormalization()

                def call(self, x, is_training=False):
                    return self.bn(x, training=is_training)


            teacher = keras.Sequential([keras.Input((4,)), keras.layers.Dense(4), keras.layers.Dropout(0.5)])
            student = Student()
            conv = Conv()
            optimizer = keras.optimizers.Adam()


            @tf.function
            def distill(x):
                with tf.GradientTape() as tape:
                    target = teacher(x)
                    loss = tf.reduce_mean(tf.square(student(x) - target) + conv(x, is_training=True))
                variables = student.trainable_variables + conv.trainable_variables
                grads = tape.gradient(loss, variables)
                optimizer.apply_gradients(zip(grads, variables))
            """,
            note="a frozen teacher (its variables are not updated: inference on purpose); a `call` whose "
                 "default is `training=True`; a mode passed under the callee's own name (`is_training`)",
        ),
        clean(
            """
            import tensorflow as tf
            import tf_keras

            tf_keras.backend.set_learning_phase(1)
            model = tf_keras.Sequential([tf_keras.layers.Dense(8), tf_keras.layers.BatchNormalization()])
            optimizer = tf_keras.optimizers.SGD(0.01)


            def train_step(x):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(model(x))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
            """,
            note="tf_keras's learning phase set to 1: then a call without `training` trains (measured)",
        ),
        clean(
            """
            import keras
            import tensorflow as tf

            model = keras.Sequential([keras.layers.Dense(8), keras.layers.BatchNormalization()])
            optimizer = keras.optimizers.SGD(0.01)


            class Wrapper(keras.layers.Layer):
                def call(self, x, training=None):
                    with tf.GradientTape() as tape:
                        loss = tf.reduce_mean(model(x))
                    grads = tape.gradient(loss, model.trainable_variables)
                    optimizer.apply_gradients(zip(grads, model.trainable_variables))
                    return x


            def test_train_step():
                x = tf.ones((4, 3))
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(model(x))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))
            """,
            note="inside a layer's `call` (the caller's mode passes on to the layers it calls); a test (named as one)",
        ),
    ]


def _fix(call: cst.Call) -> Optional[Fix]:
    args = list(call.args)
    new = cst.Arg(value=cst.Name("True"), keyword=cst.Name("training"),
                  equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                        whitespace_after=cst.SimpleWhitespace("")))
    if args:
        last = args[-1]
        if isinstance(last.comma, cst.Comma):
            new = new.with_changes(comma=last.comma)  # a trailing comma (and its line break) moves to the new arg
        args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    return Fix("Pass `training=True`", Safety.UNSAFE, {call: call.with_changes(args=args + [new])})
