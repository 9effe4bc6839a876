"""Line and column of nodes, computed only for files that have findings.

One code-generation pass over the module records each node's two ranges,
exactly as LibCST's ``PositionProvider`` (syntactic: a statement without its leading
lines) and ``WhitespaceInclusivePositionProvider`` (the node's whole text,
for fix edits) define them. Going through ``MetadataWrapper`` costs about
twice as much: it also runs a full visitor pass over the tree even when no
provider needs one.
"""
from __future__ import annotations

from typing import Dict, Tuple

import libcst as cst
from libcst._position import CodePosition, CodeRange
from libcst.metadata.position_provider import PositionProvidingCodegenState


class _Ranges:
    """Where the codegen state records syntactic ranges (it expects a provider's ``_computed``)."""

    __slots__ = ("_computed",)

    def __init__(self) -> None:
        self._computed: Dict[cst.CSTNode, CodeRange] = {}


class _BothRangesState(PositionProvidingCodegenState):
    """Records, in the same pass, each node's whole-text range as well."""

    __slots__ = ("inclusive",)

    def after_codegen(self, node: cst.CSTNode) -> None:
        start = self._stack[-1]
        super().after_codegen(node)
        self.inclusive[node] = CodeRange(start, CodePosition(self.line, self.column))


def code_ranges(module: cst.Module) -> Tuple[Dict[cst.CSTNode, CodeRange], Dict[cst.CSTNode, CodeRange]]:
    """Every node's syntactic range and its whole-text range, from one pass."""
    sink = _Ranges()
    state = _BothRangesState(default_indent=module.default_indent, default_newline=module.default_newline,
                             provider=sink)  # type: ignore[arg-type]
    state.inclusive = {}
    module._codegen(state)
    return sink._computed, state.inclusive
