"""Rewrite a subtree in one pass, replacing or removing nodes by identity."""
from __future__ import annotations

from typing import Mapping, Optional

import libcst as cst


def replace_nodes(root: cst.CSTNode, replacements: Mapping[cst.CSTNode, Optional[cst.CSTNode]]) -> cst.CSTNode:
    """``root`` with each key node (found by identity) replaced by its value,
    or removed from its parent where the value is None; a statement line left
    with no statements goes too. One traversal, so every key is found in the
    original tree (``deep_replace`` one node at a time would rebuild it)."""
    return root.visit(_Replace(replacements))


class _Replace(cst.CSTTransformer):
    def __init__(self, replacements: Mapping[cst.CSTNode, Optional[cst.CSTNode]]) -> None:
        super().__init__()
        self.replacements = replacements

    def on_leave(self, original_node, updated_node):
        if original_node in self.replacements:
            new = self.replacements[original_node]
            return cst.RemoveFromParent() if new is None else new
        if isinstance(updated_node, cst.SimpleStatementLine) and not updated_node.body:
            return cst.RemoveFromParent()
        return updated_node
