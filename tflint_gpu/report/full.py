"""``--output-format full``: each finding with its source lines and a caret under it, and its fix as
a preview (the lines it changes, as a small unified diff, marked safe or unsafe), as Ruff prints by
default; then the summary of the concise (text) format.

The source lines are read when the report is made (after ``--fix`` has written its fixes, so the
positions of the findings that remain are those of the text read): ``Sources`` reads each file once,
and for a notebook the code cell a finding names. A line it cannot read leaves the finding as its
one concise line.
"""
from __future__ import annotations

import re
import unicodedata
from typing import Dict, List, Optional, Sequence, Tuple

from tflint_gpu.findings import Edit, FileProblem, Finding, Safety
from tflint_gpu.report import text as text_report

CONTEXT = 2  # lines shown above and below a finding, as Ruff shows them
MAX_SPAN_LINES = 6  # a finding over more lines shows its first and last ones
TAB = "    "  # a tab as Ruff shows it
_LINE_END = re.compile(r"\r\n|\r|\n")  # Python's line ends (not str.splitlines: a form feed is no end)


def _lines(text: str) -> List[str]:
    lines = _LINE_END.split(text)
    return lines[:-1] if lines and lines[-1] == "" else lines


class Sources:
    """The lines of the files findings are in: ``given`` texts (stdin) by path, else read from disk,
    each once; None where a file or cell cannot be read."""

    def __init__(self, given: Optional[Dict[str, str]] = None) -> None:
        self.given = dict(given or {})
        self.texts: Dict[str, Optional[str]] = {}
        self.cells: Dict[str, Optional[List[str]]] = {}

    def text(self, path: str) -> Optional[str]:
        if path not in self.texts:
            self.texts[path] = self.given[path] if path in self.given else self._read(path)
        return self.texts[path]

    @staticmethod
    def _read(path: str) -> Optional[str]:
        from tflint_gpu.files import decode
        from tflint_gpu.findings import is_notebook

        try:
            with open(path, "rb") as handle:
                data = handle.read()
            return data.decode("utf-8-sig") if is_notebook(path) else decode(data).text
        except (OSError, UnicodeDecodeError, LookupError, SyntaxError):
            return None

    def lines(self, path: str, cell: Optional[int] = None) -> Optional[List[str]]:
        """The lines of ``path``, or of its code cell ``cell`` (1-based)."""
        if not cell:
            text = self.text(path)
            return None if text is None else _lines(text)
        if path not in self.cells:
            self.cells[path] = self._cells(path)
        cells = self.cells[path]
        return _lines(cells[cell - 1]) if cells is not None and 0 < cell <= len(cells) else None

    def _cells(self, path: str) -> Optional[List[str]]:
        from tflint_gpu.notebook import NotebookError, load

        text = self.text(path)
        if text is None:
            return None
        try:
            return [c.source for c in load(text.encode("utf-8")).cells]
        except (NotebookError, ValueError):
            return None


def _char(char: str) -> str:
    if char == "\t":
        return TAB
    if ord(char) < 0x20 or ord(char) == 0x7F:  # a form feed, say: its control picture
        return chr(0x2400 + ord(char)) if ord(char) < 0x20 else "\u2421"
    return char


def shown(line: str) -> str:
    """``line`` as printed: tabs as four spaces, control characters as their pictures."""
    return "".join(_char(c) for c in line)


def _diff_line(sign: str, line: str) -> str:
    return sign + "".join(c if c == "\t" else _char(c) for c in line)


def width(text: str) -> int:
    """Terminal columns of printed ``text``: wide (East Asian) characters take two, combining ones none."""
    total = 0
    for char in text:
        if unicodedata.combining(char):
            continue
        total += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return total


def _columns(line: str, start: int, end: int) -> Tuple[int, int]:
    """(offset, count) in terminal columns of ``line[start:end]`` as printed; at least one caret."""
    before = width(shown(line[:start]))
    return before, max(1, width(shown(line[:end])) - before)


def snippet(lines: List[str], row: int, col: int, end_row: int, end_col: int, label: str) -> List[str]:
    """The numbered lines around (``row``, ``col``)-(``end_row``, ``end_col``) (1-based rows, 0-based
    columns) with carets under the span and ``label`` after them."""
    if not 0 < row <= len(lines):
        return []
    end_row = min(max(end_row, row), len(lines))
    if end_row == row:
        marks = {row: _columns(lines[row - 1], col, max(end_col, col + 1))}
    else:
        first, last = lines[row - 1], lines[end_row - 1]
        indent = len(last) - len(last.lstrip(" \t\f"))
        marks = {row: _columns(first, col, len(first) if len(first) > col else col + 1),
                 end_row: _columns(last, min(indent, end_col), max(end_col, min(indent, end_col) + 1))}
    span = list(range(row, end_row + 1))
    if len(span) > MAX_SPAN_LINES:
        half = MAX_SPAN_LINES // 2
        span = span[:half] + [0] + span[-half:]  # 0: the lines left out
    numbers = list(range(max(1, row - CONTEXT), row)) + span + \
        list(range(end_row + 1, min(len(lines), end_row + CONTEXT) + 1))
    gutter = len(str(max(numbers)))
    pad = " " * gutter
    out = [f"{pad} |"]
    for number in numbers:
        if number == 0:
            out.append(f"{pad} | ...")
            continue
        out.append(f"{number:>{gutter}} | {shown(lines[number - 1])}".rstrip())
        if number in marks:
            offset, count = marks[number]
            tail = f" {label}" if number == end_row else ""
            out.append(f"{pad} | {' ' * offset}{'^' * count}{tail}")
    out.append(f"{pad} |")
    return out


def _apply(lines: List[str], first: int, last: int, edits: Sequence[Edit]) -> List[str]:
    """Lines ``first``..``last`` (1-based, inclusive) after ``edits``, which lie within them."""
    block = lines[first - 1:last]
    starts = [0]
    for line in block:
        starts.append(starts[-1] + len(line) + 1)
    text = "".join(line + "\n" for line in block)

    def offset(position: Tuple[int, int]) -> int:
        row, col = position
        if row < first:
            return 0
        if row - first >= len(block):
            return len(text)
        return min(starts[row - first] + col, len(text))

    for edit in sorted(edits, key=lambda e: (offset(e.start), offset(e.end)), reverse=True):
        text = text[:offset(edit.start)] + edit.content + text[offset(edit.end):]
    return _lines(text)


def _range(start: int, count: int) -> str:
    if count == 1:
        return str(start)
    return f"{start - 1 if count == 0 else start},{count}"


def fix_preview(lines: List[str], edits: Sequence[Edit], section: str = "") -> List[str]:
    """The lines the ``edits`` change, as unified diff hunks (no context), numbered as in the file
    (the new side after the earlier hunks of the same fix); ``section`` follows each ``@@``."""
    import difflib  # only where a fix is shown

    clusters: List[List[Edit]] = []
    for edit in sorted(edits, key=lambda e: (e.start, e.end)):
        if clusters and edit.start[0] <= max(e.end[0] for e in clusters[-1]) + 1:
            clusters[-1].append(edit)
        else:
            clusters.append([edit])
    out: List[str] = []
    shift = 0
    for cluster in clusters:
        first = max(1, min(e.start[0] for e in cluster))
        last = min(len(lines), max(e.end[0] for e in cluster))
        if first > len(lines):  # an insertion after the last line
            first, last = len(lines) + 1, len(lines)
        old = lines[first - 1:last] if last >= first else []
        new = _apply(lines, first, last, cluster) if last >= first else _lines("".join(e.content for e in cluster))
        matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
        for group in matcher.get_grouped_opcodes(0):
            i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
            header = f"@@ -{_range(first + i1, i2 - i1)} +{_range(first + shift + j1, j2 - j1)} @@"
            out.append(header + (f" {section}" if section else ""))
            for tag, a1, a2, b1, b2 in group:
                if tag == "equal":
                    continue
                out += [_diff_line("-", line) for line in old[a1:a2]]
                out += [_diff_line("+", line) for line in new[b1:b2]]
        shift += len(new) - len(old)
    return out


def _fix_label(safety: Safety) -> str:
    if safety is Safety.SAFE:
        return "Safe fix"
    return "Unsafe fix (it may change behaviour: applied only with `--fix --unsafe-fixes`)"


def block(finding: Finding, sources: Sources, unsafe_fixes: bool) -> List[str]:
    """One finding: its concise line, its source lines with carets, its fix and the preview of it."""
    cell = getattr(finding, "cell", None)
    out = [text_report.line(finding, unsafe_fixes)]
    lines = sources.lines(finding.path, cell)
    shown_lines = snippet(lines, finding.row, finding.col, finding.end_row, finding.end_col, finding.code) \
        if lines is not None else []
    pad = "  " if not shown_lines else " " * (shown_lines[0].index("|"))
    out += shown_lines
    fix = finding.fix
    if fix is None:
        return out
    out.append(f"{pad}= help: {fix.message}")
    by_cell: Dict[Optional[int], List[Edit]] = {}
    for edit in fix.edits:
        by_cell.setdefault(getattr(edit, "cell", None) or cell, []).append(edit)
    preview: List[str] = []
    for edit_cell, edits in sorted(by_cell.items(), key=lambda item: item[0] or 0):
        edit_lines = sources.lines(finding.path, edit_cell)
        if edit_lines is not None:
            preview += fix_preview(edit_lines, edits, f"cell {edit_cell}" if edit_cell else "")
    if preview:
        out += ["", f"{pad}{_fix_label(fix.safety)}:"] + [f"{pad}{line}" for line in preview]
    return out


def render(findings: Sequence[Finding], errors: List[str], *, fixed: int = 0, unsafe_fixes: bool = False,
           fix_mode: bool = False, problems: Sequence[FileProblem] = (), sources: Optional[Sources] = None,
           summary: bool = True, **_: object) -> str:
    sources = sources if sources is not None else Sources()
    out: List[str] = []
    for finding in findings:
        out += block(finding, sources, unsafe_fixes) + [""]
    if summary:
        out += text_report.summary(findings, errors, fixed=fixed, unsafe_fixes=unsafe_fixes, fix_mode=fix_mode,
                                   problems=problems)
    return "".join(line + "\n" for line in out)
