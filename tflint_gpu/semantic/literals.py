"""The Python value of an expression the linter can read without running anything.

``literal_value(expr, scope)`` answers ``(value,)`` for a string, number,
``True``/``False``/``None`` literal (a sign on a number included), and for a
name bound exactly once, by a plain assignment, to such an expression (followed
through a few names: ``ACT = "relu"; act = ACT``). Anything else (a parameter,
a loop target, a name bound twice or written through ``global``, an attribute, a
call, an f-string) is ``None``: not readable, so a rule asking stays silent.
"""
from __future__ import annotations

from typing import Any, Optional, Tuple

import libcst as cst

from tflint_gpu.semantic.model import ASSIGNED, ScopeInfo, lookup

_NAMED = {"True": True, "False": False, "None": None}
_DEPTH = 4


def literal_value(expr: cst.BaseExpression, scope: ScopeInfo, depth: int = 0) -> Optional[Tuple[Any]]:
    """``(value,)`` when ``expr`` is a literal or a name bound once to one, else None."""
    if depth > _DEPTH:
        return None
    if isinstance(expr, (cst.SimpleString, cst.ConcatenatedString)):
        value = expr.evaluated_value
        return (value,) if isinstance(value, (str, bytes)) else None
    if isinstance(expr, cst.Integer):
        return (int(expr.value.replace("_", ""), 0),)
    if isinstance(expr, cst.Float):
        return (float(expr.value.replace("_", "")),)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)) \
            and isinstance(expr.expression, (cst.Integer, cst.Float)):
        inner = literal_value(expr.expression, scope, depth + 1)
        if inner is None:
            return None
        return (-inner[0],) if isinstance(expr.operator, cst.Minus) else inner
    if isinstance(expr, cst.Name):
        if expr.value in _NAMED:
            return (_NAMED[expr.value],)
        found = lookup(expr.value, scope)
        if found is None or found.kind != ASSIGNED or found.rebound or found.writers:
            return None
        value = found.single_value
        if not isinstance(value, cst.BaseExpression):
            return None
        return literal_value(value, found.scope, depth + 1)
    return None


# str methods returning a str (``"{}_pos".format(name)``, ``"_".join(parts)``, ``name.lower()``).
_STR_METHODS = frozenset({"format", "join", "lower", "upper", "replace", "strip", "lstrip", "rstrip", "title",
                          "capitalize", "casefold", "zfill", "ljust", "rjust", "center", "removeprefix",
                          "removesuffix", "format_map", "swapcase"})


def is_string(expr: cst.BaseExpression, scope: ScopeInfo, flow=None, depth: int = 0) -> bool:
    """Is ``expr`` a ``str`` whatever runs: a string literal or f-string, ``"..." % x``, a ``+`` with
    a string operand, ``str(...)``, a str method on a string (``"{}_pos".format(name)``), or a name or
    attribute every value of which (``flow``: ``semantic.flow``'s sources; else a name bound once) is
    one. False where it cannot be told (a parameter no call gives, a call of something else)."""
    if depth > _DEPTH:
        return False
    if isinstance(expr, (cst.SimpleString, cst.ConcatenatedString)):
        return isinstance(expr.evaluated_value, str)
    if isinstance(expr, cst.FormattedString):
        return True
    if isinstance(expr, cst.BinaryOperation):
        if isinstance(expr.operator, cst.Add):
            return is_string(expr.left, scope, flow, depth + 1) or is_string(expr.right, scope, flow, depth + 1)
        if isinstance(expr.operator, cst.Modulo):
            return is_string(expr.left, scope, flow, depth + 1)
        return False
    if isinstance(expr, cst.Call):
        func = expr.func
        if isinstance(func, cst.Name):
            return func.value == "str" and scope.lookup("str") is None
        if isinstance(func, cst.Attribute) and func.attr.value in _STR_METHODS:
            return is_string(func.value, scope, flow, depth + 1)
        return False
    if isinstance(expr, (cst.Name, cst.Attribute)):
        if flow is not None:
            found = flow.sources(expr, scope)
            values = found.values()
            return not found.unknown and bool(values) and len(values) == len(found.found) \
                and all(v is not expr and is_string(v, s, flow, depth + 1) for v, s in values)
        if isinstance(expr, cst.Name):
            binding = lookup(expr.value, scope)
            if binding is not None and binding.kind == ASSIGNED and not binding.rebound and not binding.writers \
                    and isinstance(binding.single_value, cst.BaseExpression):
                return is_string(binding.single_value, binding.scope, None, depth + 1)
    return False


__all__ = ["is_string", "literal_value", "written_as_size"]


def written_as_size(expr: cst.BaseExpression) -> bool:
    """Is ``expr`` written as a size rather than a tensor: an int, an index into a shape (``tf.shape(x)[0]``,
    ``x.shape[0]``, ``keras.ops.shape(x)[0]``), or a name that says so (``batch_size``, ``n_batch``)?
    (TFG902 tells ``rnn.get_initial_state(batch_size)``, Keras 3's, from Keras 2's ``(inputs)``.)"""
    if isinstance(expr, cst.Integer):
        return True
    if isinstance(expr, cst.Subscript):
        shape = expr.value
        if isinstance(shape, cst.Call):
            shape = shape.func
        return (isinstance(shape, cst.Attribute) and shape.attr.value == "shape") or \
            (isinstance(shape, cst.Name) and shape.value == "shape")
    return isinstance(expr, cst.Name) and ("size" in expr.value or "batch" in expr.value)
