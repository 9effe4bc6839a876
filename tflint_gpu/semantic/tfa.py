"""TensorFlow Addons names and their Keras 3 counterparts, and the values a rewrite may divide by.

* ``equivalent(qualname)``: the entry of ``data/tfa_equivalents.json`` (derived by
  ``scripts/derive_tfa_equivalents.py``, which executes the tfa object on tf_keras and its Keras 3
  counterpart on the same inputs and weights) for a ``tensorflow_addons.…`` name, or None.
* ``constant_number(graphs, resolver, expr, scope)``: is ``expr`` a plain number, never a
  schedule, a callable or ``None``? Numeric literals and arithmetic on them, a name every source of
  which is one, and a command-line flag read as ``args.x`` (``args`` bound from this module's
  ``parser.parse_args()``) that every ``add_argument`` of this module defining it parses with
  ``type=float`` or ``type=int`` and a numeric default (absl's ``FLAGS.x`` defined by
  ``flags.DEFINE_float``/``DEFINE_integer`` with a numeric default likewise).
* ``use_of(name, scope, ancestors)``: the outermost attribute chain a read of an import's name
  stands in (``tfa.activations.gelu`` for the ``tfa`` of it).
"""
from __future__ import annotations

import functools
from typing import Dict, Iterable, Optional

import libcst as cst

from tflint_gpu.semantic.model import ScopeInfo, lookup
from tflint_gpu.semantic.tables import data_table

_DEPTH = 4
_FLOAT_FLAGS = frozenset({"DEFINE_float", "DEFINE_integer"})


@functools.lru_cache(maxsize=1)
def _table() -> Dict[str, dict]:
    return {k: v for k, v in data_table("tfa_equivalents.json").items() if not k.startswith("_")}


def equivalent(qualname: Optional[str]) -> Optional[dict]:
    return _table().get(qualname) if qualname else None


def use_of(name: cst.Name, ancestors: Iterable[cst.CSTNode]) -> cst.BaseExpression:
    """The outermost ``a.b.c`` whose root is ``name`` (``name`` itself when no attribute is read)."""
    expr: cst.BaseExpression = name
    for parent in ancestors:
        if isinstance(parent, cst.Attribute) and parent.value is expr:
            expr = parent
        else:
            break
    return expr


def _numeric(node: cst.BaseExpression) -> bool:
    if isinstance(node, (cst.Integer, cst.Float)):
        return True
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        return _numeric(node.expression)
    if isinstance(node, cst.BinaryOperation) and isinstance(
            node.operator, (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.Power)):
        return _numeric(node.left) and _numeric(node.right)
    return False


def constant_number(graphs, resolver, expr: cst.BaseExpression, scope: ScopeInfo, depth: int = 0) -> bool:
    """See the module docstring."""
    if depth > _DEPTH:
        return False
    if _numeric(expr):
        return True
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
        return constant_number(graphs, resolver, expr.expression, scope, depth + 1)
    if isinstance(expr, cst.BinaryOperation) and isinstance(
            expr.operator, (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.Power)):
        return constant_number(graphs, resolver, expr.left, scope, depth + 1) \
            and constant_number(graphs, resolver, expr.right, scope, depth + 1)
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name):
        flag = _numeric_flag(graphs, resolver, expr, scope)
        if flag is not None:
            return flag
    if isinstance(expr, (cst.Name, cst.Attribute)):
        sources = graphs.flow.sources(expr, scope)
        values = sources.values()
        if sources.unknown or not values or len(values) != len(sources.found):
            return False
        return all(value is not expr and constant_number(graphs, resolver, value, where, depth + 1)
                   for value, where in values)
    return False


def _numeric_flag(graphs, resolver, expr: cst.Attribute, scope: ScopeInfo) -> Optional[bool]:
    """For ``args.x`` / ``FLAGS.x``: whether every definition of the flag in this module parses a
    number with a numeric default; None when ``expr`` is not a flag read."""
    base = expr.value
    assert isinstance(base, cst.Name)
    name = expr.attr.value
    qualname = resolver.raw_qualname(base, scope)
    absl = qualname is not None and qualname.endswith("flags.FLAGS")
    if not absl:
        found = lookup(base.value, scope, base)
        value = found.single_value if found is not None else None
        if isinstance(value, cst.Subscript):
            value = value.value
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
                and value.func.attr.value in ("parse_args", "parse_known_args")):
            return None
    definitions = []
    for call, where in graphs.model.index.get("Call", ()):
        func = call.func
        if not isinstance(func, cst.Attribute):
            continue
        if absl and func.attr.value.startswith("DEFINE_"):
            first = call.args[0].value if call.args and call.args[0].keyword is None else None
            if isinstance(first, cst.SimpleString) and first.evaluated_value == name:
                default = call.args[1].value if len(call.args) > 1 and call.args[1].keyword is None else \
                    _keyword(call, "default")
                definitions.append(func.attr.value in _FLOAT_FLAGS and default is not None and _numeric(default))
        elif not absl and func.attr.value == "add_argument" and _dest(call) == name:
            kind = _keyword(call, "type")
            default = _keyword(call, "default")
            definitions.append(isinstance(kind, cst.Name) and kind.value in ("float", "int")
                               and lookup(kind.value, where) is None and default is not None and _numeric(default)
                               and _keyword(call, "action") is None and _keyword(call, "nargs") is None)
    return bool(definitions) and all(definitions)


def _keyword(call: cst.Call, keyword: str) -> Optional[cst.BaseExpression]:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg.value
    return None


def _dest(call: cst.Call) -> Optional[str]:
    """The attribute ``parser.add_argument(...)`` stores into: ``dest=``, else the first long option
    with dashes read as underscores, else the first option."""
    dest = _keyword(call, "dest")
    if dest is not None:
        return dest.evaluated_value if isinstance(dest, cst.SimpleString) else None
    options = []
    for arg in call.args:
        if arg.keyword is None:
            if not isinstance(arg.value, cst.SimpleString) or arg.star:
                return None
            options.append(arg.value.evaluated_value)
    long = [o for o in options if isinstance(o, str) and o.startswith("--")]
    chosen = (long or options)[0] if options else None
    return chosen.lstrip("-").replace("-", "_") if isinstance(chosen, str) else None
