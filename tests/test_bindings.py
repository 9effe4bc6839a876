"""Def-use facts of the engine (semantic/bindings.py), on small functions."""
from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from tflint_gpu.semantic import bindings


def function(source: str) -> cst.FunctionDef:
    return cst.parse_module(textwrap.dedent(source)).body[0]


def statement_named(fn: cst.FunctionDef, kind: type, index: int = 0):
    return [s for s in bindings.block_statements(fn.body) if isinstance(s, kind)][index]


def test_mentions_reads_and_binds_but_not_attribute_or_keyword_names_nor_nested_scopes():
    fn = function("""
        def f(x):
            y = g(x.shape, axis=z)
            def inner(w):
                return w + q
            return [v for v in y]
    """)
    assert bindings.mentions(fn.body) == {"y", "g", "x", "z", "inner"}


def test_bound_names_of_a_block():
    fn = function("""
        def f(x):
            a, (b, *c) = x
            d += 1
            e: int = 2
            for i in x:
                pass
            with open(x) as h:
                pass
            import os
            def k():
                m = 1
            if (n := 3):
                pass
    """)
    assert bindings.bound_names(fn.body) >= {"a", "b", "c", "d", "e", "i", "h", "k", "n"}
    assert "m" not in bindings.bound_names(fn.body)


@pytest.mark.parametrize("after,expected", [
    ("return y", True),
    ("y = 1\n    return y", False),
    ("y = y + 1", True),
    ("if c:\n        y = 2\n    return y", False),  # unsure: False
    ("if c:\n        return y\n    return 0", True),
    ("while c:\n        y = 2", False),
    ("return 0", False),
], ids=["read", "rebound-first", "reads-itself", "unsure-after-a-branch-rebinds", "read-in-a-branch", "while",
        "unused"])
def test_read_after_an_if(after, expected):
    fn = function("def f(x, c):\n    if x:\n        y = 1\n    " + after + "\n")
    path = bindings.block_path(bindings.block_statements(fn.body), statement_named(fn, cst.If))
    assert bindings.read_after("y", path) is expected


def test_block_path_goes_through_with_blocks_only():
    fn = function("""
        def f(x):
            with g() as h:
                if x:
                    pass
            for i in x:
                if i:
                    pass
    """)
    top = bindings.block_statements(fn.body)
    with_if = bindings.block_statements(top[0].body)[0]
    loop_if = bindings.block_statements(top[1].body)[0]
    path = bindings.block_path(top, with_if)
    assert [index for _, index in path] == [0, 0]
    assert [type(s).__name__ for s in bindings.statements_before(path)] == ["WithItem"]
    assert bindings.block_path(top, loop_if) is None


def test_count_name_counts_every_spelling_below_a_node():
    fn = function("""
        def f():
            w = 1
            v = w + obj.w
            return lambda: w
    """)
    assert bindings.count_name(fn, "w") == 4


def test_guarded_nodes_and_condition_operands():
    fn = function("""
        def f(x):
            if eager():
                a = x.numpy()
            else:
                b = 1
            if not eager():
                c = 2
            d = x and not y
    """)

    def classify(test):
        return True if isinstance(test, cst.Call) else (False if isinstance(test, cst.UnaryOperation) else None)

    guarded = bindings.guarded_nodes(fn, classify)
    statements = bindings.block_statements(fn.body)
    assert id(bindings.block_statements(statements[0].body)[0]) in guarded  # a = ...
    assert id(bindings.block_statements(statements[0].orelse.body)[0]) not in guarded  # b = 1
    assert id(bindings.block_statements(statements[1].body)[0]) not in guarded  # c: the not-branch has no else
    operands = bindings.condition_operands(fn)
    boolean = statements[2].body[0].value
    assert id(boolean.right) in operands and id(boolean) not in operands
    assert id(statements[0].test) in operands


def test_attribute_mentions_anywhere_below_a_node():
    fn = function("""
        def f(self, other):
            a = self.steps + 1
            def inner():
                return [self.count for _ in range(2)]
            other.total = self.items.size
    """)
    first, second, third = bindings.block_statements(fn.body)
    assert bindings.is_attribute(first.body[0].value.left, "self", "steps")
    assert not bindings.is_attribute(first.body[0].value.left, "other", "steps")
    assert bindings.mentions_attribute(first, "self", "steps")
    assert bindings.mentions_attribute(fn, "self", "count")  # nested scopes too
    assert bindings.mentions_attribute(third, "other", "total")  # a target counts
    assert bindings.mentions_attribute(third, "self", "items")  # inside a longer chain
    assert not bindings.mentions_attribute(third, "self", "size")  # attribute of an attribute
    assert not bindings.mentions_attribute(fn, "other", "steps")
    assert not bindings.mentions_attribute(None, "self", "steps")


def test_mentions_expression_matches_by_code_not_identity():
    fn = function("""
        def f(self, k):
            self.cache[k] = self.cache[k] + 1
            self.seen[0] = x
    """)
    first, second = (s.body[0] for s in bindings.block_statements(fn.body))
    assert bindings.mentions_expression(first.value, first.targets[0].target)
    assert not bindings.mentions_expression(second.value, second.targets[0].target)


def test_name_uses_are_every_spelling_as_a_name_but_not_attribute_or_keyword_names():
    module = cst.parse_module(textwrap.dedent("""
        import counter
        from m import counter as c2
        counter = 0
        def counter(counter=counter):
            global counter
            return obj.counter + f(counter=1) + int(counter)
        class K(counter=2):
            pass
        xs = [counter for counter in ys]
    """))
    uses = bindings.name_uses(module, "counter")
    # import, from-import, assign, def name, param, default, global, int(counter),
    # comprehension element and target; not obj.counter, f(counter=...), K(counter=...)
    assert len(uses) == 10
    assert all(isinstance(u, cst.Name) and u.value == "counter" for u in uses)


def test_global_statements_include_nested_functions():
    fn = function("""
        def f():
            global a, b
            def g():
                global c
            class K:
                def h(self):
                    nonlocal_thing = 1
    """)
    assert [[n.name.value for n in g.names] for g in bindings.global_statements(fn)] == [["a", "b"], ["c"]]


def test_comprehension_scoped_leaves_out_the_first_iterable():
    module = cst.parse_module("r = [e(x) for x in first(y) if cond(x) for z in second(x)]\n"
                              "d = {k(x): v(x) for x in other}\n")
    scoped = bindings.comprehension_scoped(module)
    calls = {module.code_for_node(n.func): n for n in _nodes(module, cst.Call)}
    assert {name for name, call in calls.items() if id(call) in scoped} == {"e", "cond", "second", "k", "v"}
    assert id(calls["first"]) not in scoped


def _nodes(root, kind):
    from tflint_gpu.semantic.model import walk
    return [n for n in walk(root) if isinstance(n, kind)]


def test_comes_after_in_source_order():
    module = cst.parse_module("a = g(x)\nb = h(a)\n")
    first, second = (s.body[0] for s in module.body)
    g_arg = first.value.args[0].value
    assert bindings.comes_after(module, first, second.value)
    assert not bindings.comes_after(module, second, first.value)
    assert not bindings.comes_after(module, first, g_arg)  # inside it, not after it
    assert not bindings.comes_after(first, second, g_arg)  # not below the root


def test_own_body_facts_do_not_enter_nested_scopes():
    fn = function("""
        def f(x):
            if x:
                a = 1
                b += 2
                c: int = 3
                return x
            def inner():
                if y:
                    d = 4
                return x
            call(lambda: x)
            return x
    """)
    assert len(bindings.returned_names(fn, "x")) == 2
    assert bindings.returned_names(fn, "y") == []
    assert [type(n).__name__ for n in bindings.assignments(fn)] == ["Assign", "AugAssign", "AnnAssign"]
    assert [type(n).__name__ for n in bindings.assignments_and_calls(fn)] == \
        ["Assign", "AugAssign", "AnnAssign", "Call"]
    assert len(list(bindings.if_statements(fn))) == 1
    own = bindings.own_nodes(fn)
    inner = bindings.block_statements(fn.body)[1]
    assert id(inner) in own and id(inner.body) not in own


def test_binding_scope_is_builtin_and_first_parameter():
    from tflint_gpu.semantic.model import build_model

    model = build_model(cst.parse_module(textwrap.dedent("""
        import os
        total = 0
        list = None

        class K:
            total = 1

            def m(self, x):
                global total
                total += x
                return len(x)

            def n(this):
                return total

        def outer():
            count = 0
            def inner():
                nonlocal count
                count += 1
            return inner
    """)), [])
    scopes = {s.name: s for s in model.scopes}
    root = model.root
    assert bindings.binding_scope("total", scopes["m"]) is root  # `global` passes over m
    assert bindings.binding_scope("total", scopes["n"]) is root  # class bodies are not enclosing scopes
    assert bindings.binding_scope("count", scopes["inner"]) is scopes["outer"]
    assert bindings.binding_scope("os", scopes["n"]) is root
    assert bindings.binding_scope("len", scopes["m"]) is None
    assert bindings.is_builtin("len", scopes["m"]) and not bindings.is_builtin("list", scopes["m"])
    assert bindings.first_parameter(scopes["m"]) == "self" and bindings.first_parameter(scopes["n"]) == "this"
    assert bindings.first_parameter(scopes["outer"]) is None


@pytest.mark.parametrize("body,expected", [
    ("return 1", True),
    ("x = 1", False),
    ("if a:\n        return 1\n    else:\n        raise ValueError()", True),
    ("if a:\n        return 1", False),
    ("if a:\n        return 1\n    elif b:\n        return 2\n    else:\n        return 3", True),
    ("with g():\n        return 1", True),
], ids=["return", "falls-off", "if-else", "if-only", "elif-chain", "with"])
def test_always_returns_on_every_path(body, expected):
    fn = function("def f(a, b):\n    " + body + "\n")
    assert bindings.always_returns(list(fn.body.body)) is expected


def test_parameter_names_and_local_values():
    from tflint_gpu.semantic.model import PARAM, build_model

    module = cst.parse_module(textwrap.dedent("""
        total = 0

        def step(self, data, *, scale=2):
            data = data + 1
            return total
    """))
    model = build_model(module, [])
    function = next(s for s in model.scopes if s.name == "step")
    assert [bindings.parameter_name(function, i) for i in range(4)] == ["self", "data", "scale", None]
    kinds = [v[0] if isinstance(v, tuple) else module.code_for_node(v) for v in bindings.local_values("data", function)]
    assert kinds == [PARAM, "data + 1"]
    assert bindings.local_values("total", function) == ()  # a module global, not local to step


def test_under_condition_between_a_node_and_its_loop():
    from tflint_gpu.semantic.model import build_model

    module = cst.parse_module(textwrap.dedent("""
        for x in data:
            a(x)
            if x:
                b(x)
            try:
                c(x)
            except ValueError:
                d(x)
        if flag:
            for y in data:
                e(y)
    """))
    model = build_model(module, ["Call", "For"])
    calls = {call.func.value: call for call, _scope in model.index["Call"]}
    outer, inner = [node for node, _scope in model.index["For"]]
    root = model.root
    assert not bindings.under_condition(calls["a"], outer, root)
    assert bindings.under_condition(calls["b"], outer, root)
    assert not bindings.under_condition(calls["d"], outer, root)  # only `if` by default
    assert bindings.under_condition(calls["d"], outer, root, (cst.If, cst.ExceptHandler))
    assert not bindings.under_condition(calls["c"], outer, root, (cst.If, cst.ExceptHandler))
    assert not bindings.under_condition(calls["e"], inner, root)  # the `if` is outside the loop


def test_redefined_outside_a_function_reading_a_name_its_module_binds_twice():
    from tflint_gpu.semantic.model import build_model

    module = cst.parse_module(textwrap.dedent("""
        def loss(p):
            return p

        def once(p):
            return p

        def step(x):
            loss(x)
            once(x)
            local(x)

            def local(v):
                return v

        def loss(p):
            return -p
    """))
    model = build_model(module, ["Call"])
    step = model.root.defs["step"]
    assert bindings.redefined_outside("loss", step)
    assert not bindings.redefined_outside("once", step)
    assert not bindings.redefined_outside("local", step)  # step's own
    assert not bindings.redefined_outside("loss", model.root)  # the module reads its own, flow-aware


def test_is_constant_literals_module_constants_imports_and_library_calls():
    from tflint_gpu.semantic.model import build_model
    from tflint_gpu.semantic.names import Resolver

    module = cst.parse_module(textwrap.dedent("""
        import os
        ROOT = "models"
        STEP = 1
        STEP = 2
        NAME = ROOT + "/net.keras"

        def f(path):
            local = "x"
            use(1, "a", None, ROOT, NAME, os.path.join(ROOT, "m.keras"), (ROOT, 2), os.sep)
            use(path, local, STEP, helper(ROOT), [*path])
    """))
    model = build_model(module, ["Call"])
    resolver = Resolver()
    calls = [call for call, _scope in model.index["Call"] if getattr(call.func, "value", None) == "use"]
    function = model.root.defs["f"]
    assert [bindings.is_constant(a.value, function, resolver) for a in calls[0].args] == [True] * 8
    assert [bindings.is_constant(a.value, function, resolver) for a in calls[1].args] == [False] * 5
