"""NumPy names NumPy 2 removed, and which NumPy a project's TensorFlow installs.

The table (``data/numpy2_removed.json``) is derived and executed by
``scripts/derive_numpy_removals.py``: each name raises AttributeError under
NumPy 2.4.6, ``removed_in`` is the first NumPy where it raises, and
``exact`` says that the replacement is the same object (or a function that
only forwards to it) under every NumPy 1 probed and the same under NumPy 2.

Which NumPy ``pip install tensorflow==2.x`` installs (the wheels' pins):

* TF 2.12 and older: ``numpy<1.24`` (TF 2.12: ``numpy<1.24,>=1.22``), so
  the builtin aliases (``np.int``, ``np.float``) still work there;
* TF 2.13: ``numpy<=1.24.3,>=1.22``; TF 2.15-2.17: ``numpy<2.0.0`` (pip's
  own conflict reports: ``tensorflow 2.16.2 requires numpy<2.0.0``,
  ``tensorflow 2.17.1 requires numpy<2.0.0,>=1.23.5``): NumPy 1.24-1.26, where
  the builtin aliases are gone and NumPy 2's removals still work. TF 2.14
  has no cap, but a NumPy 2 breaks its import (tensorflow/tensorflow#102743),
  so a TF 2.14 project runs NumPy 1.26 too;
* TF 2.18 is the first built against NumPy 2 (its release note: "TensorFlow
  now supports and is compiled with NumPy 2.0 by default"): NumPy 2.0 at
  least; TF 2.21 requires only ``numpy>=1.26.0``, so pip installs the newest
  NumPy (2.4.6 when measured) and every later removal (``np.in1d``,
  ``np.trapz``: NumPy 2.4) applies too. For TF 2.18-2.20 only the removals of
  NumPy 2.0 are counted (their caps may hold a 2.x older than the newest).
"""
from __future__ import annotations

from functools import lru_cache
from typing import Dict, FrozenSet, Optional, Tuple

import libcst as cst

from tflint_gpu.semantic.tables import data_table, version as _version

Version = Tuple[int, int]

# The newest NumPy the table was derived with: what an uncapped TensorFlow (2.21+) installs.
NEWEST_NUMPY: Version = (2, 4)
# The first TensorFlow whose wheels install NumPy 2 (and the one with no NumPy cap).
NUMPY2_TF: Version = (2, 18)
UNCAPPED_TF: Version = (2, 21)
# Errors a ``try`` handler must catch to hold a removed NumPy name.
_CATCHES = frozenset({"AttributeError", "ImportError", "Exception", "BaseException"})


@lru_cache(maxsize=1)
def table() -> Dict[str, dict]:
    """Every entry of the derived table, by name."""
    data = data_table("numpy2_removed.json")
    return {entry["name"]: entry for entry in data["entries"]}


def installed_numpy(target) -> Optional[Version]:
    """The NumPy ``pip`` installs with the target's TensorFlow, as far as the
    removals tell apart: (2, 4) for an uncapped TF (the newest release, 2.21+),
    (2, 0) for TF 2.18-2.20, (1, 26) for TF 2.14-2.17, (1, 24) for TF 2.13,
    None for older."""
    tf = target.tf
    if tf is None or tf >= UNCAPPED_TF:
        return NEWEST_NUMPY
    if tf >= NUMPY2_TF:
        return (2, 0)
    if tf >= (2, 14):
        return (1, 26)
    if tf >= (2, 13):
        return (1, 24)
    return None


def removed(name: str, numpy: Optional[Version]) -> Optional[dict]:
    """The table's entry for ``numpy.<name>`` when that NumPy no longer has it."""
    if numpy is None:
        return None
    entry = table().get(name)
    if entry is None or _version(entry["removed_in"]) > numpy:
        return None
    return entry


def held_by_try(node: cst.CSTNode, scope, caught: FrozenSet[str] = _CATCHES) -> bool:
    """Is ``node`` in the body of a ``try`` (in its scope or around the ``def``
    holding it) one of whose handlers catches one of ``caught`` (by name, or as
    an attribute: ``except np.exceptions.AxisError``) or is bare? By default the
    AttributeError/ImportError a removed name raises: code written for both
    NumPys. (TFG903 asks it for what a removed TF or Keras name raises.)"""
    current, where = node, scope
    while True:
        child = current
        for parent in where.ancestors(current):
            if isinstance(parent, cst.Try) and child is parent.body:
                for handler in parent.handlers:
                    if handler.type is None:
                        return True
                    items = [e.value for e in handler.type.elements] if isinstance(handler.type, cst.Tuple) \
                        else [handler.type]
                    if any(isinstance(i, cst.Name) and i.value in caught
                           or isinstance(i, cst.Attribute) and i.attr.value in caught for i in items):
                        return True
            child = parent
        if where.parent is None:
            return False
        current, where = where.node, where.parent
