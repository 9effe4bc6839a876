"""Rebuild a run of tf.data transformation calls in a new order.

``reorder(stages, new_order)`` takes consecutive stages of one expression
(innermost first, as ``engine.datasets.Chain.stages``) and the stage calls to
have instead, in their new order (the same calls, possibly fewer). It returns
the expression replacing the outermost original stage. Formatting belongs to
positions, not to calls: the n-th new stage keeps the dot, line break and
parentheses of the n-th old one, so a chain written one call per line stays
one call per line; the arguments (``num_parallel_calls=...`` and all) move
with their call.
"""
from __future__ import annotations

from typing import List, Sequence

import libcst as cst


def reorder(stages: Sequence[cst.Call], new_order: Sequence[cst.Call]) -> cst.BaseExpression:
    assert stages and new_order and len(new_order) <= len(stages)
    current: cst.BaseExpression = stages[0].func.value  # type: ignore[attr-defined]
    templates: List[cst.Call] = list(stages[: len(new_order) - 1]) + [stages[-1]]
    for template, moved in zip(templates, new_order):
        func = template.func
        assert isinstance(func, cst.Attribute) and isinstance(moved.func, cst.Attribute)
        current = template.with_changes(
            func=func.with_changes(value=current, attr=moved.func.attr),
            args=moved.args,
            whitespace_before_args=moved.whitespace_before_args,
        )
    return current
