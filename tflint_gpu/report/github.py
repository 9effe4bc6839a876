"""GitHub Actions workflow commands: one ``::warning`` annotation a finding."""
from __future__ import annotations

from typing import List, Sequence

from tflint_gpu.findings import Finding


def _data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(value: str) -> str:
    return _data(value).replace(":", "%3A").replace(",", "%2C")


def render(findings: Sequence[Finding], errors: List[str], **_: object) -> str:
    lines = []
    for f in findings:
        cell = getattr(f, "cell", None)
        if cell:  # a notebook: the line of the .ipynb file holding the source line; the cell in the text
            lines.append(
                f"::warning title={_property('tflint-gpu (' + f.code + ')')},file={_property(f.path)},"
                f"line={f.file_row}::{_data(f'{f.code} cell {cell}:{f.row}:{f.col + 1}: {f.message}')}"
            )
            continue
        lines.append(
            f"::warning title={_property('tflint-gpu (' + f.code + ')')},file={_property(f.path)},"
            f"line={f.row},col={f.col + 1},endLine={f.end_row},endColumn={f.end_col + 1}::"
            f"{_data(f.code + ' ' + f.message)}"
        )
    for error in errors:
        lines.append(f"::error title=tflint-gpu::{_data(error)}")
    return "".join(line + "\n" for line in lines)
