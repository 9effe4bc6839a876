"""What a rule is: a class with a code, docs, its own test cases and an optional fix.

A rule never walks the tree itself. The engine makes one traversal of each
file, indexes the nodes rules ask for, works out which functions run as a
graph, and then calls ``visit_<NodeType>(node, ctx)`` on every selected rule
for every indexed node of that type, in source order. ``ctx`` (an
``engine.lint.RuleContext``) answers the questions rules share: what a name
refers to, whether code runs traced, whether a value is a tensor.
"""
from __future__ import annotations

import enum
import inspect
import textwrap
from dataclasses import dataclass, field
from typing import ClassVar, Dict, Iterator, List, Optional, Sequence, Tuple, Type

import libcst as cst

from tflint_gpu.engine import context


class Safety(str, enum.Enum):
    """How much a fix may change: the same two levels Ruff users know."""

    SAFE = "safe"  # values and dtypes stay identical
    UNSAFE = "unsafe"  # behaviour may change; applied only with --unsafe-fixes


@dataclass
class Fix:
    """Replace nodes of the module with new nodes; all or nothing.

    ``imports`` are import statements (source text such as
    ``"import tensorflow as tf"``) the replacement needs; the fixer adds those
    that the module does not already have.
    """

    message: str
    safety: Safety
    replacements: Dict[cst.CSTNode, cst.CSTNode]
    imports: Tuple[str, ...] = ()


# How the values computed by a case's code may differ after its fix, checked by
# running both under TensorFlow (tests/test_fix_execution.py). A safe fix is
# always held to IDENTICAL.
IDENTICAL = "identical"  # same values, dtypes and shapes
RANDOM = "random"  # a different random stream: same dtypes and shapes
FIXES_ERROR = "fixes-error"  # before raises while running; after runs
CHANGES = "changes"  # the fix changes values on purpose (documented by the rule)
CLOSE = "close"  # same dtypes and shapes, values within 1e-4 (XLA rounding)
EFFECTS = (IDENTICAL, RANDOM, FIXES_ERROR, CHANGES, CLOSE)


@dataclass
class Case:
    """One test case a rule carries with it (in the manner of Fixit's VALID/INVALID).

    ``at`` pins every finding the code must produce: ``(line, column, message
    start)``, 1-based as the text output shows them; empty for a look-alike
    that must stay silent. ``fixed`` is the expected source after ``--fix
    --unsafe-fixes`` (``None``: no fix is offered). ``run`` is code appended
    to both the original and the fixed source when they are executed under
    TensorFlow, to call what the case defines; ``effect`` says how the fixed
    code's values may differ (one of ``EFFECTS``).
    """

    code: str
    at: Tuple[Tuple[int, int, str], ...] = ()
    fixed: Optional[str] = None
    run: str = ""
    effect: str = IDENTICAL
    note: str = ""

    def __post_init__(self) -> None:
        self.code = textwrap.dedent(self.code).lstrip("\n")
        if self.fixed is not None:
            self.fixed = textwrap.dedent(self.fixed).lstrip("\n")
        self.run = textwrap.dedent(self.run).strip("\n")
        self.at = tuple(tuple(item) for item in self.at)  # type: ignore[misc]
        assert self.effect in EFFECTS, self.effect

    @property
    def flag(self) -> int:
        return len(self.at)


def flagged(code: str, fixed: Optional[str] = None, *, at: Sequence[Tuple[int, int, str]],
            run: str = "", effect: str = IDENTICAL, note: str = "") -> Case:
    assert at, "a must-flag case pins its findings"
    return Case(code, tuple(at), fixed, run, effect, note)


def clean(code: str, note: str = "") -> Case:
    return Case(code, note=note)


class Rule:
    """Base class of every rule. Subclasses set the class attributes below."""

    code: ClassVar[str]
    name: ClassVar[str]  # kebab-case, says what it finds
    message: ClassVar[str]  # the default one-line message
    # Text a file must contain for this rule to possibly fire: every group must
    # match, each by any one of its strings. Files that satisfy no selected
    # rule are never parsed.
    needs: ClassVar[Tuple[Tuple[str, ...], ...]] = ()
    fix_safety: ClassVar[Optional[Safety]] = None  # the strongest fix it offers
    default_enabled: ClassVar[bool] = True
    cases: ClassVar[List[Case]] = []
    # The node types the rule's visit_* methods handle; filled in by __init_subclass__.
    node_types: ClassVar[Tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        cls.node_types = tuple(
            attr[len("visit_"):] for attr in dir(cls) if attr.startswith("visit_")
        )
        if "code" in cls.__dict__:
            REGISTRY[cls.code] = cls

    @classmethod
    def docs(cls) -> str:
        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def summary(cls) -> str:
        return cls.docs().split("\n", 1)[0]


REGISTRY: Dict[str, Type[Rule]] = {}

# Text without which no function body in a file can run as a graph (the engine's own lists).
GRAPH_TEXT = context.GRAPH_TEXT


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


def all_rules() -> Iterator[Type[Rule]]:
    from tflint_gpu import rules as _rules  # noqa: F401  (imports every rule module)

    for code in sorted(REGISTRY):
        yield REGISTRY[code]
