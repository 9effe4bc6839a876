"""What every code is, read without importing a rule: a table written from the rules.

``semantic/data/rule_catalogue.json`` holds, for every code a selection can name (the rules
and the engine's own codes, as ``rules.base.all_codes`` gives them), what the catalogue, the
selection and a rule's page read of it: code, name, docstring, default, fix safety, migration.
``scripts/gen_catalogue.py`` writes it from the rule classes; tests/test_startup.py fails
while it differs from them. The command line reads it so that ``--version``, ``rules``,
``rule CODE``, the selection and a run answered from the cache import neither LibCST nor the
rule modules (0.3 s of CPU a start: benchmarks/startup.py); the rule classes are imported
when a file is linted (``config.Selection``).

``CodeInfo`` answers as a rule class does (``code``, ``name``, ``default_enabled``,
``fix_safety``, ``unsafe_fixes_too``, ``migration``, ``docs()``, ``summary()``,
``fix_label()``), so that ``rules.docs.page`` renders either.
"""
from __future__ import annotations

import inspect
import json
import os
from functools import lru_cache
from typing import Dict, List, Optional

from tflint_gpu.findings import Safety, fix_label

PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "semantic", "data", "rule_catalogue.json")
FORMAT = 1


class CodeInfo:
    """One code as the table says it (the attributes of a rule class that describe it)."""

    __slots__ = ("code", "name", "default_enabled", "fix_safety", "unsafe_fixes_too", "migration", "_docs")

    def __init__(self, entry: Dict) -> None:
        self.code: str = entry["code"]
        self.name: str = entry["name"]
        self.default_enabled: bool = entry["default"]
        self.fix_safety: Optional[Safety] = Safety(entry["fix_safety"]) if entry["fix_safety"] else None
        self.unsafe_fixes_too: bool = entry["unsafe_fixes_too"]
        self.migration: object = entry["migration"]  # False, True or "by-target" (rules.base.BY_TARGET)
        self._docs: str = entry["docs"]

    def docs(self) -> str:
        return self._docs

    def summary(self) -> str:
        return self._docs.split("\n", 1)[0]

    def fix_label(self) -> Optional[str]:
        """As ``rules.base.Documented.fix_label``."""
        return fix_label(self.fix_safety, self.unsafe_fixes_too)

    def __repr__(self) -> str:
        return f"CodeInfo({self.code})"


def entry_of(rule: type) -> Dict:
    """The table's entry for a rule class (or an engine code): what ``scripts/gen_catalogue.py`` writes."""
    safety = getattr(rule, "fix_safety", None)
    return {
        "code": rule.code,
        "name": rule.name,
        "default": bool(rule.default_enabled),
        "fix_safety": safety.value if safety is not None else None,
        "unsafe_fixes_too": bool(getattr(rule, "unsafe_fixes_too", False)),
        "migration": getattr(rule, "migration", False),
        "docs": inspect.cleandoc(rule.__doc__ or ""),
    }


def rule_modules() -> List[str]:
    """The rule modules there are (``rules/*.py`` but ``base``, ``docs``): a module added since the table
    was written makes the table stale, and the classes are asked instead."""
    folder = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rules")
    return sorted(name[:-3] for name in os.listdir(folder)
                  if name.endswith(".py") and name not in ("__init__.py", "base.py", "docs.py"))


def table_of(rules) -> Dict:
    """The whole table for these classes (every code: ``rules.base.all_codes()``)."""
    return {"format": FORMAT, "modules": rule_modules(),
            "codes": [entry_of(rule) for rule in sorted(rules, key=lambda r: r.code)]}


@lru_cache(maxsize=None)
def _table() -> Dict[str, CodeInfo]:
    try:
        with open(PATH, encoding="utf-8") as handle:
            data = json.load(handle)
    except OSError:  # pragma: no cover - a package without its data: ask the classes
        data = None
    if data is None or data.get("format") != FORMAT or data.get("modules") != rule_modules():
        from tflint_gpu.rules.base import all_codes

        data = table_of(all_codes())
    return {entry["code"]: CodeInfo(entry) for entry in data["codes"]}


def all_infos() -> List[CodeInfo]:
    """Every code, in code order (as ``rules.base.all_codes``)."""
    table = _table()
    return [table[code] for code in sorted(table)]


def codes() -> List[str]:
    """Every code a selection can name, in order."""
    return sorted(_table())


def describe(code: str) -> Optional[CodeInfo]:
    """The code's entry (None: no such code)."""
    return _table().get(code)
