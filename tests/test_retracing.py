"""semantic/retracing.py: calls of tf.functions, per-iteration Python values,
tf.function objects made repeatedly, recursion."""
from __future__ import annotations

import textwrap

import libcst as cst

from tflint_gpu.semantic.context import GraphAnalysis
from tflint_gpu.semantic.model import build_model
from tflint_gpu.semantic.names import Resolver
from tflint_gpu.semantic.retracing import Retracing
from tflint_gpu.semantic.tensors import TensorInference
from tflint_gpu.semantic.values import ValueKinds


def facts(source: str):
    module = cst.parse_module(textwrap.dedent(source))
    model = build_model(module, ["Call", "FunctionDef"])
    resolver = Resolver()
    graphs = GraphAnalysis(model, resolver)
    graphs.run()
    values = ValueKinds(resolver, graphs, TensorInference(resolver, graphs))
    return Retracing(model, graphs, values), model


def calls(model, prefix: str):
    return [(n, s) for n, s in model.index["Call"] if model.module.code_for_node(n).startswith(prefix)]


def test_what_a_call_calls():
    retracing, model = facts("""
        import tensorflow as tf

        @tf.function
        def deco(x): return x

        @tf.function(jit_compile=True, input_signature=[tf.TensorSpec([], tf.int32)])
        def signed(x): return x

        def plain(x): return x
        wrapped = tf.function(plain)

        def selfwrap(x): return x
        selfwrap = tf.function(selfwrap)

        class T:
            def __init__(self):
                self.attr = tf.function(self._f)
            def _f(self, x): return x
            @tf.function
            def method(self, x): return x
            def run(self, x):
                self.method(x); self.attr(x); self._f(x)

        deco(1); signed(1); plain(1); wrapped(1); selfwrap(1); len(1)
    """)
    got = {}
    for call, scope in model.index["Call"]:
        text = model.module.code_for_node(call.func)
        ref = retracing.called_tf_function(call, scope)
        got[text] = None if ref is None else (ref.name, ref.input_signature)
    assert got["deco"] == ("deco", False)
    assert got["signed"] == ("signed", True)
    assert got["plain"] is None  # the plain function, not its wrapper
    assert got["wrapped"] == ("wrapped", False)
    assert got["selfwrap"] == ("selfwrap", False)
    assert got["self.method"] == ("self.method", False)
    assert got["self.attr"] == ("self.attr", False)
    assert got["self._f"] is None
    assert got["len"] is None


def per_iteration(source: str):
    """{argument text: bool} for the arguments of every call ``probe(...)``."""
    retracing, model = facts(source)
    result = {}
    for call, scope in calls(model, "probe("):
        for arg in call.args:
            result[model.module.code_for_node(arg.value)] = retracing.per_iteration(arg.value, scope, call) is not None
    return result


def test_per_iteration_values():
    got = per_iteration("""
        import tensorflow as tf

        def train(x, epochs, ds, cfg, names):
            step = 0
            k = tf.constant(0)
            for epoch in range(epochs):
                lr = 0.1 * 0.5 ** epoch
                scaled = cfg.lr * epoch
                for i, batch in enumerate(ds):
                    probe(epoch, lr, i, batch, epoch + 1, float(epoch), f"e{epoch}", [epoch, 2], {"e": epoch},
                          step, epoch > 3, not epoch, 1, "a", scaled, k, cfg.n, epochs, -epoch, str(epochs))
                    step += 1
                    k += 1
            for name in names:
                probe(name)
            for c in [0.1, 0.2]:
                probe(c)
    """)
    assert got == {
        "epoch": True, "lr": True, "i": True, "batch": False, "epoch + 1": True, "float(epoch)": True,
        'f"e{epoch}"': True, "[epoch, 2]": True, '{"e": epoch}': True, "step": True, "epoch > 3": False,
        "not epoch": False, "1": False, '"a"': False, "scaled": False, "k": False, "cfg.n": False,
        "epochs": False, "-epoch": True, "str(epochs)": False, "name": False, "c": False,
    }


def test_per_iteration_needs_the_loop_around_the_call():
    got = per_iteration("""
        def f(x, n):
            for i in range(n):
                pass
            probe(i)
            j = 0
            while j < n:
                probe(j)
                j = j + 1
            m = 0
            for _ in range(n):
                m = tf_thing()
                probe(m)
            v = [probe(t) for t in range(n)]
    """)
    assert got == {"i": False, "j": True, "m": False, "t": True}


def test_rebinding_to_an_unknown_value_is_not_a_python_value():
    got = per_iteration("""
        import tensorflow as tf

        def f(x, n):
            for i in range(n):
                i = tf.constant(i)
                probe(i)
    """)
    assert got == {"i": False}


def created(source: str):
    retracing, model = facts(source)
    result = {}
    for node, scope in model.index["FunctionDef"] + model.index["Call"]:
        name = retracing.created_tf_function(node, scope)
        if name is not None:
            result[name or model.module.code_for_node(node)] = len(retracing.calls_of_created(node, scope))
    return result


def test_created_tf_functions_and_their_calls():
    got = created("""
        import tensorflow as tf

        def body(x): return x

        def run(x):
            @tf.function
            def inner(v): return v
            inner(x); inner(x)
            g = tf.function(body)
            g(x)
            tf.function(body)(x)
            h = tf.function(body)
            return h

        @tf.function(jit_compile=True)
        def top(x): return x
    """)
    assert got == {"inner": 2, "g": 1, "tf.function(body)": 1, "h": 0, "top": 0}


def test_recursive_calls():
    retracing, model = facts("""
        import tensorflow as tf

        @tf.function
        def fact(n):
            return n * fact(n - 1)

        def g(n):
            return g(n - 1)
        fast = tf.function(g)

        @tf.function
        def ping(n):
            return pong(n)

        def pong(n):
            return ping(n - 1)

        @tf.function
        def calls_helper(n):
            return helper(n)

        def helper(n):
            return helper(n - 1)
    """)
    got = {}
    for scope in model.scopes:
        if scope.graph is not None and scope.graph.kind == "tf.function":
            found = retracing.recursive_call(scope)
            got[scope.name] = None if found is None else model.module.code_for_node(found[0])
    assert got == {"fact": "fact(n - 1)", "g": None, "ping": "ping(n - 1)", "calls_helper": None}


def test_the_binding_that_reaches_the_call_decides():
    got = per_iteration("""
        def f(x, n):
            for epoch in range(n):
                lr = 0.1 * epoch
                probe(lr)
            for lr in [0.1, 0.2]:
                pass
    """)
    assert got == {"lr": True}


def test_a_tf_function_made_in_a_loop_that_closes_over_a_loop_value():
    import libcst as cst

    from tflint_gpu.engine.lint import analyse

    source = textwrap.dedent("""
        import tensorflow as tf

        def run(layers, w, xs):
            for layer in layers:
                scale = layer * 2
                @tf.function
                def by_layer(x):
                    return x * scale
                step = tf.function(lambda x: x @ w)
                step(xs)
                by_layer(xs)
    """)
    ctx = analyse(cst.parse_module(source), [])
    scope = next(s for s in ctx.model.scopes if s.name == "run")
    facts = ctx.retracing
    loop = facts.loops_around(next(c for c in scope.calls if ctx.module.code_for_node(c.func) == "step"), scope)[0]
    by_layer = next(s.node for s in ctx.model.scopes if s.name == "by_layer")
    wrapped = next(c for c in scope.calls if isinstance(c.func, cst.Attribute) and c.func.attr.value == "function")
    assert facts.captured_from_loop(by_layer, scope, loop) == "scale"
    assert facts.captured_from_loop(wrapped, scope, loop) is None  # `w` is a parameter: the same every turn
