"""semantic/trace_state.py: outer names graph code reads, and rebindings after a trace."""
from __future__ import annotations

import textwrap

import libcst as cst

from tflint_gpu.engine.lint import analyse
from tflint_gpu.semantic.trace_state import CALLED, METHOD, VALUE


def facts(source: str):
    module = cst.parse_module(textwrap.dedent(source))
    ctx = analyse(module, [])
    return ctx, {scope.name: scope for scope in ctx.model.scopes}


def test_outer_reads_skip_locals_attributes_keywords_and_comprehension_names():
    ctx, scopes = facts("""
        import tensorflow as tf
        a = 1
        b = 2
        t = 3
        obj = None
        fn = None

        @tf.function
        def f(x, a=a):
            c = 1
            y = [t for t in range(2)]
            obj.method()
            fn(x)
            return tf.reduce_sum(x, axis=b) + c + a + x.b + tf.cast(x, dtype=b)
    """)
    reads = {r.node.value: r.use for r in ctx.trace_state.outer_reads(scopes["f"])}
    assert reads == {"obj": METHOD, "fn": CALLED, "b": VALUE}


def late(source: str, function: str, name: str):
    ctx, scopes = facts(source)
    scope = scopes[function]
    read = next(r for r in ctx.trace_state.outer_reads(scope) if r.node.value == name)
    found = ctx.trace_state.late_rebinding(read.binding, scope)
    return None if found is None else (found[2], found[3])


def test_a_rebinding_after_a_call_or_in_a_loop_with_one_is_late():
    source = """
        import tensorflow as tf
        t = 0.5

        @tf.function
        def f(x):
            return x * t

        t = 0.4
        f(1.0)
        t = 0.1
        f(2.0)
    """
    assert late(source, "f", "t") == ("after a call of `f`", "t = 0.1")
    # after the last call: the graph never runs again with the old value (a notebook's last cell)
    assert late(source.replace("        f(2.0)\n", ""), "f", "t") is None
    # handed on (`ds.map(fn)`): the pipeline may run later, so a rebinding after it is late
    assert late("""
        import tensorflow as tf
        t = 0.5

        def fn(x):
            return x * t

        ds = tf.data.Dataset.range(3).map(fn)
        t = 0.1
    """, "fn", "t") == ("after a call of `map(fn)`", "t = 0.1")
    assert late("""
        import tensorflow as tf
        t = 0.5
        g = tf.function(lambda x: x * t)

        def helper(x):
            return x * t

        step = tf.function(helper)
        for t in [0.5, 0.1]:
            step(1.0)
    """, "helper", "t") == ("in a loop that calls `step`", "for t in [0.5, 0.1]")


def test_rebindings_before_any_trace_and_setup_writers_are_not_late():
    assert late("""
        import tensorflow as tf
        t = 0.5
        t = 0.4

        def main():
            global t
            t = 0.3
            f(1.0)

        @tf.function
        def f(x):
            return x * t
    """, "f", "t") is None


def test_writers_that_repeat_and_functions_made_in_the_loop():
    assert late("""
        import tensorflow as tf
        t = 0.5

        def set_t(v):
            global t
            t = v

        @tf.function
        def f(x):
            return x * t

        for v in range(3):
            set_t(v)
    """, "f", "t") == ("in `set_t`, which runs repeatedly", "t = v")
    assert late("""
        import tensorflow as tf

        def run():
            for t in (1.0, 2.0):
                @tf.function
                def f(x):
                    return x * t
                f(1.0)
    """, "f", "t") is None


def pipeline(before: str = "ds = base.map(fmt)", between: str = "", after: str = "ds = base.map(fmt)",
             decorator: str = "") -> str:
    return f"""
import tensorflow as tf
R = 1

{decorator}
def fmt(x):
    return x * R

def train():
    pass

base = tf.data.Dataset.range(2)
{before}
R = 10
{between}
{after}
"""


def test_a_pipeline_made_again_after_the_rebinding_reads_the_new_value():
    # Dataset.map traces a plain function afresh at each call (TF 2.21: [0, 1] then [0, 10]).
    assert late(pipeline(), "fmt", "R") is None
    assert late(pipeline(before="ds = base.map(fmt).batch(2)", between="other = tf.ones(2)",
                         after="ds = base.shuffle(2).map(fmt).batch(2)"), "fmt", "R") is None
    assert late("""
        import tensorflow as tf
        S = 1

        def fmt(x):
            return x * S

        base = tf.data.Dataset.range(2)
        for S in (1, 10):
            ds = base.map(fmt)
            for x in ds:
                pass
    """, "fmt", "S") is None
    stale = ("after a call of `map(fmt)`", "R = 10")
    # the old pipeline is read, or may be (a same-module function), before it is made again
    assert late(pipeline(between="n = ds.cardinality()"), "fmt", "R") == stale
    assert late(pipeline(between="train()"), "fmt", "R") == stale
    # made again only under a condition, or under another name, or not at all
    assert late(pipeline(after="if R:\n    ds = base.map(fmt)"), "fmt", "R") == stale
    assert late(pipeline(after="ds2 = base.map(fmt)"), "fmt", "R") == stale
    assert late(pipeline(after=""), "fmt", "R") == stale
    # a tf.function keeps its traces: the new pipeline reuses the old one
    assert late(pipeline(decorator="@tf.function"), "fmt", "R") == stale


ATTRIBUTES = """
    import keras
    import tensorflow as tf

    class Trainer:
        def __init__(self):
            self.steps = 0
            self.limit = 2
            self.counter = tf.Variable(0)
            self.dense = keras.layers.Dense(1)

        @tf.function
        def step(self, x):
            self.seen = 1
            self.counter.assign_add(1)
            def inner():
                return self.limit
            return self.dense(x) * self.steps + self.steps + inner()

        def run(self, x):
            self.steps += 1
            return self.step(x)

        def setup(self):
            self.limit += 1

    class Net(keras.Model):
        def __init__(self):
            super().__init__()
            self.epochs_seen = 0

        def train_step(self, data):
            return {"e": tf.constant(self.epochs_seen)}

    class Bump(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            self.model.epochs_seen += 1
"""


def test_attribute_reads_of_graph_code_and_their_eager_changes():
    ctx, scopes = facts(ATTRIBUTES)
    step = scopes["step"]
    reads = {r.node.attr.value: r.use for r in ctx.trace_state.attribute_reads(step)}
    assert reads == {"counter": METHOD, "dense": CALLED, "steps": VALUE}  # not the target self.seen
    inner = {r.node.attr.value: r.use for r in ctx.trace_state.attribute_reads(scopes["inner"])}
    assert inner == {"limit": VALUE}  # self of the enclosing method

    def change(function, attr):
        read = next(r for r in ctx.trace_state.attribute_reads(scopes[function]) if r.node.attr.value == attr)
        found = ctx.trace_state.eager_change(ctx.values.attribute(read.node, scopes[function]), scopes[function])
        return None if found is None else (found[0].where, found[1])

    assert change("step", "steps") == ("run", "in `run`, which calls `step(x)`")
    assert change("inner", "limit") is None  # bumped in a method that runs no graph and no loop
    assert change("train_step", "epochs_seen") == ("on_epoch_end", "in `on_epoch_end`, which Keras runs repeatedly")
