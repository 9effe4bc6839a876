"""semantic/run_once.py: code in graph functions that runs once per object or
program, not per call (lazy blocks, setup functions, per-call scratch state)."""
from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from tflint_gpu.semantic.context import GraphAnalysis
from tflint_gpu.semantic.model import build_model
from tflint_gpu.semantic.names import Resolver
from tflint_gpu.semantic.run_once import (
    CONTAINER,
    NONE,
    SCALAR,
    RunOnce,
    outlives_call,
    python_value_kind,
    state_key,
    unset_state,
)


class Facts:
    """A module as the engine sees it, with its RunOnce and ways to find things."""

    def __init__(self, source: str) -> None:
        self.module = cst.parse_module(textwrap.dedent(source))
        self.model = build_model(self.module, ["Call"])
        self.graphs = GraphAnalysis(self.model, Resolver())
        self.graphs.run()
        self.once = RunOnce(self.model, self.graphs)

    def function(self, name: str):
        [scope] = [s for s in self.model.scopes if s.is_function and s.name == name]
        return scope

    def probes(self):
        """{name: (call, innermost function)} for every call ``probe_<name>()``."""
        found = {}
        for call, scope in self.model.index["Call"]:
            if isinstance(call.func, cst.Name) and call.func.value.startswith("probe_"):
                found[call.func.value[len("probe_"):]] = (call, scope.function())
        return found

    def lazy(self):
        """{probe name: lies in a lazy block of its function}."""
        return {name: self.once.in_lazy_block(call, function) for name, (call, function) in self.probes().items()}

    def code(self, node) -> str:
        return self.module.code_for_node(node).strip()


LAYER = """
    import keras

    class Layer(keras.layers.Layer):
        def __init__(self):
            super().__init__()
            self.a = False
            self.b = None
            self.c = 0
            self.e = 0

        def call(self, x):
{body}
            return x
"""


def layer(body: str) -> Facts:
    return Facts(LAYER.format(body=textwrap.indent(textwrap.dedent(body), " " * 12)))


def test_each_lazy_test_form_on_state_its_block_sets():
    facts = layer("""
        if not self.a:
            self.a = True
            probe_not()
        if self.b is None:
            self.b = keras.layers.Dense(2)
            probe_is_none()
        else:
            probe_else()
        if self.c == 0:
            self.c += 1
            probe_equals_literal()
        if self.b is False:
            self.b, other = 1, 2
            probe_is_false()
        if not hasattr(self, "d"):
            self.d = 1
            probe_hasattr()
        probe_after()
    """)
    assert facts.lazy() == {"not": True, "is_none": True, "else": False, "equals_literal": True,
                            "is_false": True, "hasattr": True, "after": False}
    call = facts.function("call")
    assert [facts.code(block.test) for block in facts.once.lazy_blocks(call)] == [
        "not self.a", "self.b is None", "self.c == 0", "self.b is False", 'not hasattr(self, "d")']


def test_a_conditional_expression_that_keeps_the_state_otherwise_is_lazy():
    facts = layer("""
        self.b = probe_made() if self.b is None else self.b
        self.c = probe_other() if self.b is None else self.c
        self.e = probe_kept_other() if self.e == 0 else self.b
        flag = probe_local() if x is None else x
    """)
    assert facts.lazy() == {"made": True, "other": False, "kept_other": False, "local": False}


def test_a_block_that_fills_an_empty_container_it_tests_is_lazy():
    # issue 35: `if not state: state.append(tf.Variable(...))` in a tf.function leaves one variable
    # after 3 calls (TF 2.21, run by hand): the create-once idiom
    facts = layer("""
        if not self.slots:
            self.slots.append(probe_appended())
        if not self.cache:
            self.cache["w"] = probe_stored()
        if not self.seen:
            self.other.append(1)
            probe_fills_another()
        local = []
        if not local:
            local.append(probe_local_list())
    """)
    assert facts.lazy() == {"appended": True, "stored": True, "fills_another": False, "local_list": False}


def test_look_alike_guards_are_not_lazy():
    facts = layer("""
        if self.e < 10:
            self.e += 1
            probe_not_an_unset_test()
        if not self.a:
            self.other = 1
            probe_block_does_not_set_its_flag()
        flag = None
        if flag is None:
            flag = 1
            probe_local_flag()
        if self.c == x:
            self.c = 1
            probe_compared_with_a_value()
        if not self.a or x:
            self.a = True
            probe_compound_test()
    """)
    assert facts.lazy() == {"not_an_unset_test": False, "block_does_not_set_its_flag": False,
                            "local_flag": False, "compared_with_a_value": False, "compound_test": False}


def test_lazy_block_whose_flag_a_same_module_helper_sets():
    facts = Facts("""
        import keras

        class Attention(keras.layers.Layer):
            def _build_from_signature(self, query):
                self._deeper()

            def _deeper(self):
                self._built_from_signature = True

            def _does_nothing(self):
                pass

            def build(self, shape):
                pass

            def call(self, query):
                if not self._built_from_signature:
                    self._build_from_signature(query)
                    probe_helper_sets()
                if not self._other:
                    self._does_nothing()
                    probe_helper_does_not_set()
                if not self.built:
                    self.build(query)
                    probe_keras_build()
                return query
    """)
    assert facts.lazy() == {"helper_sets": True, "helper_does_not_set": False, "keras_build": True}


def test_module_and_closure_state_outlives_the_call_a_graph_local_does_not():
    facts = Facts("""
        import tensorflow as tf

        cache = None
        state = {"ready": False}

        @tf.function
        def f(x):
            global cache
            if cache is None:
                cache = x
                probe_global()
            if not state["ready"]:
                state["ready"] = True
                probe_module_dict_item()
            return x

        def make():
            mod = [None]

            @tf.function
            def g(x):
                if mod[0] is None:
                    mod[0] = tf.Module()
                    probe_closure_cell()
                local = [None]
                if local[0] is None:
                    local[0] = 1
                    probe_graph_local()
                return x
            return g
    """)
    assert facts.lazy() == {"global": True, "module_dict_item": True, "closure_cell": True, "graph_local": False}
    g = facts.function("g")
    assert outlives_call("mod[0]", g) and not outlives_call("local[0]", g)


def test_setup_functions_build_and_helpers_only_it_or_lazy_blocks_call():
    facts = Facts("""
        import keras

        class Nested(keras.losses.Loss):
            def _add(self, y):
                def inner():
                    pass
                inner()

            def _build_nested(self, y, depth):
                if depth > 0:
                    self._build_nested(y, depth - 1)
                self._add(y)

            def _shared(self, y):
                pass

            def _lazy_helper(self, y):
                self.ready = True

            def build(self, y_true):
                self._build_nested(y_true, 2)
                self._shared(y_true)

            def call(self, y_true, y_pred):
                if not self.built:
                    self.build(y_true)
                if not self.ready:
                    self._lazy_helper(y_true)
                self._shared(y_pred)
                return y_pred - y_true

        def unused(x):
            pass
    """)
    setup = {name: facts.once.is_setup(facts.function(name))
             for name in ("_add", "inner", "_build_nested", "_shared", "_lazy_helper", "build", "call", "unused")}
    assert setup == {"_add": True, "inner": True, "_build_nested": True, "_shared": False,
                     "_lazy_helper": True, "build": True, "call": False, "unused": False}


def test_runs_once_is_setup_or_lazy():
    facts = Facts("""
        import keras

        class Log(keras.layers.Layer):
            def _remember(self, x):
                probe_helper_of_build_and_call()

            def build(self, shape):
                self._remember(shape)
                probe_in_build()

            def call(self, x):
                if not self.built:
                    self.build(x.shape)
                self._remember(x)
                if not self.frozen:
                    self.frozen = True
                    probe_lazy()
                probe_per_call()
                return x
    """)
    got = {name: facts.once.runs_once(call, function) for name, (call, function) in facts.probes().items()}
    assert got == {"helper_of_build_and_call": False, "in_build": True, "lazy": True, "per_call": False}


@pytest.mark.parametrize("body,attr,expected", [
    ("self.endpoints = {}\nself.endpoints['a'] = x", "endpoints", True),
    ("self.features = []\nself.features.append(x)", "features", True),
    ("self.shapes = dict()\nself.shapes.update(a=1)", "shapes", True),
    ("self.total = 0; self.total += 1", "total", True),
    ("y = 1\nself.features = []", "features", True),
    ("if x:\n    self.features = []\nself.features.append(x)", "features", False),
    ("self.features.append(x)\nself.features = []", "features", False),
    ("self.features = [f for f in self.features]", "features", False),
    ("self.features = make()", "features", False),
    ("for i in x:\n    self.features = []", "features", False),
    ("def inner():\n    return self.features\nself.features = []", "features", False),
    ("self.other = []", "features", False),
], ids=["dict", "list", "dict-call", "number-one-line", "after-other-statements", "under-an-if", "used-before",
        "reads-itself", "not-a-fresh-value", "in-a-loop", "mentioned-in-a-nested-def", "not-set"])
def test_per_call_scratch(body, attr, expected):
    facts = layer(body)
    assert facts.once.per_call_scratch(facts.function("call"), "self", attr) is expected


def test_per_call_scratch_needs_the_builtin_container():
    facts = Facts("""
        import keras

        class L(keras.layers.Layer):
            def call(self, x, list=tuple):
                self.features = list()
                return x
    """)
    assert not facts.once.per_call_scratch(facts.function("call"), "self", "features")


def test_state_keys_and_unset_tests():
    facts = Facts("""
        class A:
            def m(this, cache, mod, k):
                this.a
                cache
                mod[0]
                mod["k"]
                mod[k]
                mod[k + 1]
                f().x
                not this.built
                this.w is None
                this.n == 0
                not hasattr(this, "w")
                not hasattr(cache, "w")
                this.n < 0
                this.n is x
    """)
    function = facts.function("m")
    exprs = [s.body[0].value for s in function.node.body.body]
    keys = [state_key(e, function, facts.module) for e in exprs[:7]]
    assert keys == ["<self>.a", "cache", "mod[0]", 'mod["k"]', "mod[k]", None, None]
    tests = [unset_state(e, function, facts.module) for e in exprs[7:]]
    assert tests == ["<self>.built", "<self>.w", "<self>.n", "<self>.w", "cache.w", None, None]


@pytest.mark.parametrize("value,kind", [
    ("[]", CONTAINER), ("{}", CONTAINER), ("{1}", CONTAINER), ("[i for i in x]", CONTAINER),
    ("dict()", CONTAINER), ("collections.deque()", CONTAINER), ("defaultdict(int)", CONTAINER),
    ("0", SCALAR), ("-1.5", SCALAR), ("'s'", SCALAR), ("f'{x}'", SCALAR), ("(1, 2)", SCALAR), ("True", SCALAR),
    ("int(x)", SCALAR), ("None", NONE), ("x", None), ("make()", None), ("np.zeros(3)", None), ("x + 1", None),
])
def test_python_value_kind(value, kind):
    facts = Facts(f"import collections\nfrom collections import defaultdict\nv = {value}\n")
    assert python_value_kind(facts.model.root.assigned["v"][0], facts.model.root, facts.graphs.resolver) == kind
