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


def fix_label(safety: Optional[Safety], unsafe_too: bool) -> Optional[str]:
    """What the catalogue says of a rule's fixes: "safe", "unsafe", "sometimes safe" (``safety`` SAFE
    where it can be, unsafe elsewhere: ``unsafe_too``), or None for no fix."""
    if safety is None:
        return None
    return "sometimes safe" if safety is Safety.SAFE and unsafe_too else safety.value


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


# A notebook's findings and edits, and its name, are here rather than in ``tflint_gpu.notebook`` (which
# reads and lints notebooks, and re-exports them): a run answered from the cache over Python files
# never imports that module.
NOTEBOOK_SUFFIX = ".ipynb"


def is_notebook(path: str) -> bool:
    return path.lower().endswith(NOTEBOOK_SUFFIX)


@dataclass
class NotebookFinding(Finding):
    """A finding in a notebook: ``row``/``col`` are in cell ``cell`` (1-based, code cells only)."""

    cell: int = 0
    source_row: int = 0  # row in the joined source: orders findings as the notebook reads
    file_row: int = 0  # line of the .ipynb file holding that source line (SARIF, GitHub annotations)

    def sort_key(self) -> Tuple[str, int, int, str]:
        return (self.path, self.source_row, self.col, self.code)


@dataclass
class CellEdit(Edit):
    cell: int = 0


# A file's problem that is a diagnostic, as in Ruff: reported beside the findings (exit 1).
INVALID_SYNTAX = "invalid-syntax"  # CPython's parser refuses the file (or a notebook cell)
IO_ERROR = "io-error"  # the file cannot be read (Ruff's E902)


@dataclass
class FileProblem:
    """A file (or a notebook cell) that could not be checked. ``code``: ``INVALID_SYNTAX`` or
    ``IO_ERROR``, reported as a result in JSON and SARIF; None: the analysis itself failed (an
    internal error, on stderr only: exit 2). ``message``: the reason alone (CPython's message for a
    syntax error); ``row``/``col`` as a Finding's (1-based row, 0-based column; 1, 0 when the parser
    gives no position); ``cell``, ``file_row``: a notebook's code cell and the .ipynb file's line."""

    code: Optional[str]
    path: str
    message: str
    row: int = 1
    col: int = 0
    end_row: int = 0  # 0: the start
    end_col: int = 0
    cell: Optional[int] = None
    file_row: Optional[int] = None

    @property
    def end(self) -> Tuple[int, int]:
        return (self.end_row, self.end_col) if self.end_row else (self.row, self.col)

    def sort_key(self) -> Tuple[str, int, int, int, str]:
        return (self.path, self.cell or 0, self.row, self.col, self.code or "")
