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
from typing import ClassVar, Dict, Iterator, List, Optional, Tuple, Type

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
    that the module does not already have.
    """

    message: str
    safety: Safety
    replacements: Dict[cst.CSTNode, cst.CSTNode]
    imports: Tuple[str, ...] = ()


@dataclass
class Case:
    """One test case a rule carries with it (in the manner of Fixit's VALID/INVALID).

    ``flag`` is how many findings of this rule the code must produce (0: a
    look-alike that must stay silent). ``fixed`` is the expected source after
    ``--fix --unsafe-fixes`` (``None``: no fix is offered).
    """

    code: str
    flag: int = 1
    fixed: Optional[str] = None
    note: str = ""

    def __post_init__(self) -> None:
        self.code = textwrap.dedent(self.code).lstrip("\n")
        if self.fixed is not None:
            self.fixed = textwrap.dedent(self.fixed).lstrip("\n")


def flagged(code: str, fixed: Optional[str] = None, count: int = 1, note: str = "") -> Case:
    return Case(code, flag=count, fixed=fixed, note=note)


def clean(code: str, note: str = "") -> Case:
    return Case(code, flag=0, note=note)


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

# Text without which no function body in a file can run as a graph.
GRAPH_TEXT = ("function", ".map(", ".filter(", ".flat_map(", ".interleave(", ".reduce(", ".scan(", "_step", "def call")


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
