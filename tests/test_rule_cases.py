"""Every rule's own cases: must-flag, must-not-flag, expected fix, and fix laws."""
from __future__ import annotations

import libcst as cst
import pytest

from tflint_gpu.engine.fix import fix_source
from tflint_gpu.engine.lint import lint_source
from tflint_gpu.rules.base import all_rules

RULES = list(all_rules())
CASES = [
    pytest.param(rule, case, id=f"{rule.code}-{i}-{'flag' if case.flag else 'clean'}")
    for rule in RULES
    for i, case in enumerate(rule.cases)
]


@pytest.mark.parametrize("rule,case", CASES)
def test_case_findings(rule, case):
    findings = lint_source(case.code, "case.py", [rule]).findings
    assert [f.code for f in findings] == [rule.code] * case.flag, case.note


@pytest.mark.parametrize("rule,case", CASES)
def test_case_fix(rule, case):
    outcome = fix_source(case.code, "case.py", [rule], unsafe=True)
    expected = case.fixed if case.fixed is not None else case.code
    assert outcome.source == expected, case.note
    cst.parse_module(outcome.source)
    # Applying fixes twice changes nothing.
    assert fix_source(outcome.source, "case.py", [rule], unsafe=True).source == outcome.source


@pytest.mark.parametrize("rule,case", CASES)
def test_safe_fixes_only_without_unsafe_flag(rule, case):
    result = lint_source(case.code, "case.py", [rule])
    safe_only = fix_source(case.code, "case.py", [rule], unsafe=False).source
    if all(f.fix is None or f.fix.safety.value == "unsafe" for f in result.findings):
        assert safe_only == case.code


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
def test_all_rules_together_fix_to_a_fixed_point(rule, case):
    """Every rule's fixes applied together: valid code, and a second pass changes nothing."""
    outcome = fix_source(case.code, "case.py", RULES, unsafe=True)
    cst.parse_module(outcome.source)
    again = fix_source(outcome.source, "case.py", RULES, unsafe=True)
    assert again.source == outcome.source and again.applied == 0
    assert [f.code for f in again.findings] == [f.code for f in outcome.findings]
