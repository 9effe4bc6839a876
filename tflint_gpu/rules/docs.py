"""A rule's documentation page and where it lives.

``page(rule)`` is the text ``tflint-gpu rule CODE`` prints and
``scripts/gen_rule_docs.py`` writes to ``docs/rules/CODE.md``: the rule's
docstring, then the measurement of its example pair as ``tflint-gpu verify``
recorded it (its row of ``examples/RESULTS.md``, quoted, never retyped), then
the pair itself. ``rule_url(code)`` is the address JSON and SARIF output (and
the language server) link a finding's rule to: the page as installed, which the
wheel ships as package data (``tflint_gpu/docs/rules/``, mapped from
``docs/rules/`` in pyproject.toml: one copy, the generator's).
"""
from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path
from typing import List, Optional, Type

PACKAGE_DIR = Path(__file__).resolve().parent.parent  # tflint_gpu/
DOCS_DIR = PACKAGE_DIR.parent / "docs" / "rules"  # a source checkout's (what gen_rule_docs.py writes)
# A wheel's copy of DOCS_DIR (package data): tflint_gpu/docs/rules/, so that a page's relative link to
# its example pair (../../examples/CODE/) reaches tflint_gpu/examples/ as it reaches examples/.
INSTALLED_DIR = PACKAGE_DIR / "docs" / "rules"
# A team that hosts the pages: TFLINT_GPU_DOCS_URL=https://example.org/tflint-gpu/rules/ gives
# https://example.org/tflint-gpu/rules/TFG201.md (the base, the code, ".md").
URL_VARIABLE = "TFLINT_GPU_DOCS_URL"
MEASUREMENT_HEADING = "## Last recorded measurement (examples/RESULTS.md)"


def pages_dir() -> Path:
    """The rule pages: ``tflint_gpu/docs/rules/`` in an installed wheel (package data), else
    ``docs/rules/`` of the source checkout the package runs from (editable installs too)."""
    return INSTALLED_DIR if INSTALLED_DIR.is_dir() else DOCS_DIR


def rule_url(code: str) -> Optional[str]:
    """The page of rule ``code``: ``$TFLINT_GPU_DOCS_URL`` + code + ``.md`` when that is set, else the
    ``file://`` URI of its page as installed (``pages_dir()``), else None (not a rule's code, or a
    page missing)."""
    from tflint_gpu.catalogue import describe  # no rule module imported

    if describe(code) is None:
        return None
    base = os.environ.get(URL_VARIABLE)
    return f"{base}{code}.md" if base else _local_url(f"{code}.md")


def index_url() -> Optional[str]:
    """The index of the rules (docs/rules/README.md), as ``rule_url`` finds a page."""
    base = os.environ.get(URL_VARIABLE)
    return f"{base}README.md" if base else _local_url("README.md")


@lru_cache(maxsize=None)
def _local_url(name: str) -> Optional[str]:
    path = pages_dir() / name
    return path.as_uri() if path.is_file() else None


def results_row(code: str, results_text: str) -> Optional[str]:
    """The rule's row of examples/RESULTS.md (its text), or None."""
    for line in results_text.splitlines():
        if line.startswith((f"| {code} ", f"| [{code}]")):
            return line
    return None


def measurement(code: str, results_text: str) -> Optional[str]:
    """The measurement section: the lines RESULTS.md opens with (date, device, TensorFlow, size,
    calls), its table heading and the rule's row, whose link points at the example from docs/rules/."""
    row = results_row(code, results_text)
    if row is None:
        return None
    lines = results_text.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("|"))
    context = [line for line in lines[:first] if line and not line.startswith("#")]
    row = row.replace(f"[{code}]({code}/)", f"[{code}](../../examples/{code}/)", 1)
    notes = [line for line in lines[first:] if line.startswith("Times ")]  # what the columns measure
    return "\n".join([MEASUREMENT_HEADING, *context, "", lines[first], lines[first + 1], row, "", *notes]).rstrip()


def page(rule: Type) -> str:
    """The rule's documentation page (markdown), the same for the CLI and docs/rules/."""
    from tflint_gpu.verify.harness import default_examples_dir

    fix = rule.fix_label() or "none"
    enabled = "yes" if rule.default_enabled else "no"
    parts: List[str] = [f"# {rule.name} ({rule.code})\n\nFix: {fix}. Enabled by default: {enabled}.", rule.docs()]
    examples = default_examples_dir()
    results = examples / "RESULTS.md"
    if results.is_file():
        measured = measurement(rule.code, results.read_text(encoding="utf-8"))
        if measured:
            parts.append(measured)
    example = examples / rule.code
    if (example / "before.py").is_file() and (example / "after.py").is_file():
        for side in ("before", "after"):
            parts.append(f"## Example pair: examples/{rule.code}/{side}.py\n```python\n"
                         f"{(example / f'{side}.py').read_text(encoding='utf-8').rstrip()}\n```")
    return "\n\n".join(parts) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def index(rules) -> str:
    """docs/rules/README.md: one row a rule."""
    lines = ["# Rules", "",
             "Generated by `python scripts/gen_rule_docs.py` from the rules' docstrings and "
             "examples/RESULTS.md; do not edit by hand. `tflint-gpu rule CODE` prints the same page.", "",
             "| Code | Name | Fix | Default | Summary | Page |", "|---|---|---|---|---|---|"]
    for rule in rules:
        fix = rule.fix_label() or "none"
        default = "on" if rule.default_enabled else "off"
        lines.append(f"| `{rule.code}` | {rule.name} | {fix} | {default} | {_cell(rule.summary())} | "
                     f"[{rule.code}.md]({rule.code}.md) |")
    return "\n".join(lines) + "\n"


def section(rule: Type, heading: str) -> str:
    """The text of the docstring's ``## <heading>`` section ('' without one)."""
    key = heading  # the name tests/test_regex_linear.py gives a pattern's run-time value
    match = re.search(rf"^## {re.escape(key)}\n(.*?)(?=^## |\Z)", rule.docs(), re.S | re.M)
    return match.group(1).strip() if match else ""


def measured_effect(rule: Type) -> str:
    """The text of the docstring's ``## Measured effect`` section ('' without one)."""
    return section(rule, "Measured effect")


def why(rule: Type) -> str:
    """The docstring's ``## Why is this bad?`` section, else its summary: SARIF's ``help`` beside the
    link to the page (the language server's hover shows the summary and this section)."""
    return section(rule, "Why is this bad?") or rule.summary()


def generated() -> dict:
    """What scripts/gen_rule_docs.py writes under docs/rules/: file name -> text, for every code
    (the rules and the engine's own codes, such as TFG001)."""
    from tflint_gpu.rules.base import all_codes

    rules = list(all_codes())
    files = {f"{rule.code}.md": page(rule) for rule in rules}
    files["README.md"] = index(rules)
    return files
