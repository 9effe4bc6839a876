"""SARIF 2.1.0: one run, the rules that have results as the driver's rules, fixes as replacements."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Dict, List, Optional, Sequence

import tflint_gpu
from tflint_gpu.findings import INVALID_SYNTAX, IO_ERROR, FileProblem, Finding
from tflint_gpu.report.json_format import in_order
from tflint_gpu.catalogue import all_infos as all_codes  # what the rules are, no rule imported
from tflint_gpu.rules.docs import index_url, rule_url, why

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _uri(path: str) -> str:
    absolute = Path(os.path.abspath(path))
    try:
        return absolute.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return absolute.as_uri()


def _region(start, end) -> Dict[str, int]:
    return {"startLine": start[0], "startColumn": start[1] + 1, "endLine": end[0], "endColumn": end[1] + 1}


def _notebook_result(f: Finding, rule_index: int) -> Dict:
    """A notebook finding: the region is the line of the .ipynb file that holds the source line (what a
    viewer of the file shows); the cell, line and column in the cell are in the message and properties.
    No ``fixes``: their regions would be lines of the cell, not of the file."""
    where = f"cell {f.cell}, line {f.row}, column {f.col + 1}"
    return {
        "ruleId": f.code,
        "ruleIndex": rule_index,
        "level": "warning",
        "message": {"text": f"{f.message} ({where})"},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": _uri(f.path)},
                    "region": {"startLine": f.file_row},
                },
                "logicalLocations": [{"name": f"cell {f.cell}", "kind": "module"}],
            }
        ],
        "properties": {"cell": f.cell, "cellLine": f.row, "cellColumn": f.col + 1,
                       "cellEndLine": f.end_row, "cellEndColumn": f.end_col + 1},
    }


# Ruff's names for a file it could not check; results of level "error".
PROBLEMS = {
    INVALID_SYNTAX: "The file is not valid Python: CPython's parser refuses it (its message and position).",
    IO_ERROR: "The file could not be read.",
}


def _problem_result(p: FileProblem) -> Dict:
    location: Dict = {"physicalLocation": {"artifactLocation": {"uri": _uri(p.path)}}}
    text = p.message
    if p.cell:  # a notebook cell: the line of the .ipynb file, the cell's line and column in the message
        text = f"{p.message} (cell {p.cell}, line {p.row}, column {p.col + 1})"
        if p.file_row:
            location["physicalLocation"]["region"] = {"startLine": p.file_row}
        location["logicalLocations"] = [{"name": f"cell {p.cell}", "kind": "module"}]
    else:
        location["physicalLocation"]["region"] = _region((p.row, p.col), p.end)
    return {"ruleId": p.code, "level": "error", "message": {"text": text}, "locations": [location]}


def render(findings: Sequence[Finding], errors: List[str], *, problems: Sequence[FileProblem] = (),
           failures: Optional[List[str]] = None, **_: object) -> str:
    """``problems`` that are diagnostics (a syntax or read error) are results of level error;
    ``failures`` (default: every error line), lines of an analysis that failed, are notifications."""
    failures = errors if failures is None else failures
    findings = list(findings)
    # The rules that have results, as Ruff lists them (astral-sh/ruff#13268): id, name, summary, the
    # "Why is this bad?" section as help and the page's link; the rest is on the page (a log of one
    # finding is a few KB, not the catalogue's every page twice).
    used = {f.code for f in findings} | {p.code for p in problems}
    rules = [rule for rule in all_codes() if rule.code in used]  # TFG001 (the engine's) too
    index = {rule.code: i for i, rule in enumerate(rules)}
    descriptors = [
        {
            "id": rule.code,
            "name": rule.name,
            "shortDescription": {"text": rule.summary()},
            "help": {"text": why(rule)},
            **({"helpUri": url} if (url := rule_url(rule.code)) else {}),
            "defaultConfiguration": {"level": "warning", "enabled": rule.default_enabled},
            "properties": {"fix": rule.fix_label()},
        }
        for rule in rules
    ]
    for code, text in PROBLEMS.items():
        if code in used:
            descriptors.append({"id": code, "name": code, "shortDescription": {"text": text},
                                "defaultConfiguration": {"level": "error", "enabled": True}})
    results = []
    for f, result in in_order(findings, problems, lambda f: f, _problem_result):
        if isinstance(f, FileProblem):
            results.append(result)
            continue
        if getattr(f, "cell", None):
            results.append(_notebook_result(f, index[f.code]))
            continue
        result = {
            "ruleId": f.code,
            "ruleIndex": index[f.code],
            "level": "warning",
            "message": {"text": f.message},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": _uri(f.path)},
                        "region": _region((f.row, f.col), (f.end_row, f.end_col)),
                    }
                }
            ],
        }
        if f.fix is not None:
            result["fixes"] = [
                {
                    "description": {"text": f"{f.fix.message} ({f.fix.safety.value} fix)"},
                    "artifactChanges": [
                        {
                            "artifactLocation": {"uri": _uri(f.path)},
                            "replacements": [
                                {"deletedRegion": _region(e.start, e.end), "insertedContent": {"text": e.content}}
                                for e in f.fix.edits
                            ],
                        }
                    ],
                }
            ]
        results.append(result)
    log = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "tflint-gpu",
                        "version": tflint_gpu.__version__,
                        # the index of the rule pages as installed (there is no website)
                        **({"informationUri": url} if (url := index_url()) else {}),
                        "rules": descriptors,
                    }
                },
                "invocations": [
                    {
                        "executionSuccessful": not failures,
                        "toolExecutionNotifications": [
                            {"level": "error", "message": {"text": error}} for error in failures
                        ],
                    }
                ],
                "results": results,
            }
        ],
    }
    return json.dumps(log, indent=2) + "\n"
