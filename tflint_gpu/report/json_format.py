"""JSON output with Ruff's field names (columns are 1-based, filenames absolute).

In a notebook, ``cell`` is the code cell (1-based, code cells only, as Ruff
and nbQA count) and rows are lines of that cell; each edit names its cell too.
"""
from __future__ import annotations

import json
import os
from typing import Dict, List, Optional, Sequence

from tflint_gpu.findings import Finding
from tflint_gpu.report.text import statistics_rows


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
        "url": None,
        "cell": getattr(finding, "cell", None),
    }


def render(findings: Sequence[Finding], errors: List[str], **_: object) -> str:
    return json.dumps([finding_to_dict(f) for f in findings], indent=2) + "\n"


def statistics(findings: Sequence[Finding], unsafe_fixes: bool) -> str:
    """``--statistics --format json``: Ruff's fields (code, name, count, fixable)."""
    rows = [
        {"code": code, "name": name, "count": count, "fixable": fixable}
        for code, name, count, fixable in statistics_rows(findings, unsafe_fixes)
    ]
    return json.dumps(rows, indent=2) + "\n"
