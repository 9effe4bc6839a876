"""Every rule's own cases: must-flag (pinned), must-not-flag, expected fix, and fix laws."""
from __future__ import annotations

import libcst as cst
import pytest

from tflint_gpu.engine.fix import fix_source
from tflint_gpu.engine.lint import lint_source
from tflint_gpu.rules.base import Safety, all_rules

RULES = list(all_rules())
CASES = [
    pytest.param(rule, case, id=f"{rule.code}-{i}-{'flag' if case.flag else 'clean'}")
    for rule in RULES
    for i, case in enumerate(rule.cases)
]


@pytest.mark.parametrize("rule,case", CASES)
def test_case_reports_exactly_the_pinned_findings(rule, case):
    findings = lint_source(case.code, "case.py", [rule]).findings
    got = [(f.code, f.row, f.col + 1) for f in findings]
    assert got == [(rule.code, row, col) for row, col, _ in case.at], case.note
    for finding, (_, _, start) in zip(findings, case.at):
        assert finding.message.startswith(start), (finding.message, case.note)


@pytest.mark.parametrize("rule,case", CASES)
def test_case_fix_gives_the_expected_source_and_is_idempotent(rule, case):
    outcome = fix_source(case.code, "case.py", [rule], unsafe=True)
    expected = case.fixed if case.fixed is not None else case.code
    assert outcome.source == expected, case.note
    cst.parse_module(outcome.source)
    assert fix_source(outcome.source, "case.py", [rule], unsafe=True).source == outcome.source


FIX_CASES = [p for p in CASES if p.values[1].fixed is not None]


@pytest.mark.parametrize("rule,case", FIX_CASES)
def test_fix_without_unsafe_flag_applies_exactly_the_safe_fixes(rule, case):
    """Without --unsafe-fixes: the source changes iff some finding has a safe fix,
    and the findings left are exactly those whose fix is unsafe or missing."""
    result = lint_source(case.code, "case.py", [rule])
    safe = [f for f in result.findings if f.fix is not None and f.fix.safety is Safety.SAFE]
    outcome = fix_source(case.code, "case.py", [rule], unsafe=False)
    assert (outcome.source != case.code) == bool(safe), case.note
    assert outcome.applied_codes.count(rule.code) >= len(safe)
    assert all(f.fix is None or f.fix.safety is Safety.UNSAFE for f in outcome.findings)


def test_the_safe_unsafe_split_is_exercised_both_ways():
    """The split test above means something only if cases of both kinds exist."""
    kinds = set()
    for param in FIX_CASES:
        rule, case = param.values
        for finding in lint_source(case.code, "case.py", [rule]).findings:
            if finding.fix is not None:
                kinds.add(finding.fix.safety)
    assert kinds == {Safety.SAFE, Safety.UNSAFE}


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_rule_is_documented_and_has_both_kinds_of_case(rule):
    docs = rule.docs()
    for heading in ("## What it does", "## Why is this bad?", "## Example", "## Fix safety", "## Measured effect"):
        assert heading in docs, f"{rule.code} docs lack {heading!r}"
    assert any(c.flag for c in rule.cases), "no must-flag case"
    assert any(not c.flag for c in rule.cases), "no must-not-flag case"
    assert rule.code[:4] == "TFG" + rule.code[3] and rule.code[3:].isdigit()
    if rule.fix_safety is not None:
        assert any(c.fixed is not None for c in rule.cases), "a fixable rule needs a case with its fix"


@pytest.mark.parametrize("rule,case", CASES)
def test_all_rules_fixes_together_reach_a_fixed_point(rule, case):
    """Every rule's fixes applied together: valid code; no fixable finding is left
    (the fixes did not create one); a further pass changes nothing."""
    outcome = fix_source(case.code, "case.py", RULES, unsafe=True)
    cst.parse_module(outcome.source)
    assert not outcome.refused and outcome.converged
    assert [f for f in outcome.findings if f.fix is not None] == [], case.note
    again = fix_source(outcome.source, "case.py", RULES, unsafe=True)
    assert again.source == outcome.source and again.applied == 0


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_the_catalogue_s_fix_safety_is_what_the_cases_fixes_are(rule):
    """``fix_safety`` is the strongest fix the cases show, and ``unsafe_fixes_too`` says whether unsafe
    ones come with safe ones (the catalogue then says "sometimes safe", as Ruff says "sometimes")."""
    seen = {f.fix.safety for case in rule.cases for f in lint_source(case.code, "case.py", [rule]).findings
            if f.fix is not None}
    strongest = Safety.SAFE if Safety.SAFE in seen else (Safety.UNSAFE if seen else None)
    assert rule.fix_safety is strongest
    assert rule.unsafe_fixes_too == (seen == {Safety.SAFE, Safety.UNSAFE})
    assert rule.fix_label() == {None: None, Safety.UNSAFE: "unsafe"}.get(
        strongest, "sometimes safe" if rule.unsafe_fixes_too else "safe")
