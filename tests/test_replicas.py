"""semantic/replicas.py: the functions a tf.distribute strategy runs per replica, and the means their
training steps differentiate."""
from __future__ import annotations

import textwrap

import libcst as cst

from tflint_gpu.engine.lint import analyse

CODE = cst.Module(body=[]).code_for_node


def _ctx(source: str):
    return analyse(cst.parse_module(textwrap.dedent(source)), [])


def _means(ctx):
    """The text of every mean (a call or a quotient) the fact calls per-replica, and its run's method."""
    found = []
    stack = [ctx.module]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        if isinstance(node, (cst.Call, cst.BinaryOperation)):
            answer = ctx.replicas.per_replica_mean(node)
            if answer is not None:
                found.append((CODE(node), answer.run.func.attr.value))
    return sorted(found)


SOURCE = """
    import keras
    import tensorflow as tf

    strategy = tf.distribute.MirroredStrategy()
    single = tf.distribute.OneDeviceStrategy("/cpu:0")
    with strategy.scope():
        model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
        optimizer = keras.optimizers.SGD(0.1)
        default_loss = keras.losses.MeanSquaredError()
        none_loss = keras.losses.MeanSquaredError(reduction="none")


    def helper_loss(y, p):
        return tf.reduce_mean(none_loss(y, p))


    def step(x, y):
        with tf.GradientTape() as tape:
            p = model(x)
            loss = 0.5 * helper_loss(y, p) + tf.math.reduce_mean(tf.abs(p))
            logged = tf.reduce_mean(tf.square(y - p))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return logged


    def divided_step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(y - model(x)))
            loss = loss / strategy.num_replicas_in_sync
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))


    def keras_step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(default_loss(y, model(x)))
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))


    def one_replica_step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(y - model(x)))
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))


    def unrun_step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(y - model(x)))
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))


    class Trainer:
        def __init__(self, distribute_strategy):
            self.distribute_strategy = distribute_strategy

        def train_step(self, x, y):
            with tf.GradientTape() as tape:
                loss = keras.ops.mean(tf.square(y - model(x)))
            optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables),
                                          model.trainable_variables))

        def distributed(self, x, y):
            return self.distribute_strategy.experimental_run_v2(self.train_step, args=(x, y))


    @tf.function
    def train(x, y):
        strategy.run(step, args=(x, y))
        strategy.run(divided_step, args=(x, y))
        strategy.run(keras_step, args=(x, y))
        single.run(one_replica_step, args=(x, y))
        unrun_step(x, y)
"""


def test_runs_name_the_functions_each_strategy_runs():
    ctx = _ctx(SOURCE)
    runs = {(CODE(call.func), function.name) for call, _, function in ctx.replicas.runs()}
    assert runs == {("strategy.run", "step"), ("strategy.run", "divided_step"), ("strategy.run", "keras_step"),
                    ("self.distribute_strategy.experimental_run_v2", "train_step")}


def test_means_differentiated_per_replica():
    # Through a helper's return and a product with a number, a sum; a method run by the removed alias.
    # Not: a mean only returned, a mean divided by the replicas, a Keras loss with its default
    # reduction, a OneDeviceStrategy's step, a step no strategy runs.
    assert _means(_ctx(SOURCE)) == [
        ("keras.ops.mean(tf.square(y - model(x)))", "experimental_run_v2"),
        ("tf.math.reduce_mean(tf.abs(p))", "run"),
        ("tf.reduce_mean(none_loss(y, p))", "run"),
    ]


def test_a_step_aggregating_its_own_gradients_is_not_per_replica():
    source = """
        import tensorflow as tf

        strategy = tf.distribute.MirroredStrategy()

        def step(x, w, optimizer):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(x * w)
            grads = tape.gradient(loss, [w])
            optimizer.apply_gradients(zip(grads, [w]), experimental_aggregate_gradients=False)

        def reduced(x, w, optimizer):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(x * w)
            grads = tf.distribute.get_replica_context().all_reduce("mean", tape.gradient(loss, [w]))
            optimizer.apply_gradients(zip(grads, [w]))

        def summed(x, w, optimizer):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(x * w)
            optimizer.apply_gradients(zip(tape.gradient(loss, [w]), [w]))

        strategy.run(step, args=(1.0, 2.0, None))
        strategy.run(reduced, args=(1.0, 2.0, None))
        strategy.run(summed, args=(1.0, 2.0, None))
    """
    assert _means(_ctx(source)) == [("tf.reduce_mean(x * w)", "run")]
    ctx = _ctx(source)
    found = [ctx.replicas.per_replica_mean(call) for call, _ in ctx.model.index.get("Call", ())]
    assert [f.scope.name for f in found if f is not None] == ["summed"]


def test_minimize_with_a_tape_and_a_lambda_loss():
    source = """
        import tensorflow as tf

        strategy = tf.distribute.MirroredStrategy()

        def step(x, w, optimizer):
            with tf.GradientTape() as tape:
                pass
            optimizer.minimize(lambda: tf.reduce_mean(x * w), [w], tape=tape)

        strategy.run(lambda: step(1.0, 2.0, None))
    """
    assert _means(_ctx(source)) == [("tf.reduce_mean(x * w)", "run")]


def test_a_mean_rebound_from_itself():
    # A binding made in the tape's `with` body and replaced after it: the replacement decides.
    source = """
        import tensorflow as tf

        strategy = tf.distribute.MirroredStrategy()

        def divided(x, w, optimizer, n):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(x * w + 1)
            loss /= n
            optimizer.apply_gradients(zip(tape.gradient(loss, [w]), [w]))

        def regularized(x, w, optimizer, reg):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(x * w + 2)
                loss += 0.01 * reg
                loss *= 2
            optimizer.apply_gradients(zip(tape.gradient(loss, [w]), [w]))

        def summed(x, w, optimizer, reg):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(x * w + 3)
            loss = loss + tf.reduce_mean(reg)
            optimizer.apply_gradients(zip(tape.gradient(loss, [w]), [w]))

        for fn in (divided, regularized, summed):
            pass
        strategy.run(divided, args=(1.0, 2.0, None, 2))
        strategy.run(regularized, args=(1.0, 2.0, None, 0.0))
        strategy.run(summed, args=(1.0, 2.0, None, 0.0))
    """
    assert _means(_ctx(source)) == [("tf.reduce_mean(reg)", "run"), ("tf.reduce_mean(x * w + 2)", "run"),
                                    ("tf.reduce_mean(x * w + 3)", "run")]


def test_a_sum_over_the_replicas_own_count_is_a_mean():
    # A masked mean, divide_no_nan, a count by tf.shape(x)[0] / tf.size / count_nonzero (through tf.cast
    # and + eps) are means over the replica's data; a sum over the global batch size is not.
    source = """
        import tensorflow as tf

        GLOBAL_BATCH = 64
        strategy = tf.distribute.MirroredStrategy()

        def step(x, mask, w, optimizer, global_batch):
            with tf.GradientTape() as tape:
                loss = x * w
                masked = tf.reduce_sum(loss * mask) / tf.reduce_sum(mask)
                no_nan = tf.math.divide_no_nan(tf.reduce_sum(loss), tf.cast(tf.math.count_nonzero(mask), tf.float32))
                batch = tf.reduce_sum(loss) / tf.cast(tf.shape(loss)[0], tf.float32)
                sized = tf.reduce_sum(loss) / (tf.cast(tf.size(mask), tf.float32) + 1e-9)
                global_mean = tf.reduce_sum(loss) / GLOBAL_BATCH
                given = tf.reduce_sum(loss) / tf.cast(global_batch, tf.float32)
                total = masked + no_nan + batch + sized + global_mean + given
            optimizer.apply_gradients(zip(tape.gradient(total, [w]), [w]))

        strategy.run(step, args=(1.0, 1.0, 2.0, None, 64))
    """
    assert _means(_ctx(source)) == [
        ("tf.math.divide_no_nan(tf.reduce_sum(loss), tf.cast(tf.math.count_nonzero(mask), tf.float32))", "run"),
        ("tf.reduce_sum(loss * mask) / tf.reduce_sum(mask)", "run"),
        ("tf.reduce_sum(loss) / (tf.cast(tf.size(mask), tf.float32) + 1e-9)", "run"),
        ("tf.reduce_sum(loss) / tf.cast(tf.shape(loss)[0], tf.float32)", "run"),
    ]
