"""Apply fixes: collect edits, apply them in one transform, repeat until stable.

Fixes whose nodes overlap an already accepted fix wait for the next round
(the file is linted again, so positions and nodes are fresh). A round whose
output does not parse is refused and the source stays as it was.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Sequence, Tuple

import libcst as cst

from tflint_gpu.engine.imports import add_imports
from tflint_gpu.engine.lint import LintResult, RuleClass, lint_source
from tflint_gpu.findings import Finding, Fix, Safety

MAX_ROUNDS = 10


@dataclass
class FixOutcome:
    source: str
    applied: int = 0
    findings: List[Finding] = field(default_factory=list)  # what remains after fixing
    applied_codes: List[str] = field(default_factory=list)
    refused: bool = False  # a round produced code that does not parse
    converged: bool = False  # a round found nothing left to apply (not stopped by MAX_ROUNDS)


def applicable(fix: Fix, unsafe: bool) -> bool:
    return fix.safety is Safety.SAFE or unsafe


class _Replacer(cst.CSTTransformer):
    def __init__(self, replacements: Dict[cst.CSTNode, cst.CSTNode]) -> None:
        super().__init__()
        self.replacements = replacements

    def on_visit(self, node: cst.CSTNode) -> bool:
        return node not in self.replacements

    def on_leave(self, original_node, updated_node):  # type: ignore[override]
        return self.replacements.get(original_node, updated_node)


def _overlaps(a: Tuple[Tuple[int, int], Tuple[int, int]], b: Tuple[Tuple[int, int], Tuple[int, int]]) -> bool:
    return not (a[1] <= b[0] or b[1] <= a[0])


def _choose(result: LintResult, unsafe: bool) -> List[Tuple[Finding, Fix]]:
    accepted: List[Tuple[Finding, Fix]] = []
    taken: List[Tuple[Tuple[int, int], Tuple[int, int]]] = []
    for finding, fix in zip(result.findings, result.fixes):
        if fix is None or not applicable(fix, unsafe):
            continue
        spans = [result.positions[node] for node in fix.replacements]
        if any(_overlaps(s, t) for s in spans for t in taken):
            continue
        accepted.append((finding, fix))
        taken.extend(spans)
    return accepted


def fix_source(source: str, path: str, rules: Sequence[RuleClass], *, unsafe: bool = False) -> FixOutcome:
    """Apply every applicable fix until nothing changes; return the final text."""
    outcome = FixOutcome(source)
    result = lint_source(source, path, rules)
    for _ in range(MAX_ROUNDS):
        accepted = _choose(result, unsafe)
        if not accepted or result.module is None:
            outcome.converged = True
            break
        replacements: Dict[cst.CSTNode, cst.CSTNode] = {}
        imports: List[str] = []
        for _finding, fix in accepted:
            replacements.update(fix.replacements)
            imports.extend(fix.imports)
        module = result.module.visit(_Replacer(replacements))
        module = add_imports(module, imports)
        new_source = module.code
        try:
            cst.parse_module(new_source)
        except Exception:
            outcome.refused = True
            break
        if new_source == outcome.source:
            outcome.converged = True
            break
        outcome.source = new_source
        outcome.applied += len(accepted)
        outcome.applied_codes.extend(finding.code for finding, _ in accepted)
        result = lint_source(new_source, path, rules)
    outcome.findings = result.findings
    return outcome
