"""The first TensorFlow release that has each name a fix may write (``tf.data.AUTOTUNE``: 2.4,
``tf.function(reduce_retracing=)``: 2.9), derived by ``scripts/derive_api_since.py`` (each release
installed and asked) into ``data/tf_api_since.json``.

A fix that writes a name the project's target lacks breaks the project (a module that reads
``tf.data.AUTOTUNE`` at import raises AttributeError under TF 2.3): ``available(target, name)`` says
whether a name can be written, and ``spelling`` gives the one to write (the older spelling where
the target has only that one). A name the table does not hold is not judged (True)."""
from __future__ import annotations

from functools import lru_cache
from typing import Dict, Optional, Tuple

from tflint_gpu.semantic.tables import data_table, version as _version

# Where the current name is newer than the target: the spelling every TF 2 release has.
FALLBACKS = {
    "tensorflow.data.AUTOTUNE": "tensorflow.data.experimental.AUTOTUNE",
}


@lru_cache(maxsize=1)
def _data() -> Tuple[Dict[str, Optional[Tuple[int, int]]], Tuple[int, int]]:
    data = data_table("tf_api_since.json")
    since_table = {name: _version(version) if version else None for name, version in data["since"].items()}
    return since_table, min(_version(v) for v in data["derived_from"])


def _table() -> Dict[str, Optional[Tuple[int, int]]]:
    return _data()[0]


def since(name: str) -> Optional[Tuple[int, int]]:
    """The first minor release that has ``name`` (``tensorflow.data.AUTOTUNE``, or a keyword as
    ``tensorflow.function(reduce_retracing=)``), or None when the table does not hold it."""
    return _table().get(name)


def available(target, name: str) -> bool:
    """Can a fix write ``name`` for ``target`` (a ``semantic.target.Target``; None: the newest)? A
    name the oldest release asked already has is not judged for an older target (not asked)."""
    first = since(name)
    if first is None or first <= _data()[1] or target is None or target.tf is None:
        return True
    return target.tf >= first


def spelling(target, name: str) -> Optional[str]:
    """``name`` where the target has it, else its older spelling (FALLBACKS), else None."""
    if available(target, name):
        return name
    older = FALLBACKS.get(name)
    return older if older is not None and available(target, older) else None
