"""Run the rules over many files: one process per core, and a cache of results.

Each file is read, linted (and fixed) whole by one worker, which returns
plain data: findings with text edits, a diff, an error line, and with
``--fix`` the new bytes and a digest of the bytes it read. Only this process
writes files (``files.write_fixed``), so a worker that dies never leaves a
rewrite unreported: the file it was on is reported as one error line and the
other files are finished. Results of unchanged files come from the cache
(``check`` only: ``engine.cache``). A Jupyter notebook is handled by
``tflint_gpu.notebook`` (its code cells joined into one source). The runner
takes plain arguments (paths, rule classes, mode, flags); turning settings
into them is the command line's business.

With a project root, the project index (``semantic.project``) is built first:
a summary of every Python file checked, from CPython's ``ast``, in parallel,
cached by content hash beside the results (``engine.cache.ProjectCache``);
other modules of the project are summarised as imports reach them. Every
worker reads the same index; a cached result is reused only while the
project modules it read are unchanged.
"""
from __future__ import annotations

import codecs
import contextlib
import hashlib
import os
import re
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Dict, FrozenSet, Iterable, Iterator, List, Optional, Sequence, Tuple

from tflint_gpu.engine.budget import AnalysisTimeout, time_budget
from tflint_gpu.engine.cache import Cache, ProjectCache
from tflint_gpu.files import WriteRefused, decode, encode, write_fixed
from tflint_gpu.findings import IO_ERROR, FileProblem, Finding, is_notebook
from tflint_gpu.semantic.project import ProjectFile, ProjectIndex, Summary, collector_paused, content_digest, \
    dependencies_valid, summarize_source
from tflint_gpu.semantic.target import Target

# The linter (``engine.lint``, ``engine.fix``: LibCST and the semantic model) is imported by the functions
# that lint, so that a run answered from the cache, and the command line's start, load no parser.
# So are the process pool's modules (multiprocessing, concurrent.futures: 13 ms of CPU a start), by
# the functions that start one.
if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

    from tflint_gpu.engine.lint import RuleClass

CHECK, FIX, DIFF = "check", "fix", "diff"
NOQA = "add-noqa"  # write `# noqa: CODE` on the findings' lines (``engine.fix.add_noqa``), as --fix writes
# Below this many files a process pool costs more than it saves.
PARALLEL_THRESHOLD = 8
# A file larger than this is reported and skipped (generated code, data in a .py).
MAX_FILE_BYTES = 8 * 1024 * 1024
# A Python file of more tokens than this (``_TOKEN``: names, numbers, words and each other
# character but spaces) is reported and skipped: the analysis holds 1.2-3.0 KB a token at its
# peak (getrusage, measured on keras/src's largest files and on generated code, data and dense
# literals; 20-30 KB a line of ordinary code), so this bounds one file's analysis near 0.6-1.5 GB.
# The largest file of keras/src and tf_keras/src has 125,000; a token is at least a character,
# so only longer texts are counted (a regular expression: 25 ms a 100,000 tokens).
MAX_FILE_TOKENS = 500_000
_TOKEN = re.compile(r"\w+|[^\w\s]")


@dataclass
class FileResult:
    path: str
    findings: List[Finding] = field(default_factory=list)
    error: Optional[str] = None  # one line, naming the file
    fixed: int = 0
    fixed_codes: List[str] = field(default_factory=list)
    diff: str = ""
    output: Optional[str] = None  # the fixed text (stdin mode)
    new_data: Optional[bytes] = None  # --fix: the bytes to write
    read_digest: str = ""  # --fix: of the bytes the fix was made from
    deps: str = ""  # what the findings read from the project index (ProjectFile.dependency_key)
    # What could not be checked (a syntax error, a read error, an analysis that failed), as reporters
    # show it; ``error`` is its one line (for a notebook, one line for all its skipped cells).
    problems: List[FileProblem] = field(default_factory=list)


# The run's project index (None: each file is read alone). Set by ``run_files``; a worker gets it
# from the pool's initializer.
_INDEX: Optional[ProjectIndex] = None


def project_file(path: str, index: Optional[ProjectIndex] = None) -> Optional[ProjectFile]:
    """``path``'s view of ``index`` (default: the run's), if there is one."""
    index = index if index is not None else _INDEX
    return ProjectFile(index, path) if index is not None else None


def failure(path: str, error: BaseException) -> str:
    """The one line for an analysis that raised ``error``. Code nested deeper
    than Python's recursion limit lets the walk or LibCST's code generation
    go raises RecursionError, sometimes turned into another error on the way
    (a KeyError out of a context manager): said as such. The message of an
    error is read with care: ``str`` of one that holds a deep node recurses too."""
    seen = error
    while seen is not None:
        if isinstance(seen, RecursionError):
            return f"{path}: too deeply nested to analyse"
        seen = seen.__context__
    try:
        text = " ".join(str(error).split())[:200]
    except Exception:  # RecursionError included
        text = "(message unavailable)"
    return f"{path}: internal error: {type(error).__name__}: {text} (please report)"


def process_text(source: str, path: str, rules: Sequence[RuleClass], mode: str, unsafe: bool,
                 project: Optional[ProjectFile] = None) -> FileResult:
    """Lint (or fix) one text; ``project``: its view of the project index."""
    from tflint_gpu.engine.fix import add_noqa, fix_source
    from tflint_gpu.engine.lint import ParseError, lint_source, parse_problem

    deps = ""
    try:
        if mode == CHECK:
            findings = lint_source(source, path, rules, project=project).findings
            return FileResult(path, findings, deps=project.dependency_key() if project is not None else "")
        if mode == NOQA:
            outcome = add_noqa(source, path, rules, project=project)
        else:
            outcome = fix_source(source, path, rules, unsafe=unsafe, project=project)
        deps = project.dependency_key() if project is not None else ""
    except ParseError as error:
        return FileResult(path, error=str(error), problems=[parse_problem(path, error)])
    except Exception as error:  # a bug of ours must not stop the other files
        return failed(path, failure(path, error))
    result = FileResult(path, outcome.findings, fixed=outcome.applied, fixed_codes=outcome.applied_codes, deps=deps)
    if outcome.refused:
        result.error = f"{path}: a fix produced code that does not parse; file left unchanged (please report)"
    if outcome.source != source:
        result.output = outcome.source
        if mode == DIFF:
            result.diff = unified_diff(source, outcome.source, path)
    return result


def failed(path: str, line: str, code: Optional[str] = None) -> FileResult:
    """The result of a file that could not be checked: ``line`` names it (``path: reason``)."""
    reason = line[len(path) + 2:] if line.startswith(path + ": ") else line
    return FileResult(path, error=line, problems=[FileProblem(code, path, reason)])


_LINE_END = re.compile(r"(?<=\r\n)|(?<=\r)(?!\n)|(?<=\n)")


def _lines(text: str) -> List[str]:
    """Lines as Python counts them (``\n``, ``\r\n``, ``\r``), ends kept: a form
    feed or U+2028 inside a line does not split it as ``str.splitlines`` would."""
    lines = _LINE_END.split(text)
    return lines[:-1] if lines and lines[-1] == "" else lines


def unified_diff(before: str, after: str, path: str) -> str:
    """A unified diff that ``patch`` and ``git apply`` accept, with the
    ``\\ No newline at end of file`` marker where a side lacks a final newline."""
    import difflib  # only for --diff

    out = []
    for line in difflib.unified_diff(_lines(before), _lines(after), path, path):
        out.append(line)
        if not line.endswith(("\n", "\r")):
            out.append("\n\\ No newline at end of file\n")
    return "".join(out)


def process_notebook_data(data: bytes, path: str, rules: Sequence[RuleClass], mode: str,
                          unsafe: bool, project: Optional[ProjectFile] = None) -> Tuple[FileResult, Optional[bytes]]:
    """A notebook's result, and its new bytes when fixes changed it (``--fix``/``--diff``)."""
    from tflint_gpu.engine.lint import ParseError, parse_problem
    from tflint_gpu.notebook import process as process_notebook

    try:
        outcome = process_notebook(data, path, rules, fix=mode != CHECK, unsafe=unsafe, want_diff=mode == DIFF,
                                   project=project, add_noqa=mode == NOQA)
    except ParseError as error:
        return FileResult(path, error=str(error), problems=[parse_problem(path, error)]), None
    except Exception as error:  # a bug of ours must not stop the other files
        return failed(path, failure(path, error)), None
    result = FileResult(path, list(outcome.findings), error=outcome.error, fixed=outcome.fixed,
                        fixed_codes=outcome.fixed_codes, diff=outcome.diff, output=outcome.text,
                        deps=project.dependency_key() if project is not None else "")
    result.problems = outcome.problems
    new = None
    if outcome.text is not None:
        new = outcome.text.encode("utf-8")
        if data.startswith(codecs.BOM_UTF8):
            new = codecs.BOM_UTF8 + new
    return result, new


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def process_file(path: str, rules: Sequence[RuleClass], mode: str, unsafe: bool,
                 target: Optional[Target] = None, budget: Optional[float] = None,
                 unfixable: FrozenSet[str] = frozenset()) -> FileResult:
    """Read and lint (or fix) one file; writes nothing (``write_result`` does).
    ``target``: its project's target (``RuleContext.target``); ``budget``: seconds the file
    may take (None, 0: no limit), past which it is one error line (``within_budget``);
    ``unfixable``: the codes whose findings come without a fix (``lint.using_fixable``).

    The cyclic collector stays paused until the file's result is made (``collector_paused``):
    by then its syntax tree and facts have been freed by reference counting (the facts break
    their cycles, ``RuleContext.release``), where a collection as soon as the lint returned
    would have traversed the whole tree, still held by the lint's result, once more."""
    from tflint_gpu.engine.lint import using_fixable, using_target

    with using_target(target), using_fixable(unfixable), collector_paused():
        return within_budget(path, budget, _process_file, path, rules, mode, unsafe)


def timed_out(path: str, seconds: float) -> FileResult:
    """The result of a file whose analysis ran past its budget: one line, a failure of the analysis."""
    return failed(path, f"{path}: {AnalysisTimeout(seconds)}")


def within_budget(path: str, seconds: Optional[float], function: Callable[..., FileResult], *args) -> FileResult:
    """``function(*args)``, stopped after ``seconds`` (``engine.budget``): then ``timed_out``."""
    try:
        with time_budget(seconds):
            return function(*args)
    except AnalysisTimeout as error:
        return timed_out(path, error.seconds)


def _process_file(path: str, rules: Sequence[RuleClass], mode: str, unsafe: bool) -> FileResult:
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            return failed(path, f"{path}: larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB; not analysed",
                          IO_ERROR)
        project = project_file(path)
        if is_notebook(path):
            result, new = process_notebook_data(data, path, rules, mode, unsafe, project)
        else:
            source = decode(data)
            too_large = over_token_limit(source.text, path)
            if too_large:
                return failed(path, too_large, IO_ERROR)
            if project is not None:
                full = os.path.abspath(path)
                known = project.index.summaries.get(full)
                if known is not None and project.index.digests.get(full) == content_digest(data):
                    project.own = (source.text, known)  # compiled for the index: not compiled again
            result = process_text(source.text, path, rules, mode, unsafe, project)
            new = encode(source, result.output) if result.output is not None else None
    except (OSError, UnicodeDecodeError, LookupError, SyntaxError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        return failed(path, f"{path}: cannot read: {reason}", IO_ERROR)
    result.output = None
    if mode in (FIX, NOQA) and new is not None and not result.error:
        result.new_data, result.read_digest = new, digest(data)
    return result


def over_token_limit(source: str, path: str) -> Optional[str]:
    """The one line of a text with more than ``MAX_FILE_TOKENS`` tokens (its analysis would
    take too much memory), else None. A text that names neither TensorFlow nor Keras is not
    analysed (``lint.prefilter``), so it is not refused: a vendored get-pip.py (a 2 MB base85
    blob, a million tokens) is read and passed as before."""
    from tflint_gpu.engine.lint import mentions_framework

    if len(source) <= MAX_FILE_TOKENS or not mentions_framework(source):
        return None
    tokens = _TOKEN.subn("", source)[1]
    if tokens <= MAX_FILE_TOKENS:
        return None
    return (f"{path}: {tokens:,} tokens, more than the {MAX_FILE_TOKENS:,} one file may have (its analysis "
            f"would take about {tokens * 3 // 1000:,} MB); not analysed")


def write_result(result: FileResult, recheck: Callable[[str], FileResult], tree: Optional[str] = None) -> FileResult:
    """Write a ``--fix`` result's new bytes if the file still holds what was
    read (through a symbolic link only to a file inside ``tree``: ``files.write_fixed``);
    when it cannot be written, the file's findings as it stands now,
    nothing counted as fixed, and one line saying why (``recheck(path)``: a
    ``check`` of the file)."""
    if result.new_data is None:
        return result
    data, result.new_data = result.new_data, None
    try:
        write_fixed(result.path, result.read_digest, data, tree)
        return result
    except WriteRefused as error:
        reason = str(error)
    except OSError as error:
        reason = f"cannot write: {error.strerror or error}"
    now = recheck(result.path)
    now.error = now.error or f"{result.path}: {reason}; not fixed"
    return now


# One file's work: (path, rule classes, mode, unsafe, target, time budget, unfixable codes). Rule classes
# pickle by reference, so a worker process imports their modules itself.
_Task = Tuple[str, Tuple["RuleClass", ...], str, bool, Optional[Target], Optional[float], FrozenSet[str]]


def _process_star(args: _Task) -> FileResult:
    return process_file(*args)


def run_files(paths: Sequence[str], rules_for: Callable[[str], Sequence[RuleClass]], mode: str, *,
              unsafe: bool = False, jobs: int = 1, cache_dir: Optional[Path] = None,
              cache_key: str = "", project_root: Optional[str] = None,
              target_for: Optional[Callable[[str], Optional[Target]]] = None,
              tree_for: Optional[Callable[[str], str]] = None,
              progress: Optional[Callable[[int], None]] = None, budget: Optional[float] = None,
              unfixable: FrozenSet[str] = frozenset()) -> List[FileResult]:
    """Results of ``paths`` in their order. ``rules_for(path)``: the rule classes
    to run on a file; ``unsafe``: apply unsafe fixes too; ``cache_dir``: where
    ``check`` results are cached (None: no cache), under ``cache_key`` (which
    must tell the targets apart); ``target_for(path)``: the file's project target;
    ``project_root``: where the project's modules are named from (None: each
    file is read alone). With ``--fix``, each file's fixes are written here (through a
    symbolic link only to a file inside ``tree_for(path)``, default its folder) as
    its result arrives. ``progress(done)``: told how many files are done as results arrive.
    ``budget``: seconds one file's analysis may take (None, 0: no limit); a file past it is one
    error line (``timed_out``), and a worker stuck far past it in native code is ended. ``unfixable``:
    the codes whose findings come without a fix (the cache key must tell them apart too)."""
    global _INDEX
    target_of = target_for or (lambda path: None)
    store = ProjectCache(cache_dir) if project_root else None
    index = build_index(project_root, paths, jobs, store) if project_root else None
    if index is not None:
        index.list_folders()  # one run: the project's folders as they stand when it starts
    cache = Cache(cache_dir if mode == CHECK else None, f"{cache_key}|{project_root or ''}")
    states: Dict[str, str] = {}  # the index does not change while the cached results are checked, all first
    valid = (lambda deps: dependencies_valid(index, deps, states)) if index is not None else (lambda deps: not deps)
    previous, _INDEX = _INDEX, index
    try:
        results: Dict[str, FileResult] = {}
        todo: List[_Task] = []
        for path in paths:
            cached = cache.get(path, valid) if cache.path else None
            if cached is not None:
                results[path] = FileResult(path, cached)
            else:
                todo.append((path, tuple(rules_for(path)), mode, unsafe, target_of(path), budget, unfixable))
        if todo:  # the linter imported here once, before worker processes fork, not in each of them
            import tflint_gpu.engine.fix  # noqa: F401
            import tflint_gpu.engine.lint  # noqa: F401

        def recheck(path: str) -> FileResult:
            return process_file(path, tuple(rules_for(path)), CHECK, unsafe, target_of(path), budget, unfixable)

        if progress is not None:
            progress(len(results))
        for result in _map(todo, jobs, index):
            result = write_result(result, recheck, tree_for(result.path) if tree_for else None)
            results[result.path] = result
            if progress is not None:
                progress(len(results))
            if cache.path is not None and result.error is None:
                cache.put(result.path, result.findings, result.deps)
        cache.save()
        if store is not None:
            store.save()
    finally:
        _INDEX = previous
    return [results[p] for p in paths]


def _summarize_file(path: str) -> Tuple[str, Optional[str], Optional[Summary]]:
    """(path, content digest, summary) of one Python file; no summary when it cannot be read or compiled."""
    from tflint_gpu.engine.lint import on_large_stack

    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            return path, None, None
        text = decode(data).text
        if over_token_limit(text, path):  # the check reports it
            return path, None, None
        return path, content_digest(data), on_large_stack(summarize_source, text, path)
    except Exception:  # unreadable, not Python: the check reports it
        return path, None, None


def _summarize_batch(batch: List[str]) -> List[Tuple[str, Optional[str], Optional[Summary]]]:
    return [_summarize_file(path) for path in batch]


def build_index(root: str, paths: Sequence[str], jobs: int, store: Optional[ProjectCache] = None) -> ProjectIndex:
    """The project index under ``root``: a summary of every Python file in ``paths``
    (from ``store`` when unchanged, else compiled, in ``jobs`` processes when there
    are many); other modules are summarised as imports reach them. A file compiled
    here is not compiled again by its check (``ProjectFile.own``)."""
    store = store if store is not None else ProjectCache(None)
    summaries: Dict[str, Optional[Summary]] = {}
    digests: Dict[str, str] = {}
    todo = []
    for path in paths:
        if is_notebook(path):
            continue
        full = os.path.abspath(path)
        known = store.known(full)
        if known is not None:
            summaries[full] = known
            digests[full] = store.files[full][1]
        else:
            todo.append(full)
    if jobs > 1 and len(todo) >= PARALLEL_THRESHOLD:
        from concurrent.futures import ProcessPoolExecutor
        from concurrent.futures.process import BrokenProcessPool

        context = _fork_context()
        chunk = max(1, min(32, len(todo) // (jobs * 4)))
        pool = ProcessPoolExecutor(max_workers=jobs, mp_context=context, initializer=die_with_parent,
                                   initargs=(os.getpid(),))
        with _ending_workers(pool):
            parts = [todo[i:i + chunk] for i in range(0, len(todo), chunk)]
            try:
                done = [item for part in pool.map(_summarize_batch, parts) for item in part]
            except BrokenProcessPool:  # a file that kills the compiler's process: summarised where asked
                done = []
    else:
        done = [_summarize_file(path) for path in todo]
    for path, digest, summary in done:
        summaries[path] = summary
        if summary is not None and digest is not None:
            store.add(path, digest, summary)
            digests[path] = digest
    index = ProjectIndex(root, summaries, loader=store.load)
    index.digests = digests
    return index


def _crashed(task: _Task, how: str) -> FileResult:
    return failed(task[0], f"{task[0]}: the analysis crashed ({how}); file skipped (please report)")


def hard_limit(seconds: Optional[float]) -> Optional[float]:
    """How long a worker may stay on one file before the main process ends it: twice the file's
    budget and 5 s more. The budget stops Python code in time (``engine.budget``); a worker still on
    the file this long after is stuck in native code (a parse, a regular expression)."""
    return seconds * 2 + 5 if seconds and seconds > 0 else None


def _map(todo: List[_Task], jobs: int, index: Optional[ProjectIndex] = None) -> Iterable[FileResult]:
    if jobs <= 1 or len(todo) < PARALLEL_THRESHOLD:
        return (_process_star(item) for item in todo)
    return _parallel(todo, jobs, index)


def _size(task: _Task) -> int:
    try:
        return os.stat(task[0]).st_size
    except OSError:
        return 0


# Batches hold at most this many files (fewer messages between processes for many small files).
MAX_BATCH = 16


def batches(sizes: Sequence[int], jobs: int) -> List[List[int]]:
    """The tasks ``jobs`` workers are given for files of ``sizes``: lists of indexes into ``sizes``,
    the largest files first. The largest files, at least two a worker and as many as hold half
    of all the bytes, are one a task, so two slow files never wait for each other in one worker's
    batch; the rest go in batches, smaller ones last, so no worker waits long for the other."""
    order = sorted(range(len(sizes)), key=lambda i: -sizes[i])
    total, covered, singles = sum(sizes), 0, 0
    while singles < len(order) and (singles < jobs * 2 or covered * 2 < total):
        covered += sizes[order[singles]]
        singles += 1
    out = [[i] for i in order[:singles]]
    rest = order[singles:]
    chunk = max(1, min(MAX_BATCH, len(rest) // (jobs * 4)))
    out += [rest[i:i + chunk] for i in range(0, len(rest), chunk)]
    return out


_started = None  # in a worker: one start time a task (monotonic; 0: not started), set as the task starts
_pids = None  # in a worker: the pid of the worker on each task


def _init_worker(started, pids, index: Optional[ProjectIndex] = None, parent: int = 0) -> None:
    global _started, _pids, _INDEX
    die_with_parent(parent)
    _started, _pids = started, pids
    _INDEX = index


PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int) -> None:
    """A worker ends when the process that made it does (on Linux: ``PR_SET_PDEATHSIG``), so an
    interrupted run leaves no worker burning CPU; the main process also ends its workers when it is
    interrupted (``_ending_workers``)."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes  # here, in a worker: a run without workers imports no ctypes

            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        except (OSError, AttributeError):  # pragma: no cover
            pass
    if parent and os.getppid() != parent:  # the parent died before that was asked
        os._exit(1)


def _process_batch(batch: List[Tuple[int, _Task]]) -> List[Tuple[int, FileResult]]:
    out = []
    for number, task in batch:
        # Shared memory: a worker that dies next, or stays too long, has said so.
        _pids[number] = os.getpid()
        _started[number] = time.monotonic()
        out.append((number, _process_star(task)))
    return out


class _Terminated(SystemExit):
    """SIGTERM, in the main process while workers run: their pool is ended, then the process."""


@contextlib.contextmanager
def _ending_workers(pool: ProcessPoolExecutor):
    """``pool`` shut down at the end of the block; when the block is left by an exception (Ctrl-C,
    SIGTERM, an error), its workers are killed at once instead of being waited for."""
    handler = None
    if threading.current_thread() is threading.main_thread():
        def terminated(signum, frame):
            raise _Terminated(128 + signum)

        try:
            handler = signal.signal(signal.SIGTERM, terminated)
        except (ValueError, OSError):  # pragma: no cover
            handler = None
    try:
        yield pool
    except _Terminated as stop:
        # SIGTERM ends the process as it ends any: the workers first, then at once. Leaving by the
        # interpreter's exit instead ran concurrent.futures' exit hook, whose wake-up of the pool's
        # manager thread could meet a pipe the shutdown had closed and print a traceback
        # (OSError: Bad file descriptor; seen once in a CI run under load).
        _kill_workers(pool)
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):  # pragma: no cover - a closed stream
                pass
        os._exit(stop.code if isinstance(stop.code, int) else 143)
    except BaseException:
        _kill_workers(pool)
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    else:
        pool.shutdown(wait=True)
    finally:
        if handler is not None:
            signal.signal(signal.SIGTERM, handler)


def _kill_workers(pool: ProcessPoolExecutor) -> None:
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        try:
            process.kill()
        except (OSError, ValueError, AttributeError):  # pragma: no cover - gone already
            pass
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        try:
            process.join(1)
        except (OSError, ValueError, AttributeError, AssertionError):  # pragma: no cover
            pass


def _fork_context():
    """The process pools' start method: fork where there is one (the workers inherit the imported
    linter and the project index), else the platform's default."""
    import multiprocessing

    return multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else None)


def _pool(jobs: int, context, initargs) -> ProcessPoolExecutor:
    from concurrent.futures import ProcessPoolExecutor

    return ProcessPoolExecutor(max_workers=jobs, mp_context=context, initializer=_init_worker, initargs=initargs)


def _parallel(todo: List[_Task], jobs: int, index: Optional[ProjectIndex] = None) -> Iterator[FileResult]:
    """Results as they come from ``jobs`` worker processes (tasks: ``batches``). When a worker
    dies (a crash in native code), the tasks that had started and not finished when the pool
    broke are run again one by one, each alone in a new worker: the one that kills its worker
    again is reported as crashed; the rest goes on. A worker on one file past ``hard_limit`` is
    ended the same way, and that file reported as over its budget."""
    from concurrent.futures.process import BrokenProcessPool

    context = _fork_context()
    sizes = [_size(task) for task in todo]
    pending = list(enumerate(todo))
    started = context.RawArray("d", len(todo))
    pids = context.RawArray("i", len(todo))
    over: set = set()  # tasks whose worker was ended for staying too long
    while pending:
        done: set = set()

        def end_stuck(now: Optional[float] = None) -> None:
            now = time.monotonic() if now is None else now
            for number, task in pending:
                limit = hard_limit(task[5])
                if limit and started[number] and number not in done and number not in over \
                        and now - started[number] > limit:
                    over.add(number)
                    try:
                        os.kill(pids[number], signal.SIGKILL)
                    except OSError:
                        pass

        watch = end_stuck if any(hard_limit(task[5]) for _, task in pending) else None
        pool = _pool(jobs, context, (started, pids, index, os.getpid()))
        with _ending_workers(pool):
            groups = batches([sizes[number] for number, _ in pending], jobs)
            futures = [pool.submit(_process_batch, [pending[i] for i in group]) for group in groups]
            broken = False
            for future in _as_done(futures, watch):
                try:
                    batch = future.result()
                except BrokenProcessPool:
                    broken = True
                    continue
                for number, result in batch:
                    done.add(number)
                    yield result
        if not broken:
            return
        for number, task in pending:
            if number in over and number not in done:
                done.add(number)
                yield timed_out(task[0], task[5])
        suspects = [(i, t) for i, t in pending if started[i] and i not in done]
        pending = [(i, t) for i, t in pending if not started[i]]
        if not suspects:  # the pool broke before any task started: take no chance
            suspects, pending = pending, []
        for _, task in suspects:
            yield _alone(task, context, index)


# How often the main process looks for a worker past its file's ``hard_limit``, seconds.
WATCH_SECONDS = 1.0


def _as_done(futures, watch: Optional[Callable[[], None]] = None):
    from concurrent.futures import FIRST_COMPLETED, wait

    remaining = set(futures)
    while remaining:
        finished, remaining = wait(remaining, timeout=WATCH_SECONDS if watch is not None else None,
                                   return_when=FIRST_COMPLETED)
        if watch is not None:
            watch()
        yield from finished


def _alone(task: _Task, context, index: Optional[ProjectIndex] = None) -> FileResult:
    """``task`` run in a worker of its own: a crash costs this task only."""
    from concurrent.futures import TimeoutError as FutureTimeout
    from concurrent.futures.process import BrokenProcessPool

    pool = _pool(1, context, (None, None, index, os.getpid()))
    with _ending_workers(pool):
        future = pool.submit(_process_star, task)
        try:
            return future.result(timeout=hard_limit(task[5]))
        except BrokenProcessPool:
            return _crashed(task, "its worker process died")
        except FutureTimeout:
            _kill_workers(pool)
            return timed_out(task[0], task[5])
