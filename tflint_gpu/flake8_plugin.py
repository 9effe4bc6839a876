"""flake8 adapter: flake8 hands us (tree, filename, lines); we run the same engine.

flake8 handles ``# noqa`` and ``--select/--ignore`` itself, so the adapter
reports every finding of the rules enabled by default (or by the
``[tool.tflint-gpu]`` selection of the nearest pyproject.toml); a file with a
``# tflint-gpu: noqa`` line has none. An invalid configuration stops flake8
with the message, as the command line does. flake8 adds 1 to the column it is
given, so columns are 0-based here. The project index of the file's project
(the configuration's folder, else the file's folder raised out of its
packages) is built on first use and kept for the other files of that project.
"""
from __future__ import annotations

import functools
from pathlib import Path
from typing import Iterator, Sequence, Tuple, Type

import tflint_gpu
from tflint_gpu import config
from tflint_gpu.engine.lint import ParseError, file_noqa, lint_source
from tflint_gpu.rules.base import Rule
from tflint_gpu.semantic.project import ProjectFile, ProjectIndex

try:  # flake8 shows its ExecutionError as "There was a critical error ..."
    from flake8.exceptions import ExecutionError as _Flake8Error
except ImportError:  # pragma: no cover - imported without flake8
    _Flake8Error = Exception  # type: ignore[misc,assignment]


class ConfigurationError(_Flake8Error):
    """tflint-gpu's configuration is invalid: flake8 reports it and exits non-zero."""


@functools.lru_cache(maxsize=64)
def _settings_for(directory: str) -> config.Settings:
    try:
        return config.load_settings(config.Overrides(), Path(directory))
    except config.ConfigError as error:
        raise ConfigurationError(f"tflint-gpu: {error}") from None


@functools.lru_cache(maxsize=16)
def _index_for(root: str) -> ProjectIndex:
    """The project index under ``root``: modules are summarised as imports reach them."""
    from tflint_gpu.engine.cache import ProjectCache

    store = ProjectCache(None)
    return ProjectIndex(root, loader=store.load, by_text=store.of_text)


def _project_for(filename: str, settings: config.Settings) -> "ProjectFile | None":
    if filename in ("-", "stdin"):
        return None
    root = settings.project_root([filename])
    return ProjectFile(_index_for(root), str(Path(filename).resolve())) if root is not None else None


class Flake8Plugin:
    name = "tflint-gpu"
    version = tflint_gpu.__version__

    def __init__(self, tree: object, filename: str, lines: Sequence[str]) -> None:
        self.filename = filename
        self.lines = lines

    def _settings(self) -> config.Settings:
        directory = Path(self.filename).resolve().parent if self.filename not in ("-", "stdin") else Path.cwd()
        return _settings_for(str(directory))

    def _rules(self) -> Tuple[Type[Rule], ...]:
        return self._settings().rules_for(self.filename)

    def run(self) -> Iterator[Tuple[int, int, str, type]]:
        settings = self._settings()  # before anything else: a configuration error is never skipped
        rules = settings.rules_for(self.filename)
        source = "".join(self.lines)
        if file_noqa(source):
            return
        try:
            findings = lint_source(source, self.filename, rules, noqa=False,
                                   project=_project_for(self.filename, settings),
                                   target=settings.target_for(self.filename)).findings
        except ParseError:
            return  # flake8 reports syntax errors itself (E999)
        for finding in findings:
            yield finding.row, finding.col, f"{finding.code} {finding.message}", type(self)
