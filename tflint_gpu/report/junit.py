"""JUnit XML, as Ruff's ``--output-format junit``: one ``testsuite`` a file with findings, one
``testcase`` with a ``failure`` a finding (and one a file that could not be checked), its file,
line and column as attributes; a run with nothing to report is one suite holding one passing
test case (``No errors found``), so CI test-report readers show a pass, not an empty report.
Paths are relative to the current folder, with ``/`` separators.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Dict, List, Sequence, Tuple

from tflint_gpu.findings import FileProblem, Finding
from tflint_gpu.report.gitlab import project_path
from tflint_gpu.report.json_format import in_order

NAME = "tflint-gpu"


def _classname(path: str) -> str:
    """The file's path without its suffix (Ruff's classname: ``pkg/module``)."""
    folder, _, name = path.rpartition("/")
    stem = name.rsplit(".", 1)[0] if "." in name.lstrip(".") else name
    return f"{folder}/{stem}" if folder else stem


def _case(path: str, code: str, message: str, row: int, col: int, cell, file_row) -> Tuple[str, ET.Element]:
    shown = project_path(path, ".")
    case = ET.Element("testcase", {"name": f"{NAME}.{code}", "classname": _classname(shown), "file": shown,
                                   "line": str(file_row or 1) if cell else str(row), "column": str(col + 1)})
    where = f"cell {cell}, line {row}, col {col + 1}" if cell else f"line {row}, col {col + 1}"
    failure = ET.SubElement(case, "failure", {"message": message, "type": code})
    failure.text = f"{where}, {message}"
    return shown, case


def render(findings: Sequence[Finding], errors: List[str], *, problems: Sequence[FileProblem] = (),
           **_: object) -> str:
    suites: Dict[str, List[ET.Element]] = {}
    for item, (shown, case) in in_order(
            findings, problems,
            lambda f: _case(f.path, f.code, f.message, f.row, f.col, getattr(f, "cell", None),
                            getattr(f, "file_row", None)),
            lambda p: _case(p.path, p.code or "error", p.message, p.row, p.col, p.cell, p.file_row)):
        suites.setdefault(shown, []).append(case)
    total = sum(len(cases) for cases in suites.values())
    root = ET.Element("testsuites", {"name": NAME, "tests": str(total or 1), "failures": str(total), "errors": "0"})
    if not suites:
        suite = ET.SubElement(root, "testsuite", {"name": NAME, "tests": "1", "disabled": "0", "errors": "0",
                                                  "failures": "0", "package": NAME})
        ET.SubElement(suite, "testcase", {"name": "No errors found", "classname": NAME})
    for shown, cases in suites.items():
        suite = ET.SubElement(root, "testsuite", {"name": shown, "tests": str(len(cases)), "disabled": "0",
                                                  "errors": "0", "failures": str(len(cases)), "package": NAME})
        suite.extend(cases)
    ET.indent(root, space="    ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
