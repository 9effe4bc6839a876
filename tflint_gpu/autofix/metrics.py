"""Rewrite a compiled binary accuracy so that it reads logits: ``BinaryAccuracy(name=..., threshold=0.0)``
(``sigmoid(z) > 0.5`` is ``z > 0``), the logged name kept."""
from __future__ import annotations

from typing import Optional

import libcst as cst

_EQUAL = cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))
_COMMA = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))


def keras_module_of(expr: Optional[cst.BaseExpression]) -> Optional[cst.BaseExpression]:
    """``X`` of an ``X.losses.Y`` / ``X.metrics.Y`` spelling (``tf.keras`` of ``tf.keras.losses.Y``)."""
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Attribute) \
            and expr.value.attr.value in ("losses", "metrics"):
        return expr.value.value
    return None


def binary_accuracy_class(module: cst.BaseExpression) -> cst.Attribute:
    return cst.Attribute(cst.Attribute(module, cst.Name("metrics")), cst.Name("BinaryAccuracy"))


def named_at_zero(made: cst.BaseExpression, name: cst.BaseExpression) -> cst.Call:
    """``made(name=<name>, threshold=0.0)``."""
    return cst.Call(made, [cst.Arg(name, keyword=cst.Name("name"), equal=_EQUAL, comma=_COMMA),
                           cst.Arg(cst.Float("0.0"), keyword=cst.Name("threshold"), equal=_EQUAL)])


def at_zero(built: cst.Call, name: str = "threshold", position: int = 2) -> Optional[cst.Call]:
    """A metric call given ``<name>=0.0`` (``BinaryAccuracy``'s ``threshold``, the third
    parameter; ``Precision``/``Recall``'s ``thresholds``, the first): added where it has none,
    replaced where it has one (by keyword or position); None where a ``*``/``**`` argument may
    hold it."""
    if any(a.star for a in built.args):
        return None
    args = list(built.args)
    positional = [a for a in args if a.keyword is None]
    for index, arg in enumerate(args):
        if (arg.keyword is not None and arg.keyword.value == name) \
                or (arg.keyword is None and len(positional) > position and arg is positional[position]):
            args[index] = arg.with_changes(value=cst.Float("0.0"))
            return built.with_changes(args=args)
    if args:
        args[-1] = args[-1].with_changes(comma=_COMMA)
    return built.with_changes(args=args + [cst.Arg(cst.Float("0.0"), keyword=cst.Name(name), equal=_EQUAL)])


def keras_prefix(expr: Optional[cst.BaseExpression], resolver, scope) -> Optional[cst.BaseExpression]:
    """The part of an attribute chain that names Keras itself (``tf.keras`` of
    ``tf.keras.losses.BinaryCrossentropy``, ``keras`` of ``keras.Sequential``), if any."""
    while isinstance(expr, cst.Attribute):
        expr = expr.value
        if resolver.qualname(expr, scope) == "keras":
            return expr
    return None
