"""Rebuild a run of tf.data transformation calls in a new order.

``reorder(stages, start, end, new_order)`` takes the stages of one expression
(innermost first, as ``semantic.datasets.Chain.stages``), the span
``stages[start:end]`` to rebuild, and the span's calls in their new order (the
same calls, possibly fewer). It returns the node to replace and its
replacement, or ``None`` when the comments cannot stay with their calls.

Layout belongs to positions: the n-th new stage keeps the dot, line break,
indentation and parentheses of the n-th old one, so a chain written one call
per line stays one call per line. Arguments (``num_parallel_calls=...`` and
all) and comments belong to calls: the comment at the end of a call's line
and the comment lines just above it move with the call. That needs the line
break after each moved call, so when the span has comments, the replaced node
reaches one stage further (or includes the closing parenthesis of a
parenthesised chain). A fix is refused (``None``) when a comment would have to
go where the layout has no line break, when a removed call carries a comment,
or when the comment after the span's last call lies outside the expression
(a multi-line chain that is not parenthesised).
"""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

import libcst as cst

_EMPTY_MODULE = cst.Module(body=[])


def reorder(stages: Sequence[cst.Call], start: int, end: int,
            new_order: Sequence[cst.Call]) -> Optional[Tuple[cst.CSTNode, cst.CSTNode]]:
    span = list(stages[start:end])
    assert span and new_order and len(new_order) <= len(span)
    assert all(any(s is call for s in span) for call in new_order)
    slots = [_dot(stage).whitespace_before for stage in span]
    after, holder = _after_slot(stages, end)

    # Comments in places no position or call owns: give up rather than misplace them.
    for i, stage in enumerate(span):
        if _has_comment(_dot(stage).whitespace_after):
            return None
        for j, paren in enumerate(stage.rpar):
            if (holder != "rpar" or i != len(span) - 1 or j != 0) and _has_comment(paren):
                return None
    if after is None and any(_breaks_line(slot) for slot in slots[1:]):
        return None  # the comment after the last call, if any, is beyond reach

    # What each call owns: the lines just above it and the comment ending its line.
    lead: Dict[int, Sequence[cst.EmptyLine]] = {}
    trail: Dict[int, Optional[cst.TrailingWhitespace]] = {}
    following = slots[1:] + [after]
    for stage, slot, nxt in zip(span, slots, following):
        lead[id(stage)] = slot.empty_lines if isinstance(slot, cst.ParenthesizedWhitespace) else ()
        trail[id(stage)] = nxt.first_line if isinstance(nxt, cst.ParenthesizedWhitespace) else None
    kept = {id(call) for call in new_order}
    for stage in span:
        if id(stage) not in kept and (_lines_have_comment(lead[id(stage)]) or _trail_comment(trail[id(stage)])):
            return None  # deleting the call would delete its comment

    templates: List[cst.Call] = span[: len(new_order) - 1] + [span[-1]]
    current: cst.BaseExpression = span[0].func.value  # type: ignore[attr-defined]
    previous: Optional[cst.Call] = None
    for position, (template, moved) in enumerate(zip(templates, new_order)):
        func = template.func
        assert isinstance(func, cst.Attribute) and isinstance(moved.func, cst.Attribute)
        slot = func.dot.whitespace_before  # type: ignore[union-attr]
        first = None if position == 0 else trail[id(previous)]
        new_slot = _fill(slot, lead[id(moved)], first, keep_first=position == 0)
        if new_slot is None:
            return None
        current = template.with_changes(
            func=func.with_changes(value=current, attr=moved.func.attr,
                                   dot=func.dot.with_changes(whitespace_before=new_slot)),  # type: ignore[union-attr]
            args=moved.args,
            whitespace_before_args=moved.whitespace_before_args,
        )
        previous = moved

    last_trail = trail[id(previous)]
    if after is None or not isinstance(after, cst.ParenthesizedWhitespace):
        if _trail_comment(last_trail):
            return None
        return span[-1], current
    new_after = after.with_changes(first_line=last_trail or cst.TrailingWhitespace())
    if new_after.deep_equals(after):
        return span[-1], current
    if holder == "next":
        outer = stages[end]
        func = outer.func
        assert isinstance(func, cst.Attribute)
        dot = func.dot.with_changes(whitespace_before=new_after)  # type: ignore[union-attr]
        return outer, outer.with_changes(func=func.with_changes(value=current, dot=dot))
    assert isinstance(current, cst.Call)
    rpar = list(current.rpar)
    rpar[0] = rpar[0].with_changes(whitespace_before=new_after)
    return span[-1], current.with_changes(rpar=rpar)


def _dot(stage: cst.Call) -> cst.Dot:
    func = stage.func
    assert isinstance(func, cst.Attribute) and isinstance(func.dot, cst.Dot)
    return func.dot


def _after_slot(stages: Sequence[cst.Call], end: int):
    """The whitespace after the span's last call that this fix can rewrite, and where it lives."""
    if end < len(stages):
        return _dot(stages[end]).whitespace_before, "next"
    last = stages[end - 1]
    if last.rpar:
        return last.rpar[0].whitespace_before, "rpar"
    return None, None


def _fill(slot: cst.BaseParenthesizableWhitespace, lead: Sequence[cst.EmptyLine],
          first: Optional[cst.TrailingWhitespace], keep_first: bool):
    """``slot`` (a position's whitespace before its dot) holding another call's lines above
    it and, unless ``keep_first``, the comment that ends the line before it."""
    if isinstance(slot, cst.ParenthesizedWhitespace):
        changes = {"empty_lines": list(lead)}
        if not keep_first:
            changes["first_line"] = first or cst.TrailingWhitespace()
        return slot.with_changes(**changes)
    # The call shares its line with the one before: no room for lines or a comment.
    if _lines_have_comment(lead) or (not keep_first and _trail_comment(first)):
        return None
    return slot


def _trail_comment(first: Optional[cst.TrailingWhitespace]) -> bool:
    return first is not None and first.comment is not None


def _lines_have_comment(lines: Sequence[cst.EmptyLine]) -> bool:
    return any(line.comment is not None for line in lines)


def _has_comment(node: cst.CSTNode) -> bool:
    return "#" in _EMPTY_MODULE.code_for_node(node)


def _breaks_line(slot: cst.BaseParenthesizableWhitespace) -> bool:
    return "\n" in _EMPTY_MODULE.code_for_node(slot) or "\r" in _EMPTY_MODULE.code_for_node(slot)


def append(last: cst.Call, attr: str, args: Sequence[cst.Arg]) -> cst.Call:
    """``last.attr(args)``, laid out like the chain: inside the parentheses that
    close a parenthesised chain, and on a line of its own when ``last`` starts
    one; the comment that ended ``last``'s line stays there."""
    func = last.func
    dot = cst.Dot()
    rpar = list(last.rpar)
    if isinstance(func, cst.Attribute) and isinstance(func.dot, cst.Dot) and rpar:
        own_line = func.dot.whitespace_before
        closing = rpar[0].whitespace_before
        if isinstance(own_line, cst.ParenthesizedWhitespace) and isinstance(closing, cst.ParenthesizedWhitespace):
            # `last` ends its line: the new call takes the line after it, at the same indentation.
            dot = cst.Dot(whitespace_before=own_line.with_changes(first_line=closing.first_line, empty_lines=[]))
            rpar[0] = rpar[0].with_changes(whitespace_before=closing.with_changes(first_line=cst.TrailingWhitespace()))
            return cst.Call(func=cst.Attribute(value=last.with_changes(lpar=[], rpar=[]), dot=dot, attr=cst.Name(attr)),
                            args=args, lpar=last.lpar, rpar=rpar)
    if rpar:
        return cst.Call(func=cst.Attribute(value=last.with_changes(lpar=[], rpar=[]), attr=cst.Name(attr)),
                        args=args, lpar=last.lpar, rpar=rpar)
    return cst.Call(func=cst.Attribute(value=last, attr=cst.Name(attr)), args=args)
