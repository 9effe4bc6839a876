"""Reporters: the same findings as text (concise, or full: with source lines and fix previews), JSON
(Ruff's fields), SARIF 2.1.0 or GitHub annotations."""
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
}


# --statistics: the formats that can hold a table of counts (as in Ruff).
STATISTICS: Dict[str, Callable[..., str]] = {
    "text": text.statistics,
    "concise": text.statistics,
    "full": text.statistics,
    "json": json_format.statistics,
}


def render(fmt: str, findings: Sequence[Finding], errors: List[str], **summary) -> str:
    return FORMATS[fmt](findings, errors, **summary)
