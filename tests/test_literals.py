"""semantic/literals.py: the value of a literal, or of a name bound once to one."""
from __future__ import annotations

import textwrap

import libcst as cst

from tflint_gpu.engine.lint import analyse
from tflint_gpu.semantic.literals import literal_value


def _values(source: str, name: str = "f"):
    ctx = analyse(cst.parse_module(textwrap.dedent(source)), [])
    scope = next(s for s in ctx.model.scopes if s.name == name)
    line = scope.node.body.body[-1]
    call = line.body[0].value
    return [literal_value(arg.value, scope) for arg in call.args]


def test_literals_and_names_bound_once():
    assert _values("""
        ACT = "relu"
        ALIAS = ACT
        RATE = 0.25

        def f(param):
            local = -2
            g("tanh", 'a' 'b', 3, 0x10, 1.5, -0.5, +1, None, True, False, ACT, ALIAS, RATE, local)
        """) == [("tanh",), ("ab",), (3,), (16,), (1.5,), (-0.5,), (1,), (None,), (True,), (False,),
                 ("relu",), ("relu",), (0.25,), (-2,)]


def test_unreadable_values_are_none():
    assert _values("""
        import tensorflow as tf
        TWICE = 0.1
        TWICE = 0.2
        WRITTEN = "tanh"

        def h():
            global WRITTEN
            WRITTEN = "relu"

        def f(param, default="relu"):
            for looped in ["relu"]:
                pass
            a, b = "x", "y"
            g(param, default, TWICE, WRITTEN, looped, a, tf.nn.relu, f"{param}", [1], 1 + 1, undefined)
        """) == [None] * 11


def test_is_string_through_operations_names_and_the_flow():
    source = textwrap.dedent("""
        PREFIX = "emb"

        class L:
            def __init__(self, tag):
                self.tag = tag
                self.label = "bias"
                self.dims = (2,)

            def helper(self, key, other):
                return g(key, other)

            def f(self, param, str_):
                local = "scale"
                self.helper("extra", (2,))
                g("{}_pos".format(self.tag), f"{PREFIX}_cls", local, self.label, self.tag + "_gain", "%s_w" % param,
                  str(param), "_".join(param), PREFIX.lower(), b"bytes", param, self.dims, self.tag, (1, 2),
                  param.format(1), 3)
        """)
    ctx = analyse(cst.parse_module(source), [])
    f = next(s for s in ctx.model.scopes if s.name == "f")
    call = f.node.body.body[-1].body[0].value
    assert [ctx.is_string(arg.value, f) for arg in call.args] == [
        True, True, True, True, True, True, True, True, True, False, False, False, False, False, False, False]
    helper = next(s for s in ctx.model.scopes if s.name == "helper")
    inner = helper.node.body.body[-1].body[0].value
    assert [ctx.is_string(arg.value, helper) for arg in inner.args] == [True, False]  # every call passes a str


def test_written_as_size():
    from tflint_gpu.semantic.literals import written_as_size

    for text in ("4", "tf.shape(x)[0]", "x.shape[0]", "keras.ops.shape(x)[0]", "shape(x)[0]", "batch_size",
                 "n_batch"):
        assert written_as_size(cst.parse_expression(text)), text
    for text in ("x", "inputs", "fxs[-1]", "x[0]", "tf.zeros((2, 3))", "embedded[:, :-1]"):
        assert not written_as_size(cst.parse_expression(text)), text
