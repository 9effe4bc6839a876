"""JSON output with Ruff's field names (columns are 1-based, filenames absolute).

In a notebook, ``cell`` is the code cell (1-based, code cells only, as Ruff
and nbQA count) and rows are lines of that cell; each edit names its cell too.
"""
from __future__ import annotations

import json
import os
from typing import Dict, List, Optional, Sequence

from tflint_gpu.findings import FileProblem, Finding
from tflint_gpu.report.text import statistics_rows
from tflint_gpu.rules.docs import rule_url


def _location(row: int, col: int) -> Dict[str, int]:
    return {"row": row, "column": col + 1}


def _edit(edit) -> Dict:
    data = {"content": edit.content, "location": _location(*edit.start), "end_location": _location(*edit.end)}
    if getattr(edit, "cell", None):
        data["cell"] = edit.cell
    return data


def finding_to_dict(finding: Finding) -> Dict:
    fix: Optional[Dict] = None
    if finding.fix is not None:
        fix = {
            "applicability": finding.fix.safety.value,
            "message": finding.fix.message,
            "edits": [_edit(e) for e in finding.fix.edits],
        }
    return {
        "code": finding.code,
        "message": finding.message,
        "filename": os.path.abspath(finding.path),
        "location": _location(finding.row, finding.col),
        "end_location": _location(finding.end_row, finding.end_col),
        "fix": fix,
        "noqa_row": finding.row,
        "url": rule_url(finding.code),
        "cell": getattr(finding, "cell", None),
    }


def problem_to_dict(problem: FileProblem) -> Dict:
    """A file that could not be checked, as Ruff reports one: ``invalid-syntax`` (CPython's message and
    position) or ``io-error``, no fix, no noqa row."""
    return {
        "code": problem.code,
        "message": problem.message,
        "filename": os.path.abspath(problem.path),
        "location": _location(problem.row, problem.col),
        "end_location": _location(*problem.end),
        "fix": None,
        "noqa_row": None,
        "url": None,
        "cell": problem.cell,
    }


def render(findings: Sequence[Finding], errors: List[str], *, problems: Sequence[FileProblem] = (),
           **_: object) -> str:
    return json.dumps([entry for _, entry in in_order(findings, problems, finding_to_dict, problem_to_dict)],
                      indent=2) + "\n"


def in_order(findings: Sequence[Finding], problems: Sequence[FileProblem], of_finding, of_problem) -> List:
    """(item, entry) of the findings (which come sorted) and of the problems that are diagnostics,
    each problem in its place among the findings of its file."""
    entries = [((f.path, getattr(f, "cell", None) or 0, f.row, f.col, f.code), i, f, of_finding(f))
               for i, f in enumerate(findings)]
    if problems:
        entries += [(p.sort_key(), len(entries) + i, p, of_problem(p)) for i, p in enumerate(problems) if p.code]
        entries.sort(key=lambda entry: entry[:2])
    return [(item, entry) for _, _, item, entry in entries]


def statistics(findings: Sequence[Finding], unsafe_fixes: bool) -> str:
    """``--statistics --format json``: Ruff's fields (code, name, count, fixable)."""
    rows = [
        {"code": code, "name": name, "count": count, "fixable": fixable}
        for code, name, count, fixable in statistics_rows(findings, unsafe_fixes)
    ]
    return json.dumps(rows, indent=2) + "\n"
