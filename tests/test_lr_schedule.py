"""semantic/lr_schedule.py: which optimizers (and models' optimizers) were built on a learning-rate schedule."""
from __future__ import annotations

import textwrap

import libcst as cst

from tflint_gpu.engine.lint import analyse

CODE = cst.Module(body=[]).code_for_node


def _ctx(source: str):
    return analyse(cst.parse_module(textwrap.dedent(source)), [])


def _last(ctx, function: str, text: str):
    scope = next(s for s in ctx.model.scopes if s.name == function)
    wanted = cst.parse_expression(text)
    found = None
    stack = [scope.node]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.BaseExpression) and node.deep_equals(wanted):
            found = node  # any occurrence: the tests name each once or identically
        stack.extend(node.children)
    assert found is not None, text
    return found, scope


def _schedule(ctx, function: str, text: str):
    expr, scope = _last(ctx, function, text)
    found = ctx.learning_rates.schedule(expr, scope)
    return None if found is None else CODE(found[0].func)


SOURCE = """
    import keras
    import tensorflow as tf

    class Warmup(keras.optimizers.schedules.LearningRateSchedule):
        def __call__(self, step):
            return 1e-3

    def make_optimizer(lr):
        return keras.optimizers.Adam(learning_rate=lr)

    class Trainer:
        def __init__(self, kind):
            self.opt = None
            self.sched_opt = make_optimizer(Warmup())
            self.either = keras.optimizers.SGD(Warmup()) if kind else keras.optimizers.SGD(0.1)
            self.legacy = tf.keras.optimizers.legacy.Adam(Warmup())

        def run(self, given):
            a = self.sched_opt
            b = self.either
            c = self.legacy
            d = given
            e = tf.keras.optimizers.Adam(tf.keras.optimizers.schedules.PiecewiseConstantDecay([10], [1e-3, 1e-4]))
            f = keras.optimizers.Adam(0.001)

    def train(x):
        model = keras.Sequential([keras.layers.Dense(1)])
        model.compile(optimizer=keras.optimizers.Adam(keras.optimizers.schedules.CosineDecay(1e-3, 10)), loss="mse")
        other = keras.Sequential([keras.layers.Dense(1)])
        other.compile("adam", "mse")
        g = model.optimizer
        h = other.optimizer
        model.fit(x, callbacks=[keras.callbacks.ReduceLROnPlateau(), keras.callbacks.EarlyStopping()])
"""


def test_an_optimizer_made_with_a_schedule_through_defs_and_attributes():
    ctx = _ctx(SOURCE)
    assert _schedule(ctx, "run", "self.sched_opt") == "Warmup"  # through make_optimizer's parameter
    assert _schedule(ctx, "run", "e") == "tf.keras.optimizers.schedules.PiecewiseConstantDecay"


def test_an_optimizer_that_may_have_a_float_rate_or_an_unknown_maker_is_not_one():
    ctx = _ctx(SOURCE)
    assert _schedule(ctx, "run", "self.either") is None  # one branch makes it with 0.1
    assert _schedule(ctx, "run", "self.legacy") is None  # a legacy optimizer: its rate may be replaced
    assert _schedule(ctx, "run", "given") is None  # nothing in the module makes it
    assert _schedule(ctx, "run", "f") is None


def test_a_models_optimizer_is_what_every_compile_of_that_model_gives():
    ctx = _ctx(SOURCE)
    assert _schedule(ctx, "train", "model.optimizer") == "keras.optimizers.schedules.CosineDecay"
    assert _schedule(ctx, "train", "other.optimizer") is None  # compiled with "adam"
    model, scope = _last(ctx, "train", "model")
    assert ctx.learning_rates.model_schedule(model, scope) is not None
    other, scope = _last(ctx, "train", "other")
    assert ctx.learning_rates.model_schedule(other, scope) is None


def test_a_model_compiled_twice_with_a_float_rate_once_is_not_one():
    ctx = _ctx("""
        import keras

        def train():
            model = keras.Sequential([keras.layers.Dense(1)])
            model.compile(optimizer=keras.optimizers.Adam(keras.optimizers.schedules.CosineDecay(1e-3, 10)))
            model.compile(optimizer=keras.optimizers.Adam(1e-4))
            g = model.optimizer
    """)
    assert _schedule(ctx, "train", "model.optimizer") is None


def test_the_callbacks_that_set_the_rate():
    ctx = _ctx(SOURCE)
    call, scope = _last(ctx, "train", "[keras.callbacks.ReduceLROnPlateau(), keras.callbacks.EarlyStopping()]")
    found = ctx.learning_rates.rate_callbacks(call, scope)
    assert [cls for _, cls in found] == ["keras.callbacks.ReduceLROnPlateau"]


def test_a_value_that_may_be_a_schedule_or_a_callable():
    ctx = _ctx("""
        import functools
        import keras

        def rate():
            return 1e-3

        class Mine:
            pass

        def values(given, epoch):
            a = 1e-3 * 0.5 ** epoch
            b = keras.optimizers.schedules.CosineDecay(1e-3, 10)
            c = lambda: 1e-3
            d = rate
            e = functools.partial(rate)
            f = Mine()
            g = given
            h = float(epoch)
    """)
    expected = {"a": False, "b": True, "c": True, "d": True, "e": True, "f": True, "g": True, "h": False}
    for name, may in expected.items():
        expr, scope = _last(ctx, "values", name)
        assert ctx.learning_rates.may_be_schedule(expr, scope) is may, name


def test_a_keras3_optimizer_picked_from_a_display_of_optimizers():
    ctx = _ctx("""
        import tensorflow as tf
        import tf_keras
        from tensorflow.keras.optimizers import SGD, Adam

        def train(kind, given):
            picked = {"adam": Adam(learning_rate=0.1), "sgd": SGD(learning_rate=0.1)}[kind]
            listed = [Adam(), SGD()][kind]
            mixed = {"adam": Adam(), "other": make()}[kind]
            old = {"adam": tf_keras.optimizers.Adam()}[kind]
            a = picked
            b = listed
            c = mixed
            d = given
            e = old
    """)
    found = {}
    for name in "abcde":
        expr, scope = _last(ctx, "train", name)
        found[name] = ctx.learning_rates.keras3_optimizer(expr, scope)
    assert found == {"a": True, "b": True, "c": False, "d": False, "e": False}
