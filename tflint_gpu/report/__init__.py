"""Reporters: the same findings as text (concise, or full: with source lines and fix previews), JSON
(Ruff's fields), SARIF 2.1.0, GitHub annotations, GitLab Code Quality or JUnit XML."""
from __future__ import annotations

from typing import Callable, Dict, List, Sequence

from tflint_gpu.findings import Finding


def _load(name: str):
    """A reporter module, imported when its format is used: choosing a format (the command line's
    ``--format`` choices, its start) imports none."""
    import importlib

    return importlib.import_module(f"tflint_gpu.report.{name}")


def _lazy(module: str, function: str = "render") -> Callable[..., str]:
    def call(*args, **kwargs) -> str:
        return getattr(_load(module), function)(*args, **kwargs)

    return call


FORMATS: Dict[str, Callable[..., str]] = {
    "text": _lazy("text"),
    "concise": _lazy("text"),  # Ruff's name for the one-line format
    "full": _lazy("full"),
    "json": _lazy("json_format"),
    "sarif": _lazy("sarif"),
    "github": _lazy("github"),
    "gitlab": _lazy("gitlab"),  # GitLab Code Quality
    "junit": _lazy("junit"),  # JUnit XML
}


# --statistics: the formats that can hold a table of counts (as in Ruff).
STATISTICS: Dict[str, Callable[..., str]] = {
    "text": _lazy("text", "statistics"),
    "concise": _lazy("text", "statistics"),
    "full": _lazy("text", "statistics"),
    "json": _lazy("json_format", "statistics"),
}


def render(fmt: str, findings: Sequence[Finding], errors: List[str], **summary) -> str:
    return FORMATS[fmt](findings, errors, **summary)
