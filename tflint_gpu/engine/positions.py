"""Line and column of nodes, computed only for files that have findings.

One code-generation pass over the module records each node's two ranges,
exactly as LibCST's ``PositionProvider`` (syntactic: a statement without its leading
lines) and ``WhitespaceInclusivePositionProvider`` (the node's whole text,
for fix edits) define them. Going through ``MetadataWrapper`` costs about
twice as much: it also runs a full visitor pass over the tree even when no
provider needs one.
"""
from __future__ import annotations

import re
from typing import Collection, Dict, NamedTuple, Optional, Sequence, Tuple

import libcst as cst
from libcst._nodes.internal import CodegenState
from libcst._position import CodePosition, CodeRange
from libcst.metadata.position_provider import PositionProvidingCodegenState

# Where Python and LibCST end a line ("\r\n", "\r", "\n"); str.splitlines
# also splits at form feed, "\x85", "\u2028", ...
LINE_END = re.compile(r"\r\n|\r|\n")


class _Ranges:
    """Where the codegen state records syntactic ranges (it expects a provider's ``_computed``)."""

    __slots__ = ("_computed",)

    def __init__(self) -> None:
        self._computed: Dict[cst.CSTNode, CodeRange] = {}


class _BothRangesState(PositionProvidingCodegenState):
    """Records, in the same pass, each node's whole-text range as well, and the
    indentation in force where each node of ``contexts`` is written. With
    ``keep``, the ranges of other nodes are dropped once their parent is
    written (a parent's syntactic range may be hoisted from its children's)."""

    __slots__ = ("inclusive", "contexts", "indents", "keep", "written")

    def before_codegen(self, node: cst.CSTNode) -> None:
        if node in self.contexts:
            self.indents[node] = tuple(self.indent_tokens)
        super().before_codegen(node)
        if self.keep is not None:
            self.written.append([])  # the children written inside this node

    def after_codegen(self, node: cst.CSTNode) -> None:
        start = self._stack[-1]
        super().after_codegen(node)
        self.inclusive[node] = CodeRange(start, CodePosition(self.line, self.column))
        if self.keep is not None:
            syntactic = self.provider._computed
            for child in self.written.pop():
                if child not in self.keep:
                    syntactic.pop(child, None)
                    self.inclusive.pop(child, None)
            if self.written:
                self.written[-1].append(node)


class Ranges(NamedTuple):
    syntactic: Dict[cst.CSTNode, CodeRange]
    inclusive: Dict[cst.CSTNode, CodeRange]
    code: str  # module.code
    indents: Dict[cst.CSTNode, Tuple[str, ...]]  # of the nodes asked for


def code_ranges(module: cst.Module, contexts: Collection[cst.CSTNode] = (),
                keep: Optional[Collection[cst.CSTNode]] = None) -> Ranges:
    """Every node's syntactic range and its whole-text range, the code
    (``module.code``) and the indentation where each of ``contexts`` stands,
    from one pass. With ``keep``, the ranges of those nodes only (and the
    module's): memory for the nodes asked about, not two ranges for every
    node of the file."""
    sink = _Ranges()
    state = _BothRangesState(default_indent=module.default_indent, default_newline=module.default_newline,
                             provider=sink)  # type: ignore[arg-type]
    state.inclusive = {}
    state.contexts = contexts
    state.indents = {}
    state.keep = keep
    state.written = []
    module._codegen(state)
    return Ranges(sink._computed, state.inclusive, "".join(state.tokens), state.indents)


def code_in_context(module: cst.Module, node: cst.CSTNode, indent: Sequence[str]) -> str:
    """``node``'s code as it is written where the indentation is ``indent``
    (``Module.code_for_node`` writes it at none): the text that replaces a
    node's whole-text range."""
    state = CodegenState(default_indent=module.default_indent, default_newline=module.default_newline,
                         indent_tokens=list(indent))
    node._codegen(state)
    return "".join(state.tokens)


class SourceMap:
    """From positions in the code LibCST generates to positions in the text it read.

    LibCST drops a form feed that stands before a statement's indentation
    (``"\\f    y = 2"`` is written ``"    y = 2"``), so where its output and the
    file differ, columns on such lines shift by what was dropped. A line that
    differs otherwise, or a file whose line count changed, is not mapped:
    ``exact`` says whether a position can be trusted for an edit.
    """

    def __init__(self, source: str, generated: str) -> None:
        self.shift: Dict[int, int] = {}
        self.unmapped: set = set()
        self.all_unmapped = False
        if source == generated:
            return
        src, gen = LINE_END.split(source), LINE_END.split(generated)
        if len(src) != len(gen):
            self.all_unmapped = True
            return
        for row, (a, b) in enumerate(zip(src, gen), start=1):
            if a == b:
                continue
            dropped = len(a) - len(b)
            if dropped > 0 and a.endswith(b) and not a[:dropped].strip(" \t\f"):
                self.shift[row] = dropped
            else:
                self.unmapped.add(row)

    def exact(self, row: int) -> bool:
        return not self.all_unmapped and row not in self.unmapped

    def __call__(self, position: Tuple[int, int]) -> Tuple[int, int]:
        row, col = position
        return (row, col + self.shift.get(row, 0))
