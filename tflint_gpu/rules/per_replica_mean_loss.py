from __future__ import annotations

import textwrap

import libcst as cst

from tflint_gpu.rules.base import CHANGES, Fix, Rule, Safety, clean, flagged

_MEAN_NAMES = frozenset({"reduce_mean", "mean", "divide_no_nan", "divide", "truediv"})


def _last_name(func: cst.BaseExpression):
    return func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None


# An operand of these is parenthesized when the mean becomes a quotient (``m ** 2``, ``-m``, ``m.numpy()``).
_BINDS_TIGHTER = (cst.BinaryOperation, cst.UnaryOperation, cst.Attribute, cst.Subscript)

_SETUP = '''
import numpy as np
import tensorflow as tf

devices = [d.name for d in tf.config.list_logical_devices("CPU")[:2]]
strategy = tf.distribute.MirroredStrategy(devices)
with strategy.scope():
    w = tf.Variable(tf.ones((3, 1)))
    optimizer = tf.keras.optimizers.SGD(0.1)
x = np.arange(24, dtype="float32").reshape(8, 3) / 24
y = np.linspace(-1, 1, 8, dtype="float32").reshape(8, 1)
dataset = strategy.experimental_distribute_dataset(tf.data.Dataset.from_tensor_slices((x, y)).batch(8))
'''
# What one SGD step on the whole batch of 8 would move w by on one device: the fixed code matches it.
_RUN = '''
for batch in dataset:
    train(batch)
single_device = 0.1 * x.T @ (2 * (x @ np.ones((3, 1), "float32") - y)) / 8
matches_single_device = float(np.allclose(1 - w.numpy(), single_device, atol=1e-6))
'''


class PerReplicaMeanLoss(Rule):
    """A per-replica mean loss in a step `strategy.run` runs: the summed gradients are N replicas times too large.

    ## What it does
    Finds a `tf.reduce_mean(...)` (`tf.math.reduce_mean`, `keras.ops.mean`,
    `keras.backend.mean`), or a mean spelled as a sum over the replica's own
    count (the masked mean `tf.reduce_sum(loss * mask) / tf.reduce_sum(mask)`,
    `tf.math.divide_no_nan(...)` of the same, a sum over `tf.shape(x)[0]`,
    `tf.size(x)` or `tf.math.count_nonzero(mask)`, through `tf.cast` and
    `+ eps`), whose value a GradientTape training step
    differentiates (`tape.gradient(loss, ...)`, `optimizer.minimize(loss,
    ..., tape=tape)`), when a `tf.distribute` strategy runs that step once per
    replica: the function handed to `strategy.run(fn, args=...)` (or to its
    removed alias `strategy.experimental_run_v2`), a nested def, a
    same-module function or a method `self.train_step`, or a function it
    calls by name that holds the step. The mean is followed from the
    gradient's target through names, parameters, `self.x`, the returns of
    same-module functions and methods (`loss = self.loss_function(y, p)`),
    sums, differences and products with a number.

    Not reported: `tf.nn.compute_average_loss(...)`; `tf.reduce_sum(loss) /
    GLOBAL_BATCH` (a sum over a number or a name, not a count of the
    replica's data); a mean divided by anything (`mean /
    strategy.num_replicas_in_sync`); a mean that is not differentiated (a
    metric, a logged value); a step no strategy runs; `model.fit` under
    `strategy.scope()` (Keras scales its own losses); a mean of a Keras loss
    object built with a reduction other than `"none"` (Keras 3 divides that
    by the replicas itself, see below; tf_keras raises `ValueError` in
    `strategy.run`; a loss object the module does not show, such as a
    parameter, is taken for a per-example one); a `OneDeviceStrategy`; a step that aggregates
    gradients itself (`apply_gradients(...,
    experimental_aggregate_gradients=False)`, `skip_gradients_aggregation=True`,
    an `all_reduce` call).

    ## Why is this bad?
    `strategy.run` runs the step on every replica with its share of the
    global batch, and the optimizer's `apply_gradients` *sums* the replicas'
    gradients. A per-replica mean already averages over its share, so the sum
    over N replicas is N times the gradient of the mean over the global batch:
    the effective learning rate grows with the number of devices.
    TensorFlow's custom-training guide divides by the global batch instead:
    `tf.nn.compute_average_loss(per_example_loss,
    global_batch_size=GLOBAL_BATCH_SIZE)`. Measured for both Keras flavours
    (see below), the same under each: Keras 3 optimizers
    (`keras.optimizers.SGD`), tf_keras optimizers and tf_keras's
    `optimizers.legacy` all sum.

    ## Example
    ```python
    def step(x, y):
        with tf.GradientTape() as tape:
            per_example = loss_object(y, model(x, training=True))
            loss = tf.reduce_mean(per_example)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))

    strategy.run(step, args=(x, y))
    ```

    Use instead:
    ```python
            loss = tf.nn.compute_average_loss(per_example, global_batch_size=GLOBAL_BATCH_SIZE)
    ```

    ## Fix safety
    Unsafe, and meant to change the gradients: the fix divides the mean by
    the number of replicas, `tf.reduce_mean(per_example) /
    tf.distribute.get_strategy().num_replicas_in_sync`, which is 1 outside a
    strategy (the code keeps its values when run on one device). It is exact
    when every replica gets the same share of the batch, whatever the rank
    of the loss. It is not `tf.nn.compute_average_loss(per_example)`: that
    sums every axis but the first and divides by the batch only, so for a
    per-token loss of shape `[batch, length]` it is `length` times the mean
    (measured: twice the single-device update for a `[8, 2]` loss on one
    replica and on two). With an uneven last batch (7 examples split 4 and
    3) neither is exact: the fix, like `compute_average_loss` without
    `global_batch_size`, moved the weights 5-38% more than one device did;
    only `global_batch_size=` is exact there. For a masked mean the fix is
    exact when both replicas hold as many unmasked positions; otherwise it
    is within a few percent (measured: 3%), where an all-reduced count
    would be exact. The loss value the step
    returns is divided too: reduce it across replicas with
    `ReduceOp.SUM`, as the guide does, to log the same figure as before.

    ## Measured effect
    TF 2.21.0 on CPU, `MirroredStrategy` over two logical CPU devices
    against one, the same global batch of 8, one SGD(0.1) step of a linear
    model: with `tf.reduce_mean(per_example_loss)` (and with
    `tf.reduce_mean(loss_object(y, p))` for a loss built with
    `reduction="none"`, and `keras.ops.mean`/`keras.backend.mean`) the
    update on two replicas is exactly 2.0 times the one-replica update, which
    equals the single-device update, under Keras 3.15.1 (`keras.optimizers.SGD`),
    tf_keras 2.21.0 (`tf_keras.optimizers.SGD`) and tf_keras's
    `optimizers.legacy.SGD`. `tf.nn.compute_average_loss(per_example)` (with
    or without `global_batch_size=8`), the mean divided by
    `num_replicas_in_sync` and the fix: ratio 1.0. A Keras loss object with
    its default reduction called directly (or inside `tf.reduce_mean`):
    ratio 1.0 under Keras 3 (its `Loss.__call__` divides by the replicas),
    `ValueError` (use `Reduction.SUM` or `NONE` under a strategy) under
    tf_keras, with one replica or two: neither is reported. A masked mean
    (`reduce_sum(loss * mask) / reduce_sum(mask)` or `divide_no_nan`, Keras
    3 SGD): 2.0 when the replicas hold as many unmasked positions, 1.94 to
    2.03 per weight when they do not (12 and 8); with the fix 1.0 and 0.97
    to 1.01. The fix cases run the step before and after under two logical
    CPUs (the Keras 3 loop, a tf_keras method with a masked `[batch, 2]`
    loss, a masked mean and a sum over `tf.shape(x)[0]`): after the fix the
    update matches the single-device one (`matches_single_device` 0.0 ->
    1.0). `examples/TFG504` (`tflint-gpu verify --rule TFG504 --device cpu
    --size small`, a 8-16-1 MLP trained 5 epochs of 8 batches of 64 over
    two logical CPU devices and over one): fixes-behaviour, the two runs'
    weights differ before the fix and agree to float rounding after.
    `verify` gives the example two logical CPUs because it sets
    `LOGICAL_CPUS = 2` (the runner splits the CPU before TensorFlow's
    first op).
    """

    code = "TFG504"
    name = "per-replica-mean-loss"
    message = "mean loss per replica in a step `strategy.run` runs: the summed gradients are N times too large"
    needs = (("strategy", "Strategy"), ("run",), ("mean", "sum", "size", "shape"))
    fix_safety = Safety.UNSAFE

    def visit_Call(self, node: cst.Call, ctx) -> None:
        if _last_name(node.func) in _MEAN_NAMES:
            self._check(node, ctx)

    def visit_BinaryOperation(self, node: cst.BinaryOperation, ctx) -> None:
        if isinstance(node.operator, cst.Divide):
            self._check(node, ctx)

    def _check(self, node: cst.BaseExpression, ctx) -> None:
        found = ctx.replicas.per_replica_mean(node)
        if found is None:
            return
        run = found.run.func.attr.value
        if isinstance(node, cst.Call) and _last_name(node.func) in ("reduce_mean", "mean"):
            what = f"`{cst.Module([]).code_for_node(node.func)}` of the loss"
        else:
            what = "a sum over this replica's count (a per-replica mean) as the loss"
        message = (f"{what} in a step `strategy.{run}` runs per replica: the replicas' "
                   "gradients are summed, so each update is N replicas times the single-device one")
        ctx.report(node, message, self._fix(node, ctx))

    @staticmethod
    def _fix(node: cst.BaseExpression, ctx):
        spelled = ctx.module_expr("tensorflow", "distribute.get_strategy")
        if spelled is None:
            return None
        get_strategy, imports = spelled
        original = node
        replicas = cst.Attribute(value=cst.Call(func=get_strategy), attr=cst.Name("num_replicas_in_sync"))
        if isinstance(node, cst.BinaryOperation) and not node.lpar:
            node = node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        quotient = cst.BinaryOperation(left=node, operator=cst.Divide(), right=replicas)
        parent = next(iter(ctx.scope.ancestors(original)), None)
        if isinstance(parent, _BINDS_TIGHTER):
            quotient = quotient.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        return Fix("Divide the mean by the number of replicas", Safety.UNSAFE, {original: quotient}, imports)

    cases = [
        flagged(
            _SETUP + textwrap.dedent('''

            def step(features, labels):
                with tf.GradientTape() as tape:
                    per_example = tf.reduce_sum(tf.square(labels - tf.matmul(features, w)), axis=1)
                    loss = tf.reduce_mean(per_example)
                grads = tape.gradient(loss, [w])
                optimizer.apply_gradients(zip(grads, [w]))
                return loss


            @tf.function
            def train(batch):
                return strategy.run(step, args=batch)
            '''),
            _SETUP + textwrap.dedent('''

            def step(features, labels):
                with tf.GradientTape() as tape:
                    per_example = tf.reduce_sum(tf.square(labels - tf.matmul(features, w)), axis=1)
                    loss = tf.reduce_mean(per_example) / tf.distribute.get_strategy().num_replicas_in_sync
                grads = tape.gradient(loss, [w])
                optimizer.apply_gradients(zip(grads, [w]))
                return loss


            @tf.function
            def train(batch):
                return strategy.run(step, args=batch)
            '''),
            at=[(17, 16, "`tf.reduce_mean` of the loss in a step `strategy.run` runs per replica")],
            run=_RUN,
            effect=CHANGES,
            note="the guide's loop with a plain mean (Keras 3 SGD): matches_single_device 0.0 before, 1.0 after",
        ),
        flagged(
            _SETUP + textwrap.dedent('''

            def step(features, labels):
                with tf.GradientTape() as tape:
                    per_example = tf.reduce_sum(tf.square(labels - tf.matmul(features, w)), axis=1)
                    mask = tf.cast(labels[:, 0] > -2.0, per_example.dtype)
                    loss = tf.math.divide_no_nan(tf.reduce_sum(per_example * mask), tf.reduce_sum(mask))
                    loss += tf.reduce_sum(per_example) / tf.cast(tf.shape(per_example)[0], tf.float32)
                grads = tape.gradient(loss, [w])
                optimizer.apply_gradients(zip(grads, [w]))
                return loss


            @tf.function
            def train(batch):
                return strategy.run(step, args=batch)
            '''),
            _SETUP + textwrap.dedent('''

            def step(features, labels):
                with tf.GradientTape() as tape:
                    per_example = tf.reduce_sum(tf.square(labels - tf.matmul(features, w)), axis=1)
                    mask = tf.cast(labels[:, 0] > -2.0, per_example.dtype)
                    loss = tf.math.divide_no_nan(tf.reduce_sum(per_example * mask), tf.reduce_sum(mask)) / tf.distribute.get_strategy().num_replicas_in_sync
                    loss += (tf.reduce_sum(per_example) / tf.cast(tf.shape(per_example)[0], tf.float32)) / tf.distribute.get_strategy().num_replicas_in_sync
                grads = tape.gradient(loss, [w])
                optimizer.apply_gradients(zip(grads, [w]))
                return loss


            @tf.function
            def train(batch):
                return strategy.run(step, args=batch)
            '''),
            at=[(18, 16, "a sum over this replica's count (a per-replica mean) as the loss in a step `strategy.run`"),
                (19, 17, "a sum over this replica's count (a per-replica mean) as the loss in a step `strategy.run`")],
            run=_RUN.replace("single_device = 0.1", "single_device = 2 * 0.1"),
            effect=CHANGES,
            note="a masked mean (divide_no_nan of a sum over the mask's sum) and a sum over tf.shape(x)[0]: "
                 "per-replica means too (the loss is twice the mean: one device moves w twice as far)",
        ),
        flagged(
            '''
            import os
            os.environ["TF_USE_LEGACY_KERAS"] = "1"
            import numpy as np
            import tensorflow as tf

            devices = [d.name for d in tf.config.list_logical_devices("CPU")[:2]]


            class Trainer:
                def __init__(self, strategy):
                    self.strategy = strategy
                    with strategy.scope():
                        self.w = tf.Variable(tf.ones((3, 2)))
                        self.optimizer = tf.keras.optimizers.SGD(0.1)
                    self.loss_object = tf.keras.losses.MeanSquaredError(reduction="none")

                def loss_function(self, labels, outputs):
                    loss = self.loss_object(labels[..., None], outputs[..., None])  # [batch, 2]
                    loss *= tf.cast(labels != 0, loss.dtype)
                    return 0.5 * tf.reduce_mean(loss)

                def train_step(self, features, labels):
                    with tf.GradientTape() as tape:
                        loss = self.loss_function(labels, tf.matmul(features, self.w))
                    grads = tape.gradient(loss, [self.w])
                    self.optimizer.apply_gradients(zip(grads, [self.w]))
                    return loss

                @tf.function
                def distributed_step(self, features, labels):
                    losses = self.strategy.run(self.train_step, args=(features, labels))
                    return self.strategy.reduce(tf.distribute.ReduceOp.SUM, losses, axis=None)


            x = np.arange(24, dtype="float32").reshape(8, 3) / 24
            y = np.linspace(-1, 1, 16, dtype="float32").reshape(8, 2)
            ''',
            '''
            import os
            os.environ["TF_USE_LEGACY_KERAS"] = "1"
            import numpy as np
            import tensorflow as tf

            devices = [d.name for d in tf.config.list_logical_devices("CPU")[:2]]


            class Trainer:
                def __init__(self, strategy):
                    self.strategy = strategy
                    with strategy.scope():
                        self.w = tf.Variable(tf.ones((3, 2)))
                        self.optimizer = tf.keras.optimizers.SGD(0.1)
                    self.loss_object = tf.keras.losses.MeanSquaredError(reduction="none")

                def loss_function(self, labels, outputs):
                    loss = self.loss_object(labels[..., None], outputs[..., None])  # [batch, 2]
                    loss *= tf.cast(labels != 0, loss.dtype)
                    return 0.5 * (tf.reduce_mean(loss) / tf.distribute.get_strategy().num_replicas_in_sync)

                def train_step(self, features, labels):
                    with tf.GradientTape() as tape:
                        loss = self.loss_function(labels, tf.matmul(features, self.w))
                    grads = tape.gradient(loss, [self.w])
                    self.optimizer.apply_gradients(zip(grads, [self.w]))
                    return loss

                @tf.function
                def distributed_step(self, features, labels):
                    losses = self.strategy.run(self.train_step, args=(features, labels))
                    return self.strategy.reduce(tf.distribute.ReduceOp.SUM, losses, axis=None)


            x = np.arange(24, dtype="float32").reshape(8, 3) / 24
            y = np.linspace(-1, 1, 16, dtype="float32").reshape(8, 2)
            ''',
            at=[(20, 22, "`tf.reduce_mean` of the loss in a step `strategy.run` runs per replica")],
            run='''
            def _moved(strategy):
                trainer = Trainer(strategy)
                dataset = strategy.experimental_distribute_dataset(
                    tf.data.Dataset.from_tensor_slices((x, y)).batch(8))
                for features, labels in dataset:
                    trainer.distributed_step(features, labels)
                return 1 - trainer.w.numpy()

            two_replicas = _moved(tf.distribute.MirroredStrategy(devices))
            one_device = _moved(tf.distribute.MirroredStrategy(devices[:1]))
            matches_single_device = float(np.allclose(two_replicas, one_device, atol=1e-6))
            ''',
            effect=CHANGES,
            note="tf_keras; a method run per replica, the mean in a loss method, a masked [batch, 2] loss (the "
                 "shape of strutive07's transformer): the fix is exact whatever the rank",
        ),
        flagged(
            '''
            import tensorflow as tf

            strategy = tf.distribute.MirroredStrategy()
            with strategy.scope():
                model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1)])
                optimizer = tf.keras.optimizers.SGD(0.1)


            @tf.function
            def train(x, y):
                def step(x, y):
                    with tf.GradientTape() as tape:
                        loss = tf.math.reduce_mean(tf.square(y - model(x))) - 0.0
                    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables),
                                                  model.trainable_variables))
                return strategy.experimental_run_v2(step, args=(x, y))


            before = train(tf.ones((4, 3)), tf.ones((4, 1)))
            ''',
            '''
            import tensorflow as tf

            strategy = tf.distribute.MirroredStrategy()
            with strategy.scope():
                model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1)])
                optimizer = tf.keras.optimizers.SGD(0.1)


            @tf.function
            def train(x, y):
                def step(x, y):
                    with tf.GradientTape() as tape:
                        loss = (tf.math.reduce_mean(tf.square(y - model(x))) / tf.distribute.get_strategy().num_replicas_in_sync) - 0.0
                    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables),
                                                  model.trainable_variables))
                return strategy.experimental_run_v2(step, args=(x, y))


            before = train(tf.ones((4, 3)), tf.ones((4, 1)))
            ''',
            at=[(13, 20, "`tf.math.reduce_mean` of the loss in a step `strategy.experimental_run_v2` runs")],
            effect=CHANGES,
            note="the removed alias (AttributeError under TF 2.21, before and after) and a nested step",
        ),
        clean(
            _SETUP + textwrap.dedent('''

            def step(features, labels):
                with tf.GradientTape() as tape:
                    per_example = tf.reduce_sum(tf.square(labels - tf.matmul(features, w)), axis=1)
                    loss = tf.nn.compute_average_loss(per_example, global_batch_size=8)
                    other = tf.reduce_sum(per_example) / 8
                    scaled = tf.reduce_mean(per_example) / strategy.num_replicas_in_sync
                    logged = tf.reduce_mean(per_example)
                grads = tape.gradient(loss + other + scaled, [w])
                optimizer.apply_gradients(zip(grads, [w]))
                return logged


            @tf.function
            def train(batch):
                return strategy.run(step, args=batch)
            '''),
            note="the guide's compute_average_loss, a sum over the global batch, a mean divided by the "
                 "replicas, a mean only returned (a metric)",
        ),
        clean(
            '''
            import tensorflow as tf

            model = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1)])
            optimizer = tf.keras.optimizers.SGD(0.1)


            @tf.function
            def train_step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(y - model(x)))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))


            strategy = tf.distribute.MirroredStrategy()
            with strategy.scope():
                fitted = tf.keras.Sequential([tf.keras.Input((3,)), tf.keras.layers.Dense(1)])
                fitted.compile("sgd", loss="mse")
            fitted.fit(tf.ones((4, 3)), tf.ones((4, 1)), verbose=0)
            train_step(tf.ones((4, 3)), tf.ones((4, 1)))
            ''',
            note="a step no strategy runs; fit under strategy.scope() (Keras scales its losses)",
        ),
        clean(
            '''
            import keras
            import tensorflow as tf

            strategy = tf.distribute.MirroredStrategy()
            single = tf.distribute.OneDeviceStrategy("/cpu:0")
            with strategy.scope():
                model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
                optimizer = keras.optimizers.SGD(0.1)
                loss_fn = keras.losses.MeanSquaredError()


            def step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(loss_fn(y, model(x)))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))


            def plain_step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(y - model(x)))
                grads = tape.gradient(loss, model.trainable_variables)
                optimizer.apply_gradients(zip(grads, model.trainable_variables))


            def reduced_step(x, y):
                with tf.GradientTape() as tape:
                    loss = tf.reduce_mean(tf.square(y - model(x)))
                grads = tape.gradient(loss, model.trainable_variables)
                grads = tf.distribute.get_replica_context().all_reduce("mean", grads)
                optimizer.apply_gradients(zip(grads, model.trainable_variables), experimental_aggregate_gradients=False)


            strategy.run(step, args=(tf.ones((4, 3)), tf.ones((4, 1))))
            single.run(plain_step, args=(tf.ones((4, 3)), tf.ones((4, 1))))
            strategy.run(reduced_step, args=(tf.ones((4, 3)), tf.ones((4, 1))))
            ''',
            note="a Keras 3 loss with its default reduction (Keras divides by the replicas: measured exact); "
                 "one replica; gradients all-reduced by the step itself",
        ),
    ]
