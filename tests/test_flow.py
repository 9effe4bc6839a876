"""semantic/flow.py: where a value comes from through parameters, attributes, method returns and containers."""
from __future__ import annotations

import textwrap

import libcst as cst

from tflint_gpu.engine.lint import analyse

CODE = cst.Module(body=[]).code_for_node


def _ctx(source: str):
    module = cst.parse_module(textwrap.dedent(source))
    return analyse(module, [])


def _read(ctx, function: str, name: str):
    """The sources of the last read of ``name`` (a Name, or ``self.x``, or ``x["k"]`` text) in ``function``."""
    scope = next(s for s in ctx.model.scopes if s.name == function)
    wanted = cst.parse_expression(name)
    found = None
    for node in _walk(scope.node):
        if isinstance(node, cst.BaseExpression) and node.deep_equals(wanted):
            found = node
    assert found is not None, name
    where = ctx.model.scope_of_node.get(found) or scope
    sources = ctx.graphs.flow.sources(found, scope)
    return sorted(CODE(e) for e, _ in sources.found), sources.unknown


def _walk(node):
    yield node
    for child in node.children:
        yield from _walk(child)


def test_a_parameter_takes_what_every_call_in_the_module_passes():
    ctx = _ctx("""
        import tensorflow as tf

        def train(model, optimizer, epochs=3):
            return model, optimizer, epochs

        def main():
            opt = tf.keras.optimizers.Adam()
            train(tf.keras.Sequential(), opt)
            train(tf.keras.Model(), optimizer=tf.keras.optimizers.SGD(), epochs=5)

        def elsewhere(x):
            return x
    """)
    assert _read(ctx, "train", "optimizer") == (["tf.keras.optimizers.Adam()", "tf.keras.optimizers.SGD()"], False)
    assert _read(ctx, "train", "epochs") == (["3", "5"], False)  # the default where a call leaves it
    assert _read(ctx, "elsewhere", "x") == ([], True)  # no call in the module: its callers are elsewhere


def test_a_call_that_unpacks_arguments_tells_nothing():
    ctx = _ctx("""
        def step(x):
            return x

        step(1)
        step(*[2])
    """)
    assert _read(ctx, "step", "x") == ([], True)


def test_a_method_parameter_takes_the_calls_of_subclasses_that_inherit_it():
    ctx = _ctx("""
        import tensorflow as tf

        class Base:
            def stack(self, image):
                return image

        class Sub(Base):
            def build(self):
                return self.stack(tf.keras.Input((3,)))
    """)
    assert _read(ctx, "stack", "image") == (["tf.keras.Input((3,))"], False)


def test_an_attribute_is_every_binding_of_the_family_and_a_method_return_every_override():
    ctx = _ctx("""
        import tensorflow as tf

        class Base:
            def __init__(self, optimizer, mixed):
                self.model = None
                self.model = self.build_model()
                self.opt = optimizer
                if mixed:
                    self.opt = tf.keras.mixed_precision.LossScaleOptimizer(self.opt)

            def build_model(self):
                \"\"\"Each subclass builds it.\"\"\"

            def use(self):
                return self.model, self.opt, self.never

        class A(Base):
            def build_model(self):
                return tf.keras.Model(name="a")

        class B(Base):
            def build_model(self):
                if self.x:
                    return tf.keras.Sequential()
    """)
    model = _read(ctx, "use", "self.model")
    # None (the first binding; B's fall-through); the abstract def gives nothing
    assert model == (["None", "None", "tf.keras.Model(name=\"a\")", "tf.keras.Sequential()"], False)
    opt = _read(ctx, "use", "self.opt")
    assert opt == (["tf.keras.mixed_precision.LossScaleOptimizer(self.opt)"], True)  # and a parameter
    assert _read(ctx, "use", "self.never") == ([], True)


def test_an_item_of_a_dict_or_list_is_the_value_stored_at_its_key():
    ctx = _ctx("""
        import tensorflow as tf

        class Net:
            def inputs(self):
                image = tf.keras.Input((3,))
                if self.labeled:
                    return dict(image=image, label=tf.keras.Input((1,)))
                return {"image": image}

            def build(self):
                self._inputs = self.inputs()
                self._outputs = {"a": 1}
                self._outputs["b"] = tf.zeros(3)
                pair = [tf.ones(1), tf.zeros(1)]
                return self._inputs["image"], self._inputs["label"], self._outputs["b"], pair[-1], pair[k]
    """)
    assert _read(ctx, "build", 'self._inputs["image"]') == (["tf.keras.Input((3,))"], False)
    assert _read(ctx, "build", 'self._inputs["label"]') == (["tf.keras.Input((1,))"], False)
    assert _read(ctx, "build", 'self._outputs["b"]') == (["tf.zeros(3)"], False)
    assert _read(ctx, "build", "pair[-1]") == (["tf.zeros(1)"], False)
    assert _read(ctx, "build", "pair[k]") == (["pair[k]"], False)  # a key it cannot read: itself


def test_both_branches_of_a_conditional_expression_and_cycles_end():
    ctx = _ctx("""
        import tensorflow as tf

        def pick(flag):
            model = tf.keras.Sequential() if flag else load()
            return model

        def load():
            return load()

        pick(True)
    """)
    assert _read(ctx, "pick", "model") == (["tf.keras.Sequential()"], True)  # load() returns itself: unknown


def test_a_name_unpacked_from_a_factory_takes_the_element_at_its_place():
    ctx = _ctx("""
        import tensorflow as tf

        def build():
            if flag:
                return tf.keras.Sequential(), tf.keras.optimizers.Adam()
            return tf.keras.Model(), make_opt()

        def main():
            model, opt = build()
            (a, b), c = (tf.ones(1), tf.zeros(1)), 3
            first, *rest = build()
            *others, last = build()
            return model, opt, b, c, first, last
    """)
    assert _read(ctx, "main", "model") == (["tf.keras.Model()", "tf.keras.Sequential()"], False)
    assert _read(ctx, "main", "opt") == (["make_opt()", "tf.keras.optimizers.Adam()"], False)
    assert _read(ctx, "main", "b") == (["tf.zeros(1)"], False)
    assert _read(ctx, "main", "c") == (["3"], False)
    assert _read(ctx, "main", "first") == (["tf.keras.Model()", "tf.keras.Sequential()"], False)
    assert _read(ctx, "main", "last") == ([], True)  # after a starred target: not followed
