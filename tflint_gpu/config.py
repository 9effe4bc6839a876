"""Settings: ``[tool.tflint-gpu]`` in pyproject.toml merged with command-line flags.

Selection works as in Ruff: codes are chosen by prefix (``TFG``, ``TFG2``,
``TFG201``) or ``ALL``; when a code matches both a ``select`` and an
``ignore`` prefix, the longer (more specific) prefix wins, and ``ignore`` wins
a tie. Rules that are off by default are enabled only by a ``select`` or
``extend-select`` prefix that names them (``ALL`` included).
"""
from __future__ import annotations

import fnmatch
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, FrozenSet, List, Optional, Sequence, Tuple, Type

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from tflint_gpu.rules.base import Rule, all_rules
from tflint_gpu.semantic import target as targets
from tflint_gpu.semantic.target import Target, TargetError

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
}


class ConfigError(Exception):
    """A configuration or usage error (exit code 2)."""


@dataclass(frozen=True)
class Settings:
    root: Path
    rules: Tuple[Type[Rule], ...]
    per_file_ignores: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()
    exclude: Tuple[str, ...] = DEFAULT_EXCLUDE
    include: Tuple[str, ...] = DEFAULT_INCLUDE
    unsafe_fixes: bool = False
    fix: bool = False
    cache_dir: Optional[Path] = None
    config_file: Optional[Path] = None
    # ``target-version`` (or ``--target-version``): the target of every file; None: each
    # file's is read from its project (``semantic.target``).
    target_version: Optional[Target] = None
    # Targets read from the project, per folder (``target_for``), and what files set in code.
    _targets: Dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def codes(self) -> FrozenSet[str]:
        return frozenset(rule.code for rule in self.rules)

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

    def scan_code(self, paths: Sequence[str]) -> None:
        """Read ``TF_USE_LEGACY_KERAS`` set in these files (it makes ``tf.keras`` Keras 2 for
        the whole program): evidence for their project's target. Call it before
        ``target_for`` and ``fingerprint`` (the command line does, with the files it checks)."""
        if self.target_version is not None:
            return
        code = self._targets.setdefault("code", {})
        for path in paths:
            try:
                with open(path, "rb") as handle:
                    data = handle.read(8 * 1024 * 1024)
            except OSError:
                continue
            if b"TF_USE_LEGACY_KERAS" not in data:
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
        return tuple(r for r in self._ignoring(path) if getattr(r, "migration", False) is True)

    def rules_for(self, path: str) -> Tuple[Type[Rule], ...]:
        """The selected rules minus the per-file ignores matching ``path``, and minus
        the migration rules (``Rule.migration is True``) where the file's target is Keras 2."""
        rules = self._ignoring(path)
        if any(getattr(r, "migration", False) is True for r in rules) and not self.target_for(path).keras3:
            rules = tuple(r for r in rules if getattr(r, "migration", False) is not True)
        return rules

    def _ignoring(self, path: str) -> Tuple[Type[Rule], ...]:
        if not self.per_file_ignores:
            return self.rules
        relative = _relative(path, self.root)
        ignored: List[str] = []
        for pattern, codes in self.per_file_ignores:
            if _matches(relative, pattern):
                ignored.extend(codes)
        if not ignored:
            return self.rules
        return tuple(r for r in self.rules if not any(_prefix_matches(p, r.code) for p in ignored))

    def is_excluded(self, path: str) -> bool:
        """Does a pattern match the file or directory's name, or its path from the root?

        Directories are pruned as the walk meets them, so the folders above a
        path given on the command line never exclude it (as in Ruff).
        """
        relative = _relative(path, self.root)
        name = os.path.basename(os.path.normpath(path))
        return any(fnmatch.fnmatchcase(name, pattern) or _matches(relative, pattern) for pattern in self.exclude)

    def is_included(self, path: str) -> bool:
        """Does an ``include`` pattern match the file's name or its path from the root?"""
        relative = _relative(path, self.root)
        name = os.path.basename(path)
        return any(fnmatch.fnmatchcase(name, pattern) or _matches(relative, pattern) for pattern in self.include)

    def fingerprint(self) -> str:
        """What decides the results besides the files: the selection, per-file
        ignores and the targets (the setting, or every target read so far: call
        ``target_for`` for the files first)."""
        if self.target_version is not None:
            used = [("", self.target_version.spelling)]
        else:
            used = sorted((folder or "", t.spelling) for folder, t in self._targets.get("resolved", {}).items())
        return repr((sorted(self.codes), self.per_file_ignores, used))

    def project_root(self, paths: Sequence[str]) -> Optional[str]:
        """Where the project's modules are named from (the project index): the
        configuration's folder, else the common folder of ``paths`` raised out of
        any package it is in (``semantic.project.project_root``)."""
        from tflint_gpu.semantic.project import project_root

        return project_root(paths, str(self.root) if self.config_file is not None else None)


def _relative(path: str, root: Path) -> str:
    try:
        return Path(os.path.abspath(path)).relative_to(root).as_posix()
    except ValueError:
        return Path(path).as_posix()


def _matches(relative: str, pattern: str) -> bool:
    pattern = pattern.rstrip("/")
    return (
        fnmatch.fnmatchcase(relative, pattern)
        or fnmatch.fnmatchcase(relative, pattern + "/*")
        or fnmatch.fnmatchcase(os.path.basename(relative), pattern)
    )


def _prefix_matches(prefix: str, code: str) -> bool:
    return prefix == "ALL" or code.startswith(prefix)


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
    rules = list(all_rules())
    codes = [r.code for r in rules]
    chosen = _check_prefixes(select, "select", codes) if select is not None else None
    extra = _check_prefixes(extend_select, "extend-select", codes)
    ignored = _check_prefixes(ignore, "ignore", codes)
    result = []
    for rule in rules:
        explicit = [p for p in (chosen or []) + extra if _prefix_matches(p, rule.code)]
        if explicit:
            best_select = max(len(p) if p != "ALL" else 0 for p in explicit)
        elif chosen is None and rule.default_enabled:
            best_select = -1
        else:
            continue
        matching_ignores = [len(p) if p != "ALL" else 0 for p in ignored if _prefix_matches(p, rule.code)]
        if matching_ignores and max(matching_ignores) >= best_select:
            continue
        result.append(rule)
    return tuple(result)


def _read_toml(path: Path) -> Dict:
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
    """The nearest pyproject.toml with a [tool.tflint-gpu] table, from ``start`` upward.

    A pyproject.toml on the way that is not valid TOML is an error (as in Ruff),
    never passed over: it may well be the one meant to configure us.
    """
    current = start.resolve()
    if current.is_file():
        current = current.parent
    for directory in (current, *current.parents):
        candidate = directory / "pyproject.toml"
        if candidate.is_file() and SECTION in _tool_table(_read_toml(candidate), candidate):
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


_SELECTOR_KEYS = ("select", "ignore", "extend-select", "extend-ignore")
_PATTERN_KEYS = ("exclude", "extend-exclude", "include", "extend-include")


def validate_table(table: object, path: Path) -> Dict:
    """Type-check every key of ``[tool.tflint-gpu]``: one error naming the file and key."""
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: tool.{SECTION}: expected a table, got {_describe(table)}")
    unknown = set(table) - _KNOWN_KEYS
    if unknown:
        raise ConfigError(f"{path}: unknown option(s) in [tool.{SECTION}]: {', '.join(sorted(unknown))}")
    codes = [rule.code for rule in all_rules()]
    result: Dict = {}
    for key, value in table.items():
        where = f"{path}: {key}"
        if key in _SELECTOR_KEYS:
            result[key] = _check_prefixes(_strings(value, where), where, codes)
        elif key in _PATTERN_KEYS:
            result[key] = _strings(value, where)
        elif key in ("unsafe-fixes", "fix"):
            if not isinstance(value, bool):
                raise ConfigError(f"{where}: expected a boolean, got {_describe(value)}")
            result[key] = value
        elif key == "cache-dir":
            if not isinstance(value, str):
                raise ConfigError(f"{where}: expected a string, got {_describe(value)}")
            result[key] = value
        elif key == "target-version":
            if not isinstance(value, str):
                raise ConfigError(f"{where}: expected a string such as \"tf2.15\", got {_describe(value)}")
            result[key] = target_setting(value, where, f"target-version = {json.dumps(value)} in {path}")
        elif key == "per-file-ignores":
            if not isinstance(value, dict):
                raise ConfigError(f"{where}: expected a table of glob = [codes], got {_describe(value)}")
            result[key] = {
                pattern: _check_prefixes(_strings(v, f"{where}.{json.dumps(pattern)}"),
                                         f"{where}.{json.dumps(pattern)}", codes)
                for pattern, v in value.items()
            }
    return result


def load_table(path: Path) -> Dict:
    """The checked ``[tool.tflint-gpu]`` settings of ``path`` (or a standalone tflint-gpu.toml)."""
    data = _read_toml(path)
    if path.name == "pyproject.toml" or "tool" in data:
        table = _tool_table(data, path).get(SECTION, {})
    else:  # a standalone tflint-gpu.toml
        table = data
    return validate_table(table, path)


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
    codes = [rule.code for rule in all_rules()]
    result: List[str] = []
    for value in values:
        result.extend(_check_prefixes(value.split(","), option, codes))
    return result


def _cli_per_file_ignores(values: Sequence[str]) -> List[Tuple[str, Tuple[str, ...]]]:
    codes = [rule.code for rule in all_rules()]
    pairs = []
    for value in values:
        pattern, _, selectors = value.rpartition(":")
        items = [item for item in selectors.split(",") if item.strip()]
        if not pattern.strip() or not items:
            raise ConfigError(f"--per-file-ignores: expected GLOB:CODES (e.g. 'tests/*:TFG2'), got `{value}`")
        pairs.append((pattern, tuple(_check_prefixes(items, "--per-file-ignores", codes))))
    return pairs


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


def load_settings(overrides: Overrides, start: Optional[Path] = None) -> Settings:
    config_path = Path(overrides.config) if overrides.config else find_config(start or Path.cwd())
    table: Dict = load_table(config_path) if config_path is not None else {}
    root = config_path.resolve().parent if config_path is not None else (start or Path.cwd()).resolve()
    if root.is_file():
        root = root.parent

    cli_select = _selectors(overrides.select, "--select")
    select = cli_select if cli_select is not None else table.get("select")
    ignore = table.get("ignore", []) + table.get("extend-ignore", []) + (_selectors(overrides.ignore, "--ignore") or [])
    extend_select = table.get("extend-select", []) + (_selectors(overrides.extend_select, "--extend-select") or [])
    rules = select_rules(select, ignore, extend_select)

    pairs: List[Tuple[str, Tuple[str, ...]]] = [
        (pattern, tuple(codes)) for pattern, codes in table.get("per-file-ignores", {}).items()
    ]
    pairs += _cli_per_file_ignores(overrides.per_file_ignores or [])

    exclude = list(table.get("exclude", DEFAULT_EXCLUDE))
    if overrides.exclude is not None:
        exclude = _split(overrides.exclude) or []
    exclude += table.get("extend-exclude", []) + (_split(overrides.extend_exclude) or [])
    include = list(table.get("include", DEFAULT_INCLUDE)) + table.get("extend-include", [])
    include += _split(overrides.extend_include) or []

    unsafe = overrides.unsafe_fixes if overrides.unsafe_fixes is not None else table.get("unsafe-fixes", False)
    target = table.get("target-version")
    if overrides.target_version is not None:
        target = target_setting(overrides.target_version, "--target-version", "--target-version")
    cache_dir = overrides.cache_dir or table.get("cache-dir")
    return Settings(
        root=root,
        rules=rules,
        per_file_ignores=tuple(pairs),
        exclude=tuple(exclude),
        include=tuple(include),
        unsafe_fixes=unsafe,
        fix=table.get("fix", False),
        cache_dir=(root / cache_dir) if cache_dir else root / ".tflint_gpu_cache",
        config_file=config_path,
        target_version=target,
    )


def target_setting(value: str, where: str, why: str) -> Target:
    """The target a ``target-version`` value names; a ConfigError naming ``where`` if none."""
    try:
        return targets.parse_target(value, targets.SETTING, why)
    except TargetError as error:
        raise ConfigError(f"{where}: {error}") from None
