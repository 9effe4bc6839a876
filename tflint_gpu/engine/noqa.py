"""``# noqa`` comments, read as Ruff reads them.

A directive is a comment (a COMMENT token: ``x = "# noqa"`` holds none).
``# noqa`` alone is a blanket one; ``# noqa: TFG101, E501`` (any spacing:
``#noqa:TFG101``, ``# NOQA : TFG101``; codes are upper-case letters then
digits, separated by commas or spaces; text after them is a comment) names
codes, each matching the codes it is a prefix of, as in flake8. A colon with
no valid code after it (``# noqa: because``) suppresses nothing, as in Ruff.

The comment is read on the line where Python reads a comment for the finding's
line: the last line of a multi-line string (or f-string) or of a backslash
continuation the line is part of, as Ruff maps it. A parenthesised statement
over several lines keeps each line's own comment.

``# tflint-gpu: noqa`` on a line of its own exempts the file; ``# tflint-gpu:
noqa: TFG101, TFG301`` exempts it from those exact codes (as Ruff's ``# ruff:
noqa: F401``).

Cost: nothing is tokenized for a file whose text has no ``noqa``; otherwise the
file is tokenized once, and only when a finding's statement has ``noqa`` text
at or after the finding's line (or when unused directives are looked for, or
``--add-noqa`` places comments).
"""
from __future__ import annotations

import re
import tokenize
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from typing import Callable, Dict, FrozenSet, Iterable, List, Optional, Sequence, Set, Tuple

from tflint_gpu.engine.positions import LINE_END
from tflint_gpu.findings import Edit

UNUSED_NOQA = "TFG001"  # reported here, on directives (the rule catalogue describes it)
OWN_PREFIX = "TFG"  # codes of ours; other codes in a directive belong to other tools
# Where a directive may be: ``noqa`` right after a ``#`` and spaces (inline), or after ``# tflint-gpu:``
# (file level), as the lexers below read them; not ``noqa`` anywhere (a base85 blob holds it by chance,
# and its file would be tokenized for nothing: 0.18 s for a 2 MB get-pip.py whose parse takes 0.02 s).
_TEXT = re.compile(r"#\s*(?:tflint-gpu\s*:\s*)?noqa", re.IGNORECASE)
_FILE_TEXT = re.compile(r"tflint-gpu[ \t\f]*:[ \t\f]*noqa", re.IGNORECASE)
_STARTS = tuple(getattr(tokenize, name) for name in ("FSTRING_START", "TSTRING_START") if hasattr(tokenize, name))
_ENDS = tuple(getattr(tokenize, name) for name in ("FSTRING_END", "TSTRING_END") if hasattr(tokenize, name))
_SKIPPED = (tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER)
_BREAKS = (tokenize.NEWLINE, tokenize.NL)


@dataclass(frozen=True)
class Code:
    text: str
    start: int  # offsets in the text lexed
    end: int


@dataclass(frozen=True)
class Directive:
    """``start``: the ``#`` that opens it; ``end``: after ``noqa`` (blanket) or after its last
    code (offsets in the text lexed). ``codes``: None for a blanket ``# noqa``."""

    start: int
    end: int
    codes: Optional[Tuple[Code, ...]]

    def shifted(self, by: int) -> "Directive":
        codes = None if self.codes is None else tuple(Code(c.text, c.start + by, c.end + by) for c in self.codes)
        return Directive(self.start + by, self.end + by, codes)

    def covers(self, code: str) -> bool:
        return self.codes is None or any(code.startswith(c.text) for c in self.codes)


def _space(text: str, i: int) -> int:
    while i < len(text) and text[i].isspace():
        i += 1
    return i


def _upper(char: str) -> bool:
    return "A" <= char <= "Z"


def _digit(char: str) -> bool:
    return "0" <= char <= "9"


def _lex(comment: str, noqa_at: Callable[[str, int], Optional[int]]) -> Optional[Directive]:
    """The first valid directive in a comment's text: at each ``#``, ``noqa_at(comment, j)`` (``j``:
    after the ``#`` and its spaces) says where its ``noqa`` starts (None: no directive there)."""
    i = comment.find("#")
    while i >= 0:
        k = noqa_at(comment, _space(comment, i + 1))
        if k is not None and comment[k:k + 4].lower() == "noqa":
            found = _directive(comment, i, k + 4)
            if found is not None:
                return found
        i = comment.find("#", i + 1)
    return None


def _after_tool_name(comment: str, j: int) -> Optional[int]:
    """Where ``noqa`` may stand after ``tflint-gpu:`` at ``j`` (None: no ``tflint-gpu:`` there)."""
    if comment[j:j + 10].lower() != "tflint-gpu":
        return None
    k = _space(comment, j + 10)
    return _space(comment, k + 1) if comment[k:k + 1] == ":" else None


def lex_inline(comment: str) -> Optional[Directive]:
    """The ``# noqa`` directive in a comment's text (the first valid one), or None."""
    return _lex(comment, lambda text, j: j)


def lex_file(comment: str) -> Optional[Directive]:
    """The ``# tflint-gpu: noqa[: codes]`` directive in a comment's text, or None."""
    return _lex(comment, _after_tool_name)


def _miscased_codes(comment: str) -> List[Tuple[int, int, str]]:
    """(start, end, text) of each code of ours written in lower or mixed case in the list after
    ``noqa:`` (``# noqa: tfg904, E501``), which the directive's lexer does not take for a code."""
    found: List[Tuple[int, int, str]] = []
    lowered = comment.lower()
    at = lowered.find("noqa")
    while at >= 0:
        i = _space(comment, at + 4)
        if comment[i:i + 1] == ":":
            i += 1
            while True:
                i = _space(comment, i)
                j = i
                while j < len(comment) and (comment[j].isalnum() or comment[j] == "_"):
                    j += 1
                word = comment[i:j]
                if not word:
                    break
                if word.upper().startswith(OWN_PREFIX) and word != word.upper() and word[len(OWN_PREFIX):].isdigit():
                    found.append((i, j, word))
                i = _space(comment, j)
                if comment[i:i + 1] != ",":
                    break
                i += 1
        at = lowered.find("noqa", at + 4)
    return found


def _directive(text: str, start: int, i: int) -> Optional[Directive]:
    """What follows ``noqa`` at ``i``: the end or another comment (blanket), a colon and codes,
    spaces then a colon and codes, spaces then text (blanket); anything else is no directive."""
    if i >= len(text) or text[i] == "#":
        return Directive(start, i, None)
    if text[i] == ":":
        return _codes(text, start, i + 1)
    if text[i].isspace():
        j = _space(text, i)
        if text[j:j + 1] == ":":
            return _codes(text, start, j + 1)
        return Directive(start, i, None)
    return None  # `#noqaTFG101`, `# noqa; TFG101`


def _codes(text: str, start: int, i: int) -> Optional[Directive]:
    codes: List[Code] = []
    joined = False  # a code right after another one (`TFG101TFG201`): the next must be one too
    n = len(text)
    while i < n:
        i = _space(text, i)
        if i < n and text[i] == ",":
            i += 1
            continue
        if i >= n or not _upper(text[i]):
            break  # the rest is a comment (`# noqa: TFG101 see the issue`)
        j = i
        while j < n and _upper(text[j]):
            j += 1
        if j >= n or not _digit(text[j]):
            if joined:
                return None
            break
        while j < n and _digit(text[j]):
            j += 1
        codes.append(Code(text[i:j], i, j))
        i = j
        if i < n:
            char = text[i]
            if char == ",":
                i += 1
                joined = False
            elif char.isspace() or char == "#":
                joined = False
            elif _upper(char):
                joined = True
            else:
                return None  # `TFG101.`: not a list of codes
    if not codes:
        return None  # `# noqa:` or `# noqa: reason`: suppresses nothing
    return Directive(start, codes[-1].end, tuple(codes))


@dataclass(frozen=True)
class Exemption:
    """What a file's ``# tflint-gpu: noqa`` lines exempt it from: everything, or exact codes."""

    everything: bool
    codes: FrozenSet[str] = frozenset()

    def covers(self, code: str) -> bool:
        return self.everything or code in self.codes


def mentions_noqa(source: str) -> bool:
    return _TEXT.search(source) is not None


def file_exemption(source: str, index: Optional["NoqaIndex"] = None) -> Optional[Exemption]:
    """The file's exemption (None: none). Text without ``tflint-gpu: noqa`` costs one search."""
    # A plain search first (a case-blind pattern is read a character at a time: five times slower);
    # no character but these four lowercases to one of "noqa" (as for "tflint" there is "İ").
    if "noqa" not in source.lower() or _FILE_TEXT.search(source) is None:
        return None
    return (index if index is not None else NoqaIndex(source)).exemption()


class NoqaIndex:
    """The ``# noqa`` directives of one text, worked out when first asked for.

    ``lines``: the text split at Python's line ends (``LINE_END``), if already made;
    ``statements()``: the (first, last) rows of the module's top-level statements, in
    order, which lets a finding whose statement holds no ``noqa`` text after its line
    be answered without tokenizing. ``used``: per directive row, the indexes of its
    codes that suppressed a finding (``suppresses``)."""

    def __init__(self, source: str, lines: Optional[List[str]] = None,
                 statements: Optional[Callable[[], Sequence[Tuple[int, int]]]] = None) -> None:
        self.source = source
        self._lines = lines
        self._statements = statements
        self._bounds: Optional[Tuple[List[int], List[int]]] = None
        self._text: Optional[bool] = None
        self._candidates: Optional[List[int]] = None
        self._scanned = False
        self.directives: Dict[int, Tuple[int, Directive]] = {}  # row -> (column of its comment, directive)
        self._files: List[Directive] = []
        self._starts: List[int] = []  # rows mapped to a later row: (first, last) intervals
        self._ends: List[int] = []
        self.used: Dict[int, Set[int]] = {}
        # row -> (start, end, text) of each code of ours spelled in lower case after `noqa:` (`tfg904`):
        # no code, so the directive suppresses nothing (TFG001 says so)
        self.miscased: Dict[int, List[Tuple[int, int, str]]] = {}

    @property
    def lines(self) -> List[str]:
        if self._lines is None:
            self._lines = LINE_END.split(self.source)
        return self._lines

    @property
    def has_text(self) -> bool:
        if self._text is None:
            self._text = mentions_noqa(self.source)
        return self._text

    # -- reading ------------------------------------------------------------------
    def _scan(self) -> None:
        if self._scanned:
            return
        self._scanned = True
        lines = self.lines
        feed = iter([line + "\n" for line in lines[:-1]] + ([lines[-1]] if lines and lines[-1] else []))
        spans: List[Tuple[int, int]] = []
        opened: List[int] = []
        previous: Optional[Tuple[int, int]] = None  # (type, end row) of the last token
        try:
            for token in tokenize.generate_tokens(lambda: next(feed, "")):
                kind = token.type
                if kind == tokenize.COMMENT:
                    if _TEXT.search(token.string):
                        self._comment(token.start[0], token.start[1], token.string)
                elif kind == tokenize.STRING:
                    if token.end[0] > token.start[0]:
                        spans.append((token.start[0], token.end[0]))
                elif kind in _STARTS:
                    opened.append(token.start[0])
                elif kind in _ENDS and opened:
                    first = opened.pop()
                    if not opened and token.end[0] > first:
                        spans.append((first, token.end[0]))
                if kind in _SKIPPED:
                    continue
                if previous is not None and previous[0] not in _BREAKS and token.start[0] > previous[1]:
                    spans.append((previous[1], token.start[0]))  # a backslash continuation
                previous = (kind, token.end[0])
        except (tokenize.TokenError, SyntaxError, ValueError):
            # Not what CPython reads (it would not parse): each line's text, as far as it goes.
            self.directives, self._files, spans = {}, [], []
            for row, line in enumerate(lines, 1):
                at = line.find("#")
                if at >= 0 and _TEXT.search(line, at):
                    self._comment(row, at, line[at:])
        spans.sort()
        for first, last in spans:
            if self._ends and first <= self._ends[-1]:
                self._ends[-1] = max(self._ends[-1], last)
            else:
                self._starts.append(first)
                self._ends.append(last)

    def _comment(self, row: int, column: int, text: str) -> None:
        found = lex_inline(text)
        if found is not None:
            self.directives[row] = (column, found.shifted(column))
        miscased = _miscased_codes(text)
        if miscased:
            self.miscased[row] = [(column + start, column + end, code) for start, end, code in miscased]
        exemption = lex_file(text)
        if exemption is not None and not self.lines[row - 1][:column].strip():
            self._files.append(exemption)

    def exemption(self) -> Optional[Exemption]:
        self._scan()
        if not self._files:
            return None
        if any(d.codes is None for d in self._files):
            return Exemption(True)
        return Exemption(False, frozenset(c.text for d in self._files for c in d.codes or ()))

    def resolve(self, row: int) -> int:
        """The row whose comment Python reads for ``row``."""
        self._scan()
        i = bisect_right(self._starts, row) - 1
        return self._ends[i] if i >= 0 and row <= self._ends[i] else row

    def directive(self, row: int) -> Optional[Tuple[int, Directive]]:
        """(column of the comment, directive) on the row Python reads for ``row``."""
        return self.directives.get(self.resolve(row))

    # -- suppressing --------------------------------------------------------------
    def _may_reach(self, row: int) -> bool:
        """Can ``row`` be suppressed: is there ``noqa`` text on it, or later in its statement?"""
        if self._candidates is None:
            starts = [0] + [m.end() for m in LINE_END.finditer(self.source)]
            self._candidates = sorted({bisect_right(starts, m.start()) for m in _TEXT.finditer(self.source)})
        i = bisect_left(self._candidates, row)
        if i == len(self._candidates):
            return False
        if self._candidates[i] == row or self._statements is None:
            return True
        if self._bounds is None:
            rows = list(self._statements())
            self._bounds = ([first for first, _ in rows], [last for _, last in rows])
        firsts, lasts = self._bounds
        j = bisect_right(firsts, row) - 1
        return j < 0 or row > lasts[j] or self._candidates[i] <= lasts[j]

    def suppresses(self, row: int, code: str) -> bool:
        """Does a directive suppress ``code`` reported on ``row``? Records the codes that do."""
        if not self.has_text or (not self._scanned and not self._may_reach(row)):
            return False
        line = self.resolve(row)
        found = self.directives.get(line)
        if found is None:
            return False
        directive = found[1]
        if directive.codes is None:
            return True
        hits = {k for k, c in enumerate(directive.codes) if code.startswith(c.text)}
        if hits:
            self.used.setdefault(line, set()).update(hits)
        return bool(hits)

    # -- unused directives (TFG001) ------------------------------------------------
    def unused(self, ran: Iterable[str], known: Sequence[str]) -> List[Tuple[int, Directive, str, str, List[Edit]]]:
        """(row, directive, message, its fix's message, the edits of its fix) for each directive naming a
        code of ours that suppressed nothing on its line (while every rule it names ran), that names no code
        of ours, or that names one twice, and for each code of ours written in lower case (``# noqa:
        tfg904``: no code, it suppresses nothing; the fix upper-cases it). Blanket directives and other
        tools' codes are never reported; a directive naming TFG001 itself is left alone. Call after
        ``suppresses`` saw every finding."""
        if not self.has_text:
            return []
        self._scan()
        ran = set(ran)
        found = []
        for row in sorted(self.directives):
            column, directive = self.directives[row]
            if directive.codes is None:
                continue
            if any(c.text.startswith(OWN_PREFIX) and UNUSED_NOQA.startswith(c.text) for c in directive.codes):
                continue
            used = self.used.get(row, set())
            kinds: Dict[str, List[str]] = {"unused": [], "unknown": [], "duplicated": []}
            kept, seen = [], set()
            for k, code in enumerate(directive.codes):
                text = code.text
                if not text.startswith(OWN_PREFIX):
                    kept.append(text)
                    continue
                if text in seen:
                    kinds["duplicated"].append(text)
                    continue
                seen.add(text)
                named = [c for c in known if c.startswith(text)]
                if k in used:
                    kept.append(text)
                elif not named:
                    kinds["unknown"].append(text)
                elif all(c in ran for c in named):
                    kinds["unused"].append(text)
                else:
                    kept.append(text)  # a rule it names did not run here: it may be needed
            if not any(kinds.values()):
                continue
            parts = "; ".join(f"{kind}: {', '.join(f'`{c}`' for c in codes)}" for kind, codes in kinds.items()
                              if codes)
            found.append((row, directive, f"Unused `noqa` directive ({parts})", "Remove unused `noqa` directive",
                          [self._removal(row, column, directive, kept)]))
        for row in sorted(self.miscased):
            codes = self.miscased[row]
            spans = Directive(codes[0][0], codes[-1][1], None)
            named = ", ".join(f"`{code}`" for _, _, code in codes)
            found.append((row, spans, f"Invalid `noqa` directive: {named} is not a code (codes are upper case, "
                                      f"`{codes[0][2].upper()}`): it suppresses nothing",
                          "Write the codes in upper case",
                          [Edit(code.upper(), (row, start), (row, end)) for start, end, code in codes]))
        found.sort(key=lambda item: item[0])
        return found

    def _removal(self, row: int, column: int, directive: Directive, kept: List[str]) -> Edit:
        """The edit leaving ``kept`` codes in the directive, or removing it when none are left (with the
        text after its codes, a reason; another comment after it stays, as does one before it)."""
        text = self.lines[row - 1]
        if kept:
            return Edit("# noqa: " + ", ".join(kept), (row, directive.start), (row, directive.end))
        rest = text[directive.end:]
        other = rest.find("#")
        before = text[column:directive.start].strip()
        if other >= 0:  # `# noqa: TFG101  # another comment`
            return Edit("", (row, directive.start), (row, directive.end + other))
        start = len(text[:directive.start].rstrip()) if before else len(text[:column].rstrip())
        if start == 0 and not before:  # a comment line of its own: the line goes
            if row < len(self.lines):
                return Edit("", (row, 0), (row + 1, 0))
            return Edit("", (row, 0), (row, len(text)))
        return Edit("", (row, start), (row, len(text)))

    # -- adding directives (--add-noqa, the editor's quick fix) ---------------------
    def add_edit(self, row: int, codes: Iterable[str]) -> Optional[Edit]:
        """The edit making the comment Python reads for ``row`` suppress ``codes``: the codes
        added to its ``# noqa:`` list, or ``  # noqa: CODES`` at the end of the line; None
        where a blanket ``# noqa`` is there or it names them all already."""
        line = self.resolve(row)
        text = self.lines[line - 1] if line <= len(self.lines) else ""
        found = self.directives.get(line)
        wanted = sorted(set(codes))
        if found is None:
            end = len(text.rstrip())
            return Edit(f"  # noqa: {', '.join(wanted)}", (line, end), (line, len(text)))
        directive = found[1]
        if directive.codes is None:
            return None
        new = [code for code in wanted if not directive.covers(code)]
        if not new:
            return None
        return Edit(", " + ", ".join(new), (line, directive.end), (line, directive.end))


def add_edits(index: NoqaIndex, findings: Iterable[Tuple[int, str]]) -> List[Edit]:
    """One edit per line Python reads a comment on for these (row, code) findings."""
    by_line: Dict[int, List[str]] = {}
    for row, code in findings:
        by_line.setdefault(index.resolve(row), []).append(code)
    edits = [index.add_edit(line, codes) for line, codes in sorted(by_line.items())]
    return [edit for edit in edits if edit is not None]
