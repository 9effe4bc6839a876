"""The engine's `Uses.value_called`: is the object an expression evaluates to called, there or through
the name an assignment binds it to (kahst/BirdNET-Analyzer: `optimizer_cls = keras.optimizers.legacy.Adam
if sys.platform == "darwin" else keras.optimizers.Adam`, then `optimizer_cls(learning_rate=...)`)."""
from __future__ import annotations

import textwrap

import libcst as cst

from tflint_gpu.engine.lint import analyse

SOURCE = """
import sys
import keras

made = keras.optimizers.SGD()
chosen = keras.optimizers.legacy.Adam if sys.platform == "darwin" else keras.optimizers.Adam
opt = chosen(learning_rate=0.1)
base = keras.optimizers.legacy.Optimizer
check = isinstance(opt, base)
gone = keras.optimizers.legacy.SGD
gone = keras.optimizers.SGD
other = gone()
later = keras.optimizers.legacy.RMSprop

def build():
    return later()

pair = (keras.optimizers.legacy.Adagrad, 1)
handed = print(keras.optimizers.legacy.Nadam)
tested = keras.optimizers.legacy.Ftrl if keras.optimizers.legacy.Adamax else None
"""


def _calls(source: str):
    ctx = analyse(cst.parse_module(textwrap.dedent(source).lstrip("\n")), [])
    found = []
    scope = ctx.model.root  # every expression asked about is module code
    for node in ctx.descendants(ctx.model.module):
        if isinstance(node, cst.Attribute) and node.attr.value != "legacy" and isinstance(node.value, cst.Attribute) \
                and node.value.attr.value in ("optimizers", "legacy") \
                and isinstance(node.value.value, cst.Attribute) is (node.value.attr.value == "legacy"):
            found.append((cst.Module([]).code_for_node(node), ctx.graphs.uses.value_called(node, scope)))
    return found


def test_a_value_is_called_there_or_through_the_name_it_is_assigned_to():
    assert _calls(SOURCE) == [
        ("keras.optimizers.SGD", True),  # made = keras.optimizers.SGD()
        ("keras.optimizers.legacy.Adam", True),  # chosen = ... if ... else ...; chosen(...)
        ("keras.optimizers.Adam", True),
        ("keras.optimizers.legacy.Optimizer", False),  # only given to isinstance
        ("keras.optimizers.legacy.SGD", False),  # rebound before gone() is called
        ("keras.optimizers.SGD", True),
        ("keras.optimizers.legacy.RMSprop", True),  # called in a function that sees the module's binding
        ("keras.optimizers.legacy.Adagrad", False),  # an element of a tuple
        ("keras.optimizers.legacy.Nadam", False),  # an argument
        ("keras.optimizers.legacy.Adamax", False),  # the test of a conditional expression
        ("keras.optimizers.legacy.Ftrl", False),  # `tested` is never called
    ]
