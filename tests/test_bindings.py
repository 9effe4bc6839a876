"""Def-use facts of the engine (engine/bindings.py), on small functions."""
from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from tflint_gpu.engine import bindings


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
