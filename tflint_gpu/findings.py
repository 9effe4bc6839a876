"""The data model at the bottom: what a rule reports and what reporters and the fixer read.

``Fix`` is what a rule offers (syntax-tree replacements); ``Finding`` with
its ``FixInfo`` and ``Edit`` is what leaves the engine (text positions and
text edits, no syntax tree). Nothing here imports from the rest of the
project, so every layer may import it.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Dict, List, Optional, Tuple

if TYPE_CHECKING:  # annotations only: importing findings loads no parser
    import libcst as cst


class Safety(str, enum.Enum):
    """How much a fix may change: the same two levels Ruff users know."""

    SAFE = "safe"  # values and dtypes stay identical
    UNSAFE = "unsafe"  # behaviour may change; applied only with --unsafe-fixes


@dataclass
class Fix:
    """Replace nodes of the module with new nodes; all or nothing.

    ``imports`` are import statements (source text such as
    ``"import tensorflow as tf"``) the replacement needs; the fixer adds those
    that the module does not already have. ``depends_on`` are nodes whose
    text the rule judged the fix safe on (the body a decorator change
    compiles, say): no other fix of the same round may replace anything
    inside them, so the fixer applies that one in a later round, after this
    rule has looked at the new text again.
    """

    message: str
    safety: Safety
    replacements: Dict[cst.CSTNode, cst.CSTNode]
    imports: Tuple[str, ...] = ()
    depends_on: Tuple[cst.CSTNode, ...] = ()


@dataclass
class Edit:
    content: str
    start: Tuple[int, int]  # (row 1-based, column 0-based)
    end: Tuple[int, int]


@dataclass
class FixInfo:
    """A fix as the reporters see it: text edits, no syntax tree."""

    message: str
    safety: Safety
    edits: List[Edit] = field(default_factory=list)


@dataclass
class Finding:
    code: str
    message: str
    path: str
    row: int  # 1-based
    col: int  # 0-based
    end_row: int
    end_col: int
    fix: Optional[FixInfo] = None
    name: str = ""

    def sort_key(self) -> Tuple[str, int, int, str]:
        return (self.path, self.row, self.col, self.code)
