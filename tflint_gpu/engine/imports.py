"""Imports a fix needs: which are missing, and where the fixer puts them.

The fixer (``fix.add_imports``) and the edits reported for a finding
(``lint.lint_source``, for JSON/SARIF consumers) share this placement, so an
editor applying a finding's edits gets exactly what ``--fix`` writes.
"""
from __future__ import annotations

from typing import List, Sequence

import libcst as cst


def missing_imports(module: cst.Module, imports: Sequence[str]) -> List[str]:
    """The import statements (source text) among ``imports`` the module lacks."""
    if not imports:
        return []
    # Only top-level import lines can match: codegen just those, not every statement.
    existing = {module.code_for_node(stmt).strip() for stmt in module.body
                if isinstance(stmt, cst.SimpleStatementLine)
                and any(isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body)}
    return [text for text in dict.fromkeys(imports) if text not in existing]


def insertion_index(module: cst.Module) -> int:
    """Where new imports go in ``module.body``: after the last top-level import
    statement, else after the module docstring, else first."""
    position = 0
    for i, stmt in enumerate(module.body):
        if isinstance(stmt, cst.SimpleStatementLine) and any(
            isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body
        ):
            position = i + 1
        elif i == 0 and isinstance(stmt, cst.SimpleStatementLine) and isinstance(stmt.body[0], cst.Expr) \
                and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString)):
            position = 1
    return position


def add_imports(module: cst.Module, imports: Sequence[str]) -> cst.Module:
    missing = missing_imports(module, imports)
    if not missing:
        return module
    body = list(module.body)
    position = insertion_index(module)
    new = [cst.parse_statement(text + module.default_newline) for text in missing]
    return module.with_changes(body=body[:position] + new + body[position:])
