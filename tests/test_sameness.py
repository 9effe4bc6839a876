"""semantic/sameness.py: two reads give the same value only when the same binding reaches both."""
from __future__ import annotations

import textwrap

import libcst as cst

from tflint_gpu.engine.lint import analyse


def _probes(source: str):
    """Each ``same(a, b)`` call of the module: whether the engine says ``a`` and ``b`` are one value,
    in source order."""
    module = cst.parse_module(textwrap.dedent(source))
    ctx = analyse(module, [])
    answers = []
    for call, scope in ctx.model.index.get("Call", ()):
        if isinstance(call.func, cst.Name) and call.func.value == "same":
            answers.append(ctx.sameness.same_value(call.args[0].value, call.args[1].value, scope))
    return answers


def _displays(source: str):
    """For each ``shown(v)`` call: the code of the display elements ``v`` holds, or None."""
    module = cst.parse_module(textwrap.dedent(source))
    ctx = analyse(module, [])
    code = cst.Module([]).code_for_node
    answers = []
    for call, scope in ctx.model.index.get("Call", ()):
        if isinstance(call.func, cst.Name) and call.func.value == "shown":
            found = ctx.sameness.display(call.args[0].value, scope, call)
            answers.append(None if found is None else [code(e) for e, _ in found])
    return answers


def test_one_binding_reaching_both_reads_is_one_value():
    assert _probes("""
        import numpy as np
        x = np.load("a.npy")
        same(x, x)
        y = x
        same(x, y)
        a = b = np.zeros(3)
        same(a, b)
        x = np.load("b.npy")
        same(x, x)
    """) == [True, True, True, True]  # the last: rebound before both reads, the same binding reaches them


def test_a_call_a_slice_an_operator_or_a_literal_is_a_new_value():
    assert _probes("""
        import numpy as np
        x = np.load("a.npy")
        same(np.load("a.npy"), np.load("a.npy"))
        same(x[:3], x[:3])
        same(x * 2, x * 2)
        same(1, 1)
        same(None, None)
    """) == [False, False, False, False, False]


def test_a_name_rebound_or_bound_in_two_branches_is_not_the_same():
    assert _probes("""
        import numpy as np
        x = np.load("a.npy")
        old = x
        x = np.load("b.npy")
        same(old, x)
        if x.any():
            z = x
        else:
            z = old
        same(z, x)
        w = x
        w += 1
        same(w, w)
    """) == [False, False, False]


def test_parameters_unpacked_names_and_loop_targets_are_their_binding():
    assert _probes("""
        def train(x, y, data):
            same(x, x)
            same(x, y)
            a, b = data
            same(a, a)
            same(a, b)
            for item in data:
                same(item, item)
    """) == [True, False, True, False, True]


def test_self_attributes_bound_once_are_one_value_bound_twice_not():
    assert _probes("""
        class Trainer:
            def __init__(self, data, other):
                self.data = data
                self.other = other
                self.loaded = other

            def reload(self, new):
                self.loaded = new

            def run(self):
                same(self.data, self.data)
                same(self.data, self.other)
                same(self.loaded, self.loaded)
    """) == [True, False, False]


def test_attributes_and_constant_items_of_one_object():
    assert _probes("""
        import numpy as np
        data = np.load("d.npz")
        same(data["x"], data["x"])
        same(data["x"], data["y"])
        same(data.train, data.train)
        same(data.train, data.test)
        other = {}
        other["x"] = 1
        same(other["x"], other["x"])
        obj = np.load("o.npz")
        obj.moved = 1
        same(obj.moved, obj.moved)
    """) == [True, False, True, False, False, False]


def test_a_display_through_names_and_from_the_same_turn_of_a_loop():
    assert _displays("""
        import numpy as np
        x = np.load("a.npy")
        val = (x, x[:2])
        alias = val
        shown(val)
        shown(alias)
        shown([x, x])
        shown(x)
        for i in range(3):
            now = (x, i)
            shown(now)
            if i == 0:
                first = (x, i)
            shown(first)
    """) == [["x", "x[:2]"], ["x", "x[:2]"], ["x", "x"], None, ["x", "i"], None]
