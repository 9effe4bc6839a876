"""Parse a new version of a text by reusing the unchanged top-level statements of the last one.

The language server checks a document again after every edit, and most edits
change one statement of a long file. ``Reparser`` keeps the last text's LibCST
module and, for the next text, parses only the top-level statements between
the unchanged lines at the start and at the end; the statements before and
after are the previous module's own nodes. The result is the module a full
parse gives (``deep_equals``; tested over random edits of real files), or the
full parse itself wherever that is not certain:

* statements are found from CPython's ``ast`` of the new text (its syntax
  verdict, which every check makes anyway): their first line (the first
  decorator) and last line, statements written on one line (``a = 1; b = 2``)
  taken as the one LibCST statement they are;
* a boundary between reused and parsed statements sits only where the lines
  between the two statements are empty or start with ``#`` at column 0: LibCST
  then gives all of them to the next statement (its ``leading_lines``) and none
  to the previous one's block (an indented comment after a block is that
  block's ``footer``);
* the parsed part's lines before its first statement, which LibCST reads as
  that part's header, become its first statement's ``leading_lines``;
* the module's own fields (``default_indent``, which an ``IndentedBlock``'s
  ``indent`` is relative to, ``has_trailing_newline``, ``encoding``) must come
  out as a full parse finds them, else the text is parsed whole;
* a text with a carriage return or a form feed is parsed whole.
"""
from __future__ import annotations

import ast
from typing import List, Optional, Sequence, Tuple

import libcst as cst

Group = Tuple[int, int]  # (first line, last line) of one top-level statement, 1-based


def statement_lines(tree: ast.Module, lines: Sequence[str]) -> Optional[List[Group]]:
    """The lines of each of the module's LibCST top-level statements, from CPython's tree
    (None where a statement's first line does not start where it should)."""
    grouped = statement_groups(tree.body, lines)
    return None if grouped is None else [(first, last) for first, last, _ in grouped]


def statement_groups(statements: Sequence[ast.stmt], lines: Sequence[str],
                     indent: str = "") -> Optional[List[Tuple[int, int, List[ast.stmt]]]]:
    """The (first line, last line, CPython's statements) of each LibCST statement of a block whose
    CPython statements are ``statements``, written at ``indent``: statements on one line
    (``a = 1; b = 2``) are the one ``SimpleStatementLine`` they are in LibCST, and a statement's
    first line is that of its first decorator. None where a statement's first line does not
    start, after ``indent``, with its first token."""
    groups: List[Tuple[int, int, List[ast.stmt]]] = []
    depth = len(indent)
    for statement in statements:
        first = statement.lineno
        decorators = getattr(statement, "decorator_list", ())
        if decorators:
            first = min(first, min(d.lineno for d in decorators))
            if not lines[first - 1].startswith("@", depth):
                return None  # `@\` continued: not the line the decorator's `@` is on
        last = statement.end_lineno or statement.lineno
        if groups and first == groups[-1][1]:  # `a = 1; b = 2`: one SimpleStatementLine
            groups[-1] = (groups[-1][0], max(last, groups[-1][1]), groups[-1][2] + [statement])
            continue
        line = lines[first - 1]
        if len(line) <= depth or not line.startswith(indent) or line[depth] in " \t#":
            return None
        groups.append((first, last, [statement]))
    return groups


def _safe(lines: Sequence[str], start: int, stop: int) -> bool:
    """Are lines ``start``..``stop - 1`` (1-based) each empty or a comment at column 0?"""
    return all(not line or line[0] == "#" for line in lines[start - 1:stop - 1])


def _has_block(statement: cst.CSTNode) -> bool:
    return isinstance(getattr(statement, "body", None), cst.IndentedBlock)


class Parsed:
    """One text with its module, its statements' lines and CPython's tree."""

    __slots__ = ("text", "lines", "module", "groups", "tree")

    def __init__(self, text: str, lines: List[str], module: cst.Module, groups: List[Group],
                 tree: ast.Module) -> None:
        self.text = text
        self.lines = lines
        self.module = module
        self.groups = groups
        self.tree = tree


class Reparser:
    """Parses successive versions of one document (``parse``); ``full`` and ``reused``
    count how each was parsed (for tests and the latency benchmark)."""

    def __init__(self) -> None:
        self.last: Optional[Parsed] = None
        self.full = 0
        self.reused = 0

    def parse(self, text: str, tree: ast.Module) -> cst.Module:
        """The LibCST module of ``text``, whose ``ast`` (CPython accepted it) is ``tree``.
        Raises what ``cst.parse_module`` raises."""
        simple = "\r" not in text and "\f" not in text
        lines = text.split("\n")
        groups = statement_lines(tree, lines) if simple else None
        module = None
        if groups is not None and self.last is not None:
            module = self._spliced(self.last, text, lines, groups)
        if module is None:
            module = cst.parse_module(text)
            self.full += 1
        else:
            self.reused += 1
        if groups is not None and len(groups) == len(module.body):
            self.last = Parsed(text, lines, module, groups, tree)
        else:
            self.last = None
        return module

    def _spliced(self, old: Parsed, text: str, lines: List[str], groups: List[Group]) -> Optional[cst.Module]:
        old_lines, old_groups = old.lines, old.groups
        if text == old.text:
            return old.module
        n, n_old = len(groups), len(old_groups)
        limit = min(len(lines), len(old_lines))
        prefix = 0
        while prefix < limit and lines[prefix] == old_lines[prefix]:
            prefix += 1
        suffix = 0
        while suffix < limit - prefix and lines[-1 - suffix] == old_lines[-1 - suffix]:
            suffix += 1
        shift = len(lines) - len(old_lines)
        # Reused at the start: statements wholly in the common lines, the same in both texts,
        # each followed (in both texts) by lines that go to the next statement.
        keep_start = 0
        while keep_start < n and keep_start < n_old and groups[keep_start][1] <= prefix \
                and groups[keep_start] == old_groups[keep_start]:
            keep_start += 1
        # Reused at the end: statements, and the lines before them, in the common lines.
        keep_end = 0
        first_common = len(lines) - suffix + 1  # the first line of the common end
        while keep_end < n - keep_start and keep_end < n_old - keep_start:
            k, k_old = n - 1 - keep_end, n_old - 1 - keep_end
            gap_start = groups[k - 1][1] + 1 if k > 0 else 1
            old_gap_start = old_groups[k_old - 1][1] + 1 if k_old > 0 else 1
            if gap_start < first_common or k == 0 or k_old == 0 \
                    or (groups[k][0] - shift, groups[k][1] - shift) != old_groups[k_old] \
                    or gap_start - shift != old_gap_start:
                break
            keep_end += 1
        while True:
            if keep_start + keep_end >= n:  # nothing left to parse: parse a reused neighbour again
                if keep_end:
                    keep_end -= 1
                elif keep_start:
                    keep_start -= 1
                else:
                    return None
                continue
            if keep_start and not (self._boundary_after(lines, groups, keep_start - 1)
                                   and self._boundary_after(old_lines, old_groups, keep_start - 1)):
                keep_start -= 1
                continue
            if keep_end and not (self._boundary_after(lines, groups, n - keep_end - 1)
                                 and self._boundary_after(old_lines, old_groups, n_old - keep_end - 1)):
                keep_end -= 1
                continue
            break
        if not keep_start and not keep_end:
            return None
        if keep_start and prefix < 2:
            return None  # an encoding declaration may be on line 2
        start = groups[keep_start - 1][1] + 1 if keep_start else 1
        if keep_end:
            stop = groups[n - keep_end - 1][1]  # the last line of the last statement parsed
            chunk = "\n".join(lines[start - 1:stop]) + "\n"
        else:
            chunk = "\n".join(lines[start - 1:])
        part = cst.parse_module(chunk)
        if len(part.body) != n - keep_start - keep_end:
            return None
        body = list(part.body)
        if keep_start and part.header:
            body[0] = body[0].with_changes(leading_lines=[*part.header, *body[0].leading_lines])
        before = list(old.module.body[:keep_start])
        after = list(old.module.body[n_old - keep_end:]) if keep_end else []
        indent = self._default_indent(old.module.default_indent, before, part, body, after)
        if indent is None:
            return None
        return old.module.with_changes(
            body=before + body + after,
            header=old.module.header if keep_start else part.header,
            footer=old.module.footer if keep_end else part.footer,
            has_trailing_newline=old.module.has_trailing_newline if keep_end else part.has_trailing_newline,
            encoding=old.module.encoding if keep_start else part.encoding,
            default_indent=indent,
        )

    @staticmethod
    def _default_indent(old: str, before: Sequence[cst.CSTNode], part: cst.Module, body: Sequence[cst.CSTNode],
                        after: Sequence[cst.CSTNode]) -> Optional[str]:
        """The default indent a full parse finds (that of the first indented block), when every
        reused and parsed ``IndentedBlock`` is relative to it (their ``indent`` is None when
        equal to their own module's default); None otherwise."""
        parsed = any(_has_block(s) for s in body)
        if any(_has_block(s) for s in before):
            return old if not parsed or part.default_indent == old else None
        if parsed:
            return part.default_indent if part.default_indent == old or not any(_has_block(s) for s in after) \
                else None
        later = next((s for s in after if _has_block(s)), None)
        if later is None:
            return part.default_indent  # no indented block anywhere: LibCST's fallback
        return old if later.body.indent is None else None

    @staticmethod
    def _boundary_after(lines: Sequence[str], groups: Sequence[Group], k: int) -> bool:
        """Do the lines after statement ``k`` (up to the next one) all go to the next statement?"""
        stop = groups[k + 1][0] if k + 1 < len(groups) else len(lines) + 1
        # A last line ending in `\\` continues the statement on the next line, as LibCST reads it.
        return not lines[groups[k][1] - 1].endswith("\\") and _safe(lines, groups[k][1] + 1, stop)
