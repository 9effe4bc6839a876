"""Jupyter notebooks (``.ipynb``, nbformat 4): check and fix their code cells.

The code cells are joined, one ``\\n`` between cells, into one Python source
that is linted (or fixed) once, so a name defined in one cell is known in the
next. IPython syntax is masked line by line (``%magic``, ``!shell``,
``x = !cmd``, ``obj?``, ``%%cell`` magics) so LibCST parses the rest and the
other lines keep their positions; each line of the joined source maps back to
(cell, line in cell). Cells are numbered as nbQA and Ruff do: the 1-based
count of code cells, i.e. the ``In [n]`` of a fresh "run all".

A fix never moves code across cells: the fixer is given the row each cell
starts on (``Joined.starts``) and applies no fix whose edits do not all lie
inside one cell (the finding stays, without a fix; a finding's fix is dropped
the same way when findings are reported), and it carries those rows through
its rounds, so the fixed source is cut back into the cells where the edits
put each line, not where a line diff guesses. Within a cell a line diff
restores the masked lines, which must be untouched; then only the
``"source"`` values of the changed cells are replaced in the file's text,
laid out as the file lays out the others, and the result is checked by
parsing it again. Every other byte stays as it was. An import a fix needs is
new text: put after the last import above, and moved up to the first cell
that needs it.
"""
from __future__ import annotations

import ast
import bisect
import codecs
import difflib
import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, Set, Tuple

from tflint_gpu.findings import INVALID_SYNTAX, IO_ERROR, NOTEBOOK_SUFFIX, CellEdit, Edit, FileProblem, Finding, \
    FixInfo, NotebookFinding
from tflint_gpu.findings import is_notebook  # noqa: F401 (callers ask this module)

# The engine (and LibCST) is imported by the functions that lint or parse, so that reading a notebook's
# name, its cells or its cached findings (``engine.cache``, the command line's start) loads no parser.
if TYPE_CHECKING:
    from tflint_gpu.engine.lint import RuleClass

SUFFIX = NOTEBOOK_SUFFIX
# Cell magics whose body is Python run in the kernel's namespace: only their first line is masked.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug"})
MASK = "pass"


class NotebookError(Exception):
    """The notebook cannot be read; the message is one line without the path."""


# ---------------------------------------------------------------------------
# Reading: the JSON, and where each code cell's "source" value sits in the text.

_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


@dataclass
class Cell:
    index: int  # position in the notebook's "cells"
    number: int  # 1-based among code cells
    source: str
    span: Tuple[int, int]
    items: List[Tuple[int, int]]  # element spans when "source" is a list
    is_list: bool


@dataclass
class Notebook:
    text: str
    bom: bool
    data: dict
    cells: List[Cell]
    python: bool = True

    def encode(self, text: str) -> bytes:
        data = text.encode("utf-8")
        return codecs.BOM_UTF8 + data if self.bom else data


def _skip(text: str, i: int) -> int:
    return _WS.match(text, i).end()


def _expect(text: str, i: int, char: str) -> int:
    i = _skip(text, i)
    if text[i:i + 1] != char:
        raise ValueError(f"expected {char!r} at offset {i}")
    return i + 1


def _object_members(text: str, i: int):
    """Yield (key, value start, value end) of the object starting at ``i``; finally its end offset."""
    i = _expect(text, i, "{")
    i = _skip(text, i)
    if text[i:i + 1] == "}":
        yield i + 1
        return
    while True:
        key, i = _DECODER.raw_decode(text, _skip(text, i))
        i = _skip(text, _expect(text, i, ":"))
        _, end = _DECODER.raw_decode(text, i)
        yield (key, i, end)
        i = _skip(text, end)
        if text[i:i + 1] == ",":
            i += 1
            continue
        yield _expect(text, i, "}")
        return


def _array_items(text: str, i: int) -> List[Tuple[int, int]]:
    i = _expect(text, i, "[")
    i = _skip(text, i)
    items: List[Tuple[int, int]] = []
    if text[i:i + 1] == "]":
        return items
    while True:
        i = _skip(text, i)
        _, end = _DECODER.raw_decode(text, i)
        items.append((i, end))
        i = _skip(text, end)
        if text[i:i + 1] == ",":
            i += 1
            continue
        _expect(text, i, "]")
        return items


def _source_spans(text: str) -> List[Optional[Tuple[int, int]]]:
    """For each element of the top-level "cells" array: the span of its "source" value."""
    cells_span = None
    for member in _object_members(text, _skip(text, 0)):
        if isinstance(member, tuple) and member[0] == "cells":
            cells_span = member
    if cells_span is None:
        return []
    spans: List[Optional[Tuple[int, int]]] = []
    for start, _end in _array_items(text, cells_span[1]):
        found = None
        if text[start] == "{":
            for member in _object_members(text, start):
                if isinstance(member, tuple) and member[0] == "source":
                    found = (member[1], member[2])
        spans.append(found)
    return spans


def _language(data: dict) -> str:
    metadata = data.get("metadata")
    if not isinstance(metadata, dict):
        return "python"
    for key, name in (("language_info", "name"), ("kernelspec", "language")):
        value = metadata.get(key)
        if isinstance(value, dict) and isinstance(value.get(name), str):
            return value[name].lower()
    return "python"


def load(raw: bytes) -> Notebook:
    """Parse a notebook; raises NotebookError with a one-line reason."""
    bom = raw.startswith(codecs.BOM_UTF8)
    try:
        text = raw[len(codecs.BOM_UTF8):].decode("utf-8") if bom else raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise NotebookError(f"not UTF-8 ({error.reason} at byte {error.start})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise NotebookError(f"not valid JSON ({error.msg}: line {error.lineno} column {error.colno})") from None
    except RecursionError:
        raise NotebookError("not valid JSON (nested too deeply)") from None
    if not isinstance(data, dict):
        raise NotebookError("not a notebook (the JSON is not an object)")
    version = data.get("nbformat")
    if version != 4:
        shown = "missing" if version is None else json.dumps(version)
        raise NotebookError(f"not an nbformat 4 notebook (nbformat: {shown})")
    cells = data.get("cells")
    if not isinstance(cells, list):
        raise NotebookError("not an nbformat 4 notebook (no \"cells\" list)")
    try:
        spans = _source_spans(text)
    except (ValueError, RecursionError) as error:  # pragma: no cover - json.loads accepted it
        raise NotebookError(f"cannot locate the cells in the JSON text ({error})") from None
    code: List[Cell] = []
    for index, cell in enumerate(cells):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        span = spans[index] if index < len(spans) else None
        is_list = isinstance(source, list)
        if is_list and all(isinstance(line, str) for line in source):
            text_source = "".join(source)
        elif isinstance(source, str):
            text_source = source
        else:
            raise NotebookError(f"cell {len(code) + 1}: \"source\" is neither a string nor a list of strings")
        if span is None:
            raise NotebookError(f"cell {len(code) + 1}: code cell without \"source\"")
        items = _array_items(text, span[0]) if is_list else []
        code.append(Cell(index, len(code) + 1, text_source, span, items, is_list))
    return Notebook(text, bom, data, code, _language(data) in ("python", "python3", "ipython", "ipython3"))


# ---------------------------------------------------------------------------
# Masking IPython syntax.

_LINE_ESCAPES = ("%", "!", "?", "/", ";", ",")
# IPython's `%env TF_USE_LEGACY_KERAS=1` (`%env NAME VALUE`, `%set_env NAME VALUE`) does
# `os.environ["TF_USE_LEGACY_KERAS"] = "1"` (the value stripped): its mask says so, so the engine
# reads the notebook's own setting as it reads a Python file's (``semantic.target.file_target``).
_ENV_MAGIC = re.compile(r"[ \t]*%(?:env[ \t]+TF_USE_LEGACY_KERAS(?:[ \t]*=|[ \t])|set_env[ \t]+TF_USE_LEGACY_KERAS[ \t])")
# ``files = !ls``, ``t = %timeit -o f()``, ``a, b = !cmd``
_ASSIGN_MAGIC = re.compile(r"[ \t]*[\w.]+(?:[ \t]*,[ \t]*[\w.]+)*[ \t]*=[ \t]*[!%]")
# Magics IPython runs without the % (automagic): `pip install x`, `ls ./data`, `cd dir`. Masked only
# when the line is not Python (`ls = []`, `time.sleep(1)` are).
_AUTOMAGIC = re.compile(
    r"[ \t]*(?:alias|autoreload|cat|cd|clear|conda|config|cp|debug|env|history|less|load_ext|ls|man|"
    r"matplotlib|mkdir|more|mv|pip|precision|prun|pwd|pycat|reload_ext|reset|rm|rmdir|run|sc|store|sx|"
    r"tensorboard|time|timeit|unalias|who|whos|xmode)[ \t]+(?!-=)[\w./~'\"$-]"
)


def _is_automagic(line: str) -> bool:
    if not _AUTOMAGIC.match(line):
        return False
    try:
        compile(line.strip(), "<line>", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError:
        return True
    except (ValueError, RecursionError, MemoryError):  # not a magic; the parse reports it
        return False
    return False


def _ends_with_backslash(line: str) -> bool:
    return line.rstrip("\r").endswith("\\")


def mask_cell(source: str) -> Dict[int, str]:
    """Lines of ``source`` (split at ``\\n``) to replace, by index: IPython syntax.

    The first line of a masked statement becomes ``pass`` at its indentation
    (a block holding only a magic stays a block); its continuation lines and
    the lines of a non-Python cell magic become empty.
    """
    lines = source.split("\n")
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is not None and lines[first].startswith("%%"):
        name = lines[first][2:].split()[0] if lines[first][2:].split() else ""
        if name in PYTHON_CELL_MAGICS:
            masks = {first: MASK}
            masks.update(_mask_lines(lines, first + 1))
            return masks
        return {i: "" for i in range(len(lines))}
    return _mask_lines(lines, 0)


def _indent(line: str) -> str:
    return line[:len(line) - len(line.lstrip(" \t\f"))]


def _mask_lines(lines: List[str], begin: int) -> Dict[int, str]:
    masks: Dict[int, str] = {}
    quote: Optional[str] = None
    depth = 0
    continued = False
    start = begin
    ipython = False
    i = begin
    while i < len(lines):
        line = lines[i]
        if quote is None and depth == 0 and not continued:
            start, ipython = i, False
            if line.lstrip(" \t\f").startswith(_LINE_ESCAPES) or _ASSIGN_MAGIC.match(line) or _is_automagic(line):
                env = _ENV_MAGIC.match(line)
                value = line[env.end():].strip() if env is not None else ""
                masks[i] = _indent(line) + (MASK if not value or value.endswith("\\") else
                                            f'__import__("os").environ["TF_USE_LEGACY_KERAS"] = {json.dumps(value)}')
                while _ends_with_backslash(line) and i + 1 < len(lines):
                    i += 1
                    line = lines[i]
                    masks[i] = ""
                i += 1
                continue
        continued = False
        string_continues = False
        j, size = 0, len(line)
        while j < size:
            char = line[j]
            if quote is not None:
                if char == "\\":
                    if line[j + 1:] in ("", "\r"):
                        string_continues = True
                    j += 2
                elif line.startswith(quote, j):
                    j += len(quote)
                    quote = None
                else:
                    j += 1
                continue
            if char == "#":
                break
            if char in "\"'":
                quote = char * 3 if line.startswith(char * 3, j) else char
                j += len(quote)
                continue
            if char in "([{":
                depth += 1
            elif char in ")]}":
                depth = max(0, depth - 1)
            elif char == "?" or (char == "!" and not line.startswith("!=", j)):
                ipython = True
            elif char == "\\" and line[j + 1:] in ("", "\r"):
                continued = True
            j += 1
        if quote in ("'", '"') and not string_continues:
            quote = None  # an unterminated one-line string: Python's error, not ours
        if quote is None and depth == 0 and not continued and ipython:
            masks[start] = _indent(lines[start]) + MASK
            for k in range(start + 1, i + 1):
                masks[k] = ""
            ipython = False
        i += 1
    return masks


# ---------------------------------------------------------------------------
# The joined source and its map back to cells.


@dataclass
class Joined:
    text: str
    owner: List[int]  # piece (line) index -> position in Notebook.cells
    first: List[int]  # cell position -> index of its first piece
    originals: Dict[int, str]  # masked piece index -> the original line
    skipped: Set[int] = field(default_factory=set)  # cells masked whole: they do not parse
    synthetic: Set[int] = field(default_factory=set)  # pieces of ours: `if True:` over an indented cell

    def where(self, row: int) -> Tuple[int, int]:
        """(cell position, 1-based line in the cell) of a 1-based joined row."""
        piece = min(max(row - 1, 0), len(self.owner) - 1)
        cell = self.owner[piece]
        return cell, row - self.first[cell]

    def starts(self) -> List[int]:
        """The 1-based row of the joined source each cell starts on (a header of ours included)."""
        return [first + (0 if first - 1 in self.synthetic else 1) for first in self.first]


def _is_imports(text: str) -> bool:
    lines = [line for line in text.splitlines() if line.strip()]
    return bool(lines) and all(line.lstrip().startswith(("import ", "from ")) for line in lines)


def in_one_cell(edits: Sequence[Edit], joined: Joined) -> bool:
    """Do a fix's edits lie inside one cell (an import it adds after the imports aside)?"""
    from tflint_gpu.engine.fix import segment_of

    starts = joined.starts()
    cells = {segment_of(edit, starts) for edit in edits
             if not (edit.start == edit.end and _is_imports(edit.content))}
    return len(cells) <= 1 and None not in cells


def join(cells: Sequence[Cell], skipped: Set[int] = frozenset()) -> Joined:
    pieces: List[str] = []
    owner: List[int] = []
    first: List[int] = []
    originals: Dict[int, str] = {}
    synthetic: Set[int] = set()
    for position, cell in enumerate(cells):
        lines = cell.source.split("\n")
        masks = {i: "" for i in range(len(lines))} if position in skipped else mask_cell(cell.source)
        masked = [masks.get(i, line) for i, line in enumerate(lines)]
        # The first line of code: a comment may stand at any column (no line before it can open a
        # string or continue onto it), and a cell of comments and blank lines needs no header.
        code = next((line for line in masked if line.strip() and not line.lstrip(" \t\f").startswith("#")), "")
        if code[:1] in (" ", "\t"):
            # IPython strips a cell's leading indentation; a block header keeps the columns instead.
            synthetic.add(len(pieces))
            pieces.append("if True:")
            owner.append(position)
        first.append(len(pieces))
        for i, line in enumerate(lines):
            if masked[i] != line:
                originals[len(pieces)] = line
            pieces.append(masked[i])
            owner.append(position)
    return Joined("\n".join(pieces), owner, first, originals, set(skipped), synthetic)


# ---------------------------------------------------------------------------
# Linting and fixing a notebook.

_ERROR_AT = re.compile(r"^(?P<row>\d+):(?P<col>\d+): (?P<rest>.*)$")


def _parse_guarded(notebook: Notebook, path: str, run):
    """``run(joined)`` with cells that do not parse masked whole; returns (result, joined, error line,
    the problems of the skipped cells as reporters show them)."""
    result, joined, skipped = _parse_guarded_cells(notebook, path, run)
    return result, joined, _error_line(path, skipped), _file_problems(notebook, skipped)


@dataclass
class CellProblem:
    """A code cell that does not parse (and is skipped): its 1-based number, and the row and column
    in the cell where the parser says (None: it names no position). ``problem``: as reporters show
    it (rows the cell's; ``file_row`` left to ``_file_problems``); ``alone``: the cell does not parse
    on its own (else only joined to the cells before it)."""
    cell: int
    row: Optional[int]
    col: Optional[int]
    reason: str
    problem: FileProblem
    alone: bool = True

    def __str__(self) -> str:  # as the error line has it: ``cell N:row:col: reason``
        where = f"{self.row}:{self.col}:" if self.row is not None else ""
        return f"cell {self.cell}:{where} {self.reason}"


def _parse_guarded_cells(notebook: Notebook, path: str, run):
    """As ``_parse_guarded``, with one CellProblem per skipped cell."""
    from tflint_gpu.engine.lint import ParseError

    skipped: Set[int] = set()
    errors: List[CellProblem] = []
    for attempt in range(len(notebook.cells) + 1):
        joined = join(notebook.cells, skipped)
        try:
            return run(joined), joined, errors
        except ParseError as error:
            message = str(error)
            found = False
            if attempt == 0:  # first failure: find every cell that does not parse on its own
                for position, cell in enumerate(notebook.cells):
                    if position in skipped:
                        continue
                    problem = _cell_syntax_error(cell, path)
                    if problem is not None:
                        errors.append(problem)
                        skipped.add(position)
                        found = True
            if found:
                continue
            rest = message[len(path) + 1:] if message.startswith(path + ":") else message
            match = _ERROR_AT.match(rest)
            if match is None:
                raise
            position, line = joined.where(int(match.group("row")))
            if position in skipped:
                raise
            number, col, reason = notebook.cells[position].number, int(match.group("col")), match.group("rest")
            syntax = reason.startswith("cannot parse: ")
            shown = FileProblem(INVALID_SYNTAX if syntax else None, path,
                                reason[len("cannot parse: "):] if syntax else reason, line, col - 1, cell=number)
            errors.append(CellProblem(number, line, col, reason, shown, alone=False))
            skipped.add(position)
    raise ParseError(f"{path}: cannot parse")  # pragma: no cover - every cell skipped parses


def _cell_syntax_error(cell: Cell, path: str) -> Optional[CellProblem]:
    """The problem of ``cell`` if it (masked) does not parse on its own, else None: CPython's parser
    decides, then LibCST must read it (``parse``). The rows are the cell's (not counting an ``if True:``
    of ours)."""
    from tflint_gpu.engine.lint import ParseError, parse, parse_problem

    alone = join([cell])
    try:
        parse(alone.text, "<cell>")
        return None
    except ParseError as error:
        shown = parse_problem(path, error, cell.number)
        if error.position is None:
            return CellProblem(cell.number, None, None, error.reason, shown)
        shown.row = alone.where(shown.row)[1]
        if shown.end_row:
            shown.end_row = alone.where(shown.end_row)[1]
        return CellProblem(cell.number, shown.row, error.position[1], error.reason, shown)


def _error_line(path: str, errors: List[CellProblem]) -> Optional[str]:
    if not errors:
        return None
    more = f" (and {len(errors) - 1} more cell{'s' if len(errors) > 2 else ''})" if len(errors) > 1 else ""
    return f"{path}:{errors[0]}; cell skipped{more}"


def _file_problems(notebook: Notebook, errors: List[CellProblem]) -> List[FileProblem]:
    """The skipped cells as reporters show them, each placed on its line of the .ipynb file: the cells
    that do not parse on their own, else the first cell that does not parse after the ones before it."""
    chosen = [e for e in errors if e.alone] or errors[:1]
    if not chosen:
        return []
    lines = _Lines(notebook.text)
    cells = {cell.number: cell for cell in notebook.cells}
    for error in chosen:
        error.problem.file_row = _file_row(cells[error.cell], error.problem.row, lines)
    return [error.problem for error in chosen]


class _Lines:
    """Offsets of line starts in the notebook's text: file line of an offset."""

    def __init__(self, text: str) -> None:
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def line(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset)


def _file_row(cell: Cell, line: int, lines: _Lines) -> int:
    if not cell.is_list or not cell.items:
        return lines.line(cell.span[0])
    # Element k of the list holds line k + 1 of the cell (each element ends with its newline).
    return lines.line(cell.items[min(line - 1, len(cell.items) - 1)][0])


def map_findings(findings: Sequence[Finding], notebook: Notebook, joined: Joined) -> List[NotebookFinding]:
    lines = _Lines(notebook.text)
    result = []
    for finding in findings:
        position, row = joined.where(finding.row)
        end_position, end_row = joined.where(finding.end_row)
        if end_position != position:  # cannot happen for a node; keep the end inside the cell
            end_row, end_col = row, finding.col
        else:
            end_col = finding.end_col
        cell = notebook.cells[position]
        fix = finding.fix
        if fix is not None and not in_one_cell(fix.edits, joined):
            fix = None  # a fix never moves code across cells: the finding stays, without one
        if fix is not None:
            edits = []
            for edit in fix.edits:
                edit_cell, start_row = joined.where(edit.start[0])
                end_cell, edit_end_row = joined.where(edit.end[0])
                if end_cell != edit_cell:  # an end at the start of the next cell: the end of this one
                    first = joined.first[edit_cell]
                    last = joined.first[edit_cell + 1] if edit_cell + 1 < len(joined.first) else len(joined.owner)
                    edit_end_row = last - first + 1
                edits.append(CellEdit(edit.content, (start_row, edit.start[1]), (edit_end_row, edit.end[1]),
                                      notebook.cells[edit_cell].number))
            fix = FixInfo(fix.message, fix.safety, edits)
        result.append(NotebookFinding(
            finding.code, finding.message, finding.path, row, finding.col, end_row, end_col, fix, finding.name,
            cell=cell.number, source_row=finding.row, file_row=_file_row(cell, row, lines),
        ))
    return result


def split(joined: Joined, fixed: str, starts: Optional[Sequence[int]] = None) -> Optional[List[str]]:
    """The cells' sources after a fix of the joined source, or None if a change crosses a cell
    boundary, touches a masked line, or leaves a changed cell that does not parse on its own.

    ``starts``: the row each cell starts on in ``fixed`` (``FixOutcome.segments``, carried through
    the fixer's edits): each line goes to the cell the edits put it in. Without it (a text fixed
    without segments) a line diff guesses: lines inserted on a cell boundary, imports to the end
    of the cell above; other code (a decorator, a setup line) to the top of the cell below, else
    the end of the cell above.
    """
    if starts is not None:
        owners = [bisect.bisect_right(starts, row) - 1 for row in range(1, fixed.count("\n") + 2)]
        return _split(joined, fixed, True, owners)
    return _split(joined, fixed, True) or _split(joined, fixed, False)


def _split(joined: Joined, fixed: str, code_below: bool, owners: Optional[List[int]] = None) -> Optional[List[str]]:
    """``owners``: the cell of each line of ``fixed``, where the fixer's edits put it."""
    from tflint_gpu.engine.lint import ParseError, parse

    before = joined.text.split("\n")
    after = fixed.split("\n")
    cells: List[List[str]] = [[] for _ in joined.first]
    changed: Set[int] = set()
    imports: List[Tuple[int, List[str]]] = []  # (cell position, lines) of inserted import statements
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if any(k in joined.synthetic for k in range(i1, i2)) and tag != "equal":
            return None
        if tag == "equal":
            for k in range(i2 - i1):
                if i1 + k not in joined.synthetic:
                    owner = joined.owner[i1 + k]
                    if owners is not None and owners[j1 + k] != owner:
                        if i1 + k in joined.originals:
                            return None  # a masked line matched in another cell
                        owner = owners[j1 + k]
                        changed.update((owner, joined.owner[i1 + k]))
                    cells[owner].append(joined.originals.get(i1 + k, after[j1 + k]))
            continue
        if owners is not None:
            if any(k in joined.originals for k in range(i1, i2)):
                return None
            lost = {joined.owner[k] for k in range(i1, i2)}
            new = after[j1:j2]
            for j, line in zip(range(j1, j2), new):
                cells[owners[j]].append(line)
            gained = {owners[j] for j in range(j1, j2)}
            if (lost | gained) & joined.skipped:
                return None
            if tag == "insert" and len(gained) == 1 and _is_imports("\n".join(new)):
                imports.append((owners[j1], new))
            changed.update(lost | gained)
            continue
        if tag == "insert":
            candidates = ([joined.owner[i1 - 1]] if i1 > 0 else []) + ([joined.owner[i1]] if i1 < len(before) else [])
            targets = [c for c in candidates if c not in joined.skipped]
            if not targets:
                return None
            new = after[j1:j2]
            if all(line.lstrip().startswith(("import ", "from ")) for line in new if line.strip()):
                imports.append((targets[0], new))
            elif code_below:
                targets.reverse()
            cells[targets[0]].extend(new)
            changed.add(targets[0])
            continue
        if any(k in joined.originals for k in range(i1, i2)):
            return None
        parts = _share(joined, before, after, i1, i2, j1, j2)
        if parts is None:
            return None
        for position, new in parts:
            if position in joined.skipped:
                return None
            cells[position].extend(new)
            changed.add(position)
    # An import the fixer put after the last import of the notebook may land in a cell below the
    # code that needs it: move it to the top of the first cell the fixes changed.
    for position, new in imports:
        others = sorted(c for c in changed if c != position)
        if others and others[0] < position:
            target = others[0]
            _remove_run(cells[position], new)
            cells[target][:0] = new
    sources = ["\n".join(lines) for lines in cells]
    for position in changed:  # each changed cell still runs on its own, indented as a whole only if it was
        alone = join([Cell(0, 0, sources[position], (0, 0), [], True)])
        if bool(alone.synthetic) != (joined.first[position] - 1 in joined.synthetic):
            return None
        try:
            parse(alone.text, "<cell>")
        except ParseError:
            return None
    return sources


def _share(joined: Joined, before: List[str], after: List[str], i1: int, i2: int, j1: int,
           j2: int) -> Optional[List[Tuple[int, List[str]]]]:
    """Which cell gets which new lines of a changed run of lines: (cell position, lines) in order.

    A run inside one cell is that cell's. Two fixes on the two sides of a cell boundary make one run
    across it: with as many lines after as before, line k replaces line k; else the run is cut where
    the two parts read most like the two cells' old lines. More than two cells: None.
    """
    owners = [joined.owner[k] for k in range(i1, i2)]
    if len(set(owners)) == 1:
        return [(owners[0], after[j1:j2])]
    if i2 - i1 == j2 - j1:
        parts: List[Tuple[int, List[str]]] = []
        for owner, line in zip(owners, after[j1:j2]):
            if parts and parts[-1][0] == owner:
                parts[-1][1].append(line)
            else:
                parts.append((owner, [line]))
        return parts
    if len(set(owners)) > 2:
        return None
    cut = owners.index(owners[-1])
    old_first, old_second = "\n".join(before[i1:i1 + cut]), "\n".join(before[i1 + cut:i2])
    new = after[j1:j2]

    def score(k: int) -> float:
        return (difflib.SequenceMatcher(None, old_first, "\n".join(new[:k])).ratio()
                + difflib.SequenceMatcher(None, old_second, "\n".join(new[k:])).ratio())

    best = max(range(len(new) + 1), key=score)
    return [(owners[0], new[:best]), (owners[-1], new[best:])]


def _remove_run(lines: List[str], run: List[str]) -> None:
    for start in range(len(lines) - len(run), -1, -1):
        if lines[start:start + len(run)] == run:
            del lines[start:start + len(run)]
            return


# ---------------------------------------------------------------------------
# Writing the changed "source" values back into the text.

_ESCAPED_NON_ASCII = re.compile(r"(?<!\\)(?:\\\\)*\\u(?!00[0-7])[0-9a-fA-F]{4}")


def _ensure_ascii(text: str) -> bool:
    if not text.isascii():
        return False
    return bool(_ESCAPED_NON_ASCII.search(text))


def _source_lines(source: str) -> List[str]:
    lines = source.split("\n")
    items = [line + "\n" for line in lines[:-1]]
    if lines[-1]:
        items.append(lines[-1])
    return items


def _layout(notebook: Notebook, cell: Cell) -> Tuple[str, str, str]:
    """(after "[", between items, before "]") of a list "source" value, as the file writes them."""
    text = notebook.text

    def of(c: Cell) -> Tuple[Optional[str], Optional[str], Optional[str]]:
        if not c.is_list or not c.items:
            return None, None, None
        opening = text[c.span[0] + 1:c.items[0][0]]
        closing = text[c.items[-1][1]:c.span[1] - 1]
        between = text[c.items[0][1]:c.items[1][0]] if len(c.items) > 1 else None
        return opening, between, closing

    opening, between, closing = of(cell)
    for other in notebook.cells:
        if opening is not None and between is not None:
            break
        o, b, c = of(other)
        if opening is None and o is not None:
            opening, closing = o, c
        if between is None and b is not None:
            between = b
    if opening is None:  # no cell has a non-empty list: follow the file's indentation
        match = re.search(r"\n([ \t]+)\S", text)
        newline = "\r\n" if "\r\n" in text else "\n"
        unit = match.group(1) if match else ""
        if match:
            opening, closing = newline + unit * 4, newline + unit * 3
        else:
            opening, closing = "", ""
    if between is None:
        between = "," + opening if opening.startswith(("\n", "\r")) else ", "
    return opening, between, closing


def _render_source(notebook: Notebook, cell: Cell, source: str, ascii_only: bool) -> str:
    if not cell.is_list:
        return json.dumps(source, ensure_ascii=ascii_only)
    items = _source_lines(source)
    if not items:
        return "[]"
    known: Dict[str, str] = {}
    for start, end in cell.items:
        raw = notebook.text[start:end]
        known.setdefault(json.loads(raw), raw)
    rendered = [known.get(item) or json.dumps(item, ensure_ascii=ascii_only) for item in items]
    opening, between, closing = _layout(notebook, cell)
    return "[" + opening + between.join(rendered) + closing + "]"


def rewrite(notebook: Notebook, sources: Dict[int, str]) -> str:
    """The notebook's text with the "source" of the cells in ``sources`` (by position) replaced."""
    ascii_only = _ensure_ascii(notebook.text)
    text = notebook.text
    for position in sorted(sources, key=lambda p: notebook.cells[p].span[0], reverse=True):
        cell = notebook.cells[position]
        start, end = cell.span
        text = text[:start] + _render_source(notebook, cell, sources[position], ascii_only) + text[end:]
    expected = json.loads(notebook.text)
    for position, source in sources.items():
        cell = notebook.cells[position]
        expected["cells"][cell.index]["source"] = _source_lines(source) if cell.is_list else source
    if json.loads(text) != expected:  # pragma: no cover - a bug of ours; never write it
        raise NotebookError("rewriting the cells would change more than their sources (please report)")
    return text


def cell_diff(path: str, number: int, before: str, after: str) -> str:
    name = f"{path}:cell {number}"
    out = []
    a = [line + "\n" for line in before.split("\n")]
    b = [line + "\n" for line in after.split("\n")]
    for line in difflib.unified_diff(a, b, name, name):
        out.append(line if line.endswith("\n") else line + "\n")
    return "".join(out)


@dataclass
class Outcome:
    findings: List[NotebookFinding] = field(default_factory=list)
    error: Optional[str] = None
    # What could not be checked, as reporters show it: the notebook, or the cells skipped.
    problems: List[FileProblem] = field(default_factory=list)
    fixed: int = 0
    fixed_codes: List[str] = field(default_factory=list)
    text: Optional[str] = None  # the new notebook text, when fixes changed it
    diff: str = ""


def process(raw: bytes, path: str, rules: Sequence[RuleClass], fix: bool, unsafe: bool, want_diff: bool,
            project=None, add_noqa: bool = False) -> Outcome:
    """Lint (``fix=False``) or fix a notebook given as bytes. ``project``: its view of
    the project index (``semantic.project.ProjectFile``): the modules beside it that it imports.
    ``add_noqa`` (with ``fix``): add ``# noqa: CODE`` comments instead of fixing (``engine.fix.add_noqa``)."""
    from tflint_gpu.engine.fix import add_noqa as add_noqa_comments, fix_source
    from tflint_gpu.engine.lint import lint_source

    try:
        notebook = load(raw)
    except NotebookError as error:
        return Outcome(error=f"{path}: cannot read notebook: {error}",
                       problems=[FileProblem(IO_ERROR, path, f"cannot read notebook: {error}")])
    if not notebook.python or not notebook.cells:
        return Outcome()
    if not fix:
        result, joined, error, problems = _parse_guarded(
            notebook, path, lambda j: lint_source(j.text, path, rules, project=project))
        return Outcome(map_findings(result.findings, notebook, joined), error=error, problems=problems)
    if add_noqa:
        outcome, joined, error, problems = _parse_guarded(
            notebook, path, lambda j: add_noqa_comments(j.text, path, rules, project=project))
    else:
        outcome, joined, error, problems = _parse_guarded(
            notebook, path, lambda j: fix_source(j.text, path, rules, unsafe=unsafe, project=project,
                                                 segments=j.starts()))
    if error is not None or outcome.refused or outcome.source == joined.text:
        if outcome.source != joined.text:  # fixes are not applied to a notebook with cells that do not parse
            findings = lint_source(joined.text, path, rules, project=project).findings
        else:
            findings = outcome.findings
        refused = f"{path}: a fix produced code that does not parse; notebook left unchanged (please report)"
        return Outcome(map_findings(findings, notebook, joined), error=error or (refused if outcome.refused else None),
                       problems=problems)
    sources = split(joined, outcome.source, outcome.segments)
    if sources is None:
        findings = lint_source(joined.text, path, rules, project=project).findings
        return Outcome(map_findings(findings, notebook, joined),
                       error=f"{path}: a fix would span notebook cells or touch IPython syntax; notebook left "
                             f"unchanged")
    changed = {p: s for p, s in enumerate(sources) if s != notebook.cells[p].source}
    try:
        text = rewrite(notebook, changed)
    except NotebookError as error:
        return Outcome(map_findings(lint_source(joined.text, path, rules, project=project).findings, notebook, joined),
                       error=f"{path}: {error}")
    new = load(notebook.encode(text))
    result, new_joined, _, _ = _parse_guarded(new, path, lambda j: lint_source(j.text, path, rules, project=project))
    diff = ""
    if want_diff:
        diff = "".join(cell_diff(path, notebook.cells[p].number, notebook.cells[p].source, s)
                       for p, s in sorted(changed.items()))
    return Outcome(map_findings(result.findings, new, new_joined), fixed=outcome.applied,
                   fixed_codes=list(outcome.applied_codes), text=text, diff=diff)


# ---------------------------------------------------------------------------
# Code cells given as texts (a language server's notebook document): the same joining and mapping.

def _of_sources(sources: Sequence[str]) -> Notebook:
    return Notebook("", False, {}, [Cell(i, i + 1, s, (0, 0), [], False) for i, s in enumerate(sources)])


def lint_cells(sources: Sequence[str], path: str, rules: Sequence[RuleClass], project=None,
               target=None) -> Tuple[List[NotebookFinding], List[CellProblem]]:
    """Findings of the code cells ``sources`` taken in order, in cell coordinates (``cell`` is the
    1-based position in ``sources``), and the cells skipped because they do not parse."""
    from tflint_gpu.engine.lint import lint_source

    notebook = _of_sources(sources)
    if not notebook.cells:
        return [], []
    result, joined, errors = _parse_guarded_cells(
        notebook, path, lambda j: lint_source(j.text, path, rules, project=project, target=target))
    return map_findings(result.findings, notebook, joined), errors


def fix_cells(sources: Sequence[str], path: str, rules: Sequence[RuleClass], unsafe: bool = False,
              project=None) -> Optional[List[str]]:
    """The code cells after every fix (safe only unless ``unsafe``), or None where nothing changes,
    a cell does not parse, or a change would span cells or touch IPython syntax (as ``process``)."""
    from tflint_gpu.engine.fix import fix_source

    notebook = _of_sources(sources)
    if not notebook.cells:
        return None
    outcome, joined, errors = _parse_guarded_cells(
        notebook, path, lambda j: fix_source(j.text, path, rules, unsafe=unsafe, project=project,
                                             segments=j.starts()))
    if errors or outcome.refused or outcome.source == joined.text:
        return None
    return split(joined, outcome.source, outcome.segments)
