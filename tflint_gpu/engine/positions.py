"""Line and column of nodes, computed only for files that have findings.

One code-generation pass over the module records each node's two ranges,
exactly as LibCST's ``PositionProvider`` (syntactic: a statement without its leading
lines) and ``WhitespaceInclusivePositionProvider`` (the node's whole text,
for fix edits) define them. Going through ``MetadataWrapper`` costs about
twice as much: it also runs a full visitor pass over the tree even when no
provider needs one.

Where CPython's tree of the text is at hand (its first lines of statements),
``statement_ranges`` writes only the innermost statements that hold the nodes
asked about, each alone at its own indentation, and checks that each one's
code is the text of its lines: in user code, findings sit in a few methods of
long classes, and writing those alone costs about a third of writing the file.
"""
from __future__ import annotations

import ast
import re
from bisect import bisect_right
from itertools import accumulate
from typing import Collection, Dict, NamedTuple, Optional, Sequence, Tuple

import libcst as cst
from libcst._nodes.internal import CodegenState
from libcst._position import CodePosition, CodeRange
from libcst.metadata.position_provider import NEWLINE_RE

from tflint_gpu.engine.reparse import statement_groups

# Where Python and LibCST end a line ("\r\n", "\r", "\n"); str.splitlines
# also splits at form feed, "\x85", "\u2028", ...
LINE_END = re.compile(r"\r\n|\r|\n")
_NEWLINE = re.compile("\n")


class _Recorder:
    """The context manager ``record_syntactic_position`` returns: the node's syntactic
    range, as token indexes, hoisted from its start or end node where LibCST's is."""

    __slots__ = ("state", "node", "start_node", "end_node", "start")

    def __init__(self, state: "_OffsetState", node: cst.CSTNode, start_node: Optional[cst.CSTNode],
                 end_node: Optional[cst.CSTNode]) -> None:
        self.state = state
        self.node = node
        self.start_node = start_node
        self.end_node = end_node

    def __enter__(self) -> None:
        self.start = len(self.state.tokens)

    def __exit__(self, *exc) -> None:
        syntactic = self.state.syntactic
        start = syntactic[self.start_node][0] if self.start_node is not None else self.start
        end = syntactic[self.end_node][1] if self.end_node is not None else len(self.state.tokens)
        syntactic[self.node] = (start, end)


class _OffsetState(CodegenState):
    """A code generation that notes, for every node, where its tokens start and
    end (token indexes) instead of a line and column after every token: the
    lines and columns of the nodes asked for are worked out at the end, from
    the code. The ranges are those of LibCST's ``PositionProvider`` (syntactic:
    ``record_syntactic_position``, else the whole text) and
    ``WhitespaceInclusivePositionProvider`` (the node's whole text), and the
    indentation in force where each node of ``contexts`` is written."""

    __slots__ = ("syntactic", "inclusive", "stack", "contexts", "indents", "keep", "popped")

    def before_codegen(self, node: cst.CSTNode) -> None:
        if node in self.contexts:
            self.indents[node] = tuple(self.indent_tokens)
        self.stack.append(len(self.tokens))

    def after_codegen(self, node: cst.CSTNode) -> None:
        start = self.stack.pop()
        end = len(self.tokens)
        if node not in self.syntactic:
            self.syntactic[node] = (start, end)
        if self.keep is None or node in self.keep:
            self.inclusive[node] = (start, end)

    def record_syntactic_position(self, node: cst.CSTNode, *, start_node: Optional[cst.CSTNode] = None,
                                  end_node: Optional[cst.CSTNode] = None) -> _Recorder:
        return _Recorder(self, node, start_node, end_node)

    def pop_trailing_newline(self) -> None:
        # The providers' positions were counted with the newline (a module's range ends after it):
        # it stays among the tokens, left out of the code.
        self.popped = bool(self.tokens)


class Ranges(NamedTuple):
    syntactic: Dict[cst.CSTNode, CodeRange]
    inclusive: Dict[cst.CSTNode, CodeRange]
    code: Optional[str]  # module.code (None: ``statement_ranges``, which writes some statements only)
    indents: Dict[cst.CSTNode, Tuple[str, ...]]  # of the nodes asked for


def _token_positions(tokens: Sequence[str], code: str, wanted: Collection[int]) -> Dict[int, CodePosition]:
    """The (line, column) LibCST's position providers reach after ``tokens[:i]``, for each ``i`` of ``wanted``."""
    found: Dict[int, CodePosition] = {}
    if "\r" not in code:
        # Lines end at "\n" only: a token offset's line and column come from the code.
        offsets = [0]
        offsets.extend(accumulate(map(len, tokens)))
        starts = [0]
        starts.extend(match.end() for match in _NEWLINE.finditer(code))
        for index in wanted:
            offset = offsets[index]
            line = bisect_right(starts, offset)
            found[index] = CodePosition(line, offset - starts[line - 1])
        return found
    # As the providers count, token by token ("\r" and "\n" in two tokens are two line ends).
    targets = sorted(wanted)
    line, column, next_target = 1, 0, 0
    for index, token in enumerate(tokens):
        while next_target < len(targets) and targets[next_target] == index:
            found[index] = CodePosition(line, column)
            next_target += 1
        if next_target == len(targets):
            break
        segments = NEWLINE_RE.split(token)
        if len(segments) == 1:
            column += len(token)
        else:
            line += len(segments) - 1
            column = len(segments[-1])
    else:
        for index in targets[next_target:]:
            found[index] = CodePosition(line, column)
    return found


def code_ranges(module: cst.Module, contexts: Collection[cst.CSTNode] = (),
                keep: Optional[Collection[cst.CSTNode]] = None) -> Ranges:
    """Every node's syntactic range and its whole-text range, the code
    (``module.code``) and the indentation where each of ``contexts`` stands,
    from one pass. With ``keep``, the ranges of those nodes only (and the
    module's): memory for the nodes asked about, not two ranges for every
    node of the file."""
    state = _OffsetState(default_indent=module.default_indent, default_newline=module.default_newline)
    state.syntactic = {}
    state.inclusive = {}
    state.stack = []
    state.contexts = contexts
    state.indents = {}
    state.keep = keep if keep is None else set(keep) | {module}
    state.popped = False
    module._codegen(state)
    tokens = state.tokens
    code = "".join(tokens)
    if state.popped:
        code = code[:len(code) - len(tokens[-1])]
    syntactic = state.syntactic if keep is None else \
        {node: span for node, span in state.syntactic.items() if node in state.keep}
    wanted = {index for spans in (syntactic, state.inclusive) for span in spans.values() for index in span}
    at = _token_positions(tokens, code if not state.popped else code + tokens[-1], wanted)
    return Ranges(_to_ranges(syntactic, at), _to_ranges(state.inclusive, at), code, state.indents)


def code_in_context(module: cst.Module, node: cst.CSTNode, indent: Sequence[str]) -> str:
    """``node``'s code as it is written where the indentation is ``indent``
    (``Module.code_for_node`` writes it at none): the text that replaces a
    node's whole-text range."""
    state = CodegenState(default_indent=module.default_indent, default_newline=module.default_newline,
                         indent_tokens=list(indent))
    node._codegen(state)
    return "".join(state.tokens)


class SourceMap:
    """From positions in the code LibCST generates to positions in the text it read.

    LibCST drops a form feed that stands before a statement's indentation
    (``"\\f    y = 2"`` is written ``"    y = 2"``), so where its output and the
    file differ, columns on such lines shift by what was dropped. A line that
    differs otherwise, or a file whose line count changed, is not mapped:
    ``exact`` says whether a position can be trusted for an edit.
    """

    def __init__(self, source: str, generated: str) -> None:
        self.shift: Dict[int, int] = {}
        self.unmapped: set = set()
        self.all_unmapped = False
        if source == generated:
            return
        src, gen = LINE_END.split(source), LINE_END.split(generated)
        if len(src) != len(gen):
            self.all_unmapped = True
            return
        for row, (a, b) in enumerate(zip(src, gen), start=1):
            if a == b:
                continue
            dropped = len(a) - len(b)
            if dropped > 0 and a.endswith(b) and not a[:dropped].strip(" \t\f"):
                self.shift[row] = dropped
            else:
                self.unmapped.add(row)

    def exact(self, row: int) -> bool:
        return not self.all_unmapped and row not in self.unmapped

    def __call__(self, position: Tuple[int, int]) -> Tuple[int, int]:
        row, col = position
        return (row, col + self.shift.get(row, 0))


# LibCST's statements whose ``body`` block is CPython's statement's ``body`` list.
_DESCENDED = {
    cst.FunctionDef: (ast.FunctionDef, ast.AsyncFunctionDef),
    cst.ClassDef: (ast.ClassDef,),
    cst.If: (ast.If,),
    cst.For: (ast.For, ast.AsyncFor),
    cst.While: (ast.While,),
    cst.With: (ast.With, ast.AsyncWith),
    cst.Try: (ast.Try,),
}


class _Unit(NamedTuple):
    """A statement written alone: its first line (of its first token or decorator) and the
    indentation in force where it stands."""
    statement: cst.CSTNode
    first: int
    indent: Tuple[str, ...]


def statement_ranges(module: cst.Module, lines: Sequence[str], top: Sequence[Tuple[int, int, Sequence[ast.stmt]]],
                     contexts: Collection[cst.CSTNode], keep: Collection[cst.CSTNode],
                     also: Sequence[int] = ()) -> Optional[Ranges]:
    """``code_ranges`` for the nodes of ``keep``, from the code of the innermost statements that
    hold them only (and of the top-level statements ``also`` lists by index), each written alone
    at its indentation and moved to its lines. ``top``: the module's ``statement_groups`` (from
    CPython's tree of the same text, which gives each statement's first line), ``lines``: the
    text (no carriage return or form feed). A statement with a block (``def``, ``class``, ``if``, ``for``, ``while``,
    ``with``, ``try``) is written whole where a node of ``keep`` is outside its block's
    statements, else only its block's statements that hold one are. The ranges and indents are
    those ``code_ranges`` gives (the written statements' own included); ``Ranges.code`` is None
    (no other line was written). None when a node of ``keep`` is in no statement, or a
    statement's code is not the text of its lines: use ``code_ranges``."""
    from tflint_gpu.semantic.model import children

    body = module.body
    if len(top) != len(body):
        return None
    wanted = {id(node) for node in keep}
    units = [_Unit(body[index], top[index][0], ()) for index in sorted(set(also))]

    def found_in(node: cst.CSTNode) -> bool:
        """Does ``node``'s code hold nodes of ``wanted``? (Each found is taken off.)"""
        found = False
        todo = [node]
        while todo:
            node = todo.pop()
            if id(node) in wanted:
                wanted.discard(id(node))
                found = True
            todo.extend(children(node))
        return found

    # Each statement (CPython's ``statements`` of it, starting on line ``first``) gives its units,
    # depth first in source order; a work list, not a recursive closure (whose cycle would keep
    # the tree alive until the cyclic collector ran).
    todo = [(statement, first, statements, ()) for statement, (first, _, statements) in zip(body, top)][::-1]
    while todo and wanted:
        statement, first, statements, indent = todo.pop()
        block = getattr(statement, "body", None)
        kinds = _DESCENDED.get(statement.__class__)
        if kinds is None or block.__class__ is not cst.IndentedBlock or len(statements) != 1 \
                or not isinstance(statements[0], kinds):
            if found_in(statement):
                units.append(_Unit(statement, first, indent))
            continue
        inner_indent = indent + (module.default_indent if block.indent is None else block.indent,)
        groups = statement_groups(statements[0].body, lines, "".join(inner_indent))
        outside = id(statement) in wanted or id(block) in wanted
        if not outside:
            outside = any(found_in(child) for child in children(statement) if child is not block)
        if outside or groups is None or len(groups) != len(block.body):
            if found_in(statement) or outside:
                units.append(_Unit(statement, first, indent))
            continue
        todo.extend((inner, inner_first, inner_statements, inner_indent)
                    for inner, (inner_first, _, inner_statements) in zip(block.body[::-1], groups[::-1]))
    if wanted:
        return None  # the module itself, or a node that holds no code
    syntactic: Dict[cst.CSTNode, CodeRange] = {}
    inclusive: Dict[cst.CSTNode, CodeRange] = {}
    indents: Dict[cst.CSTNode, Tuple[str, ...]] = {}
    written = set()
    for statement, first, indent in units:
        if id(statement) in written:
            continue
        written.add(id(statement))
        start = first - len(statement.leading_lines)  # its first line, leading lines included
        ranges = _alone_ranges(statement, module, indent, contexts, keep)
        if ranges is None:
            return None
        code = ranges.code
        count = code.count("\n")
        if start < 1 or "\n".join(lines[start - 1:start - 1 + count]) + "\n" != code:
            return None
        shift = start - 1

        def moved(span: CodeRange) -> CodeRange:
            return CodeRange(CodePosition(span.start.line + shift, span.start.column),
                             CodePosition(span.end.line + shift, span.end.column))

        for table, spans in ((syntactic, ranges.syntactic), (inclusive, ranges.inclusive)):
            for node, span in spans.items():
                table[node] = moved(span)
        indents.update(ranges.indents)
    return Ranges(syntactic, inclusive, None, indents)


def _alone_ranges(statement: cst.CSTNode, module: cst.Module, indent: Sequence[str],
                  contexts: Collection[cst.CSTNode], keep: Collection[cst.CSTNode]) -> Optional[Ranges]:
    """``code_ranges`` of ``statement`` written alone where the indentation is ``indent``, its code
    starting on line 1 (None where it does not end a line)."""
    state = _OffsetState(default_indent=module.default_indent, default_newline=module.default_newline,
                         indent_tokens=list(indent))
    state.syntactic = {}
    state.inclusive = {}
    state.stack = []
    state.contexts = contexts
    state.indents = {}
    state.keep = set(keep) | {statement}
    state.popped = False
    statement._codegen(state)
    tokens = state.tokens
    code = "".join(tokens)
    if not code.endswith("\n"):
        return None
    syntactic = {node: span for node, span in state.syntactic.items() if node in state.keep}
    wanted = {index for spans in (syntactic, state.inclusive) for span in spans.values() for index in span}
    at = _token_positions(tokens, code, wanted)
    return Ranges(_to_ranges(syntactic, at), _to_ranges(state.inclusive, at), code, state.indents)


def _to_ranges(spans: Dict[cst.CSTNode, Tuple[int, int]], at: Dict[int, CodePosition]) -> Dict[cst.CSTNode, CodeRange]:
    return {node: CodeRange(at[start], at[end]) for node, (start, end) in spans.items()}
