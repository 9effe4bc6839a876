"""Reporters: the same findings as text (concise, or full: with source lines and fix previews), JSON
(Ruff's fields), SARIF 2.1.0, GitHub annotations, GitLab Code Quality or JUnit XML."""
from __future__ import annotations

from typing import Callable, Dict, List, Sequence

from tflint_gpu.findings import Finding
from tflint_gpu.report import full, github, json_format, sarif, text

FORMATS: Dict[str, Callable[..., str]] = {
    "text": text.render,
    "concise": text.render,  # Ruff's name for the one-line format
    "full": full.render,
    "json": json_format.render,
    "sarif": sarif.render,
    "github": github.render,
    "gitlab": lambda *args, **kwargs: _load("gitlab").render(*args, **kwargs),  # GitLab Code Quality
    "junit": lambda *args, **kwargs: _load("junit").render(*args, **kwargs),  # JUnit XML
}


def _load(name: str):
    """A reporter module imported when its format is used (``--format gitlab``, ``junit``)."""
    import importlib

    return importlib.import_module(f"tflint_gpu.report.{name}")


# --statistics: the formats that can hold a table of counts (as in Ruff).
STATISTICS: Dict[str, Callable[..., str]] = {
    "text": text.statistics,
    "concise": text.statistics,
    "full": text.statistics,
    "json": json_format.statistics,
}


def render(fmt: str, findings: Sequence[Finding], errors: List[str], **summary) -> str:
    return FORMATS[fmt](findings, errors, **summary)
