"""How much a Python loop runs: a handful of iterations, or an outer loop around heavier work.

For the rules about Keras models called per iteration (TFG601 ``predict``, TFG407 ``model(x)``):

* ``few_iterations(loop, scope)``: a ``for`` (or comprehension) over a handful of things written out
  or counted small: a list, tuple, set or dict display (also through a name bound to one, ``.items()``
  / ``.values()`` / ``.keys()``, ``enumerate`` / ``zip`` / ``sorted`` / ``reversed``), ``range(n)``
  or a chain through ``x.take(n)`` (``ds.take(1).batch(1)``) with ``n`` a literal of at most ``FEW``
  or a parameter whose default is one, where the loop itself runs once. A call in such a loop
  runs a few times: to plot a grid, to look at a batch, once per phase.
* ``heavy_iteration(loop, node, scope)``: the loop's body also runs another loop that does not hold
  ``node`` and is not under an ``if`` (an epoch loop around the batches), or a ``fit``: ``node``
  runs once per epoch.
"""
from __future__ import annotations

from typing import Optional

import libcst as cst

from tflint_gpu.semantic.api import argument
from tflint_gpu.semantic.bindings import under_condition
from tflint_gpu.semantic.model import SCOPE_TYPES, ScopeInfo, assigned, walk

FEW = 10
COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)
_DISPLAYS = (cst.List, cst.Tuple, cst.Set, cst.Dict)
_TRAINING = frozenset({"fit", "fit_generator"})


def few_iterations(loop: cst.CSTNode, scope: ScopeInfo, repetition) -> bool:
    """``repetition`` (a ``semantic.repetition.Repetition``) tells whether the loop itself runs
    again and again: a small count is few only for a loop that runs once (`range(10)` replay steps
    inside an episode loop are many); a display is few either way (once per phase, per epoch)."""
    if isinstance(loop, COMPREHENSIONS):
        iterable = loop.for_in.iter
    elif isinstance(loop, cst.For):
        iterable = loop.iter
    else:
        return False
    if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute) \
            and iterable.func.attr.value in ("items", "values", "keys") and not iterable.args:
        iterable = iterable.func.value
    if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) \
            and iterable.func.value in ("enumerate", "zip", "sorted", "reversed") and iterable.args:
        iterable = iterable.args[0].value
    if isinstance(iterable, cst.Name):
        found = assigned(iterable.value, scope, loop)
        value = found.single_value if found is not None else None
        if isinstance(value, _DISPLAYS):
            iterable = value
    if isinstance(iterable, _DISPLAYS):
        return True  # `for phase in ["test", "train"]:`
    return _counted_small(iterable, scope) and repetition.python_repeats(loop, scope) is None


def _counted_small(iterable: cst.BaseExpression, scope: ScopeInfo) -> bool:
    """``range(n)`` or a chain through ``.take(n)`` with a small ``n``."""
    while isinstance(iterable, cst.Call):
        func = iterable.func
        if isinstance(func, cst.Name) and func.value == "range" and len(iterable.args) == 1:
            return _small_count(iterable.args[0].value, scope)
        if not isinstance(func, cst.Attribute):
            return False
        if func.attr.value == "take":
            return _small_count(argument(iterable, 0, "count"), scope)
        iterable = func.value
    return False


def _small_count(expr: Optional[cst.BaseExpression], scope: ScopeInfo) -> bool:
    """A literal count of at most ``FEW``, or a parameter whose default is one."""
    if isinstance(expr, cst.Name):
        found = assigned(expr.value, scope)
        params = [v for v in found.values if isinstance(v, tuple) and v[0] == "param"] if found else []
        if len(params) != 1 or len(found.values) != 1:
            return False
        expr = params[0][1].default
    if isinstance(expr, cst.Integer):
        try:
            return int(expr.value) <= FEW
        except ValueError:
            return False
    return False


def heavy_iteration(loop: cst.CSTNode, node: cst.CSTNode, scope: ScopeInfo) -> bool:
    if not isinstance(loop, (cst.For, cst.While)):
        return False
    order = scope.flow_order()
    for inner in walk(loop.body, skip=SCOPE_TYPES):
        if isinstance(inner, (cst.For, cst.While)) and not order.contains(inner, node) \
                and not under_condition(inner, loop, scope):  # PPO's update every few steps runs less often
            return True
        if isinstance(inner, cst.Call) and isinstance(inner.func, cst.Attribute) \
                and inner.func.attr.value in _TRAINING:
            return True
    return False
