"""Value kinds (semantic/values.py): one answer per expression, from the engine's facts."""
from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from tflint_gpu.semantic import values
from tflint_gpu.engine.lint import analyse
from tflint_gpu.rules.base import REGISTRY, all_rules

SOURCE = textwrap.dedent("""
    import keras
    import numpy as np
    import tensorflow as tf

    table = {"a": 1}
    rate = 0.5
    nothing = None
    arr = np.zeros((2, 2))
    noise = np.random.normal(size=3)
    one_draw = np.random.normal()
    var = tf.Variable(1.0)
    ds = tf.data.Dataset.range(3).map(lambda x: x + 1)
    dense = keras.layers.Dense(3)
    loss_fn = keras.losses.MeanSquaredError()
    t = tf.zeros(3)
    again = table
    rebound = 1
    rebound = "x"

    class Block(keras.layers.Layer):
        def build(self, shape):
            self.w = self.add_weight(shape=(3,))

    @tf.function
    def f(x):
        y = dense(x)
        return y
""")


@pytest.fixture(scope="module")
def ctx():
    list(all_rules())
    return analyse(cst.parse_module(SOURCE), [REGISTRY["TFG101"]])


@pytest.mark.parametrize("text,kind", [
    ("table", values.PY_CONTAINER),
    ("rate", values.PY_SCALAR),
    ("nothing", values.PY_NONE),
    ("arr", values.NUMPY_ARRAY),
    ("noise", values.NUMPY_ARRAY),
    ("one_draw", values.UNKNOWN),  # a Python float, not an array: NumPy's scalar draw
    ("var", values.VARIABLE),
    ("ds", values.DATASET),
    ("dense", values.KERAS),
    ("loss_fn", values.LOSS),
    ("t", values.TENSOR),
    ("again", values.PY_CONTAINER),
    ("rebound", values.UNKNOWN),  # bound twice: no single answer
    ("undefined_name", values.UNKNOWN),
])
def test_module_level_value_kinds(ctx, text, kind):
    assert ctx.value_kind(cst.parse_expression(text), ctx.model.root) == kind


def test_kinds_inside_functions_and_methods(ctx):
    calls = {ctx.module.code_for_node(node): (node, scope) for node, scope in ctx.model.index["Call"]}
    weight, scope = calls["self.add_weight(shape=(3,))"]
    assert ctx.value_kind(weight, scope) == values.VARIABLE
    layer_call, scope = calls["dense(x)"]
    assert ctx.value_kind(layer_call, scope) == values.TENSOR


CONTAINERS = textwrap.dedent("""
    import keras
    import tensorflow as tf

    loss_tracker = keras.metrics.Mean()
    extra = [keras.metrics.AUC(), keras.metrics.Precision()]
    table = {"a": keras.metrics.Mean(), "b": keras.metrics.Sum()}
    grown = []
    grown.append(keras.metrics.Mean())
    grown += [keras.metrics.Sum()]
    store = {}
    store["x"] = keras.metrics.Mean()
    mixed = [keras.metrics.Mean(), keras.layers.Dense(2)]
    by_copy = list(extra)
    made = dict(a=keras.metrics.Mean())
    for m in [loss_tracker] + extra:
        m.reset_states()
    for k in table:
        k.reset_states()
    for v in table.values():
        v.reset_states()
    for g in grown:
        g.reset_states()
    for x in mixed:
        x.reset_states()
    for c in by_copy:
        c.reset_states()
    for i, e in enumerate(extra):
        e.reset_states()
        i.reset_states()
    for key, val in table.items():
        val.reset_states()
        key.reset_states()
    for p, q in zip(extra, mixed):
        p.reset_states()
        q.reset_states()
    for r, s in pairs:
        r.reset_states()
    store["x"].reset_states()
    made["a"].reset_states()
    extra[0].reset_states()
    extra[1:].reset_states()

    class Net(keras.Model):
        def __init__(self, n):
            super().__init__()
            self.blocks = [keras.layers.Dense(4) for _ in range(n)]
            self.trackers = [keras.metrics.Mean(name="a"), keras.metrics.Mean(name="b")]
            self.metrics_dict = {}
            self.metrics_dict["loss"] = keras.metrics.Mean()
            self.extra = []
            self.mixed = []
            self.mixed.append(keras.layers.Dense(2))

        def build(self, shape):
            self.extra.append(keras.metrics.Sum())
            self.mixed.append(keras.metrics.Sum())

        @property
        def metrics(self):
            return [self.trackers[0], self.metrics_dict["loss"]]

        def call(self, x):
            for b in self.blocks:
                x = b(x)
            for t in self.trackers:
                t.reset_states()
            for ex in self.extra:
                ex.reset_states()
            for mm in self.metrics:
                mm.reset_states()
            for z in self.mixed:
                z.reset_states()
            self.metrics_dict[name].reset_states()
            return x

    class Plain(keras.Model):
        def reset(self):
            for n in self.metrics:
                n.reset_states()
            for layer in self.layers:
                layer.reset_states()
""")


@pytest.fixture(scope="module")
def containers():
    return analyse(cst.parse_module(CONTAINERS), [])


@pytest.mark.parametrize("receiver,kind", [
    ("m", values.METRIC),  # [loss_tracker] + extra
    ("k", values.UNKNOWN),  # iterating a dict gives its keys
    ("v", values.METRIC),  # table.values()
    ("g", values.METRIC),  # [] then append and += [...]
    ("x", values.UNKNOWN),  # a metric and a layer
    ("c", values.METRIC),  # list(extra)
    ("e", values.METRIC),  # for i, e in enumerate(extra)
    ("i", values.UNKNOWN),  # ... the index
    ("val", values.METRIC),  # for key, val in table.items()
    ("key", values.UNKNOWN),
    ("p", values.METRIC),  # for p, q in zip(extra, mixed)
    ("q", values.UNKNOWN),  # mixed: a metric and a layer
    ("r", values.UNKNOWN),  # pairs: unknown
    ("ex", values.METRIC),  # for ex in self.extra: [] in __init__, append in build
    ('store["x"]', values.METRIC),  # {} then store["x"] = ...
    ('made["a"]', values.METRIC),  # dict(a=...)
    ("extra[0]", values.METRIC),
    ("extra[1:]", values.UNKNOWN),  # a slice is a list
    ("t", values.METRIC),  # self.trackers = [Mean(...), Mean(...)]
    ("mm", values.METRIC),  # a property returning a list display
    ("z", values.UNKNOWN),  # a layer appended in __init__, a metric in build
    ("self.metrics_dict[name]", values.METRIC),  # a dict filled by subscript assignment, any key
    ("n", values.METRIC),  # a Keras model's own `metrics`
    ("layer", values.KERAS),  # ... and `layers`
])
def test_element_kinds_follow_containers(containers, receiver, kind):
    found = {}
    for node, scope in containers.model.index["Call"]:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "reset_states":
            found.setdefault(containers.module.code_for_node(func.value), []).append(
                containers.value_kind(func.value, scope))
    assert found[receiver] == [kind]


def test_layers_in_a_list_built_in_init_are_called_as_layers(containers):
    calls = {containers.module.code_for_node(node): (node, scope) for node, scope in containers.model.index["Call"]}
    node, scope = calls["b(x)"]
    assert containers.value_kind(node.func, scope) == values.KERAS
    assert containers.value_kind(node, scope) == values.TENSOR


ATTRIBUTES = textwrap.dedent("""
    import keras
    import tensorflow as tf

    class Net(keras.layers.Layer):
        def __init__(self, use_bias=True):
            super().__init__()
            self.use_bias = use_bias
            self.flag = True
            self.bias = None
            self.steps = 0
            self.epoch = 0
            self.total = tf.zeros(())
            self.counter = tf.Variable(0)
            self.drop = keras.layers.Dropout(0.5)
            self.a, self.b = 1, 2

        def build(self, shape):
            if self.use_bias:
                self.bias = self.add_weight(shape=(3,))
            self.w = tf.Variable(tf.zeros((3,)))

        def set_epoch(self, epoch):
            self.epoch = epoch

        @property
        def size(self):
            return 3

        def call(self, x):
            self.steps += 1
            self.total += tf.reduce_sum(x)
            self.counter.assign_add(1)
            return (self.bias, self.use_bias, self.flag, self.steps, self.total, self.counter, self.w, self.epoch,
                    self.drop, self.a, self.size)
""")


def test_instance_attribute_kinds_and_where_they_change():
    ctx = analyse(cst.parse_module(ATTRIBUTES), [])
    call = next(s for s in ctx.model.scopes if s.name == "call")
    returned = call.node.body.body[-1].body[0].value
    got = {}
    for element in returned.elements:
        text = ctx.module.code_for_node(element.value)
        fact = ctx.values.attribute(element.value, call)
        assert fact is None or fact.kind == ctx.value_kind(element.value, call)
        got[text] = None if fact is None else (fact.kind, [(b.how, b.where) for b in fact.changed_after_setup])
    assert got == {
        "self.bias": (values.VARIABLE, []),  # None in __init__, add_weight in build
        "self.use_bias": (values.UNKNOWN, []),  # a parameter's value
        "self.flag": (values.PY_SCALAR, []),
        "self.steps": (values.PY_SCALAR, [("augment", "call")]),  # += 1 keeps a number a number
        "self.total": (values.TENSOR, [("augment", "call")]),
        "self.counter": (values.VARIABLE, []),  # assign_add changes no binding
        "self.w": (values.VARIABLE, []),
        "self.epoch": (values.UNKNOWN, [("bind", "set_epoch")]),  # 0, then a parameter
        "self.drop": (values.KERAS, []),
        "self.a": (values.UNKNOWN, []),  # unpacked: not read
        "self.size": None,  # a property
    }


def test_object_flavour_and_class_follow_self_attributes_bound_once():
    ctx = analyse(cst.parse_module(ATTRIBUTES), [])
    call = next(s for s in ctx.model.scopes if s.name == "call")
    drop = cst.parse_expression("self.drop")
    assert ctx.migration.object_class(drop, call) == "keras.layers.Dropout"
    assert ctx.migration.object_class(cst.parse_expression("self.bias"), call) is None  # a method call made it
    assert ctx.migration.object_class(cst.parse_expression("self.steps"), call) is None


def test_an_attribute_bound_by_a_conditional_expression_takes_both_branches():
    ctx = analyse(cst.parse_module(textwrap.dedent("""
        import keras
        import tensorflow as tf

        class Dense(keras.layers.Layer):
            def build(self, shape):
                self.bias = self.add_weight(shape=(3,)) if self.use_bias else None
                self.gate = tf.Variable(1.0) if shape else 0.5

            def call(self, x):
                return self.bias, self.gate
    """)), [])
    call = next(s for s in ctx.model.scopes if s.name == "call")
    assert ctx.value_kind(cst.parse_expression("self.bias"), call) == values.VARIABLE
    assert ctx.value_kind(cst.parse_expression("self.gate"), call) == values.UNKNOWN  # a variable or a number


def test_object_flavour_of_container_elements_in_a_file_using_both_keras():
    ctx = analyse(cst.parse_module(textwrap.dedent("""
        import keras
        import tf_keras

        class Trainer:
            def __init__(self):
                self.trackers = []
                self.trackers.append(keras.metrics.Mean())
                self.old = {"a": tf_keras.metrics.Mean()}

            def epoch(self):
                for tracker in self.trackers:
                    pass
                return self.old["a"], self.trackers[0]

        current = [keras.metrics.Mean()] + [keras.metrics.Sum()]
        legacy = [tf_keras.metrics.Mean()]
        both = current + legacy
        for m in current:
            pass
        for n in legacy:
            pass
        for b in both:
            pass
        for i, e in enumerate(current):
            pass
        for x, y in zip(legacy, current):
            pass
        for a, z in [(1, 2)]:
            pass
    """)), [])
    migration = ctx.migration
    assert migration.module_flavour() is None  # both Keras: the file does not decide
    epoch = next(s for s in ctx.model.scopes if s.name == "epoch")
    root = ctx.model.root
    assert migration.object_flavour(cst.parse_expression("tracker"), epoch) == "keras3"
    assert migration.object_flavour(cst.parse_expression('self.old["a"]'), epoch) == "tf_keras"
    assert migration.object_flavour(cst.parse_expression("self.trackers[0]"), epoch) == "keras3"
    assert migration.object_flavour(cst.parse_expression("m"), root) == "keras3"
    assert migration.object_flavour(cst.parse_expression("n"), root) == "tf_keras"
    assert migration.object_flavour(cst.parse_expression("b"), root) is None  # both
    # unpacked from zip/enumerate: the element of the container at its place
    assert migration.object_flavour(cst.parse_expression("e"), root) == "keras3"
    assert migration.object_flavour(cst.parse_expression("x"), root) == "tf_keras"
    assert migration.object_flavour(cst.parse_expression("y"), root) == "keras3"
    assert migration.element_class(cst.parse_expression("n"), root) == "keras.metrics.Mean"
    assert migration.element_class(cst.parse_expression("x"), root) == "keras.metrics.Mean"
    assert migration.element_class(cst.parse_expression("e"), root) is None  # a Mean or a Sum
    assert migration.element_calls(cst.parse_expression("z"), root) is None  # a tuple unpacked: not followed


def test_a_rebound_zip_is_not_followed():
    ctx = analyse(cst.parse_module(textwrap.dedent("""
        import keras

        def zip(*lists):
            return lists

        layers = [keras.layers.LSTM(4) for _ in range(2)]
        for a, b in zip(layers, layers):
            pass
    """)), [])
    assert ctx.migration.element_calls(cst.parse_expression("a"), ctx.model.root) is None
