"""Run the rules over many files: one process per core, and a cache of results.

Each file is handled whole by one worker: read, lint (and fix), and the
worker returns plain data (findings with text edits, a diff, an error line).
Results of unchanged files come from the cache (``check`` only), keyed by
the file's size and modification time (for a notebook also a digest of its
content), the selected rules and the linter's own code. A Jupyter notebook is
handled by ``tflint_gpu.notebook`` (its code cells joined into one source).
The runner takes plain arguments (paths, rule classes, mode, flags); turning
settings into them is the command line's business.
"""
from __future__ import annotations

import codecs
import dataclasses
import difflib
import hashlib
import multiprocessing
import os
import pickle
import re
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import tflint_gpu
from tflint_gpu.engine.fix import fix_source
from tflint_gpu.engine.lint import ParseError, RuleClass, lint_source
from tflint_gpu.files import decode, encode, write_atomic
from tflint_gpu.findings import Finding
from tflint_gpu.notebook import is_notebook
from tflint_gpu.notebook import process as process_notebook

CHECK, FIX, DIFF = "check", "fix", "diff"
# Below this many files a process pool costs more than it saves.
PARALLEL_THRESHOLD = 8


@dataclass
class FileResult:
    path: str
    findings: List[Finding] = field(default_factory=list)
    error: Optional[str] = None  # one line, naming the file
    fixed: int = 0
    fixed_codes: List[str] = field(default_factory=list)
    diff: str = ""
    output: Optional[str] = None  # the fixed text (stdin mode)


def process_text(source: str, path: str, rules: Sequence[RuleClass], mode: str, unsafe: bool) -> FileResult:
    try:
        if mode == CHECK:
            return FileResult(path, lint_source(source, path, rules).findings)
        outcome = fix_source(source, path, rules, unsafe=unsafe)
    except ParseError as error:
        return FileResult(path, error=str(error))
    except RecursionError:
        return FileResult(path, error=f"{path}: too deeply nested to analyse")
    except Exception as error:  # a bug of ours must not stop the other files
        return FileResult(path, error=f"{path}: internal error: {type(error).__name__}: {error} (please report)")
    result = FileResult(path, outcome.findings, fixed=outcome.applied, fixed_codes=outcome.applied_codes)
    if outcome.refused:
        result.error = f"{path}: a fix produced code that does not parse; file left unchanged (please report)"
    if outcome.source != source:
        result.output = outcome.source
        if mode == DIFF:
            result.diff = unified_diff(source, outcome.source, path)
    return result


_LINE_END = re.compile(r"(?<=\r\n)|(?<=\r)(?!\n)|(?<=\n)")


def _lines(text: str) -> List[str]:
    """Lines as Python counts them (``\n``, ``\r\n``, ``\r``), ends kept: a form
    feed or U+2028 inside a line does not split it as ``str.splitlines`` would."""
    lines = _LINE_END.split(text)
    return lines[:-1] if lines and lines[-1] == "" else lines


def unified_diff(before: str, after: str, path: str) -> str:
    """A unified diff that ``patch`` and ``git apply`` accept, with the
    ``\\ No newline at end of file`` marker where a side lacks a final newline."""
    out = []
    for line in difflib.unified_diff(_lines(before), _lines(after), path, path):
        out.append(line)
        if not line.endswith(("\n", "\r")):
            out.append("\n\\ No newline at end of file\n")
    return "".join(out)


def process_notebook_data(data: bytes, path: str, rules: Sequence[RuleClass], mode: str,
                          unsafe: bool) -> Tuple[FileResult, Optional[bytes]]:
    """A notebook's result, and its new bytes when fixes changed it (``--fix``/``--diff``)."""
    try:
        outcome = process_notebook(data, path, rules, fix=mode != CHECK, unsafe=unsafe, want_diff=mode == DIFF)
    except ParseError as error:
        return FileResult(path, error=str(error)), None
    except RecursionError:
        return FileResult(path, error=f"{path}: too deeply nested to analyse"), None
    except Exception as error:  # a bug of ours must not stop the other files
        return FileResult(path, error=f"{path}: internal error: {type(error).__name__}: {error} (please report)"), None
    result = FileResult(path, list(outcome.findings), error=outcome.error, fixed=outcome.fixed,
                        fixed_codes=outcome.fixed_codes, diff=outcome.diff, output=outcome.text)
    new = None
    if outcome.text is not None:
        new = outcome.text.encode("utf-8")
        if data.startswith(codecs.BOM_UTF8):
            new = codecs.BOM_UTF8 + new
    return result, new


def process_file(path: str, rules: Sequence[RuleClass], mode: str, unsafe: bool) -> FileResult:
    try:
        with open(path, "rb") as handle:
            data = handle.read()
        if is_notebook(path):
            result, new = process_notebook_data(data, path, rules, mode, unsafe)
            if mode == FIX and new is not None and not result.error:
                try:
                    write_atomic(path, new)
                except OSError as error:
                    result.error = f"{path}: cannot write: {error.strerror}"
            result.output = None
            return result
        source = decode(data)
    except (OSError, UnicodeDecodeError, LookupError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        return FileResult(path, error=f"{path}: cannot read: {reason}")
    result = process_text(source.text, path, rules, mode, unsafe)
    if mode == FIX and result.output is not None and not result.error:
        try:
            write_atomic(path, encode(source, result.output))
        except OSError as error:
            result.error = f"{path}: cannot write: {error.strerror}"
    result.output = None
    return result


# One file's work: (path, rule classes, mode, unsafe). Rule classes pickle by
# reference, so a worker process imports their modules itself.
_Task = Tuple[str, Tuple[RuleClass, ...], str, bool]


def _process_star(args: _Task) -> FileResult:
    return process_file(*args)


def _code_version() -> str:
    """Changes whenever the linter's own code changes."""
    digest = hashlib.sha256(tflint_gpu.__version__.encode())
    package = Path(tflint_gpu.__file__).parent
    for path in sorted(package.rglob("*.py")):
        stat = path.stat()
        digest.update(f"{path.relative_to(package)}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:16]


class Cache:
    """One pickle per ``key`` (what decides the results besides the file: the
    selection, per-file ignores) and linter version: path -> (stamp, findings)."""

    def __init__(self, directory: Optional[Path], key: str) -> None:
        self.path: Optional[Path] = None
        self.entries: Dict[str, Tuple[Tuple, List[Finding]]] = {}
        self.dirty = False
        if directory is None:
            return
        digest = hashlib.sha256(f"{_code_version()}|{key}".encode()).hexdigest()[:20]
        self.path = directory / f"{digest}.pickle"
        try:
            with open(self.path, "rb") as handle:
                self.entries = pickle.load(handle)
        except (OSError, pickle.PickleError, EOFError, AttributeError, ValueError):
            self.entries = {}

    @staticmethod
    def stamp(path: str) -> Optional[Tuple]:
        """Size and modification time; for a notebook also a digest of its content (editors and
        ``nbstripout`` rewrite notebooks in place, so the key covers what is checked)."""
        try:
            stat = os.stat(path)
            if is_notebook(path):
                with open(path, "rb") as handle:
                    digest = hashlib.sha256(handle.read()).hexdigest()[:20]
                return (stat.st_size, stat.st_mtime_ns, digest)
        except OSError:
            return None
        return (stat.st_size, stat.st_mtime_ns)

    def get(self, path: str) -> Optional[List[Finding]]:
        entry = self.entries.get(os.path.abspath(path))
        if entry is not None and entry[0] == self.stamp(path):
            return [_with_path(f, path) for f in entry[1]]
        return None

    def put(self, path: str, findings: List[Finding]) -> None:
        stamp = self.stamp(path)
        if stamp is not None:
            self.entries[os.path.abspath(path)] = (stamp, findings)
            self.dirty = True

    def save(self) -> None:
        if self.path is None or not self.dirty:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            ignore = self.path.parent / ".gitignore"
            if not ignore.exists():
                ignore.write_text("# Created by tflint-gpu\n*\n")
            temporary = self.path.with_suffix(".tmp")
            with open(temporary, "wb") as handle:
                pickle.dump(self.entries, handle, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(temporary, self.path)
        except OSError:
            pass  # a cache that cannot be written is no cache


def _with_path(finding: Finding, path: str) -> Finding:
    if finding.path == path:
        return finding
    return dataclasses.replace(finding, path=path)  # keeps the class (a notebook finding stays one)


def run_files(paths: Sequence[str], rules_for: Callable[[str], Sequence[RuleClass]], mode: str, *,
              unsafe: bool = False, jobs: int = 1, cache_dir: Optional[Path] = None,
              cache_key: str = "") -> List[FileResult]:
    """Results of ``paths`` in their order. ``rules_for(path)``: the rule classes
    to run on a file; ``unsafe``: apply unsafe fixes too; ``cache_dir``: where
    ``check`` results are cached (None: no cache), under ``cache_key``."""
    cache = Cache(cache_dir if mode == CHECK else None, cache_key)
    results: Dict[str, FileResult] = {}
    todo: List[_Task] = []
    for path in paths:
        cached = cache.get(path) if cache.path else None
        if cached is not None:
            results[path] = FileResult(path, cached)
        else:
            todo.append((path, tuple(rules_for(path)), mode, unsafe))
    for result in _map(todo, jobs):
        results[result.path] = result
        if cache.path is not None and result.error is None:
            cache.put(result.path, result.findings)
    cache.save()
    return [results[p] for p in paths]


def _map(todo: List[_Task], jobs: int) -> Iterable[FileResult]:
    if jobs <= 1 or len(todo) < PARALLEL_THRESHOLD:
        return [_process_star(item) for item in todo]
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else None)
    chunk = max(1, min(16, len(todo) // (jobs * 4)))
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        return list(pool.map(_process_star, todo, chunksize=chunk))
