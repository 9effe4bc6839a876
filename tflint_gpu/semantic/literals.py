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


__all__ = ["literal_value"]
