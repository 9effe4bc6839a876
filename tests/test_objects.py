"""semantic/objects.py and GraphAnalysis.reach: calls into the module through its own objects."""
from __future__ import annotations

import textwrap

import libcst as cst

from tflint_gpu.engine.lint import analyse


def context(source: str):
    module = cst.parse_module(textwrap.dedent(source).lstrip("\n"))
    return analyse(module, [])


def scope_named(ctx, qualified: str):
    for scope in ctx.model.scopes:
        cls = scope.enclosing_class
        name = f"{cls.name}.{scope.name}" if cls is not None else scope.name
        if name == qualified:
            return scope
    raise KeyError(qualified)


def reached(ctx, qualified: str):
    scopes, unresolved = ctx.graphs.reach(scope_named(ctx, qualified), through_arguments=True,
                                          through_objects=True)
    names = []
    for scope in scopes[1:]:
        cls = scope.enclosing_class
        names.append(f"{cls.name}.{scope.name}" if cls is not None else scope.name)
    return names, [ctx.module.code_for_node(call) for call, _ in unresolved]


SOURCE = """
    import tensorflow as tf

    class Cell:
        def get_initial_state(self, x):
            return self.zeros(x)

        def zeros(self, x):
            return x * 0.0

    class FastCell(Cell):
        def get_initial_state(self, x):
            return x

    class Decoder:
        def __init__(self, cell=None):
            self.cell = Cell()
            self.dense = tf.keras.layers.Dense(2)

    class Block(tf.keras.layers.Layer):
        def call(self, x):
            return x

    class Helper:
        def __call__(self, x):
            return x

    class Model(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.decoder = Decoder()
            self.block = Block()
            self.fn = scale

        def start(self, x):
            a = self.decoder.cell.get_initial_state(x)
            b = self.block(x) + self.fn(x) + self.decoder.dense(x)
            c = Helper()(x) + self.add_weight("w", ())
            return tf.while_loop(lambda i: i < 3, self.step, [a + b + c])

        def step(self, i):
            return super().step(i)

    class Plain:
        def __init__(self):
            setattr(self, "hook", scale)

        def run(self, x):
            return self.hook(x) + self.missing(x)

    def scale(x):
        return x * 2.0

    def unknown_receiver(decoder, x):
        return decoder.cell.get_initial_state(x)
"""


def test_reach_follows_attribute_chains_layers_callables_and_method_references():
    ctx = context(SOURCE)
    names, unresolved = reached(ctx, "Model.start")
    assert set(names) == {
        "Cell.get_initial_state", "FastCell.get_initial_state",  # the override of a subclass may run too
        "Cell.zeros",  # self.zeros() inside the callee
        "Block.call",  # a layer of the file called: Keras calls its call
        "scale",  # a function held in an attribute
        "Helper.__call__",
        "<lambda>", "Model.step",  # handed to tf.while_loop
    }
    # self.add_weight, self.decoder.dense(x), super().step: library code (Keras bases), not the module's.
    assert unresolved == []


def test_a_method_the_module_cannot_hold_is_unresolved():
    ctx = context(SOURCE)
    names, unresolved = reached(ctx, "Plain.run")
    assert names == [] and sorted(unresolved) == ["self.hook(x)", "self.missing(x)"]


def test_a_receiver_the_file_cannot_tell_reaches_every_method_of_that_name():
    ctx = context(SOURCE)
    names, unresolved = reached(ctx, "unknown_receiver")
    assert set(names) == {"Cell.get_initial_state", "FastCell.get_initial_state", "Cell.zeros"}
    assert unresolved == []


def test_without_through_objects_reach_is_what_it_was():
    ctx = context(SOURCE)
    start = scope_named(ctx, "Model.start")
    scopes = ctx.graphs.reachable(start, through_arguments=True)
    assert [s.name for s in scopes] == ["start", "<lambda>", "__call__"]  # Helper()(x): known before


def test_object_kind_and_the_calls_that_made_it():
    ctx = context(SOURCE + """
    table = tf.lookup.StaticHashTable(init, -1)
    decoder = Decoder()

    def probe(param):
        return table, decoder.cell, param, Model, decoder.dense
    """)
    objects = ctx.graphs.objects
    probe = scope_named(ctx, "probe")
    returned = probe.node.body.body[0].body[0].value.elements
    kinds = [objects.kind(e.value, probe) for e in returned]
    assert [ctx.module.code_for_node(c.func) for c, _ in kinds[0].calls] == ["tf.lookup.StaticHashTable"]
    assert kinds[0].other and not kinds[0].instances
    assert [c.name for c in kinds[1].instances] == ["Cell"]
    assert kinds[2].unknown
    assert [c.name for c in kinds[3].classes] == ["Model"]
    assert kinds[4].other and [ctx.module.code_for_node(c.func) for c, _ in kinds[4].calls] == \
        ["tf.keras.layers.Dense"]


def test_instance_attributes_are_one_fact_with_where_and_how():
    from tflint_gpu.semantic.objects import ADD, AUGMENT, BIND, EXTEND, UNREADABLE

    ctx = context("""
        import keras

        class Base(keras.layers.Layer):
            scale = 2.0

            def __init__(self):
                super().__init__()
                self.steps = 0
                self.blocks = []
                self.table = {}
                self.a, self.b = 1, 2

        class Net(Base):
            def build(self, shape):
                self.bias = self.add_weight(shape=(3,))
                self.blocks.append(keras.layers.Dense(2))
                self.blocks += [keras.layers.Dense(3)]
                self.blocks.extend(more)
                self.table["x"] = keras.layers.Dense(1)

            def call(self, x):
                def inner():
                    self.late = 1
                self.steps += 1
                return x
    """)
    objects = ctx.graphs.objects
    net = scope_named(ctx, "Net")
    base = scope_named(ctx, "Base")
    own = objects.own_attributes(net)
    assert [(b.how, b.where) for b in own["bias"]] == [(BIND, "build")]
    assert [(b.how, b.where) for b in own["late"]] == [(BIND, "call")]  # nested in a method: still self
    assert sorted((b.how, b.where) for b in own["blocks"]) == [(ADD, "build"), (EXTEND, "build"), (EXTEND, "build")]
    assert [(b.how, b.where) for b in own["table"]] == [(ADD, "build")]
    assert [(b.how, b.where) for b in own["steps"]] == [(AUGMENT, "call")]
    # through the bases: the class-level value, __init__'s binding, then the subclass's own
    assert [(b.how, b.where) for b in objects.attribute_bindings(net, "steps")] == [(AUGMENT, "call"), (BIND, "__init__")]
    assert [(b.how, b.where) for b in objects.attribute_bindings(net, "scale")] == [(BIND, "<class>")]
    assert objects.attribute_bindings(base, "a")[0].value is UNREADABLE
    # the family view (calls): a base sees its subclasses' bindings, plain binds only
    assert [where.name for _, where in objects.attribute_values(base, "bias")] == ["build"]
    assert objects.attribute_bindings(base, "bias") == []


def test_container_additions_of_a_name():
    from tflint_gpu.semantic.objects import ADD, EXTEND

    ctx = context("""
        ms = []
        ms.append(a)
        ms.insert(0, b)
        ms.extend(cs)
        ms += [d]
        table = {}
        table["k"] = e
        other.append(f)
    """)
    found = ctx.graphs.objects.container_additions(ctx.model.root, "ms")
    assert sorted((how, ctx.module.code_for_node(value)) for how, value, _ in found) == [
        (ADD, "a"), (ADD, "b"), (EXTEND, "[d]"), (EXTEND, "cs")]
    assert [(how, ctx.module.code_for_node(value)) for how, value, _ in
            ctx.graphs.objects.container_additions(ctx.model.root, "table")] == [(ADD, "e")]


def test_an_attribute_bound_from_a_constructor_parameter_is_what_the_constructions_pass():
    ctx = context("""
    class Actor:
        def train(self, x):
            return x

    class Worker:
        def __init__(self, env, actor, other=None):
            self.actor = actor
            self.other = other

        def run(self):
            return self.actor.train(1), self.other

    class Agent:
        def __init__(self):
            self.actor = Actor()

        def start(self, env):
            return [Worker(env, self.actor), Worker(env, actor=Actor(), other=env)]

    class Lonely:
        def __init__(self, thing):
            self.thing = thing

        def use(self):
            return self.thing
    """)
    objects = ctx.graphs.objects
    run = scope_named(ctx, "Worker.run")
    actor, other = [e.value for e in run.node.body.body[0].body[0].value.elements]
    assert [c.name for c in objects.kind(actor.func.value, run).instances] == ["Actor"]  # both sites pass one
    assert objects.kind(other, run).unknown  # a default taken at one site, a parameter at the other
    use = scope_named(ctx, "Lonely.use")
    assert objects.kind(use.node.body.body[0].body[0].value, use).unknown  # never constructed here


def test_instance_uses_are_the_calls_on_a_class_s_objects_parameters_through_the_module_s_calls():
    ctx = context("""
    class Net:
        def step(self, x):
            return self(x)

    class Other:
        pass

    def train(model, data, tag=None):
        model.step(data)
        model.save_weights("m.weights.h5")

    def unknown(thing):
        thing.save_weights("t.weights.h5")

    net = Net()
    net.summary()
    train(net, [1])
    train(model=net, data=[2])
    unknown(net)
    unknown(Other())
    unknown(load())
    """)
    objects = ctx.graphs.objects
    classes = {s.name: s for s in ctx.model.scopes if s.kind == "class"}
    code = ctx.module.code_for_node
    uses = {key: [code(c) for c in calls] for key, calls in objects.instance_uses(classes["Net"]).items()}
    # objects that MAY be a Net: `thing` is a Net at one call of `unknown` (an Other, and what load() gives, at others)
    assert uses == {None: ["self(x)"], "step": ["model.step(data)"],
                    "save_weights": ['model.save_weights("m.weights.h5")', 'thing.save_weights("t.weights.h5")'],
                    "summary": ["net.summary()"]}
    assert {key: [code(c) for c in calls] for key, calls in objects.instance_uses(classes["Other"]).items()} == \
        {"save_weights": ['thing.save_weights("t.weights.h5")']}


def test_calls_named_are_every_call_of_a_method_name_on_any_receiver():
    ctx = context("""
    class Base:
        def loss(self, x):
            return x

    class Child(Base):
        def loss(self, x):
            return super().loss(x) + Base.loss(self, x)

    def f(m):
        m.loss(1)
        loss(2)
        m.loss
    """)
    code = ctx.module.code_for_node
    assert [code(c) for c, _ in ctx.graphs.objects.calls_named("loss")] == \
        ["super().loss(x)", "Base.loss(self, x)", "m.loss(1)"]
    assert ctx.graphs.objects.calls_named("missing") == []


def test_only_instances_of_a_family():
    ctx = context("""
    class A:
        pass

    class B(A):
        pass

    a = A()
    b = B()
    either = A() if x else 1

    def f(p):
        return p
    """)
    classes = {s.name: s for s in ctx.model.scopes if s.kind == "class"}
    root, objects = ctx.model.root, ctx.graphs.objects
    family = [classes["A"], classes["B"]]
    assert objects.only_instances_of(cst.parse_expression("a"), root, family)
    assert objects.only_instances_of(cst.parse_expression("b"), root, family)
    assert not objects.only_instances_of(cst.parse_expression("b"), root, [classes["A"]])
    assert not objects.only_instances_of(cst.parse_expression("either"), root, family)  # or an int
    assert not objects.only_instances_of(cst.parse_expression("A"), root, family)  # the class itself
