"""flake8 adapter: flake8 hands us (tree, filename, lines); we run the same engine.

flake8 handles ``# noqa`` and ``--select/--ignore`` itself, so the adapter
reports every finding of the rules enabled by default (or by the
``[tool.tflint-gpu]`` selection of the nearest pyproject.toml, resolved as the
command line resolves it); a file with a ``# tflint-gpu: noqa`` line, or one
that the command line's walk would skip (``exclude``/``extend-exclude``, and
``.gitignore`` with ``respect-gitignore``: ``files.force_excluded``, as Ruff's
pre-commit hook runs with ``--force-exclude``), has none. An invalid configuration stops flake8
with the message, as the command line does. flake8 adds 1 to the column it is
given, so columns are 0-based here. The project index of the file's project
(the configuration's folder, else the file's folder raised out of its
packages) is built on first use and kept for the other files of that project.
A ``# tflint-gpu: noqa: CODES`` line leaves those codes out; TFG001 (unused
``noqa``) is not reported here: flake8 reads the ``# noqa`` comments. A file whose analysis
runs past ``file-timeout`` seconds is one ``TFG000 analysis stopped after N s`` line.
"""
from __future__ import annotations

from typing import Iterator, Sequence, Tuple, Type

import tflint_gpu
from tflint_gpu import config
from tflint_gpu.engine.budget import AnalysisTimeout
from tflint_gpu.engine.lint import ParseError, lint_source
from tflint_gpu.engine.noqa import file_exemption
from tflint_gpu.documents import Documents
from tflint_gpu.rules.base import Rule

try:  # flake8 shows its ExecutionError as "There was a critical error ..."
    from flake8.exceptions import ExecutionError as _Flake8Error
except ImportError:  # pragma: no cover - imported without flake8
    _Flake8Error = Exception  # type: ignore[misc,assignment]


class ConfigurationError(_Flake8Error):
    """tflint-gpu's configuration is invalid: flake8 reports it and exits non-zero."""


_DOCUMENTS = Documents()
# The code of the one line a file gets when its analysis ran past ``file-timeout`` (no rule has it).
TIMEOUT_CODE = "TFG000"


def _settings_for(path: str) -> config.Settings:
    try:
        return _DOCUMENTS.settings_for(path)
    except config.ConfigError as error:
        raise ConfigurationError(f"tflint-gpu: {error}") from None


class Flake8Plugin:
    name = "tflint-gpu"
    version = tflint_gpu.__version__

    def __init__(self, tree: object, filename: str, lines: Sequence[str]) -> None:
        self.filename = filename
        self.lines = lines

    def _settings(self) -> config.Settings:
        return _settings_for(self.filename)

    def _rules(self) -> Tuple[Type[Rule], ...]:
        return self._settings().rules_for(self.filename)

    def run(self) -> Iterator[Tuple[int, int, str, type]]:
        settings = self._settings()  # before anything else: a configuration error is never skipped
        if _DOCUMENTS.is_excluded(self.filename):
            return
        rules = settings.rules_for(self.filename)
        source = "".join(self.lines)
        exemption = file_exemption(source)  # flake8 knows `# noqa`, not `# tflint-gpu: noqa[: CODES]`
        if exemption is not None and exemption.everything:
            return
        if exemption is not None:
            rules = tuple(rule for rule in rules if not exemption.covers(rule.code))
        try:
            findings = lint_source(source, self.filename, rules, noqa=False,
                                   project=_DOCUMENTS.project_for(self.filename, settings),
                                   target=settings.target_for(self.filename), budget=settings.file_timeout).findings
        except ParseError:
            return  # flake8 reports syntax errors itself (E999)
        except AnalysisTimeout as error:  # one line for the file; flake8 goes on with the others
            yield 1, 0, f"{TIMEOUT_CODE} {error}; file not checked (file-timeout in [tool.tflint-gpu])", type(self)
            return
        for finding in findings:
            yield finding.row, finding.col, f"{finding.code} {finding.message}", type(self)
