"""The result cache: one JSON file per selection and linter version.

A cache folder may come with a cloned repository, so what is read is data
only (JSON, never pickle) and is checked field by field: anything unexpected
(another layout, a wrong type, a value out of range) is a cache miss, never
an error and never code that runs. A new cache folder gets a ``.gitignore``
(``*``) and a ``CACHEDIR.TAG``, as Ruff's does.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import tflint_gpu
from tflint_gpu.findings import Edit, Finding, FixInfo, Safety
from tflint_gpu.notebook import CellEdit, NotebookFinding, is_notebook

FORMAT = 1
_TAG = "Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag created by tflint-gpu.\n"


def code_version() -> str:
    """Changes whenever the linter's own code changes."""
    digest = hashlib.sha256(tflint_gpu.__version__.encode())
    package = Path(tflint_gpu.__file__).parent
    for path in sorted(package.rglob("*.py")):
        stat = path.stat()
        digest.update(f"{path.relative_to(package)}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:16]


class Invalid(Exception):
    """What was read is not a cache this version wrote."""


def _check(value: Any, kind, what: str) -> Any:
    # bool is an int in Python: a position must not be True.
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise Invalid(what)
    return value


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
    """path -> (stamp, findings), for one ``key`` (what decides the results
    besides the file: the selection, per-file ignores) and linter version."""

    def __init__(self, directory: Optional[Path], key: str) -> None:
        self.path: Optional[Path] = None
        self.entries: Dict[str, Tuple[Stamp, List[Finding]]] = {}
        self.dirty = False
        if directory is None:
            return
        digest = hashlib.sha256(f"{code_version()}|{key}".encode()).hexdigest()[:20]
        self.path = directory / f"{digest}.json"
        try:
            with open(self.path, "rb") as handle:
                self.entries = self._load(handle.read())
        except (OSError, ValueError, Invalid, RecursionError):  # ValueError: not JSON, not UTF-8
            self.entries = {}

    @staticmethod
    def _load(raw: bytes) -> Dict[str, Tuple[Stamp, List[Finding]]]:
        data = _check(json.loads(raw), dict, "cache")
        if data.get("format") != FORMAT or set(data) != {"format", "entries"}:
            raise Invalid("cache")
        entries = {}
        for path, entry in _check(data["entries"], dict, "entries").items():
            _check(entry, dict, "entry")
            if set(entry) != {"stamp", "findings"}:
                raise Invalid("entry")
            stamp = tuple(_check(entry["stamp"], list, "stamp"))
            if not all(isinstance(v, (int, str)) and not isinstance(v, bool) for v in stamp):
                raise Invalid("stamp")
            entries[path] = (stamp, [finding_from_json(f) for f in _check(entry["findings"], list, "findings")])
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
        data = {"format": FORMAT,
                "entries": {path: {"stamp": list(stamp), "findings": [finding_to_json(f) for f in findings]}
                            for path, (stamp, findings) in self.entries.items()}}
        folder = self.path.parent
        try:
            folder.mkdir(parents=True, exist_ok=True)
            for name, text in ((".gitignore", "# Created by tflint-gpu\n*\n"), ("CACHEDIR.TAG", _TAG)):
                if not (folder / name).exists():
                    (folder / name).write_text(text)
            handle, temporary = tempfile.mkstemp(prefix=self.path.name + ".", suffix=".tmp", dir=folder)
            try:
                with os.fdopen(handle, "w", encoding="utf-8") as out:
                    json.dump(data, out, separators=(",", ":"))
                os.replace(temporary, self.path)
            except BaseException:
                os.unlink(temporary)
                raise
        except OSError:
            pass  # a cache that cannot be written is no cache


def _with_path(finding: Finding, path: str) -> Finding:
    if finding.path == path:
        return finding
    return dataclasses.replace(finding, path=path)  # keeps the class (a notebook finding stays one)
