"""GitLab Code Quality: a JSON list of issues, one a finding (and one a file that could not be
checked), with the fields GitLab reads (``description``, ``check_name``, ``fingerprint``,
``severity``, ``location.path``, ``location.lines.begin``), as Ruff's ``--output-format gitlab``.

Paths are relative to ``$CI_PROJECT_DIR`` when it is set (GitLab sets it in a job), else to the
current folder, with ``/`` separators. A notebook's finding is placed on the line of the .ipynb file
that holds its source line (the cell and its line are in the description).

The fingerprint tells GitLab which issues of two pipelines are the same one: a hash of the path,
the code, the message and the text of the finding's line (its spaces stripped), and of the number
of identical findings before it in the file. It does not hold the line number, so a finding that
lines added above it move keeps its fingerprint; two identical findings on identical lines are
told apart by their order.
"""
from __future__ import annotations

import hashlib
import json
import os
from typing import Dict, List, Optional, Sequence, Tuple

from tflint_gpu.findings import FileProblem, Finding
from tflint_gpu.report.json_format import in_order

SEVERITY = "major"  # as Ruff: one severity for every finding


def project_path(path: str, root: Optional[str] = None) -> str:
    """``path`` relative to ``root`` (default: ``$CI_PROJECT_DIR``, else the current folder), POSIX-style."""
    root = root or os.environ.get("CI_PROJECT_DIR") or os.getcwd()
    try:
        relative = os.path.relpath(os.path.abspath(path), os.path.abspath(root))
    except ValueError:  # another drive
        relative = os.path.abspath(path)
    return relative.replace(os.sep, "/")


def _line_text(sources, path: str, row: int, cell: Optional[int]) -> str:
    lines = sources.lines(path, cell) if sources is not None else None
    if lines is None or not 0 < row <= len(lines):
        return ""
    return lines[row - 1].strip()


def fingerprint(path: str, code: str, message: str, line: str, cell: Optional[int], seen: Dict[Tuple, int]) -> str:
    """A hex digest of what the issue is and where in the code (not which line number it is on); ``seen``
    counts the identical ones met before it, whose number goes into the hash too."""
    key = (path, cell or 0, code, message, line)
    number = seen.get(key, 0)
    seen[key] = number + 1
    text = "\0".join((path, str(cell or 0), code, message, line, str(number)))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _issue(path: str, code: str, message: str, row: int, col: int, end_row: int, cell: Optional[int],
           file_row: Optional[int], line: str, seen: Dict[Tuple, int]) -> Dict:
    """One issue: a finding's or a problem's (a notebook's placed on the .ipynb file's line)."""
    shown = project_path(path)
    description = f"{code}: {message}"
    begin, end = row, end_row
    if cell:
        description += f" (cell {cell}, line {row}, column {col + 1})"
        begin = end = file_row or 1
    return {
        "description": description,
        "check_name": code,
        "fingerprint": fingerprint(shown, code, message, line, cell, seen),
        "severity": SEVERITY,
        "location": {"path": shown, "lines": {"begin": begin, "end": max(end, begin)}},
    }


def _finding(f: Finding, sources, seen: Dict[Tuple, int]) -> Dict:
    cell = getattr(f, "cell", None)
    return _issue(f.path, f.code, f.message, f.row, f.col, f.end_row, cell, getattr(f, "file_row", 0),
                  _line_text(sources, f.path, f.row, cell), seen)


def _problem(p: FileProblem, seen: Dict[Tuple, int]) -> Dict:
    return _issue(p.path, p.code or "", p.message, p.row, p.col, p.row, p.cell, p.file_row, "", seen)


def render(findings: Sequence[Finding], errors: List[str], *, problems: Sequence[FileProblem] = (),
           sources=None, **_: object) -> str:
    """The findings and the files that could not be checked (syntax or read errors); an analysis that
    failed is an error line on stderr, as in the other formats."""
    if sources is None:
        from tflint_gpu.report.full import Sources

        sources = Sources()
    seen: Dict[Tuple, int] = {}
    entries = in_order(findings, problems, lambda f: _finding(f, sources, seen), lambda p: _problem(p, seen))
    return json.dumps([entry for _, entry in entries], indent=2) + "\n"
