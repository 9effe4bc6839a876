"""Lint one source text: prefilter, parse once, walk once, run every rule.

``lint_source`` is the single entry point the CLI, the fixer and the flake8
adapter share. Positions are computed only when a rule reports something.
With the project index (``project``: the file's ``semantic.project.ProjectFile``),
names imported from the project's own modules resolve to what they stand for,
and a file that mentions neither TensorFlow nor Keras is still checked when a
project module it imports reaches them.
"""
from __future__ import annotations

import ast
import contextlib
import dataclasses
import os
import queue
import threading
import warnings
from dataclasses import dataclass, field
from typing import Callable, Dict, FrozenSet, List, Optional, Sequence, Tuple

import libcst as cst

from tflint_gpu.engine.budget import armed, current as current_budget, time_budget
from tflint_gpu.engine.imports import insertion_index, missing_imports
from tflint_gpu.engine.noqa import UNUSED_NOQA, NoqaIndex, file_exemption
from tflint_gpu.engine.positions import (LINE_END, SourceMap, code_in_context, code_ranges,
                                         statement_ranges)
from tflint_gpu.engine.reparse import Reparser, statement_groups
from tflint_gpu.semantic.context import GraphAnalysis
from tflint_gpu.semantic.facts import RuleClass, RuleContext
from tflint_gpu.semantic.model import build_model
from tflint_gpu.semantic.names import Resolver
from tflint_gpu.semantic.project import ProjectFile, collector_paused, summarize
from tflint_gpu.semantic.target import Target, file_target
from tflint_gpu.semantic.tensors import TensorInference
from tflint_gpu.findings import INVALID_SYNTAX, Edit, FileProblem, Finding, Fix, FixInfo, Safety


# A file that mentions none of these can hold no finding.
FRAMEWORK_TEXT = ("tensorflow", "keras")
# Names only Keras objects have (Keras 2's layer-node API, the migration table's ``node_api`` members): a
# helper module naming no framework that reads them on a model its callers hand in (a FLOPs counter
# walking ``model.layers``) uses Keras all the same.
KERAS_ONLY_TEXT = ("get_input_shape_at", "get_output_shape_at", "get_input_at", "get_output_at",
                   "get_input_mask_at", "get_output_mask_at")


class ParseError(Exception):
    """The file is not valid Python (or cannot be analysed); the message is one
    line naming the file: ``path:line:col: reason``, or ``path: reason`` where
    the parser gives no position. ``position`` and ``reason`` are those parts."""

    # Where CPython's parser says the error ends (line, 1-based column), when it says so.
    end: Optional[Tuple[int, int]] = None

    def __init__(self, message: str, position: Optional[Tuple[int, int]] = None, reason: str = "") -> None:
        super().__init__(message)
        self.position = position
        self.reason = reason or message

    @classmethod
    def at(cls, path: str, position: Optional[Tuple[int, int]], reason: str) -> "ParseError":
        where = f"{path}:{position[0]}:{position[1]}" if position else path
        return cls(f"{where}: {reason}", position, reason)


class UnreadableSource(ParseError):
    """Valid Python (CPython's parser accepts it) that LibCST cannot parse."""


def parse_problem(path: str, error: ParseError, cell: Optional[int] = None) -> FileProblem:
    """The problem a ParseError says: CPython refusing the text is ``invalid-syntax`` with its
    message and position; valid Python LibCST cannot read is a failure of the analysis (no code)."""
    if isinstance(error, UnreadableSource):
        return FileProblem(None, path, error.reason, cell=cell)
    message = error.reason[len("cannot parse: "):] if error.reason.startswith("cannot parse: ") else error.reason
    row, col = error.position if error.position else (1, 1)
    end_row, end_col = error.end if error.end else (0, 1)
    return FileProblem(INVALID_SYNTAX, path, message, row, col - 1, end_row, end_col - 1, cell=cell)


@dataclass
class LintResult:
    findings: List[Finding]
    module: Optional[cst.Module] = None
    # The fixes of the findings, in the same order (None where a finding has none).
    fixes: List[Optional[Fix]] = field(default_factory=list)
    # The whole-text range, in ``source``, of every node a fix replaces or depends on (for overlap checks).
    positions: Dict[cst.CSTNode, Tuple[Tuple[int, int], Tuple[int, int]]] = field(default_factory=dict)
    # Per finding, the text edits of its fix's replacements (positions in ``source``; imports apart).
    replacement_edits: List[List[Edit]] = field(default_factory=list)
    # The edit that inserts these import lines where the fixer puts them.
    import_edit: Optional[Callable[[List[str]], Edit]] = None


def mentions_framework(source: str) -> bool:
    return any(text in source for text in FRAMEWORK_TEXT) or any(text in source for text in KERAS_ONLY_TEXT)


def prefilter(source: str, rules: Sequence[RuleClass], admitted: bool = False,
              imports_project: bool = False) -> List[RuleClass]:
    """The rules that could fire on this text (none if it uses no TF/Keras, unless
    ``admitted``: its project imports reach them). ``imports_project``: names come
    from the project's modules, so no rule's text (``numpy``...) need be in the file."""
    if not admitted and not mentions_framework(source):
        return []
    if imports_project:
        return list(rules)
    found: Dict[str, bool] = {}  # each text searched once (rules share many)
    active = []
    for rule in rules:
        for group in rule.needs:
            for text in group:
                present = found.get(text)
                if present is None:
                    present = found[text] = text in source
                if present:
                    break
            else:
                break  # no text of this group
        else:
            active.append(rule)
    return active


# LibCST's native parser recurses on the machine stack: about 1.2 KB a level of
# a long `x + x + ...` chain, 2.4 KB a nested lambda. The deepest code CPython's
# parser accepts (at the default recursion limit) needs about 7 MB, near the
# 8 MB of a main thread and far beyond the 512 KB of other threads on macOS;
# beyond it (an 8,000-term chain) the process dies. So both parsers run in a
# thread with this stack (address space: pages are used only as touched),
# where CPython's limits are also the same whatever the caller's depth.
PARSE_STACK_BYTES = 256 * 1024 * 1024
_WARNINGS_LOCK = threading.Lock()  # warnings.catch_warnings changes the process's filters


class _LargeStack:
    """One thread with a ``PARSE_STACK_BYTES`` stack per process, kept for every
    call: a new thread per parse cost a tenth of a parse more (its stack's pages
    touched afresh each time; measured on keras/src), a kept one costs a queue hand-off.
    Calls made from that thread run in it directly; a child process (fork) starts its own."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.jobs: Optional["queue.SimpleQueue"] = None
        self.ident: Optional[int] = None
        self.pid = os.getpid()

    def run(self, function: Callable, args: tuple):
        if threading.get_ident() == self.ident and self.pid == os.getpid():
            return function(*args)  # already on the large stack
        jobs = self._jobs()
        if jobs is None:  # no threads, or no stack that large, here
            return function(*args)
        done = threading.Lock()
        done.acquire()
        outcome: List[Tuple[bool, object]] = []
        jobs.put((function, args, outcome, done, current_budget()))
        done.acquire()
        succeeded, value = outcome[0]
        if succeeded:
            return value
        raise value  # type: ignore[misc]

    def _jobs(self) -> Optional["queue.SimpleQueue"]:
        if self.jobs is not None and self.pid == os.getpid():
            return self.jobs
        with self.lock:
            if self.jobs is not None and self.pid == os.getpid():
                return self.jobs
            jobs: "queue.SimpleQueue" = queue.SimpleQueue()
            started = threading.Event()
            try:
                previous = threading.stack_size()
                threading.stack_size(PARSE_STACK_BYTES)
                try:
                    thread = threading.Thread(target=self._serve, args=(jobs, started),
                                              name="tflint-gpu-parse", daemon=True)
                    thread.start()
                finally:
                    threading.stack_size(previous)
            except (RuntimeError, ValueError, MemoryError):
                return None
            started.wait()
            self.jobs, self.pid = jobs, os.getpid()
            return jobs

    def _serve(self, jobs: "queue.SimpleQueue", started: threading.Event) -> None:
        self.ident = threading.get_ident()
        started.set()
        while True:
            function, args, outcome, done, working_for = jobs.get()
            try:
                with armed(working_for):  # the caller's time budget may stop the call here
                    outcome.append((True, function(*args)))
            except BaseException as error:  # handed to the caller
                outcome.append((False, error))
            finally:
                # Nothing of the call kept here until the next one (a parsed tree would live on).
                del function, args, outcome, working_for
                done.release()
                del done

    def forked(self) -> None:  # in a child: the parent's thread is not there
        self.lock = threading.Lock()
        self.jobs = self.ident = None


_STACK = _LargeStack()


def _new_locks() -> None:  # in a child forked while another thread held one
    global _WARNINGS_LOCK
    _WARNINGS_LOCK = threading.Lock()
    _STACK.forked()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_new_locks)


def on_large_stack(function: Callable, *args):
    """``function(*args)`` (its result, or its exception) run on a thread with a
    ``PARSE_STACK_BYTES`` stack; in this thread where no such thread can start."""
    return _STACK.run(function, args)


def parse(source: str, path: str, checked: bool = False) -> cst.Module:
    """The LibCST module of ``source``. CPython decides what is Python: where its
    parser refuses the text, a ParseError with its message and position; valid
    Python that LibCST cannot parse is an UnreadableSource. Both run on a large
    stack (``on_large_stack``), so no input can crash the process. ``checked``:
    ``check_syntax`` has already accepted this very text."""
    return on_large_stack(_parse, source, path, checked)


UNREADABLE = "valid Python that the parser (LibCST) cannot read"


def _parse(source: str, path: str, checked: bool = False) -> cst.Module:
    if not checked:
        check_syntax(source, path)
    return _read(cst.parse_module, (source,), path)


def reparse(reparser: Reparser, source: str, path: str, tree: Optional[ast.Module] = None) -> cst.Module:
    """``parse``, by ``reparser`` (a document's previous text's unchanged statements reused);
    ``tree``: CPython's ``ast`` of this very text, when made already."""
    return on_large_stack(_reparse, reparser, source, path, tree)


def _reparse(reparser: Reparser, source: str, path: str, tree: Optional[ast.Module]) -> cst.Module:
    if tree is None:
        tree = check_syntax(source, path)
    return _read(reparser.parse, (source, tree), path)


class _Parsing(threading.local):
    """Is this thread inside LibCST's parser (``_read``)?"""

    active = False


_PARSING = _Parsing()
_VALIDATE_ON_INIT = cst.CSTNode.__post_init__  # LibCST's: ``self._validate()``
_PARSERS_LOCK = threading.Lock()
_parsers = 0  # the threads inside ``_read``: while there is one, ``_post_init`` is installed


def _post_init(node: cst.CSTNode) -> None:
    """LibCST's check of a node as it is made, except for the nodes its parser makes.

    Every node runs ``_validate`` when it is constructed; for a parser's nodes that
    check cannot fail where CPython has accepted the text (LibCST's own source says
    validation could move out of parsing), and it is a sixth of a parse. Installed
    only while a thread parses (``_trusted_parse``); nodes made by another thread
    meanwhile are checked as before."""
    if not _PARSING.active:
        node._validate()


# Only over the method it replaces: with another LibCST, nodes are validated as it does.
_SKIP_VALIDATION = getattr(_VALIDATE_ON_INIT, "__qualname__", "") == "CSTNode.__post_init__" \
    and hasattr(cst.CSTNode, "_validate")


@contextlib.contextmanager
def _trusted_parse():
    """Inside the block, the nodes this thread makes are not validated (``_post_init``);
    LibCST's own method is back when no thread parses."""
    global _parsers
    if not _SKIP_VALIDATION:
        yield
        return
    with _PARSERS_LOCK:
        _parsers += 1
        cst.CSTNode.__post_init__ = _post_init  # type: ignore[method-assign]
    _PARSING.active = True
    try:
        yield
    finally:
        _PARSING.active = False
        with _PARSERS_LOCK:
            _parsers -= 1
            if not _parsers:
                cst.CSTNode.__post_init__ = _VALIDATE_ON_INIT  # type: ignore[method-assign]


def _read(function: Callable[..., cst.Module], args: tuple, path: str) -> cst.Module:
    """LibCST's module from ``function(*args)`` (its nodes not validated: ``_post_init``);
    where it cannot read valid Python, an UnreadableSource."""
    try:
        with _trusted_parse():
            return function(*args)
    except cst.ParserSyntaxError as error:
        reason = error.message
    except (RecursionError, MemoryError, ValueError) as error:
        reason = f"{type(error).__name__}: {error}"
    except BaseException as error:
        if type(error).__name__ != "PanicException":  # a panic of LibCST's Rust code
            raise
        reason = f"internal error: {error}"
    reason = " ".join(reason.split()) or "syntax error"  # one line
    raise UnreadableSource.at(path, None, f"cannot analyse: {UNREADABLE}: {reason}")


# The file name CPython's parser is given. Not the path: for some errors ("'(' was never closed")
# the parser reads the error's line back from the file of that name, and turns its byte offset
# into a column on that line, so a text that is not the file's (a notebook's cells, a fix round,
# stdin named by --stdin-filename) got the column of another line. A name that reads as empty
# makes it use the text it was given.
SOURCE_NAME = os.devnull


def check_syntax(source: str, path: str) -> ast.Module:
    """Raise ParseError where CPython's own parser refuses ``source`` (as
    ``ast.parse`` would), with its message and position; else its ``ast``. Run
    it through ``on_large_stack`` for limits that do not depend on the caller's depth."""
    try:
        with _WARNINGS_LOCK, warnings.catch_warnings():
            # A SyntaxWarning ("invalid escape sequence") leaves the file Python; printed, it
            # would garble the output (and under -W error it would be a SyntaxError).
            warnings.simplefilter("ignore")
            return compile(source, SOURCE_NAME, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as error:  # IndentationError and TabError too
        position = (error.lineno, max(error.offset or 1, 1)) if error.lineno else _nul_position(source)
        refused = ParseError.at(path, position, f"cannot parse: {error.msg}")
        end = (getattr(error, "end_lineno", None), getattr(error, "end_offset", None))
        if position and end[0] and end[1] and (end[0], end[1]) > position:  # CPython gives 0 or -1 for none
            refused.end = (end[0], end[1])
        raise refused from None
    except (RecursionError, MemoryError) as error:  # nested beyond its limits: "too complex" is a MemoryError
        reason = str(error) or "too deeply nested or too complex for Python's parser"
        raise ParseError.at(path, None, f"cannot parse: {reason}") from None
    except ValueError as error:  # NUL bytes, in older Pythons
        raise ParseError.at(path, _nul_position(source), f"cannot parse: {error}") from None


def _nul_position(source: str) -> Optional[Tuple[int, int]]:
    """Line and column (1-based) of the first NUL character, if any."""
    index = source.find("\0")
    if index < 0:
        return None
    starts = [0] + [match.end() for match in LINE_END.finditer(source, 0, index)]
    return len(starts), index - starts[-1] + 1


# The target of the file being linted when the caller does not name one (``using_target``:
# the runner sets it for each file, so the fixer's and notebooks' calls see it too).
_TARGET: Optional[Target] = None


@contextlib.contextmanager
def using_target(target: Optional[Target]):
    """Lint with ``target`` as the project's target (``RuleContext.target``) inside the block."""
    global _TARGET
    previous, _TARGET = _TARGET, target
    try:
        yield
    finally:
        _TARGET = previous


# The codes whose fixes are dropped (``unfixable``, ``fixable`` in the settings): their findings are
# reported without a fix, so no fixer, diff, `[*]` or editor action applies one (``using_fixable``:
# the runner sets it for each file, so the fixer's and notebooks' calls see it too).
_UNFIXABLE: FrozenSet[str] = frozenset()


@contextlib.contextmanager
def using_fixable(unfixable: Optional[FrozenSet[str]]):
    """Lint with the fixes of the codes ``unfixable`` dropped inside the block (None: keep the caller's)."""
    global _UNFIXABLE
    previous = _UNFIXABLE
    if unfixable is not None:
        _UNFIXABLE = frozenset(unfixable)
    try:
        yield
    finally:
        _UNFIXABLE = previous


def drop_fixes(result: "LintResult", unfixable: FrozenSet[str]) -> "LintResult":
    """``result`` with no fix for the findings of the codes ``unfixable`` (as Ruff removes an unfixable
    rule's fix from its diagnostic: reported, never fixed)."""
    for i, finding in enumerate(result.findings):
        if finding.fix is not None and finding.code in unfixable:
            result.findings[i] = dataclasses.replace(finding, fix=None)
            if i < len(result.fixes):
                result.fixes[i] = None
                result.replacement_edits[i] = []
    return result


_PLANS: Dict[Tuple[RuleClass, ...], Tuple[frozenset, List[Tuple[str, str, List[int]]]]] = {}


def _plan(rules: Tuple[RuleClass, ...]) -> Tuple[frozenset, List[Tuple[str, str, List[int]]]]:
    """For a set of rules (worked out once a run): the node types the walk indexes, and per node
    type visited (sorted) its visitor method's name and the rules that have one, in order."""
    plan = _PLANS.get(rules)
    if plan is None:
        if len(_PLANS) >= 512:  # each file's prefilter may keep another set: a long-lived server's bound
            _PLANS.clear()
        wanted = {name for rule in rules for name in rule.node_types}
        indexed = frozenset(wanted | {name for rule in rules for name in getattr(rule, "reads_index", ())})
        plan = _PLANS[rules] = (indexed, [
            (name, "visit_" + name, [number for number, rule in enumerate(rules) if name in rule.node_types])
            for name in sorted(wanted)])
    return plan


def analyse(module: cst.Module, rules: Sequence[RuleClass], source: Optional[str] = None,
            project: Optional[ProjectFile] = None, target: Optional[Target] = None) -> RuleContext:
    """Walk once, work out graph contexts, then run the rules over the index."""
    indexed, plan = _plan(tuple(rules))
    model = build_model(module, indexed)
    if source is not None:
        model.source = source  # spares a code generation to any fact that reads the text
    resolver = Resolver(project)
    resolver.bind_stars(model.root)
    target = target if target is not None else _TARGET
    if source is not None:
        target = file_target(target, source, "this file")
    graphs = GraphAnalysis(model, resolver, tf_keras_is_keras2=target is not None and not target.keras3,
                           file_settings=target is None or target.file_settings)
    graphs.run()
    ctx = RuleContext(module, model, resolver, graphs, TensorInference(resolver, graphs), target)
    instances = [rule() for rule in rules]
    # Visit in source order: the index lists are each in source order; merge by
    # node type is enough because rules only compare nodes of the same type.
    for type_name, method, numbers in plan:
        nodes = model.index.get(type_name)
        if not nodes:
            continue
        visitors = [(rules[number], getattr(instances[number], method)) for number in numbers]
        for node, scope in nodes:
            ctx.scope = scope
            for rule, visit in visitors:
                ctx.rule = rule
                visit(node, ctx)
    return ctx


def lint_source(source: str, path: str, rules: Sequence[RuleClass], *, noqa: bool = True,
                prefilter_text: bool = True, project: Optional[ProjectFile] = None,
                target: Optional[Target] = None, reparser: Optional[Reparser] = None,
                budget: Optional[float] = None, unfixable: Optional[FrozenSet[str]] = None) -> LintResult:
    """Findings of ``rules`` in ``source``; raises ParseError (see ``_lint_source``), and
    ``engine.budget.AnalysisTimeout`` when it takes more than ``budget`` seconds (None, 0: no
    limit; inside a caller's ``time_budget`` block, the caller's holds). ``unfixable``: the codes
    whose findings come without a fix (None: the ones ``using_fixable`` set, by default none).

    The cyclic garbage collector is paused while one file is linted: a file's
    tree, model and facts are all alive until its result is made, so the
    collections the many small objects would start find nothing to free (they
    cost a run about a fifth of a parse: measured on keras/src), and it runs
    again between files."""
    with time_budget(budget), collector_paused():
        result = _lint_source(source, path, rules, noqa=noqa, prefilter_text=prefilter_text, project=project,
                              target=target, reparser=reparser)
    unfixable = _UNFIXABLE if unfixable is None else unfixable
    return drop_fixes(result, unfixable) if unfixable else result


def _lint_source(source: str, path: str, rules: Sequence[RuleClass], *, noqa: bool = True,
                 prefilter_text: bool = True, project: Optional[ProjectFile] = None,
                 target: Optional[Target] = None, reparser: Optional[Reparser] = None) -> LintResult:
    """Findings of ``rules`` in ``source``; raises ParseError.

    ``prefilter_text=False`` parses and checks even files that lack the rules'
    text (for measuring the engine itself). ``project``: the file's view of the
    project index (None: the file is read alone). ``target``: the project's
    target (None: the one ``using_target`` set, else the newest release). ``reparser``: the
    document's (the language server's), which reuses its last text's unchanged statements.
    """
    checked = False
    tree: Optional[ast.Module] = None
    admitted = imports_project = False
    exemption = file_exemption(source) if noqa else None  # one text search unless the file has one
    file_noqa_line = exemption is not None and exemption.everything
    if exemption is not None and not file_noqa_line:
        rules = [rule for rule in rules if not exemption.covers(rule.code)]
    # The file's own target (one place for the command line, flake8 and the language server): a file
    # setting TF_USE_LEGACY_KERAS before importing tensorflow runs tf_keras 2, whatever its project pins.
    given = target if target is not None else _TARGET
    target = file_target(given, source, os.path.basename(path))
    if target is not given:  # as Settings.rules_for leaves the migration rules out of a Keras 2 project
        rules = [rule for rule in rules if getattr(rule, "migration", False) is not True]
    unused_noqa = next((rule for rule in rules if rule.code == UNUSED_NOQA), None)  # reported here, no visitor
    if unused_noqa is not None:
        rules = [rule for rule in rules if rule is not unused_noqa]
        ran = {rule.code for rule in rules} | {UNUSED_NOQA}  # the codes whose `noqa` can be judged unused
        unused_noqa = unused_noqa if noqa else None
    if prefilter_text and project is not None and not file_noqa_line and rules:
        # TensorFlow (and any name) may come through the project's modules: CPython's tree
        # (its syntax verdict, which every file gets anyway) says what the file imports.
        # Made already when the driver compiled this very text for the index, or cached by content.
        summary = project.own_summary(source)
        if summary is None:
            tree = on_large_stack(check_syntax, source, path)
            summary = summarize(tree, imports_only=True)
        checked = True
        framework = mentions_framework(source)
        outside, admitted = project.imports(summary, reach=not framework)
        if not framework and not admitted:
            # a module naming no framework whose names other modules save or load models at (a config)
            admitted = bool(project.path_readers())
        # A name standing for TensorFlow, NumPy... through the project: the rules' text need not be here.
        imports_project = outside or admitted
    active = prefilter(source, rules, admitted, imports_project) if prefilter_text else list(rules)
    if not active or file_noqa_line:
        # Every file gets CPython's verdict on its syntax, as in Ruff (under a tenth of a LibCST parse).
        if not checked:
            on_large_stack(check_syntax, source, path)
        result = LintResult([])
        if unused_noqa is not None and not file_noqa_line:
            _report_unused(result, NoqaIndex(source), path, ran, unused_noqa)
        return result
    if reparser is not None:
        module = reparse(reparser, source, path, tree)
    else:
        if not checked:
            tree = on_large_stack(check_syntax, source, path)
        module = parse(source, path, True)
    ctx = analyse(module, active, source, project, target)
    try:
        return _result(ctx, module, source, path, tree, reparser, noqa, unused_noqa,
                       ran if unused_noqa is not None else None)
    finally:
        ctx.release()  # the facts' cycles broken: the tree is freed with the result, not by the collector


def _result(ctx: RuleContext, module: cst.Module, source: str, path: str, tree: Optional[ast.Module],
            reparser: Optional[Reparser], noqa: bool, unused_noqa: Optional[RuleClass], ran) -> LintResult:
    """The findings of the reports ``ctx`` holds, with their positions, fixes and ``noqa``."""
    if not ctx.reports:
        result = LintResult([], module)
        if unused_noqa is not None:
            _report_unused(result, NoqaIndex(source), path, ran, unused_noqa)
        return result
    # Edits replace a node's whole text (decorators, leading comments and blank
    # lines included), so they use the whitespace-inclusive ranges. Positions are
    # LibCST's, in the code it generates; ``to_source`` maps them to the text read.
    replaced = {old: new for report in ctx.reports if report.fix is not None
                for old, new in report.fix.replacements.items()}
    # Ranges are kept only for the nodes read below (not two for every node of the file).
    keep = {report.node for report in ctx.reports} | set(replaced)
    keep.update(node for report in ctx.reports if report.fix is not None for node in report.fix.depends_on)
    text_lines = source.split("\n")
    top = _statements(source, text_lines, path, tree, reparser)
    ranges = groups = None
    if top is not None:
        # The code of the innermost statements holding findings only, and of the one new imports go after.
        groups = [(first, last) for first, last, _ in top]
        ranges = statement_ranges(module, text_lines, top, replaced, keep,
                                  also=[max(insertion_index(module) - 1, 0)] if module.body else ())
    if ranges is None:
        ranges = code_ranges(module, replaced, keep | set(module.body))
        groups = None
    positions, extents, generated, indents = ranges
    to_source = SourceMap(source, generated if generated is not None else source)
    lines = LINE_END.split(source)  # not str.splitlines: noqa comments are looked up on Python's lines
    result = LintResult([], module)
    span = {}

    def where(node: cst.CSTNode, table=positions) -> Tuple[Tuple[int, int], Tuple[int, int]]:
        code_range = table[node]
        return (to_source((code_range.start.line, code_range.start.column)),
                to_source((code_range.end.line, code_range.end.column)))

    def extent(node: cst.CSTNode) -> Tuple[Tuple[int, int], Tuple[int, int]]:
        span[node] = where(node, extents)
        return span[node]

    def exact(edit: Edit) -> bool:
        return to_source.exact(edit.start[0]) and to_source.exact(edit.end[0])

    # The top-level statements' rows: a finding whose statement has no `noqa` text at or after its
    # row is answered without tokenizing the file (``NoqaIndex``).
    index = NoqaIndex(source, lines, (lambda: groups) if groups is not None else
                      lambda: [(where(node)[0][0], where(node)[1][0]) for node in module.body]) if noqa else None
    seen = set()
    for report in ctx.reports:
        (row, col), (end_row, end_col) = where(report.node)
        if index is not None and index.suppresses(row, report.rule.code):
            continue
        key = (report.rule.code, row, col, report.message)
        if key in seen:
            continue
        seen.add(key)
        fix_info, fix, replacements = None, report.fix, []
        if fix is not None:
            replacements = _outermost([Edit(code_in_context(module, new, indents.get(old, ())), *extent(old))
                                       for old, new in fix.replacements.items()])
            for node in fix.depends_on:
                extent(node)
            edits = list(replacements)
            missing = missing_imports(module, fix.imports)
            if missing:
                edits.insert(0, _import_edit(module, missing, where, extent))
            if all(exact(edit) for edit in edits):
                fix_info = FixInfo(fix.message, fix.safety, edits)
            else:  # a line LibCST does not write back as it read it: offer no fix there
                fix, replacements = None, []
        result.findings.append(
            Finding(report.rule.code, report.message, path, row, col, end_row, end_col, fix_info, report.rule.name)
        )
        result.fixes.append(fix)
        result.replacement_edits.append(replacements)
    if unused_noqa is not None:
        _report_unused(result, index, path, ran, unused_noqa)
    result.positions = span
    order = sorted(range(len(result.findings)), key=lambda i: result.findings[i].sort_key())
    result.findings = [result.findings[i] for i in order]
    result.fixes = [result.fixes[i] for i in order]
    result.replacement_edits = [result.replacement_edits[i] for i in order]
    result.import_edit = lambda missing: _import_edit(module, missing, where, extent)
    return result


def _statements(source: str, lines: List[str], path: str, tree: Optional[ast.Module],
                reparser: Optional[Reparser]):
    """The module's ``statement_groups`` from CPython's tree of this text (made for its syntax
    verdict, kept by the reparser, else made again: a tenth of the parse, where writing a
    whole file's code for its positions costs a third); None where the text has a carriage
    return or a form feed."""
    if "\r" in source or "\f" in source:
        return None
    if reparser is not None and reparser.last is not None and reparser.last.text is source:
        tree = reparser.last.tree
    if tree is None:
        tree = on_large_stack(check_syntax, source, path)
    return statement_groups(tree.body, lines)


def _outermost(edits: List[Edit]) -> List[Edit]:
    """The edits not inside another one of the same fix (a replaced node's
    replaced child is replaced with it, as a tree transform would)."""
    return [e for e in edits
            if not any(o is not e and o.start <= e.start and e.end <= o.end and (o.start, o.end) != (e.start, e.end)
                       for o in edits)]


def _import_edit(module: cst.Module, missing: List[str], where, extent) -> Edit:
    """The edit inserting ``missing`` imports where the fixer puts them."""
    text = "".join(line + module.default_newline for line in missing)
    index = insertion_index(module)
    if index == 0:
        point = extent(module.body[0])[0]  # before the first statement and its leading lines
    else:
        point = (where(module.body[index - 1])[1][0] + 1, 0)  # the line after the last import
    return Edit(text, point, point)


def _report_unused(result: LintResult, index: NoqaIndex, path: str, ran, rule: RuleClass) -> None:
    """Add a TFG001 finding, with its safe text-edit fix, for each unused directive (``NoqaIndex.unused``:
    after every other finding was looked up). ``rule``: the code's description, which knows every code."""
    for row, directive, message, fix_message, edits in index.unused(ran, rule.known_codes()):
        fix = Fix(fix_message, Safety.SAFE, {})
        result.findings.append(Finding(rule.code, message, path, row, directive.start, row, directive.end,
                                       FixInfo(fix.message, fix.safety, edits), rule.name))
        result.fixes.append(fix)
        result.replacement_edits.append(edits)


def file_noqa(source: str) -> bool:
    """Does a blanket ``# tflint-gpu: noqa`` line exempt the whole file?"""
    exemption = file_exemption(source)
    return exemption is not None and exemption.everything
