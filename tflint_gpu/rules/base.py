"""What a rule is: a class with a code, docs, its own test cases and an optional fix.

A rule never walks the tree itself. The engine makes one traversal of each
file, indexes the nodes rules ask for, works out which functions run as a
graph, and then calls ``visit_<NodeType>(node, ctx)`` on every selected rule
for every indexed node of that type, in source order. ``ctx`` (an
``semantic.facts.RuleContext``) answers the questions rules share: what a name
refers to, whether code runs traced, whether a value is a tensor.
"""
from __future__ import annotations

import inspect
import textwrap
from dataclasses import dataclass
from typing import ClassVar, Dict, Iterator, List, Optional, Sequence, Tuple, Type

import libcst as cst

from tflint_gpu.semantic import api
# Part of the rule API: rules build their fixes with ``Fix`` (defined with the
# findings, the data the engine reads) and state ``fix_safety`` with ``Safety``.
from tflint_gpu.findings import Fix, Safety, fix_label  # noqa: F401  (Fix: re-exported for rules)


# ``Rule.migration`` of a rule that reads the target per finding.
BY_TARGET = "by-target"

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
    code's values may differ (one of ``EFFECTS``). ``keras2``: the fixed code
    must also run where ``tf.keras`` is Keras 2 (tf_keras, ``TF_USE_LEGACY_KERAS``),
    computing what the original computes there (a fix for code that must run
    under both); the fix-execution test runs it there too. ``keras2_before``:
    the original, run where ``tf.keras`` is Keras 2 (the Keras it was written
    for), computes what the fixed code computes under Keras 3 (a migration fix
    that restores what Keras 3 silently changed); held to identical values, or, with
    ``keras2_before=CLOSE``, to values within 1e-4 (the same arithmetic done in another order, as
    tfa's optimizers and Keras 3's update).
    """

    code: str
    at: Tuple[Tuple[int, int, str], ...] = ()
    fixed: Optional[str] = None
    run: str = ""
    effect: str = IDENTICAL
    note: str = ""
    keras2: bool = False
    keras2_before: object = False  # True, or CLOSE

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
            run: str = "", effect: str = IDENTICAL, note: str = "", keras2: bool = False,
            keras2_before: object = False) -> Case:
    assert at, "a must-flag case pins its findings"
    assert not (keras2 or keras2_before) or fixed is not None, "only a fix runs under Keras 2"
    return Case(code, tuple(at), fixed, run, effect, note, keras2, keras2_before)


def clean(code: str, note: str = "") -> Case:
    return Case(code, note=note)


class Documented:
    """What every code's description reads from its docstring (a rule's, or a code the engine reports)."""

    @classmethod
    def docs(cls) -> str:
        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def summary(cls) -> str:
        return cls.docs().split("\n", 1)[0]

    @classmethod
    def fix_label(cls) -> Optional[str]:
        """What the catalogue says of its fixes (``findings.fix_label``)."""
        return fix_label(getattr(cls, "fix_safety", None), getattr(cls, "unsafe_fixes_too", False))


class Rule(Documented):
    """Base class of every rule. Subclasses set the class attributes below."""

    code: ClassVar[str]
    name: ClassVar[str]  # kebab-case, says what it finds
    message: ClassVar[str]  # the default one-line message
    # Text a file must contain for this rule to possibly fire: every group must
    # match, each by any one of its strings. Files that satisfy no selected
    # rule are never parsed.
    needs: ClassVar[Tuple[Tuple[str, ...], ...]] = ()
    fix_safety: ClassVar[Optional[Safety]] = None  # the strongest fix it offers
    # True when fix_safety is SAFE and some of its fixes are unsafe (tests/test_rule_cases.py checks it
    # against what its cases' fixes are): the catalogue says "sometimes safe"
    unsafe_fixes_too: ClassVar[bool] = False
    default_enabled: ClassVar[bool] = True
    # True: its findings are what breaks under Keras 3 / TF 2.16+ (a removed API...), so it is
    # off for a file whose project targets Keras 2 (``semantic.target``). BY_TARGET: only some
    # are (others, such as TF 1 names, break under any TF 2): it stays on and asks
    # ``ctx.target.keras3`` before reporting those. ``tflint-gpu upgrade`` runs both kinds.
    migration: ClassVar[object] = False
    cases: ClassVar[List[Case]] = []
    # The node types the rule's visit_* methods handle; filled in by __init_subclass__.
    node_types: ClassVar[Tuple[str, ...]] = ()
    # Node types whose occurrences the rule reads per scope (``ctx.nodes_in``)
    # besides those it visits: the one walk indexes them too.
    reads_index: ClassVar[Tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        cls.node_types = tuple(
            attr[len("visit_"):] for attr in dir(cls) if attr.startswith("visit_")
        )
        needs = cls.needs
        if not (isinstance(needs, tuple) and all(
                isinstance(group, tuple) and group and all(isinstance(text, str) and text for text in group)
                for group in needs)):
            # A bare tuple of strings would make each string a group of its characters: a
            # prefilter that lets every file through.
            raise TypeError(f"{cls.__name__}.needs: a tuple of groups (tuples) of strings, not {needs!r:.60}")
        if "code" in cls.__dict__:
            if not cls.__module__.startswith("tflint_gpu.rules."):
                _load_rules()  # a rule defined elsewhere (a test's) replaces the catalogue's, as it always did
            dict.__setitem__(REGISTRY, cls.code, cls)


def _load_rules() -> None:
    from tflint_gpu import rules

    rules.load_all()


class _Registry(dict):
    """Rules by code, the rule modules imported on the first read (``rules.load_all``): importing
    ``rules.base`` (or ``rules.docs``) imports no rule."""

    def __getitem__(self, code):
        _load_rules()
        return dict.__getitem__(self, code)

    def get(self, code, default=None):
        _load_rules()
        return dict.get(self, code, default)

    def __contains__(self, code) -> bool:
        _load_rules()
        return dict.__contains__(self, code)

    def __iter__(self):
        _load_rules()
        return dict.__iter__(self)

    def __len__(self) -> int:
        _load_rules()
        return dict.__len__(self)

    def keys(self):
        _load_rules()
        return dict.keys(self)

    def values(self):
        _load_rules()
        return dict.values(self)

    def items(self):
        _load_rules()
        return dict.items(self)


REGISTRY: Dict[str, Type[Rule]] = _Registry()

# Text without which no function body in a file can run as a graph (the engine's own lists).
GRAPH_TEXT = api.GRAPH_TEXT


def with_first_statements(block: "cst.IndentedBlock", statements: Sequence["cst.BaseStatement"]) -> "cst.IndentedBlock":
    """``block`` (a def's body) with ``statements`` first: after its docstring, if it has one."""
    body = list(block.body)
    first = body[0] if body else None
    at = 1 if (isinstance(first, cst.SimpleStatementLine) and len(first.body) == 1
               and isinstance(first.body[0], cst.Expr) and isinstance(first.body[0].value, cst.SimpleString)) else 0
    return block.with_changes(body=body[:at] + list(statements) + body[at:])


def all_rules() -> Iterator[Type[Rule]]:
    for code in sorted(REGISTRY):  # imports every rule module (once)
        yield REGISTRY[code]


# Codes the engine reports itself (TFG001 unused-noqa: ``rules.unused_noqa``): described as a
# rule is (code, name, docs, default, fix safety) and selected like one, but no Rule subclass
# (no visitor, cases or example pair), so they are not in REGISTRY nor in ``all_rules``.
ENGINE_CODES: Dict[str, type] = {}


def all_codes() -> Iterator[type]:
    """Every code a selection can name, by code: the rules and the engine's own codes."""
    list(all_rules())
    catalogue = {**REGISTRY, **ENGINE_CODES}
    for code in sorted(catalogue):
        yield catalogue[code]


def describe(code: str) -> Optional[type]:
    """The rule, or the engine's code, of ``code`` (None: no such code)."""
    return REGISTRY.get(code) or ENGINE_CODES.get(code)  # REGISTRY imports the rule modules (once)
