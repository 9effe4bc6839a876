"""semantic/model_calls.py: Keras models, their inference calls, wrappers and one-sample data."""
from __future__ import annotations

import textwrap

import libcst as cst

from tflint_gpu.engine.lint import analyse


def context(source: str):
    module = cst.parse_module(textwrap.dedent(source).lstrip("\n"))
    return analyse(module, [])


def calls_named(ctx, method):
    return [(call, scope) for call, scope in ctx.model.index.get("Call", ())
            if isinstance(call.func, cst.Attribute) and call.func.attr.value == method]


SOURCE = """
import numpy as np
import tensorflow as tf
from sklearn.linear_model import LinearRegression

class Critic:
    def __init__(self):
        self.model = self.create_model()

    def create_model(self):
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        return model

    def predict(self, state):
        return self.model.predict(state, verbose=0)

class Agent:
    def __init__(self, path=None):
        self.critic = Critic()
        self.clf = LinearRegression()

    def act(self, s, unknown, other):
        a = self.critic.model.predict(s)
        b = self.clf.predict(s)
        c = unknown.predict(s)
        d = other.predict(s, verbose=0)
        e = self.critic.predict(s)
        return a, b, c, d, e

def pick(path):
    if path:
        model = tf.keras.models.load_model(path)
    else:
        model = given_elsewhere
    return model.evaluate(x, y)
"""


def test_models_through_returns_attributes_and_branches():
    ctx = context(SOURCE)
    mc = ctx.model_calls
    found = {}
    for call, scope in calls_named(ctx, "predict") + calls_named(ctx, "evaluate"):
        got = mc.inference(call, scope)
        found[cst.Module([]).code_for_node(call.func.value)] = got[0] if got else None
    assert found["self.model"] == "predict"  # made by a method returning a Sequential
    assert found["self.critic.model"] == "predict"  # an attribute of another own object
    assert found["self.clf"] is None  # scikit-learn
    assert found["unknown"] is None  # nothing tells
    assert found["other"] == "predict"  # verbose= only Keras's predict takes
    assert found["self.critic"] is None  # the file's own class defines predict
    assert found["model"] == "evaluate"  # load_model in one branch, nothing else known in the other


def test_forwarder_passes_its_parameter_on():
    ctx = context(SOURCE)
    mc = ctx.model_calls
    (call, scope), = [(c, s) for c, s in calls_named(ctx, "predict")
                      if cst.Module([]).code_for_node(c.func) == "self.critic.predict"]
    callee = mc.callee(call, scope)
    assert callee is not None and callee.name == "predict"
    inner, index, method = mc.forwarder(callee)
    assert index == 0 and method == "predict"
    assert cst.Module([]).code_for_node(inner.func) == "self.model.predict"
    pick = next(s for s in ctx.model.scopes if s.name == "pick")
    assert mc.forwarder(pick) is None  # its model call passes no parameter of its own


def test_per_item_shapes():
    ctx = context("""
        import numpy as np
        import tensorflow as tf

        def f(s, xs, i):
            one = np.reshape(s, [1, 4])
            many = np.reshape(s, [8, 4])
            uses = [
                one, many, s.reshape(1, -1), s.reshape((1, 4)), s.reshape(4, 1), np.expand_dims(s, 0),
                np.expand_dims(s, -1), tf.expand_dims(s, axis=0), s[None], s[np.newaxis], s[:, None],
                np.array([s]), np.array([s, s]), np.atleast_2d(s), xs[i:i + 1], xs[i:i + 2], xs[i],
            ]
    """)
    mc = ctx.model_calls
    scope = next(s for s in ctx.model.scopes if s.name == "f")
    from tflint_gpu.semantic.model import walk

    display = next(n for n in walk(scope.node) if isinstance(n, cst.List) and len(n.elements) == 17)
    got = [mc.per_item(e.value, scope, display) for e in display.elements]
    assert got == [True, False, True, True, False, True, False, True, True, True, False,
                   True, False, True, True, False, False]


def test_whole_models_are_not_bare_layers():
    ctx = context("""
        import tensorflow as tf

        def make(units):
            inputs = tf.keras.Input((4,))
            return tf.keras.Model(inputs, tf.keras.layers.Dense(units)(inputs))

        seq = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        net = tf.keras.applications.MobileNetV2(weights=None)
        made = make(2)
        if flag:
            either = tf.keras.Sequential([])
        else:
            either = tf.keras.layers.Dense(3)
        dense = tf.keras.layers.Dense(3)
        out = [seq(x), net(x), made(x), either(x), dense(x), tf.keras.layers.Concatenate()(x)]
        """)
    module = ctx.model.scopes[0]
    whole = {cst.Module([]).code_for_node(call.func): ctx.model_calls.is_whole_model(call.func, module)
             for call, scope in ctx.model.index["Call"] if scope is module and isinstance(call.func, cst.Name)
             and call.func.value in ("seq", "net", "made", "either", "dense")}
    assert whole == {"seq": True, "net": True, "made": True, "either": False, "dense": False}
