"""Settings: ``[tool.tflint-gpu]`` in pyproject.toml merged with command-line flags.

Selection works as in Ruff: codes are chosen by prefix (``TFG``, ``TFG2``,
``TFG201``) or ``ALL``; when a code matches both a ``select`` and an
``ignore`` prefix, the longer (more specific) prefix wins, and ``ignore`` wins
a tie. Rules that are off by default are enabled only by a ``select`` or
``extend-select`` prefix that names them (``ALL`` included).
"""
from __future__ import annotations

import fnmatch
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

SECTION = "tflint-gpu"
DEFAULT_EXCLUDE = (
    ".git",
    ".hg",
    ".svn",
    ".venv",
    "venv",
    ".env",
    "env",
    ".tox",
    ".nox",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".tflint_gpu_cache",
    "__pycache__",
    "__pypackages__",
    "build",
    "dist",
    "site-packages",
    "node_modules",
    ".ipynb_checkpoints",
)
_KNOWN_KEYS = {
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
}


class ConfigError(Exception):
    """A configuration or usage error (exit code 2)."""


@dataclass(frozen=True)
class Settings:
    root: Path
    rules: Tuple[Type[Rule], ...]
    per_file_ignores: Tuple[Tuple[str, Tuple[str, ...]], ...] = ()
    exclude: Tuple[str, ...] = DEFAULT_EXCLUDE
    unsafe_fixes: bool = False
    fix: bool = False
    cache_dir: Optional[Path] = None
    config_file: Optional[Path] = None

    @property
    def codes(self) -> FrozenSet[str]:
        return frozenset(rule.code for rule in self.rules)

    def rules_for(self, path: str) -> Tuple[Type[Rule], ...]:
        """The selected rules minus the per-file ignores matching ``path``."""
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

    def fingerprint(self) -> str:
        return repr((sorted(self.codes), self.per_file_ignores))


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
    result = []
    for prefix in prefixes:
        prefix = prefix.strip().upper()
        if not prefix:
            continue
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


def find_config(start: Path) -> Optional[Path]:
    """The nearest pyproject.toml with a [tool.tflint-gpu] table, from ``start`` upward."""
    current = start.resolve()
    if current.is_file():
        current = current.parent
    for directory in (current, *current.parents):
        candidate = directory / "pyproject.toml"
        if candidate.is_file():
            try:
                data = tomllib.loads(candidate.read_text(encoding="utf-8"))
            except (OSError, tomllib.TOMLDecodeError):
                continue
            if SECTION in data.get("tool", {}):
                return candidate
    return None


def load_table(path: Path) -> Dict:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ConfigError(f"cannot read config {path}: {error.strerror}") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"invalid TOML in {path}: {error}") from None
    if path.name == "pyproject.toml" or "tool" in data:
        table = data.get("tool", {}).get(SECTION, {})
    else:  # a standalone tflint-gpu.toml
        table = data
    unknown = set(table) - _KNOWN_KEYS
    if unknown:
        raise ConfigError(f"{path}: unknown option(s) in [tool.{SECTION}]: {', '.join(sorted(unknown))}")
    return table


def _list(table: Dict, key: str, path: Optional[Path]) -> Optional[List[str]]:
    value = table.get(key)
    if value is None:
        return None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{path}: `{key}` must be a list of strings")
    return value


def _split(values: Optional[Sequence[str]]) -> Optional[List[str]]:
    if values is None:
        return None
    result: List[str] = []
    for value in values:
        result.extend(v for v in value.split(",") if v.strip())
    return result


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
    cache_dir: Optional[str] = None
    per_file_ignores: Optional[List[str]] = field(default=None)


def load_settings(overrides: Overrides, start: Optional[Path] = None) -> Settings:
    config_path = Path(overrides.config) if overrides.config else find_config(start or Path.cwd())
    table: Dict = load_table(config_path) if config_path is not None else {}
    root = config_path.resolve().parent if config_path is not None else (start or Path.cwd()).resolve()
    if root.is_file():
        root = root.parent

    select = _split(overrides.select) if overrides.select is not None else _list(table, "select", config_path)
    ignore = (_list(table, "ignore", config_path) or []) + (_list(table, "extend-ignore", config_path) or [])
    ignore += _split(overrides.ignore) or []
    extend_select = (_list(table, "extend-select", config_path) or []) + (_split(overrides.extend_select) or [])
    rules = select_rules(select, ignore, extend_select)

    per_file = table.get("per-file-ignores", {})
    if not isinstance(per_file, dict):
        raise ConfigError(f"{config_path}: `per-file-ignores` must be a table of glob = [codes]")
    pairs: List[Tuple[str, Tuple[str, ...]]] = []
    codes = [r.code for r in all_rules()]
    for pattern, value in per_file.items():
        value = [value] if isinstance(value, str) else value
        pairs.append((pattern, tuple(_check_prefixes(value, f"per-file-ignores `{pattern}`", codes))))
    for item in overrides.per_file_ignores or []:
        pattern, _, value = item.partition(":")
        pairs.append((pattern, tuple(_check_prefixes(value.split(","), "--per-file-ignores", codes))))

    exclude = list(DEFAULT_EXCLUDE)
    table_exclude = _list(table, "exclude", config_path)
    if table_exclude is not None:
        exclude = table_exclude
    if overrides.exclude is not None:
        exclude = _split(overrides.exclude) or []
    exclude += (_list(table, "extend-exclude", config_path) or []) + (_split(overrides.extend_exclude) or [])

    unsafe = overrides.unsafe_fixes if overrides.unsafe_fixes is not None else bool(table.get("unsafe-fixes", False))
    cache_dir = overrides.cache_dir or table.get("cache-dir")
    return Settings(
        root=root,
        rules=rules,
        per_file_ignores=tuple(pairs),
        exclude=tuple(exclude),
        unsafe_fixes=unsafe,
        fix=bool(table.get("fix", False)),
        cache_dir=(root / cache_dir) if cache_dir else root / ".tflint_gpu_cache",
        config_file=config_path,
    )
