"""The result cache: one JSON file per selection and linter version.

A cache folder may come with a cloned repository, so what is read is data
only (JSON, never pickle) and is checked field by field: anything unexpected
(another layout, a wrong type, a value out of range) is a cache miss, never
an error and never code that runs. A new cache folder gets a ``.gitignore``
(``*``) and a ``CACHEDIR.TAG``, as Ruff's does.

A file's entry also holds what its findings read from the project index (the
modules its imports led to, each with the digest of its summary: ``deps``); it
is reused only while those modules stand as they stood, so editing
``utils.py`` invalidates the findings of ``train.py`` that imports it. The
index's summaries are cached beside it (``ProjectCache``), by content hash.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import stat as stat_module
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

import tflint_gpu
from tflint_gpu.findings import CellEdit, Edit, Finding, FixInfo, NotebookFinding, Safety, is_notebook
from tflint_gpu.semantic.project import Summary, content_digest, summarize_source

FORMAT = 3
# A cache keeps the entries of at most this many files, and at most about this many bytes of
# them: the most recently used (read or written) ones. Entries of files that no longer exist are
# dropped whenever the cache is written. (One folder checked over and over never nears either:
# keras/src with every rule: 770 files, 1.1 MB.)
MAX_ENTRIES = 50_000
MAX_BYTES = 64 * 1024 * 1024
_TAG = "Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag created by tflint-gpu.\n"


def code_version() -> str:
    """Changes whenever the linter's own code changes, or the Python that runs it
    (whose parser says which texts are Python: a cached verdict holds for one version)."""
    python = f"{sys.implementation.name}{sys.version_info[0]}.{sys.version_info[1]}"
    digest = hashlib.sha256(f"{tflint_gpu.__version__}|{python}|{_sources_stamp()}".encode())
    return digest.hexdigest()[:16]


_SOURCES: List[str] = []


def _sources_stamp() -> str:
    """The names, sizes and modification times of the linter's sources, read once a process (a run
    opens its results and its project summaries: one walk of the package for both; a process runs
    the code it imported, whatever changes on disk later)."""
    if not _SOURCES:
        digest = hashlib.sha256()
        package = Path(tflint_gpu.__file__).parent
        for path in sorted(package.rglob("*.py")):
            stat = path.stat()
            digest.update(f"{path.relative_to(package)}:{stat.st_size}:{stat.st_mtime_ns}".encode())
        _SOURCES.append(digest.hexdigest())
    return _SOURCES[0]


class Invalid(Exception):
    """What was read is not a cache this version wrote."""


def refused_folder(directory: Optional[Path]) -> Optional[str]:
    """Why the cache folder ``directory`` is not used (one line), or None: a folder that is a
    symbolic link, or whose ``project`` folder is one (a repository can commit such a link to
    make the tool write elsewhere). The run then goes on without a cache."""
    if directory is None:
        return None
    for folder in (directory, directory / "project"):
        if os.path.islink(folder):
            return (f"the cache folder {folder} is a symbolic link: not used, the run goes on without "
                    f"the cache (give a real folder with --cache-dir)")
    return None


def _check(value: Any, kind, what: str) -> Any:
    # bool is an int in Python: a position must not be True.
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise Invalid(what)
    return value


def _int_stamp(value: Any) -> Tuple[int, ...]:
    """A file's stamp as written (a list of integers: size, modification time), as a tuple."""
    stamp = tuple(_check(value, list, "stamp"))
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in stamp):
        raise Invalid("stamp")
    return stamp


def _position(value: Any) -> Tuple[int, int]:
    _check(value, list, "position")
    if len(value) != 2:
        raise Invalid("position")
    row, col = (_check(v, int, "position") for v in value)
    if row < 0 or col < 0:
        raise Invalid("position")
    return row, col


def _edit_to_json(edit: Edit) -> Dict[str, Any]:
    data = {"content": edit.content, "start": list(edit.start), "end": list(edit.end)}
    if isinstance(edit, CellEdit):
        data["cell"] = edit.cell
    return data


def _edit_from_json(data: Any) -> Edit:
    _check(data, dict, "edit")
    if set(data) - {"content", "start", "end", "cell"}:
        raise Invalid("edit")
    content = _check(data.get("content"), str, "edit")
    start, end = _position(data.get("start")), _position(data.get("end"))
    if "cell" in data:
        return CellEdit(content, start, end, cell=_check(data["cell"], int, "edit"))
    return Edit(content, start, end)


_FINDING_FIELDS = {"code": str, "message": str, "path": str, "row": int, "col": int, "end_row": int,
                   "end_col": int, "name": str}
_NOTEBOOK_FIELDS = {"cell": int, "source_row": int, "file_row": int}


def finding_to_json(finding: Finding) -> Dict[str, Any]:
    data: Dict[str, Any] = {name: getattr(finding, name) for name in _FINDING_FIELDS}
    if isinstance(finding, NotebookFinding):
        data.update({name: getattr(finding, name) for name in _NOTEBOOK_FIELDS})
    if finding.fix is not None:
        data["fix"] = {"message": finding.fix.message, "safety": finding.fix.safety.value,
                       "edits": [_edit_to_json(e) for e in finding.fix.edits]}
    return data


def finding_from_json(data: Any) -> Finding:
    _check(data, dict, "finding")
    notebook = "cell" in data
    fields = dict(_FINDING_FIELDS, **(_NOTEBOOK_FIELDS if notebook else {}))
    if set(data) - set(fields) - {"fix"} or set(fields) - set(data):
        raise Invalid("finding")
    values = {name: _check(data[name], kind, name) for name, kind in fields.items()}
    fix = None
    if "fix" in data:
        raw = _check(data["fix"], dict, "fix")
        if set(raw) != {"message", "safety", "edits"}:
            raise Invalid("fix")
        try:
            safety = Safety(raw["safety"])
        except ValueError:
            raise Invalid("fix") from None
        edits = [_edit_from_json(e) for e in _check(raw["edits"], list, "fix")]
        fix = FixInfo(_check(raw["message"], str, "fix"), safety, edits)
    return (NotebookFinding if notebook else Finding)(fix=fix, **values)


Stamp = Tuple[Any, ...]


class Cache:
    """path -> (stamp, findings, deps), for one ``key`` (what decides the results
    besides the file: the selection, per-file ignores) and linter version. The entries
    are kept in the order they were last used (read or written), the latest last; what is
    written is bounded (``MAX_ENTRIES``, ``MAX_BYTES``: the latest kept) and holds no file that
    is gone."""

    def __init__(self, directory: Optional[Path], key: str) -> None:
        self.path: Optional[Path] = None
        self.entries: Dict[str, Tuple[Stamp, List[Finding], str]] = {}
        self.dirty = False
        if directory is None or refused_folder(directory):
            return
        digest = hashlib.sha256(f"{code_version()}|{key}".encode()).hexdigest()[:20]
        self.path = directory / f"{digest}.json"
        try:
            with open(self.path, "rb") as handle:
                self.entries = self._load(handle.read())
        except (OSError, ValueError, Invalid, RecursionError):  # ValueError: not JSON, not UTF-8
            self.entries = {}

    @staticmethod
    def _load(raw: bytes) -> Dict[str, Tuple[Stamp, List[Finding], str]]:
        data = _check(json.loads(raw), dict, "cache")
        if data.get("format") != FORMAT or set(data) != {"format", "entries"}:
            raise Invalid("cache")
        entries = {}
        for path, entry in _check(data["entries"], dict, "entries").items():
            _check(entry, dict, "entry")
            if set(entry) != {"stamp", "findings", "deps"}:
                raise Invalid("entry")
            stamp = tuple(_check(entry["stamp"], list, "stamp"))
            if not all(isinstance(v, (int, str)) and not isinstance(v, bool) for v in stamp):
                raise Invalid("stamp")
            entries[path] = (stamp, [finding_from_json(f) for f in _check(entry["findings"], list, "findings")],
                             _check(entry["deps"], str, "deps"))
        return entries

    @staticmethod
    def stamp(path: str) -> Optional[Stamp]:
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

    def get(self, path: str, valid: Optional[Callable[[str], bool]] = None) -> Optional[List[Finding]]:
        """The findings cached for ``path`` if it is unchanged and ``valid(deps)``
        (the project modules they read are unchanged)."""
        key = os.path.abspath(path)
        entry = self.entries.get(key)
        if entry is not None and entry[0] == self.stamp(path) and (valid is None or valid(entry[2])):
            self.entries[key] = self.entries.pop(key)  # used last (kept first when written)
            return [_with_path(f, path) for f in entry[1]]
        return None

    def put(self, path: str, findings: List[Finding], deps: str = "") -> None:
        stamp = self.stamp(path)
        if stamp is not None:
            key = os.path.abspath(path)
            self.entries.pop(key, None)
            self.entries[key] = (stamp, findings, deps)
            self.dirty = True

    def save(self) -> None:
        """Write the entries of files that still exist, the most recently used first to be
        kept, at most ``MAX_ENTRIES`` and about ``MAX_BYTES``."""
        if self.path is None or not self.dirty:
            return
        kept: List[str] = []
        size = 0
        for path, (stamp, findings, deps) in reversed(list(self.entries.items())):
            if len(kept) >= MAX_ENTRIES:
                break
            if not os.path.exists(path):
                continue
            text = json.dumps(path) + ":" + json.dumps(
                {"stamp": list(stamp), "findings": [finding_to_json(f) for f in findings], "deps": deps},
                separators=(",", ":"))
            if size + len(text) > MAX_BYTES:
                break
            kept.append(text)
            size += len(text) + 1
        kept.reverse()  # read back in the order of use
        _write_text(self.path, '{"format":%d,"entries":{%s}}' % (FORMAT, ",".join(kept)))


def _write_json(path: Path, data: Any) -> None:
    """Write ``data`` to ``path`` in one step (a cache folder gets its marker files)."""
    _write_text(path, json.dumps(data, separators=(",", ":")))


def _write_text(path: Path, content: str) -> None:
    """Write ``content`` (JSON) to ``path`` in one step (a cache folder gets its marker files)."""
    folder = path.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in ((".gitignore", "# Created by tflint-gpu\n*\n"), ("CACHEDIR.TAG", _TAG)):
            if not os.path.lexists(folder / name):  # never written through a link
                (folder / name).write_text(text)
        handle, temporary = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=folder)
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(content)
            os.replace(temporary, path)
        except BaseException:
            os.unlink(temporary)
            raise
    except OSError:
        pass  # a cache that cannot be written is no cache


def _with_path(finding: Finding, path: str) -> Finding:
    if finding.path == path:
        return finding
    return dataclasses.replace(finding, path=path)  # keeps the class (a notebook finding stays one)


class ProjectCache:
    """The project index's summaries, by content hash (``digest -> summary``), and
    ``path -> (stamp, digest)`` to skip reading a file that has not changed. JSON,
    checked field by field like the findings cache; a summary depends on the text
    only, so a file moved or copied keeps its summary."""

    def __init__(self, directory: Optional[Path]) -> None:
        self.path: Optional[Path] = None
        self.summaries: Dict[str, Summary] = {}
        self.files: Dict[str, Tuple[Stamp, str]] = {}
        self.dirty = False
        if directory is None or refused_folder(directory):
            return
        digest = hashlib.sha256(f"{code_version()}|project".encode()).hexdigest()[:20]
        self.path = directory / "project" / f"{digest}.json"
        try:
            with open(self.path, "rb") as handle:
                self._load(handle.read())
        except (OSError, ValueError, Invalid, RecursionError):
            self.summaries, self.files = {}, {}

    def _load(self, raw: bytes) -> None:
        data = _check(json.loads(raw), dict, "cache")
        if data.get("format") != FORMAT or set(data) != {"format", "summaries", "files", "digests"}:
            raise Invalid("cache")
        summaries = {_check(k, str, "digest"): Summary.from_json(v)
                     for k, v in _check(data["summaries"], dict, "summaries").items()}
        # Each summary's own digest (``Summary.digest``: what a cached result's dependencies record), as
        # written with it: a warm run checks those dependencies without hashing every summary again.
        digests = _check(data["digests"], dict, "digests")
        if set(digests) != set(summaries):
            raise Invalid("digests")
        for key, value in digests.items():
            summaries[key]._digest = _check(value, str, "digest")
        files = {}
        for path, entry in _check(data["files"], dict, "files").items():
            _check(entry, list, "file")
            if len(entry) != 2 or _check(entry[1], str, "file") not in summaries:
                raise Invalid("file")
            files[path] = (_int_stamp(entry[0]), entry[1])
        self.summaries, self.files = summaries, files

    def known(self, path: str) -> Optional[Summary]:
        """The summary of ``path`` when it has not changed since it was summarised."""
        key = os.path.abspath(path)
        entry = self.files.get(key)
        if entry is not None and entry[0] == Cache.stamp(path):
            self.files[key] = self.files.pop(key)  # used last (kept first when written)
            return self.summaries.get(entry[1])
        return None

    def add(self, path: str, digest: str, summary: Summary) -> None:
        """Record ``summary`` of ``path``, whose bytes have ``digest`` (``content_digest``)."""
        stamp = Cache.stamp(path)
        if stamp is None:
            return
        self.summaries[digest] = summary
        key = os.path.abspath(path)
        self.files.pop(key, None)
        self.files[key] = (stamp, digest)
        self.dirty = True

    def of_text(self, text: str) -> Optional[Summary]:
        """The summary made earlier of ``text`` (a file's UTF-8 bytes with this content), if any."""
        try:
            return self.summaries.get(content_digest(text.encode("utf-8")))
        except UnicodeError:  # a lone surrogate: no file holds these bytes
            return None

    def load(self, path: str) -> Optional[Summary]:
        """The summary of ``path``: cached (unchanged file, or same content), else read and compiled."""
        found = self.known(path)
        if found is not None:
            return found
        try:
            from tflint_gpu.files import decode

            with open(path, "rb") as handle:
                data = handle.read(8 * 1024 * 1024 + 1)
            if len(data) > 8 * 1024 * 1024:
                return None
            digest = content_digest(data)
            summary = self.summaries.get(digest)
            if summary is None:
                from tflint_gpu.engine.lint import on_large_stack  # CPython's limits, whatever the thread

                text = decode(data).text
                summary = on_large_stack(summarize_source, text, path)
        except (OSError, UnicodeDecodeError, LookupError, SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        self.add(path, digest, summary)
        return summary

    def save(self) -> None:
        if self.path is None or not self.dirty:
            return
        # As the results' cache: the files that still exist, the most recently used MAX_ENTRIES.
        files = [(p, entry) for p, entry in reversed(list(self.files.items())) if os.path.exists(p)]
        self.files = dict(reversed(files[:MAX_ENTRIES]))
        used = {digest for _, digest in self.files.values()}
        _write_json(self.path, {"format": FORMAT,
                                "summaries": {d: s.to_json() for d, s in self.summaries.items() if d in used},
                                "digests": {d: s.digest for d, s in self.summaries.items() if d in used},
                                "files": {p: [list(stamp), d] for p, (stamp, d) in self.files.items()}})


class Mentions:
    """Which checked files do not mention ``TF_USE_LEGACY_KERAS`` (so set no target), by path, size
    and modification time (``path -> [size, mtime_ns]``), in the cache folder's ``project/mentions``:
    a warm run reads only the files that changed or mention it (``Settings.scan_code``'s ``read``).
    JSON checked field by field, as the other caches."""

    def __init__(self, directory: Optional[Path]) -> None:
        self.path: Optional[Path] = None
        self.quiet: Dict[str, Tuple[int, int]] = {}
        self.dirty = False
        if directory is None or refused_folder(directory):
            return
        self.path = directory / "project" / "mentions"  # JSON; not named *.json: not a summaries file
        try:
            with open(self.path, "rb") as handle:
                data = _check(json.loads(handle.read()), dict, "cache")
            if data.get("format") != FORMAT or set(data) != {"format", "quiet"}:
                raise Invalid("cache")
            quiet = {}
            for path, stamp in _check(data["quiet"], dict, "quiet").items():
                quiet[path] = _int_stamp(stamp)
                if len(quiet[path]) != 2:
                    raise Invalid("stamp")
            self.quiet = quiet
        except (OSError, ValueError, Invalid, RecursionError):
            self.quiet = {}

    def read(self, path: str) -> Optional[bytes]:
        """The first 8 MB of ``path`` if they mention the variable, else None; a file known not to
        (same size and modification time as when it was read) is not read again."""
        key = os.path.abspath(path)
        try:
            stat = os.stat(path)
        except OSError:
            return None
        stamp = (stat.st_size, stat.st_mtime_ns)  # taken before the read: a file changed meanwhile is read again
        if self.quiet.get(key) == stamp:
            return None
        from tflint_gpu.config import mentioning

        data = mentioning(path)
        if data is None and stat_module.S_ISREG(stat.st_mode):  # a file (the stat above says so)
            self.quiet[key] = stamp
            self.dirty = True
        elif self.quiet.pop(key, None) is not None:
            self.dirty = True
        return data

    def save(self) -> None:
        if self.path is None or not self.dirty:
            return
        quiet = [(p, stamp) for p, stamp in self.quiet.items() if os.path.exists(p)][-MAX_ENTRIES:]
        _write_json(self.path, {"format": FORMAT, "quiet": {p: list(stamp) for p, stamp in quiet}})
