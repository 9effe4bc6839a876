"""The derived tables under ``semantic/data/`` (each written by a script in ``scripts/`` that executed
its entries): ``data_table(name)`` reads one once; ``version(text)`` reads a release number they hold
(``"2.21.0"`` -> ``(2, 21)``)."""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any, Tuple

_DATA = Path(__file__).resolve().parent / "data"


@lru_cache(maxsize=None)
def data_table(name: str) -> Any:
    """The JSON of ``semantic/data/<name>``, read once per process (callers must not change it)."""
    return json.loads((_DATA / name).read_text(encoding="utf-8"))


def version(text: str) -> Tuple[int, int]:
    major, minor = text.split(".")[:2]
    return int(major), int(minor)
