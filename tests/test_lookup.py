"""The engine's one name lookup (model.lookup): what a name read at a node binds to."""
from __future__ import annotations

import textwrap
from typing import List

import libcst as cst
import pytest

from tflint_gpu.semantic.model import ASSIGNED, CLASS, DEF, IMPORT, OPAQUE, PARAM, build_model, lookup
from tflint_gpu.semantic.names import Resolver


def model_of(source: str):
    module = cst.parse_module(textwrap.dedent(source))
    return module, build_model(module, ["Name", "Call"])


def reads(model, name: str):
    """(Name node, its scope) for every occurrence of ``name`` that is a call's
    argument or a call's function, in source order (the reads these tests ask about)."""
    found = []
    for call, scope in model.index["Call"]:
        for node in [call.func] + [arg.value for arg in call.args]:
            if isinstance(node, cst.Name) and node.value == name:
                found.append((node, scope))
    return found


def values_at(module, model, name: str, index: int = -1) -> List[str]:
    node, scope = reads(model, name)[index]
    binding = lookup(name, scope, at=node)
    assert binding is not None and binding.kind == ASSIGNED
    return [module.code_for_node(v) if isinstance(v, cst.CSTNode) else v[0] for v in binding.values]


# ``x`` bound twice in a row, each value read after it.
REBOUND = """
    def f():
        x = 1
        use(x)
        x = 2
        use(x)
"""


def test_a_later_assignment_on_every_path_replaces_the_earlier_one():
    module, model = model_of(REBOUND)
    assert values_at(module, model, "x", 0) == ["1"]
    assert values_at(module, model, "x", 1) == ["2"]


def test_an_assignment_in_one_branch_joins_the_one_before():
    module, model = model_of("""
        def f(flag):
            x = 1
            if flag:
                x = 2
            use(x)
    """)
    assert values_at(module, model, "x") == ["1", "2"]


def test_assignments_in_both_branches_both_reach_and_the_one_before_is_replaced_only_per_branch():
    module, model = model_of("""
        def f(flag):
            x = 0
            if flag:
                x = 1
            else:
                x = 2
            use(x)
    """)
    # Not path-sensitive across branches: the one before the `if` is kept (a superset, never fewer).
    assert values_at(module, model, "x") == ["0", "1", "2"]


def test_a_read_in_its_own_rebinding_sees_the_value_before():
    module, model = model_of("""
        def f():
            ds = make()
            ds = wrap(ds)
    """)
    assert values_at(module, model, "ds") == ["make()"]


def test_a_binding_later_in_a_loop_comes_round_to_a_read_earlier_in_it():
    module, model = model_of("""
        def f(n):
            acc = start()
            for i in range(n):
                use(acc)
                acc = step(acc)
            use(acc)
    """)
    assert values_at(module, model, "acc", 0) == ["start()", "step(acc)"]
    assert values_at(module, model, "acc", -1) == ["start()", "step(acc)"]


def test_a_loop_target_is_bound_on_every_turn():
    module, model = model_of("""
        def f(xs):
            i = -1
            for i in xs:
                use(i)
    """)
    assert values_at(module, model, "i") == ["iterated"]


def test_a_parameter_reaches_until_rebound():
    module, model = model_of("""
        def f(x):
            use(x)
            x = cast(x)
            use(x)
    """)
    assert values_at(module, model, "x", 0) == [PARAM]
    assert values_at(module, model, "x", 1) == [PARAM]  # inside `cast(x)`: the assignment is not complete
    assert values_at(module, model, "x", 2) == ["cast(x)"]
    node, scope = reads(model, "x")[0]
    assert lookup("x", scope, at=node).is_parameter


def test_without_a_node_every_binding_of_the_scope_is_returned():
    module, model = model_of("""
        def f(x):
            x = cast(x)
            use(x)
    """)
    node, scope = reads(model, "x")[-1]
    assert len(lookup("x", scope).values) == 2
    assert lookup("x", scope).rebound
    assert module.code_for_node(lookup("x", scope, at=node).single_value) == "cast(x)"


def test_wrapping_a_function_in_its_own_name_reads_the_def_then_binds_the_wrapper():
    module, model = model_of("""
        import tensorflow as tf

        def step(x):
            return x

        step = tf.function(step)
        run(step)
    """)
    (inner, scope), (after, _) = reads(model, "step")
    assert lookup("step", scope, at=inner).kind == DEF
    binding = lookup("step", scope, at=after)
    assert binding.kind == ASSIGNED and module.code_for_node(binding.single_value) == "tf.function(step)"


def test_global_writes_join_the_module_binding_and_make_it_rebound():
    module, model = model_of("""
        threshold = 0.5
        limit = 3

        def tune():
            global threshold
            threshold = 0.1

        def check(x):
            return gt(x, threshold, limit)
    """)
    (node, scope), = reads(model, "threshold")
    binding = lookup("threshold", scope, at=node)
    assert binding.scope is model.root and [w.name for w in binding.writers] == ["tune"]
    assert binding.values[-1][0] == OPAQUE and binding.rebound
    (node, scope), = reads(model, "limit")
    assert not lookup("limit", scope, at=node).rebound


def test_a_name_assigned_only_through_global_is_still_a_module_binding():
    module, model = model_of("""
        def setup():
            global cache
            cache = load()

        def read():
            return use(cache)
    """)
    (node, scope), = reads(model, "cache")
    binding = lookup("cache", scope)
    assert binding.kind == ASSIGNED and binding.scope is model.root and binding.own_values == []


def test_nonlocal_writes_belong_to_the_enclosing_function():
    module, model = model_of("""
        def outer():
            count = 0
            def bump():
                nonlocal count
                count += 1
            use(count)
    """)
    (node, scope), = reads(model, "count")
    binding = lookup("count", scope)
    assert binding.scope.name == "outer" and [w.name for w in binding.writers] == ["bump"]


def test_class_bodies_are_not_enclosing_scopes_and_imports_defs_classes_are_kinds():
    module, model = model_of("""
        import numpy as np
        x = 1

        class Layer:
            x = 2
            def call(self):
                return use(x, np, helper, Layer)

        def helper():
            pass
    """)
    call = next(c for c, s in model.index["Call"] if isinstance(c.func, cst.Name) and c.func.value == "use")
    scope = model.scope_of_node[next(s.node for s in model.scopes if s.name == "call")]
    assert lookup("x", scope).scope is model.root
    assert lookup("np", scope).kind == IMPORT and lookup("np", scope).target == "numpy"
    assert lookup("helper", scope).kind == DEF and lookup("Layer", scope).kind == CLASS
    assert lookup("len", scope) is None
    assert call is not None


@pytest.mark.parametrize("source, expected", [
    ("import tensorflow as tf\ndef f(tf):\n    return tf.zeros(3)\n", None),
    ("import tensorflow as tf\ndef f():\n    return tf.zeros(3)\n", "tensorflow.zeros"),
    ("from tensorflow import zeros\ndef zeros(n):\n    return n\nzeros(3)\n", None),
])
def test_the_resolver_answers_through_the_same_lookup(source, expected):
    module, model = model_of(source)
    call, scope = model.index["Call"][-1]
    assert Resolver().qualname(call.func, scope) == expected


@pytest.mark.parametrize("source, expected", [
    ("import tensorflow_probability as tfp\ntfd = tfp.distributions\ntfd.Normal(0, 1)\n",
     "tensorflow_probability.distributions.Normal"),
    ("import tensorflow as tf\nnn = tf.nn\nact = nn\nact.relu(1)\n", "tensorflow.nn.relu"),
    ("import tensorflow as tf\ndef f(tf_nn=tf.nn):\n    return tf_nn.relu(1)\n", None),  # a parameter
    ("import tensorflow as tf\nnn = tf.nn\nif c:\n    nn = other\nnn.relu(1)\n", None),  # bound twice
    ("import tensorflow as tf\nnn = tf.nn\ndef reset():\n    global nn\n    nn = None\nnn.relu(1)\n", None),
    ("a = b\nb = a\na.relu(1)\n", None),  # a cycle ends
])
def test_a_name_assigned_once_an_imported_name_resolves_through_it(source, expected):
    module, model = model_of(source)
    call, scope = model.index["Call"][-1]
    assert Resolver().qualname(call.func, scope) == expected


# -- a name defined several times: the def live at each read ---------------------
def test_each_read_of_a_function_redefined_later_sees_the_def_before_it():
    module, model = model_of("""
        def train_step(x):
            return 1

        for x in data:
            train_step(x)

        def train_step(x):
            return 2

        train_step(x)
    """)
    (first, scope), (second, _) = reads(model, "train_step")
    defs = [s for s in model.scopes if s.name == "train_step"]
    assert lookup("train_step", scope, at=first).target is defs[0]
    assert lookup("train_step", scope, at=second).target is defs[1]
    assert scope.lookup_def("train_step", first) is defs[0]
    assert scope.lookup_def("train_step", second) is defs[1]
    assert scope.lookup_def("train_step") is defs[1]  # without a node: the last def, as before


def test_a_def_wrapped_in_its_own_name_then_redefined_leads_each_read_to_its_own_def():
    module, model = model_of("""
        import tensorflow as tf

        def step(x):
            return 1
        step = tf.function(step)
        step(1)

        def step(x):
            return 2
        step(2)
    """)
    calls = [(n, s) for n, s in reads(model, "step") if n is not None]
    defs = [s for s in model.scopes if s.name == "step"]
    scope = model.root
    at_first = [n for n, _ in calls][1]  # step(1) (the first read is the argument of tf.function)
    at_second = [n for n, _ in calls][2]
    assert scope.lookup_def("step", at_first) is defs[0]
    assert scope.lookup_def("step", at_second) is defs[1]


def test_a_def_in_one_branch_and_another_after_it_reach_their_reads():
    module, model = model_of("""
        def f():
            return 0

        if flag:
            def f():
                return 1
        f()

        def f():
            return 2
        f()
    """)
    (first, scope), (second, _) = reads(model, "f")
    defs = [s for s in model.scopes if s.name == "f"]
    # both the first and the branch's def may be live at the first read: the later one is named
    assert lookup("f", scope, at=first).kind == DEF and lookup("f", scope, at=first).target is defs[1]
    assert lookup("f", scope, at=second).target is defs[2]


def test_an_assignment_a_later_def_shadows_is_still_live_before_the_def():
    module, model = model_of("""
        ds = make()
        use(ds)

        def ds():
            return 1
        use(ds)
    """)
    (first, scope), (second, _) = reads(model, "ds")
    assert values_at(module, model, "ds", 0) == ["make()"]
    assert lookup("ds", scope, at=second).kind == DEF
    assert lookup("ds", scope).kind == DEF  # without a node: the def, as before


def test_a_class_redefined_later_each_read_sees_its_own():
    module, model = model_of("""
        class Net:
            pass
        Net()

        class Net:
            pass
        Net()
    """)
    (first, scope), (second, _) = reads(model, "Net")
    classes = [s for s in model.scopes if s.name == "Net"]
    assert lookup("Net", scope, at=first).kind == CLASS and lookup("Net", scope, at=first).target is classes[0]
    assert lookup("Net", scope, at=second).target is classes[1]


def test_a_binding_in_one_branch_does_not_reach_a_read_in_the_other():
    module, model = model_of("""
        def f(a, b):
            x = 0
            if a:
                x = 1
            elif b:
                use(x)
            else:
                x = 2
                use(x)
            use(x)
    """)
    found = sorted(reads(model, "x"), key=lambda read: read[1].flow_order().pre[id(read[0])])
    got = [[module.code_for_node(v) for v in lookup("x", scope, at=node).values] for node, scope in found]
    # the elif sees not the `if` body's binding; the else its own; after the `if`, all three
    assert got == [["0"], ["2"], ["0", "1", "2"]]


def test_a_loop_around_the_if_brings_the_other_branch_round():
    module, model = model_of("""
        def f(items):
            x = 0
            for item in items:
                if item:
                    x = 1
                else:
                    use(x)
    """)
    assert values_at(module, model, "x") == ["0", "1"]


def test_a_name_rebound_many_times_reads_its_last_binding_before_the_read():
    """Straight-line code (the sorted fast path): the last binding before the read, none after it;
    under an `if` with an `else`, both branches' bindings (the general path)."""
    rebinds = "".join(f"x = f({i})\n" for i in range(300))
    module, model = model_of(rebinds + "g(x)\nx = f(999)\n")
    assert values_at(module, model, "x", 0) == ["f(299)"]
    module, model = model_of("x = f(0)\n" + rebinds + "if c:\n    x = f(1000)\nelse:\n    g(x)\n")
    assert values_at(module, model, "x", 0) == ["f(299)"]
    module, model = model_of(rebinds + "if c:\n    x = f(1000)\ng(x)\n")
    assert values_at(module, model, "x", 0) == ["f(299)", "f(1000)"]


def test_each_question_is_answered_once_per_scope_and_node_read_at():
    module, model = model_of(REBOUND)
    (first, scope), (second, _) = reads(model, "x")
    answer = lookup("x", scope, at=first)
    assert lookup("x", scope, at=first) is answer  # asked again: the same answer, not worked out again
    assert values_at(module, model, "x", 0) == ["1"] and values_at(module, model, "x", 1) == ["2"]
    assert lookup("x", scope, at=second) is not answer and lookup("x", scope) is lookup("x", scope)
    model.release()
    assert lookup("x", scope, at=first) is not answer  # a released model keeps no answers
