"""Path patterns as Ruff reads them, and the ignore files git reads; matched by ``pathspec``.

``Patterns``: the globs of ``exclude``, ``include`` and ``per-file-ignores``,
each anchored at the folder of the configuration that states it (the current
folder for the command line's). A pattern without a ``/`` (``*.py``,
``generated``, ``tests/``) matches a file or folder's name; one with a ``/``
matches the path from its anchor (``tests/*``, ``pkg/**/*.py``, where ``**/``
is zero or more folders and ``*`` stays within one), and what is under a folder
it matches. ``{a,b}`` is expanded (as in Ruff's globs); a leading ``!`` is a
literal ``!``, never a negation. A trailing ``/`` matches folders only.

``GitIgnores``: the ``.gitignore`` files of a git repository (each one's
patterns relative to its folder, a deeper file overriding a shallower, ``!``
re-including), its ``.git/info/exclude``, and ``.ignore`` files (read in or out
of a repository, over ``.gitignore``), as ripgrep and Ruff read them.

``pathspec`` is imported only when a pattern needs it: plain names such as the
default excludes are a set lookup.
"""
from __future__ import annotations

import os
import posixpath
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

_GLOB = frozenset("*?[\\")


def _spec(lines: Sequence[str]):
    import pathspec  # ~30 ms: only when a pattern needs it

    return pathspec.GitIgnoreSpec.from_lines(lines)


def expand_braces(pattern: str) -> List[str]:
    """``a/{b,c}/*.py`` -> ``a/b/*.py``, ``a/c/*.py`` (nested braces too); a brace
    without a comma or without its closing brace stays as it is."""
    depth, start = 0, -1
    for i, char in enumerate(pattern):
        if char == "{":
            if depth == 0:
                start = i
            depth += 1
        elif char == "}" and depth:
            depth -= 1
            if depth == 0:
                inner, parts, level, last = pattern[start + 1:i], [], 0, 0
                for j, c in enumerate(inner):
                    level += c == "{"
                    level -= c == "}"
                    if c == "," and level == 0:
                        parts.append(inner[last:j])
                        last = j + 1
                if not parts:  # no comma at this level: literal braces
                    return [pattern[:i + 1] + rest for rest in expand_braces(pattern[i + 1:])]
                parts.append(inner[last:])
                head, tail = pattern[:start], pattern[i + 1:]
                return [head + choice + rest for part in parts for choice in expand_braces(part)
                        for rest in expand_braces(tail)]
    return [pattern]


def _posix(path: str) -> str:
    return path.replace(os.sep, "/") if os.sep != "/" else path


# What ``found_in`` answers to end a search with no answer (at a repository's root, say).
STOP = "\0stop"


def nearest_upward(folder: str, cache: Dict[str, Optional[str]],
                   found_in: Callable[[str], Optional[str]]) -> Optional[str]:
    """The first answer of ``found_in`` from ``folder`` up to the root (None where none answers,
    or where it answers ``STOP`` first). ``cache`` keeps the answer of every folder passed on the
    way, so a tree is searched once."""
    seen = []
    current = folder
    found: Optional[str] = None
    while True:
        if current in cache:
            found = cache[current]
            break
        seen.append(current)
        found = found_in(current)
        if found is not None:
            found = None if found == STOP else found
            break
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    for passed in seen:
        cache[passed] = found
    return found


class Patterns:
    """Globs, each with the folder it is relative to: ``Patterns([(pattern, anchor), ...])``."""

    def __init__(self, items: Iterable[Tuple[str, str]]) -> None:
        self.items = tuple(items)
        self._names: set = set()
        self._folder_names: set = set()
        self._suffixes: List[str] = []  # `*.py`: a suffix
        name_globs: List[str] = []
        paths: List[str] = []
        for pattern, anchor in self.items:
            for one in expand_braces(pattern.strip()):
                if one.startswith("!"):
                    one = "\\" + one
                folders_only = one.endswith("/")
                core = one.rstrip("/")
                if not core:
                    continue
                if "/" not in _posix(core):
                    if core.startswith("*") and not folders_only and not _GLOB & set(core[1:]):
                        self._suffixes.append(core[1:])
                    elif _GLOB & set(core):
                        name_globs.append(core + ("/" if folders_only else ""))
                    else:
                        (self._folder_names if folders_only else self._names).add(core)
                    continue
                core = _posix(core)
                full = core if posixpath.isabs(core) or os.path.isabs(core) else \
                    posixpath.join(_posix(os.path.abspath(anchor)), core)
                paths.append("/" + posixpath.normpath(full).lstrip("/") + ("/" if folders_only else ""))
        self._name_globs, self._paths = name_globs, paths
        self._name_spec = self._path_spec = None

    def __bool__(self) -> bool:
        return bool(self._names or self._folder_names or self._suffixes or self._name_globs or self._paths)

    def match(self, path: str, is_dir: bool = False) -> bool:
        """Does a pattern match this file (or folder, ``is_dir``)? ``path``: absolute, or from the cwd."""
        name = os.path.basename(path.rstrip("/" + os.sep)) or path
        if name in self._names or (is_dir and name in self._folder_names):
            return True
        if self._suffixes and name.endswith(tuple(self._suffixes)):
            return True
        slash = "/" if is_dir else ""
        if self._name_globs:
            if self._name_spec is None:
                self._name_spec = _spec(self._name_globs)
            if self._name_spec.match_file(name + slash):
                return True
        if self._paths:
            if self._path_spec is None:
                self._path_spec = _spec(self._paths)
            if self._path_spec.match_file(_posix(os.path.abspath(path)).lstrip("/") + slash):
                return True
        return False


class GitIgnores:
    """What the ignore files say, read once per folder (``ignored``, ``ignored_path``)."""

    def __init__(self) -> None:
        self._repos: Dict[str, Optional[str]] = {}
        self._specs: Dict[Tuple[str, bool], object] = {}
        self._chains: Dict[Tuple[str, Optional[str], Optional[str]], Tuple[Tuple[str, object], ...]] = {}
        self._excludes: Dict[str, object] = {}

    def repository(self, folder: str) -> Optional[str]:
        """The work tree ``folder`` is in (the nearest folder upward holding ``.git``), or None."""
        return nearest_upward(folder, self._repos,
                              lambda current: current if os.path.exists(os.path.join(current, ".git")) else None)

    @staticmethod
    def _lines(path: str) -> List[str]:
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                return handle.read().splitlines()
        except OSError:
            return []

    def _folder_spec(self, folder: str, in_repository: bool):
        key = (folder, in_repository)
        if key not in self._specs:
            lines = self._lines(os.path.join(folder, ".gitignore")) if in_repository else []
            lines += self._lines(os.path.join(folder, ".ignore"))  # over .gitignore: read last
            lines = [line for line in lines if line.strip() and not line.startswith("#")]
            self._specs[key] = _spec(lines) if lines else None
        return self._specs[key]

    def _exclude_spec(self, repository: str):
        if repository not in self._excludes:
            lines = [line for line in self._lines(os.path.join(repository, ".git", "info", "exclude"))
                     if line.strip() and not line.startswith("#")]
            self._excludes[repository] = _spec(lines) if lines else None
        return self._excludes[repository]

    def _chain(self, folder: str, repository: Optional[str], floor: Optional[str]) -> Tuple[Tuple[str, object], ...]:
        """The ignore files that can decide for an entry of ``folder``, nearest first: (folder, spec)
        from ``folder`` up to the repository's top (or ``floor``, or the root), those with patterns
        only (once per folder: a walk asks for each of its entries)."""
        key = (folder, repository, floor)
        found = self._chains.get(key)
        if found is None:
            chain = []
            current = folder
            while True:
                spec = self._folder_spec(current, repository is not None)
                if spec is not None:
                    chain.append((current, spec))
                parent = os.path.dirname(current)
                if current == repository or parent == current or current == floor:
                    break
                current = parent
            found = self._chains[key] = tuple(chain)
        return found

    def ignored(self, path: str, is_dir: bool = False, floor: Optional[str] = None) -> bool:
        """Is this file (or folder) itself ignored? The nearest ignore file with a pattern
        that matches decides; then ``.git/info/exclude``. ``floor``: read only the ignore
        files in it and below (a folder named explicitly that git ignores is walked with
        its own ignore files: what is above it would ignore all of it)."""
        full = os.path.abspath(path)
        folder = os.path.dirname(full)
        repository = self.repository(folder)
        slash = "/" if is_dir else ""
        for current, spec in self._chain(folder, repository, floor):
            verdict = spec.check_file(_posix(os.path.relpath(full, current)) + slash).include
            if verdict is not None:
                return verdict
        if repository is not None and floor is None:
            spec = self._exclude_spec(repository)
            if spec is not None:
                return bool(spec.check_file(_posix(os.path.relpath(full, repository)) + slash).include)
        return False

    def ignored_path(self, path: str, is_dir: bool = False) -> bool:
        """Is ``path`` ignored, or a folder above it within its repository (git looks
        into no ignored folder)?"""
        full = os.path.abspath(path)
        top = self.repository(os.path.dirname(full))
        if self.ignored(full, is_dir):
            return True
        current = os.path.dirname(full)
        while current != top:
            parent = os.path.dirname(current)
            if parent == current:
                break
            if self.ignored(current, True):
                return True
            current = parent
        return False
