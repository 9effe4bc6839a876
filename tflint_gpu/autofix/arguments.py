"""Add arguments to a call where its layout stays as written."""
from __future__ import annotations

from typing import List, Sequence

import libcst as cst

_SPACE = cst.SimpleWhitespace(" ")
_NONE = cst.SimpleWhitespace("")


def append(args: Sequence[cst.Arg], new: Sequence[cst.Arg]) -> List[cst.Arg]:
    """``args`` followed by ``new``: the last new argument takes the old last one's comma (none, or a
    trailing one) and the space after it (the line break before a closing parenthesis on its own
    line), the old last one gets ``", "``: ``f(\\n    a, b\\n)`` + ``c=1`` -> ``f(\\n    a, b, c=1\\n)``."""
    args, new = list(args), list(new)
    if not new:
        return args
    if not args:
        return new
    last = args[-1]
    args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=_SPACE), whitespace_after_arg=_NONE)
    new = [a.with_changes(comma=cst.Comma(whitespace_after=_SPACE)) for a in new[:-1]] + \
        [new[-1].with_changes(comma=last.comma, whitespace_after_arg=last.whitespace_after_arg)]
    return args + new
