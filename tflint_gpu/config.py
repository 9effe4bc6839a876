"""Settings: ``[tool.tflint-gpu]`` in pyproject.toml merged with command-line flags.

Selection works as in Ruff: codes are chosen by prefix (``TFG``, ``TFG2``,
``TFG201``) or ``ALL``; when a code matches both a ``select`` and an
``ignore`` prefix, the longer (more specific) prefix wins, and ``ignore`` wins
a tie. Rules that are off by default are enabled only by a ``select`` or
``extend-select`` prefix that names them (``ALL`` included).

Configuration is found as in Ruff (``Resolver``): each file uses the nearest
folder above it with a configuration file (``--config``: one file for all), the
command line overriding every one. In one folder ``.tflint-gpu.toml`` beats
``tflint-gpu.toml`` beats a ``pyproject.toml`` with a ``[tool.tflint-gpu]`` table
(``CONFIG_NAMES``), as ``.ruff.toml`` beats ``ruff.toml`` beats ``pyproject.toml``;
a standalone file has the same keys at its top level. ``extend = PATH``
(relative to the file that says it) inherits a base configuration: the
extending file's keys replace the base's, the ``extend-*`` lists add up.
Paths and globs are relative to the configuration that states them (those of
the command line to the current folder); globs are matched by ``globs``.
"""
from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Dict, FrozenSet, Iterator, List, Optional, Sequence, Tuple, Type

from tflint_gpu.engine.budget import DEFAULT_SECONDS as DEFAULT_FILE_TIMEOUT
from tflint_gpu.globs import Patterns, nearest_upward
# The codes, their defaults and migration flags from the table written from the rules: selecting
# imports no rule module (``Selection`` imports the classes when a file is linted).
from tflint_gpu.catalogue import all_infos as all_codes
from tflint_gpu.semantic import target as targets
from tflint_gpu.semantic.target import Target, TargetError

if TYPE_CHECKING:
    from tflint_gpu.rules.base import Rule

SECTION = "tflint-gpu"
# Ruff's default `exclude`, plus our cache. Not `env` or `build`: those are
# ordinary package names (RL environments, build steps) and are linted.
DEFAULT_EXCLUDE = (
    ".bzr",
    ".direnv",
    ".eggs",
    ".git",
    ".git-rewrite",
    ".hg",
    ".ipynb_checkpoints",
    ".mypy_cache",
    ".nox",
    ".pants.d",
    ".pyenv",
    ".pytest_cache",
    ".pytype",
    ".ruff_cache",
    ".svn",
    ".tox",
    ".venv",
    ".vscode",
    "__pypackages__",
    "_build",
    "buck-out",
    "dist",
    "node_modules",
    "site-packages",
    "venv",
    ".tflint_gpu_cache",
)
# As Ruff's `include` (which has notebooks in it since Ruff 0.6): the files a
# directory walk picks up; `extend-include` adds to it.
DEFAULT_INCLUDE = ("*.py", "*.ipynb")
_KNOWN_KEYS = {
    "include",
    "extend-include",
    "select",
    "ignore",
    "extend-select",
    "extend-ignore",
    "per-file-ignores",
    "exclude",
    "extend-exclude",
    "unsafe-fixes",
    "fix",
    "cache-dir",
    "target-version",
    "extend",
    "respect-gitignore",
    "force-exclude",
    "extend-per-file-ignores",
    "file-timeout",
    "fixable",
    "unfixable",
    "extend-fixable",
    "fix-only",
}
# A glob with the folder it is relative to (the configuration's; the cwd for the command line's).
Anchored = Tuple[str, str]


class ConfigError(Exception):
    """A configuration or usage error (exit code 2)."""


def mentioning(path: str) -> Optional[bytes]:
    """The first 8 MB of the file ``path`` if they mention ``TF_USE_LEGACY_KERAS``, else None
    (unreadable too): what ``Settings.scan_code`` reads the variable's setting from."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(8 * 1024 * 1024)
    except OSError:
        return None
    return data if b"TF_USE_LEGACY_KERAS" in data else None


@dataclass(frozen=True)
class Settings:
    root: Path
    rules: Tuple[Type[Rule], ...]
    # (glob, the folder it is relative to, rule selectors)
    per_file_ignores: Tuple[Tuple[str, str, Tuple[str, ...]], ...] = ()
    exclude: Tuple[Anchored, ...] = tuple((p, ".") for p in DEFAULT_EXCLUDE)
    include: Tuple[Anchored, ...] = tuple((p, ".") for p in DEFAULT_INCLUDE)
    unsafe_fixes: bool = False
    fix: bool = False
    # ``fix-only``: apply the fixes, report nothing of what is left (as Ruff's; implies ``fix``).
    fix_only: bool = False
    # The codes whose findings are reported without a fix (``fixable``/``unfixable``/``extend-fixable``,
    # as Ruff's: never fixed by --fix, --diff or an editor, shown without ``[*]``).
    unfixable: FrozenSet[str] = frozenset()
    cache_dir: Optional[Path] = None
    # Why the configuration's ``cache-dir`` is not used (one line, printed when the cache is), or None.
    cache_warning: Optional[str] = None
    config_file: Optional[Path] = None
    # The configuration files read, the nearest first, then each one it extends.
    config_files: Tuple[Path, ...] = ()
    respect_gitignore: bool = True
    # ``force-exclude`` (``--force-exclude``): files named explicitly are skipped as a walk skips
    # them (``files.force_excluded``).
    force_exclude: bool = False
    # ``target-version`` (or ``--target-version``): the target of every file; None: each
    # file's is read from its project (``semantic.target``).
    target_version: Optional[Target] = None
    # ``file-timeout``: seconds the analysis of one file may take (0: no limit; ``engine.budget``).
    file_timeout: float = DEFAULT_FILE_TIMEOUT
    # Targets read from the project, per folder (``target_for``), and what files set in code.
    _targets: Dict = field(default_factory=dict, compare=False, repr=False)
    # Compiled globs and the per-file ignores met per file (none depends on ``rules``).
    _memo: Dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def codes(self) -> FrozenSet[str]:
        known = getattr(self.rules, "codes", None)  # a Selection says them without importing the rules
        return frozenset(known if known is not None else (rule.code for rule in self.rules))

    # -- the target ---------------------------------------------------------------
    def target_folder(self, path: str) -> Optional[str]:
        """The folder ``path``'s target is read from (``semantic.target.target_folder``), or None.
        ``path``: a file (its folder's answer is kept by the folder's name as given), or a
        folder written with a trailing separator (``src/``)."""
        given = self._targets.setdefault("given", {})
        key = os.path.dirname(path)
        if key in given:
            return given[key]
        start = os.path.abspath(path)
        start = start if os.path.isdir(start) else os.path.dirname(start)
        found = targets.target_folder(start, self._targets.setdefault("folders", {}))
        if not os.path.isdir(path):
            given[key] = found
        return found

    def target_for(self, path: str) -> Target:
        """The target of the file ``path``: the setting, else read from its project
        (the nearest folder upward with dependency files, a Dockerfile or a README;
        ``TF_USE_LEGACY_KERAS`` set in a checked file of that project counts,
        ``scan_code``), else the newest release."""
        if self.target_version is not None:
            return self.target_version
        folder = self.target_folder(path)
        resolved = self._targets.setdefault("resolved", {})
        if folder not in resolved:
            evidence = targets.read_folder(folder) if folder is not None else []
            evidence += self._targets.get("code", {}).get(folder, [])
            resolved[folder] = targets.relative_why(targets.resolve(evidence), folder)
        return resolved[folder]

    def scan_code(self, paths: Sequence[str], read: Optional[Callable[[str], Optional[bytes]]] = None) -> None:
        """Read ``TF_USE_LEGACY_KERAS`` set in these files (it makes ``tf.keras`` Keras 2 for
        the whole program): evidence for their project's target. Call it before
        ``target_for`` and ``fingerprint`` (the command line does, with the files it checks).
        ``read(path)``: the file's first 8 MB where they mention the variable, else None (default:
        ``mentioning``; the command line's remembers the files that do not, ``engine.cache.Mentions``)."""
        if self.target_version is not None:
            return
        code = self._targets.setdefault("code", {})
        for path in paths:
            data = (read or mentioning)(path)
            if data is None:
                continue
            folder = self.target_folder(path)
            name = os.path.relpath(os.path.abspath(path), folder) if folder else path
            found = targets.from_code(data.decode("utf-8-sig", errors="replace"), Path(name).as_posix())
            if found:
                code.setdefault(folder, []).extend(found)
                self._targets.get("resolved", {}).pop(folder, None)

    def silenced_for(self, path: str) -> Tuple[Type[Rule], ...]:
        """The selected rules ``path``'s target silences (migration rules under Keras 2)."""
        if self.target_for(path).keras3:
            return ()
        return tuple(r for r in self._ignoring(path, self._described()) if getattr(r, "migration", False) is True)

    def _described(self) -> tuple:
        """The selected rules as far as describing them goes: their catalogue entries for a ``Selection``
        (no rule module imported), else the classes."""
        if isinstance(self.rules, Selection):
            from tflint_gpu.catalogue import describe

            return tuple(describe(code) for code in self.rules.codes)
        return tuple(self.rules)

    def rules_for(self, path: str) -> Tuple[Type[Rule], ...]:
        """The selected rules minus the per-file ignores matching ``path``, and minus
        the migration rules (``Rule.migration is True``) where the file's target is Keras 2."""
        rules = self._ignoring(path)
        if any(getattr(r, "migration", False) is True for r in rules) and not self.target_for(path).keras3:
            rules = tuple(r for r in rules if getattr(r, "migration", False) is not True)
        return rules

    def _patterns(self, key: str, items: Sequence[Anchored]) -> Patterns:
        if key not in self._memo:
            self._memo[key] = Patterns(items)
        return self._memo[key]

    def per_file_ignores_for(self, path: str) -> List[Tuple[str, str, Tuple[str, ...]]]:
        """The ``per-file-ignores`` entries that apply to the file ``path``: its glob matches
        the file, or a folder above it below the folder the glob is relative to."""
        memo = self._memo.setdefault("per-file", {})
        if path in memo:
            return memo[path]
        full = os.path.abspath(path)
        found = []
        for number, (pattern, anchor, codes) in enumerate(self.per_file_ignores):
            patterns = self._patterns(f"per-file-{number}", [(pattern, anchor)])
            top = os.path.abspath(anchor)
            current, folder = full, False
            while True:
                if patterns.match(current, folder):
                    found.append((pattern, anchor, codes))
                    break
                parent = os.path.dirname(current)
                if parent == current or parent == top or not parent.startswith(top.rstrip(os.sep) + os.sep):
                    break
                current, folder = parent, True
        memo[path] = found
        return found

    def _ignoring(self, path: str, rules: Optional[Sequence] = None) -> Tuple[Type[Rule], ...]:
        rules = tuple(self.rules if rules is None else rules)
        if not self.per_file_ignores:
            return rules
        ignored = [code for _, _, codes in self.per_file_ignores_for(path) for code in codes]
        if not ignored:
            return rules
        return tuple(r for r in rules if not any(_prefix_matches(p, r.code) for p in ignored))

    def excludes_entry(self, path: str, is_dir: bool = False) -> bool:
        """Does an ``exclude``/``extend-exclude`` glob match this file or folder itself (its
        name, or its path from the folder the glob is relative to)? A walk prunes each
        folder as it meets it, so the folders above a path given on the command line
        never exclude it (as in Ruff)."""
        return self._patterns("exclude", self.exclude).match(path, is_dir)

    def is_excluded(self, path: str, is_dir: Optional[bool] = None) -> bool:
        """Is ``path`` excluded, it or a folder above it below the root (Ruff's rule for
        ``--force-exclude``, a ``--stdin-filename``, an editor's file)? The root's own name
        does not count: a project may live in a folder called ``dist``."""
        full = os.path.abspath(path)
        root = os.path.abspath(self.root)
        current = full
        folder = os.path.isdir(full) if is_dir is None else is_dir
        while current != root:
            if self.excludes_entry(current, folder):
                return True
            parent = os.path.dirname(current)
            if parent == current:
                break
            current, folder = parent, True
        return False

    def is_included(self, path: str) -> bool:
        """Does an ``include`` glob match the file's name or its path?"""
        return self._patterns("include", self.include).match(path)

    def fingerprint(self) -> str:
        """What decides the results besides the files: the selection, per-file
        ignores and the targets (the setting, or every target read so far: call
        ``target_for`` for the files first)."""
        if self.target_version is not None:
            used = [("", self.target_version.spelling, self.target_version.file_settings)]
        else:
            used = sorted((folder or "", t.spelling) for folder, t in self._targets.get("resolved", {}).items())
        return repr((sorted(self.codes), self.per_file_ignores, used) + ((sorted(self.unfixable),) if self.unfixable
                                                                          else ()))

    def project_root(self, paths: Sequence[str]) -> Optional[str]:
        """Where the project's modules are named from (the project index): the
        configuration's folder, else the common folder of ``paths`` raised out of
        any package it is in (``semantic.project.project_root``)."""
        from tflint_gpu.semantic.project import project_root

        return project_root(paths, str(self.root) if self.config_file is not None else None)


def _prefix_matches(prefix: str, code: str) -> bool:
    return prefix == "ALL" or code.startswith(prefix)


def _best_match(prefixes: Sequence[str], code: str) -> Optional[int]:
    """The length of the longest of ``prefixes`` that matches ``code`` (``ALL``: 0), None for none:
    the more specific selector wins, as in Ruff (``select_rules``, ``unfixable_codes``)."""
    return max((len(p) if p != "ALL" else 0 for p in prefixes if _prefix_matches(p, code)), default=None)


def _check_prefixes(prefixes: Sequence[str], where: str, codes: Sequence[str]) -> List[str]:
    """Normalised selectors; an unknown one is an error naming ``where``."""
    result = []
    for prefix in prefixes:
        prefix = prefix.strip().upper()
        if not prefix:
            raise ConfigError(f"{where}: empty rule selector (expected e.g. TFG2, TFG101 or ALL)")
        if prefix != "ALL" and not any(code.startswith(prefix) for code in codes):
            raise ConfigError(f"{where}: unknown rule selector `{prefix}`")
        result.append(prefix)
    return result


def select_rules(
    select: Optional[Sequence[str]],
    ignore: Sequence[str] = (),
    extend_select: Sequence[str] = (),
) -> Tuple[Type[Rule], ...]:
    rules = list(all_codes())  # the engine's own codes (TFG001) are selected as rules are
    codes = [r.code for r in rules]
    chosen = _check_prefixes(select, "select", codes) if select is not None else None
    extra = _check_prefixes(extend_select, "extend-select", codes)
    ignored = _check_prefixes(ignore, "ignore", codes)
    result = []
    for rule in rules:
        best_select = _best_match((chosen or []) + extra, rule.code)
        if best_select is None:
            if chosen is not None or not rule.default_enabled:
                continue
            best_select = -1
        best_ignore = _best_match(ignored, rule.code)
        if best_ignore is not None and best_ignore >= best_select:
            continue
        result.append(rule)
    return Selection(rule.code for rule in result)


class Selection(Sequence):
    """The selected rule classes, named by ``codes``: a tuple of the classes to whoever reads them, the
    rule modules imported (``rules.base.describe``) on the first read, so that a run whose files all
    come from the cache, or that only lists files or settings, imports no rule and no LibCST."""

    def __init__(self, codes) -> None:
        self.codes: Tuple[str, ...] = tuple(codes)
        self._classes: Optional[tuple] = None

    def _rules(self) -> tuple:
        if self._classes is None:
            from tflint_gpu.rules.base import describe

            self._classes = tuple(describe(code) for code in self.codes)
        return self._classes

    def __getitem__(self, index):
        return self._rules()[index]

    def __len__(self) -> int:
        return len(self.codes)

    def __iter__(self) -> Iterator[type]:
        return iter(self._rules())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Selection):
            return self.codes == other.codes
        return self._rules() == other if isinstance(other, tuple) else NotImplemented

    def __hash__(self) -> int:
        return hash(self.codes)

    def __repr__(self) -> str:
        return f"Selection({', '.join(self.codes)})"


def unfixable_codes(fixable: Optional[Sequence[str]], unfixable: Sequence[str] = (),
                    extend_fixable: Sequence[str] = ()) -> FrozenSet[str]:
    """The codes whose fixes are not applied, as Ruff resolves ``fixable`` (default ``ALL``),
    ``extend-fixable`` and ``unfixable``: as ``select`` and ``ignore`` (``select_rules``), the
    longer matching prefix wins and ``unfixable`` wins a tie."""
    codes = [r.code for r in all_codes()]
    chosen = _check_prefixes(fixable, "fixable", codes) if fixable is not None else ["ALL"]
    extra = _check_prefixes(extend_fixable, "extend-fixable", codes)
    refused = _check_prefixes(unfixable, "unfixable", codes)
    result = set()
    for code in codes:
        wanted, unwanted = _best_match(chosen + extra, code), _best_match(refused, code)
        if wanted is None or (unwanted is not None and unwanted >= wanted):
            result.add(code)
    return frozenset(result)


def _read_toml(path: Path) -> Dict:
    tomllib = targets.toml_module()
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {error.strerror or error}") from None
    except UnicodeDecodeError as error:
        raise ConfigError(f"{path}: cannot read: not UTF-8 ({error.reason} at byte {error.start})") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML: {error}") from None


def _tool_table(data: Dict, path: Path):
    tool = data.get("tool", {})
    if not isinstance(tool, dict):
        raise ConfigError(f"{path}: tool: expected a table, got {_describe(tool)}")
    return tool


def find_config(start: Path) -> Optional[Path]:
    """The nearest configuration file (``_configuration_in``), from ``start`` upward.

    A pyproject.toml on the way that is not valid TOML is an error (as in Ruff),
    never passed over: it may well be the one meant to configure us.
    """
    current = start.resolve()
    if current.is_file():
        current = current.parent
    for directory in (current, *current.parents):
        found = _configuration_in(str(directory))
        if found is not None:
            return Path(found)
    return None


# The configuration files of a folder, the one used first (as Ruff's .ruff.toml, ruff.toml, pyproject.toml).
CONFIG_NAMES = (".tflint-gpu.toml", "tflint-gpu.toml", "pyproject.toml")


def _configuration_in(folder: str) -> Optional[str]:
    """The folder's configuration file: its ``.tflint-gpu.toml``, else its ``tflint-gpu.toml``
    (either, whatever it holds, even empty, as Ruff takes a ``ruff.toml``), else its
    pyproject.toml if that has a [tool.tflint-gpu] table (an invalid one raises); or None."""
    for name in CONFIG_NAMES[:-1]:
        candidate = os.path.join(folder, name)
        if os.path.isfile(candidate):
            return candidate
    candidate = os.path.join(folder, "pyproject.toml")
    if os.path.isfile(candidate) and SECTION in _tool_table(_read_toml(Path(candidate)), Path(candidate)):
        return candidate
    return None


_TOML_TYPES = ((bool, "boolean"), (int, "integer"), (float, "float"), (str, "string"), (list, "array"),
               (dict, "table"))


def _describe(value: object) -> str:
    """A TOML value the way an error message shows it: ``string "false"``, ``integer 3``."""
    kind = next((name for cls, name in _TOML_TYPES if isinstance(value, cls)), "date/time")
    if isinstance(value, (dict, list)):
        return kind
    shown = json.dumps(value) if isinstance(value, (bool, str)) else str(value)
    return f"{kind} {shown}"


def _strings(value: object, where: str) -> List[str]:
    if isinstance(value, list):
        wrong = [v for v in value if not isinstance(v, str)]
        if not wrong:
            return value
        raise ConfigError(f"{where}: expected a list of strings, got an array holding {_describe(wrong[0])}")
    raise ConfigError(f"{where}: expected a list of strings, got {_describe(value)}")


_SELECTOR_KEYS = ("select", "ignore", "extend-select", "extend-ignore", "fixable", "unfixable", "extend-fixable")
_PATTERN_KEYS = ("exclude", "extend-exclude", "include", "extend-include")


def validate_table(table: object, path: Path) -> Dict:
    """Type-check every key of ``[tool.tflint-gpu]``: one error naming the file and key."""
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: tool.{SECTION}: expected a table, got {_describe(table)}")
    unknown = set(table) - _KNOWN_KEYS
    if unknown:
        where = f" in [tool.{SECTION}]" if path.name == "pyproject.toml" else ""
        raise ConfigError(f"{path}: unknown option(s){where}: {', '.join(sorted(unknown))}")
    codes = [rule.code for rule in all_codes()]
    result: Dict = {}
    for key, value in table.items():
        where = f"{path}: {key}"
        if key in _SELECTOR_KEYS:
            result[key] = _check_prefixes(_strings(value, where), where, codes)
        elif key in _PATTERN_KEYS:
            result[key] = [_glob(pattern, where) for pattern in _strings(value, where)]
        elif key in ("unsafe-fixes", "fix", "respect-gitignore", "force-exclude", "fix-only"):
            if not isinstance(value, bool):
                raise ConfigError(f"{where}: expected a boolean, got {_describe(value)}")
            result[key] = value
        elif key in ("cache-dir", "extend"):
            if not isinstance(value, str):
                raise ConfigError(f"{where}: expected a string, got {_describe(value)}")
            result[key] = value
        elif key == "target-version":
            if not isinstance(value, str):
                raise ConfigError(f"{where}: expected a string such as \"tf2.15\", got {_describe(value)}")
            result[key] = target_setting(value, where, f"target-version = {json.dumps(value)} in {path}")
        elif key == "file-timeout":
            result[key] = file_timeout(value, where)
        elif key in ("per-file-ignores", "extend-per-file-ignores"):
            if not isinstance(value, dict):
                raise ConfigError(f"{where}: expected a table of glob = [codes], got {_describe(value)}")
            result[key] = {
                _glob(pattern, where): _check_prefixes(_strings(v, f"{where}.{json.dumps(pattern)}"),
                                         f"{where}.{json.dumps(pattern)}", codes)
                for pattern, v in value.items()
            }
    return result


def file_timeout(value: object, where: str) -> float:
    """A ``file-timeout``: seconds, a number from 0 (no limit) up, as TOML or command-line text."""
    number = value
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            number = None
    if isinstance(number, bool) or not isinstance(number, (int, float)) or not math.isfinite(number) \
            or number < 0:
        raise ConfigError(f"{where}: expected a number of seconds (0: no limit), got "
                          f"{json.dumps(value) if isinstance(value, str) else _describe(value)}")
    return float(number)


def load_table(path: Path) -> Dict:
    """The checked settings of ``path``: a pyproject.toml's ``[tool.tflint-gpu]`` table; any other
    file (``tflint-gpu.toml``, ``.tflint-gpu.toml``, a base named by ``extend`` or ``--config``) is
    standalone, the same keys at its top level, as Ruff reads a ``ruff.toml``."""
    data = _read_toml(path)
    if path.name == "pyproject.toml":
        table = _tool_table(data, path).get(SECTION, {})
    elif "tool" in data:
        raise ConfigError(f"{path}: tool: a standalone configuration has its settings at the top level, "
                          f"without a [tool.{SECTION}] table (that table is for pyproject.toml)")
    else:
        table = data
    return validate_table(table, path)


# Lists that add up along an ``extend`` chain; every other key of the extending file replaces the base's.
_ADDING = ("extend-select", "extend-ignore", "extend-exclude", "extend-include", "extend-per-file-ignores",
           "extend-fixable")


def _anchor(table: Dict, folder: str) -> Dict:
    """``table`` with each glob (and the cache folder) paired with ``folder``, the one it is relative to."""
    out: Dict = {}
    for key, value in table.items():
        if key in _PATTERN_KEYS:
            out[key] = [(pattern, folder) for pattern in value]
        elif key in ("per-file-ignores", "extend-per-file-ignores"):
            out[key] = [(pattern, folder, tuple(codes)) for pattern, codes in value.items()]
        elif key == "cache-dir":
            out[key] = (value, folder)
        else:
            out[key] = value
    return out


def load_config(path: Path, _chain: Tuple[Path, ...] = ()) -> Tuple[Dict, Tuple[Path, ...]]:
    """The checked settings of the configuration file ``path``, its ``extend`` chain merged
    (globs paired with the folder of the file that states them), and the files read,
    ``path`` first. A missing base or a cycle is a ConfigError naming the file that says ``extend``."""
    path = Path(os.path.abspath(path))
    table = _anchor(load_table(path), str(path.parent))
    extend = table.pop("extend", None)
    if extend is None:
        return table, (path,)
    base = Path(os.path.expandvars(os.path.expanduser(extend)))
    base = Path(os.path.abspath(path.parent / base))
    chain = _chain + (path,)
    if base in chain:
        cycle = " -> ".join(str(p) for p in chain[chain.index(base):] + (base,))
        raise ConfigError(f"{path}: extend: a cycle: {cycle}")
    if not base.is_file():
        raise ConfigError(f"{path}: extend: no such file: {base}")
    inherited, files = load_config(base, chain)
    merged = dict(inherited)
    for key, value in table.items():
        merged[key] = merged[key] + value if key in _ADDING and key in merged else value
    return merged, (path,) + files


def _split(values: Optional[Sequence[str]]) -> Optional[List[str]]:
    if values is None:
        return None
    result: List[str] = []
    for value in values:
        result.extend(v for v in value.split(",") if v.strip())
    return result


def _selectors(values: Optional[Sequence[str]], option: str) -> Optional[List[str]]:
    """Comma-separated rule selectors of a command-line option; none may be empty."""
    if values is None:
        return None
    codes = [rule.code for rule in all_codes()]
    result: List[str] = []
    for value in values:
        result.extend(_check_prefixes(value.split(","), option, codes))
    return result


def _cli_per_file_ignores(values: Sequence[str]) -> List[Tuple[str, Tuple[str, ...]]]:
    codes = [rule.code for rule in all_codes()]
    pairs = []
    for value in values:
        pattern, _, selectors = value.rpartition(":")
        items = [item for item in selectors.split(",") if item.strip()]
        if not pattern.strip() or not items:
            raise ConfigError(f"--per-file-ignores: expected GLOB:CODES (e.g. 'tests/*:TFG2'), got `{value}`")
        pairs.append((_glob(pattern, "--per-file-ignores"), tuple(_check_prefixes(items, "--per-file-ignores", codes))))
    return pairs


def _glob(pattern: str, where: str) -> str:
    """``pattern``, or ConfigError naming ``where`` when it is no glob: a ``[`` that opens a character
    class no ``]`` closes (``"[abc"``), which the matcher would silently read as text, as Ruff refuses."""
    i, n = 0, len(pattern)
    while i < n:
        if pattern[i] == "[":
            j = i + 1
            if j < n and pattern[j] == "!":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            close = pattern.find("]", j)
            if close < 0:
                raise ConfigError(f"{where}: invalid glob `{pattern}`: unclosed character class `[`")
            i = close
        i += 1
    return pattern


@dataclass
class Overrides:
    """What the command line says; None means "not given"."""

    select: Optional[List[str]] = None
    ignore: Optional[List[str]] = None
    extend_select: Optional[List[str]] = None
    unsafe_fixes: Optional[bool] = None
    config: Optional[str] = None
    exclude: Optional[List[str]] = None
    extend_exclude: Optional[List[str]] = None
    extend_include: Optional[List[str]] = None
    cache_dir: Optional[str] = None
    per_file_ignores: Optional[List[str]] = field(default=None)
    target_version: Optional[str] = None
    respect_gitignore: Optional[bool] = None
    file_timeout: Optional[str] = None
    fixable: Optional[List[str]] = None
    unfixable: Optional[List[str]] = None
    extend_fixable: Optional[List[str]] = None


def load_settings(overrides: Overrides, start: Optional[Path] = None) -> Settings:
    """The settings of the nearest configuration above ``start`` (default: the cwd), or of
    ``--config``, with the command line's overrides. Without a configuration, the root is
    ``start``'s folder. (``Resolver`` gives each file its own.)"""
    config_path = Path(overrides.config) if overrides.config else find_config(start or Path.cwd())
    root = (start or Path.cwd()).resolve()
    if root.is_file():
        root = root.parent
    return build_settings(overrides, config_path, root)


def build_settings(overrides: Overrides, config_path: Optional[Path], root: Path,
                   cwd: Optional[str] = None) -> Settings:
    """The settings of the configuration file ``config_path`` (None: the defaults, rooted at
    ``root``) with the command line's overrides, whose globs are relative to ``cwd``."""
    if config_path is not None:
        table, files = load_config(config_path)
        root = files[0].parent
    else:
        table, files = {}, ()
    here = os.path.abspath(cwd or os.getcwd())

    cli_select = _selectors(overrides.select, "--select")
    select = cli_select if cli_select is not None else table.get("select")
    ignore = table.get("ignore", []) + table.get("extend-ignore", []) + (_selectors(overrides.ignore, "--ignore") or [])
    extend_select = table.get("extend-select", []) + (_selectors(overrides.extend_select, "--extend-select") or [])
    rules = select_rules(select, ignore, extend_select)
    cli_fixable = _selectors(overrides.fixable, "--fixable")
    unfixable = unfixable_codes(cli_fixable if cli_fixable is not None else table.get("fixable"),
                                table.get("unfixable", []) + (_selectors(overrides.unfixable, "--unfixable") or []),
                                table.get("extend-fixable", []) + (_selectors(overrides.extend_fixable,
                                                                              "--extend-fixable") or []))

    pairs: List[Tuple[str, str, Tuple[str, ...]]] = table.get("per-file-ignores", []) + \
        table.get("extend-per-file-ignores", [])
    pairs += [(pattern, here, codes) for pattern, codes in _cli_per_file_ignores(overrides.per_file_ignores or [])]

    def given(values: Optional[Sequence[str]], option: str) -> List[Anchored]:
        return [(_glob(pattern, option), here) for pattern in _split(values) or []]

    exclude = list(table.get("exclude", [(p, str(root)) for p in DEFAULT_EXCLUDE]))
    if overrides.exclude is not None:
        exclude = given(overrides.exclude, "--exclude")
    exclude += table.get("extend-exclude", []) + given(overrides.extend_exclude, "--extend-exclude")
    include = list(table.get("include", [(p, str(root)) for p in DEFAULT_INCLUDE])) + table.get("extend-include", [])
    include += given(overrides.extend_include, "--extend-include")

    unsafe = overrides.unsafe_fixes if overrides.unsafe_fixes is not None else table.get("unsafe-fixes", False)
    target = table.get("target-version")
    if overrides.target_version is not None:
        target = target_setting(overrides.target_version, "--target-version", "--target-version")
    cache_dir, cache_warning = root / ".tflint_gpu_cache", None
    if overrides.cache_dir:
        cache_dir = Path(here) / overrides.cache_dir
    elif "cache-dir" in table:
        value, folder = table["cache-dir"]
        # A repository's configuration (found, not named with --config) keeps the cache inside
        # its folder: it cannot make the tool write elsewhere.
        if overrides.config or _inside(Path(folder) / value, root):
            cache_dir = Path(folder) / value
        else:
            where = next((f for f in files if str(f.parent) == folder), files[0])
            cache_warning = (f"{where}: cache-dir {json.dumps(value)} is outside the project ({root}), and a "
                             f"project's configuration cannot move the cache out of it: using {cache_dir} "
                             f"(--cache-dir or a file named with --config can put it anywhere)")
    respect = overrides.respect_gitignore
    timeout = table.get("file-timeout", DEFAULT_FILE_TIMEOUT)
    if overrides.file_timeout is not None:
        timeout = file_timeout(overrides.file_timeout, "--file-timeout")
    return Settings(
        root=root,
        rules=rules,
        per_file_ignores=tuple(pairs),
        exclude=tuple(exclude),
        include=tuple(include),
        unsafe_fixes=unsafe,
        fix=table.get("fix", False),
        fix_only=table.get("fix-only", False),
        unfixable=unfixable,
        cache_dir=cache_dir,
        cache_warning=cache_warning,
        config_file=files[0] if files else None,
        config_files=files,
        respect_gitignore=respect if respect is not None else table.get("respect-gitignore", True),
        force_exclude=table.get("force-exclude", False),
        target_version=target,
        file_timeout=timeout,
    )


def _inside(path: Path, folder: Path) -> bool:
    """Whether ``path`` is ``folder`` or under it, symbolic links followed (as far as they exist)."""
    real, top = os.path.realpath(path), os.path.realpath(folder)
    try:
        return os.path.commonpath([real, top]) == top
    except ValueError:  # another drive
        return False


class Resolver:
    """Each file's settings, as Ruff resolves them: those of the nearest configuration file
    above it (``_configuration_in``; ``--config``: that file for every file), the
    command line's overrides applied to each; the defaults, rooted at the cwd, where there
    is none. The configuration of each folder is looked up once, and each configuration's
    settings are built once (so the files of one configuration share one ``Settings``)."""

    def __init__(self, overrides: Optional[Overrides] = None, cwd: Optional[str] = None) -> None:
        self.overrides = overrides or Overrides()
        self.cwd = os.path.abspath(cwd or os.getcwd())
        self._nearest: Dict[str, Optional[str]] = {}
        self._by_config: Dict[Optional[str], Settings] = {}
        self._by_folder: Dict[str, Settings] = {}

    def config_for(self, folder: str) -> Optional[str]:
        """The configuration file that governs ``folder`` (None: none, the defaults)."""
        if self.overrides.config:
            return os.path.abspath(self.overrides.config)
        return nearest_upward(os.path.abspath(folder), self._nearest, _configuration_in)

    def settings_for_folder(self, folder: str) -> Settings:
        """The settings of the files in ``folder``."""
        folder = os.path.abspath(folder)
        settings = self._by_folder.get(folder)
        if settings is None:
            config_file = self.config_for(folder)
            settings = self._by_config.get(config_file)
            if settings is None:
                settings = build_settings(self.overrides, Path(config_file) if config_file else None,
                                          Path(self.cwd), self.cwd)
                self._by_config[config_file] = settings
            self._by_folder[folder] = settings
        return settings

    def settings_for(self, path: str) -> Settings:
        """The settings of the file (or folder) ``path``, which need not exist."""
        full = os.path.abspath(path)
        return self.settings_for_folder(full if os.path.isdir(full) else os.path.dirname(full))

    def used(self) -> List[Settings]:
        """The settings built so far, each once."""
        return list(self._by_config.values())


def target_setting(value: str, where: str, why: str) -> Target:
    """The target a ``target-version`` value names; a ConfigError naming ``where`` if none."""
    try:
        return targets.parse_target(value, targets.SETTING, why)
    except TargetError as error:
        raise ConfigError(f"{where}: {error}") from None
